"""Prompting-mode decoding of model text into BFCL's call structure ``[{name: {param: value}}]``.

Reproduces what bfcl-eval 2026.3.23 does for a prompting model (``default_decode_ast_prompting`` in
``bfcl_eval/model_handler/utils.py`` at gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8): strip backticks,
newlines and spaces from both ends, wrap in ``[...]`` when missing, then parse with the return format's grammar.
Python uses the ``ast`` module (never ``eval``); Java and JavaScript use this package's own small parsers
(:mod:`.java_syntax`, :mod:`.js_syntax`) in place of upstream's tree-sitter grammars.

Every failure is raised as :class:`DecodeError`; the scorer turns it into BFCL's ``ast_decoder:decoder_failed``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_toolbench.parsing.python_calls import BFCL_PROMPTING, PythonCallDecoder, strip_and_wrap
from .java_syntax import parse_java_calls
from .js_syntax import parse_js_calls
from .syntax_common import DecodeError

__all__ = ["decode", "decode_python", "is_empty_output", "is_function_calling_format", "strip_and_wrap"]

#: Python return format: the shared decoder (:mod:`pytest_toolbench.parsing.python_calls`) in BFCL's dialect
#: (``default_decode_ast_prompting``: bare calls and list/tuple/set displays, nested calls without keywords kept as
#: source text, f-strings and set displays in constant arithmetic, ``{1, 2} | {3}`` included; source text rendered
#: with ``bfcl evaluate``'s stack, so operator chains and subscripts too deep for upstream's ``ast.unparse`` fail at
#: the same length), raising this package's :class:`DecodeError`. Deviations: constant arithmetic is bounded
#: (too-large results count as undecodable), and a call inside it (``set() | {1}``, ``len('ab') + 1``), which
#: upstream's ``eval`` runs, is undecodable here; neither occurs in a gold output (2,351 Python entries).
PYTHON_DECODER = PythonCallDecoder(dataclasses.replace(BFCL_PROMPTING, error=DecodeError))

#: ``decode_python(text)``: decode python-call syntax the way BFCL's prompting decoder does, quirks included.
decode_python = PYTHON_DECODER.decode


def is_function_calling_format(decoded: Any) -> bool:
    """BFCL's format predicate: a list of single-key dicts whose values are dicts (``[]`` qualifies)."""
    if type(decoded) is not list:
        return False
    for item in decoded:
        if type(item) is not dict or len(item) != 1:
            return False
        if type(next(iter(item.values()))) is not dict:
            return False
    return True


def is_empty_output(decoded: Any) -> bool:
    """BFCL's relevance predicate: not in calling format, ``[]`` or ``[{}]`` all count as 'no call'."""
    if not is_function_calling_format(decoded):
        return True
    if len(decoded) == 0:
        return True
    return len(decoded) == 1 and len(decoded[0]) == 0


def decode(text: str, language: str) -> Any:
    """Decode model text in the category's return format; raises DecodeError (never anything else)."""
    try:
        if language == "python":
            return decode_python(text)
        source = strip_and_wrap(text)[1:-1]
        if language == "java":
            return parse_java_calls(source)
        return parse_js_calls(source)
    except DecodeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a decoder bug must not escape as an exception
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
