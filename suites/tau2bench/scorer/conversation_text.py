"""Prompt mode (``--toolbench-mode prompt``, the default): a role's request written as text, the tools in the
system prompt and the calls and results in the turns, in the Hermes format of the Qwen2.5 chat template.

Upstream calls its agent and user with OpenAI ``tools=`` (native mode: ``Request.native_messages`` and ``tools``,
the chat template or the endpoint writes the tools). A backend in prompt mode passes no ``tools=``, so the suite
writes them itself, as the Qwen2.5 template writes them given ``tools=`` (the Hermes 2 Pro format):

- the system prompt, then ``\\n\\n# Tools\\n\\n...<tools>``, each tool's OpenAI schema as one JSON line
  (``json.dumps(tool, ensure_ascii=False)``, the template's ``tojson``), ``</tools>`` and the instruction to answer
  calls as ``<tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call>``;
- an assistant turn with calls: its text (if any), then one ``<tool_call>\\n{"name": "...", "arguments": {...}}\\n
  </tool_call>`` block per call, joined by newlines;
- consecutive tool results: one user turn, each result in ``<tool_response>\\n...\\n</tool_response>``.

Rendered by the Qwen2.5 or Qwen3 chat templates without tools, these messages give the same prompt text as the
native messages with ``tools=`` (tests/test_tau2bench_conversation_modes.py checks it), so for that family the two
modes send the same prompt.

The reply is read as vLLM's OpenAI server reads it with its Hermes parser (``Hermes2ProToolParser
.extract_tool_calls``), the server upstream reaches a local model through (:func:`hermes_calls`): every
``<tool_call>...</tool_call>`` block (or an unclosed last one) must be a JSON object with ``name`` and
``arguments``, else the whole reply is text (no calls); the content is the text before the first block (None when
empty). The arguments reach upstream as ``json.dumps`` of the value, which its ``ToolCall`` takes only when it is
an object (``conversation_messages.read_reply`` raises otherwise: ``infrastructure_error``). Model output is never
evaluated.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

TOOLS_HEADER = ("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are "
                "provided with function signatures within <tools></tools> XML tags:\n<tools>")
TOOLS_FOOTER = ("\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
                "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                "<args-json-object>}\n</tool_call>")

#: ``Hermes2ProToolParser.tool_call_regex``
HERMES_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)
START = "<tool_call>"


def hermes_calls(text: str) -> list[dict[str, Any]] | None:
    """The calls of a reply text (``{"name", "arguments"}``, arguments as decoded from the server's JSON text), ``[]``
    for a text without ``<tool_call>``, None when the parser fails on it (the reply is then text)."""
    if START not in text:
        return []
    try:
        raw = [json.loads(closed if closed else unclosed) for closed, unclosed in HERMES_BLOCK.findall(text)]
        calls = []
        for call in raw:
            name, arguments = call["name"], call["arguments"]
            if not isinstance(name, str):
                return None  # the server's FunctionCall(name: str) refuses it: the parser's exception
            calls.append({"name": name, "arguments": arguments})
        return calls
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None


def tools_block(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tools as the system prompt's tail."""
    return TOOLS_HEADER + "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools) + TOOLS_FOOTER


def _arguments(call: Mapping[str, Any]) -> Any:
    """A view's call arguments (JSON text, as sent to an endpoint) as the object the template dumps."""
    arguments = (call.get("function") or {}).get("arguments")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def call_text(name: Any, arguments: Any) -> str:
    return ('<tool_call>\n{"name": "' + str(name) + '", "arguments": ' + json.dumps(arguments, ensure_ascii=False)
            + "}\n</tool_call>")


def text_messages(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A role's OpenAI-style request messages (system first; ``agent_view``/``user_view``) as prompt-mode text."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role == "system" and index == 0:
            out.append({"role": "system", "content": (content or "") + tools_block(tools)})
        elif role == "assistant" and message.get("tool_calls"):
            parts = [content] if content else []
            parts += [call_text((call.get("function") or {}).get("name"), _arguments(call))
                      for call in message["tool_calls"]]
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            block = f"<tool_response>\n{content if content is not None else ''}\n</tool_response>"
            if index > 0 and messages[index - 1].get("role") == "tool":
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block})
        else:
            out.append(dict(message))
    return out
