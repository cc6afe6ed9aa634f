"""BFCL's FunctionGemmaHandler (``functiongemma.py``), bfcl-eval 2026.3.23 ``bfcl_eval/model_handler/local_inference/``:
the whole handler in one module, as upstream keeps it in one class: its renderer (``_format_prompt``, on what a
renderer is given: :mod:`.handlers`), what it records of a reply and its ``decode_ast`` / ``decode_execute``
(:data:`SPECS`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from .common import Messages, _call_text
from .spec import HandlerSpec, _ast, _exe


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


#: the handlers this module reproduces, as the table of :mod:`.handlers` lists them
SPECS: tuple[HandlerSpec, ...] = (
    HandlerSpec("FunctionGemmaHandler", "functiongemma.py", render_function_gemma, False,
                decode_ast=_ast(lambda r: [{name: args} for name, args in _function_gemma_calls(r)]),
                decode_execute=_exe(lambda r: [_call_text(name, args, ", ") for name, args in _function_gemma_calls(r)])),
)
