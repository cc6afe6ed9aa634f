"""BFCL's Falcon3FCHandler (``falcon_fc.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the
whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer
is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Its prompt is the checkpoint's own chat template given ``tools=`` (no renderer here: the backend's tokenizer).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json

from .common import HandlerDecodeError, _executed, _named
from .spec import HandlerSpec, _ast, _exe


def _falcon_calls(text: str) -> list:
    if "<tool_call>" not in text:
        raise HandlerDecodeError("No <tool_call> found in the model's response")
    body = text.split("<tool_call>")[1].split("</tool_call>")[0].strip()
    if body.startswith("```") and body.endswith("```"):
        body = body.strip("```").strip()
        if body.startswith("json"):
            body = body[4:].strip()
    calls = json.loads(body)
    return calls if isinstance(calls, list) else [calls]


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("Falcon3FCHandler", "falcon_fc.py", None, False,
                decode_ast=_ast(lambda r: _named(_falcon_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_falcon_calls(r), "arguments"))),
)
