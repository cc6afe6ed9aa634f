"""API-Bank (level 1 and level 2) as a pytest-toolbench suite: ToLeaP's dialogue score by default, and the original
API-Bank API-call check as far as it can be computed offline.

Upstream: AlibabaResearch/DAMO-ConvAI @ 483554eae102996f5ec1f4feab4e78ef29c2a394 ``api-bank/`` (data, evaluator,
simulators) and thunlp/ToLeaP @ b95071311ff9a888303f819282e4d0872ce4c3fa ``scripts/apibank_eval.py`` (the port
behind ToLeaP's Table 9). One item per evaluator sample (``<file>#<index>``); see :mod:`.loading`.

Modules: ``loading`` (dialogue files → samples), ``specs`` (the simulators' descriptions, ``apis.json``), ``prompt``
(system prompts and chat messages), ``decoding`` (the ``[ApiName(key='value')]`` parser, regex only),
``rouge_l`` (rouge 1.0.1's ROUGE-L), ``api_check`` (the API-call check without the simulators), ``checker``
(verdicts, gold answers), ``tl`` (TL-Training categories of API samples), ``aggregation`` (Table 9 and the API-call
accuracy), ``replay`` (``evaluator_by_json.py`` prediction files).
"""

from pytest_toolbench.contract.suite import SuiteContext

from .aggregation import aggregate
from .checker import gold_output, score
from .loading import load_cases
from .prompt import build_request
from .replay import replay_outputs
from .specs import api_source


def run_info(context: SuiteContext) -> dict[str, str]:
    source = api_source()
    return {"api descriptions": f"simulator classes of {source['repository']}@{source['commit'][:7]} (apis.json)"}


__all__ = ["load_cases", "build_request", "gold_output", "score", "aggregate", "replay_outputs", "run_info"]
