"""BFCL FC mode (native tool calling) against the official FC path of bfcl-eval 2026.3.23.

``tests/data/bfcl_fc_oracle_cases.jsonl.gz``: 2,699 hand-made FC records over real entries of the 13 single-turn
categories (gold with ``_`` for ``.``, dotted names, reordered / dropped / extra calls and parameters, retyped values
including non-string Java/JavaScript values, an empty argument key, arguments that are not JSON or not a JSON string,
text answers, ``[]``, ``[{}]``) with the verdict of the official evaluator for an FC model with ``underscore_to_dot``
(``OpenAICompletionsHandler.decode_ast`` and ``ast_checker`` as ``gpt-4.1-2025-04-14-FC``). Drawn from 8,497 such
records, all of which agree (checked outside this repository with the official package installed).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from pytest_toolbench.contract.suite import Generation, SuiteContext
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
bfcl = scorer("bfcl")
fc = scorer("bfcl", "single_turn.fc")
categories = scorer("bfcl", "categories")
ROWS = [json.loads(line) for line in gzip.decompress((REPO / "tests/data/bfcl_fc_oracle_cases.jsonl.gz").read_bytes())
        .decode("utf-8").splitlines()]


@pytest.fixture(scope="module")
def cases(shared_data):
    return {c.case_id: c for c in bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": list(categories.CATEGORIES)}))}


def generation_of(result):
    """A replayed FC record (a list), or a native reply without calls (its text)."""
    return fc.replay_generation(result) if isinstance(result, list) else Generation(text=result, tool_calls=[])


def test_the_oracle_rows_cover_every_fc_rule():
    seen = Counter((row["label"], row["official_error_type"]) for row in ROWS)
    for label, error_type in [("gold", None), ("dotted", "simple_function_checker:wrong_func_name"),
                              ("retyped", "type_error:java"), ("retyped", "type_error:js"),
                              ("empty_key", "irrelevance_error:decoder_success"),
                              ("bad_json", "ast_decoder:decoder_failed"), ("args_dict", "ast_decoder:decoder_failed"),
                              ("args_list", "ast_decoder:decoder_wrong_output_format"), ("text", None),
                              ("empty", "relevance_error:decoder_failed")]:
        assert seen[(label, error_type)], (label, error_type)


def test_fc_verdicts_equal_the_official_fc_path(cases):
    mismatches = []
    for row in ROWS:
        verdict = bfcl.score(cases[row["id"]], generation_of(row["result"]))
        if (verdict.passed, verdict.error_type) != (row["official_valid"], row["official_error_type"]):
            mismatches.append((row["id"], row["label"], row["official_error_type"], verdict.error_type))
        assert verdict.labels["mode"] == "fc"
    assert not mismatches, f"{len(mismatches)} of {len(ROWS)} differ: {mismatches[:8]}"


def test_gold_in_native_mode_passes_every_case_but_the_known_defects(cases):
    defects = set(yaml.safe_load((REPO / "suites/bfcl/known_defects.yaml").read_text()))
    failing = set()
    for case in cases.values():
        if case.payload["ground_truth"] is None:
            calls = [] if "irrelevance" in case.category else [{"name": case.payload["function"][0]["name"]
                                                                   .replace(".", "_"), "arguments": {}}]
        else:
            calls = fc.gold_fc_calls(case.payload["ground_truth"], case.payload["function"],
                                     categories.language_of(case.category))
        verdict = bfcl.score(case, Generation(text="", tool_calls=calls))
        if not verdict.passed:
            failing.add(case.case_id)
    assert failing <= defects, sorted(failing - defects)[:10]


def test_native_calls_and_replayed_records_are_read_alike(cases):
    case = cases["simple_python_1"]
    native = Generation(text="", tool_calls=[{"name": "math_factorial", "arguments": {"number": 5}}])
    record = fc.replay_generation([{"math_factorial": "{\"number\": 5}"}])
    assert bfcl.score(case, native).passed and bfcl.score(case, record).passed
    # a reply whose calls could not be parsed does not decode: a failure, and "no call" for irrelevance
    broken = Generation(text="<tool_call>{oops</tool_call>", tool_calls=None, parse_error="bad JSON")
    assert bfcl.score(case, broken).error_type == "ast_decoder:decoder_failed"


def test_a_native_request_carries_no_bfcl_system_prompt(cases):
    case = cases["simple_python_1"]
    request = bfcl.build_request(case)
    assert request.messages[0]["role"] == "system"
    assert list(request.native_messages) == case.payload["question"][0]
    assert request.tools[0]["function"]["name"] == "math_factorial"


def test_a_text_answer_in_an_fc_result_file_is_read_as_the_fc_handler_reads_it(cases, tmp_path):
    folder = tmp_path / "result" / "gpt-x-FC" / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_simple_python_result.json").write_text(
        json.dumps({"id": "simple_python_1", "result": [{"math_factorial": "{\"number\": 5}"}]}) + "\n"
        + json.dumps({"id": "simple_python_2", "result": "[calculate_hypotenuse(x=4, y=5)]"}) + "\n")
    outputs = bfcl.replay_outputs(tmp_path / "result")
    assert bfcl.score(cases["simple_python_1"], outputs["simple_python_1"]).passed
    # officially a text in an FC record does not decode, even when it reads as Python calls
    verdict = bfcl.score(cases["simple_python_2"], outputs["simple_python_2"])
    assert verdict.error_type == "ast_decoder:decoder_failed" and verdict.labels["mode"] == "fc"


def test_tl_labels_of_fc_verdicts_compare_names_as_bfcl_does(shared_data):
    labelled = bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": ["simple_python"], "libraries": ["tl_failures"]}))
    case = next(c for c in labelled if "." in c.payload["function"][0]["name"])
    name = case.payload["function"][0]["name"].replace(".", "_")
    verdict = bfcl.score(case, Generation(text="", tool_calls=[{"name": name, "arguments": {"zz_unknown": 1}}]))
    assert not verdict.passed and verdict.labels["tl_category"] not in ("tool_hallucination", "wrong_tool")
