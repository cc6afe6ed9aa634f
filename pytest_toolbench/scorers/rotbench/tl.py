"""TL-Training's failure categories and reward for failed RoTBench answers."""

from __future__ import annotations

from typing import Any, Mapping

from ...suite import Case
from ...tl_failures import ANY_VALUE, classify_call, tool_signatures
from .decoding import gold_alternatives


def tl_category(case: Case, call: tuple[str, Mapping[str, Any]] | None) -> tuple[str, float]:
    """TL-Training's error category and reward for a failed answer, against the closest gold alternative.

    RoTBench's own conventions carry over: a predicted literal ``finish`` stands for the last tool, gold values
    ``"None"`` accept any value, and finish/ask_to_user take any values. An answer the official parser rejects
    (including the empty ``{}``) is ``unparseable``.
    """
    tools = case.payload["tools"]
    names = [tool["name"] for tool in tools]
    signatures = tool_signatures(tools)
    best = None
    for gold_action, gold_input in gold_alternatives(case):
        exempt = gold_action in (names[-1], names[-2], "finish", "ask_to_user")
        gold_arguments = {k: (ANY_VALUE if exempt or v == "None" else v) for k, v in gold_input.items()}
        predicted = None
        if call is not None:
            name = gold_action if (call[0] == "finish" and gold_action == names[-1]) else call[0]
            predicted = {"name": name, "arguments": call[1]}
        outcome = classify_call(predicted, {"name": gold_action, "arguments": gold_arguments}, signatures)
        if best is None or outcome.reward > best.reward:
            best = outcome
    assert best is not None
    if best.category == "correct":
        # Only reachable through the official CF quirk that deletes "None" keys from the prediction while trying
        # alternatives: the values are what failed, so the closest TL category is a content mismatch.
        return "content_mismatch", -0.25
    return best.category, best.reward
