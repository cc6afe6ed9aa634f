"""BFCL's GraniteFunctionCallingHandler (``granite.py``), Granite3FCHandler (``granite_3.py``), Granite4FCHandler
(``granite_4.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole handler in one
module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is given:
:mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- GraniteFunctionCallingHandler: a chunk of reply text that is not JSON is kept as a "call" by
  ``decode_execute``, so a plain-text answer is executed as a call (and ends up an execution error) instead of
  ending the turn; ``decode_ast`` keeps it as a string (then not in calling format).
- Granite3FCHandler: the prompt ends after the last message, without an assistant turn opener.
- Granite4FCHandler: a later call equal in value to the first gets no newline before it when the reply text
  is empty (:func:`.common._tool_calls_block`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import (Messages, _call_text, _decode_tagged_json, _execute_tagged_json, _grouped_tool_response,
                     _is_call_list, _json_calls_in_tags, _phi_fc_like_tools, _require_call_list, _tool_calls_block,
                     convert_to_function_call)
from .function_docs import convert_to_tool as _convert_to_tool  # the name the renderers were hashed with
from .spec import HandlerSpec, _ast, _exe


def _record_granite_3(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=False)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _granite_fc_decode(text: str, execute: bool) -> list:
    out: list = []
    for chunk in [c.strip() for c in text.split("<function_call>") if len(c.strip()) > 0]:
        try:
            call = json.loads(chunk.strip())
        except (ValueError, RecursionError):  # upstream's bare ``except``
            out.append(chunk)
            continue
        name = call.get("name", "").strip()
        arguments = call.get("arguments", {})
        if name == "no_function":
            out.append("No function is called")
        elif execute:
            out.append(_call_text(name, arguments))
        else:
            out.append({name: arguments})
    return out


_GRANITE_FC_SYSTEM = (
    "SYSTEM: You are a helpful assistant with access to the following function calls. Your task is to produce a "
    "sequence of function calls necessary to generate response to the user utterance. Use the following function calls "
    "as required.\n<|function_call_library|>\n{functions_str}\nIf none of the functions are relevant or the given "
    'question lacks the parameters required by the function, please output "<function_call> {"name": "no_function", '
    '"arguments": {}}".\n\n')


def render_granite_function_calling(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GraniteFunctionCallingHandler (granite.py): a plain-text ``SYSTEM:`` header with the OSSMODEL-style docs one
    per line, then ``ROLE:\\ncontent`` blocks and ``ASSISTANT: ``."""
    docs = "\n".join(json.dumps(tool) for tool in _convert_to_tool(functions, wrap=False))
    out = _GRANITE_FC_SYSTEM.replace("{functions_str}", docs)
    out += "".join(f"{m['role'].upper()}:\n{m['content']}\n\n" for m in messages)
    return out + "ASSISTANT: "


_GRANITE3_DEFAULT = "Knowledge Cutoff Date: April 2024.\nToday's Date: April 29, 2025.\nYou are Granite, developed by IBM."


_GRANITE3_TOOLS = (
    " You are a helpful AI assistant with access to the following tools. When a tool is required to answer the user's "
    "query, respond with <|tool_call|> followed by a JSON list of tools used. If a tool does not exist in the provided "
    "list of tools, notify the user that you do not have the ability to fulfill the request.")


def render_granite_3(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """Granite3FCHandler (granite_3.py): the system turn (the question's, else a dated default), a ``tools`` turn
    with ``json.dumps(indent=4)`` of the docs, every message as a role turn with results under ``tool``. The prompt
    does not end with an assistant turn opener (DEFECTS)."""
    rest = list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"], rest[1:]
    else:
        system = _GRANITE3_DEFAULT + (_GRANITE3_TOOLS if functions else "")
    out = f"<|start_of_role|>system<|end_of_role|>{system}<|end_of_text|>\n"
    if functions:
        out += "<|start_of_role|>tools<|end_of_role|>" + json.dumps(list(functions), indent=4) + "<|end_of_text|>\n"
    return out + "".join(f"<|start_of_role|>{m['role']}<|end_of_role|>{m['content']}<|end_of_text|>\n" for m in rest)


_GRANITE4_HEAD = ("You are a helpful assistant with access to the following tools. You may call one or more tools to "
                  "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML "
                  "tags:\n<tools>")


_GRANITE4_TAIL = ('\n</tools>\n\nFor each tool call, return a json object with function name and arguments within '
                  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
                  "<args-json-object>}\n</tool_call>. If a tool does not exist in the provided list of tools, notify the "
                  "user that you do not have the ability to fulfill the request.")


_GRANITE4_DEFAULT = "You are a helpful assistant. Please ensure responses are professional, accurate, and safe."


def render_granite_4(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """Granite4FCHandler (granite_4.py): the system text (the question's, then the tools block), Granite's role
    tokens, replies with ``<tool_call>`` calls rewritten from the parsed calls (no reasoning split), results as
    ``<tool_response>`` blocks in one user turn."""
    stored = []
    for message in messages:
        if message["role"] == "assistant":
            calls = _json_calls_in_tags(message["content"])
            message = ({"role": "assistant", "content": "", "tool_calls": calls} if calls
                       else {"role": "assistant", "content": message["content"]})
        stored.append(message)
    tools = ""
    if functions:
        tools = _GRANITE4_HEAD + "".join("\n" + json.dumps(tool) for tool in functions) + _GRANITE4_TAIL
    if stored[0]["role"] == "system":
        system = stored[0]["content"] + ("\n\n" + tools if tools else "")
    else:
        system = tools or _GRANITE4_DEFAULT
    out = f"<|start_of_role|>system<|end_of_role|>{system}<|end_of_text|>\n"
    start = 1 if stored[0]["role"] == "system" else 0
    for index in range(start, len(stored)):
        message = stored[index]
        role, content = message["role"], message["content"]
        if role == "user" or (role == "system" and index > 0):
            out += f"<|start_of_role|>{role}<|end_of_role|>{content}<|end_of_text|>\n"
        elif role == "assistant":
            out += f"<|start_of_role|>{role}<|end_of_role|>{content}" + _tool_calls_block(message, content)
            out += "<|end_of_text|>\n"
        elif role == "tool":
            out += _grouped_tool_response(stored, index, content, "<|start_of_role|>user<|end_of_role|>",
                                          "<|end_of_text|>\n")
    return out + "<|start_of_role|>assistant<|end_of_role|>"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("GraniteFunctionCallingHandler", "granite.py", render_granite_function_calling, False,
                decode_ast=_ast(lambda r: _granite_fc_decode(r, False)),
                decode_execute=_exe(lambda r: _granite_fc_decode(r, True))),
    HandlerSpec("Granite3FCHandler", "granite_3.py", render_granite_3, False, record=_record_granite_3,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("Granite4FCHandler", "granite_4.py", render_granite_4, False,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
)
