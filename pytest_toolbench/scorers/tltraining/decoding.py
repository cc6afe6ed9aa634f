"""Decoding model output with an explicit, ordered parser registry; Python-call text (BFCL ground truth,
TL-CodeLLaMA-2 output)."""

from __future__ import annotations

import ast
import json
import operator
import re
from typing import Any, Callable, Mapping, Sequence

from ...parsing.tool_calls import ParseError, parse_hermes, parse_llama3_json, parse_mistral, parse_pythonic
from ..rotbench.decoding import parse_react

# ----------------------------------------------------------------------------------------------------------------
# Python-call text (BFCL ground truth, TL-CodeLLaMA-2 output): literals only, never evaluated

_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


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


def parse_python_calls(text: str, signatures: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """``name(k=v, ...)`` calls, one per line or as a list/tuple; raises ``ValueError`` when not decodable.

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
        name = _call_name(node.func)
        arguments: dict[str, Any] = {}
        order = list((signatures or {}).get(name, ()))
        if len(node.args) > len(order) or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"positional arguments to {name!r} that its signature cannot name")
        for param, value in zip(order, node.args):
            try:
                arguments[param] = _literal(value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, ZeroDivisionError,
                    OverflowError):
                raise ValueError(f"argument {param!r} is not a literal") from None
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("**kwargs are not a call")
            try:
                arguments[keyword.arg] = _literal(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, ZeroDivisionError,
                    OverflowError):
                raise ValueError(f"argument {keyword.arg!r} is not a literal") from None
        calls.append({"name": name, "arguments": arguments})
    if not calls:
        raise ValueError("no call")
    return calls


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_call_name(node.value)}.{node.attr}"
    raise ValueError("call target is not a name")


# ----------------------------------------------------------------------------------------------------------------
# Decoding

_CHATGLM_CALL = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*\n\s*(\{.*\})\s*$", re.DOTALL)


def decode(text: str, native: Sequence[Mapping[str, Any]] | None = None,
           signatures: Mapping[str, Sequence[str]] | None = None) -> tuple[str, list[dict] | None, str]:
    """``(parser, calls, problem)``: the first decoder of the registry that recognises the output wins.

    ``calls`` is ``None`` when the recognised format could not be decoded (a format error) and ``[]`` when the
    output holds no call at all.
    """
    if native:
        calls = [{"name": c.get("name"), "arguments": c.get("arguments") or {}} for c in native
                 if isinstance(c, Mapping)]
        valid = all(isinstance(c["name"], str) and isinstance(c["arguments"], Mapping) for c in calls)
        return "native", (calls if valid else None), "" if valid else "malformed native tool call"
    for name, parser, marker in (("hermes", parse_hermes, "<tool_call>"), ("mistral", parse_mistral, "[TOOL_CALLS]")):
        if marker in text:
            try:
                return name, parser(text), ""
            except ParseError as exc:
                return name, None, str(exc)
    if "Action:" in text or "Action Input:" in text:
        action, arguments, failure = parse_react(text)
        if failure is not None:
            if isinstance(arguments, Mapping) and action is not None:
                # An empty {} decodes; whether it fails is the dataset's rule (RoTBench's empty-input quirk).
                return "react", [{"name": action, "arguments": dict(arguments)}], ""
            return "react", None, failure
        return "react", [{"name": action, "arguments": arguments}], ""
    stripped = text.strip()
    if stripped.startswith("{") or "<|python_tag|>" in stripped:
        try:
            return "llama3_json", parse_llama3_json(stripped), ""
        except ParseError as exc:
            return "llama3_json", None, str(exc)
    if stripped.startswith("["):
        try:
            return "pythonic", parse_pythonic(stripped), ""
        except ParseError as exc:
            return "pythonic", None, str(exc)
    chatglm = _CHATGLM_CALL.match(text)
    if chatglm:
        try:
            arguments = json.loads(chatglm.group(2))
        except (ValueError, RecursionError):
            arguments = None
        if isinstance(arguments, dict):
            return "chatglm", [{"name": chatglm.group(1), "arguments": arguments}], ""
    if "(" in stripped:
        try:
            return "python_call", parse_python_calls(stripped, signatures), ""
        except ValueError as exc:
            return "python_call", None, str(exc)
    return "none", [], ""
