"""BFCL's BielikHandler (``bielik.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the whole
handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer is
given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

from typing import Any, Sequence

from .common import Messages
from .minicpm import render_minicpm
from .spec import HandlerSpec


def render_bielik(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """BielikHandler (bielik.py): ``<s>`` and ChatML."""
    return "<s>" + render_minicpm(messages, functions, model_name, step)


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("BielikHandler", "bielik.py", render_bielik, True),
)
