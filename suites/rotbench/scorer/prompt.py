"""The chat request of a case, as RoTBench's inference builds it."""

from __future__ import annotations

from typing import Any

from pytest_toolbench.contract.suite import Case, Request
from .decoding import action_of


def build_request(case: Case) -> Request:
    """System prompt, user query and (Third_Turn) the earlier attempts with their feedback, in chat form.

    Mirrors the ``chat`` mode of RoTBench's ``ChatGPT.parse`` (Code/Inference/inference_new/models.py @ 637e43ae):
    ``from`` becomes ``role``, and a ``function`` message carries the name of the action in the assistant message
    before it. The texts are the data file's own, verbatim. Tools stay in the system prompt (a prompting benchmark),
    so no native tool list is sent.
    """
    messages: list[dict[str, Any]] = []
    history = case.payload["history"]
    for position, message in enumerate(history):
        if message["from"] == "function":
            previous = history[position - 1]["value"] if position else ""
            action = action_of(previous)
            messages.append({"role": "function", "name": (action or "").strip(), "content": message["value"]})
        else:
            messages.append({"role": message["from"], "content": message["value"]})
    return Request(messages=messages)
