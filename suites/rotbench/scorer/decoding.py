"""Decoding a model answer: RoTBench's ReAct ``Action:`` / ``Action Input:`` text into the call the stages compare.

The official parser (``get_test_value`` with version 0 of ``Code/Evaluation/evaluate.py`` @ 637e43ae, its fixed-offset
slicing and the quirks commented where they are implemented) lives in RoTBench's format library,
:func:`pytest_toolbench.scorer_lib.rotbench.parse_react`, because the ``tltraining`` suite decodes RoTBench answers
the same way; this module is the rotbench scorer's one entry to it (the checker decodes the answer, the prompt the
action named by an earlier assistant turn).
"""

from __future__ import annotations

from typing import Any

from pytest_toolbench.scorer_lib.rotbench import parse_react


def decode(text: str) -> tuple[str | None, Any, str | None]:
    """``(action, action_input, failure)`` as the official scorer reads ``text``; ``failure`` is None when it goes
    on to compare the call, else why the case counts as wrong on TS, PI and CF at once."""
    return parse_react(text)


def action_of(text: Any) -> str | None:
    """The action an assistant message names (None for a message that is not text or names none)."""
    if not isinstance(text, str):
        return None
    action, _, _ = parse_react(text)
    return action
