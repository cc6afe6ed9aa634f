"""BFCL's Python prompting decoder on set-operator expressions and on text too deep for upstream to render.

``tests/data/bfcl_decoder_expression_oracle.jsonl``, frozen from the official bfcl-eval 2026.3.23 (CI has no oracle):

- ``expression`` rows: ``default_decode_ast_prompting`` on arguments holding set displays with operators
  (``{1, 2} | {3}``, ``&``, ``-``, ``^``, unhashable elements, sets inside lists and dicts), sequence arithmetic;
  ``official`` is the decoded value in a JSON-safe form (sets as sorted reprs), None where it raised. Rows marked
  ``deviation`` call a builtin (``set() | {1}``), which upstream's ``eval`` runs and this decoder refuses.
- ``depth`` rows: long operator chains (``1+1+...``, ``1**1**...``), deep subscripts (``x[0][0]...``) at several
  nestings (lists, tuples, dicts, nested calls), each at lengths around the point where upstream's
  ``ast.unparse`` runs out of stack, with whether a real ``bfcl evaluate`` run (the CLI, Python 3.11, recursion limit
  1,000) reported ``ast_decoder:decoder_failed``. The decoder must agree whatever the depth of its own stack.
- ``java_js`` rows: the Java and JavaScript decoders (``default_decode_ast_prompting`` with tree-sitter) on comments
  in every position of an argument and of its value, empty arguments and empty statements.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
ORACLE_FILE = REPO / "tests" / "data" / "bfcl_decoder_expression_oracle.jsonl"
ROWS = [json.loads(line) for line in ORACLE_FILE.read_text().splitlines()]
decoding = scorer("bfcl", "decoding")


def plain(value):
    """The oracle's JSON-safe form of a decoded value."""
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted(map(repr, value))}
    if isinstance(value, tuple):
        return {"__tuple__": [plain(x) for x in value]}
    if isinstance(value, list):
        return [plain(x) for x in value]
    if isinstance(value, dict):
        return {repr(k): plain(x) for k, x in value.items()}
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value if not isinstance(value, int) or abs(value) < 2 ** 53 else repr(value)
    return {"__repr__": repr(value)}


def decoded_or_none(text):
    try:
        return plain(decoding.decode(text, "python"))
    except decoding.DecodeError:
        return None


def at_depth(frames: int, function):
    """Call ``function`` with ``frames`` more frames on the stack."""
    return function() if frames <= 0 else at_depth(frames - 1, function)


def test_the_oracle_rows_cover_both_classes():
    depth = [row for row in ROWS if row["kind"] == "depth"]
    assert len({row["shape"] for row in depth}) >= 15
    assert sum(row["official_decoder_failed"] for row in depth) >= 20 and not all(
        row["official_decoder_failed"] for row in depth)
    assert sum(1 for row in ROWS if row["kind"] == "expression" and row["official"] is not None) >= 40


def test_set_operator_expressions_decode_as_upstream():
    for row in ROWS:
        if row["kind"] != "expression":
            continue
        ours = decoded_or_none(row["text"])
        if row["deviation"]:
            assert ours is None and row["official"] is not None, row["text"]  # eval calls set(); here refused
        else:
            assert ours == row["official"], row["text"]


@pytest.mark.parametrize("extra_frames", [0, 120, 400])
def test_deep_text_fails_where_bfcl_evaluate_fails_whatever_the_stack(extra_frames):
    assert sys.getrecursionlimit() >= 1000
    mismatches = []
    for row in ROWS:
        if row["kind"] != "depth":
            continue
        failed = at_depth(extra_frames, lambda: decoded_or_none(row["text"])) is None
        if failed != row["official_decoder_failed"]:
            mismatches.append((row["shape"], row["n"], row["official_decoder_failed"]))
    assert not mismatches, mismatches
    assert sys.getrecursionlimit() >= 1000  # the limit the render borrowed is given back


def test_deep_text_leaves_the_recursion_limit_alone():
    before = sys.getrecursionlimit()
    assert decoded_or_none("f(a=" + "+".join(["1"] * 2000) + ")") is None
    assert sys.getrecursionlimit() == before


def test_java_and_javascript_comments_and_empty_arguments_decode_as_upstream():
    """``java_js`` rows: values of many shapes (literals, arrays, object creations, generics, lambdas, casts,
    operators) with comments in every position, empty arguments and empty statements. tree-sitter keeps comments as
    nodes: one before the value is read in its place, one inside a Java value stays in its text or is an argument of
    ``new T(...)``; a comment around a short statement does not lengthen it."""
    rows = [row for row in ROWS if row["kind"] == "java_js"]
    assert len(rows) > 700 and sum("/*" in row["text"] for row in rows) > 500
    differ = []
    for row in rows:
        try:
            ours = plain(decoding.decode(row["text"], row["language"]))
        except decoding.DecodeError:
            ours = None
        if ours != row["official"]:
            differ.append(row["text"])
    assert not differ, differ[:10]
