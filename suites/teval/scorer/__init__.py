"""T-Eval (instruct, plan, reason, retrieve, understand, review; json and str formats) as a pytest-toolbench suite.

Scoring follows open-compass/T-Eval @ 58f22406404d7e2a4f36856a19c7f4dc28a0a5f0 (``teval/evaluators/*.py``,
``teval/utils/{format_load,template,convert_results}.py``, ``test.py``) and its copy in thunlp/ToLeaP @
b95071311ff9a888303f819282e4d0872ce4c3fa (``scripts/evaluator.py``, ``evaluate.py``, ``standard_teval.py``), whose
figures are the ToLeaP paper's Table 7. One item per entry of each v2 data file (Hugging Face ``lovesnowbest/T-Eval``
``data/*.json``), ids ``<file key>/<entry id>``. Plan and the Reason thought need sentence-transformers
(``all-mpnet-base-v2``, the ``teval`` extra); without it those figures are reported as not computed.

Modules: ``loading`` (files, schemas, cases), ``prompt`` (the stored messages), ``decoding`` (format_load,
parse_string, the literal reader that replaces ``ast.literal_eval``), ``similarity`` (the embedding model),
``checker`` (per-item rules, verdicts, gold outputs), ``aggregation`` (Table 7 and upstream's overall), ``replay``
(the prediction files of T-Eval's and ToLeaP's inference).
"""

from pytest_toolbench.contract.suite import SuiteContext

from .aggregation import aggregate
from .checker import gold_output, score
from .loading import load_cases
from .prompt import build_request
from .replay import replay_outputs


def run_info(context: SuiteContext) -> dict[str, str]:
    """Static notes for the run header (cached with the cases, so nothing here depends on what is installed)."""
    return {"similarity": "Plan and Reason (thought) use sentence-transformers all-mpnet-base-v2 (teval extra); "
                          "without it they are reported NOT COMPUTED"}


__all__ = ["load_cases", "build_request", "gold_output", "score", "aggregate", "replay_outputs", "run_info"]
