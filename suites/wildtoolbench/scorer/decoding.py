"""One model turn as upstream's handler sees an API response: ``content`` and OpenAI-style ``tool_calls``.

Native mode (``Generation.tool_calls`` set by the backend, already parsed) is upstream's protocol: the calls are
used as they are, their arguments rendered back to JSON text (``json.dumps(..., ensure_ascii=False)``, what vLLM's
OpenAI server sends; the order of same-named calls in the offline check depends on that text). A backend parse
failure (``Generation.parse_error``) is upstream's "parse tool_calls failed": a ``format_error``.

Text output (prompting mode, and the gold backend) is read as Hermes/Qwen ``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`` blocks (:func:`pytest_toolbench.parsing.tool_calls.parse_hermes`); text without such a block
is a plain answer; a block that does not decode is a ``format_error``.

``content`` is what an OpenAI-compatible server would return beside the calls: the text before the first tool-call
marker (None when empty), and for a plain answer the text without trailing end-of-turn tokens. Upstream's
emptiness test is ``content is None or content == ""``: whitespace-only text counts as an answer.

Model output is never evaluated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_toolbench.parsing.tool_calls import ParseError, parse_hermes
from pytest_toolbench.contract.suite import Generation

_MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|python_start|>")
_TRAILING_SPECIAL = re.compile(r"(?:<\|[A-Za-z0-9_]+\|>|</s>|<eos>|<end_of_turn>)+\s*$")


@dataclass
class Turn:
    """A decoded model turn: ``calls`` in upstream's ``tool_calls`` shape (``id``, ``type``, ``function`` with
    ``name`` and JSON-text ``arguments``), ``parse_error`` set when the calls could not be read."""

    content: str | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    parse_error: str | None = None


def _clean(text: str) -> str:
    return _TRAILING_SPECIAL.sub("", text)


def _content_before_calls(text: str) -> str | None:
    cut = len(text)
    for marker in _MARKERS:
        position = text.find(marker)
        if position != -1:
            cut = min(cut, position)
    if cut == len(text):
        return None  # e.g. a bare JSON / pythonic call: a server reports no content
    content = _clean(text[:cut]).strip()
    return content or None


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _calls(raw: Any, ids: list[str]) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(raw):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ParseError(f"tool call #{index} has no function name")
        calls.append({"id": ids[index], "type": "function",
                      "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments", {}))}})
    return calls


def decode_turn(generation: Generation, ids: list[str]) -> Turn:
    """The turn's content and calls; ``ids`` supplies one id per call (the backends do not keep the model's ids)."""
    text = generation.text if isinstance(generation.text, str) else ""
    if generation.parse_error:
        return Turn(content=None, parse_error=str(generation.parse_error))
    native = generation.tool_calls
    try:
        if native is not None:
            raw = list(native)
        else:
            raw = parse_hermes(text)
        if len(raw) > len(ids):
            ids = ids + [f"call_{i}" for i in range(len(ids), len(raw))]
        calls = _calls(raw, ids)
    except (ParseError, TypeError, ValueError, RecursionError) as exc:
        return Turn(content=None, parse_error=str(exc))
    if calls:
        return Turn(content=_content_before_calls(text), calls=calls)
    return Turn(content=_clean(text) if text else None)
