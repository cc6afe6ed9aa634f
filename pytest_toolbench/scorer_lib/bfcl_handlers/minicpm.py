"""BFCL's MiniCPMHandler (``minicpm.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole
handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is
given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

from typing import Any, Sequence

from .common import Messages
from .spec import HandlerSpec


def render_minicpm(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """MiniCPMHandler (minicpm.py): ChatML, results under the ``tool`` role."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("MiniCPMHandler", "minicpm.py", render_minicpm, True),
)
