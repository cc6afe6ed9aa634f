"""The three stages (official ``ts_eval``, ``pi_eval``, ``cf_eval``) and the verdict of a case."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ...suite import FORMAT_ERROR, Case, Generation, Verdict
from .decoding import gold_alternatives, parse_react
from .tl import tl_category

# Error types, in the order of the official stages (toleap.md §2.5); parse failures use the shared FORMAT_ERROR.
NO_OUTPUT = "no_output"
WRONG_TOOL = "wrong_tool"
WRONG_PARAM_NAMES = "wrong_param_names"
WRONG_VALUES = "wrong_values"


def official_stages(action: str, arguments: Mapping[str, Any], alternatives: Sequence[tuple[str, Any]],
                    tool_names: Sequence[str]) -> tuple[bool, bool, bool]:
    """TS, PI and CF of one decoded answer against the gold alternatives, as ``evaluate.py`` computes them.

    Each stage is its own loop over the alternatives (upstream runs three passes over the file), and a stage holds
    when any alternative satisfies it.
    """
    finish_name, ask_name = tool_names[-1], tool_names[-2]

    def remap_finish(predicted: str, gold_action: str) -> str:
        # The finish pseudo-tool is recognised by position: when the gold tool is the last tool of the list (its
        # name may be perturbed by noise, e.g. "fPnish"), a predicted literal "finish" is renamed to it. The rename
        # sticks for the following alternatives, as upstream reassigns its loop variable.
        return gold_action if gold_action == finish_name and predicted == "finish" else predicted

    ts = False
    predicted = action
    for gold_action, _ in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action == predicted:
            ts = True
            break

    pi = False
    predicted = action
    for gold_action, gold_input in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action != predicted:
            continue
        # Exact key sets, keys whose gold value is "None" included.
        if gold_input.keys() == arguments.keys():
            pi = True
            break

    cf = False
    predicted = action
    remaining = dict(arguments)
    for gold_action, gold_input in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action != predicted:
            continue
        if gold_input.keys() != remaining.keys():
            continue
        # The value check is waived for finish and ask_to_user, which upstream recognises by position (last and
        # second-to-last tool) and, after renaming, also by the literal names "finish" and "ask_to_user".
        exempt = gold_action in (finish_name, ask_name, "finish", "ask_to_user")
        unchecked = [key for key, value in gold_input.items() if value == "None"]
        expected = {key: value for key, value in gold_input.items() if key not in unchecked}
        # Quirk: upstream deletes the "None" keys from the *prediction* in place, so they stay deleted while the
        # later alternatives are tried (their key-set check then sees the smaller dict).
        for key in unchecked:
            del remaining[key]
        # Python equality, as upstream: 1 == 1.0 == True, but "1" != 1, and string comparison is case-sensitive.
        if expected != remaining and not exempt:
            continue
        cf = True
        break
    return ts, pi, cf


def gold_output(case: Case) -> str:
    """The first gold alternative that the official scorer accepts (the first one if none is accepted)."""
    for answer in case.payload["gold"]:
        if score(case, Generation(text=answer)).passed:
            return answer
    return case.payload["gold"][0]


def score(case: Case, generation: Generation) -> Verdict:
    text = generation.text if isinstance(generation.text, str) else ""
    alternatives = gold_alternatives(case)
    tool_names = [tool["name"] for tool in case.payload["tools"]]
    expected = [{"name": name, "arguments": arguments} for name, arguments in alternatives]
    if not text.strip():
        return _failed(case, NO_OUTPUT, "empty output", None, expected, (False, False, False), None)
    action, arguments, failure = parse_react(text)
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
    category, reward = tl_category(case, call)
    counts = _stage_counts(stages)
    counts["tl_reward"] = reward
    return Verdict(passed=False, error_type=error, decoded=decoded, expected=expected, counts=counts,
                   labels={"tl_category": category},
                   explanation=f"{why}; TS={int(stages[0])} PI={int(stages[1])} CF={int(stages[2])}")
