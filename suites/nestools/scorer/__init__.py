"""NesTools (nested tool calling) as a pytest-toolbench suite.

Faithful re-implementation of the official NesTools evaluation, hhan1018/NesTools at
``fb617f396d61ead9f857a48f9ea7cf12fa522450`` (files as they stand at that commit: ``evaluation/eval.py``, last
changed in 507f8c8; ``evaluation/utils.py`` ``process_results_gen`` / ``check_score`` / ``normalize_date`` /
``check_string`` and ``evaluation/structure.py``, last changed in 72c0c3d; ``inference/inference.py`` and
``inference/build_test_prompt/*``).

One case = one ``test_id``. The model writes the whole chain of calls as one JSON/Python list; the scorer pairs
predicted and gold calls by ``api_id`` and accumulates the official per-case counts (Selection, Order, Parameter with
ROUGE-L partial credit, Nested-Param), which ``aggregate`` turns into micro P/R/F1 over the run. A case passes when
the official ``tree_acc`` is 1 (every family exact).

The upstream quirks reproduced on purpose are marked ``QUIRK`` where they are implemented.

Modules: ``loading`` (data files, cases, ``run_info``), ``prompt`` (template and requests), ``candidates`` (the
official or rebuilt candidate lists), ``gold`` (gold chain, depth, structure, ``gold_output``), ``decoding``
(``check_string``), ``values`` (``check_score``, ROUGE-L, ``normalize_date``), ``checker`` (per-case counts and the
verdict), ``tl`` (TL-Training categories, opted into by suite.yaml), ``aggregation`` (``eval.py``'s figures),
``replay`` (prediction files).
"""

from .aggregation import aggregate
from .checker import score
from .gold import gold_output
from .loading import load_cases, run_info
from .prompt import build_request
from .replay import replay_dropped, replay_outputs

#: What the suite's own per-case labels mean, for the reports' label tallies (counts are cases).
LABEL_NOTES = {"tool_error": "NesTools: the kind of wrong tool use"}

__all__ = [
    "load_cases",
    "build_request",
    "gold_output",
    "score",
    "aggregate",
    "replay_outputs",
    "replay_dropped",
    "run_info",
    "LABEL_NOTES",
]
