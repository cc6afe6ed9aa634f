"""BFCL's prompting handlers outside the Qwen and Llama templates (GemmaHandler, PhiHandler, MiniCPMHandler,
BielikHandler, DeepseekReasoningHandler) of bfcl-eval 2026.3.23: their ``_format_prompt`` as pure renderers (what a
renderer is given: :mod:`.handlers`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each renderer's docstring). Standard library only.

DEFECTS of the official handlers reproduced here (see :mod:`.handlers` for the whole list):

- DeepseekReasoningHandler: the results of a step are written as the Python ``str`` of a list of dicts in a user turn.
"""

from __future__ import annotations

from typing import Any, Sequence

from .common import Messages


# -- Gemma, Phi, MiniCPM, Bielik, DeepSeek --------------------------------------------------------------------------

def _combine_users(messages: Messages) -> list[dict]:
    out: list[dict] = []
    for message in messages:
        message = dict(message)
        if message["role"] == "user" and out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], str):
            out[-1]["content"] = out[-1]["content"] + "\n\n" + message["content"]
            continue
        out.append(message)
    return out


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


def render_phi(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """PhiHandler (phi.py): Phi-4-mini's ``<|role|>...<|end|>`` when the model name holds ``Phi-4-mini``, else
    Phi-4's ``<|im_start|>role<|im_sep|>...<|im_end|>\\n``; results keep the ``tool`` role."""
    if "Phi-4-mini" in model_name:
        return "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in messages) + "<|assistant|>"
    return "".join(f"<|im_start|>{m['role']}<|im_sep|>{m['content']}<|im_end|>\n" for m in messages) + \
        "<|im_start|>assistant<|im_sep|>"


def render_minicpm(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """MiniCPMHandler (minicpm.py): ChatML, results under the ``tool`` role."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def render_bielik(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """BielikHandler (bielik.py): ``<s>`` and ChatML."""
    return "<s>" + render_minicpm(messages, functions, model_name, step)


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
