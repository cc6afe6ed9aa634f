"""Strict literal calls: ``name(k=v, ...)`` text read with ``ast`` into ``[{"name", "arguments"}]``, values literals
only (the TL-Training protocol's reader: no upstream decoder to reproduce). Never evaluated."""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Mapping, Sequence

_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_NOT_A_LITERAL = (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, ZeroDivisionError, OverflowError)


def _literal(node: ast.AST) -> Any:
    """A literal value; numeric arithmetic between literals (BFCL writes ``p=1/6``) is folded."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _literal(node.left), _literal(node.right)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            raise ValueError("arithmetic on non-numbers")
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large")
        return _ARITHMETIC[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError("sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k) if k is not None else None: _literal(v) for k, v in zip(node.keys, node.values)}
    value = ast.literal_eval(node)
    if isinstance(value, (tuple, set)):
        return list(value)
    return value


def _dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise ValueError("call target is not a name")


def parse_literal_calls(text: str, signatures: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """``name(k=v, ...)`` calls, one per line or as a list/tuple, as ``[{"name", "arguments"}]``; raises
    ``ValueError`` when not decodable. Values must be literals (``ast.literal_eval``; tuples and sets become lists),
    with numeric arithmetic folded (exponents up to 64).

    Positional arguments are accepted for tools in ``signatures`` and named after the parameters in their order
    (BFCL's gold writes ``calculate_mean([1,3,4,6,8])``).
    """
    body = text.strip()
    try:
        tree = ast.parse(body, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not Python calls: {exc}") from None
    nodes: list[ast.AST] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr):
            raise ValueError("not a call expression")
        value = statement.value
        nodes.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise ValueError("expected name(keyword=value, ...)")
        name = _dotted_name(node.func)
        arguments: dict[str, Any] = {}
        order = list((signatures or {}).get(name, ()))
        if len(node.args) > len(order) or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"positional arguments to {name!r} that its signature cannot name")
        for param, value in zip(order, node.args):
            try:
                arguments[param] = _literal(value)
            except _NOT_A_LITERAL:
                raise ValueError(f"argument {param!r} is not a literal") from None
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("**kwargs are not a call")
            try:
                arguments[keyword.arg] = _literal(keyword.value)
            except _NOT_A_LITERAL:
                raise ValueError(f"argument {keyword.arg!r} is not a literal") from None
        calls.append({"name": name, "arguments": arguments})
    if not calls:
        raise ValueError("no call")
    return calls
