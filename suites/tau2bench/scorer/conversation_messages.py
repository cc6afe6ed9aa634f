"""Messages of a conversation: a model reply read as upstream's ``generate`` reads an OpenAI-style response
(``content`` and ``tool_calls``), and the trajectory's messages written as the requests each role sends
(upstream ``to_litellm_messages``; the user's view with the roles flipped, ``UserState.flip_roles``).

Trajectory messages are the shapes the grading reads (``decoding``): ``{"role", "content"}``, with
``tool_calls: [{"id", "name", "arguments", "requestor"}]`` on a message that calls tools, and tool messages
``{"role": "tool", "id", "content", "requestor", "error"}``.

A reply in native mode comes with the backend's parsed ``tool_calls`` (``[]``: plain text) or its ``parse_error``;
``content`` is what an OpenAI-compatible server returns beside the calls: the text before the first tool-call
marker (None when empty), or for a plain answer the text without trailing end-of-turn tokens. Tool calls the
parser cannot read make the reply text, markup included, as vLLM's OpenAI server answers them (its tool parsers
return the whole output as ``content`` when they fail): upstream reaches a local model through such a server. A
reply with ``tool_calls`` None (prompt mode, where the request wrote the tools as Hermes text) is read, where tools
were offered, as vLLM's server reads Hermes/Qwen ``<tool_call>`` blocks (``conversation_text.hermes_calls``):
blocks its parser fails on leave the whole reply as text. Arguments given as JSON text that does not decode raise
(upstream's ``json.loads`` of them does), and so does an endpoint's parse error (no markup in the text: its
arguments were not JSON) and arguments that are not an object (upstream's ``ToolCall``). Model output is never
evaluated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Generation

from .conversation_text import START, hermes_calls

_MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|python_start|>")
_TRAILING_SPECIAL = re.compile(r"(?:<\|[A-Za-z0-9_]+\|>|</s>|<eos>|<end_of_turn>)+\s*$")


class ReplyError(ValueError):
    """A reply upstream's ``generate`` or the message's ``validate`` would raise on (undecodable tool calls, or
    neither text nor calls): upstream retries and then records the simulation as ``infrastructure_error``."""


@dataclass
class Reply:
    content: str | None
    calls: list[dict[str, Any]] = field(default_factory=list)

    def has_content(self) -> bool:
        return self.content is not None and bool(self.content.strip())


def _clean(text: str) -> str:
    return _TRAILING_SPECIAL.sub("", text)


def _content_before_calls(text: str) -> str | None:
    """vLLM's tool parsers: the text before the first call's marker, as it is, None when empty."""
    cut = min([text.find(m) for m in _MARKERS if m in text] or [len(text)])
    return text[:cut] or None


def read_reply(generation: Generation, tools_offered: bool) -> Reply:
    """The reply's content and calls (``{"name", "arguments"}``); raises :class:`ReplyError`."""
    text = generation.text if isinstance(generation.text, str) else ""
    if not tools_offered:
        # a server parses no tool calls for a request without tools: the text is the content
        return Reply(_clean(text) if text else None)
    if generation.parse_error:
        if not any(marker in text for marker in _MARKERS):
            # an endpoint's tool calls whose arguments are not JSON: upstream's json.loads of them raises
            raise ReplyError(f"the tool calls cannot be decoded: {generation.parse_error}")
        # vLLM's OpenAI server (upstream's way to a local model) answers tool calls its parser cannot read as text
        return Reply(_clean(text))
    if generation.tool_calls is None:
        return _text_reply(_clean(text))
    try:
        raw = list(generation.tool_calls)
    except TypeError:
        return Reply(_clean(text) if text else None)
    calls = []
    for index, call in enumerate(raw):
        arguments = call.get("arguments") if isinstance(call, Mapping) else None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as error:
                raise ReplyError(f"tool call #{index}: arguments are not JSON: {error}") from None
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str) or not isinstance(
                arguments if arguments is not None else {}, dict):
            raise ReplyError(f"tool call #{index} is not a call with a name and an object of arguments")
        calls.append({"name": call["name"], "arguments": dict(arguments or {})})
    if calls:
        return Reply(_content_before_calls(text), calls)
    return Reply(_clean(text) if text else None)


def _text_reply(text: str) -> Reply:
    """A reply whose calls were not parsed (prompt mode): read as vLLM's server reads Hermes blocks."""
    calls = hermes_calls(text)
    if not calls:  # no block, or blocks the parser fails on: the whole text
        return Reply(text or None)
    for index, call in enumerate(calls):
        if not isinstance(call["arguments"], dict):  # upstream's ToolCall(arguments: dict) raises
            raise ReplyError(f"tool call #{index}: arguments are not an object")
    return Reply(text[:text.find(START)] or None, calls)


def trajectory_message(role: str, reply: Reply, call_ids: Sequence[str]) -> dict[str, Any]:
    """The trajectory's message for a reply of ``role`` (``assistant`` or ``user``; the user's calls carry
    ``requestor: user``, as upstream flips them)."""
    message: dict[str, Any] = {"role": role, "content": reply.content}
    if reply.calls:
        message["tool_calls"] = [{"id": call_id, "name": call["name"], "arguments": call["arguments"],
                                  "requestor": role} for call_id, call in zip(call_ids, reply.calls)]
    return message


def _openai_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"id": call.get("id"), "name": call.get("name"), "type": "function",
             "function": {"name": call.get("name"), "arguments": json.dumps(call.get("arguments") or {})}}
            for call in message.get("tool_calls") or ()]


def agent_view(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The agent's state messages as it sends them (``to_litellm_messages``)."""
    out = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            out.append({"role": "user", "content": message.get("content")})
        elif role == "assistant":
            entry = {"role": "assistant", "content": message.get("content")}
            if message.get("tool_calls"):
                entry["tool_calls"] = _openai_calls(message)
            out.append(entry)
        elif role == "tool":
            out.append({"role": "tool", "content": message.get("content"), "tool_call_id": message.get("id")})
    return out


def user_view(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The user simulator's state messages with the roles flipped (``UserState.flip_roles``): its own messages are
    the assistant's, the agent's texts the user's, its tool results tool messages. Raises ValueError where
    upstream does (an agent tool call or an agent tool result in the user's history)."""
    out = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            entry = {"role": "assistant", "content": message.get("content")}
            if message.get("tool_calls"):
                entry["tool_calls"] = _openai_calls(message)
            out.append(entry)
        elif role == "assistant":
            if message.get("tool_calls"):
                raise ValueError(f"Tool calls are not supported in the flipped messages: {message}")
            out.append({"role": "user", "content": message.get("content")})
        elif role == "tool":
            if message.get("requestor", "assistant") != "user":
                raise ValueError(f"Tool messages should be sent to the user in this message history: {message}")
            out.append({"role": "tool", "content": message.get("content"), "tool_call_id": message.get("id")})
        else:
            raise ValueError(f"Unknown message role: {role}")
    return out


def is_agent_history(message: Mapping[str, Any]) -> bool:
    """``is_valid_agent_history_message``."""
    role = message.get("role")
    return role == "assistant" or (role == "user" and not message.get("tool_calls")) or (
        role == "tool" and message.get("requestor", "assistant") == "assistant")


def is_user_history(message: Mapping[str, Any]) -> bool:
    """``is_valid_user_history_message``."""
    role = message.get("role")
    return role == "user" or (role == "assistant" and not message.get("tool_calls")) or (
        role == "tool" and message.get("requestor") == "user")


def has_content(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and bool(content.strip())
