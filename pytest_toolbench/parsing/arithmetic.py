"""Bounded evaluation of constant arithmetic found in model output (never ``eval``).

Official decoders (BFCL, ACEBench) evaluate operations such as ``2*3`` or ``1/4`` in call arguments with Python's
own ``eval``. We apply the same operators explicitly and refuse results that would take unbounded time or memory
(``(10**9999)**9999``, ``"a" * 10**12``): a documented deviation, since the official code would try to compute
them. Every refusal or arithmetic failure is an :class:`ArithmeticRefused`, which decoders turn into their own
decode error (a scored format failure, never a crash or a hang).
"""

from __future__ import annotations

import ast
import operator
from typing import Any

#: About 60,000 decimal digits: ample for 10**5000 while refusing 10**10**9.
MAX_INT_BITS = 200_000
#: Result length cap for ``"ab" * n`` and ``[x] * n``.
MAX_SEQUENCE_LENGTH = 1_000_000

BINARY_OPERATORS = {
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

UNARY_OPERATORS = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


class ArithmeticRefused(ValueError):
    """A constant operation that fails in Python or is refused as too large to compute safely."""


def apply_binary(op: ast.operator, left: Any, right: Any) -> Any:
    function = BINARY_OPERATORS.get(type(op))
    if function is None:
        raise ArithmeticRefused(f"unsupported binary operator {type(op).__name__}")
    _check_bounds(op, left, right)
    try:
        return function(left, right)
    except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
        raise ArithmeticRefused(f"binary operation failed: {type(exc).__name__}: {exc}") from None


def apply_unary(op: ast.unaryop, operand: Any) -> Any:
    function = UNARY_OPERATORS.get(type(op))
    if function is None:
        raise ArithmeticRefused(f"unsupported unary operator {type(op).__name__}")
    try:
        return function(operand)
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ArithmeticRefused(f"unary operation failed: {exc}") from None


def _int_bits(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value.bit_length()
    return 0


def _check_bounds(op: ast.operator, left: Any, right: Any) -> None:
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        if abs(left) > 1 and _int_bits(left) * right > MAX_INT_BITS:
            raise ArithmeticRefused("integer power too large to evaluate safely")
    if isinstance(op, ast.LShift) and isinstance(left, int) and isinstance(right, int):
        if left and right > 0 and _int_bits(left) + right > MAX_INT_BITS:
            raise ArithmeticRefused("shift result too large to evaluate safely")
    if isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
                if len(sequence) * max(count, 0) > MAX_SEQUENCE_LENGTH:
                    raise ArithmeticRefused("repeated sequence too large to evaluate safely")
        if isinstance(left, int) and isinstance(right, int):
            if _int_bits(left) + _int_bits(right) > MAX_INT_BITS:
                raise ArithmeticRefused("integer product too large to evaluate safely")
