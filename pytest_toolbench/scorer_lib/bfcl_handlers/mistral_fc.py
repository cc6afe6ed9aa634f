"""BFCL's MistralFCHandler (``mistral_fc.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the
whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer
is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- MistralFCHandler: string values of a tool doc are written between quotes without escaping (a quote in a
  description breaks the JSON); the system text is written only when the last message is a user turn; call ids
  are random (see :func:`mistral_call_ids`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any, Mapping, Sequence

from .common import Messages, _require_call_list, convert_to_function_call
from .spec import HandlerSpec, _ast, _exe


def _record_mistral(text: str) -> Any:
    try:
        calls = json.loads(text)
    except ValueError:
        return text
    for call in calls:
        call["id"] = "x"  # the handler adds an id to each call (a reply that is not a list of dicts raises here)
    return [{call["name"]: call["arguments"]} for call in calls]


def _mistral_doc(tool: Mapping[str, Any]) -> str:
    """MistralFCHandler ``_construct_func_doc``: string values written between quotes WITHOUT escaping (DEFECTS),
    other values as JSON, the ``return`` key left out."""
    return '{"type": "function", "function": {' + ", ".join(
        f'"{key}": "{value}"' if isinstance(value, str) else f'"{key}": {json.dumps(value)}'
        for key, value in tool.items() if key != "return") + "}}"


def mistral_call_ids(count: int, seed: Any) -> list[str]:
    """Nine random letters or digits per call, as MistralFCHandler draws them (``random.choices``); upstream draws
    from the global generator, so ids cannot be reproduced. Here they come from a generator seeded with ``seed`` (the
    reply), so a re-rendered history keeps the ids it was first given."""
    rng = random.Random(str(seed))
    return ["".join(rng.choices(string.ascii_letters + string.digits, k=9)) for _ in range(count)]


def _mistral_stored(messages: Messages) -> list[dict]:
    """MistralFCHandler's history: a reply that is a JSON list of calls is stored as ``[TOOL_CALLS]`` + the calls
    with an ``id`` each; each result carries its call's id."""
    stored: list[dict] = []
    ids: list[str] = []
    for message in messages:
        if message["role"] == "assistant":
            text = message["content"]
            try:
                calls = json.loads(text)
            except ValueError:
                stored.append({"role": "assistant", "content": text})
                ids = []
                continue
            ids = mistral_call_ids(len(calls), text)
            for call, call_id in zip(calls, ids):
                call["id"] = call_id
            stored.append({"role": "assistant", "content": f"[TOOL_CALLS]{json.dumps(calls)}"})
        elif message["role"] == "tool":
            stored.append({"role": "tool", "tool_call_id": ids.pop(0) if ids else None,
                           "content": message["content"]})
        else:
            stored.append(dict(message))
    return stored


def render_mistral_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """MistralFCHandler (mistral_fc.py): ``<s>``, the ``[AVAILABLE_TOOLS]`` block before the *last* user message
    (compared by value), the system text inside the last message only when that message is a user one, replies +
    ``</s>``, results as ``[TOOL_RESULTS]`` JSON. No assistant opener: the prompt ends after the last message."""
    stored = _mistral_stored(messages)
    system = None
    loop = stored
    if stored[0]["role"] == "system":
        system, loop = stored[0]["content"], stored[1:]
    users = [m for m in loop if m["role"] == "user"]
    out = "<s>"
    for index, message in enumerate(loop):
        role = message["role"]
        if role == "user":
            if functions and message == users[-1]:
                out += "[AVAILABLE_TOOLS][" + ", ".join(_mistral_doc(tool) for tool in functions) + "][/AVAILABLE_TOOLS]"
            if index == len(loop) - 1 and system:
                out += f"[INST]{system}\n\n{message['content']}[/INST]"
            else:
                out += f"[INST]{message['content']}[/INST]"
        elif role == "assistant":
            out += f"{message['content']}</s>"
        elif role == "tool":
            out += "[TOOL_RESULTS]" + json.dumps({"content": message["content"], "call_id": message["tool_call_id"]}) \
                + "[/TOOL_RESULTS]"
    return out


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("MistralFCHandler", "mistral_fc.py", render_mistral_fc, False, record=_record_mistral,
                decode_ast=_ast(lambda r: _require_call_list(r, dicts=False)),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r, dicts=False)))),
)
