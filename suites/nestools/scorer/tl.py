"""TL-Training failure categories (single-call cases)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib.tl_failures import (CONTENT_MISMATCH, CORRECT, REWARDS, UNPARSEABLE, WRONG_TOOL,
                                       classify_call_lists, tool_signatures)
from pytest_toolbench.contract.suite import Case
from .candidates import candidate_ids

def _tl_tool_key(api_id: Any) -> str:
    # NesTools identifies a tool by its api_id (pairing is by id, the api_name is never compared), so the TL "tool
    # name" is the id; the repr keeps 12 and "12" apart, as upstream's ``==`` does.
    return f"api_id {api_id!r}"


def _same_id(offered: Any, predicted: Any) -> bool:
    try:
        return bool(offered == predicted)
    except Exception:
        return False


def tl_category(case: Case, gold: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]] | None,
                order_exact: bool = True) -> tuple[str, float]:
    """TL-Training's category and reward of a failed case with a flat gold chain (no call consumes another's output).

    No NesTools test case has a one-call chain (the smallest are two independent calls), so the flat chains are
    classified as sets of calls with the shared pairing of :func:`classify_call_lists` (best pairing, worst pair; a
    gold call left unanswered is a wrong tool). Nested chains are left out: their placeholder values are scored
    structurally, which TL-Training's value comparison cannot express. The mapping follows NesTools' own rules so
    that each label agrees with what the official scorer checked:

    * the tool is the ``api_id`` (upstream pairs by id and never compares ``api_name``; 1 == 1.0 == True as in
      Python); an id that the prompt offered is a known tool (a *wrong tool* unless it is a gold id), any other id
      is a *tool hallucination*;
    * a predicted ``"UNK"`` for a gold parameter counts as absent (*parameter missing*), as the official error
      analysis counts it as an omission (``para_error_omission``);
    * values are compared with ``==`` and gold lists are plain values, not lists of alternatives. ``check_score``'s
      leniencies (a dict whose keys differ only in case, "_" or " " scores 1) need no special case: a content
      mismatch is TL's last rule, so it is the label exactly when no tool or parameter issue is found;
    * an output that decodes to no call at all (a format failure, or NesTools' well-formed empty list) is
      *unparseable*;
    * the chain is a sequence (the prompt asks for the calls "in sequence"), and TL-Training's reward compares the
      call at each step with the gold call of that step: when the official Order family is not exact
      (``order_exact`` false), some step holds another tool than the gold one, so the outcome is at best a *wrong
      tool* even if the calls are right as a set.
    """
    if predicted is None:
        return UNPARSEABLE, REWARDS[UNPARSEABLE]
    gold_ids = [call["api_id"] for call in gold]
    offered = [i for i in candidate_ids(case) if not any(_same_id(i, g) for g in gold_ids)]
    specs = {api["api_name"]: api for api in case.payload["api"]}
    # Parameters are compared only once the tool is right, so only the gold tools' signatures matter; every other
    # offered id is a known tool with no parameters listed.
    signatures = tool_signatures([{"name": _tl_tool_key(call["api_id"]),
                                   "parameters": {"properties": specs[call["api_name"]]["parameters"]}}
                                  for call in gold] + [{"name": _tl_tool_key(i)} for i in offered])
    calls = []
    for call in predicted:
        same_tool = [g for g in gold if _same_id(g["api_id"], call["api_id"])]
        if same_tool:
            key = _tl_tool_key(same_tool[0]["api_id"])
        else:
            key = next((_tl_tool_key(i) for i in offered if _same_id(i, call["api_id"])),
                       f"unoffered {call['api_id']!r}")
        arguments = {}
        for name, value in call["parameters"].items():
            # With a tool called twice, the first gold call of that id that has the parameter decides "UNK".
            reference = next((g["parameters"] for g in same_tool if name in g["parameters"]), None)
            if reference is not None and value == "UNK" and reference[name] != "UNK":
                continue
            arguments[name] = value
        calls.append({"name": key, "arguments": arguments})
    expected = [{"name": _tl_tool_key(call["api_id"]), "arguments": dict(call["parameters"])} for call in gold]
    outcome = classify_call_lists(calls, expected, signatures)
    if not order_exact and outcome.reward > REWARDS[WRONG_TOOL]:
        return WRONG_TOOL, REWARDS[WRONG_TOOL]
    if outcome.category == CORRECT:
        # Not reachable as far as we know (calls equal to the gold ones, in order, pass: ``check_score`` gives 1 to
        # equal values); kept so that a failed case never carries the "correct" label.
        return CONTENT_MISMATCH, REWARDS[CONTENT_MISMATCH]
    return outcome.category, outcome.reward
