"""BFCL: our scorer against verdicts of the official bfcl-eval 2026.3.23 (decoder + ast_checker / relevance runner).

tests/data/bfcl_oracle_cases.jsonl holds hand-made outputs (mutations of gold answers: type coercions, string
normalisation, optional parameters, parallel order, positional arguments, code fences, Java/JS literals, wrong
names, extra parameters, relevance texts, unary/binary operators, huge ints, garbage) with the verdict and error
type the official code gave them. "source": "samples" rows refer to suites/bfcl/samples; "data" rows to the real
data under TOOLBENCH_DATA. An official error type starting with CRASH means the official evaluation raised: ours must
fail the case without raising.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import Generation, SuiteContext
from conftest import shared_data_dir

from shipped import scorer

bfcl = scorer("bfcl")


REPO = Path(__file__).resolve().parents[1]
ORACLE_FILE = REPO / "tests" / "data" / "bfcl_oracle_cases.jsonl"
SAMPLES = REPO / "suites" / "bfcl" / "samples"


def _rows(source: str) -> list[dict]:
    return [row for row in map(json.loads, ORACLE_FILE.read_text(encoding="utf-8").splitlines()) if row["source"] == source]


def _check(rows: list[dict], cases: dict) -> None:
    mismatches = []
    for row in rows:
        verdict = bfcl.score(cases[row["id"]], Generation(text=row["output"]))
        expected_type = row["official_error_type"]
        if expected_type and expected_type.startswith("CRASH"):
            ok = not verdict.passed
        else:
            ok = verdict.passed == row["official_passed"] and verdict.error_type == expected_type
        if not ok:
            mismatches.append((row["id"], row["label"], row["output"][:120], expected_type, verdict.error_type))
    assert not mismatches, f"{len(mismatches)} disagreements with the official checker: {mismatches[:10]}"


def test_oracle_file_covers_every_rule():
    rows = _rows("samples") + _rows("data")
    seen = Counter(row["official_error_type"] for row in rows)
    for error_type in (
        None, "ast_decoder:decoder_failed", "ast_decoder:decoder_wrong_output_format",
        "simple_function_checker:wrong_count", "simple_function_checker:wrong_func_name",
        "simple_function_checker:missing_required", "simple_function_checker:unexpected_param",
        "simple_function_checker:missing_optional", "multiple_function_checker:wrong_count",
        "parallel_function_checker_no_order:wrong_count", "parallel_function_checker_no_order:cannot_find_match",
        "type_error:simple", "type_error:nested", "value_error:string", "value_error:list/tuple",
        "value_error:dict_key", "value_error:dict_value", "value_error:others",
        "irrelevance_error:decoder_success", "relevance_error:decoder_failed",
    ):
        assert seen[error_type], f"no oracle row exercises {error_type}"
    labels = {row["label"] for row in rows}
    for label in ("greedy_parallel", "unary_plus", "unary_invert", "unary_double", "binop", "binop_huge",
                  "int_for_float", "bool_for_int", "fence_plain", "fence_python", "think", "positional",
                  "java_long_L", "java_array", "js_dict", "js_positional_true", "irr_emptylist", "rel_empty",
                  "string_norm", "string_substring", "dict_missing_key", "subscript", "nested_call"):
        assert label in labels, label


def test_agrees_with_official_on_samples():
    cases = {case.case_id: case for case in bfcl.load_cases(SuiteContext(SAMPLES, {}))}
    rows = _rows("samples")
    assert len(rows) > 150
    _check(rows, cases)


def test_agrees_with_official_on_real_data():
    data = shared_data_dir()
    if data is None or not (data / "bfcl").is_dir():
        pytest.skip("BFCL data not available (set TOOLBENCH_DATA)")
    cases = {case.case_id: case for case in bfcl.load_cases(SuiteContext(data / "bfcl", {}))}
    rows = _rows("data")
    assert len(rows) > 300
    _check(rows, cases)
