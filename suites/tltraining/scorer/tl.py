"""TL-Training's error categories and reward on every failure (RoTBench's rules for the RoTBench Clean cases)."""

from __future__ import annotations

from pytest_toolbench.scorer_lib import rotbench
from pytest_toolbench.scorer_lib.tl_failures import classify_call, classify_call_lists, tool_signatures
from pytest_toolbench.contract.suite import Case
from .prompt import offered_tools


def tl_category(case: Case, calls: list[dict] | None) -> tuple[str, float]:
    dataset = case.payload["dataset"]
    if dataset == "rotbench_clean":
        first = (calls[0]["name"], dict(calls[0]["arguments"])) if calls and calls[0]["arguments"] else None
        return rotbench.tl_category(case.payload["tools"], case.payload["rotbench_gold"], first)
    signatures = tool_signatures(offered_tools(case))
    if dataset == "toolalpaca_real":
        outcome = classify_call(calls[0] if calls else None, case.payload["gold"][0][0], signatures)
    else:
        outcome = classify_call_lists(calls, case.payload["gold"][0], signatures)
    return outcome.category, outcome.reward
