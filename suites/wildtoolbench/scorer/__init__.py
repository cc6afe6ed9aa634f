"""WildToolBench (ICLR 2026) as a pytest-toolbench benchmark: one item per task, scored as upstream scores it.

Upstream: yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065 (spec: shared/specs/wildtoolbench.md).
Case ids are ``wild_tool_bench_<k>-task<j>`` (the dialogue's id and upstream's 0-based ``task_idx``). Each task runs
live through ``conversation`` (``loop``): the gold history of the earlier tasks, native tool calling with the
dialogue's tools, the step loop matching called names against the gold DAG's execution orders (``graph``), the
recorded observations and scripted clarification replies fed back. ``score`` then runs the offline argument check
(``checker`` with ``arguments`` and ``rouge``) on the transcript, which replayed upstream result files also provide.

Modules: ``loading`` (the data file, cases, the gold histories), ``prompt`` (tools, system message, history
messages), ``graph`` (execution orders), ``decoding`` (a model turn), ``loop`` (the step loop, gold replies),
``arguments`` and ``rouge`` (the argument checker), ``checker`` (the offline walk, verdicts), ``aggregation``
(``calc_accuracy``), ``replay`` (upstream result files).
"""

from __future__ import annotations

import json

from pytest_toolbench.contract.suite import Case, Request, SuiteContext
from .aggregation import aggregate
from .checker import score
from .loading import load_cases
from .loop import conversation, gold_reply, gold_transcript, request_for
from .replay import replay_outputs


def build_request(case: Case) -> Request:
    """The task's first request (system message, gold history, the task; the tools)."""
    return request_for(case, case.payload["opening"] or [{"role": "user", "content": case.payload["task"]}])


def gold_output(case: Case) -> str:
    """The transcript a perfect model produces (the gold replies driven through the step loop)."""
    return json.dumps(gold_transcript(case), ensure_ascii=False)


def run_info(context: SuiteContext) -> dict[str, str]:
    try:
        import jieba  # type: ignore[import-not-found]  # noqa: F401
        segmenter = "jieba (as upstream)"
    except ImportError:
        segmenter = "jieba not installed: CJK strings compared per character for ROUGE-L (flagged per case)"
    return {"CJK tokenisation": segmenter}


__all__ = ["load_cases", "build_request", "gold_output", "score", "aggregate", "replay_outputs", "conversation",
           "gold_reply", "run_info"]
