"""Java and JavaScript literal converters used by BFCL's AST checker.

At evaluation time every Java/JS argument arrives as source text and is converted according to the parameter's
declared type; text that does not match a type's literal pattern stays a string and is then compared as such.
The patterns below reproduce bfcl-eval 2026.3.23
(``bfcl_eval/eval_checker/ast_eval/type_convertor/{java,js}_type_converter.py`` at gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8), including their quirks (noted where they occur).
"""

from __future__ import annotations

import re
from typing import Any

JAVA_TYPES = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int, "boolean": bool,
    "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict, "Hashtable": dict, "Queue": list,
    "Stack": list, "String": str, "any": str,
}
JS_TYPES = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool, "dict": dict, "array": list,
    "any": str,
}


class ConverterCrash(Exception):
    """The official converter raises on this input (the official evaluation would abort)."""


_INT = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")


def _python_int(text: str) -> int:
    # Python's int() on a long digit string raises past 4,300 digits; the official code would crash there.
    try:
        return int(text)
    except ValueError as exc:
        raise ConverterCrash(str(exc)) from None


def java_convert(value: str, java_type: str, item_type: str | None = None) -> Any:
    if java_type not in JAVA_TYPES:
        raise ConverterCrash(f"Unsupported type: {java_type}")
    if java_type in ("byte", "short", "integer"):
        return _python_int(value) if _INT.match(value) else value
    if java_type == "float":
        return float(re.sub(r"[fF]$", "", value)) if _JAVA_FLOAT.match(value) else value
    if java_type == "double":
        return float(value) if _JAVA_DOUBLE.match(value) else value
    if java_type == "long":
        return _python_int(re.sub(r"[lL]$", "", value)) if _JAVA_LONG.match(value) else value
    if java_type == "boolean":
        return value == "true" if value in ("true", "false") else value
    if java_type == "char":
        # Quirk: upstream's char pattern (``^\'.$\'``) can never match, so a char always stays the raw text.
        return value
    if java_type == "ArrayList":
        return _java_arraylist(value, item_type)
    if java_type == "Array":
        return _java_array(value, item_type)
    if java_type == "HashMap":
        return _java_hashmap(value)
    if java_type in ("Set", "Hashtable", "Queue", "Stack"):
        raise ConverterCrash(f"{java_type} conversion is not implemented")
    return value  # String, any


def _java_element(text: str, item_type: str | None) -> Any:
    if item_type in ("char", "String"):
        return text[1:-1]  # strips the first and last character, whatever they are
    if item_type:
        return java_convert(text, item_type)
    return java_untyped(text)


def _java_arraylist(value: str, item_type: str | None) -> Any:
    as_list = re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", value)
    if as_list:
        # Quirk: elements are split on every comma, even inside string literals.
        return [_java_element(part.strip(), item_type) for part in as_list.group(1).split(",")]
    with_adds = re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", value, re.DOTALL)
    if with_adds:
        return [_java_element(part.strip(), item_type) for part in re.findall(r"add\((.+?)\)", with_adds.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", value):
        return []
    return value


def _java_array(value: str, item_type: str | None) -> Any:
    match = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", value)
    if not match:
        return value
    parts = [part.strip() for part in match.group(1).split(",") if part.strip()]
    if item_type:
        return [java_convert(part, item_type) for part in parts]
    return [java_untyped(part) for part in parts]


def _java_hashmap(value: str) -> Any:
    match = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", value, re.DOTALL)
    if match:
        result = {}
        body = match.group(1)
        if body.strip():
            for key, item in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", body):
                result[key] = java_untyped(item.strip())
        return result
    if re.search(r"new\s+HashMap<.*?>\s*\(\)", value):
        return {}
    return value


def java_untyped(text: str) -> Any:
    """Upstream's ``parse_java_value``: a literal without a declared type."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if re.match(r"^-?\d+[lL]$", text):
        return _python_int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _python_number(text)


def _python_number(text: str) -> Any:
    # Python's int()/float() accept more than Java literals (" 1_000 ", "inf", "nan", "١٢"): kept on purpose.
    # A digit string past Python's 4,300-digit int limit falls through to float() (inf), as upstream.
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def js_convert(value: str, js_type: str, item_type: str | None = None) -> Any:
    if js_type not in JS_TYPES:
        raise ConverterCrash(f"Unsupported type: {js_type}")
    if js_type == "String":
        if (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'")):
            return value[1:-1]
        return value
    if js_type == "integer":
        return _python_int(value) if _INT.match(value) else value
    if js_type == "float":
        return float(value) if re.match(r"^-?\d+(\.\d+)?$", value) else value
    if js_type == "Bigint":
        return _python_int(value[:-1]) if re.match(r"^-?\d+n$", value) else value
    if js_type == "Boolean":
        return value == "true" if value in ("true", "false") else value
    if js_type in ("dict", "array"):
        return _js_collection(value, js_type, item_type)
    return value  # any


def _js_collection(code: str, kind: str, item_type: str | None = None) -> Any:
    code = code.strip()
    if kind == "array":
        try:
            nested = re.match(
                r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)", code
            )
            if nested:
                rows = []
                for index, row in enumerate(re.findall(r"\[(.*?)\]", nested.group(0))):
                    row = row.strip()
                    if index == 0 and row.startswith("["):
                        row = row[1:]
                    rows.append([js_untyped(item.strip()) for item in row.split(",")])
                return rows
            flat = re.match(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)", code)
            if not flat:
                return code
            body = flat.group(1) if flat.group(1) is not None else flat.group(2)
            body = (body or "").strip()
            items = body.split(",") if body else []
            if item_type:
                # Quirk: a quoted element is converted with item_type as its type and "String" as a nested type.
                return [
                    js_convert(item.strip(), item_type, "String")
                    if item.strip().startswith(("'", '"'))
                    else js_convert(item.strip(), item_type)
                    for item in items
                ]
            return [js_untyped(item.strip()) for item in items]
        except ConverterCrash:
            return code  # upstream wraps the array branch in a bare ``except``
        except Exception:  # noqa: BLE001 - mirrors the official bare except around array parsing
            return code
    if code == "{}":
        return {}
    match = re.match(r"\{(.*?)\}", code)
    if not match:
        return code
    try:
        result = {}
        for key, item in re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", match.group(1)):
            key = key.strip().strip("'\"")
            item = item.strip()
            if item.startswith("[") and item.endswith("]"):
                result[key] = _js_collection(item, "array")
            elif item.startswith("{") and item.endswith("}"):
                result[key] = _js_collection(item, "dict")
            else:
                result[key] = js_untyped(item.strip("'\""))
        return result
    except ConverterCrash:
        return code
    except Exception:  # noqa: BLE001 - mirrors the official catch-all around dict parsing
        return code


def js_untyped(text: str) -> Any:
    """Upstream's ``parse_js_value``."""
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    return _python_number(text)
