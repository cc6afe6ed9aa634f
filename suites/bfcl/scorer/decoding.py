"""Prompting-mode decoding of model text into BFCL's call structure ``[{name: {param: value}}]``.

Reproduces what bfcl-eval 2026.3.23 does for a prompting model (``default_decode_ast_prompting`` in
``bfcl_eval/model_handler/utils.py`` at gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8): strip backticks,
newlines and spaces from both ends, wrap in ``[...]`` when missing, then parse with the return format's grammar.
Python uses the shared decoder on the ``ast`` module (never ``eval``, :mod:`.decoders.python`); Java and JavaScript
use this package's own small parsers (:mod:`.decoders.java`, :mod:`.decoders.javascript`) in place of upstream's
tree-sitter grammars.

Every failure is raised as :class:`DecodeError`; the scorer turns it into BFCL's ``ast_decoder:decoder_failed``.
"""

from __future__ import annotations

from typing import Any

from pytest_toolbench.parsing.python_calls import strip_and_wrap
from .decoders.common import DecodeError
from .decoders.java import parse_java_calls
from .decoders.javascript import parse_js_calls
from .decoders.python import decode_python

__all__ = ["decode", "decode_python", "is_empty_output", "is_function_calling_format", "strip_and_wrap"]


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
