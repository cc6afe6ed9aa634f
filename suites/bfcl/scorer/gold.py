"""Reference answers rendered as the text a prompting-mode model would write.

Each ground-truth call becomes ``name(param=value, ...)`` with the first acceptable non-``""`` value of each
parameter (parameters whose only acceptable value is ``""`` are omitted). Python values use Python literal syntax;
Java and JavaScript values are written as the literal source text BFCL's converters accept for the declared type.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_toolbench.contract.suite import Case
from .categories import language_of
from .prompt import python_literal

REFUSAL_TEXT = "None of the provided functions can be used to answer this question."


def gold_output(case: Case) -> str:
    payload = case.payload
    if case.category in ("irrelevance", "live_irrelevance"):
        return REFUSAL_TEXT
    if case.category == "live_relevance":
        # Arguments are not checked for relevance: a call to the first offered function is enough.
        return f"[{payload['function'][0]['name']}()]"
    return render_calls(payload["ground_truth"], payload["function"], language_of(case.category))


def first_acceptable(acceptable: Any) -> tuple[bool, Any]:
    if not isinstance(acceptable, list):
        return True, acceptable
    for value in acceptable:
        if value != "":
            return True, value
    return False, None


def _alternative_dict(alternative: dict) -> dict:
    result = {}
    for key, acceptable in alternative.items():
        present, value = first_acceptable(acceptable)
        if present:
            result[key] = value
    return result


def _concrete(value: Any, schema: dict) -> Any:
    """Turn a GT value into the concrete value to write (dict alternatives hold lists of acceptable values)."""
    kind = schema.get("type")
    if kind in ("dict", "HashMap") and isinstance(value, dict):
        return _alternative_dict(value)
    if kind in ("array", "ArrayList", "Array") and isinstance(value, list):
        if schema.get("items", {}).get("type") == "dict":
            return [_alternative_dict(item) if isinstance(item, dict) else item for item in value]
    return value


def concrete_calls(ground_truth: list[dict], functions: list[dict]) -> list[tuple[str, list[tuple[str, Any, dict]]]]:
    """The ground truth as concrete calls, ``(name, [(parameter, value, schema), ...])``: each parameter's first
    acceptable value made concrete for its declared schema (see the module docstring)."""
    by_name = {function["name"]: function for function in functions}
    calls = []
    for call in ground_truth:
        for name, parameters in call.items():
            properties = by_name.get(name, {}).get("parameters", {}).get("properties", {})
            arguments = []
            for parameter, acceptable in parameters.items():
                present, value = first_acceptable(acceptable)
                if not present:
                    continue
                if parameter not in properties and isinstance(acceptable, list) and "" in acceptable:
                    continue  # an optional GT parameter the function doc does not declare: leave it out
                schema = properties.get(parameter, {})
                arguments.append((parameter, _concrete(value, schema), schema))
            calls.append((name, arguments))
    return calls


def render_calls(ground_truth: list[dict], functions: list[dict], language: str) -> str:
    rendered = []
    for name, arguments in concrete_calls(ground_truth, functions):
        texts = []
        for parameter, value, schema in arguments:
            if language == "java":
                text = java_literal(value, schema)
            elif language == "javascript":
                text = js_literal(value, schema)
            else:
                text = python_literal(value)
            texts.append(f"{parameter}={text}")
        rendered.append(f"{name}({', '.join(texts)})")
    return "[" + ", ".join(rendered) + "]"


def _java_string(text: str) -> str:
    return '"' + text + '"'  # the decoder strips the quotes without unescaping, so the text goes in verbatim


def _java_scalar(value: Any, java_type: str | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L" if java_type == "long" else str(value)
    if isinstance(value, float):
        if java_type == "float":
            return f"{value!r}f"
        return repr(value)
    if isinstance(value, str):
        return _java_string(value)
    return _java_string(json.dumps(value))


def java_literal(value: Any, schema: dict) -> str:
    java_type = schema.get("type")
    item_type = (schema.get("items") or {}).get("type")
    if isinstance(value, str):
        # Strings, 'any' values and variable names: a string literal reaches the checker as the bare text.
        # A value holding double quotes is Java code (e.g. a constructor call) and is written as code.
        return value if '"' in value else _java_string(value)
    if java_type == "Array" and isinstance(value, list):
        element = {"integer": "int", "long": "long", "double": "double", "float": "float", "boolean": "boolean",
                   "char": "char", "byte": "byte", "short": "short"}.get(item_type or "", "String")
        return f"new {element}[]{{{', '.join(_java_scalar(item, item_type) for item in value)}}}"
    if java_type == "ArrayList" and isinstance(value, list):
        return f"new ArrayList<>(Arrays.asList({', '.join(_java_scalar(item, item_type) for item in value)}))"
    if java_type == "HashMap" and isinstance(value, dict):
        puts = " ".join(f"put({json.dumps(str(key))}, {_java_scalar(item, None)});" for key, item in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return _java_scalar(value, java_type)


def _js_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_js_scalar(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_js_scalar(item)}" for key, item in value.items()) + "}"
    if value is None:
        return "null"
    return json.dumps(value)


def _js_string(text: str) -> str:
    # Written verbatim: the decoder and converters strip one pair of quotes and never unescape.
    return '"' + text + '"' if '"' not in text else "'" + text + "'"


def _js_number(value: Any) -> str:
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(value, "f")
    return text


def js_literal(value: Any, schema: dict) -> str:
    js_type = schema.get("type")
    if isinstance(value, str):
        return _js_string(value)
    if js_type == "Bigint" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value}n"
    return _js_scalar(value)
