"""The OpenAI-compatible protocol as the endpoint backend speaks it: tool docs out (``tools=``), tool calls back
(``message.tool_calls``), response bodies decoded whatever bytes a model put in them, ``Retry-After``, and the errors
that say whether to retry. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.errors import ToolbenchError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class EndpointError(ToolbenchError):
    """The endpoint refused a request for good (a 4xx other than rate limiting) or kept failing after every retry."""


class ServerGone(EndpointError):
    """The server answered earlier in the run and now refuses connections: it died (the message says what it last
    returned)."""


#: Connection failures that mean nothing listens any more (as opposed to a slow or overloaded server).
GONE = (ConnectionRefusedError, ConnectionResetError)


def openai_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool docs in the OpenAI ``{"type": "function", "function": {...}}`` shape; bare function docs (BFCL-style
    ``{"name", "description", "parameters"}``) are wrapped, already-wrapped entries pass through."""
    wrapped = []
    for tool in tools:
        if "type" in tool and "function" in tool:
            wrapped.append(dict(tool))
        else:
            wrapped.append({"type": "function", "function": dict(tool)})
    return wrapped


def decode_tool_calls(message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """``message.tool_calls`` to ``[{"name", "arguments"}]``; returns the calls and a parse-error message (or None)."""
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return [], f"tool_calls[{index}]: no function name"
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError) as exc:
                return [], f"tool_calls[{index}] ({function['name']}): arguments are not JSON ({exc})"
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return [], f"tool_calls[{index}] ({function['name']}): arguments are not an object"
        calls.append({"name": function["name"], "arguments": arguments})
    return calls, None



def decode_body(data: bytes) -> str:
    """The response text, whatever bytes a model's output put in it: a surrogate some servers send as raw
    (CESU-8) bytes is kept as that surrogate, any other invalid byte as an escape; none is a reason to retry (the
    answer would be the same) or to lose the answer. The cache stores such text losslessly."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; the exponential delay applies
