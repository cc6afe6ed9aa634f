"""Native tool-call parsers, one per model family, applied client-side to the raw generated text.

The engine renders tools with the tokenizer's own chat template (``tools=``) and keeps the raw text, special tokens
included; these functions turn that text into ``[{"name": str, "arguments": dict}, ...]``. Parsing here, not in a
server, keeps the project independent of server parser flags and their drift (design notes R4).

Conventions shared by every parser:

* text without the family's tool-call marker is a plain answer: the parser returns ``[]``;
* text with the marker that cannot be decoded raises :class:`ParseError`; callers turn it into a scored
  ``format_error`` (``pytest_toolbench.contract.suite.FORMAT_ERROR``), never into a crash;
* no parser raises anything but :class:`ParseError`, whatever the text (model output is data);
* arguments given as a JSON-encoded string (some fine-tunes do this) are decoded; anything but an object is an error.

Model output is never evaluated: the pythonic parser walks the ``ast`` tree and accepts literals only.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Callable

ToolCall = dict[str, Any]


class ParseError(ValueError):
    """The text announces tool calls but they cannot be decoded (scored as ``format_error``)."""


class UnknownToolFormat(ValueError):
    """No known tool-call family could be recognised in a chat template."""


# End-of-turn and padding tokens that models leave at the end of the raw text (decoded with special tokens kept).
_TRAILING_SPECIAL = re.compile(r"(?:\s*(?:<\|[A-Za-z0-9_]+\|>|</s>|<eos>|<end_of_turn>))+\s*$")


def _strip_trailing_special(text: str) -> str:
    return _TRAILING_SPECIAL.sub("", text).strip()


def _decode_json(fragment: str, what: str) -> Any:
    try:
        return json.loads(fragment)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"{what}: invalid JSON ({exc}): {fragment[:200]!r}") from None


def _as_call(obj: Any, what: str, argument_keys: tuple[str, ...] = ("arguments", "parameters")) -> ToolCall:
    if not isinstance(obj, dict):
        raise ParseError(f"{what}: expected a JSON object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ParseError(f"{what}: missing or non-string 'name'")
    arguments: Any = {}
    for key in argument_keys:
        if key in obj:
            arguments = obj[key]
            break
    if isinstance(arguments, str):
        # Some fine-tunes emit OpenAI-style string-encoded arguments.
        arguments = _decode_json(arguments, f"{what}: arguments of {name!r}") if arguments.strip() else {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ParseError(f"{what}: arguments of {name!r} must be an object, got {type(arguments).__name__}")
    return {"name": name, "arguments": arguments}


# --- hermes / qwen -------------------------------------------------------------------------------------------------

_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def parse_hermes(text: str) -> list[ToolCall]:
    """Hermes/Qwen: one ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block per call.

    A final block without its closing tag is accepted when its JSON is complete (models often emit the end-of-turn
    token instead of ``</tool_call>``); every block must hold exactly one JSON object.
    """
    if "<tool_call>" not in text:
        return []
    calls = []
    for index, match in enumerate(_HERMES_BLOCK.finditer(text)):
        body = _strip_trailing_special(match.group(1))
        calls.append(_as_call(_decode_json(body, f"tool_call #{index}"), f"tool_call #{index}"))
    return calls


# --- llama 3.x JSON ------------------------------------------------------------------------------------------------

_PYTHON_TAG = "<|python_tag|>"


def _json_objects_separated(text: str, separator: str, what: str) -> list[Any]:
    """Decode ``obj sep obj sep obj`` (whitespace allowed around separators)."""
    decoder = json.JSONDecoder()
    objects, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        try:
            obj, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"{what}: invalid JSON ({exc}): {text[position:position + 200]!r}") from None
        objects.append(obj)
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return objects
        if not text.startswith(separator, position):
            raise ParseError(f"{what}: unexpected text after call #{len(objects) - 1}: {text[position:][:200]!r}")
        position += len(separator)


def parse_llama3_json(text: str) -> list[ToolCall]:
    """Llama 3.1/3.2/3.3 JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": {...}}`` or the bare object.

    Several calls are separated by ``;``. Text that neither starts with ``{`` nor contains ``<|python_tag|>`` is a
    plain answer.
    """
    if _PYTHON_TAG in text:
        body = text.split(_PYTHON_TAG, 1)[1]
    elif text.lstrip().startswith("{"):
        body = text
    else:
        return []
    body = _strip_trailing_special(body.replace(_PYTHON_TAG, ""))
    if not body:
        raise ParseError("llama3_json: empty tool call after <|python_tag|>")
    objects = _json_objects_separated(body, ";", "llama3_json")
    return [_as_call(obj, f"llama3_json call #{i}") for i, obj in enumerate(objects)]


# --- mistral -------------------------------------------------------------------------------------------------------

_MISTRAL_TAG = "[TOOL_CALLS]"
_MISTRAL_ARGS = "[ARGS]"
_MISTRAL_CALL_ID = "[CALL_ID]"


def parse_mistral(text: str) -> list[ToolCall]:
    """Mistral: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`` (tokenizer v3/v7), or the v11 form
    ``[TOOL_CALLS]name[ARGS]{...}`` repeated once per call (optionally with ``[CALL_ID]id`` before ``[ARGS]``)."""
    if _MISTRAL_TAG not in text:
        return []
    segments = [_strip_trailing_special(s) for s in text.split(_MISTRAL_TAG)[1:]]
    calls: list[ToolCall] = []
    for index, segment in enumerate(segments):
        what = f"mistral [TOOL_CALLS] #{index}"
        if not segment:
            raise ParseError(f"{what}: empty")
        if segment.startswith(("[", "{")):
            payload = _decode_json(segment, what)
            items = payload if isinstance(payload, list) else [payload]
            calls.extend(_as_call(item, f"{what} item {i}") for i, item in enumerate(items))
            continue
        if _MISTRAL_ARGS not in segment:
            raise ParseError(f"{what}: neither a JSON list nor 'name[ARGS]{{...}}': {segment[:200]!r}")
        name, arguments = segment.split(_MISTRAL_ARGS, 1)
        name = name.split(_MISTRAL_CALL_ID, 1)[0].strip()
        if not name:
            raise ParseError(f"{what}: missing function name before [ARGS]")
        calls.append(_as_call({"name": name, "arguments": _decode_json(arguments, what)}, what))
    return calls


# --- pythonic ------------------------------------------------------------------------------------------------------

_PYTHONIC_WRAPPERS = ("<|python_start|>", "<|python_end|>")
_PYTHONIC_START = re.compile(r"^\[\s*[A-Za-z_][\w.]*\s*\(")


def _dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise ParseError(f"pythonic: a call target must be a (dotted) name, got {type(node).__name__}")


def _json_safe(value: Any, name: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, name) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int, float, bool)) or k is None for k in value):
            raise ParseError(f"pythonic: non-scalar dict key in argument {name!r}")
        return {k if isinstance(k, str) else json.dumps(k): _json_safe(v, name) for k, v in value.items()}
    raise ParseError(f"pythonic: argument {name!r} has a non-JSON value of type {type(value).__name__}")


def parse_pythonic(text: str) -> list[ToolCall]:
    """Pythonic list of calls, ``[get_weather(city="Paris"), math.factorial(n=5)]`` (Llama 3.2 pythonic, Llama 4).

    Only keyword arguments with literal values are accepted (``ast.literal_eval`` on each value node; nothing is
    executed). Text that does not start like ``[name(`` is a plain answer.
    """
    body = text
    for wrapper in _PYTHONIC_WRAPPERS:
        body = body.replace(wrapper, "")
    body = _strip_trailing_special(body)
    if not _PYTHONIC_START.match(body):
        return []
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(f"pythonic: not a Python expression ({exc.__class__.__name__}: {exc}): {body[:200]!r}") from None
    if not isinstance(tree.body, ast.List):
        raise ParseError("pythonic: expected a list of calls")
    calls = []
    for element in tree.body.elts:
        if not isinstance(element, ast.Call):
            raise ParseError(f"pythonic: list element is a {type(element).__name__}, not a call")
        name = _dotted_name(element.func)
        if element.args:
            raise ParseError(f"pythonic: positional arguments in call to {name!r}")
        arguments: dict[str, Any] = {}
        for keyword in element.keywords:
            if keyword.arg is None:
                raise ParseError(f"pythonic: **kwargs in call to {name!r}")
            try:
                value = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ParseError(f"pythonic: argument {keyword.arg!r} of {name!r} is not a literal") from None
            arguments[keyword.arg] = _json_safe(value, keyword.arg)
        calls.append({"name": name, "arguments": arguments})
    return calls


# --- registry ------------------------------------------------------------------------------------------------------

PARSERS: dict[str, Callable[[str], list[ToolCall]]] = {
    "hermes": parse_hermes,
    "qwen": parse_hermes,
    "llama3_json": parse_llama3_json,
    "mistral": parse_mistral,
    "pythonic": parse_pythonic,
}


def get_parser(name: str) -> Callable[[str], list[ToolCall]]:
    try:
        return PARSERS[name]
    except KeyError:
        raise ValueError(f"unknown tool-call parser {name!r}; known: {', '.join(sorted(PARSERS))}") from None


def parse_tool_calls(text: str, parser: str) -> list[ToolCall]:
    """Parse ``text`` with the named family parser (raises :class:`ParseError` on undecodable calls)."""
    return get_parser(parser)(text)


# Checked in order: the first family whose marker appears in the template wins. The pythonic markers come before
# the llama JSON ones because Llama 3.2/4 pythonic templates also carry Llama special tokens.
_TEMPLATE_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hermes", ("<tool_call>",)),
    ("mistral", ("[TOOL_CALLS]",)),
    ("pythonic", ("<|python_start|>", "[func_name1(", "func_name1(params_name1=")),
    ("llama3_json", ("<|python_tag|>", '"parameters": dictionary of argument name', "<|eom_id|>")),
)


def detect_parser(chat_template: str) -> str:
    """Pick the tool-call parser from the markers a model's chat template writes around tool calls."""
    for name, markers in _TEMPLATE_MARKERS:
        if any(marker in chat_template for marker in markers):
            return name
    raise UnknownToolFormat(
        "cannot tell the tool-call format from the chat template; pass a tool parser explicitly "
        f"(one of {', '.join(sorted(PARSERS))})"
    )
