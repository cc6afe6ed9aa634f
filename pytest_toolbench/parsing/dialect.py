"""What one upstream Python-call decoder does differently: :class:`Dialect` (its flags) and :class:`Messages` (its
error texts), read by :class:`~pytest_toolbench.parsing.python_calls.PythonCallDecoder`. The shipped presets, one per
upstream decoder, are in ``pytest_toolbench.scorer_lib.python_dialects``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable


class PythonCallError(ValueError):
    """The text does not decode (the default ``error`` of a :class:`Dialect`)."""


@dataclass(frozen=True)
class Messages:
    """The error texts of one dialect (templates: ``{type}`` a type name, ``{type_repr}`` its ``repr``, ``{exc}``
    the underlying exception's text)."""

    no_text: str = "no text to decode"
    parse_error: str = "not a Python expression: {type}: {exc}"
    not_a_list: str = "expected a list of calls, got {type}"
    not_a_call: str = "list element is not a call ({type})"
    too_deep: str = "expression nested too deeply"
    unary_non_constant: str = "unary operator on a non-constant"
    unary_bad_operand: str = "bad operand type for unary -: {type}"
    dict_unpacking: str = "dict unpacking is not supported"
    unhashable_key: str = "unhashable dict key"
    unsupported: str = "unsupported value syntax: {type}"
    render_failed: str = "cannot render source text: {exc}"
    arithmetic_failed: str = "cannot evaluate {type}"
    expression_dict_unpacking: str = "dict unpacking inside an expression"
    expression_unsupported: str = "binary operation over non-constant syntax ({type})"
    #: None: an unhashable key inside a constant expression raises TypeError (then ``arithmetic_failed``).
    expression_unhashable_key: str | None = "unhashable dict key"


@dataclass(frozen=True)
class Dialect:
    """One upstream decoder's behaviour, as flags."""

    name: str
    #: The exception class raised for undecodable text (scorers replace it with their own).
    error: type[Exception] = PythonCallError
    #: Text preparation before ``ast.parse``: ``text -> source``, or None where the text is no text to decode
    #: (``no_text``); None: prepared by the caller (``None`` is ``no_text``: a caller may hand upstream's ``None``
    #: span to ``ast.parse``). The presets' preparations are in ``scorer_lib.python_dialects``.
    prepare: Callable[[Any], Any] | None = None
    #: A lone call expression (no list around it) is one call. Upstream BFCL and the ACEBench agent roles test for
    #: ``ast.Call``; ACEBench's ``decode_ast`` reads ``body.elts`` at once and fails.
    bare_call: bool = True
    #: The displays whose elements are the calls (upstream reads ``body.elts``: lists, tuples and sets have it; the
    #: agent roles test for tuple and list only).
    containers: tuple[type, ...] = (ast.List, ast.Tuple, ast.Set)
    #: Any other expression decodes to no call at all (ACEBench agent roles) instead of failing.
    other_expression_is_empty: bool = False
    #: A nested call without keyword arguments: ``"source"`` keeps its source text (BFCL, ACEBench agent roles);
    #: ``"empty_call"`` gives ``{name: {}}`` (ACEBench ``decode_ast``).
    call_without_keywords: str = "source"
    #: Source text that ``ast.unparse`` cannot render (too deep) is a decode error with ``render_failed`` (BFCL);
    #: otherwise the RecursionError surfaces as ``too_deep`` like any other.
    wrap_render_errors: bool = True
    #: Dict displays: the key is hashed before the value is resolved (ACEBench: ``hash(key)`` first), rather than on
    #: insertion after both (BFCL), which decides which error an unhashable key beside a bad value reports.
    hash_key_before_value: bool = False
    #: Any failure of a constant expression other than the dialect's own error (ZeroDivisionError, TypeError,
    #: RecursionError, ...) becomes ``arithmetic_failed`` (ACEBench: ``except Exception`` around the evaluation).
    wrap_arithmetic_failures: bool = False
    #: f-strings inside a constant expression are evaluated (BFCL: ``f'{1}' + 'a'`` evaluates upstream).
    fstrings: bool = True
    #: Python frames on upstream's stack at ``resolve_ast_by_type`` for a top-level argument, under the default
    #: recursion limit of 1,000, when upstream renders source text there (``ast.unparse`` of a binary operation, a
    #: subscript, a call without keywords): the text renders here with the same number of frames left, so deep
    #: text fails where it fails upstream whatever this process's own stack depth (None: this process's stack).
    upstream_frames: int | None = None
    #: Set displays inside a constant expression are evaluated (BFCL: ``{1, 2} | {3}`` evaluates upstream to
    #: ``{1, 2, 3}``; an unhashable element is its TypeError, a decode failure).
    sets_in_expressions: bool = True
    #: A call's keyword arguments are collected in a dict comprehension (ACEBench agent roles' code shape: one more
    #: frame per nested call, so the recursion limit is reached where it was).
    arguments_in_comprehension: bool = False
    messages: Messages = field(default_factory=Messages)
