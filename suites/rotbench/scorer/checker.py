"""The verdict of a case: the three official stages (``ts_eval``, ``pi_eval``, ``cf_eval``, in RoTBench's format
library :mod:`pytest_toolbench.scorer_lib.rotbench`) and, when the suite opts in, TL-Training's category."""

from __future__ import annotations

import json
from typing import Any

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.rotbench import gold_alternatives, official_stages, tl_category
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .decoding import decode

# Error types, in the order of the official stages (toleap.md §2.5); parse failures use the shared FORMAT_ERROR.
NO_OUTPUT = "no_output"
WRONG_TOOL = "wrong_tool"
WRONG_PARAM_NAMES = "wrong_param_names"
WRONG_VALUES = "wrong_values"


def gold_output(case: Case) -> str:
    """The first gold alternative that the official scorer accepts (the first one if none is accepted)."""
    for answer in case.payload["gold"]:
        if score(case, Generation(text=answer)).passed:
            return answer
    return case.payload["gold"][0]


def score(case: Case, generation: Generation) -> Verdict:
    text = generation.text if isinstance(generation.text, str) else ""
    alternatives = gold_alternatives(case.payload["gold"])
    tool_names = [tool["name"] for tool in case.payload["tools"]]
    expected = [{"name": name, "arguments": arguments} for name, arguments in alternatives]
    if not text.strip():
        return _failed(case, NO_OUTPUT, "empty output", None, expected, (False, False, False), None)
    action, arguments, failure = decode(text)
    decoded = {"name": action, "arguments": arguments}
    if failure is not None:
        return _failed(case, FORMAT_ERROR, failure, decoded, expected, (False, False, False), None)
    stages = official_stages(action, arguments, alternatives, tool_names)
    ts, pi, cf = stages
    if cf:
        return Verdict(passed=True, decoded=decoded, expected=expected, counts=_stage_counts(stages),
                       explanation=f"TS, PI and CF hold for {action}({json.dumps(arguments, ensure_ascii=False)})")
    if not ts:
        error, why = WRONG_TOOL, f"tool {action!r} is none of the gold tools {[a for a, _ in alternatives]}"
    elif not pi:
        error, why = WRONG_PARAM_NAMES, (f"parameter names {sorted(arguments)} differ from every gold key set "
                                         f"{[sorted(g) for a, g in alternatives if a == action]}")
    else:
        error, why = WRONG_VALUES, "parameter values differ from every gold answer (gold \"None\" values unchecked)"
    return _failed(case, error, why, decoded, expected, stages, (action, arguments))


def _stage_counts(stages: tuple[bool, bool, bool]) -> dict[str, float]:
    return {"ts": float(stages[0]), "pi": float(stages[1]), "cf": float(stages[2])}


def _failed(case: Case, error: str, why: str, decoded: Any, expected: Any, stages: tuple[bool, bool, bool],
            call: tuple[str, dict[str, Any]] | None) -> Verdict:
    counts = _stage_counts(stages)
    labels = {}
    if tl_failures.enabled(case):
        labels["tl_category"], counts["tl_reward"] = tl_category(case.payload["tools"], case.payload["gold"], call)
    return Verdict(passed=False, error_type=error, decoded=decoded, expected=expected, counts=counts,
                   labels=labels,
                   explanation=f"{why}; TS={int(stages[0])} PI={int(stages[1])} CF={int(stages[2])}")
