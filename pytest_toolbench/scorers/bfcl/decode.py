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
import math
import operator
import re
from typing import Any

from .syntax_common import DecodeError

# The official decoder evaluates constant binary operations with Python itself (``eval(ast.unparse(node))``).
# We evaluate them with explicit operators instead and refuse results that would take unbounded time or memory;
# those outputs count as undecodable (a documented deviation: the official code would compute them).
MAX_INT_BITS = 200_000  # ~60,000 decimal digits: ample for 10**5000 while refusing 10**10**9
MAX_SEQUENCE_LENGTH = 1_000_000  # result length cap for "ab" * n and [x] * n

_BINARY_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}

_REAL_UNARY_OPERATORS = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


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
        function = _BINARY_OPERATORS.get(type(node.op))
        if function is None:
            raise DecodeError("unsupported binary operator")
        _check_bounds(node.op, left, right)
        try:
            return function(left, right)
        except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
            raise DecodeError(f"binary operation failed: {type(exc).__name__}: {exc}") from None
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate_constant_expression(node.operand)
        try:
            return _REAL_UNARY_OPERATORS[type(node.op)](operand)
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise DecodeError(f"unary operation failed: {exc}") from None
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


def _int_bits(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value.bit_length()
    return 0


def _check_bounds(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse operations whose result would be absurdly large (deviation: the official code computes them)."""
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        if abs(left) > 1 and _int_bits(left) * right > MAX_INT_BITS:
            raise DecodeError("integer power too large to evaluate safely")
    if isinstance(op, ast.LShift) and isinstance(left, int) and isinstance(right, int):
        if left and right > 0 and _int_bits(left) + right > MAX_INT_BITS:
            raise DecodeError("shift result too large to evaluate safely")
    if isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
                if len(sequence) * max(count, 0) > MAX_SEQUENCE_LENGTH:
                    raise DecodeError("repeated sequence too large to evaluate safely")
        if isinstance(left, int) and isinstance(right, int):
            if _int_bits(left) + _int_bits(right) > MAX_INT_BITS:
                raise DecodeError("integer product too large to evaluate safely")
    if isinstance(op, ast.Pow) and isinstance(left, float) and isinstance(right, (int, float)):
        if math.isfinite(left) and abs(left) > 1 and right > 10_000_000:
            return  # float overflow raises OverflowError quickly; nothing to bound


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
