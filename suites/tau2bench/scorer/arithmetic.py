"""The ``calculate`` tool of airline and retail, without ``eval``.

Upstream checks that every character is one of ``0123456789+-*/(). `` and returns
``str(round(float(eval(expression, {"__builtins__": None}, {})), 2))``. Here the expression is parsed with
``ast.parse(..., mode="eval")`` (which raises the same ``SyntaxError`` text as ``eval``) and its constants and
operators applied with :mod:`pytest_toolbench.parsing.arithmetic` (bounded: ``10**10**9`` is refused instead of
computed, a documented deviation). A failing operation raises Python's own error text (``division by zero``).
"""

from __future__ import annotations

import ast

from pytest_toolbench.parsing.arithmetic import BINARY_OPERATORS, UNARY_OPERATORS, ArithmeticRefused, apply_binary, \
    apply_unary


def _value(node: ast.AST):
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
        left, right = _value(node.left), _value(node.right)
        try:
            return BINARY_OPERATORS[type(node.op)](left, right) if _small(left, right) else \
                apply_binary(node.op, left, right)
        except ArithmeticRefused:
            raise
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY_OPERATORS:
        return apply_unary(node.op, _value(node.operand))
    if isinstance(node, ast.Tuple):
        # "(1, 2)" cannot be written ("," is refused), but "()" can: float(()) fails as upstream's does
        return tuple(_value(item) for item in node.elts)
    raise ValueError(f"unsupported expression {ast.dump(node)}")


def _small(left, right) -> bool:
    return all(isinstance(v, float) or (isinstance(v, int) and abs(v) < 2 ** 64) for v in (left, right))


def calculate(expression: str) -> str:
    if not all(char in "0123456789+-*/(). " for char in expression):
        raise ValueError("Invalid characters in expression")
    tree = ast.parse(expression.lstrip(" \t"), filename="<string>", mode="eval")
    value = _value(tree)
    return str(round(float(value), 2))
