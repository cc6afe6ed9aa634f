"""BFCL's DeepseekReasoningHandler (``deepseek_reasoning.py``), bfcl-eval 2026.3.23
``bfcl_eval/model_handler/local_inference/``: the whole handler in one module, as upstream keeps it in one class: its
renderer (``_format_prompt``, on what a renderer is given: :mod:`.handlers`), what it records of a reply and its
``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- DeepseekReasoningHandler: the results of a step are written as the Python ``str`` of a list of dicts in
  a user turn.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

from typing import Any, Sequence

from .common import Messages, _combine_users
from .spec import HandlerSpec


def _record_deepseek(text: str) -> Any:
    """DeepseekReasoningHandler: the text after the last ``</think>`` (no newline stripped)."""
    return text.split("</think>")[-1] if "</think>" in text else text


def _deepseek_messages(messages: Messages) -> list[dict]:
    """DeepseekReasoningHandler's assembly: system turns become user turns, consecutive users are joined (question
    turns; results never follow a user), a reply is stored raw, and the results of one step are ONE user message
    whose content is the list of ``{"role": "tool", "name", "content"}`` dicts."""
    converted = [{**m, "role": "user"} if m["role"] == "system" else dict(m) for m in messages]
    out: list[dict] = []
    for message in _combine_users(converted):
        if message["role"] == "tool":
            entry = {"role": "tool", "name": message.get("name"), "content": message["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(entry)
            else:
                out.append({"role": "user", "content": [entry]})
            continue
        out.append(message)
    return out


def render_deepseek_reasoning(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """DeepseekReasoningHandler (deepseek_reasoning.py): ``<｜begin▁of▁sentence｜>``, every user turn as
    ``<｜User｜>`` + its content (a results message is a Python list written with ``str``), every reply as the text
    after its last ``</think>``, then ``<｜Assistant｜><think>\\n``. No system text remains (all became user turns)."""
    out = "<｜begin▁of▁sentence｜>"
    for message in _deepseek_messages(messages):
        if message["role"] == "user":
            out += f"<｜User｜>{message['content']}"
        elif message["role"] == "assistant":
            content = message["content"]
            if "</think>" in content:
                content = content.split("</think>")[-1]
            out += f"<｜Assistant｜>{content}<｜end▁of▁sentence｜>"
    return out + "<｜Assistant｜><think>\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("DeepseekReasoningHandler", "deepseek_reasoning.py", render_deepseek_reasoning, True,
                record=_record_deepseek),
)
