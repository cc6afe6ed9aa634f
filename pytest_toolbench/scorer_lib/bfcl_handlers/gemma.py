"""BFCL's GemmaHandler (``gemma.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole
handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is
given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

from typing import Any, Sequence

from .common import Messages, _combine_users
from .spec import HandlerSpec


def render_gemma(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GemmaHandler (gemma.py): consecutive question users joined, a question's ``assistant`` renamed ``model`` (only
    on the first request can question and reply messages be told apart; exact on BFCL's data), the system text
    ``strip()``-ed in front of the first remaining turn."""
    assembled = []
    for message in _combine_users(messages):
        if step == 0 and message["role"] == "assistant":
            message["role"] = "model"
        assembled.append(message)
    prefix = ""
    if assembled[0]["role"] == "system":
        prefix, assembled = assembled[0]["content"].strip() + "\n\n", assembled[1:]
    out = "<bos>"
    for position, message in enumerate(assembled):
        out += (f"<start_of_turn>{message['role']}\n{prefix if position == 0 else ''}"
                f"{message['content'].strip()}<end_of_turn>\n")
    return out + "<start_of_turn>model\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("GemmaHandler", "gemma.py", render_gemma, True),
)
