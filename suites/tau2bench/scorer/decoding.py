"""An output -> the trajectory the grading reads: ``{"messages": [...], "termination_reason": ...}`` (the gold
backend's and the replay reader's shape; upstream's message fields). Anything else is a format error."""

from __future__ import annotations

import json
from typing import Any


class NotATrajectory(ValueError):
    """The output is not a τ²-bench trajectory."""


def decode_trajectory(text: str) -> tuple[list[dict[str, Any]], str]:
    """The messages and the termination reason (``agent_stop`` when the output does not say)."""
    try:
        trajectory = json.loads(text)
    except ValueError as error:
        raise NotATrajectory(f"not JSON: {error}") from None
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("messages"), list):
        raise NotATrajectory("no list of messages")
    messages = trajectory["messages"]
    if not all(isinstance(m, dict) for m in messages):
        raise NotATrajectory("a message is not an object")
    termination = trajectory.get("termination_reason") or "agent_stop"
    if not isinstance(termination, str):
        raise NotATrajectory("termination_reason is not a string")
    return messages, termination
