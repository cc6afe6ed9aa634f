"""Turning ACEBench model text into calls, the way its evaluation does it (chenchen0103/ACEBench @ 56dd66cf:
``eval_main.py`` + ``model_inference/utils.py``), without ever evaluating the text.

A decoded output is a list of ``{function_name: {argument: value}}`` dicts. Anything the official decoder rejects
(an exception inside ``decode_ast``) raises :class:`DecodeError` here; the checker turns it into the official
``wrong_output_format`` verdict.
"""

from __future__ import annotations

import ast
from typing import Any

from ...parsing.arithmetic import ArithmeticRefused, apply_binary, apply_unary


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


# Arithmetic on model-supplied literals: upstream ``eval``s it unbounded; we use the shared bounded evaluator
# (pytest_toolbench.parsing.arithmetic), so huge results are a decode failure instead of a hang.


def literal_arithmetic(node: ast.AST) -> Any:
    """Value of a literal-only expression: what upstream's ``eval(ast.unparse(binop))`` yields for literals.

    Names, calls and attribute access are rejected (upstream would look them up in its own module namespace,
    which only ever helps for that module's globals; treated as undecodable here)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [literal_arithmetic(element) for element in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise DecodeError("dict unpacking in an expression")
        return {literal_arithmetic(k): literal_arithmetic(v) for k, v in zip(node.keys, node.values)}
    try:
        if isinstance(node, ast.UnaryOp):
            return apply_unary(node.op, literal_arithmetic(node.operand))
        if isinstance(node, ast.BinOp):
            return apply_binary(node.op, literal_arithmetic(node.left), literal_arithmetic(node.right))
    except ArithmeticRefused as exc:
        raise DecodeError(str(exc)) from None
    raise DecodeError(f"unsupported expression {type(node).__name__}")


def call_name(func: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _resolve_call(node: ast.Call) -> dict[str, Any]:
    # Positional arguments are dropped silently (upstream reads only ``keywords``); ``**kwargs`` has arg None.
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _resolve_value(keyword.value)
    return {call_name(node.func): arguments}


def _resolve_value(node: ast.AST) -> Any:
    """Mirror of upstream ``resolve_ast_by_type``, branch for branch."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # Quirk: upstream negates ``operand.value`` whatever the operator is: ``+5``, ``~5`` and ``not 5`` all give
        # -5, ``not True`` gives -1; an operand without a numeric ``.value`` raises.
        operand = node.operand
        if not isinstance(operand, ast.Constant):
            raise DecodeError("unary operator on a non-constant")
        value = operand.value
        if isinstance(value, bool) or isinstance(value, (int, float, complex)):
            return -value
        raise DecodeError(f"bad operand for unary -: {type(value).__name__}")
    if isinstance(node, ast.List):
        return [_resolve_value(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise DecodeError("Unsupported AST type: dict unpacking")
            resolved_key = _resolve_value(key)
            try:
                hash(resolved_key)
            except TypeError:
                raise DecodeError("unhashable dict key") from None
            result[resolved_key] = _resolve_value(value)
        return result
    if isinstance(node, ast.BinOp):
        # Upstream: ``eval(ast.unparse(node))``; here only literal arithmetic is computed, never evaluated.
        try:
            return literal_arithmetic(node)
        except DecodeError:
            raise
        except Exception as exc:  # ZeroDivisionError, TypeError, OverflowError, ...
            raise DecodeError(f"cannot evaluate {type(exc).__name__}") from None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        if not node.keywords:
            return {call_name(node.func): {}}
        return _resolve_call(node)
    if isinstance(node, ast.Tuple):
        return tuple(_resolve_value(element) for element in node.elts)
    if isinstance(node, ast.Subscript):
        # Upstream's first attempt (``node.body``) always fails, so the fallback text is what is kept.
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    # ast.Lambda: upstream indexes ``lambda.body[0]`` and raises; everything else is "Unsupported AST type".
    raise DecodeError(f"Unsupported AST type: {type(node)}")


def decode_calls(text: str | None) -> list[dict[str, Any]]:
    """Parse prepared text as a Python list (or tuple/set) of calls. Raises DecodeError like the official decoder."""
    if text is None:
        raise DecodeError("Invalid syntax. Failed to decode AST. compile() arg 1 must be a string, bytes or AST object")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
        raise DecodeError(f"Invalid syntax. Failed to decode AST. {exc}") from None
    body = tree.body
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        # Upstream reads ``body.elts``: only list, tuple and set displays have it.
        raise DecodeError(f"'{type(body).__name__}' object has no attribute 'elts'")
    calls: list[dict[str, Any]] = []
    try:
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise DecodeError("element is not a call")
            if not element.keywords:
                calls.append({call_name(element.func): {}})
            else:
                calls.append(_resolve_call(element))
    except RecursionError:
        raise DecodeError("output nested too deeply") from None
    return calls
