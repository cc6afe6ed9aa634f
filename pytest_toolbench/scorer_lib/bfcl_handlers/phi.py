"""BFCL's PhiHandler (``phi.py``), PhiFCHandler (``phi_fc.py``), bfcl-eval 2026.3.23
``bfcl_eval/model_handler/local_inference/``: the whole handler in one module, as upstream keeps it in one class: its
renderer (``_format_prompt``, on what a renderer is given: :mod:`.handlers`), what it records of a reply and its
``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import Messages, _is_call_list, _phi_fc_like_tools, _require_call_list, convert_to_function_call
from .spec import HandlerSpec, _ast, _exe


def _record_phi_fc(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=True)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _strip_fence_prefix(text: str) -> str:
    if text.startswith("```json"):
        text = text[len("```json"):]
    if text.startswith("```python"):
        text = text[len("```python"):]
    return text


def render_phi_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """PhiFCHandler (phi_fc.py): ``<|system|>`` (the question's system text or a default) with the docs one
    ``json.dumps`` per line in ``<|tool|>``, then every message (replies raw, results under ``tool``)."""
    rest = list(messages)
    system = "You are a helpful assistant with some tools."
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"], rest[1:]
    tools = "".join(json.dumps(function) + "\n" for function in functions)
    out = f"<|system|>{system}<|tool|>{tools}<|/tool|><|end|>"
    return out + "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in rest) + "<|assistant|>"


def render_phi(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """PhiHandler (phi.py): Phi-4-mini's ``<|role|>...<|end|>`` when the model name holds ``Phi-4-mini``, else
    Phi-4's ``<|im_start|>role<|im_sep|>...<|im_end|>\\n``; results keep the ``tool`` role."""
    if "Phi-4-mini" in model_name:
        return "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in messages) + "<|assistant|>"
    return "".join(f"<|im_start|>{m['role']}<|im_sep|>{m['content']}<|im_end|>\n" for m in messages) + \
        "<|im_start|>assistant<|im_sep|>"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("PhiHandler", "phi.py", render_phi, True,
                decode_ast=lambda r, language, d: d(_strip_fence_prefix(r.strip()), language),
                decode_execute=lambda r, d, _: d(_strip_fence_prefix(r))),
    HandlerSpec("PhiFCHandler", "phi_fc.py", render_phi_fc, False, record=_record_phi_fc,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
)
