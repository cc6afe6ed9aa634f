"""Constant arithmetic in model output is evaluated with bounds: refused, never a hang or a crash."""

from __future__ import annotations

import ast

import pytest

from pytest_toolbench.parsing.arithmetic import ArithmeticRefused, apply_binary, apply_unary
from pytest_toolbench.contract.suite import Case, Generation

from shipped import scorer

acebench = scorer("acebench")
bfcl = scorer("bfcl")


def binop(source: str):
    node = ast.parse(source, mode="eval").body
    return node.op, ast.literal_eval(node.left), ast.literal_eval(node.right)


@pytest.mark.parametrize("source, value", [("2*3", 6), ("1/4", 0.25), ("'a'+'b'", "ab"), ("10**50", 10 ** 50),
                                           ("7//2", 3), ("[1]*3", [1, 1, 1])])
def test_ordinary_arithmetic_is_computed(source, value):
    assert apply_binary(*binop(source)) == value


@pytest.mark.parametrize("op, left, right", [
    (ast.Div(), 1, 0), (ast.Pow(), 10, 10 ** 6), (ast.Mult(), "a", 10 ** 9), (ast.LShift(), 1, 10 ** 7),
    (ast.Mult(), [1], 10 ** 8), (ast.Sub(), "a", 1), (ast.Pow(), 10, 9999 * 9999)])
def test_absurd_or_failing_arithmetic_is_refused(op, left, right):
    with pytest.raises(ArithmeticRefused):
        apply_binary(op, left, right)


def test_unary_operators_fail_cleanly():
    assert apply_unary(ast.USub(), 5) == -5
    with pytest.raises(ArithmeticRefused):
        apply_unary(ast.Invert(), 1.5)


@pytest.mark.parametrize("text", ["[f(a=(10**9999)**9999)]", "[f(a=1/0)]", "[f(a='x'*10**10)]"])
def test_scorers_turn_huge_arithmetic_into_a_format_failure(text):
    ace = Case("en-normal_atom_number_0", "normal_atom_number",
               {"language": "en", "category": "normal_atom_number", "id": "normal_atom_number_0",
                "function": [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "integer"}},
                                                          "required": ["a"]}}],
                "ground_truth": {"f": {"a": 1}}, "question": "q"}, suite="acebench")
    verdict = acebench.score(ace, Generation(text=text))
    assert not verdict.passed
    case = Case("simple_python_0", "simple_python",
                {"id": "simple_python_0", "index": 0, "question": [[{"role": "user", "content": "q"}]],
                 "function": [{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
                     "a": {"type": "integer", "description": ""}}, "required": ["a"]}}],
                 "ground_truth": [{"f": {"a": [1]}}]}, suite="bfcl")
    verdict = bfcl.score(case, Generation(text=text))
    assert not verdict.passed and verdict.error_type == "ast_decoder:decoder_failed"
