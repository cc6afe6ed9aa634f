"""BFCL's Qwen-template handlers (QwenHandler, QwenFCHandler, NanbeigeFCHandler, PelicanVLFCHandler) and
Llama-template handlers (LlamaHandler, LlamaHandler_3_1, SalesforceLlamaHandler, SalesforceQwenHandler,
BitAgentHandler, ThinkAgentHandler) of bfcl-eval 2026.3.23: their ``_format_prompt`` as pure renderers (what a
renderer is given: :mod:`.handlers`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each renderer's docstring). Standard library only.

DEFECTS of the official handlers reproduced here (see :mod:`.handlers` for the whole list):

- ThinkAgentHandler: the prompt holds only the first non-system message (no reply, result or later turn ever reaches
  the model), and ``decode_execute`` raises on any reply with a call (it calls ``.items()`` on a string), so no
  multi-turn step ever executes (the decoder: :mod:`.decoders`).
- QwenFCHandler, NanbeigeFCHandler: a later call equal in value to the first gets no newline before it when the reply
  text is empty (:func:`.common._tool_calls_block`).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .common import (Messages, _grouped_tool_response, _json_calls_in_tags, _split_think, _tool_calls_block,
                     _tool_result_text)


# -- the Qwen-template family (QwenHandler, QwenFCHandler, NanbeigeFCHandler) ---------------------------------------

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


_QWEN_TOOLS_HEAD = ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided "
                    "with function signatures within <tools></tools> XML tags:\n<tools>")
_QWEN_TOOLS_TAIL = ('\n</tools>\n\nFor each function call, return a json object with function name and arguments within '
                    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
                    '<args-json-object>}\n</tool_call><|im_end|>\n')


def _qwen_tools(functions: Sequence[Any]) -> str:
    return _QWEN_TOOLS_HEAD + "".join(f"\n{json.dumps(tool)}" for tool in functions) + _QWEN_TOOLS_TAIL


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


# -- Llama-template family ------------------------------------------------------------------------------------------

def _llama_results(messages: Messages) -> list[dict]:
    """LlamaHandler stores a result as ``{"role": "ipython", "content": ...}``."""
    return [{"role": "ipython", "content": m["content"]} if m["role"] == "tool" else dict(m) for m in messages]


def render_llama(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """LlamaHandler (llama.py): every message as a header and its ``strip()``-ed content; Llama 4's tokens when the
    model name holds ``Llama-4``."""
    if "Llama-4" in model_name:
        head, tail, end = "<|header_start|>", "<|header_end|>", "<|eot|>"
    else:
        head, tail, end = "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"
    out = "<|begin_of_text|>"
    for message in _llama_results(messages):
        out += f"{head}{message['role']}{tail}\n\n{message['content'].strip()}{end}"
    return out + f"{head}assistant{tail}\n\n"


def render_llama_3_1(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """LlamaHandler_3_1 (llama_3_1.py): the ``Environment: ipython`` system block with fixed date lines, the function
    docs (``json.dumps(indent=4)``) inside the *first* user message, results under ``ipython`` written unstripped."""
    out = "<|begin_of_text|>"
    system, rest = "", list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"].strip(), rest[1:]
    out += ("<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\n"
            "Today Date: 26 Jul 2024\n\n" + system + "<|eot_id|>")
    first_user = True
    for message in rest:
        if message["role"] == "user" and first_user:
            first_user = False
            out += ("<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a "
                    "JSON for a function call with its proper arguments that best answers the given prompt.\n\n"
                    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its '
                    'value}.Do not use variables.\n\n')
            out += "".join(json.dumps(function, indent=4) + "\n\n" for function in functions)
            out += f"{message['content'].strip()}<|eot_id|>"
        elif message["role"] == "tool":
            out += "<|start_header_id|>ipython<|end_header_id|>\n\n" + _tool_result_text(message["content"]) + "<|eot_id|>"
        else:
            out += f"<|start_header_id|>{message['role']}<|end_header_id|>\n\n{message['content'].strip()}<|eot_id|>"
    return out + "<|start_header_id|>assistant<|end_header_id|>\n\n"


_XLAM_SYSTEM_TAIL = (
    "You have access to a set of tools. When using tools, make calls in a single JSON array: \n\n"
    '[{"name": "tool_call_name", "arguments": {"arg1": "value1", "arg2": "value2"}}, ... (additional parallel tool calls '
    "as needed)]\n\nIf no tool is suitable, state that explicitly. If the user's input lacks required parameters, ask "
    "for clarification. Do not interpret or respond until tool results are returned. Once they are available, process "
    "them or make additional calls if needed. For tasks that don't require tools, such as casual conversation or "
    "general advice, respond directly in plain text. The available tools are:\n\n")
_XLAM_DEFAULT_SYSTEM = "You are a helpful assistant that can use tools. You are developed by Salesforce xLAM team."
_BITAGENT_DEFAULT_SYSTEM = "You are a helpful Assistant named BitAgent that is designed to use tools."


def _xlam_like(messages: Messages, functions: Sequence[Any], default_system: str, llama: bool) -> str:
    """SalesforceLlamaHandler, SalesforceQwenHandler, BitAgentHandler: the xLAM system block (the question's system
    text ``strip()``-ed in place of the default) with the docs as ``json.dumps(indent=4)``; replies ``strip()``-ed
    (their ``tool_calls`` branch is never reached: the base handler stores text), results unstripped under
    ``ipython`` (Llama) or ``tool`` (Qwen)."""
    system, rest = default_system, list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"].strip(), rest[1:]
    if llama:
        open_turn, close_turn, result_role = "<|start_header_id|>{}<|end_header_id|>\n\n", "<|eot_id|>", "ipython"
        out = "<|begin_of_text|>"
    else:
        open_turn, close_turn, result_role = "<|im_start|>{}\n", "<|im_end|>", "tool"
        out = ""
    out += open_turn.format("system") + system + "\n" + _XLAM_SYSTEM_TAIL
    out += "".join(json.dumps(function, indent=4) + "\n\n" for function in functions) + close_turn
    for message in rest:
        if message["role"] == "tool":
            out += open_turn.format(result_role) + _tool_result_text(message["content"]) + close_turn
        else:
            out += open_turn.format(message["role"]) + message["content"].strip() + close_turn
    return out + open_turn.format("assistant")


def render_salesforce_llama(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """SalesforceLlamaHandler (salesforce_llama.py)."""
    return _xlam_like(messages, functions, _XLAM_DEFAULT_SYSTEM, llama=True)


def render_salesforce_qwen(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """SalesforceQwenHandler (salesforce_qwen.py): no newline between turns."""
    return _xlam_like(messages, functions, _XLAM_DEFAULT_SYSTEM, llama=False)


def render_bitagent(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """BitAgentHandler (bitagent.py): SalesforceLlamaHandler's layout with BitAgent's default system line."""
    return _xlam_like(messages, functions, _BITAGENT_DEFAULT_SYSTEM, llama=True)


def render_think_agent(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """ThinkAgentHandler (think_agent.py): a fixed system block, then ONE user turn made of the instructions, the
    docs as a Python ``repr`` of ``{name, description, parameters: properties}`` and the first non-system message;
    every later message (replies, results, later turns) is left out (DEFECTS)."""
    tools = [{"name": f["name"], "description": f["description"],
              "parameters": {k: v for k, v in f["parameters"].get("properties", {}).items()}} for f in functions]
    rest = list(messages[1:]) if messages[0]["role"] == "system" else list(messages)
    out = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>Cutting Knowledge Date: December 2023"
           "Today Date: 07 Dec 2024<|eot_id|>")
    if rest:
        out += ("<|start_header_id|>user<|end_header_id|>Given the following functions, please respond with a JSON for "
                "a function call with its proper arguments that best answers the given prompt."
                'Respond in the format {"name": function name, "parameters": dictionary of argument name and its '
                "value}.Do not use variables.Available tools:" + f"{tools}" + rest[0]["content"].strip() + "<|eot_id|>")
    return out + "<|start_header_id|>assistant<|end_header_id|>"
