"""The return formats of BFCL's format-sensitivity prompts: Python calls with or without ``<TOOLCALL>`` tags, JSON,
verbose XML and concise XML.

Upstream (bfcl-eval 2026.3.23 = gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8,
``bfcl_eval/model_handler/utils.py``: ``default_decode_ast_prompting`` and ``ast_parse``;
``bfcl_eval/model_handler/parser/json_parser.py`` and ``xml_parser.py``):

1. the text is stripped of '`', newline and space at both ends and wrapped in ``[...]`` (every format);
2. with the tool-call tag, the first ``<TOOLCALL>(.*?)</TOOLCALL>`` (dot matches newlines) is taken and stripped;
   no tag is a failure;
3. Python: ``.strip().strip("'")``, then the Python call grammar (a lone call, or a list/tuple/set of calls);
   JSON: the text from the first ``[`` to the last ``]`` (``re.search(r"\\[.*\\]")``), then
   ``parse_json_function_call`` (below); XML: the first ``<functions>...</functions>`` (lazy), parsed by
   ``xml.etree.ElementTree`` and read by ``parse_verbose_xml_function_call`` / ``parse_concise_xml_function_call``.

Reproduced quirks: JSON that does not load decodes to no call at all (``[]``, so a wrong count, not a decoder
failure); a JSON element that is not an object is skipped; an object without ``function`` or ``parameters`` fails;
XML values are converted by their ``type`` attribute (``integer`` by ``int``, ``float`` by ``float``, ``boolean``
true iff the text is ``true`` in any case, ``null`` to None, ``array``/``tuple``/``object``/``dict`` by
``ast.literal_eval``, anything else kept as text); a verbose-XML parameter without ``value`` is ``""``; a concise-XML
value is stripped. Upstream's regular expressions are evaluated here by linear scans that find the same match
(``_json_call_list`` documents the one that backtracks exponentially upstream), so a hostile reply cannot hang
the run; ``ast.literal_eval`` builds literals only, as upstream.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import xml.etree.ElementTree as ElementTree
from typing import Any

from pytest_toolbench.parsing.python_calls import PythonCallDecoder, strip_and_wrap
from pytest_toolbench.scorer_lib.python_dialects import BFCL_PROMPTING
from .common import DecodeError

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")

#: the Python call grammar after upstream's own preparation (done here: the tag comes out before it)
_PYTHON = PythonCallDecoder(dataclasses.replace(BFCL_PROMPTING, prepare=None, error=DecodeError))


def decode_format(text: str, return_format: str, tool_call_tag: bool) -> Any:
    """``default_decode_ast_prompting(text, return_format, has_tool_call_tag)``; raises :class:`DecodeError` (never
    anything else) where upstream raises."""
    if return_format not in RETURN_FORMATS:
        raise ValueError(f"unknown return format {return_format!r}")
    try:
        source = strip_and_wrap(text if isinstance(text, str) else str(text))
        if tool_call_tag:
            inner = _between(source, "<TOOLCALL>", "</TOOLCALL>")
            if inner is None:
                raise DecodeError(f"No tool call tag found in input string: {_short(source)}")
            source = inner.strip()
        if return_format == "python":
            return _PYTHON.decode(source.strip().strip("'"))
        if return_format == "json":
            return _json_calls(source)
        block = _between(source, "<functions>", "</functions>")
        if block is None:
            raise DecodeError(f"No XML function call found in input string: {_short(source)}. "
                              "Missing <functions> tag.")
        root = ElementTree.fromstring("<functions>" + block + "</functions>")
        return _verbose_xml(root) if return_format == "verbose_xml" else _concise_xml(root)
    except DecodeError:
        raise
    except Exception as exc:  # noqa: BLE001 - what upstream raises (KeyError, ParseError, ValueError, ...)
        raise DecodeError(f"{type(exc).__name__}: {_short(str(exc))}") from None


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _between(text: str, opening: str, closing: str) -> str | None:
    """The group of ``re.search(opening + "(.*?)" + closing, text, re.DOTALL)``: from the first opening, up to the
    first closing after it (if the first opening has no closing after it, no later one has)."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening):end]


# -- JSON -------------------------------------------------------------------------------------------------------


def _json_calls(source: str) -> list:
    # ast_parse: re.search(r"\[.*\]", s, re.DOTALL): the first '[' to the last ']' (always all of a wrapped text)
    first, last = source.find("["), source.rfind("]")
    if first >= 0 and last > first:
        source = source[first:last + 1]
    # parse_json_function_call: re.search(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", s, re.DOTALL)
    found = _json_call_list(source)
    if found is not None:
        source = found
    try:
        loaded = json.loads(source)
    except json.JSONDecodeError:
        return []
    calls = []
    for call in loaded:  # a number does not iterate: TypeError, a failure as upstream
        if isinstance(call, dict):
            calls.append({call["function"]: call["parameters"]})
    return calls


def _json_call_list(text: str) -> str | None:
    """The match of ``\\[\\s*{.*?}\\s*(?:,\\s*{.*?}\\s*)*\\]`` (dot matches newlines) that Python's ``re.search``
    returns, found in linear time.

    The backtracking order is reproduced: from a ``[`` (leftmost first), whitespace, ``{``; the lazy ``.*?`` tries
    each later ``}`` in order (``A``); after it and its whitespace, the greedy group first tries ``,`` whitespace
    ``{`` and another lazy body (``A`` again), and only when that fails the closing ``]`` (``C``). Whitespace runs
    never backtrack usefully (a shorter run leaves a whitespace character where ``,``, ``{`` or ``]`` is needed).
    Each state depends only on its position, so both are computed once per position, right to left, instead of
    re-explored on every path (upstream's regular expression is exponential on, e.g., ``[{}`` and many ``,{}``
    without a closing bracket)."""
    n = len(text)
    after_space = [0] * (n + 1)  # the first non-whitespace position at or after i (re's \s = str.isspace)
    after_space[n] = n
    for i in range(n - 1, -1, -1):
        after_space[i] = after_space[i + 1] if text[i].isspace() else i
    in_body = [-1] * (n + 2)  # A(i): inside a {.*?} body at i; the end of the whole match, or -1
    after_body = [-1] * (n + 2)  # C(q): after a body and its whitespace, at q
    for i in range(n, -1, -1):
        # C(i): another group first, else the closing bracket
        result = -1
        if i < n and text[i] == ",":
            r = after_space[i + 1]
            if r < n and text[r] == "{":
                result = in_body[r + 1]
        if result < 0 and i < n and text[i] == "]":
            result = i + 1
        after_body[i] = result
        # A(i): end the body at a '}' here when the rest matches, else extend it by one character
        result = -1
        if i < n:
            if text[i] == "}":
                result = after_body[after_space[i + 1]]
            if result < 0:
                result = in_body[i + 1]
        in_body[i] = result
    start = text.find("[")
    while start >= 0:
        r = after_space[start + 1]
        if r < n and text[r] == "{" and in_body[r + 1] >= 0:
            return text[start:in_body[r + 1]]
        start = text.find("[", start + 1)
    return None


# -- XML --------------------------------------------------------------------------------------------------------


def _xml_value(raw: str, type_name: str) -> Any:
    """``xml_parser.convert_value_by_type``."""
    if type_name == "string":
        return raw
    if type_name == "integer":
        return int(raw)
    if type_name == "float":
        return float(raw)
    if type_name == "boolean":
        return raw.lower() == "true"
    if type_name == "null":
        return None
    if type_name in ("array", "tuple", "object", "dict"):
        return ast.literal_eval(raw)
    return raw


def _verbose_xml(root: Any) -> list:
    results = []
    for function in root.findall("function"):
        name = function.attrib["name"]
        parameters: dict = {}
        container = function.find("params")
        elements = container.findall("param") if container is not None else function.findall("param")
        for parameter in elements:
            parameters[parameter.attrib.get("name")] = _xml_value(parameter.attrib.get("value", ""),
                                                                  parameter.attrib.get("type", "string"))
        results.append({name: parameters})
    return results


def _concise_xml(root: Any) -> list:
    results = []
    for function in root.findall("function"):
        name = function.attrib["name"]
        parameters: dict = {}
        for parameter in function.findall("param"):
            parameters[parameter.attrib["name"]] = _xml_value((parameter.text or "").strip(),
                                                              parameter.attrib.get("type", "string"))
        results.append({name: parameters})
    return results


__all__ = ["RETURN_FORMATS", "decode_format"]
