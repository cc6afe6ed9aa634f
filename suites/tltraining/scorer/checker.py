"""Scoring: the nested TS / PI / CF stages of each dataset, and the verdict of a case."""

from __future__ import annotations

import itertools
import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.rotbench import official_stages
from pytest_toolbench.scorer_lib.tl_failures import tool_signatures
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .decoding import decode
from .loading import settings
from .prompt import offered_tools
from .tl import tl_category

NO_OUTPUT = "no_output"
WRONG_TOOL = "wrong_tool"
WRONG_PARAM_NAMES = "wrong_param_names"
WRONG_VALUES = "wrong_values"
WRONG_CALL_COUNT = "wrong_call_count"


def gold_output(case: Case) -> str:
    """The first gold alternative as Hermes ``<tool_call>`` blocks (decoded by the registry like any model's)."""
    return "\n".join(f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
                     for call in case.payload["gold"][0])


def _call_stages(predicted: Mapping[str, Any], gold: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    ts = predicted["name"] == gold["name"]
    pi = ts and predicted["arguments"].keys() == gold["arguments"].keys()
    return ts, pi, pi and dict(predicted["arguments"]) == dict(gold["arguments"])


def multiset_stages(predicted: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]) -> tuple[bool, ...]:
    """Each stage holds when some one-to-one pairing of predicted and gold calls satisfies it for every pair."""
    if len(predicted) != len(gold) or not gold:
        return (False, False, False)
    table = [[_call_stages(p, g) for g in gold] for p in predicted]
    result = []
    for stage in range(3):
        result.append(any(all(table[p][g][stage] for g, p in enumerate(perm))
                          for perm in itertools.permutations(range(len(predicted)))))
    return tuple(result)


def score(case: Case, generation: Generation) -> Verdict:
    empty_input_fails = settings(case)["empty_input_fails"]
    text = generation.text if isinstance(generation.text, str) else ""
    dataset = case.payload["dataset"]
    expected = case.payload["gold"]
    if not text.strip() and not generation.tool_calls:
        return _failed(case, NO_OUTPUT, "empty output", None, (False,) * 3, None, "none")
    parser, calls, problem = decode(text, generation.tool_calls, tool_signatures(offered_tools(case)))
    if calls is None or not calls:
        why = problem or "no tool call in the output"
        return _failed(case, FORMAT_ERROR, f"{parser}: {why}", None, (False,) * 3, None, parser)
    if dataset == "rotbench_clean":
        call = calls[0]
        if empty_input_fails and not call["arguments"]:
            return _failed(case, FORMAT_ERROR, "empty arguments (RoTBench's official empty-input rule)", calls,
                           (False,) * 3, None, parser)
        names = [t["name"] for t in case.payload["tools"]]
        stages = official_stages(call["name"], dict(call["arguments"]),
                                [(g[0]["name"], g[0]["arguments"]) for g in expected], names)
    elif dataset == "toolalpaca_real":
        stages = _call_stages(calls[0], expected[0][0])
        if case.payload.get("gold_defect"):
            stages = (stages[0], False, False)
    else:
        stages = multiset_stages(calls, expected[0])
    if stages[2]:
        return Verdict(passed=True, decoded=calls, expected=expected, counts=_counts(stages),
                       details={"parser": parser}, explanation=f"TS, PI and CF hold ({parser} output)")
    if dataset == "bfcl_exec" and len(calls) != len(expected[0]):
        error = WRONG_CALL_COUNT
        why = f"{len(calls)} calls for {len(expected[0])} gold calls"
    elif not stages[0]:
        error, why = WRONG_TOOL, "no gold tool matches"
    elif not stages[1]:
        error, why = WRONG_PARAM_NAMES, "parameter names differ from the gold call"
    else:
        error, why = WRONG_VALUES, "parameter values differ from the gold call"
    return _failed(case, error, why, calls, stages, calls, parser)


def _counts(stages: Sequence[bool]) -> dict[str, float]:
    return {"ts": float(stages[0]), "pi": float(stages[1]), "cf": float(stages[2])}


def _failed(case: Case, error: str, why: str, decoded: Any, stages: Sequence[bool],
            calls: list[dict] | None, parser: str) -> Verdict:
    counts = _counts(stages)
    labels = {}
    if tl_failures.enabled(case):
        category, reward = tl_category(case, calls)
        if category == "correct":
            # Only when the gold itself is undecodable (a ToolAlpaca annotation defect, compared as empty
            # arguments): the arguments are what cannot match, the closest TL category.
            category, reward = "content_mismatch", -0.25
        counts["tl_reward"] = reward
        labels["tl_category"] = category
    return Verdict(passed=False, error_type=error, decoded=decoded, expected=case.payload["gold"], counts=counts,
                   labels=labels, details={"parser": parser},
                   explanation=f"{why}; TS={int(stages[0])} PI={int(stages[1])} CF={int(stages[2])} ({parser})")
