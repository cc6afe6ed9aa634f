"""Prompting-mode decoding of model text into BFCL's call structure ``[{name: {param: value}}]``.

Reproduces what bfcl-eval 2026.3.23 does for a prompting model (``default_decode_ast_prompting`` in
``bfcl_eval/model_handler/utils.py`` at gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8): strip backticks,
newlines and spaces from both ends, wrap in ``[...]`` when missing, then parse with the return format's grammar.
Python uses the ``ast`` module (never ``eval``); Java and JavaScript use this package's own small parsers
(:mod:`.java_syntax`, :mod:`.js_syntax`) in place of upstream's tree-sitter grammars.

Every failure is raised as :class:`DecodeError`; the scorer turns it into BFCL's ``ast_decoder:decoder_failed``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ...parsing.arithmetic import ArithmeticRefused, apply_binary, apply_unary
from .java_syntax import parse_java_calls
from .js_syntax import parse_js_calls
from .syntax_common import DecodeError

# Constant arithmetic is evaluated like the official ``eval(ast.unparse(node))``, but bounded: see
# :mod:`pytest_toolbench.parsing.arithmetic` (too-large results count as undecodable, a documented deviation).


def strip_and_wrap(text: str) -> str:
    """The official pre-processing: strip '`', newline and space at both ends, then add missing brackets."""
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text


def decode_python(text: str) -> list[dict]:
    """Decode python-call syntax the way BFCL's prompting decoder does, quirks included."""
    source = strip_and_wrap(text).strip().strip("'")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise DecodeError(f"not a Python expression: {type(exc).__name__}: {exc}") from None
    try:
        body = tree.body
        if isinstance(body, ast.Call):
            return [_resolve_call(body)]
        # Upstream reads ``body.elts`` and asserts every element is a call: lists, tuples and sets qualify.
        if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
            raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
        calls = []
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise DecodeError(f"list element is not a call ({type(element).__name__})")
            calls.append(_resolve_call(element))
        return calls
    except RecursionError:
        raise DecodeError("expression nested too deeply") from None


def _call_name(node: ast.Call) -> str:
    # Quirk: only the Attribute chain down to a Name is kept; any other base (a call, a subscript) is dropped.
    parts = []
    func = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _resolve_call(node: ast.Call) -> dict:
    # Positional arguments are silently dropped; ``**kw`` lands under the key None (its ``arg`` is None).
    arguments: dict = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _resolve_value(keyword.value)
    return {_call_name(node): arguments}


def _resolve_value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # Quirk: every unary operator (+, -, ~, not) negates its operand's constant: ``+5`` -> -5, ``not 1`` -> -1.
        # An operand that is not a constant fails, as does a constant that cannot be negated (a string, None).
        operand = node.operand
        if not isinstance(operand, ast.Constant):
            raise DecodeError("unary operator on a non-constant")
        value = operand.value
        if isinstance(value, (bool, int, float, complex)):
            return -value
        raise DecodeError(f"bad operand type for unary -: {type(value).__name__}")
    if isinstance(node, ast.List):
        return [_resolve_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        result = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:  # ``{**other}``: upstream fails on the missing key node
                raise DecodeError("dict unpacking is not supported")
            key = _resolve_value(key_node)
            value = _resolve_value(value_node)
            try:
                result[key] = value
            except TypeError:
                raise DecodeError("unhashable dict key") from None
        return result
    if isinstance(node, ast.BinOp):
        return _evaluate_constant_expression(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        # A nested call without keywords stays source text; with keywords it becomes a nested {name: {...}}.
        if not node.keywords:
            return _unparse(node)
        return _resolve_call(node)
    if isinstance(node, ast.Tuple):
        return tuple(_resolve_value(item) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return _unparse(node.value) + "[" + _unparse(node.slice) + "]"
    # Lambdas fail upstream too (its lambda branch reads a field lambdas do not have).
    raise DecodeError(f"unsupported value syntax: {type(node).__name__}")


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError) as exc:
        raise DecodeError(f"cannot render source text: {exc}") from None


def _evaluate_constant_expression(node: ast.AST) -> Any:
    """Evaluate a constant expression the way Python's ``eval`` would, without calling ``eval``.

    Inside a binary operation the real Python semantics apply (``+5`` is 5 there). Names, calls and other
    non-literal syntax fail, as the official ``eval`` raises on them (NameError) or yields objects that fail later.
    """
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        left = _evaluate_constant_expression(node.left)
        right = _evaluate_constant_expression(node.right)
        try:
            return apply_binary(node.op, left, right)
        except ArithmeticRefused as exc:
            raise DecodeError(str(exc)) from None
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate_constant_expression(node.operand)
        try:
            return apply_unary(node.op, operand)
        except ArithmeticRefused as exc:
            raise DecodeError(str(exc)) from None
    if isinstance(node, ast.List):
        return [_evaluate_constant_expression(item) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate_constant_expression(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise DecodeError("dict unpacking inside an expression")
        try:
            return {
                _evaluate_constant_expression(k): _evaluate_constant_expression(v)
                for k, v in zip(node.keys, node.values)
            }
        except TypeError:
            raise DecodeError("unhashable dict key") from None
    if isinstance(node, ast.JoinedStr):
        return "".join(_format_piece(piece) for piece in node.values)
    raise DecodeError(f"binary operation over non-constant syntax ({type(node).__name__})")


def _format_piece(piece: ast.AST) -> str:
    """One part of an f-string inside a constant expression (``f'{1}' + 'a'`` evaluates upstream)."""
    if isinstance(piece, ast.Constant):
        return str(piece.value)
    if not isinstance(piece, ast.FormattedValue):
        raise DecodeError("unsupported f-string part")
    value = _evaluate_constant_expression(piece.value)
    converters = {-1: lambda v: v, 115: str, 114: repr, 97: ascii}
    try:
        value = converters[piece.conversion](value)
        spec = _evaluate_constant_expression(piece.format_spec) if piece.format_spec is not None else ""
        if any(len(run) > 6 for run in re.findall(r"\d+", spec)):
            raise DecodeError("f-string format width too large to evaluate safely")
        return format(value, spec)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise DecodeError(f"f-string formatting failed: {exc}") from None


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
