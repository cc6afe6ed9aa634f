"""BFCL's HammerHandler (``hammer.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole
handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is
given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- HammerHandler: ``convert_to_format_tool`` edits the function docs it is given, which are the entry's own;
  every request appends ``default is '<default>'`` to each defaulted parameter's description once more (request k
  of a multi-turn entry carries it k+1 times) and replaces a nested parameter by its sub-properties for good.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import Messages, _call_text, _named
from .spec import HandlerSpec, _ast, _exe


def _hammer_calls(text: str, execute: bool) -> Any:
    """HammerHandler: the reply without backticks as JSON, ``[]`` when it is not JSON; ``decode_execute`` also takes
    a ``{"tool_calls": ...}`` object and wraps a single call in a list."""
    text = text.replace("```", "")
    try:
        calls = json.loads(text)
    except (ValueError, RecursionError):  # upstream's bare ``except``
        calls = []
    if not execute:
        return calls
    calls = calls if isinstance(calls, list) else calls.get("tool_calls", []) if isinstance(calls, dict) else []
    return calls if isinstance(calls, list) else [calls]


_HAMMER_TASK = (
    "You are a tool calling assistant. In order to complete the user's request, you need to select one or more "
    "appropriate tools from the following tools and fill in the correct values for the tool parameters. Your specific "
    "tasks are:\n1. Make one or more function/tool calls to meet the request based on the question.\n2. If none of the "
    "function can be used, point it out and refuse to answer.\n3. If the given question lacks the parameters required "
    "by the function, also point it out.\n\nThe following are characters that may interact with you\n1. user: Provides "
    "query or additional information.\n2. tool: Returns the results of the tool calling.\n")


_HAMMER_FORMAT = (
    "\nThe output MUST strictly adhere to the following JSON format, and NO other text MUST be included.\nThe example "
    "format is as follows. Please make sure the parameter type is correct. If no function call is needed, please "
    "directly output an empty list '[]'\n```\n[\n    {\"name\": \"func_name1\", \"arguments\": {\"argument1\": "
    "\"value1\", \"argument2\": \"value2\"}},\n    ... (more tool calls as required)\n]\n```\n")


def _hammer_tool(tool: dict) -> dict:
    """One pass of HammerHandler's ``convert_to_format_tool`` on ``tool``, mutating it as upstream does: the
    returned ``parameters`` IS the doc's ``properties`` dict, so the ``required`` flags, the replaced nested
    parameters and the ``default is '...'`` suffix stay in the doc for the next call."""
    properties = tool["parameters"].get("properties", {})
    formatted = {"name": tool["name"], "description": tool["description"], "parameters": properties}
    for param in list(properties.keys()):
        value = properties[param]
        if "properties" in value and isinstance(value["properties"], dict):
            required = value.get("required", [])
            properties[param] = value["properties"]
            for name in required:
                properties[param][name]["required"] = True
    for param in tool["parameters"].get("required", []):
        properties[param]["required"] = True
    for param in properties.keys():
        if "default" in properties[param]:
            properties[param]["description"] += f"default is '{properties[param]['default']}'"
    return formatted


def render_hammer(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """HammerHandler (hammer.py): the task, the docs reshaped (``json.dumps``), the format instruction in a user turn
    after a fixed system turn, then the question (system turns as user turns) and history in ChatML. The reshaping
    mutates the docs the handler keeps, so request ``step`` sees it applied ``step + 1`` times (DEFECTS)."""
    docs = json.loads(json.dumps(list(functions)))
    for _ in range(step + 1):
        tools = [_hammer_tool(tool) for tool in docs]
    converted = [{**m, "role": "user"} if m["role"] == "system" else m for m in messages]
    query = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in converted)
    content = f"[BEGIN OF TASK INSTRUCTION]\n{_HAMMER_TASK}\n[END OF TASK INSTRUCTION]\n\n"
    content += "[BEGIN OF AVAILABLE TOOLS]\n" + json.dumps(tools) + "\n[END OF AVAILABLE TOOLS]\n\n"
    content += f"[BEGIN OF FORMAT INSTRUCTION]\n{_HAMMER_FORMAT}\n[END OF FORMAT INSTRUCTION]\n\n"
    return (f"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n{content}<|im_end|>\n"
            f"{query}<|im_start|>assistant\n")


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("HammerHandler", "hammer.py", render_hammer, False,
                decode_ast=_ast(lambda r: _named(_hammer_calls(r, False), "arguments")),
                decode_execute=_exe(lambda r: [_call_text(c.get("name", ""), c.get("arguments", {}), ", ")
                                               for c in _hammer_calls(r, True) if isinstance(c, dict)])),
)
