"""What BFCL's local handlers (bfcl-eval 2026.3.23) share, for the modules of :mod:`.handlers`: the types a
renderer and a decoder are given, the errors, and the pieces several handlers use (call text, ``<tool_call>`` JSON,
the reasoning split, the stored calls of a reply).

Upstream calls ``eval`` on reply text in four places; model output is data, so :func:`_python_value` reads such text
as a Python literal instead (``ast.literal_eval``), which agrees with ``eval`` on every literal and refuses what is not
one (where ``eval`` would run it or fail).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each renderer's docstring). Standard library only.

DEFECTS of the official handlers reproduced here (see :mod:`.handlers` for the whole list):

- QwenFCHandler, Granite4FCHandler, NanbeigeFCHandler: a later call equal in value to the first gets no newline before
  it when the reply text is empty (the first-call test compares values; :func:`_tool_calls_block`).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Callable, Mapping, Sequence


Messages = Sequence[Mapping[str, Any]]
AstDecoder = Callable[[str, str], Any]
ExecuteDecoder = Callable[[str], list]


class HandlerDecodeError(ValueError):
    """The handler's decoder raised on this reply (upstream: an exception; BFCL scores it as a decoder failure)."""


class UnknownHandler(KeyError, ValueError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


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
        except (ValueError, RecursionError):  # upstream skips whatever json.loads raises on (``except Exception``)
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


def _grouped_tool_response(messages: Messages, index: int, content: Any, open_turn: str, close_turn: str) -> str:
    """The Qwen-style templates (Qwen's turns, Granite 4, Arch): a run of consecutive tool results is one user
    turn, ``open_turn`` before the first, each result in ``<tool_response>`` tags, ``close_turn`` after the last."""
    text = open_turn if index == 0 or messages[index - 1]["role"] != "tool" else ""
    text += f"\n<tool_response>\n{content}\n</tool_response>"
    if index == len(messages) - 1 or messages[index + 1]["role"] != "tool":
        text += close_turn
    return text


def _tool_result_text(content: Any) -> str:
    """xLAM, BitAgent, Llama 3.1: a result is written as JSON when it is a dict or list, else as it is."""
    return json.dumps(content) if isinstance(content, (dict, list)) else content


# -- shared by several handlers' modules ------------------------------------------------------------------------

def _named(calls: list, key: str) -> list[dict]:
    return [{call["name"]: call[key]} for call in calls]


def _executed(calls: list, key: str) -> list[str]:
    return [_call_text(call["name"], call[key]) for call in calls]


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


def _combine_users(messages: Messages) -> list[dict]:
    out: list[dict] = []
    for message in messages:
        message = dict(message)
        if message["role"] == "user" and out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], str):
            out[-1]["content"] = out[-1]["content"] + "\n\n" + message["content"]
            continue
        out.append(message)
    return out


_QWEN_TOOLS_HEAD = ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided "
                    "with function signatures within <tools></tools> XML tags:\n<tools>")


_QWEN_TOOLS_TAIL = ('\n</tools>\n\nFor each function call, return a json object with function name and arguments within '
                    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
                    '<args-json-object>}\n</tool_call><|im_end|>\n')


def _qwen_tools(functions: Sequence[Any]) -> str:
    return _QWEN_TOOLS_HEAD + "".join(f"\n{json.dumps(tool)}" for tool in functions) + _QWEN_TOOLS_TAIL
