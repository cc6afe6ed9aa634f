"""BFCL's FC handlers outside the Qwen and Llama templates, FunctionGemma and MiniCPM FC (HammerHandler, GLMHandler,
GraniteFunctionCallingHandler, Granite3FCHandler, Granite4FCHandler, PhiFCHandler, MistralFCHandler, ArchHandler) of
bfcl-eval 2026.3.23: their ``_format_prompt`` as pure renderers (what a renderer is given: :mod:`.handlers`), and the
tool-call extraction the recorders in :mod:`.decoders` share with them.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each renderer's docstring). Standard library only.

DEFECTS of the official handlers reproduced here (see :mod:`.handlers` for the whole list):

- HammerHandler: ``convert_to_format_tool`` edits the function docs it is given, which are the entry's own; every
  request appends ``default is '<default>'`` to each defaulted parameter's description once more (request k of a
  multi-turn entry carries it k+1 times) and replaces a nested parameter by its sub-properties for good.
- Granite3FCHandler: the prompt ends after the last message, without an assistant turn opener.
- MistralFCHandler: string values of a tool doc are written between quotes without escaping (a quote in a
  description breaks the JSON); the system text is written only when the last message is a user turn; call ids are
  random (see :func:`mistral_call_ids`).
- Granite4FCHandler: a later call equal in value to the first gets no newline before it when the reply text is empty
  (:func:`.common._tool_calls_block`).
"""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any, Mapping, Sequence

from .common import (HandlerDecodeError, Messages, _grouped_tool_response, _json_calls_in_tags, _python_value,
                     _tool_calls_block)
from .qwen_llama import _qwen_tools
from .function_docs import convert_to_tool


# -- Hammer, GLM, Granite, Phi FC, Mistral, Arch --------------------------------------------------------------------

_HAMMER_TASK = (
    "You are a tool calling assistant. In order to complete the user's request, you need to select one or more "
    "appropriate tools from the following tools and fill in the correct values for the tool parameters. Your specific "
    "tasks are:\n1. Make one or more function/tool calls to meet the request based on the question.\n2. If none of the "
    "function can be used, point it out and refuse to answer.\n3. If the given question lacks the parameters required "
    "by the function, also point it out.\n\nThe following are characters that may interact with you\n1. user: Provides "
    "query or additional information.\n2. tool: Returns the results of the tool calling.\n")
_HAMMER_FORMAT = (
    "\nThe output MUST strictly adhere to the following JSON format, and NO other text MUST be included.\nThe example "
    "format is as follows. Please make sure the parameter type is correct. If no function call is needed, please "
    "directly output an empty list '[]'\n```\n[\n    {\"name\": \"func_name1\", \"arguments\": {\"argument1\": "
    "\"value1\", \"argument2\": \"value2\"}},\n    ... (more tool calls as required)\n]\n```\n")


def _hammer_tool(tool: dict) -> dict:
    """One pass of HammerHandler's ``convert_to_format_tool`` on ``tool``, mutating it as upstream does: the
    returned ``parameters`` IS the doc's ``properties`` dict, so the ``required`` flags, the replaced nested
    parameters and the ``default is '...'`` suffix stay in the doc for the next call."""
    properties = tool["parameters"].get("properties", {})
    formatted = {"name": tool["name"], "description": tool["description"], "parameters": properties}
    for param in list(properties.keys()):
        value = properties[param]
        if "properties" in value and isinstance(value["properties"], dict):
            required = value.get("required", [])
            properties[param] = value["properties"]
            for name in required:
                properties[param][name]["required"] = True
    for param in tool["parameters"].get("required", []):
        properties[param]["required"] = True
    for param in properties.keys():
        if "default" in properties[param]:
            properties[param]["description"] += f"default is '{properties[param]['default']}'"
    return formatted


def render_hammer(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """HammerHandler (hammer.py): the task, the docs reshaped (``json.dumps``), the format instruction in a user turn
    after a fixed system turn, then the question (system turns as user turns) and history in ChatML. The reshaping
    mutates the docs the handler keeps, so request ``step`` sees it applied ``step + 1`` times (DEFECTS)."""
    docs = json.loads(json.dumps(list(functions)))
    for _ in range(step + 1):
        tools = [_hammer_tool(tool) for tool in docs]
    converted = [{**m, "role": "user"} if m["role"] == "system" else m for m in messages]
    query = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in converted)
    content = f"[BEGIN OF TASK INSTRUCTION]\n{_HAMMER_TASK}\n[END OF TASK INSTRUCTION]\n\n"
    content += "[BEGIN OF AVAILABLE TOOLS]\n" + json.dumps(tools) + "\n[END OF AVAILABLE TOOLS]\n\n"
    content += f"[BEGIN OF FORMAT INSTRUCTION]\n{_HAMMER_FORMAT}\n[END OF FORMAT INSTRUCTION]\n\n"
    return (f"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n{content}<|im_end|>\n"
            f"{query}<|im_start|>assistant\n")


_GLM_SYSTEM = ("[gMASK]<sop><|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，"
               "你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具")


def render_glm(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GLMHandler (glm.py): GLM-4's Chinese system text and one ``## name`` section per tool (OpenAI-style
    ``convert_to_tool``, ``json.dumps(indent=4)``); no system text at all when there is no tool; messages as
    ``<|role|>\\ncontent`` with no separator."""
    out = ""
    tools = convert_to_tool(functions, wrap=True)
    if tools:
        out = _GLM_SYSTEM
        for tool in tools:
            out += f"\n\n## {tool['function']['name']}\n\n{json.dumps(tool['function'], indent=4)}"
            out += "\n在调用上述函数时，请使用 Json 格式表示调用的参数。"
    out += "".join(f"<|{m['role']}|>\n{m['content']}" for m in messages)
    return out + "<|assistant|>"


_GRANITE_FC_SYSTEM = (
    "SYSTEM: You are a helpful assistant with access to the following function calls. Your task is to produce a "
    "sequence of function calls necessary to generate response to the user utterance. Use the following function calls "
    "as required.\n<|function_call_library|>\n{functions_str}\nIf none of the functions are relevant or the given "
    'question lacks the parameters required by the function, please output "<function_call> {"name": "no_function", '
    '"arguments": {}}".\n\n')


def render_granite_function_calling(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GraniteFunctionCallingHandler (granite.py): a plain-text ``SYSTEM:`` header with the OSSMODEL-style docs one
    per line, then ``ROLE:\\ncontent`` blocks and ``ASSISTANT: ``."""
    docs = "\n".join(json.dumps(tool) for tool in convert_to_tool(functions, wrap=False))
    out = _GRANITE_FC_SYSTEM.replace("{functions_str}", docs)
    out += "".join(f"{m['role'].upper()}:\n{m['content']}\n\n" for m in messages)
    return out + "ASSISTANT: "


_GRANITE3_DEFAULT = "Knowledge Cutoff Date: April 2024.\nToday's Date: April 29, 2025.\nYou are Granite, developed by IBM."
_GRANITE3_TOOLS = (
    " You are a helpful AI assistant with access to the following tools. When a tool is required to answer the user's "
    "query, respond with <|tool_call|> followed by a JSON list of tools used. If a tool does not exist in the provided "
    "list of tools, notify the user that you do not have the ability to fulfill the request.")


def render_granite_3(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """Granite3FCHandler (granite_3.py): the system turn (the question's, else a dated default), a ``tools`` turn
    with ``json.dumps(indent=4)`` of the docs, every message as a role turn with results under ``tool``. The prompt
    does not end with an assistant turn opener (DEFECTS)."""
    rest = list(messages)
    if messages[0]["role"] == "system":
        system, rest = messages[0]["content"], rest[1:]
    else:
        system = _GRANITE3_DEFAULT + (_GRANITE3_TOOLS if functions else "")
    out = f"<|start_of_role|>system<|end_of_role|>{system}<|end_of_text|>\n"
    if functions:
        out += "<|start_of_role|>tools<|end_of_role|>" + json.dumps(list(functions), indent=4) + "<|end_of_text|>\n"
    return out + "".join(f"<|start_of_role|>{m['role']}<|end_of_role|>{m['content']}<|end_of_text|>\n" for m in rest)


_GRANITE4_HEAD = ("You are a helpful assistant with access to the following tools. You may call one or more tools to "
                  "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML "
                  "tags:\n<tools>")
_GRANITE4_TAIL = ('\n</tools>\n\nFor each tool call, return a json object with function name and arguments within '
                  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
                  "<args-json-object>}\n</tool_call>. If a tool does not exist in the provided list of tools, notify the "
                  "user that you do not have the ability to fulfill the request.")
_GRANITE4_DEFAULT = "You are a helpful assistant. Please ensure responses are professional, accurate, and safe."


def render_granite_4(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """Granite4FCHandler (granite_4.py): the system text (the question's, then the tools block), Granite's role
    tokens, replies with ``<tool_call>`` calls rewritten from the parsed calls (no reasoning split), results as
    ``<tool_response>`` blocks in one user turn."""
    stored = []
    for message in messages:
        if message["role"] == "assistant":
            calls = _json_calls_in_tags(message["content"])
            message = ({"role": "assistant", "content": "", "tool_calls": calls} if calls
                       else {"role": "assistant", "content": message["content"]})
        stored.append(message)
    tools = ""
    if functions:
        tools = _GRANITE4_HEAD + "".join("\n" + json.dumps(tool) for tool in functions) + _GRANITE4_TAIL
    if stored[0]["role"] == "system":
        system = stored[0]["content"] + ("\n\n" + tools if tools else "")
    else:
        system = tools or _GRANITE4_DEFAULT
    out = f"<|start_of_role|>system<|end_of_role|>{system}<|end_of_text|>\n"
    start = 1 if stored[0]["role"] == "system" else 0
    for index in range(start, len(stored)):
        message = stored[index]
        role, content = message["role"], message["content"]
        if role == "user" or (role == "system" and index > 0):
            out += f"<|start_of_role|>{role}<|end_of_role|>{content}<|end_of_text|>\n"
        elif role == "assistant":
            out += f"<|start_of_role|>{role}<|end_of_role|>{content}" + _tool_calls_block(message, content)
            out += "<|end_of_text|>\n"
        elif role == "tool":
            out += _grouped_tool_response(stored, index, content, "<|start_of_role|>user<|end_of_role|>",
                                          "<|end_of_text|>\n")
    return out + "<|start_of_role|>assistant<|end_of_role|>"


def _phi_fc_like_tools(text: str, fallback_to_end: bool) -> list:
    """``_extract_tool_calls`` of PhiFCHandler (``fallback_to_end``: ``<|tool_call|>`` bodies, closed or running to
    the end) and Granite3FCHandler (the text after the first ``<tool_call>``/``<|tool_call|>``)."""
    if fallback_to_end:
        bodies = re.findall(r"<\|tool_call\|>(.*?)<\|/tool_call\|>", text, re.DOTALL)
        if not bodies:
            bodies = re.findall(r"<\|tool_call\|>(.*?)(?:<\|/tool_call\|>)?$", text, re.DOTALL)
    else:
        text = text.lstrip("ASSISTANT:").lstrip()
        if "<tool_call>" in text:
            text, pattern = text.replace("</tool_call>", ""), r"<tool_call>(.*)"
        else:
            pattern = r"<\|tool_call\|>(.*)"
        bodies = [body.strip() for body in re.findall(pattern, text, re.DOTALL)]
    found: list = []
    for body in bodies:
        if not body.startswith("[") and not body.endswith("]"):
            body = "[" + body + "]"
        try:
            body = json.loads(body)
        except ValueError:
            pass
        if type(body) is list:
            found.extend(_python_value(item) if type(item) is str else item for item in body)
        else:
            found.append(body)
    return found


def _is_call_list(calls: Any) -> bool:
    return type(calls) is list and all(
        type(item) is dict and "name" in item and "arguments" in item and len(item) == 2 for item in calls)


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


def _arch_calls(text: str) -> list:
    """ArchHandler ``extract_tool_calls``: every ``<tool_call>\\n...\\n</tool_call>`` body, decoded as JSON when it
    is JSON and kept as text otherwise."""
    found: list = []
    for body in re.findall(r"<tool_call>\n(.*?)\n</tool_call>", text, re.DOTALL):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):  # upstream: ``except Exception``
            pass
        found.append(body)
    return found


def render_arch(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """ArchHandler (arch.py): Qwen2.5's tools system block around the question's system text (or Arch's default);
    replies with calls rewritten as ``<tool_call>`` lines (a reply with calls keeps none of its text)."""
    system = messages[0]["content"] if messages[0]["role"] == "system" else (
        "You are a helpful assistant designed to assist with the user query by making one or more function calls if "
        "needed.")
    if functions:
        out = "<|im_start|>system\n" + system + "\n\n" + _qwen_tools(functions)
    else:
        out = f"<|im_start|>system\n{system}<|im_end|>\n"
    stored = []
    for message in messages:
        if message["role"] == "assistant":
            calls = _arch_calls(message["content"])
            message = ({"role": "assistant", "content": None, "tool_calls": calls} if calls
                       else {"role": "assistant", "content": message["content"]})
        stored.append(message)
    for index, message in enumerate(stored):
        role, content = message["role"], message["content"]
        calls = message.get("tool_calls", [])
        if role == "user" or (role == "system" and index != 0) or (role == "assistant" and not calls):
            out += f"<|im_start|>{role}\n{content}<|im_end|>\n"
        elif role == "assistant":
            out += f"<|im_start|>{role}" + (f"\n{content}" if content else "")
            for call in calls:
                if type(call) is str:
                    raise HandlerDecodeError("ArchHandler: a <tool_call> body that is not JSON (upstream raises)")
                if "function" in call:
                    call = call["function"]
                out += (f'\n<tool_call>\n{{"name": "{call.get("name", "")}", "arguments": '
                        f'{json.dumps(call.get("arguments", {}))}}}\n</tool_call>')
            out += "<|im_end|>\n"
        elif role == "tool":
            out += _grouped_tool_response(stored, index, content, "<|im_start|>user", "<|im_end|>\n")
    return out + "<|im_start|>assistant\n"
