"""A domain's environment: the agent's toolkit, the user's (where the domain has one), tool calls and their
results, replaying a trajectory, and the database hashes (upstream ``environment/environment.py``, 1.0.1)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from .toolkit import ToolKit, to_json_str


class Environment:
    def __init__(self, domain: str, tools: ToolKit, user_tools: ToolKit | None = None, solo_mode: bool = False):
        self.domain = domain
        self.tools = tools
        self.user_tools = user_tools
        self.solo_mode = solo_mode

    # -- calls
    def make_tool_call(self, tool_name: str, requestor: str = "assistant", **kwargs: Any) -> Any:
        if requestor == "user":
            if self.solo_mode:
                raise ValueError("User tool calls are not allowed in solo mode")
            if self.user_tools is None:
                raise ValueError("User tools not available")
            return self.user_tools.use_tool(tool_name, **kwargs)
        if requestor == "assistant":
            if self.solo_mode and self.user_tools is not None and self.user_tools.has_tool(tool_name):
                return self.user_tools.use_tool(tool_name, **kwargs)
            return self.tools.use_tool(tool_name, **kwargs)
        raise ValueError(f"Invalid requestor: {requestor}")

    def sync_tools(self) -> None:
        """Keeps the agent's and the user's views of shared state in step (telecom); nothing elsewhere."""

    def get_response(self, name: str, arguments: Mapping[str, Any], requestor: str = "assistant") -> tuple[str, bool]:
        """The tool message's content and whether it is an error (upstream ``get_response``)."""
        try:
            result = self.make_tool_call(name, requestor=requestor, **dict(arguments))
            self.sync_tools()
        except Exception as error:  # noqa: BLE001 - upstream turns every exception into the tool's error text
            return to_json_str(f"Error: {error}"), True
        return to_json_str(result), False

    def has_tool(self, name: str) -> bool:
        return self.tools.has_tool(name) or (self.user_tools is not None and self.user_tools.has_tool(name))

    def is_mutating_tool(self, name: str) -> bool:
        for kit in (self.tools, self.user_tools):
            if kit is not None and kit.has_tool(name):
                return kit.mutates_state(name)
        return True

    # -- state
    def run_env_function_call(self, call: Mapping[str, Any]) -> Any:
        env_type = call.get("env_type")
        if env_type == "user":
            kit = self.user_tools
        elif env_type == "assistant":
            kit = self.tools
        else:
            raise ValueError(f"Invalid environment type: {env_type}")
        function = getattr(kit, call["func_name"])
        result = function(**(call.get("arguments") or {}))
        self.sync_tools()
        return result

    def run_env_assertion(self, assertion: Mapping[str, Any]) -> bool:
        result = self.run_env_function_call(assertion)
        if not isinstance(result, bool):
            raise ValueError(f"Function {assertion['func_name']} returned {type(result)} instead of bool")
        return result == assertion.get("assert_value", True)

    def set_state(self, initialization_data: Mapping | None, initialization_actions: Sequence | None,
                  message_history: Sequence[Mapping[str, Any]], strict: bool = True) -> None:
        """Upstream 1.0.1 ``set_state``: apply the initial data and actions, then replay the history's tool calls
        (each followed by its tool message, same id), re-executing only the state-mutating tools and, when
        ``strict``, raising if a result differs from the recorded one (compared as JSON where both parse)."""
        if self.solo_mode and any(m.get("role") == "user" for m in message_history):
            raise AssertionError("User messages are not allowed in solo mode")
        pairs = tool_call_pairs(message_history)
        if initialization_data:
            if initialization_data.get("agent_data") is not None:
                self.tools.update_db(initialization_data["agent_data"])
            if initialization_data.get("user_data") is not None:
                self.user_tools.update_db(initialization_data["user_data"])
        for action in initialization_actions or ():
            self.run_env_function_call(action)
        for call, message in pairs:
            if not self.has_tool(call["name"]) or not self.is_mutating_tool(call["name"]):
                continue
            content, _ = self.get_response(call["name"], call.get("arguments") or {},
                                           call.get("requestor", "assistant"))
            if _as_json(content) != _as_json(message.get("content")) and strict:
                raise ValueError(f"Tool call:\n{call}\n\nReturned:\n{content}\n\nExpected:\n{message.get('content')}")
        self.sync_tools()

    def db_hash(self) -> str | None:
        return self.tools.db_hash() if self.tools is not None else None

    def user_db_hash(self) -> str | None:
        return self.user_tools.db_hash() if self.user_tools is not None else None


def _as_json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def tool_call_pairs(messages: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping, Mapping]]:
    """Each tool call of the history with the tool message that answers it (upstream ``get_actions_from_messages``:
    a tool message out of place, a missing one or an id mismatch is an error)."""
    queue = list(messages)
    pairs = []
    index = 0
    while index < len(queue):
        message = queue[index]
        index += 1
        if message.get("role") == "tool":
            raise ValueError("Tool message not expected. Tool messages should always follow a tool call.")
        if message.get("role") in ("assistant", "user") and message.get("tool_calls"):
            for call in message["tool_calls"]:
                if index >= len(queue):
                    raise ValueError("Tool message expected. Got None.")
                answer = queue[index]
                index += 1
                if answer.get("role") != "tool":
                    raise ValueError(f"Tool message expected. Got {answer.get('role')}")
                if call.get("id") != answer.get("id"):
                    raise ValueError(f"Tool call id mismatch. Got {call.get('id')} and {answer.get('id')}")
                pairs.append((call, answer))
    return pairs
