"""Turning ACEBench model text into calls, the way its evaluation does it (chenchen0103/ACEBench @ 56dd66cf:
``eval_main.py`` + ``model_inference/utils.py``), without ever evaluating the text.

A decoded output is a list of ``{function_name: {argument: value}}`` dicts. Anything the official decoder rejects
(an exception inside ``decode_ast``) raises :class:`DecodeError` here; the checker turns it into the official
``wrong_output_format`` verdict.
"""

from __future__ import annotations

import dataclasses

from pytest_toolbench.scorer_lib.python_dialects import ACEBENCH_NORMAL, PythonCallDecoder


class DecodeError(ValueError):
    """The official decoder would have raised: the item is a ``wrong_output_format`` failure."""


def extract_first_bracket_span(text: str) -> str | None:
    """The first balanced ``[...]`` of ``text``, counting brackets blindly.

    Quirk (upstream, kept): brackets inside string literals are counted too, so ``'Spring [1]'`` is harmless while
    a lone ``']'`` inside a value closes the span early and the rest is cut off (a syntax error follows). Prose
    with its own brackets before the call list (``Step [1]: ...``) yields that prose bracket instead.
    Returns None when there is no ``[`` or the first one is never closed.
    """
    start = text.find("[")
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def prepare_single_turn(text: str) -> str | None:
    """Single-turn categories: only the first balanced bracket span is decoded (the fork's bracket extraction).

    Without a complete span there is nothing to decode (upstream then hands None to ``ast.parse`` and fails with
    "compile() arg 1 must be a string"), so a bare ``call(...)`` or ``(call(...),)`` is a format error here, while
    the same text passes in the multi-turn categories."""
    return extract_first_bracket_span(text)


def prepare_multi_turn(text: str) -> str:
    """Normal multi-turn categories: every whitespace character is removed (``"".join(text.split())``), including
    the spaces inside string values, and the whole remaining text is decoded (no bracket extraction, so a fenced
    or quoted answer fails while ``call(...),`` — a one-element tuple — passes)."""
    return "".join(text.split())


#: ``decode_calls(prepared)``: parse prepared text as a Python list (or tuple/set) of calls, raising DecodeError like
#: the official decoder: the shared decoder (:mod:`pytest_toolbench.parsing.python_calls`) in ACEBench's ``decode_ast``
#: dialect (no bare call, nested calls without keywords as ``{name: {}}``, every failure of constant arithmetic a
#: decode error; arithmetic is bounded where upstream ``eval``s it, so huge results fail instead of hanging).
DECODER = PythonCallDecoder(dataclasses.replace(ACEBENCH_NORMAL, error=DecodeError))
decode_calls = DECODER.decode
