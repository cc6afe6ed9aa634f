"""BFCL's prompting handlers for a detected model family, reproduced: how QwenHandler, LlamaHandler (Llama 3 and 4)
and GemmaHandler write a request's prompt text (``_format_prompt`` on the messages their assembly holds).

A score is comparable with a published one only if the model saw the same text. BFCL's leaderboard prompts a local
model in prompting mode through the family's handler in ``bfcl_eval/model_handler/local_inference/``, whose
``_format_prompt`` writes the prompt itself (it does not call the tokenizer's chat template), and whose message
assembly (``_pre_query_processing_prompting``, ``_add_assistant_message_prompting``,
``_add_execution_results_prompting``) differs per family. The chat template agrees with it on a first request but not
later: Qwen2.5's template adds a default system line to a conversation without one, Qwen3's drops a ``<think>`` block
from an assistant reply before the last user turn and keeps it after, Gemma 3's refuses a ``tool`` turn, Llama's
writes a tool result as an ``ipython`` turn only when asked. So for BFCL in prompting mode, with a recognised family,
the prompt is rendered as that handler renders it (re-implemented here; the oracle test compares byte for byte with
the handler's own output on every step shape).

Reference: bfcl-eval 2026.3.23 (``bfcl_eval-2026.3.23-py3-none-any.whl``, sha256 3bb6dfa5...853d3a0a = gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8), files ``bfcl_eval/model_handler/local_inference/qwen.py`` (QwenHandler),
``llama.py`` (LlamaHandler), ``gemma.py`` (GemmaHandler), ``base_oss_handler.py`` (OSSHandler: the shared assembly)
and ``bfcl_eval/constants/model_config.py`` (which handler a prompting model gets: Qwen2.5/Qwen3 -> QwenHandler, every
Llama 3.x and 4 prompting entry -> LlamaHandler, Gemma 3 -> GemmaHandler; ``LlamaHandler_3_1`` is for the ``-FC``
entries only).

The messages handed in are the ones the BFCL suite builds (``suites/bfcl/scorer/multi_turn/conversation.py``), i.e.
what the generic ``OSSHandler`` would hold: the question turns (system prompt included), each reply as it was
generated (raw text, a ``<think>`` block included), each execution result as
``{"role": "tool", "name": <call>, "content": <result>}``.
Each family's renderer first applies its handler's own assembly differences, then its ``_format_prompt``. Every
other local handler (a row's) is rendered by :mod:`.row_formats`.

Pure functions; standard library only.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib.handler_library import HandlerFormat

#: what the renderers reproduce
UPSTREAM = "bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8)"

#: the name prefix of a BFCL handler renderer (``HandlerFormat.name``: ``bfcl-handler:<handler class>``)
LABEL = "bfcl-handler"

Messages = Sequence[Mapping[str, Any]]


def _text(value: Any) -> str:
    """An f-string's view of a message field (the handlers interpolate ``content`` with f-strings)."""
    return f"{value}"


def render_qwen(messages: Messages, *, first_step: bool = True) -> str:
    """``QwenHandler._format_prompt`` (qwen.py), on the messages QwenHandler holds.

    Assembly: QwenHandler stores a reply as its text after the last ``</think>`` (``lstrip("\\n")``) plus a
    ``reasoning_content`` field with the text between ``<think>`` and ``</think>``. Rendering re-derives exactly that
    split from the raw reply when the field is absent, so the raw reply renders the same.

    Rendering quirks reproduced: only a *first* system message gets the system block (a later one is written as a
    turn of its own); no default system line when there is none; the last query is the last ``user`` message whose
    content is text not wrapped in ``<tool_response>``; an assistant reply after it is written with its reasoning in
    a ``<think>`` block when it has reasoning or is the very last message, one before it loses the reasoning; a run of
    ``tool`` messages is one ``user`` turn of ``<tool_response>`` blocks; roles other than system/user/assistant/tool
    are dropped; the prompt ends with the assistant header and nothing after it.
    """
    del first_step  # QwenHandler renames nothing in the question
    out: list[str] = []
    if messages and messages[0]["role"] == "system":
        out.append("<|im_start|>system\n" + _text(messages[0]["content"]) + "<|im_end|>\n")
    last = len(messages) - 1
    last_query = last
    for index in range(last, -1, -1):
        message = messages[index]
        content = message["content"]
        if message["role"] == "user" and type(content) is str and not (
                content.startswith("<tool_response>") and content.endswith("</tool_response>")):
            last_query = index
            break
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role == "user" or (role == "system" and index != 0):
            out.append("<|im_start|>" + role + "\n" + _text(content) + "<|im_end|>\n")
        elif role == "assistant":
            reasoning = message.get("reasoning_content") or ""
            if not reasoning and "</think>" in content:
                pieces = content.split("</think>")
                reasoning = pieces[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                content = pieces[-1].lstrip("\n")
            if index > last_query and (index == last or reasoning):
                out.append("<|im_start|>" + role + "\n<think>\n" + reasoning.strip("\n") + "\n</think>\n\n"
                           + content.lstrip("\n"))
            else:
                out.append("<|im_start|>" + role + "\n" + _text(content))
            out.append("<|im_end|>\n")
        elif role == "tool":
            previous = messages[index - 1]["role"] if index > 0 else None
            following = messages[index + 1]["role"] if index < last else None
            if index == 0 or previous != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + _text(content) + "\n</tool_response>")
            if index == last or following != "tool":
                out.append("<|im_end|>\n")
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def _llama_messages(messages: Messages) -> list[dict[str, Any]]:
    """LlamaHandler's assembly: an execution result is an ``ipython`` message (no name), not a ``tool`` one."""
    return [{"role": "ipython", "content": m["content"]} if m["role"] == "tool" else dict(m) for m in messages]


def render_llama3(messages: Messages, *, first_step: bool = True) -> str:
    """``LlamaHandler._format_prompt`` (llama.py), Llama 3 branch: ``<|begin_of_text|>``, then every message as a
    header with its role and its content ``strip()``-ed, ``<|eot_id|>``; no default system block, no date lines
    (those are the chat template's), tool results under the ``ipython`` role."""
    del first_step
    out = ["<|begin_of_text|>"]
    for message in _llama_messages(messages):
        out.append("<|start_header_id|>" + message["role"] + "<|end_header_id|>\n\n" + message["content"].strip()
                   + "<|eot_id|>")
    out.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
    return "".join(out)


def render_llama4(messages: Messages, *, first_step: bool = True) -> str:
    """``LlamaHandler._format_prompt`` (llama.py), Llama 4 branch: the same layout with Llama 4's header tokens."""
    del first_step
    out = ["<|begin_of_text|>"]
    for message in _llama_messages(messages):
        out.append("<|header_start|>" + message["role"] + "<|header_end|>\n\n" + message["content"].strip() + "<|eot|>")
    out.append("<|header_start|>assistant<|header_end|>\n\n")
    return "".join(out)


def _gemma_messages(messages: Messages, first_step: bool) -> list[dict[str, Any]]:
    """GemmaHandler's assembly (``_pre_query_processing_prompting``): in the question's turns, consecutive user
    messages are joined with a blank line (``combine_consecutive_user_prompts``) and an ``assistant`` message is
    renamed ``model``; replies the handler appends later keep the ``assistant`` role, tool results the ``tool`` role.

    Consecutive user messages only occur inside one question turn (every step ends with a reply), so joining every
    such run is the same. Question and reply ``assistant`` messages cannot be told apart in a later step's history;
    ``first_step`` (no reply yet) marks them as the question's. In BFCL v4 only single-turn ``live_irrelevance``
    questions hold assistant messages (11), and a single-turn case is always a first step, so this is exact on the
    data; a multi-turn question holding an ``assistant`` message would render it as ``assistant`` after step 0.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        if message["role"] == "user" and out and out[-1]["role"] == "user":
            out[-1]["content"] = out[-1]["content"] + "\n\n" + message["content"]
            continue
        if first_step and message["role"] == "assistant":
            message["role"] = "model"
        out.append(message)
    return out


def render_gemma3(messages: Messages, *, first_step: bool = True) -> str:
    """``GemmaHandler._format_prompt`` (gemma.py): ``<bos>``, a first system message's ``strip()``-ed text plus a blank
    line put in front of the first remaining turn, every message as ``<start_of_turn>{role}`` with its content
    ``strip()``-ed (roles as assembled: ``model`` for the question's, ``assistant`` for replies, ``tool`` for results;
    no alternation check), then ``<start_of_turn>model``."""
    messages = _gemma_messages(messages, first_step)
    prefix = ""
    if messages and messages[0]["role"] == "system":
        prefix = messages[0]["content"].strip() + "\n\n"
        messages = messages[1:]
    out = ["<bos>"]
    for position, message in enumerate(messages):
        out.append("<start_of_turn>" + message["role"] + "\n" + (prefix if position == 0 else "")
                   + message["content"].strip() + "<end_of_turn>\n")
    out.append("<start_of_turn>model\n")
    return "".join(out)


def qwen_recorded_answer(text: str) -> str:
    """QwenHandler's ``_parse_query_response_prompting`` (qwen.py): a reply holding ``</think>`` is recorded as what
    follows its last ``</think>``, leading newlines dropped; that is what the result file holds and the checker
    decodes (the reasoning goes to ``reasoning_content``). A reply without ``</think>`` is kept as it is."""
    if "</think>" not in text:
        return text
    return text.split("</think>")[-1].lstrip("\n")


HANDLER_FORMATS: dict[str, HandlerFormat] = {
    "qwen": HandlerFormat("qwen", "QwenHandler", "bfcl_eval/model_handler/local_inference/qwen.py", render_qwen,
                          recorded_answer=qwen_recorded_answer, label=LABEL, takes_step=False),
    "llama3": HandlerFormat("llama3", "LlamaHandler", "bfcl_eval/model_handler/local_inference/llama.py",
                            render_llama3, (_llama_messages,), label=LABEL, takes_step=False),
    "llama4": HandlerFormat("llama4", "LlamaHandler", "bfcl_eval/model_handler/local_inference/llama.py",
                            render_llama4, (_llama_messages,), label=LABEL, takes_step=False),
    "gemma3": HandlerFormat("gemma3", "GemmaHandler", "bfcl_eval/model_handler/local_inference/gemma.py",
                            render_gemma3, (_gemma_messages,), label=LABEL, takes_step=False),
}
