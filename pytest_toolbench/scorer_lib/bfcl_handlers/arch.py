"""BFCL's ArchHandler (``arch.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole handler
in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is given:
:mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .common import (HandlerDecodeError, Messages, _grouped_tool_response, _python_value, _qwen_tools,
                     _require_call_list, convert_to_function_call)
from .spec import HandlerSpec, _ast, _exe


def _record_arch(text: str) -> Any:
    calls = _arch_calls(text)
    if not calls:
        return text
    out = []
    for call in calls:
        if type(call) is str:
            call = _python_value(call)
        out.append({call["name"]: call["arguments"]})
    return out


def _arch_calls(text: str) -> list:
    """ArchHandler ``extract_tool_calls``: every ``<tool_call>\\n...\\n</tool_call>`` body, decoded as JSON when it
    is JSON and kept as text otherwise."""
    found: list = []
    for body in re.findall(r"<tool_call>\n(.*?)\n</tool_call>", text, re.DOTALL):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):  # upstream: ``except Exception``
            pass
        found.append(body)
    return found


def render_arch(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """ArchHandler (arch.py): Qwen2.5's tools system block around the question's system text (or Arch's default);
    replies with calls rewritten as ``<tool_call>`` lines (a reply with calls keeps none of its text)."""
    system = messages[0]["content"] if messages[0]["role"] == "system" else (
        "You are a helpful assistant designed to assist with the user query by making one or more function calls if "
        "needed.")
    if functions:
        out = "<|im_start|>system\n" + system + "\n\n" + _qwen_tools(functions)
    else:
        out = f"<|im_start|>system\n{system}<|im_end|>\n"
    stored = []
    for message in messages:
        if message["role"] == "assistant":
            calls = _arch_calls(message["content"])
            message = ({"role": "assistant", "content": None, "tool_calls": calls} if calls
                       else {"role": "assistant", "content": message["content"]})
        stored.append(message)
    for index, message in enumerate(stored):
        role, content = message["role"], message["content"]
        calls = message.get("tool_calls", [])
        if role == "user" or (role == "system" and index != 0) or (role == "assistant" and not calls):
            out += f"<|im_start|>{role}\n{content}<|im_end|>\n"
        elif role == "assistant":
            out += f"<|im_start|>{role}" + (f"\n{content}" if content else "")
            for call in calls:
                if type(call) is str:
                    raise HandlerDecodeError("ArchHandler: a <tool_call> body that is not JSON (upstream raises)")
                if "function" in call:
                    call = call["function"]
                out += (f'\n<tool_call>\n{{"name": "{call.get("name", "")}", "arguments": '
                        f'{json.dumps(call.get("arguments", {}))}}}\n</tool_call>')
            out += "<|im_end|>\n"
        elif role == "tool":
            out += _grouped_tool_response(stored, index, content, "<|im_start|>user", "<|im_end|>\n")
    return out + "<|im_start|>assistant\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("ArchHandler", "arch.py", render_arch, False, record=_record_arch,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
)
