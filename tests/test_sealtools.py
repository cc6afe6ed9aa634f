"""SealTools scorer: the official parse and count rules on hand-made outputs (each pinned against the upstream code
it reproduces), the per-split figures, gold and replay runs, cases and prompts.

Upstream read for these tests: fairyshine/Seal-Tools @ ce753ecd ``LLM_Evaluation/src/llm_tools/evaluation/
{transform_output,calculate}.py`` and thunlp/ToLeaP @ b9507131 ``src/benchmark/sealtools/vllm_SealTools_eval.py``.
The expected counts of :data:`DIFFERENTIAL` were derived by reading that code and confirmed by running it on the
same outputs (outside this repository).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext
from conftest import REPO, shared_data_dir

from shipped import scorer

sealtools = scorer("sealtools")
aggregation = scorer("sealtools", "aggregation")
checker = scorer("sealtools", "checker")
decoding = scorer("sealtools", "decoding")
gold_module = scorer("sealtools", "gold")
loading = scorer("sealtools", "loading")
replay = scorer("sealtools", "replay")

SUITE_DIR = REPO / "suites" / "sealtools"
SAMPLES = SUITE_DIR / "samples"
TOLEAP, UPSTREAM = "toleap", "upstream"


def _data_dir() -> Path | None:
    data = shared_data_dir()
    if data is None or not (data / "sealtools" / "dataset_for_finetune" / "dev.json").is_file():
        return None
    return data / "sealtools"


# ------------------------------------------------------------------------------------------------ hand-made cases

WEATHER = [{"api": "getWeather", "parameters": {"city": "Paris", "days": 3}, "responses": ["API_call_0"]}]
INVOICE = [
    {"api": "createInvoice", "parameters": {"customer": "Acme", "amount": 250.5}, "responses": ["API_call_0"]},
    {"api": "emailInvoice", "parameters": {"invoice_id": "API_call_0", "email": "a@b.c"}, "responses": ["API_call_1"]},
]
REVOKE = [  # one API twice, as in test_out_domain-difficult-161
    {"api": "revokeAccess", "parameters": {"library": "numpy"}, "responses": ["API_call_0"]},
    {"api": "revokeAccess", "parameters": {"library": "scipy"}, "responses": ["API_call_1"]},
]
NOTE = [{"api": "sendNote", "parameters": {"text": "Don't panic", "urgent": True}, "responses": ["API_call_0"]}]
TOOLS = {"getWeather": ["city", "days", "unit"], "getNews": ["topic"], "createInvoice": ["customer", "amount"],
         "emailInvoice": ["invoice_id", "email"], "revokeAccess": ["library"], "sendNote": ["text", "urgent"]}


def make_case(gold, protocol: str = TOLEAP, split: str = "dev", tl: bool = True) -> Case:
    difficulty = "easy" if len(gold) == 1 else "difficult"
    payload = {"split": split, "difficulty": difficulty, "position": 0, "prompt": "p", "gold_text": repr(gold),
               "gold": gold, "signatures": {k: list(v) for k, v in TOOLS.items()},
               "nested": loading.is_nested(gold)}
    context = SuiteContext(SAMPLES, {"name": "sealtools", "libraries": ["tl_failures"] if tl else [],
                                     "options": {"protocol": protocol}})
    return Case(suite="sealtools", case_id=f"{split}-{difficulty}-0", category=f"{split}_{difficulty}",
                payload=payload, context=context)


def counts_of(gold, text: str, protocol: str = TOLEAP):
    verdict = sealtools.score(make_case(gold, protocol), Generation(text=text))
    if "upstream_crash" in verdict.counts:
        return "crash"
    keys = ("correct_format", "correct_api", "predict_api", "gold_api", "correct_param", "predict_param", "gold_param")
    return tuple(int(verdict.counts[k]) for k in keys)


def j(value) -> str:
    return json.dumps(value)


FAIL_W = (0, 0, 0, 1, 0, 0, 2)  # a format failure on WEATHER: only the gold counts
#: (rule pinned, gold, output, protocol, expected (format, c_api, p_api, g_api, c_param, p_param, g_param) | "crash")
DIFFERENTIAL = [
    ("exact JSON", WEATHER, j(WEATHER), TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("' → \" turns a Python literal into JSON", WEATHER, repr(WEATHER), UPSTREAM, (1, 1, 1, 1, 2, 2, 2)),
    ("' → \" breaks an apostrophe inside a value", NOTE, repr(NOTE), TOLEAP, (0, 0, 0, 1, 0, 0, 2)),
    ("True is not JSON", [dict(NOTE[0], parameters={"urgent": True})], repr([dict(NOTE[0], parameters={"urgent": True})]),
     TOLEAP, (0, 0, 0, 1, 0, 0, 1)),
    ("the escaped gold text parses", NOTE, gold_module.dump(NOTE), UPSTREAM, (1, 1, 1, 1, 2, 2, 2)),
    ("newlines are deleted (pretty JSON)", WEATHER, json.dumps(WEATHER, indent=2), UPSTREAM, (1, 1, 1, 1, 2, 2, 2)),
    ("\\r stays and is JSON whitespace", WEATHER, json.dumps(WEATHER, indent=2).replace("\n", "\r\n"), TOLEAP,
     (1, 1, 1, 1, 2, 2, 2)),
    ("prose around the list", WEATHER, "Sure!\n" + j(WEATHER) + "\nanything [else]", TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("brackets counted without quotes: ] in a value ends the span", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "a]b", "days": 3})]), TOLEAP, FAIL_W),
    ("balanced [ ] inside a value is harmless", WEATHER, j([dict(WEATHER[0], parameters={"city": "a[b]", "days": 3})]),
     TOLEAP, (1, 1, 1, 1, 1, 2, 2)),
    ("an unclosed list is an empty span", WEATHER, j(WEATHER)[:-1], UPSTREAM, FAIL_W),
    ("only the first [{\"api\" counts", WEATHER, '[{"api": oops}] ' + j(WEATHER), TOLEAP, FAIL_W),
    ("a thought with a call-like list is the first match", WEATHER, '<think>[{"api": "getWeather"}]</think>' + j(WEATHER),
     TOLEAP, FAIL_W),
    ("the list must start with {\"api\" (key order matters)", WEATHER,
     j([{"parameters": {"city": "Paris", "days": 3}, "api": "getWeather", "responses": []}]), TOLEAP, FAIL_W),
    ("\"api\" is case-sensitive", WEATHER, j(WEATHER).replace('"api"', '"API"'), TOLEAP, FAIL_W),
    ("an empty list is not found", WEATHER, "[]", TOLEAP, FAIL_W),
    ("ToLeaP gate: arguments instead of parameters", WEATHER,
     j([{"api": "getWeather", "arguments": {"city": "Paris", "days": 3}, "responses": []}]), TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("Seal-Tools gate: needs parameters", WEATHER,
     j([{"api": "getWeather", "arguments": {"city": "Paris", "days": 3}, "responses": []}]), UPSTREAM, FAIL_W),
    ("ToLeaP gate: a singular response key is enough", WEATHER,
     j([{"api": "getWeather", "parameters": {"city": "Paris", "days": 3}, "response": "x"}]), TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("Seal-Tools gate: needs responses", WEATHER,
     j([{"api": "getWeather", "parameters": {"city": "Paris", "days": 3}, "response": "x"}]), UPSTREAM, FAIL_W),
    ("the gate is a substring test (a value can supply the word)", WEATHER,
     j([{"api": "getWeather", "parameters": {"city": "Paris", "days": "3 responses"}}]), UPSTREAM, (1, 1, 1, 1, 1, 2, 2)),
    ("no responses word at all fails both gates", WEATHER,
     j([{"api": "getWeather", "parameters": {"city": "Paris", "days": 3}}]), TOLEAP, FAIL_W),
    ("str(pred) == str(gold): 3 and \"3\" are equal", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "days": "3"})]), TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("str(pred) == str(gold): 3.0 and 3 are not", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "days": 3.0})]), TOLEAP, (1, 1, 1, 1, 1, 2, 2)),
    ("str(True) == \"True\"", NOTE, gold_module.dump([dict(NOTE[0], parameters={"text": "Don't panic", "urgent": "True"})]),
     TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("\"true\" is not str(True)", NOTE, gold_module.dump([dict(NOTE[0], parameters={"text": "Don't panic", "urgent": "true"})]),
     TOLEAP, (1, 1, 1, 1, 1, 2, 2)),
    ("values are case-sensitive", WEATHER, j([dict(WEATHER[0], parameters={"city": "paris", "days": 3})]), TOLEAP,
     (1, 1, 1, 1, 1, 2, 2)),
    ("NaN parses and is a wrong value", WEATHER, j(WEATHER).replace("3}", "NaN}"), TOLEAP, (1, 1, 1, 1, 1, 2, 2)),
    ("gold never consumed: a call predicted twice counts twice", WEATHER, j(WEATHER + WEATHER), TOLEAP,
     (1, 2, 2, 1, 4, 4, 2)),
    ("a repeated gold API is compared with its first gold call", REVOKE, j(REVOKE), UPSTREAM, (1, 2, 2, 2, 1, 2, 2)),
    ("order of calls does not matter", INVOICE, j(INVOICE[::-1]), UPSTREAM, (1, 2, 2, 2, 4, 4, 4)),
    ("a wrong API counts its parameters as predicted", INVOICE,
     j([INVOICE[0], dict(INVOICE[1], api="mailInvoice")]), TOLEAP, (1, 1, 2, 2, 2, 4, 4)),
    ("API names are compared exactly (a trailing space)", WEATHER, j([dict(WEATHER[0], api="getWeather ")]), TOLEAP,
     (1, 0, 1, 1, 0, 2, 2)),
    ("a parameter the gold call lacks is predicted, not correct", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "days": 3, "unit": "C"})]), TOLEAP, (1, 1, 1, 1, 2, 3, 2)),
    ("a missing parameter lowers recall only", INVOICE,
     j([INVOICE[0], dict(INVOICE[1], parameters={"invoice_id": "API_call_0"})]), TOLEAP, (1, 2, 2, 2, 3, 3, 4)),
    ("a wrong API_call_k reference is a wrong value", INVOICE,
     j([INVOICE[0], dict(INVOICE[1], parameters={"invoice_id": "API_call_1", "email": "a@b.c"})]), TOLEAP,
     (1, 2, 2, 2, 3, 4, 4)),
    ("parameters that are not a dict count nothing", WEATHER, j([dict(WEATHER[0], parameters=["Paris", 3])]), TOLEAP,
     (1, 1, 1, 1, 0, 0, 2)),
    ("ToLeaP counts arguments and parameters both", WEATHER,
     j([dict(WEATHER[0], arguments={"city": "Paris", "days": 3})]), TOLEAP, (1, 1, 1, 1, 4, 4, 2)),
    ("Seal-Tools ignores arguments", WEATHER, j([dict(WEATHER[0], arguments={"city": "Paris", "days": 3})]), UPSTREAM,
     (1, 1, 1, 1, 2, 2, 2)),
    ("an element without api adds nothing", WEATHER, j(WEATHER + [{"parameters": {"city": "Rome"}}]), TOLEAP,
     (1, 1, 1, 1, 2, 2, 2)),
    ("a string element without \"api\" adds nothing", WEATHER, j(WEATHER + ["foo"]), TOLEAP, (1, 1, 1, 1, 2, 2, 2)),
    ("a list element without \"api\" adds nothing", WEATHER, j(WEATHER + [["x", "apis"]]), UPSTREAM, (1, 1, 1, 1, 2, 2, 2)),
    ("a string element containing \"api\" crashes upstream", WEATHER, j(WEATHER + ["call the api"]), TOLEAP, "crash"),
    ("a list element holding \"api\" crashes upstream", WEATHER, j(WEATHER + [["api"]]), UPSTREAM, "crash"),
    ("a number element crashes upstream", WEATHER, j(WEATHER + [5]), TOLEAP, "crash"),
    ("null crashes upstream", WEATHER, j(WEATHER + [None]), UPSTREAM, "crash"),
    ("a lone surrogate escape cannot be written (write_jsonl)", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "days": "@"})]).replace("@", "\\ud800"), TOLEAP, "crash"),
    ("a lone surrogate in an element without api still stops the write", WEATHER,
     j(WEATHER + [{"note": "@"}]).replace("@", "\\udc00"), UPSTREAM, "crash"),
    ("a lone surrogate in a key stops the write", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "@": 3})]).replace("@", "\\ud83d"), TOLEAP, "crash"),
    ("a surrogate pair escape is one character and writes", WEATHER,
     j([dict(WEATHER[0], parameters={"city": "Paris", "days": 3, "x": "@"})]).replace("@", "\\ud83d\\ude00"),
     TOLEAP, (1, 1, 1, 1, 2, 3, 2)),
    ("ToLeaP writes no raw text: a surrogate outside the list is harmless", WEATHER, "\ud800 " + j(WEATHER), TOLEAP,
     (1, 1, 1, 1, 2, 2, 2)),
    ("Seal-Tools writes the raw text: a surrogate outside the list stops it", WEATHER, "\ud800 " + j(WEATHER),
     UPSTREAM, "crash"),
    ("a dict api value never matches", WEATHER, j([dict(WEATHER[0], api={"name": "getWeather"})]), TOLEAP,
     (1, 0, 1, 1, 0, 2, 2)),
]


@pytest.mark.parametrize("rule, gold, text, protocol, expected", DIFFERENTIAL, ids=[row[0] for row in DIFFERENTIAL])
def test_official_counts_on_hand_made_outputs(rule, gold, text, protocol, expected):
    assert counts_of(gold, text, protocol) == expected


def test_a_crash_is_scored_as_a_format_failure_and_counted():
    verdict = sealtools.score(make_case(WEATHER), Generation(text=j(WEATHER + [5])))
    assert not verdict.passed and verdict.error_type == FORMAT_ERROR
    assert verdict.counts["upstream_crash"] == 1 and verdict.counts["correct_format"] == 0
    assert "would raise" in verdict.explanation and "upstream_crash" in verdict.details
    result = CaseResult("sealtools", "dev-easy-0", "dev_easy", False, FORMAT_ERROR, verdict.counts)
    names = {m.name: m for m in sealtools.aggregate([result])}
    assert names["outputs the official scorer crashes on"].correct == 1


def test_item_passes_only_when_every_count_agrees():
    case = make_case(INVOICE)
    assert sealtools.score(case, Generation(text=j(INVOICE))).passed
    for text, kind in ((j(INVOICE[:1]), "missing_call"),
                       (j(INVOICE + INVOICE[:1]), "surplus_call"),
                       (j([INVOICE[0], dict(INVOICE[1], api="x")]), "wrong_api"),
                       (j([INVOICE[0], dict(INVOICE[1], parameters={"invoice_id": "API_call_0"})]), "missing_parameter"),
                       (j([INVOICE[0], dict(INVOICE[1], parameters=dict(INVOICE[1]["parameters"], cc="x"))]),
                        "unknown_parameter"),
                       (j([INVOICE[0], dict(INVOICE[1], parameters={"invoice_id": "API_call_1", "email": "a@b.c"})]),
                        "wrong_value")):
        verdict = sealtools.score(case, Generation(text=text))
        assert not verdict.passed and verdict.error_type == kind, (text, verdict.error_type)
    # QUIRK inherited from the pooled counts: A twice for gold A, B with as many parameters satisfies every count
    twin = [{"api": "a", "parameters": {"x": 1}, "responses": []}, {"api": "b", "parameters": {"y": 2}, "responses": []}]
    assert sealtools.score(make_case(twin), Generation(text=j([twin[0], twin[0]]))).passed


def test_explanation_names_expected_and_got():
    verdict = sealtools.score(make_case(WEATHER), Generation(text=j([dict(WEATHER[0], parameters={"city": "Rome"})])))
    assert "city: got \"Rome\" expected \"Paris\"" in verdict.explanation
    assert "param: correct 0 / predicted 1 / gold 2" in verdict.explanation
    assert verdict.decoded == [dict(WEATHER[0], parameters={"city": "Rome"})] and verdict.expected == WEATHER


@pytest.mark.parametrize("text", [
    "", "[", "]", "[{", '[{"api"', '[{"api":', "[{\"api\": 1}]", "x" * 100_000, "[" * 50_000,
    '[{"api": "a", "parameters": {"x": ' + "[" * 5000 + "]" * 5000 + '}, "responses": []}]',
    '[{"api": "a", "parameters": {"x": ' + "9" * 5000 + '}, "responses": []}]',
    '[{"api": "a", "parameters": {"x": "\\ud800"}, "responses": []}]', "\x00\x01[{\"api\"}]",
    '[{"api": "getWeather", "parameters": {"days": Infinity}, "responses": [1e999]}]',
    '[{"api": [], "parameters": [], "responses": {}}, true, false, {"api": null}]',
    '[{"api": "getWeather", "parameters": {"city": {"a": [1, {"b": null}]}}, "responses": ["r"]}]',
])
@pytest.mark.parametrize("protocol", [TOLEAP, UPSTREAM])
def test_the_scorer_never_raises(text, protocol):
    verdict = sealtools.score(make_case(WEATHER, protocol), Generation(text=text))
    json.dumps(verdict.to_json(), allow_nan=True)
    assert verdict.passed is False


# ------------------------------------------------------------------------------------------------ aggregation


def _result(gold, text, protocol=TOLEAP, split="dev"):
    case = make_case(gold, protocol, split)
    verdict = sealtools.score(case, Generation(text=text))
    return CaseResult("sealtools", case.case_id, case.category, verdict.passed, verdict.error_type, verdict.counts,
                      verdict.labels)


def _figures(results, split="dev"):
    return {m.name.split(" ", 1)[1]: m.value for m in sealtools.aggregate(results)
            if m.group == "split" and m.name.startswith(split + " ")}


def test_figures_are_pooled_not_averaged_per_sample():
    results = [_result(WEATHER, j(WEATHER)),
               _result(INVOICE, j([INVOICE[0], dict(INVOICE[1], parameters={"invoice_id": "API_call_1", "email": "a@b.c"})]))]
    figures = _figures(results)
    assert figures["P_param"] == pytest.approx(5 / 6) and figures["R_param"] == pytest.approx(5 / 6)
    assert figures["F1_param"] == pytest.approx(5 / 6)  # per-sample mean would be (1 + 0.75) / 2
    assert figures["AMOUNT"] == 1.0 and figures["P_api"] == 1.0 and figures["R_api"] == 1.0


def test_recall_above_one_when_a_gold_call_is_predicted_twice():
    figures = _figures([_result(WEATHER, j(WEATHER + WEATHER))])
    assert figures["R_api"] == 2.0 and figures["P_api"] == 1.0
    assert figures["F1_api"] == pytest.approx(2 * 1.0 * 2.0 / 3.0)


def test_a_figure_with_a_zero_count_is_left_out():
    nothing = _figures([_result(WEATHER, "no idea"), _result(INVOICE, "")])
    assert nothing == {k: None for k in ("AMOUNT", "P_api", "R_api", "F1_api", "P_param", "R_param", "F1_param")}
    wrong_api = _figures([_result(WEATHER, j([dict(WEATHER[0], api="getNews")])), _result(WEATHER, "x")])
    assert wrong_api["AMOUNT"] == 0.5
    assert all(wrong_api[k] is None for k in ("P_api", "R_api", "F1_api", "P_param", "R_param", "F1_param"))
    no_param = _figures([_result(WEATHER, j([dict(WEATHER[0], parameters={})]))])
    assert no_param["P_api"] == 1.0 and no_param["P_param"] is None


def test_official_figures_formula():
    totals = {"all": 4, "correct_format": 3, "correct_api": 3, "predict_api": 4, "gold_api": 6,
              "correct_param": 5, "predict_param": 8, "gold_param": 10}
    figures = aggregation.official_figures(totals)
    assert figures["AMOUNT"] == 0.75
    assert figures["P_api"] == 0.75 and figures["R_api"] == 0.5 and figures["F1_api"] == pytest.approx(0.6)
    assert figures["P_param"] == 0.625 and figures["R_param"] == 0.5 and figures["F1_param"] == pytest.approx(5 / 9)


def test_mean_f1_param_over_splits_and_views():
    results = [_result(WEATHER, j(WEATHER), split="dev"),
               _result(WEATHER, j([dict(WEATHER[0], parameters={"city": "Paris"})]), split="test_in_domain"),
               _result(INVOICE, j(INVOICE), split="test_out_domain")]
    metrics = {m.name: m for m in sealtools.aggregate(results)}
    in_domain = 2 * 1.0 * 0.5 / 1.5
    assert metrics["mean F1_param"].value == pytest.approx((1 + in_domain + 1) / 3)
    assert metrics["test_out_domain difficult: F1_param"].value == 1.0
    assert metrics["dev_easy"].value == 1.0 and metrics["test_in_domain_easy"].value == 0.0
    missing = [_result(WEATHER, "x", split="dev"), _result(WEATHER, j(WEATHER), split="test_in_domain")]
    assert {m.name: m for m in sealtools.aggregate(missing)}["mean F1_param"].value is None


def test_toleap_error_counters_and_bad_cases():
    results = [_result(INVOICE, j([INVOICE[0], dict(INVOICE[1], api="x"), {"foo": 1},
                                   dict(INVOICE[0], parameters={"customer": "Acme", "amount": 1, "vat": 2})])),
               _result(WEATHER, "nothing"), _result(WEATHER, j(WEATHER)),
               _result(WEATHER, j(WEATHER + [{"x": 1}]), protocol=UPSTREAM)]
    metrics = {m.name: m for m in sealtools.aggregate(results)}
    assert metrics["dev ToLeaP 格式错误 (format error)"].value == 1
    assert metrics["dev ToLeaP 缺失 API (missing API)"].value == 1
    assert metrics["dev ToLeaP 错误的 API (wrong API)"].value == 1
    assert metrics["dev ToLeaP 缺失参数 (parameter name not in gold)"].value == 1
    assert metrics["dev ToLeaP 错误的参数值 (wrong parameter value)"].value == 1
    assert (metrics["dev ToLeaP bad cases"].correct, metrics["dev ToLeaP bad cases"].total) == (2, 3)  # upstream: none


# ------------------------------------------------------------------------------------------------ TL categories


@pytest.mark.parametrize("text, category", [
    ("nothing", "unparseable"),
    (j([{"foo": 1}]), "unparseable"),
    (j([dict(WEATHER[0], api="getNews")]), "wrong_tool"),
    (j([dict(WEATHER[0], api="getHoroscope")]), "tool_hallucination"),
    (j([dict(WEATHER[0], parameters={"city": "Paris"})]), "parameter_missing"),
    (j([dict(WEATHER[0], parameters={"city": "Paris", "days": 3, "unit": "C"})]), "parameter_redundant"),
    (j([dict(WEATHER[0], parameters={"city": "Paris", "days": 3, "colour": "red"})]), "parameter_hallucination"),
    (j([dict(WEATHER[0], parameters={"city": "Rome", "days": 3})]), "content_mismatch"),
    (j(WEATHER + [dict(WEATHER[0], api="getNews")]), "wrong_tool"),
])
def test_tl_categories_on_single_call_samples(text, category):
    verdict = sealtools.score(make_case(WEATHER), Generation(text=text))
    assert not verdict.passed
    assert verdict.labels["tl_category"] == category


def test_tl_values_compare_as_sealtools_does_and_scope_is_single_call():
    verdict = sealtools.score(make_case(WEATHER), Generation(text=j(WEATHER)))
    assert verdict.passed and verdict.counts["tl_reward"] == 1.0 and "tl_category" not in verdict.labels
    # "3" for 3 is right for SealTools; the label must not blame it
    text = j([dict(WEATHER[0], parameters={"city": "Rome", "days": "3"})])
    outcome = scorer("sealtools", "tl").tl_category(make_case(WEATHER), json.loads(text), TOLEAP)
    assert outcome[0] == "content_mismatch"
    multi = sealtools.score(make_case(INVOICE), Generation(text="x"))
    assert "tl_category" not in multi.labels and "tl_reward" not in multi.counts
    off = sealtools.score(make_case(WEATHER, tl=False), Generation(text="x"))
    assert "tl_category" not in off.labels


# ------------------------------------------------------------------------------------------------ cases, prompt, gold


def test_samples_load_and_pass_under_gold():
    definition = load_definition(SUITE_DIR / "suite.yaml")
    cases = sealtools.load_cases(SuiteContext(SAMPLES, dict(definition.raw)))
    assert {c.category for c in cases} == set(definition.categories)
    assert len({c.case_id for c in cases}) == len(cases)
    assert any("nested" in c.keywords for c in cases)
    for case in cases:
        assert "tl_failures" not in case.payload and case.context.uses("tl_failures")
        assert sealtools.score(case, Generation(text=sealtools.gold_output(case))).passed, case.case_id
        request = sealtools.build_request(case)
        assert request.messages == [{"role": "user", "content": case.payload["prompt"]}] and request.tools is None


def test_options_protocol_and_splits():
    raw = dict(load_definition(SUITE_DIR / "suite.yaml").raw)
    assert raw["options"] == {"protocol": "toleap", "splits": ["dev", "test_in_domain", "test_out_domain"]}
    upstream = sealtools.load_cases(SuiteContext(SAMPLES, {**raw, "options": {"protocol": "upstream", "splits": ["dev"]}}))
    assert {loading.protocol_of(c) for c in upstream} == {"upstream"} and "protocol" not in upstream[0].payload
    assert {c.payload["split"] for c in upstream} == {"dev"}
    from shipped import option_refusal

    assert "sealtools.protocol=" in option_refusal("sealtools", protocol="strict")
    assert "sealtools.splits=" in option_refusal("sealtools", splits=["train"])
    assert option_refusal("sealtools", splits="dev") == ""


def test_malformed_data_fails_once_naming_file_and_field(tmp_path):
    folder = tmp_path / "dataset_for_finetune"
    folder.mkdir()
    record = json.loads((SAMPLES / "dataset_for_finetune" / "dev.json").read_text())[0]
    broken = dict(record, conversations=[record["conversations"][0], {"from": "gpt", "value": "[{'api': oops}]"}])
    (folder / "dev.json").write_text(json.dumps([record, broken]))
    with pytest.raises(DataError, match=r"dev.json.*conversations/1/value"):
        sealtools.load_cases(SuiteContext(tmp_path, {"name": "sealtools"}))
    (folder / "dev.json").write_text(json.dumps([dict(record, id="dev-hard-1")]))
    with pytest.raises(DataError, match="id"):
        sealtools.load_cases(SuiteContext(tmp_path, {"name": "sealtools"}))


def test_gold_text_escapes_what_the_parser_would_break():
    text = gold_module.dump([{"api": "a", "parameters": {"q": "it's [x] \"y\"\n", "n": 1.5, "b": True, "z": None},
                              "responses": ["API_call_0"]}])
    assert "'" not in text and "\n" not in text and text.count("[") == text.count("]") == 2
    assert decoding.decode(text, UPSTREAM)[0] == [{"api": "a", "parameters": {"q": "it's [x] \"y\"\n", "n": 1.5,
                                                                              "b": True, "z": None},
                                                   "responses": ["API_call_0"]}]


def test_prompt_header_is_the_dataset_template():
    header = ('Please chooose the needed apis and return api_calling list according to the task_instruction.\n'
              'Output format: [{"api": "", "parameters": {"": ""}, "responses": ["API_call_0","API_call_1"]},'
              '{"api": "", "parameters": {"": ""}, "responses": ["API_call_2"]}]\n'
              'Responses can be used as parameter value. The number of responses depends on information in '
              'api_list.\n\nInput:\napi_list = [')
    for case in sealtools.load_cases(SuiteContext(SAMPLES, {"name": "sealtools"})):
        assert case.payload["prompt"].startswith(header) and case.payload["prompt"].endswith('"\nOutput:\n')


# ------------------------------------------------------------------------------------------------ replay


def test_replay_reads_seal_tools_raw_and_pred_files(tmp_path):
    raw = [{"id": "dev-easy-0", "text": ["[{'api': 'x'}]"], "raw": ["prompt + [{'api': 'x'}]"]},
           {"id": "dev-easy-1", "text": ["second"], "raw": [None]}]
    (tmp_path / "raw_ToolLearning_dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in raw))
    pred = [{"id": "test_in_domain-easy-0", "predict": [[{"api": "a", "parameters": {"t": "it's"}, "responses": []}]],
             "gold_data": {}},
            {"id": "test_in_domain-easy-1", "predict": [-1], "gold_data": {}}]
    (tmp_path / "pred_ToolLearning_test_in_domain.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pred))
    (tmp_path / "pred_ToolLearning_dev.jsonl").write_text(json.dumps({"id": "dev-easy-0", "predict": [-1]}) + "\n")
    outputs = sealtools.replay_outputs(tmp_path)
    assert outputs["dev-easy-0"] == "[{'api': 'x'}]" and outputs["dev-easy-1"] == "second"
    assert outputs["test_in_domain-easy-1"] == ""
    parsed, _ = decoding.decode(outputs["test_in_domain-easy-0"], UPSTREAM)
    assert parsed == pred[0]["predict"][0]
    assert any("preferred" in str(p) for p in outputs.problems)  # the raw file wins over the pred file of dev


def test_replay_maps_toleap_positional_arrays_to_dataset_ids(tmp_path):
    folder = tmp_path / "raw_pred_data" / "model"
    folder.mkdir(parents=True)
    (folder / "test_out_domain.json").write_text(json.dumps([f"out {i}" for i in range(96)] + [7]))
    outputs = sealtools.replay_outputs(folder)
    assert outputs["test_out_domain-easy-0"] == "out 0" and outputs["test_out_domain-easy-93"] == "out 93"
    assert outputs["test_out_domain-difficult-94"] == "out 94" and "test_out_domain-difficult-96" not in outputs
    assert "test_out_domain-difficult-96" in outputs.unreadable
    assert any("zips them by position" in str(p) for p in outputs.problems)
    assert replay.position_id("dev", 199) == "dev-easy-199" and replay.position_id("dev", 200) == "dev-difficult-200"


def test_replay_rejects_metrics_files_and_unknown_layouts(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps({"AMOUNT": 1.0, "P_api": 0.5}, indent=4))
    outputs = sealtools.replay_outputs(tmp_path / "dev.json")
    assert not outputs and any("metrics file" in str(p) for p in outputs.problems)
    (tmp_path / "outputs.json").write_text(json.dumps(["a", "b"]))
    assert any("split must be the file name" in str(p) for p in sealtools.replay_outputs(tmp_path / "outputs.json").problems)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert any("no SealTools result file" in str(p) for p in sealtools.replay_outputs(empty).problems)


def test_replay_run_end_to_end_on_samples(tmp_path):
    lines = [{"id": "dev-easy-0", "text": ['[{"api": "getLibraryHours", "parameters": {"library": "Central Library", '
                                           '"day": "Saturday"}, "responses": ["API_call_0"]}]']},
             {"id": "dev-easy-1", "text": ["I will text them."]}]
    (tmp_path / "raw_ToolLearning_dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = tmp_path / "run.json"
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE_DIR), "-p", "no:cacheprovider", "-q", "-k", "dev",
         f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-replay={tmp_path}", f"--toolbench-json={out}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    document = json.loads(out.read_text())
    by_id = {c["case_id"]: c for c in document["cases"]}
    assert by_id["dev-easy-0"]["passed"] is True
    assert by_id["dev-easy-1"]["error_type"] == FORMAT_ERROR
    assert by_id["dev-easy-1"]["labels"]["tl_category"] == "unparseable"
    metrics = {m["name"]: m for m in document["suites"]["sealtools"]["metrics"]}
    # the other two dev samples have no saved output: missing_output, and in every denominator (1 of 4 parsed)
    assert [c["error_type"] for c in document["cases"]].count("missing_output") == 2
    assert (metrics["dev AMOUNT"]["value"], metrics["dev AMOUNT"]["total"]) == (0.25, 4), result.stdout[-3000:]


# ------------------------------------------------------------------------------------------------ shared data


@pytest.fixture(scope="module")
def full_cases() -> dict[str, Case]:
    data = _data_dir()
    if data is None:
        pytest.skip("SealTools data not available (set TOOLBENCH_DATA)")
    raw = dict(load_definition(SUITE_DIR / "suite.yaml").raw)
    return {c.case_id: c for c in sealtools.load_cases(SuiteContext(data, raw))}


def test_full_data_statistics(full_cases):
    cases = list(full_cases.values())
    per_category = {}
    for case in cases:
        per_category[case.category] = per_category.get(case.category, 0) + 1
    assert per_category == {"dev_easy": 200, "dev_difficult": 500, "test_in_domain_easy": 200,
                            "test_in_domain_difficult": 500, "test_out_domain_easy": 94,
                            "test_out_domain_difficult": 560}
    for split, calls, params in (("dev", 1804, 3388), ("test_in_domain", 1795, 3358), ("test_out_domain", 1937, 3303)):
        members = [c for c in cases if c.payload["split"] == split]
        assert sum(len(c.payload["gold"]) for c in members) == calls  # the spec's table
        assert sum(len(call["parameters"]) for c in members for call in c.payload["gold"]) == params
        # the positional ids a ToLeaP result array is read with
        assert all(c.case_id == replay.position_id(split, c.payload["position"]) for c in members)
        assert len(members) == loading.UPSTREAM_SIZES[split]
    assert sum(1 for c in cases if "nested" in c.keywords) == 85
    assert all(len(c.payload["gold"]) == 1 for c in cases if c.payload["difficulty"] == "easy")


def test_every_gold_answer_passes_or_is_a_known_defect(full_cases):
    defects = load_definition(SUITE_DIR / "suite.yaml").known_defects()
    for protocol in (TOLEAP, UPSTREAM):
        failing = [case_id for case_id, case in full_cases.items()
                   if not sealtools.score(make_variant(case, protocol),
                                          Generation(text=sealtools.gold_output(case))).passed]
        assert sorted(failing) == sorted(defects)


def make_variant(case: Case, protocol: str) -> Case:
    """The case scored under ``protocol`` (its suite's option, in its context)."""
    definition = case.context.definition
    context = SuiteContext(case.context.data_dir, {**definition, "options": {**definition["options"],
                                                                             "protocol": protocol}})
    return context.bind([case])[0]


#: calculate_score_ToolLearning on the verbatim gold text of each split, from running the upstream code (Seal-Tools
#: and ToLeaP give the same figures; 8 samples fail to parse: 3 apostrophes, 1 True, 4 embedded double quotes).
VERBATIM_GOLD = {
    "dev": {"AMOUNT": 0.997143, "P_api": 1.0, "R_api": 0.997228, "F1_api": 0.998612, "P_param": 1.0,
            "R_param": 0.998229, "F1_param": 0.999114},
    "test_in_domain": {"AMOUNT": 0.995714, "P_api": 1.0, "R_api": 0.9961, "F1_api": 0.998046, "P_param": 0.999401,
                       "R_param": 0.993746, "F1_param": 0.996566},
    "test_out_domain": {"AMOUNT": 0.995413, "P_api": 1.0, "R_api": 0.996386, "F1_api": 0.99819, "P_param": 0.999088,
                        "R_param": 0.995459, "F1_param": 0.99727},
}
VERBATIM_UNPARSED = {"dev-easy-2", "dev-difficult-497", "test_in_domain-easy-135", "test_in_domain-difficult-238",
                     "test_in_domain-difficult-501", "test_out_domain-easy-43", "test_out_domain-easy-81",
                     "test_out_domain-difficult-113"}


@pytest.mark.parametrize("protocol", [TOLEAP, UPSTREAM])
def test_verbatim_gold_reproduces_the_upstream_figures(full_cases, protocol):
    results, unparsed = [], set()
    for case in full_cases.values():
        verdict = sealtools.score(make_variant(case, protocol), Generation(text=case.payload["gold_text"]))
        if not verdict.counts["correct_format"]:
            unparsed.add(case.case_id)
        results.append(CaseResult("sealtools", case.case_id, case.category, verdict.passed, verdict.error_type,
                                  verdict.counts))
    assert unparsed == VERBATIM_UNPARSED
    metrics = {m.name: m.value for m in sealtools.aggregate(results) if m.group == "split"}
    for split, figures in VERBATIM_GOLD.items():
        for key, value in figures.items():
            assert math.isclose(metrics[f"{split} {key}"], value, abs_tol=5e-7), (split, key)
