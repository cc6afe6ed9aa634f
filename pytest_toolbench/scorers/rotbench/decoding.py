"""Parsing (official ``get_test_value`` with version 0): model answers, gold alternatives, the tool list."""

from __future__ import annotations

import json
from typing import Any

from ...suite import Case

# The tool list is the system prompt from its first "[" up to the trailing "\n\nLet's Begin!" (13 characters),
# which is exactly how the official ``get_config`` cuts it.
_TOOLS_SUFFIX_LENGTH = 13


def parse_react(text: str) -> tuple[str | None, Any, str | None]:
    """Decode ``text`` the way the official scorer does: ``(action, action_input, failure)``.

    ``failure`` is ``None`` when the official scorer goes on to compare the answer, otherwise the reason the case
    counts as wrong on TS, PI and CF at once.
    """
    action_at = text.find("Action:")
    input_at = text.find("Action Input:")
    # Quirk: fixed offsets. The action starts 8 characters after "Action:" (one space assumed, so "Action:foo"
    # loses its "f") and ends at the first "Action Input:"; a missing marker makes ``find`` return -1, so the
    # slices start at 7 and 13 and stop one character before the end, exactly as upstream slices them.
    action = text[action_at + 8:input_at]
    if not action:
        # Upstream indexes action[-1] and dies with IndexError on the whole file; here it is a scored failure.
        return None, None, "no action between 'Action:' and 'Action Input:'"
    # Quirk: only one trailing newline is removed; no other whitespace is stripped.
    if action[-1] == "\n":
        action = action[:-1]
    # Quirk: everything after "Action Input: " must be one JSON document; trailing text breaks decoding.
    try:
        action_input = json.loads(text[input_at + 14:])
    except (ValueError, RecursionError):
        return action, None, "Action Input is not valid JSON (everything after 'Action Input: ' is decoded)"
    # Quirk: a falsy input ({} for a zero-argument tool, [], 0, null) is dropped before any comparison
    # (``if not test_action_input: continue``), so a correct zero-argument call fails all three stages.
    if isinstance(action_input, str) or not action_input:
        return action, action_input, "Action Input is a string or empty (the official scorer skips the case)"
    if not isinstance(action_input, dict):
        # Upstream crashes on ``.keys()`` of a list or number once the tool matches; counted wrong on all stages.
        return action, action_input, "Action Input is not a JSON object"
    return action, action_input, None


def parse_gold(answer: str) -> tuple[str, Any]:
    """Split one gold alternative with the same slicing the official scorer applies to it."""
    action = answer[answer.find("Action:") + 8:answer.find("Action Input:")]
    if action.endswith("\n"):
        action = action[:-1]
    return action, json.loads(answer[answer.find("Action Input:") + 14:])


def tools_from_system_prompt(system: str) -> list[dict[str, Any]]:
    return json.loads(system[system.find("["):len(system) - _TOOLS_SUFFIX_LENGTH])


def gold_alternatives(case: Case) -> list[tuple[str, Any]]:
    return [parse_gold(answer) for answer in case.payload["gold"]]
