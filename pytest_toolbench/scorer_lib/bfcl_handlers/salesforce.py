"""BFCL's SalesforceLlamaHandler (``salesforce_llama.py``), SalesforceQwenHandler (``salesforce_qwen.py``),
BitAgentHandler (``bitagent.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole
handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is
given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import Messages, _executed, _named, _tool_result_text
from .spec import HandlerSpec, _ast, _exe


def _json_list_or_split(text: str) -> list:
    """xLAM: the reply as JSON (one call or a list), else its ``;``-separated parts each as JSON."""
    try:
        calls = json.loads(text)
        return calls if isinstance(calls, list) else [calls]
    except ValueError:
        return [json.loads(part.strip()) for part in text.split(";")]


def _bitagent_calls(text: str) -> list:
    calls = json.loads(text)
    return calls if isinstance(calls, list) else [calls]


_XLAM_SYSTEM_TAIL = (
    "You have access to a set of tools. When using tools, make calls in a single JSON array: \n\n"
    '[{"name": "tool_call_name", "arguments": {"arg1": "value1", "arg2": "value2"}}, ... (additional parallel tool calls '
    "as needed)]\n\nIf no tool is suitable, state that explicitly. If the user's input lacks required parameters, ask "
    "for clarification. Do not interpret or respond until tool results are returned. Once they are available, process "
    "them or make additional calls if needed. For tasks that don't require tools, such as casual conversation or "
    "general advice, respond directly in plain text. The available tools are:\n\n")


_XLAM_DEFAULT_SYSTEM = "You are a helpful assistant that can use tools. You are developed by Salesforce xLAM team."


_BITAGENT_DEFAULT_SYSTEM = "You are a helpful Assistant named BitAgent that is designed to use tools."


def _xlam_like(messages: Messages, functions: Sequence[Any], default_system: str, llama: bool) -> str:
    """SalesforceLlamaHandler, SalesforceQwenHandler, BitAgentHandler: the xLAM system block (the question's system
    text ``strip()``-ed in place of the default) with the docs as ``json.dumps(indent=4)``; replies ``strip()``-ed
    (their ``tool_calls`` branch is never reached: the base handler stores text), results unstripped under
    ``ipython`` (Llama) or ``tool`` (Qwen)."""
    system, rest = default_system, list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"].strip(), rest[1:]
    if llama:
        open_turn, close_turn, result_role = "<|start_header_id|>{}<|end_header_id|>\n\n", "<|eot_id|>", "ipython"
        out = "<|begin_of_text|>"
    else:
        open_turn, close_turn, result_role = "<|im_start|>{}\n", "<|im_end|>", "tool"
        out = ""
    out += open_turn.format("system") + system + "\n" + _XLAM_SYSTEM_TAIL
    out += "".join(json.dumps(function, indent=4) + "\n\n" for function in functions) + close_turn
    for message in rest:
        if message["role"] == "tool":
            out += open_turn.format(result_role) + _tool_result_text(message["content"]) + close_turn
        else:
            out += open_turn.format(message["role"]) + message["content"].strip() + close_turn
    return out + open_turn.format("assistant")


def render_salesforce_llama(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """SalesforceLlamaHandler (salesforce_llama.py)."""
    return _xlam_like(messages, functions, _XLAM_DEFAULT_SYSTEM, llama=True)


def render_salesforce_qwen(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """SalesforceQwenHandler (salesforce_qwen.py): no newline between turns."""
    return _xlam_like(messages, functions, _XLAM_DEFAULT_SYSTEM, llama=False)


def render_bitagent(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """BitAgentHandler (bitagent.py): SalesforceLlamaHandler's layout with BitAgent's default system line."""
    return _xlam_like(messages, functions, _BITAGENT_DEFAULT_SYSTEM, llama=True)


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("SalesforceLlamaHandler", "salesforce_llama.py", render_salesforce_llama, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("SalesforceQwenHandler", "salesforce_qwen.py", render_salesforce_qwen, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("BitAgentHandler", "bitagent.py", render_bitagent, False,
                decode_ast=_ast(lambda r: _named(_bitagent_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_bitagent_calls(r), "arguments"))),
)
