"""BFCL's local handlers (bfcl-eval 2026.3.23, ``bfcl_eval/model_handler/local_inference/``) as pure functions.

Every local handler derives from ``OSSHandler`` (``base_oss_handler.py``) and is queried the same way whatever its
``is_fc_model`` flag: ``_pre_query_processing_prompting`` prepares the question, the handler's ``_format_prompt``
writes the whole prompt text (one completions request), ``_parse_query_response_prompting`` records the reply,
``_add_assistant_message_prompting`` / ``_add_execution_results_prompting`` grow the history, and ``decode_ast`` /
``decode_execute`` turn the recorded reply into calls. Each :class:`HandlerSpec` below reproduces one class.

**What a renderer is given** (:func:`render`): the conversation as the generic ``OSSHandler`` would hold it after the
*default* pre-processing, the form the BFCL suite already builds:

- the question turns; for a handler that sends BFCL's prompting system prompt (``HandlerSpec.bfcl_system_prompt``)
  with that prompt merged into (or inserted as) the first system message, for the others (the FC handlers, whose
  ``_pre_query_processing_prompting`` adds nothing) without it;
- every reply as the model wrote it: ``{"role": "assistant", "content": <raw text>}``;
- every execution result as ``{"role": "tool", "name": <call>, "content": <result>}``, one per executed call.

The renderer then applies what the handler does differently (its own pre-processing of the question, what it stores
of a reply, how it stores results) and its ``_format_prompt``. ``step`` is the number of requests made before this
one for the same entry (HammerHandler's renderer mutates the function docs on every call; see DEFECTS).

**What a decoder is given**: :func:`recorded_answer` is the handler's ``model_responses`` (what the result file
holds and ``decode_execute`` reads; a list of ``{name: arguments}`` for the handlers that parse calls while
recording); :func:`decode_ast` / :func:`decode_execute` are ``decode_ast`` / ``decode_execute`` on it. Handlers that
keep ``OSSHandler``'s defaults decode with BFCL's prompting decoder, which lives in the suite's scorer: it is passed
in (``prompting_ast``: ``(text, language) -> calls``; ``prompting_execute``: ``text -> list[str]``). Every failure
is raised (the caller turns it into BFCL's decoder failure). Upstream calls ``eval`` on reply text in four places;
model output is data, so :func:`_python_value` reads such text as a Python literal instead (``ast.literal_eval``),
which agrees with ``eval`` on every literal and refuses what is not one (where ``eval`` would run it or fail).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each spec). Standard library only.

DEFECTS of the official handlers, reproduced (the board was made with them; each is visible in the oracle fixture
``tests/data/bfcl_handler_oracle.json.gz``):

- HammerHandler: ``convert_to_format_tool`` edits the function docs it is given, which are the entry's own; every
  request appends ``default is '<default>'`` to each defaulted parameter's description once more (request k of a
  multi-turn entry carries it k+1 times) and replaces a nested parameter by its sub-properties for good.
- ThinkAgentHandler: the prompt holds only the first non-system message (no reply, result or later turn ever reaches
  the model), and ``decode_execute`` raises on any reply with a call (it calls ``.items()`` on a string), so no
  multi-turn step ever executes.
- GraniteFunctionCallingHandler: a chunk of reply text that is not JSON is kept as a "call" by ``decode_execute``, so
  a plain-text answer is executed as a call (and ends up an execution error) instead of ending the turn;
  ``decode_ast`` keeps it as a string (then not in calling format).
- GLMHandler: a one-line reply decodes to ``[<text>]`` (not calling format) and ``decode_execute`` iterates its
  characters (raises unless empty); only the first call of a reply is read.
- Granite3FCHandler: the prompt ends after the last message, without an assistant turn opener.
- MistralFCHandler: string values of a tool doc are written between quotes without escaping (a quote in a
  description breaks the JSON); the system text is written only when the last message is a user turn; call ids are
  random (see :func:`mistral_call_ids`).
- QwenFCHandler, Granite4FCHandler, NanbeigeFCHandler: a later call equal in value to the first gets no newline before
  it when the reply text is empty (the first-call test compares values).
- DeepseekReasoningHandler: the results of a step are written as the Python ``str`` of a list of dicts in a user turn.
- LlamaHandler_3_1: ``decode_ast``/``decode_execute`` ``eval`` a reply without ``;`` (here: a literal only).
- Routing (``model_config.py``): the Llama 3.2, 3.3 and 4 ``-FC`` rows use the prompting ``LlamaHandler``;
  ``Ministral-8B-Instruct-2410`` (flagged prompting) uses ``MistralFCHandler``.
"""

from __future__ import annotations

import ast
import json
import random
import re
import string
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

Messages = Sequence[Mapping[str, Any]]
AstDecoder = Callable[[str, str], Any]
ExecuteDecoder = Callable[[str], list]


class HandlerDecodeError(ValueError):
    """The handler's decoder raised on this reply (upstream: an exception; BFCL scores it as a decoder failure)."""


# -- shared pieces --------------------------------------------------------------------------------------------------

def _python_value(text: str) -> Any:
    """What upstream's ``eval(text)`` gives for a literal, without running anything (see the module docstring)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
        raise HandlerDecodeError(f"not a Python literal ({type(error).__name__}); upstream evaluates it") from None


def _call_text(name: Any, arguments: Mapping[str, Any], separator: str = ",") -> str:
    """``name(k=repr(v),...)``: how the FC handlers write an executable call (no space after the comma)."""
    return f"{name}({separator.join(f'{k}={v!r}' for k, v in arguments.items())})"


def convert_to_function_call(calls: Any) -> list[str]:
    """``bfcl_eval/model_handler/utils.py::convert_to_function_call``: ``[{name: args}]`` (args a dict or a JSON
    string) to call strings."""
    if type(calls) is dict:
        calls = [calls]
    out = []
    for call in calls:
        for name, value in call.items():
            if type(value) is str:
                value = json.loads(value)
            out.append(_call_text(name, value))
    return out


def _split_think(text: str) -> tuple[str, str]:
    """QwenHandler's split of a reply: (reasoning between ``<think>`` and the first ``</think>``, the text after the
    last ``</think>`` with leading newlines dropped); a reply without ``</think>`` is all content."""
    if "</think>" not in text:
        return "", text
    parts = text.split("</think>")
    return parts[0].rstrip("\n").split("<think>")[-1].lstrip("\n"), parts[-1].lstrip("\n")


def _strip_after_think(text: str) -> str:
    return _split_think(text)[1]


def _json_calls_in_tags(text: str) -> list:
    """``_extract_tool_calls`` of QwenFCHandler, Granite4FCHandler, NanbeigeFCHandler: every
    ``<tool_call>\\n...\\n</tool_call>`` body that is JSON, the others skipped."""
    found = []
    for body in re.findall(r"<tool_call>\n(.*?)\n</tool_call>", text, re.DOTALL):
        try:
            found.append(json.loads(body))
        except ValueError:
            pass
    return found


def _decode_tagged_json(recorded: Any) -> list[dict]:
    calls = _json_calls_in_tags(recorded)
    if any(type(item) is not dict for item in calls):
        raise HandlerDecodeError("Model did not return a list of function calls")
    try:
        return [{call["name"]: {k: v for k, v in call["arguments"].items()}} for call in calls]
    except (KeyError, TypeError, AttributeError) as error:
        raise HandlerDecodeError(f"{type(error).__name__}: {error}") from None


def _execute_tagged_json(recorded: Any) -> list[str]:
    calls = _json_calls_in_tags(recorded)
    if any(type(item) is not dict for item in calls):
        raise HandlerDecodeError("Model did not return a list of function calls")
    return convert_to_function_call([{call["name"]: call["arguments"]} for call in calls])


def _require_call_list(recorded: Any, dicts: bool = True) -> list:
    """The check of PhiFCHandler, Granite3FCHandler, ArchHandler (``dicts``) and MistralFCHandler: the recorded
    answer must already be a list of call dicts (it is text when no call was parsed)."""
    if type(recorded) is not list or (dicts and any(type(item) is not dict for item in recorded)):
        raise HandlerDecodeError("Model did not return a list of function calls")
    return recorded


def _tool_calls_block(message: Mapping[str, Any], content: str) -> str:
    """QwenFCHandler / Granite4FCHandler / NanbeigeFCHandler: the stored calls of a reply, each as
    ``<tool_call>\\n{"name": "...", "arguments": ...}\\n</tool_call>``, a newline before each but the first when the
    content is empty. The first-call test compares *values* (``tool_call == tool_calls[0]``), so a later call equal
    to the first gets no newline either (reproduced)."""
    out = ""
    calls = message.get("tool_calls") or []
    for call in calls:
        if (call == calls[0] and content) or call != calls[0]:
            out += "\n"
        if "function" in call:
            call = call["function"]
        arguments = call["arguments"]
        out += ('<tool_call>\n{"name": "' + call["name"] + '", "arguments": '
                + (arguments if isinstance(arguments, str) else json.dumps(arguments)) + "}\n</tool_call>")
    return out


def _tool_result_text(content: Any) -> str:
    """xLAM, BitAgent, Llama 3.1: a result is written as JSON when it is a dict or list, else as it is."""
    return json.dumps(content) if isinstance(content, (dict, list)) else content


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
            if index == 0 or messages[index - 1]["role"] != "tool":
                out += "<|im_start|>user"
            out += f"\n<tool_response>\n{content}\n</tool_response>"
            if index == last or messages[index + 1]["role"] != "tool":
                out += "<|im_end|>\n"
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


# -- Gemma, Phi, MiniCPM, Bielik, DeepSeek, Hammer, GLM, Granite, Mistral, Arch ------------------------------------

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


# ``bfcl_eval/constants/type_mappings.py`` GORILLA_TO_OPENAPI, for ``convert_to_tool``.
_GORILLA_TO_OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
    "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
    "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}


def _cast_properties(properties: dict) -> dict:
    """``utils.py::_cast_to_openai_type``: an unknown type becomes ``string``, but an unknown item type raises (the
    mapping is indexed directly there)."""
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            declared = value["type"]
            if declared == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = _GORILLA_TO_OPENAPI.get(declared, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_properties(value["properties"])
            elif "items" in value:
                value["items"]["type"] = _GORILLA_TO_OPENAPI[value["items"]["type"]]
                if value["items"]["type"] == "array" and "items" in value["items"]:
                    value["items"]["items"]["type"] = _GORILLA_TO_OPENAPI[value["items"]["items"]["type"]]
                elif value["items"]["type"] == "object" and "properties" in value["items"]:
                    value["items"]["properties"] = _cast_properties(value["items"]["properties"])
    return properties


def _convert_to_tool(functions: Sequence[Any], wrap: bool) -> list[dict]:
    """``utils.py::convert_to_tool`` for the OSSMODEL (``wrap`` False: bare docs) and OPENAI_COMPLETIONS (``wrap``:
    ``{"type": "function", "function": doc}``) styles: dots in names become ``_``, parameters become an object."""
    tools = []
    for item in json.loads(json.dumps(list(functions))):
        item["name"] = re.sub(r"\.", "_", item["name"])
        item["parameters"]["type"] = "object"
        item["parameters"]["properties"] = _cast_properties(item["parameters"]["properties"])
        tools.append({"type": "function", "function": item} if wrap else item)
    return tools


_GLM_SYSTEM = ("[gMASK]<sop><|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，"
               "你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具")


def render_glm(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """GLMHandler (glm.py): GLM-4's Chinese system text and one ``## name`` section per tool (OpenAI-style
    ``convert_to_tool``, ``json.dumps(indent=4)``); no system text at all when there is no tool; messages as
    ``<|role|>\\ncontent`` with no separator."""
    out = ""
    tools = _convert_to_tool(functions, wrap=True)
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
    docs = "\n".join(json.dumps(tool) for tool in _convert_to_tool(functions, wrap=False))
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
            if index == 0 or stored[index - 1]["role"] != "tool":
                out += "<|start_of_role|>user<|end_of_role|>"
            out += f"\n<tool_response>\n{content}\n</tool_response>"
            if index == len(stored) - 1 or stored[index + 1]["role"] != "tool":
                out += "<|end_of_text|>\n"
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
        except ValueError:
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
            if index == 0 or stored[index - 1]["role"] != "tool":
                out += "<|im_start|>user"
            out += f"\n<tool_response>\n{content}\n</tool_response>"
            if index == len(stored) - 1 or stored[index + 1]["role"] != "tool":
                out += "<|im_end|>\n"
    return out + "<|im_start|>assistant\n"


# -- FunctionGemma ----------------------------------------------------------------------------------------------------

_FG_ESCAPE = "<escape>"
_FG_STANDARD_KEYS = frozenset({"description", "type", "properties", "required", "nullable"})


def _fg_escape(content: Any) -> str:
    return f"{_FG_ESCAPE}{content}{_FG_ESCAPE}"


def _fg_value(value: Any, escape_keys: bool = True) -> str:
    """FunctionGemmaHandler ``_format_value``: null/true/false, strings between ``<escape>`` marks, lists in
    brackets, dicts with sorted keys (escaped or not), anything else ``str``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _fg_escape(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_fg_value(item, escape_keys) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_fg_escape(k) if escape_keys else k}:{_fg_value(v, escape_keys)}"
                              for k, v in sorted(value.items())) + "}"
    return str(value)


def _fg_parameters(properties: Mapping[str, Any]) -> str:
    """``_format_parameters``: sorted properties, those named like a schema keyword left out."""
    return ",".join(_fg_property(key, value) for key, value in sorted(properties.items())
                    if key not in _FG_STANDARD_KEYS) if properties else ""


def _fg_property(key: str, value: Mapping[str, Any]) -> str:
    kind = value.get("type", "").upper()
    out = f"{key}:{{description:{_fg_escape(value.get('description', ''))}"
    if kind == "STRING":
        if "enum" in value:
            out += f",enum:{_fg_value(value['enum'])}"
    elif kind == "OBJECT":
        out += ",properties:{" + (_fg_parameters(value.get("properties", {})) if value.get("properties") else "") + "}"
        if value.get("required", []):
            out += ",required:[" + ",".join(_fg_escape(item) for item in value["required"]) + "]"
    elif kind == "ARRAY":
        items = value.get("items", {})
        if items:
            parts = []
            for item_key, item_value in sorted(items.items()):
                if item_value is None:
                    continue
                if item_key == "properties" and isinstance(item_value, dict):
                    parts.append(f"properties:{{{_fg_parameters(item_value)}}}")
                elif item_key == "required":
                    parts.append("required:[" + ",".join(_fg_escape(r) for r in item_value) + "]")
                elif item_key == "type":
                    upper = item_value.upper() if isinstance(item_value, str) else [t.upper() for t in item_value]
                    parts.append(f"type:{_fg_value(upper)}")
                else:
                    parts.append(f"{item_key}:{_fg_value(item_value)}")
            out += ",items:{" + ",".join(parts) + "}"
    return out + f",type:{_fg_escape(kind)}}}"


def _fg_declaration(tool: Mapping[str, Any]) -> str:
    function = tool.get("function", tool) if isinstance(tool.get("function"), dict) else tool
    out = f"declaration:{function.get('name', '')}{{description:{_fg_escape(function.get('description', ''))}"
    params = function.get("parameters", {})
    if params:
        if params.get("properties", {}):
            out += f",properties:{{{_fg_parameters(params['properties'])}}}"
        if params.get("required", []):
            out += ",required:[" + ",".join(_fg_escape(item) for item in params["required"]) + "]"
        if "type" in params:
            out += f",type:{_fg_escape(params['type'].upper())}"
    return out + "}"


def render_function_gemma(messages: Messages, functions: Sequence[Any], model_name: str, step: int) -> str:
    """FunctionGemmaHandler (functiongemma.py): a ``developer`` turn (the question's system text ``strip()``-ed or
    "You are a model that can do function calling with the following functions") with one
    ``<start_function_declaration>`` per raw BFCL doc (types upper-cased as written: ``DICT``, ``FLOAT``), user turns
    ``strip()``-ed, replies as ``model`` turns of their ``strip()``-ed text, each result as a
    ``<start_function_response>response:<the call string>`` block (a JSON object result written in FunctionGemma's
    syntax, anything else as ``{value:<escape>...<escape>}``), then ``<start_of_turn>model``."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else (
        "You are a model that can do function calling with the following functions")
    out = ""
    if functions or system:
        out = "<start_of_turn>developer\n" + (f"{system.strip()}\n" if system else "")
        out += "".join(f"<start_function_declaration>{_fg_declaration(tool)}<end_function_declaration>"
                       for tool in functions or [])
        out += "<end_of_turn>\n"
    rest = messages[1:] if messages and messages[0]["role"] == "system" else messages
    for message in rest:
        role = message["role"]
        if role == "user":
            out += f"<start_of_turn>user\n{message.get('content', '').strip()}<end_of_turn>\n"
        elif role == "assistant":
            content = message.get("content", "")
            out += "<start_of_turn>model\n" + (f"{content.strip()}" if content else "") + "<end_of_turn>\n"
        elif role == "tool":
            content = message.get("content", "")
            try:
                data = json.loads(content) if isinstance(content, str) else content
            except ValueError:
                data = content
            out += f"<start_function_response>response:{message.get('name', 'unknown_tool')}"
            out += _fg_value(data, escape_keys=False) if isinstance(data, dict) else f"{{value:{_fg_escape(str(content))}}}"
            out += "<end_function_response>"
    return out + "<start_of_turn>model\n"


class _FunctionGemmaArguments:
    """FunctionGemma's argument syntax read the way ``_FunctionGemmaResponseParser`` reads it: ``<escape>`` blocks
    are strings, ``{}``/``[]`` nest, ``key:value`` pairs fill dicts, bare words become null/true/false/int/float or
    stay strings; whatever does not fit is dropped without an error."""

    def __init__(self) -> None:
        self.root: list[Any] = []
        self.stack: list[Any] = [self.root]
        self.keys: list[str | None] = []
        self.buffer: list[str] = []
        self.pending: Any = None

    def parse(self, text: str) -> dict:
        cursor = 0
        while cursor < len(text):
            if text.startswith(_FG_ESCAPE, cursor):
                start = cursor + len(_FG_ESCAPE)
                end = text.find(_FG_ESCAPE, start)
                value, cursor = (text[cursor:], len(text)) if end == -1 else (text[start:end], end + len(_FG_ESCAPE))
                if self.buffer:
                    self._commit()
                self._add(value)
                continue
            char = text[cursor]
            if char in "{[:]},":
                self._commit()
                self._structure(char)
            else:
                self.buffer.append(char)
            cursor += 1
        self._commit()
        return self.root[0] if self.root and isinstance(self.root[0], dict) else {}

    def _structure(self, char: str) -> None:
        if char == "{":
            new: dict = {}
            self._add(new)
            self.stack.append(new)
            self.keys.append(None)
        elif char == "}":
            if len(self.stack) > 1:
                self.stack.pop()
                if self.keys:
                    self.keys.pop()
        elif char == "[":
            items: list = []
            self._add(items)
            self.stack.append(items)
        elif char == "]":
            if len(self.stack) > 1:
                self.stack.pop()
        elif char == ":":
            key = None
            if self.buffer:
                key = "".join(self.buffer).strip()
                self.buffer.clear()
            elif self.pending is not None:
                key = str(self.pending)
            if key is not None and isinstance(self.stack[-1], dict) and self.keys:
                self.keys[-1] = key
        self.pending = None

    def _commit(self) -> None:
        if not self.buffer:
            return
        raw = "".join(self.buffer).strip()
        self.buffer.clear()
        if raw:
            self._add(self._primitive(raw))

    def _add(self, value: Any) -> None:
        container = self.stack[-1]
        if isinstance(container, list):
            container.append(value)
        elif isinstance(container, dict):
            key = self.keys[-1] if self.keys else None
            if key is not None:
                container[key] = value
                self.keys[-1] = None
            else:
                self.pending = value

    @staticmethod
    def _primitive(text: str) -> Any:
        if text == "null":
            return None
        if text in ("true", "false"):
            return text == "true"
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text


def _function_gemma_calls(text: str) -> list[tuple[str, dict]]:
    """``_parse_functiongemma_response``: every ``<start_function_call>call:name{...}<end_function_call>``."""
    calls = []
    for body in re.findall("<start_function_call>(.*?)<end_function_call>", text, re.DOTALL):
        body = body.strip()
        if not body.startswith("call:"):
            continue
        brace = body.find("{")
        if brace == -1:
            calls.append((body[len("call:"):].strip(), {}))
            continue
        calls.append((body[len("call:"):brace].strip(), _FunctionGemmaArguments().parse(body[brace:])))
    return calls


# -- MiniCPM FC -------------------------------------------------------------------------------------------------------

_MINICPM_TOOLS = (
    "# Functions\nHere is a list of functions that you can invoke:\n```python\n{tools}\n```\n\n# Function Call Rule "
    "and Output Format\n- If the user's question can be answered without calling any function, please answer the "
    "user's question directly. In this situation, you should return your thought and answer the user's question "
    "directly.\n- If the user cannot be answered without calling any function, and the user does not provide enough "
    "information to call functions, please ask the user for more information. In this situation, you should return "
    "your thought and ask the user for more information.\n- If the user's question cannot be answered without calling "
    "any function, and the user has provided enough information to call functions to solve it, you should call the "
    "functions. In this situation, the assistant should return your thought and call the functions.\n- Use default "
    "parameters unless the user has specified otherwise.\n- You should answer in the following format:\n\n"
    "<|thought_start|>\n{{explain why the user's question can be answered without calling a function or why you "
    "should ask the user for more information or why you should call one or more functions and your plan to solve the "
    "user's question.}}\n<|thought_end|>\n<|tool_call_start|>\n```python\nfunc1(params_name=params_value, "
    "params_name2=params_value2...)\nfunc2(params)\n```\n<|tool_call_end|>\n{{answer the user's question directly "
    "or ask the user for more information}}\n")
_MINICPM_HEADER = ("from enum import Enum\nfrom typing import List, Dict, Optional\nfrom pydantic import BaseModel, "
                   "Field\n\n")


def minicpm_tool_code(tool: Mapping[str, Any]) -> str:
    """minicpm_fc.py ``transform_function``: a ``def`` line and a docstring whose ``Args`` are the pydantic model
    that ``datamodel-code-generator`` (bfcl-eval pins 0.25.7) writes for the parameters, preceded by any nested
    classes. That generator is not a dependency of this package: it is imported here only when installed, and its
    output is only as faithful as its version."""
    try:
        import datamodel_code_generator as generator
        from datamodel_code_generator import DataModelType
        from datamodel_code_generator.format import PythonVersion
        from datamodel_code_generator.model import get_data_model_types
        from datamodel_code_generator.parser.jsonschema import JsonSchemaParser
    except ImportError:
        raise UnknownHandler("MiniCPMFCHandler writes its tool docs with datamodel-code-generator (==0.25.7 in "
                             "bfcl-eval 2026.3.23), which is not installed") from None
    params, defaults = [], []
    for name, prop in tool["parameters"]["properties"].items():
        if "default" in prop:
            defaults.append(f"{name}={prop['default']!r}")
        elif name not in tool["parameters"].get("required", []):
            defaults.append(f"{name}={None!r}")
        else:
            params.append(name)
    out = f"def {tool['name']}({', '.join(params + defaults)}):\n"
    if generator.get_version() < "0.26.2":
        types = get_data_model_types(DataModelType.PydanticBaseModel, target_python_version=PythonVersion.PY_310)
    else:
        from datamodel_code_generator.format import DatetimeClassType
        types = get_data_model_types(DataModelType.PydanticBaseModel, target_python_version=PythonVersion.PY_310,
                                     target_datetime_class=DatetimeClassType.Datetime)
    content = JsonSchemaParser(
        source=json.dumps(tool["parameters"]), data_model_type=types.data_model, data_model_root_type=types.root_model,
        data_model_field_type=types.field_model, data_type_manager_type=types.data_type_manager,
        target_python_version=PythonVersion.PY_311, dump_resolve_reference_action=types.dump_resolve_reference_action,
        field_constraints=True).parse()
    if "class" in content:
        content = content[content.index("class"):]
    classes, args = content.split("class Model(BaseModel):", 1)
    out += f'    """\n    {tool.get("description", "")}\n    Args:\n{args}\n    """\n'
    return classes + out if classes else out


def _minicpm_message(message: dict, system_suffix: str) -> dict:
    """minicpm_fc.py ``message_format`` on a stored message (which it edits in place: see the renderer)."""
    thought = message.get("thought")
    prefix = f"<|thought_start|>\n{thought}\n<|thought_end|>\n" if thought else ""
    if message["role"] == "assistant":
        message["content"] = prefix + (message.get("content") or "")
    elif message["role"] == "user":
        message["content"] = "\n" + message["content"]
    elif message["role"] == "system":
        message["content"] = message["content"] + "\n" + system_suffix
    message["content"] = message["content"].strip()
    return message


def render_minicpm_fc(messages: Messages, functions: Sequence[Any], model_name: str, step: int,
                      tool_code: Callable[[Mapping[str, Any]], str] = minicpm_tool_code) -> str:
    """MiniCPMFCHandler (minicpm_fc.py): ChatML whose system turn ends with a ``# Functions`` block of Python stubs
    (one per OSSMODEL-style doc, :func:`minicpm_tool_code`; a doc the generator fails on is left out). Its
    ``message_format`` edits the stored messages in place: an empty system message is inserted for good, and the
    functions block is appended to the system text on every request, so request ``step`` carries it ``step + 1``
    times (DEFECTS); every stored text is ``strip()``-ed."""
    tools = _convert_to_tool(functions, wrap=False)
    block = ""
    if tools:
        code = _MINICPM_HEADER
        for tool in tools:
            try:
                code += "\n\n" + tool_code(tool)
            except UnknownHandler:
                raise
            except Exception:  # noqa: BLE001 - upstream skips a doc its generator fails on
                pass
        block = _MINICPM_TOOLS.format(tools=code).strip()
    stored = [dict(m) for m in messages]
    for request in range(step + 1):
        if stored and stored[0]["role"] != "system":
            stored.insert(0, {"role": "system", "content": ""})
        stored = [_minicpm_message(m, block) for m in stored]
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in stored) + "<|im_start|>assistant\n"


def _minicpm_fc2dict(text: str, prompting_ast: AstDecoder) -> dict:
    """minicpm_fc.py ``fc2dict``: the thought between ``<|thought_start|>``/``<|thought_end|>``, the calls between
    ``<|tool_call_start|>``/``<|tool_call_end|>`` (a fenced block of Python call statements, read like BFCL's
    prompting decoder reads calls) and the content after them; any failure leaves no calls."""
    thought = ""
    if "<|thought_end|>" in text and "<|thought_start|>" in text:
        thought, text = text.rsplit("<|thought_end|>", 1)
        thought = thought.split("<|thought_start|>", 1)[1]
    if "<|tool_call_start|>" in text and "<|tool_call_end|>" in text:
        block, content = text.rsplit("<|tool_call_end|>", 1)
        block = block.split("<|tool_call_start|>", 1)[1]
        try:
            block = block.strip()
            if block.startswith("```"):
                block = block.lstrip("```").strip()
                if block.startswith("python"):
                    block = block.lstrip("python").strip()
            if block.endswith("```"):
                block = block.rstrip("```").strip()
            statements = ast.parse(block).body
            if any(not isinstance(getattr(statement, "value", None), ast.Call) for statement in statements):
                raise HandlerDecodeError("a statement that is not a call")
            calls = []
            for statement in statements:
                for decoded in prompting_ast("[" + ast.unparse(statement.value) + "]", "python"):
                    calls.extend({"name": name, "arguments": arguments} for name, arguments in decoded.items())
            return {"content": content.strip(), "tool_calls": calls, "role": "assistant"}
        except Exception:  # noqa: BLE001 - upstream: a bare except, no calls
            return {"content": content.strip(), "role": "assistant", "thought": thought}
    return {"content": text.strip(), "role": "assistant", "thought": thought}


def _minicpm_ast(recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    message = _minicpm_fc2dict(recorded, prompting_ast)
    if message.get("tool_calls"):
        return [{call["name"]: call["arguments"]} for call in message["tool_calls"]]
    return message["content"]


def _minicpm_execute(recorded: Any, prompting_ast: AstDecoder) -> list:
    message = _minicpm_fc2dict(recorded, prompting_ast)
    return [_call_text(call["name"], call["arguments"], ", ") for call in message.get("tool_calls") or []]


# -- recorded answers and decoders ------------------------------------------------------------------------------------

def _record_raw(text: str) -> Any:
    return text


def _record_deepseek(text: str) -> Any:
    """DeepseekReasoningHandler: the text after the last ``</think>`` (no newline stripped)."""
    return text.split("</think>")[-1] if "</think>" in text else text


def _record_phi_fc(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=True)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _record_granite_3(text: str) -> Any:
    calls = _phi_fc_like_tools(text, fallback_to_end=False)
    return [{c["name"]: c["arguments"]} for c in calls] if _is_call_list(calls) and calls else text


def _record_arch(text: str) -> Any:
    calls = _arch_calls(text)
    if not calls:
        return text
    out = []
    for call in calls:
        if type(call) is str:
            call = _python_value(call)
        out.append({call["name"]: call["arguments"]})
    return out


def _record_mistral(text: str) -> Any:
    try:
        calls = json.loads(text)
    except ValueError:
        return text
    for call in calls:
        call["id"] = "x"  # the handler adds an id to each call (a reply that is not a list of dicts raises here)
    return [{call["name"]: call["arguments"]} for call in calls]


def _strip_fence_prefix(text: str) -> str:
    if text.startswith("```json"):
        text = text[len("```json"):]
    if text.startswith("```python"):
        text = text[len("```python"):]
    return text


def _default_ast(recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    return prompting_ast(recorded, language)


def _default_execute(recorded: Any, prompting_execute: ExecuteDecoder, prompting_ast: AstDecoder | None) -> list:
    return prompting_execute(recorded)


def _llama31_calls(text: str) -> list:
    text = text.replace("<|python_tag|>", "")
    if ";" in text:
        return [json.loads(part) for part in text.split(";")]
    calls = _python_value(text)
    return [calls] if type(calls) is dict else calls


def _json_list_or_split(text: str) -> list:
    """xLAM: the reply as JSON (one call or a list), else its ``;``-separated parts each as JSON."""
    try:
        calls = json.loads(text)
        return calls if isinstance(calls, list) else [calls]
    except ValueError:
        return [json.loads(part.strip()) for part in text.split(";")]


def _bitagent_calls(text: str) -> list:
    calls = json.loads(text)
    return calls if isinstance(calls, list) else [calls]


def _hammer_calls(text: str, execute: bool) -> Any:
    """HammerHandler: the reply without backticks as JSON, ``[]`` when it is not JSON; ``decode_execute`` also takes
    a ``{"tool_calls": ...}`` object and wraps a single call in a list."""
    text = text.replace("```", "")
    try:
        calls = json.loads(text)
    except ValueError:
        calls = []
    if not execute:
        return calls
    calls = calls if isinstance(calls, list) else calls.get("tool_calls", []) if isinstance(calls, dict) else []
    return calls if isinstance(calls, list) else [calls]


def _think_agent_json(text: str) -> Any:
    text = text.strip().replace("'", '"')
    parts = text.split("</think>", 1)
    return json.loads(parts[1].strip() if len(parts) > 1 else "[]")


def _glm_ast(text: str) -> list:
    lines = text.split("\n")
    return [lines[0]] if len(lines) == 1 else [{lines[0]: json.loads(lines[1])}]


def _glm_execute(text: str) -> list:
    lines = text.split("\n")
    return convert_to_function_call(lines[0] if len(lines) == 1 else [{lines[0]: lines[1]}])


def _granite_fc_decode(text: str, execute: bool) -> list:
    out: list = []
    for chunk in [c.strip() for c in text.split("<function_call>") if len(c.strip()) > 0]:
        try:
            call = json.loads(chunk.strip())
        except ValueError:
            out.append(chunk)
            continue
        name = call.get("name", "").strip()
        arguments = call.get("arguments", {})
        if name == "no_function":
            out.append("No function is called")
        elif execute:
            out.append(_call_text(name, arguments))
        else:
            out.append({name: arguments})
    return out


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


def _named(calls: list, key: str) -> list[dict]:
    return [{call["name"]: call[key]} for call in calls]


def _executed(calls: list, key: str) -> list[str]:
    return [_call_text(call["name"], call[key]) for call in calls]


def _think_agent_execute(text: str) -> list:
    """ThinkAgentHandler ``decode_execute``: it builds ``f"{name}({arguments})"`` strings, then calls ``.items()`` on
    each: any reply with at least one call raises (DEFECTS); an empty list decodes to ``[]``."""
    calls = _think_agent_json(text)
    texts = [f"{item['name']}({item['arguments']})" for item in calls]
    for _ in texts:
        raise HandlerDecodeError("AttributeError: 'str' object has no attribute 'items' (upstream defect)")
    return []


# -- the table ------------------------------------------------------------------------------------------------------

Renderer = Callable[[Messages, Sequence[Any], str, int], str]


@dataclass(frozen=True)
class HandlerSpec:
    """One upstream handler class: its renderer, what it records of a reply and its two decoders."""

    name: str  #: the upstream class
    upstream_file: str  #: relative to ``bfcl_eval/model_handler/local_inference/``
    render: Renderer | None  #: None: the handler renders with the checkpoint's chat template (``tokenizer``)
    #: whether the handler sends BFCL's prompting system prompt (``OSSHandler._pre_query_processing_prompting``)
    bfcl_system_prompt: bool
    record: Callable[[str], Any] = _record_raw
    #: ``(recorded, language, prompting_ast) -> calls``
    decode_ast: Callable[[Any, str, AstDecoder], Any] = _default_ast
    #: ``(recorded, prompting_execute, prompting_ast) -> list of call strings``
    decode_execute: Callable[[Any, ExecuteDecoder, AstDecoder | None], list] = _default_execute
    #: the handler's ``stop_token_ids`` sent with each request (GLM, MiniCPM FC), else None
    stop_token_ids: tuple[int, ...] | None = None
    #: the handler's ``skip_special_tokens`` sent with each request (MiniCPM FC: False), else None (the server's
    #: default, True on vLLM's completions endpoint)
    skip_special_tokens: bool | None = None

    @property
    def records_reply_as_written(self) -> bool:
        """Whether the recorded answer is the reply itself (``OSSHandler._parse_query_response_prompting``)."""
        return self.record is _record_raw


def _ast(function: Callable[[Any], Any]) -> Callable[[Any, str, AstDecoder], Any]:
    return lambda recorded, language, prompting_ast: function(recorded)


def _exe(function: Callable[[Any], list]) -> Callable[[Any, ExecuteDecoder, AstDecoder | None], list]:
    return lambda recorded, prompting_execute, prompting_ast: function(recorded)


HANDLERS: dict[str, HandlerSpec] = {spec.name: spec for spec in (
    HandlerSpec("QwenHandler", "qwen.py", render_qwen, True, record=_strip_after_think),
    HandlerSpec("QwenFCHandler", "qwen_fc.py", render_qwen_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("NanbeigeFCHandler", "nanbeige_fc.py", render_nanbeige_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("PelicanVLFCHandler", "pelican_vl_fc.py", render_pelican_vl_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("LlamaHandler", "llama.py", render_llama, True),
    HandlerSpec("LlamaHandler_3_1", "llama_3_1.py", render_llama_3_1, False,
                decode_ast=_ast(lambda r: _named(_llama31_calls(r), "parameters")),
                decode_execute=_exe(lambda r: _executed(_llama31_calls(r), "parameters"))),
    HandlerSpec("SalesforceLlamaHandler", "salesforce_llama.py", render_salesforce_llama, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("SalesforceQwenHandler", "salesforce_qwen.py", render_salesforce_qwen, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("BitAgentHandler", "bitagent.py", render_bitagent, False,
                decode_ast=_ast(lambda r: _named(_bitagent_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_bitagent_calls(r), "arguments"))),
    HandlerSpec("ThinkAgentHandler", "think_agent.py", render_think_agent, False,
                decode_ast=_ast(lambda r: _named(_think_agent_json(r), "arguments")),
                decode_execute=_exe(_think_agent_execute)),
    HandlerSpec("GemmaHandler", "gemma.py", render_gemma, True),
    HandlerSpec("PhiHandler", "phi.py", render_phi, True,
                decode_ast=lambda r, language, d: d(_strip_fence_prefix(r.strip()), language),
                decode_execute=lambda r, d, _: d(_strip_fence_prefix(r))),
    HandlerSpec("PhiFCHandler", "phi_fc.py", render_phi_fc, False, record=_record_phi_fc,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("MiniCPMHandler", "minicpm.py", render_minicpm, True),
    HandlerSpec("BielikHandler", "bielik.py", render_bielik, True),
    HandlerSpec("DeepseekReasoningHandler", "deepseek_reasoning.py", render_deepseek_reasoning, True,
                record=_record_deepseek),
    HandlerSpec("HammerHandler", "hammer.py", render_hammer, False,
                decode_ast=_ast(lambda r: _named(_hammer_calls(r, False), "arguments")),
                decode_execute=_exe(lambda r: [_call_text(c.get("name", ""), c.get("arguments", {}), ", ")
                                               for c in _hammer_calls(r, True) if isinstance(c, dict)])),
    HandlerSpec("GLMHandler", "glm.py", render_glm, False, decode_ast=_ast(_glm_ast),
                decode_execute=_exe(_glm_execute), stop_token_ids=(151329, 151336, 151338)),
    HandlerSpec("GraniteFunctionCallingHandler", "granite.py", render_granite_function_calling, False,
                decode_ast=_ast(lambda r: _granite_fc_decode(r, False)),
                decode_execute=_exe(lambda r: _granite_fc_decode(r, True))),
    HandlerSpec("Granite3FCHandler", "granite_3.py", render_granite_3, False, record=_record_granite_3,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("Granite4FCHandler", "granite_4.py", render_granite_4, False,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("MistralFCHandler", "mistral_fc.py", render_mistral_fc, False, record=_record_mistral,
                decode_ast=_ast(lambda r: _require_call_list(r, dicts=False)),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r, dicts=False)))),
    HandlerSpec("ArchHandler", "arch.py", render_arch, False, record=_record_arch,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("MiniCPMFCHandler", "minicpm_fc.py", render_minicpm_fc, False, decode_ast=_minicpm_ast,
                decode_execute=lambda recorded, prompting_execute, prompting_ast: _minicpm_execute(recorded,
                                                                                                   prompting_ast),
                stop_token_ids=(2, 73440), skip_special_tokens=False),
    HandlerSpec("FunctionGemmaHandler", "functiongemma.py", render_function_gemma, False,
                decode_ast=_ast(lambda r: [{name: args} for name, args in _function_gemma_calls(r)]),
                decode_execute=_exe(lambda r: [_call_text(name, args, ", ") for name, args in _function_gemma_calls(r)])),
    HandlerSpec("Falcon3FCHandler", "falcon_fc.py", None, False,
                decode_ast=_ast(lambda r: _named(_falcon_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_falcon_calls(r), "arguments"))),
    HandlerSpec("QuickTestingOSSHandler", "quick_testing_oss.py", None, True),
)}

#: Handlers of ``local_inference/`` not reproduced (yet): their rows fall back to the chat template, reported so.
NOT_REPRODUCED: dict[str, str] = {}


class UnknownHandler(KeyError, ValueError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def handler_spec(name: str) -> HandlerSpec:
    """The spec of an upstream handler class (e.g. ``BfclRow.handler``)."""
    try:
        return HANDLERS[name]
    except KeyError:
        why = NOT_REPRODUCED.get(name, "not a local handler of bfcl-eval 2026.3.23")
        raise UnknownHandler(f"BFCL handler {name!r}: {why}") from None


def render(handler: str, messages: Messages, functions: Sequence[Any], *, model_name: str, step: int = 0,
           tool_code: Callable[[Mapping[str, Any]], str] | None = None) -> str:
    """The handler's prompt text for one request (see the module docstring for what ``messages`` holds).
    ``tool_code`` replaces :func:`minicpm_tool_code` for MiniCPMFCHandler (the generator it needs)."""
    spec = handler_spec(handler)
    if spec.render is None:
        raise UnknownHandler(f"BFCL handler {handler!r} renders with the checkpoint's chat template (tokenizer)")
    if tool_code is not None and spec.render is render_minicpm_fc:
        return render_minicpm_fc([dict(m) for m in messages], functions, model_name, step, tool_code)
    return spec.render([dict(m) for m in messages], functions, model_name, step)


def recorded_answer(handler: str, text: str) -> Any:
    """What the handler records of a reply (``model_responses``): text, or a list of ``{name: arguments}``. Where
    upstream's ``_parse_query_response_prompting`` itself raises (MistralFCHandler on a JSON reply that is not a list
    of calls, ArchHandler on a ``<tool_call>`` body that is neither JSON nor a literal), the entry fails upstream:
    :class:`HandlerDecodeError` here."""
    spec = handler_spec(handler)
    try:
        return spec.record(text)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001 - the handler's own failure while recording
        raise HandlerDecodeError(f"{handler} cannot record this reply ({type(error).__name__}: {error})") from None


def decode_ast(handler: str, recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    """The handler's ``decode_ast`` on a recorded answer; raises on what upstream raises on."""
    try:
        return handler_spec(handler).decode_ast(recorded, language, prompting_ast)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001 - the handler's own failure modes, each one a decoder failure
        raise HandlerDecodeError(f"{type(error).__name__}: {error}") from None


def decode_execute(handler: str, recorded: Any, prompting_execute: ExecuteDecoder,
                   prompting_ast: AstDecoder | None = None) -> list:
    """The handler's ``decode_execute`` on a recorded answer (multi-turn); raises on what upstream raises on.
    ``prompting_ast`` is needed by MiniCPMFCHandler only (its call block is Python call syntax)."""
    try:
        return handler_spec(handler).decode_execute(recorded, prompting_execute, prompting_ast)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001
        raise HandlerDecodeError(f"{type(error).__name__}: {error}") from None
