"""The shared Python-call decoder (pytest_toolbench.parsing.python_calls): each dialect's quirks, as the scorers
decoded them before they shared one decoder (BFCL's ``default_decode_ast_prompting``, ACEBench's ``decode_ast`` and
its agent roles' ``decode_function_list``).

The table was recorded from the three decoders as they stood before the merge; the merge itself was checked on
300,568 generated inputs (gold answers of every BFCL python case and of ACEBench, mutated), old == new for every
decoder entry point.
"""

from __future__ import annotations

import ast
import dataclasses

import pytest

from pytest_toolbench.parsing.python_calls import (Dialect, PythonCallDecoder, PythonCallError, call_name,
                                                   strip_and_wrap)
from pytest_toolbench.scorer_lib.python_dialects import (ACEBENCH_AGENT, ACEBENCH_NORMAL, BFCL_PROMPTING,
                                                         prepare_acebench_agent)
from shipped import scorer

AceDecodeError = scorer("acebench", "decoding").DecodeError
decode_calls = scorer("acebench", "decoding").decode_calls
AgentDecodeError = scorer("acebench", "loop").AgentDecodeError
decode_agent_message = scorer("acebench", "loop").decode_agent_message
decode_python = scorer("bfcl", "decoding").decode_python
BfclDecodeError = scorer("bfcl", "decoders.common").DecodeError


QUIRKS = [
    ('[f(a=+5, b=~5, c=not 5, d=-True)]',
     ('ok', [{'f': {'a': -5, 'b': -5, 'c': -5, 'd': -1}}]),
     ('ok', [{'f': {'a': -5, 'b': -5, 'c': -5, 'd': -1}}]),
     ('ok', [{'f': {'a': -5, 'b': -5, 'c': -5, 'd': -1}}])),
    ('f(a=1)',
     ('ok', [{'f': {'a': 1}}]),
     ('error', "'Call' object has no attribute 'elts'"),
     ('ok', [{'f': {'a': 1}}])),
    ('(f(a=1),)',
     ('error', 'list element is not a call (Tuple)'),
     ('ok', [{'f': {'a': 1}}]),
     ('ok', [{'f': {'a': 1}}])),
    ('{f(a=1)}',
     ('error', 'list element is not a call (Set)'),
     ('ok', [{'f': {'a': 1}}]),
     ('ok', [])),
    ('42',
     ('error', 'list element is not a call (Constant)'),
     ('error', "'Constant' object has no attribute 'elts'"),
     ('ok', [])),
    ('[42]',
     ('error', 'list element is not a call (Constant)'),
     ('error', 'element is not a call'),
     ('ok', [])),
    ('[f(a=g())]',
     ('ok', [{'f': {'a': 'g()'}}]),
     ('ok', [{'f': {'a': {'g': {}}}}]),
     ('ok', [{'f': {'a': 'g()'}}])),
    ('[f(a=g(b=1))]',
     ('ok', [{'f': {'a': {'g': {'b': 1}}}}]),
     ('ok', [{'f': {'a': {'g': {'b': 1}}}}]),
     ('ok', [{'f': {'a': {'g': {'b': 1}}}}])),
    ('[f(1, a=2, **k)]',
     ('ok', [{'f': {'a': 2, None: 'k'}}]),
     ('ok', [{'f': {'a': 2, None: 'k'}}]),
     ('ok', [{'f': {'a': 2, None: 'k'}}])),
    ('[f(a=x[0])]',
     ('ok', [{'f': {'a': 'x[0]'}}]),
     ('ok', [{'f': {'a': 'x[0]'}}]),
     ('ok', [{'f': {'a': 'x[0]'}}])),
    ('[f(a={1: 2})]',
     ('ok', [{'f': {'a': {1: 2}}}]),
     ('ok', [{'f': {'a': {1: 2}}}]),
     ('ok', [{'f': {'a': {1: 2}}}])),
    ('[f(a={[1]: g()})]',
     ('error', 'unhashable dict key'),
     ('error', 'unhashable dict key'),
     ('error', 'unhashable dict key')),
    ("[f(a={[1]: -'x'})]",
     ('error', 'bad operand type for unary -: str'),
     ('error', 'unhashable dict key'),
     ('error', 'unhashable dict key')),
    ("[f(a=f'{1}' + 'a')]",
     ('ok', [{'f': {'a': '1a'}}]),
     ('error', 'unsupported expression JoinedStr'),
     ('error', 'unsupported expression JoinedStr')),
    ('[f(a=1/0)]',
     ('error', 'binary operation failed: ZeroDivisionError: division by zero'),
     ('error', 'binary operation failed: ZeroDivisionError: division by zero'),
     ('error', 'binary operation failed: ZeroDivisionError: division by zero')),
    ('[f(a={[1]: 2} | {})]',
     ('error', 'unhashable dict key'),
     ('error', 'cannot evaluate TypeError'),
     ('error', 'cannot evaluate TypeError')),
    ("[f(a=-'x')]",
     ('error', 'bad operand type for unary -: str'),
     ('error', 'bad operand for unary -: str'),
     ('error', 'unary operator on an unsupported operand')),
    ('[f(a=-x)]',
     ('error', 'unary operator on a non-constant'),
     ('error', 'unary operator on a non-constant'),
     ('error', 'unary operator on an unsupported operand')),
    ('[f(a=lambda: 1)]',
     ('error', 'unsupported value syntax: Lambda'),
     ('error', "Unsupported AST type: <class 'ast.Lambda'>"),
     ('error', "Unsupported AST type: <class 'ast.Lambda'>")),
    ('[f(a={**k})]',
     ('error', 'dict unpacking is not supported'),
     ('error', 'Unsupported AST type: dict unpacking'),
     ('error', 'dict unpacking')),
    ('[f(a={**k} | {})]',
     ('error', 'dict unpacking inside an expression'),
     ('error', 'dict unpacking in an expression'),
     ('error', 'dict unpacking in an expression')),
    ('[f(a=x + 1)]',
     ('error', 'binary operation over non-constant syntax (Name)'),
     ('error', 'unsupported expression Name'),
     ('error', 'unsupported expression Name')),
    ('[f(a=...)]',
     ('ok', [{'f': {'a': '...'}}]),
     ('ok', [{'f': {'a': '...'}}]),
     ('ok', [{'f': {'a': '...'}}])),
    (' [f(a=1)]',
     ('ok', [{'f': {'a': 1}}]),
     ('error', 'Invalid syntax. Failed to decode AST. unexpected indent (<unknown>, line 1)'),
     ('ok', [{'f': {'a': 1}}])),
    ('[f(a=1)] ',
     ('ok', [{'f': {'a': 1}}]),
     ('ok', [{'f': {'a': 1}}]),
     ('error', "invalid syntax: unmatched ']' (<unknown>, line 1)")),
    ("'[f(a=1)]'",
     ('error', 'list element is not a call (Constant)'),
     ('error', "'Constant' object has no attribute 'elts'"),
     ('ok', [{'f': {'a': 1}}])),
    ('```[f(a=1)]```',
     ('ok', [{'f': {'a': 1}}]),
     ('error', 'Invalid syntax. Failed to decode AST. invalid syntax (<unknown>, line 1)'),
     ('error', 'invalid syntax: invalid syntax (<unknown>, line 1)')),
    ('[f(a=10**100000)]',
     ('error', 'integer power too large to evaluate safely'),
     ('error', 'integer power too large to evaluate safely'),
     ('error', 'integer power too large to evaluate safely')),
    ('[f(a=[1]*10**7)]',
     ('error', 'repeated sequence too large to evaluate safely'),
     ('error', 'repeated sequence too large to evaluate safely'),
     ('error', 'repeated sequence too large to evaluate safely')),
    ('f()()',
     ('ok', [{'': {}}]),
     ('error', "'Call' object has no attribute 'elts'"),
     ('ok', [{'': {}}])),
    ('[a.b.c(x=1)]',
     ('ok', [{'a.b.c': {'x': 1}}]),
     ('ok', [{'a.b.c': {'x': 1}}]),
     ('ok', [{'a.b.c': {'x': 1}}])),
    ('[f(a=(1, 2))]',
     ('ok', [{'f': {'a': (1, 2)}}]),
     ('ok', [{'f': {'a': (1, 2)}}]),
     ('ok', [{'f': {'a': (1, 2)}}])),
    ('[f(a=',
     ('error', "not a Python expression: SyntaxError: closing parenthesis ']' does not match opening parenthesis "
               "'(' (<unknown>, line 1)"),
     ('error', "Invalid syntax. Failed to decode AST. '(' was never closed (<unknown>, line 1)"),
     ('error', "invalid syntax: '(' was never closed (<unknown>, line 1)")),
    ('[f(a=1)]\n',
     ('ok', [{'f': {'a': 1}}]),
     ('ok', [{'f': {'a': 1}}]),
     ('error', "invalid syntax: unmatched ']' (<unknown>, line 1)")),
]


def _run(decode, text):
    try:
        return ("ok", decode(text))
    except Exception as exc:  # noqa: BLE001 - the error text is part of the expectation
        return ("error", str(exc))


@pytest.mark.parametrize(("text", "bfcl", "acebench", "agent"), QUIRKS, ids=[repr(row[0]) for row in QUIRKS])
def test_each_dialect_keeps_its_upstream_quirks(text, bfcl, acebench, agent):
    assert _run(decode_python, text) == bfcl
    assert _run(decode_calls, text) == acebench
    assert _run(decode_agent_message, text) == agent


def test_each_scorer_raises_its_own_error_class():
    with pytest.raises(BfclDecodeError):
        decode_python("[f(a=")
    with pytest.raises(AceDecodeError):
        decode_calls("[f(a=")
    with pytest.raises(AgentDecodeError):
        decode_agent_message("[f(a=")
    with pytest.raises(PythonCallError):
        PythonCallDecoder(BFCL_PROMPTING).decode("[f(a=")


def test_presets_differ_only_where_flags_say():
    flags = {f.name for f in dataclasses.fields(Dialect)} - {"name", "error", "messages"}
    assert {name for name in flags if getattr(ACEBENCH_NORMAL, name) != getattr(BFCL_PROMPTING, name)} == {
        "prepare", "bare_call", "call_without_keywords", "wrap_render_errors", "hash_key_before_value",
        "wrap_arithmetic_failures", "fstrings", "sets_in_expressions", "upstream_frames"}
    assert {name for name in flags if getattr(ACEBENCH_AGENT, name) != getattr(ACEBENCH_NORMAL, name)} == {
        "prepare", "bare_call", "containers", "other_expression_is_empty", "call_without_keywords",
        "arguments_in_comprehension"}


def test_text_preparation():
    assert strip_and_wrap("``` f(a=1)\n") == "[f(a=1)]"
    assert prepare_acebench_agent(" f(a=1)") == "f(a=1)"
    assert prepare_acebench_agent("[f(a=1)] ") == "f(a=1)] "  # the trailing space keeps the bracket (upstream)
    with pytest.raises(AgentDecodeError, match="empty message"):
        decode_agent_message("")
    with pytest.raises(AceDecodeError, match="compile"):
        decode_calls(None)


def test_call_name_keeps_the_attribute_chain_only():
    assert call_name(ast.parse("a.b.c", mode="eval").body) == "a.b.c"
    assert call_name(ast.parse("f().g", mode="eval").body) == "g"
    assert call_name(ast.parse("x[0]", mode="eval").body) == ""


@pytest.mark.parametrize("text", ["[f(a=" + "+".join(["1"] * 5000) + ")]", "[f(a=x" + "[0]" * 3000 + ")]",
                                  "[f(a=0+" + "-" * 3000 + "1)]", "[" * 250 + "]" * 250])
def test_deep_input_is_a_decode_error_never_a_crash(text):
    for decode, error in ((decode_python, BfclDecodeError), (decode_calls, AceDecodeError),
                          (decode_agent_message, AgentDecodeError)):
        try:
            decode(text)
        except error:
            pass
