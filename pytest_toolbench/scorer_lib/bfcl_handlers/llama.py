"""BFCL's LlamaHandler (``llama.py``), LlamaHandler_3_1 (``llama_3_1.py``), bfcl-eval 2026.3.23
``bfcl_eval/model_handler/local_inference/``: the whole handler in one module, as upstream keeps it in one class: its
renderer (``_format_prompt``, on what a renderer is given: :mod:`.handlers`), what it records of a reply and its
``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- LlamaHandler_3_1: ``decode_ast``/``decode_execute`` ``eval`` a reply without ``;`` (here: a literal only).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import Messages, _executed, _named, _python_value, _tool_result_text
from .spec import HandlerSpec, _ast, _exe


def _llama31_calls(text: str) -> list:
    text = text.replace("<|python_tag|>", "")
    if ";" in text:
        return [json.loads(part) for part in text.split(";")]
    calls = _python_value(text)
    return [calls] if type(calls) is dict else calls


def _llama_results(messages: Messages) -> list[dict]:
    """LlamaHandler stores a result as ``{"role": "ipython", "content": ...}``."""
    return [{"role": "ipython", "content": m["content"]} if m["role"] == "tool" else dict(m) for m in messages]


def render_llama(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """LlamaHandler (llama.py): every message as a header and its ``strip()``-ed content; Llama 4's tokens when the
    model name holds ``Llama-4``."""
    if "Llama-4" in model_name:
        head, tail, end = "<|header_start|>", "<|header_end|>", "<|eot|>"
    else:
        head, tail, end = "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"
    out = "<|begin_of_text|>"
    for message in _llama_results(messages):
        out += f"{head}{message['role']}{tail}\n\n{message['content'].strip()}{end}"
    return out + f"{head}assistant{tail}\n\n"


def render_llama_3_1(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """LlamaHandler_3_1 (llama_3_1.py): the ``Environment: ipython`` system block with fixed date lines, the function
    docs (``json.dumps(indent=4)``) inside the *first* user message, results under ``ipython`` written unstripped."""
    out = "<|begin_of_text|>"
    system, rest = "", list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"].strip(), rest[1:]
    out += ("<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\n"
            "Today Date: 26 Jul 2024\n\n" + system + "<|eot_id|>")
    first_user = True
    for message in rest:
        if message["role"] == "user" and first_user:
            first_user = False
            out += ("<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a "
                    "JSON for a function call with its proper arguments that best answers the given prompt.\n\n"
                    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its '
                    'value}.Do not use variables.\n\n')
            out += "".join(json.dumps(function, indent=4) + "\n\n" for function in functions)
            out += f"{message['content'].strip()}<|eot_id|>"
        elif message["role"] == "tool":
            out += "<|start_header_id|>ipython<|end_header_id|>\n\n" + _tool_result_text(message["content"]) + "<|eot_id|>"
        else:
            out += f"<|start_header_id|>{message['role']}<|end_header_id|>\n\n{message['content'].strip()}<|eot_id|>"
    return out + "<|start_header_id|>assistant<|end_header_id|>\n\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("LlamaHandler", "llama.py", render_llama, True),
    HandlerSpec("LlamaHandler_3_1", "llama_3_1.py", render_llama_3_1, False,
                decode_ast=_ast(lambda r: _named(_llama31_calls(r), "parameters")),
                decode_execute=_exe(lambda r: _executed(_llama31_calls(r), "parameters"))),
)
