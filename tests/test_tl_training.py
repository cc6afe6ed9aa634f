"""TL-Training protocol suite: decoding registry, stage rules per dataset, TL labels, gold runs."""

from __future__ import annotations

import json

import pytest
import yaml
from pytest_toolbench.contract.definition import load_definition

from pytest_toolbench.contract.suite import FORMAT_ERROR, CaseResult, Generation, SuiteContext
from conftest import REPO

from shipped import scorer

tltraining = scorer("tltraining")
parse_python_calls = scorer("tltraining", "decoding").parse_python_calls


SUITE_DIR = REPO / "suites" / "tltraining"
#: The suite's own definition: it declares the reused RoTBench and BFCL data (data.reuses) and opts into TL labels.
DEFINITION = dict(load_definition(SUITE_DIR / "suite.yaml").raw)


@pytest.fixture(scope="module")
def sample_cases():
    return {c.case_id: c for c in tltraining.load_cases(SuiteContext(SUITE_DIR / "samples", DEFINITION))}


def _score(case, text, tool_calls=None):
    return tltraining.score(case, Generation(text=text, tool_calls=tool_calls))


@pytest.mark.parametrize(
    ("text", "parser"),
    [
        ('<tool_call>\n{"name": "circle_area", "arguments": {"radius": 3}}\n</tool_call>', "hermes"),
        ('[TOOL_CALLS][{"name": "circle_area", "arguments": {"radius": 3}}]', "mistral"),
        ('Thought: area\nAction: circle_area\nAction Input: {"radius": 3}', "react"),
        ('{"name": "circle_area", "parameters": {"radius": 3}}', "llama3_json"),
        ("[circle_area(radius=3)]", "pythonic"),
        ("circle_area(radius = 3) ", "python_call"),
        ('circle_area\n{"radius": 3}', "chatglm"),
    ],
)
def test_every_registered_format_decodes_and_passes(sample_cases, text, parser):
    verdict = _score(sample_cases["exec_simple_0"], text)
    assert verdict.passed, verdict.explanation
    assert verdict.details["parser"] == parser


def test_native_tool_calls_take_precedence(sample_cases):
    verdict = _score(sample_cases["exec_simple_0"], "whatever", [{"name": "circle_area", "arguments": {"radius": 3}}])
    assert verdict.passed and verdict.details["parser"] == "native"


@pytest.mark.parametrize("text", ["", "The area is 28.27.", "<tool_call>{not json</tool_call>",
                                  "circle_area(radius=open('x'))", "Action: circle_area\nAction Input: {",
                                  "[circle_area(radius=3)", "\ud800(" * 3, "(" * 10000])
def test_undecodable_output_is_a_scored_failure(sample_cases, text):
    verdict = _score(sample_cases["exec_simple_0"], text)
    assert not verdict.passed and verdict.error_type in (FORMAT_ERROR, "no_output")
    assert verdict.labels["tl_category"] == "unparseable" and verdict.counts["tl_reward"] == -2


def test_bfcl_stages_and_tl_labels(sample_cases):
    case = sample_cases["exec_simple_0"]
    stages = lambda v: (v.counts["ts"], v.counts["pi"], v.counts["cf"])  # noqa: E731
    wrong_value = _score(case, "circle_area(radius=4)")
    assert stages(wrong_value) == (1, 1, 0) and wrong_value.labels["tl_category"] == "content_mismatch"
    extra = _score(case, "circle_area(radius=3, unit='cm')")
    assert stages(extra) == (1, 0, 0) and extra.labels["tl_category"] == "parameter_hallucination"
    pseudo = _score(case, "finish(answer='28.27')")
    assert stages(pseudo) == (0, 0, 0) and pseudo.labels["tl_category"] == "wrong_tool"
    invented = _score(case, "area_of_circle(radius=3)")
    assert invented.labels["tl_category"] == "tool_hallucination"
    # Python equality: 3 == 3.0.
    assert _score(case, "circle_area(radius=3.0)").passed


def test_bfcl_parallel_is_a_multiset_and_positional_gold_is_named(sample_cases):
    case = sample_cases["exec_parallel_0"]
    assert case.payload["gold"][0][0] == {"name": "mean", "arguments": {"numbers": [1, 2, 3]}}
    assert _score(case, "[mean(numbers=[4, 8]), mean(numbers=[1, 2, 3])]").passed
    one = _score(case, "[mean(numbers=[4, 8])]")
    assert not one.passed and one.error_type == "wrong_call_count" and one.counts["ts"] == 0
    assert one.labels["tl_category"] == "wrong_tool"


def test_python_call_parser_folds_arithmetic_only():
    assert parse_python_calls("f(p=1/6, n=500*500, x=-2)") == [
        {"name": "f", "arguments": {"p": 1 / 6, "n": 250000, "x": -2}}]
    for bad in ("f(x=y)", "f(x=__import__('os'))", "f(x=2**10000)", "f(x='a'*3)", "f(*a)", "x = 1"):
        with pytest.raises(ValueError):
            parse_python_calls(bad)


def test_rotbench_clean_keeps_official_rules(sample_cases):
    weather = sample_cases["rot-clean-0"]
    assert _score(weather, '<tool_call>{"name": "get_weather_forecast", "arguments": '
                           '{"city": "Lyon", "days": "3", "api_key": "anything"}}</tool_call>').passed
    finish = sample_cases["rot-clean-2"]
    assert finish.payload["messages"] == [{"role": "user", "content": "Say hello to me and end the conversation."}]
    assert _score(finish, "finish(answer='Bye')").passed  # finish is exempt from the value check
    empty = _score(weather, "get_weather_forecast()")
    assert empty.error_type == FORMAT_ERROR and empty.labels["tl_category"] == "unparseable"


def test_toolalpaca_compares_first_step(sample_cases):
    case = sample_cases["toolalpaca-0-1"]
    assert case.payload["tools"][0]["parameters"]["required"] == ["language"]
    assert _score(case, "todayFact()").passed
    assert not _score(case, "randomFact(language='en')").passed


def test_request_carries_tl_codellama_system_prompt_and_tools(sample_cases):
    request = tltraining.build_request(sample_cases["exec_simple_0"])
    system = request.messages[0]["content"]
    assert system.startswith("Function:\ndef circle_area(radius:float):\n    \"\"\"\n    Area of a circle.\n\n"
                             "    Args:\n        radius (float): Radius.\n    \"\"\"\n\n")
    assert "def finish(answer:str):" in system and "def ask_to_user(question:str):" in system
    assert [t["name"] for t in request.tools] == ["circle_area", "ask_to_user", "finish"]
    native = tltraining.load_cases(SuiteContext(SUITE_DIR / "samples", {**DEFINITION, "options": {"system_prompt": "none"}}))
    assert [m["role"] for m in tltraining.build_request(native[0]).messages] == ["user"]


def test_aggregate_per_dataset(sample_cases):
    results = []
    for case in sample_cases.values():
        verdict = _score(case, tltraining.gold_output(case) if case.category != "toolalpaca_real" else "")
        results.append(CaseResult(suite="tltraining", case_id=case.case_id, category=case.category,
                                  passed=verdict.passed, error_type=verdict.error_type, counts=verdict.counts,
                                  labels=verdict.labels))
    metrics = {m.name: m for m in tltraining.aggregate(results)}
    assert metrics["bfcl_exec CF"].total == 2 and metrics["bfcl_exec CF"].value == 1.0
    assert metrics["toolalpaca_real TS"].value == 0.0 and metrics["toolalpaca_real TS"].total == 2
    assert metrics["TL unparseable"].correct == 2


def test_shared_data_gold_run(shared_data):
    definition = dict(load_definition(SUITE_DIR / "suite.yaml").raw)
    cases = tltraining.load_cases(SuiteContext(shared_data, definition))
    counts = {}
    for case in cases:
        counts[case.category] = counts.get(case.category, 0) + 1
    assert counts == {"rot_clean": 105, "exec_simple": 100, "exec_multiple": 50,
                      "exec_parallel": 50, "exec_parallel_multiple": 40, "toolalpaca_real": 114}
    failing = {c.case_id for c in cases if not _score(c, tltraining.gold_output(c)).passed}
    assert failing == set(yaml.safe_load((SUITE_DIR / "known_defects.yaml").read_text()))
    json.dumps([c.payload for c in cases])  # payloads are JSON-safe


def test_replay_reads_the_test_sets_own_output_files_and_a_bad_line_costs_only_its_case(sample_cases, tmp_path):
    """TL-Training ships no output files: rot_clean is read from RoTBench's inference output (matched by position),
    the exec categories from ``bfcl generate`` result files; one bad line fails its own case, the rest still count."""
    rot = sorted((c for c in sample_cases.values() if c.category == "rot_clean"), key=lambda c: int(c.case_id.rsplit("-", 1)[1]))
    execs = [c for c in sample_cases.values() if c.category == "exec_simple"]
    assert len(rot) >= 2 and execs
    (tmp_path / "First_Turn").mkdir()
    rows = [json.dumps({"conversations": [{"value": "q"}, {"value": tltraining.gold_output(case)}]}) for case in rot]
    rows[0] = rows[0][:25]  # cut short: the first case is unreadable, the second is still read
    (tmp_path / "First_Turn" / "clean.jsonl").write_text("\n".join(rows) + "\n")
    bfcl_rows = [{"id": case.case_id, "result": tltraining.gold_output(case)} for case in execs]
    bfcl_rows.append({"id": "exec_simple_999", "result": [{"f": "{}"}]})
    (tmp_path / "BFCL_v3_exec_simple_result.json").write_text("".join(json.dumps(r) + "\n" for r in bfcl_rows))
    outputs = tltraining.replay_outputs(tmp_path)
    assert rot[0].case_id in outputs.unreadable and rot[0].case_id not in outputs
    for case in [*rot[1:], *execs]:
        assert _score(case, outputs[case.case_id]).passed, case.case_id
    assert "exec_simple_999" in outputs.unreadable
    assert any("result is not text" in str(problem) for problem in outputs.problems)
    nothing = tltraining.replay_outputs(tmp_path / "First_Turn" / "clean.jsonl").problems
    assert not [p for p in nothing if "no TL-Training" in str(p)]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert [str(p) for p in tltraining.replay_outputs(empty).problems] == [
        f"{empty}: error: no TL-Training test-set output files here: expected First_Turn/clean.json or .jsonl "
        "(RoTBench's inference output), or BFCL_v3|v4_exec_<category>_result.json (bfcl generate)"]
