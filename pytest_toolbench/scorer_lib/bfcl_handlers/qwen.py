"""BFCL's QwenHandler (``qwen.py``), QwenFCHandler (``qwen_fc.py``), NanbeigeFCHandler (``nanbeige_fc.py``),
PelicanVLFCHandler (``pelican_vl_fc.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``: the
whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a renderer
is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute`` (:data:`SPECS`).

DEFECTS of the official handler reproduced here (see :mod:`.handlers` for the whole list):

- QwenFCHandler, NanbeigeFCHandler: a later call equal in value to the first gets no newline before it when the
  reply text is empty (:func:`.common._tool_calls_block`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import (Messages, _decode_tagged_json, _execute_tagged_json, _grouped_tool_response, _json_calls_in_tags,
                     _qwen_tools, _split_think, _strip_after_think, _tool_calls_block)
from .spec import HandlerSpec, _ast, _exe


def _last_query_index(messages: Messages) -> int:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message["content"]
        if message["role"] == "user" and type(content) is str and not (
                content.startswith("<tool_response>") and content.endswith("</tool_response>")):
            return index
    return len(messages) - 1


def _qwen_turns(messages: Messages, tool_calls: bool) -> str:
    """The message loop of QwenHandler / QwenFCHandler / NanbeigeFCHandler ``_format_prompt`` on stored messages
    (``reasoning_content`` and, with ``tool_calls``, the stored calls)."""
    out = ""
    last = len(messages) - 1
    last_query = _last_query_index(messages)
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role == "user" or (role == "system" and index != 0):
            out += f"<|im_start|>{role}\n{content}<|im_end|>\n"
        elif role == "assistant":
            reasoning = message.get("reasoning_content") or ""
            if not reasoning and "</think>" in content:
                reasoning, content = _split_think(content)
            if index > last_query and (index == last or reasoning):
                out += f"<|im_start|>{role}\n<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
            else:
                out += f"<|im_start|>{role}\n{content}"
            if tool_calls and "tool_calls" in message:
                out += _tool_calls_block(message, content)
            out += "<|im_end|>\n"
        elif role == "tool":
            out += _grouped_tool_response(messages, index, content, "<|im_start|>user", "<|im_end|>\n")
    return out + "<|im_start|>assistant\n"


def _stored_qwen_fc(messages: Messages) -> list[dict]:
    """QwenFCHandler / NanbeigeFCHandler ``_parse_query_response_prompting``: a reply with calls in ``<tool_call>``
    tags (anywhere, reasoning included) is stored as empty content plus the calls, else as the text after
    ``</think>``; both with the reasoning."""
    stored = []
    for message in messages:
        if message["role"] == "assistant":
            raw = message["content"]
            reasoning, cleaned = _split_think(raw)
            calls = _json_calls_in_tags(raw)
            message = ({"role": "assistant", "content": "", "tool_calls": calls} if calls
                       else {"role": "assistant", "content": cleaned})
            message["reasoning_content"] = reasoning
        stored.append(message)
    return stored


def render_qwen(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """QwenHandler (qwen.py): the system message, then the Qwen3 message loop; a reply keeps its reasoning only
    after the last user query."""
    out = f"<|im_start|>system\n{messages[0]['content']}<|im_end|>\n" if messages[0]["role"] == "system" else ""
    return out + _qwen_turns(messages, tool_calls=False)


def render_qwen_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """QwenFCHandler (qwen_fc.py): a ``# Tools`` system block (after the question's own system text) with each BFCL
    function doc as ``json.dumps``; replies with calls are rewritten from the parsed calls."""
    stored = _stored_qwen_fc(messages)
    if functions:
        out = "<|im_start|>system\n" + (stored[0]["content"] + "\n\n" if stored[0]["role"] == "system" else "")
        out += _qwen_tools(functions)
    else:
        out = f"<|im_start|>system\n{stored[0]['content']}<|im_end|>\n" if stored[0]["role"] == "system" else ""
    return out + _qwen_turns(stored, tool_calls=True)


_NANBEIGE_TOOL_SYSTEM = (
    "你是一位工具函数调用专家，你会得到一个问题和一组可能的工具函数。根据问题，你需要进行一个或多个函数/工具调用以实现目的，请尽量尝试探索通过工具解决问题。 "
    "如果没有一个函数可以使用，请直接使用自然语言回复用户。 如果给定的问题缺少函数所需的参数，请使用自然语言进行提问，向用户询问必要信息。 "
    "如果调用结果已经足够回答用户问题，请对历史结果进行总结，使用自然语言回复用户。")


_NANBEIGE_PLAIN_SYSTEM = (
    '<|im_start|>system\n 你是一个名为"南北阁"的人工智能助手，正在与人类用户进行交谈。你的目标是以最有帮助和最逻辑的方式回答问题，同时确保内容的安全性。'
    "你的回答中不应包含任何有害、政治化、宗教化、不道德、种族主义、非法的内容。请确保你的回答不带有社会偏见，符合社会主义价值观。"
    "如果遇到的问题无意义或事实上不连贯，请不要回答错误的内容，而是解释问题为何无效或不连贯。如果你不知道问题的答案，也请勿提供错误的信息。<|im_end|>\n")


def render_nanbeige_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """NanbeigeFCHandler (nanbeige_fc.py): QwenFCHandler's layout with its own default system texts (the tool one is
    followed by ``# Tools`` with no blank line)."""
    stored = _stored_qwen_fc(messages)
    if functions:
        out = "<|im_start|>system\n" + (stored[0]["content"] + "\n\n" if stored[0]["role"] == "system"
                                        else _NANBEIGE_TOOL_SYSTEM)
        out += _qwen_tools(functions)
    elif stored[0]["role"] == "system":
        out = f"<|im_start|>system\n{stored[0]['content']}<|im_end|>\n"
    else:
        out = _NANBEIGE_PLAIN_SYSTEM
    return out + _qwen_turns(stored, tool_calls=True)


_PELICAN_TOOLS = (
    "# Tools\n\nYou may call one or more function to assist with the user query.\n\nYou are provided with function "
    "signatures within <tools></tools> XML tags:\n<tools>{docs}\n</tools>\n\nFor each function call, return a json "
    "object with functions name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call><|im_end|>\n')


def render_pelican_vl_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """PelicanVLFCHandler (pelican_vl_fc.py): a Qwen-VL style tools block (its own wording: "one or more function",
    "functions name") after the question's system text, or "You are a helpful assistant." without tools and system;
    every message its own turn (each result a ``tool`` turn of its own, no grouping); a reply with calls is written
    as its ``<tool_call>`` lines only (arguments with ``ensure_ascii=False``), its reasoning never."""
    stored = _stored_qwen_fc(messages)
    out = ""
    system_done = False
    if functions:
        out += "<|im_start|>system\n"
        if stored and stored[0]["role"] == "system":
            out += stored[0]["content"] + "\n\n"
            system_done = True
        out += _PELICAN_TOOLS.format(docs="".join(f"\n{json.dumps(tool)}" for tool in functions))
    if stored and stored[0]["role"] == "system" and not system_done:
        out += f"<|im_start|>system\n{stored[0]['content']}<|im_end|>\n"
        system_done = True
    elif not functions and (not stored or stored[0]["role"] != "system"):
        out += "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    for index, message in enumerate(stored):
        role, content = message["role"], message["content"]
        if index == 0 and role == "system" and system_done:
            continue
        out += f"<|im_start|>{role}\n"
        if role == "tool":
            out += f"<tool_response>\n{content}\n</tool_response>"
        elif role == "assistant":
            for call in message.get("tool_calls", []):
                call = call.get("function", call)
                arguments = call["arguments"]
                if isinstance(arguments, dict):
                    arguments = json.dumps(arguments, ensure_ascii=False)
                out += f'<tool_call>\n{{"name": "{call["name"]}", "arguments": {arguments}}}\n</tool_call>'
            if content:
                out += content
        elif role == "user" and isinstance(content, str):
            out += content
        out += "<|im_end|>\n"
    return out + "<|im_start|>assistant\n"


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("QwenHandler", "qwen.py", render_qwen, True, record=_strip_after_think),
    HandlerSpec("QwenFCHandler", "qwen_fc.py", render_qwen_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("NanbeigeFCHandler", "nanbeige_fc.py", render_nanbeige_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("PelicanVLFCHandler", "pelican_vl_fc.py", render_pelican_vl_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
)
