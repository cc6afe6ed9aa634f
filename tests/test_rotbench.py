"""RoTBench scorer: the official evaluate.py rules, the dev-verdict differential test, gold and replay runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pytest_toolbench.contract.definition import load_definition

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext
from conftest import REPO, shared_data_dir

from shipped import scorer

rotbench = scorer("rotbench")
LEVELS = scorer("rotbench", "loading").LEVELS
TURNS = scorer("rotbench", "loading").TURNS


SUITE_DIR = REPO / "suites" / "rotbench"


def _verdicts_file() -> Path | None:
    data = shared_data_dir()
    if data is None:
        return None
    path = data.parent / "dev-verdicts" / "rotbench" / "verdicts.jsonl"
    return path if path.is_file() else None


TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "string"}, "api_key": {"type": "string"}}}},
    {"name": "convert", "parameters": {"type": "object", "properties": {
        "amount": {"type": "string"}, "to": {"type": "string"}}}},
    {"name": "ask_to_user", "parameters": {"type": "object", "properties": {"question": {"type": "string"}}}},
    {"name": "finish", "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}},
]
NAMES = [t["name"] for t in TOOLS]


def _answer(name: str, arguments: dict) -> str:
    return f"Thought:\nAction: {name}\nAction Input: {json.dumps(arguments)}"


def _case(gold: list[str], tools: list[dict] = TOOLS) -> Case:
    return Case(suite="rotbench", case_id="first_turn-clean-0", category="first_turn_clean", keywords=("tg",),
                payload={"turn": "First_Turn", "level": "clean", "index": 0, "id": "Turn 1: q", "scenario": "TG",
                         "history": [{"from": "system", "value": "s"}, {"from": "user", "value": "q\nBegin!\n"}],
                         "tools": tools, "gold": gold},
                context=SuiteContext(Path("."), {"name": "rotbench", "libraries": ["tl_failures"]}))


def _stages(output: str, gold: list[str], tools: list[dict] = TOOLS) -> tuple[int, int, int]:
    verdict = rotbench.score(_case(gold, tools), Generation(text=output))
    return int(verdict.counts["ts"]), int(verdict.counts["pi"]), int(verdict.counts["cf"])


WEATHER = _answer("get_weather", {"city": "Lyon", "days": "3", "api_key": "None"})


# ------------------------------------------------------------------------------------------------ parsing rules


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Thought: ok\nAction: get_weather\nAction Input: {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}",
         (1, 1, 1)),
        # One space after the colon is assumed: "Action:get_weather" loses its first character.
        ("Action:get_weather\nAction Input: {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}", (0, 0, 0)),
        # Two spaces keep one in the name.
        ("Action:  get_weather\nAction Input: {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}", (0, 0, 0)),
        # Only one trailing newline is removed from the action; a trailing space stays.
        ("Action: get_weather \nAction Input: {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}", (0, 0, 0)),
        # Text after the JSON breaks decoding.
        ("Action: get_weather\nAction Input: {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}\nObservation:",
         (0, 0, 0)),
        # "Action Input:{" has its brace eaten by the fixed 14-character offset.
        ("Action: get_weather\nAction Input:{\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}", (0, 0, 0)),
        # Python-repr quotes are not JSON.
        ("Action: get_weather\nAction Input: {'city': 'Lyon', 'days': '3', 'api_key': 'k'}", (0, 0, 0)),
        # A JSON string holding the object is rejected.
        ("Action: get_weather\nAction Input: \"{\\\"city\\\": \\\"Lyon\\\"}\"", (0, 0, 0)),
        # Leading/trailing whitespace around the JSON is fine (json.loads allows it).
        ("Action: get_weather\nAction Input:   {\"city\": \"Lyon\", \"days\": \"3\", \"api_key\": \"k\"}  \n",
         (1, 1, 1)),
    ],
)
def test_parsing_quirks(output, expected):
    assert _stages(output, [WEATHER]) == expected


def test_empty_input_fails_every_stage_even_when_gold_is_empty():
    gold = [_answer("get_weather", {})]
    assert _stages(_answer("get_weather", {}), gold) == (0, 0, 0)
    verdict = rotbench.score(_case(gold), Generation(text=_answer("get_weather", {})))
    assert verdict.error_type == FORMAT_ERROR and verdict.labels["tl_category"] == "unparseable"


@pytest.mark.parametrize("text", ["", "   \n", "no markers at all", "Action: \nAction Input: {}", "Action Input: {",
                                  "Action: x\nAction Input: [" * 50 + "1" + "]" * 50, "Action: x\nAction Input: 7",
                                  "Action: get_weather\nAction Input: [1]", "Action: get_weather\nAction Input: NaN",
                                  "\x00\ud800", "Action: x\nAction Input: " + "[" * 100000])
def test_never_raises_and_fails(text):
    verdict = rotbench.score(_case([WEATHER]), Generation(text=text))
    assert not verdict.passed
    assert verdict.counts["cf"] == 0
    assert verdict.labels["tl_category"]


# ------------------------------------------------------------------------------------------------ stage rules


def test_pi_needs_exact_key_set_including_none_keys():
    assert _stages(_answer("get_weather", {"city": "Lyon", "days": "3"}), [WEATHER]) == (1, 0, 0)
    assert _stages(_answer("get_weather", {"city": "Lyon", "days": "3", "api_key": "k", "x": 1}),
                   [WEATHER]) == (1, 0, 0)


def test_none_gold_values_are_not_checked_but_required():
    for value in ("anything", 12, None, ""):
        assert _stages(_answer("get_weather", {"city": "Lyon", "days": "3", "api_key": value}), [WEATHER]) == (1, 1, 1)


def test_values_use_python_equality():
    gold = [_answer("convert", {"amount": 1, "to": "JPY"})]
    assert _stages(_answer("convert", {"amount": 1.0, "to": "JPY"}), gold) == (1, 1, 1)
    assert _stages(_answer("convert", {"amount": True, "to": "JPY"}), gold) == (1, 1, 1)
    assert _stages(_answer("convert", {"amount": "1", "to": "JPY"}), gold) == (1, 1, 0)
    assert _stages(_answer("convert", {"amount": 1, "to": "jpy"}), gold) == (1, 1, 0)


def test_any_alternative_may_match():
    gold = [_answer("convert", {"amount": "1", "to": "JPY"}), _answer("get_weather", {"city": "Lyon"})]
    assert _stages(_answer("get_weather", {"city": "Lyon"}), gold) == (1, 1, 1)
    assert _stages(_answer("convert", {"amount": "1"}), gold) == (1, 0, 0)


def test_finish_and_ask_are_exempt_from_values_and_found_by_position():
    tools = TOOLS[:2] + [dict(TOOLS[2], name="aXk_to_user"), dict(TOOLS[3], name="fPnish")]
    gold_finish = [_answer("fPnish", {"answer": "Paris"})]
    assert _stages(_answer("fPnish", {"answer": "something else"}), gold_finish, tools) == (1, 1, 1)
    # A literal "finish" stands for the last tool, whatever its name.
    assert _stages(_answer("finish", {"answer": "x"}), gold_finish, tools) == (1, 1, 1)
    assert _stages(_answer("finish", {"reply": "x"}), gold_finish, tools) == (1, 0, 0)
    gold_ask = [_answer("aXk_to_user", {"question": "Which city?"})]
    assert _stages(_answer("aXk_to_user", {"question": "?"}), gold_ask, tools) == (1, 1, 1)
    # A literal "ask_to_user" is *not* renamed: only finish is.
    assert _stages(_answer("ask_to_user", {"question": "?"}), gold_ask, tools) == (0, 0, 0)


def test_literal_finish_name_elsewhere_in_list_is_exempt():
    # Heavy noise shuffles names: a real tool can be named "finish" while the pseudo-tool is renamed.
    tools = [dict(TOOLS[0], name="finish"), TOOLS[1], TOOLS[2], dict(TOOLS[3], name="get_weather")]
    gold = [_answer("finish", {"city": "Lyon", "days": "3", "api_key": "k"})]
    assert _stages(_answer("finish", {"city": "Paris", "days": "9", "api_key": "z"}), gold, tools) == (1, 1, 1)


def test_cf_none_key_deletion_persists_across_alternatives():
    # Upstream deletes the "None" keys of alternative 1 from the prediction itself; alternative 2 then sees a
    # smaller key set and can no longer match, although PI (computed in its own pass) holds.
    gold = [_answer("get_weather", {"city": "Lyon", "days": "3", "api_key": "None"}),
            _answer("get_weather", {"city": "Paris", "days": "3", "api_key": "k"})]
    assert _stages(_answer("get_weather", {"city": "Paris", "days": "3", "api_key": "k"}), gold) == (1, 1, 0)
    # Reversed order: alternative 1 matches directly.
    assert _stages(_answer("get_weather", {"city": "Paris", "days": "3", "api_key": "k"}), gold[::-1]) == (1, 1, 1)


def test_stage_labels_and_tl_categories():
    case = _case([WEATHER])
    wrong_tool = rotbench.score(case, Generation(text=_answer("convert", {"amount": "1", "to": "x"})))
    assert (wrong_tool.error_type, wrong_tool.labels["tl_category"], wrong_tool.counts["tl_reward"]) == \
        ("wrong_tool", "wrong_tool", -1.5)
    invented = rotbench.score(case, Generation(text=_answer("get_wether", {"city": "Lyon"})))
    assert invented.labels["tl_category"] == "tool_hallucination" and invented.counts["tl_reward"] == -2
    names = rotbench.score(case, Generation(text=_answer("get_weather", {"city": "Lyon", "days": "3"})))
    assert (names.error_type, names.labels["tl_category"], names.counts["tl_reward"]) == \
        ("wrong_param_names", "parameter_missing", -0.5)
    values = rotbench.score(case, Generation(text=_answer("get_weather", {"city": "Nice", "days": "3",
                                                                           "api_key": "k"})))
    assert (values.error_type, values.labels["tl_category"], values.counts["tl_reward"]) == \
        ("wrong_values", "content_mismatch", -0.25)
    passed = rotbench.score(case, Generation(text=WEATHER))
    assert passed.passed and "tl_category" not in passed.labels


def test_aggregate_official_formulas():
    def result(category, scenario, ts, pi, cf):
        return CaseResult(suite="rotbench", case_id=f"{category}-{scenario}-{ts}{pi}{cf}", category=category,
                          passed=bool(cf), error_type=None if cf else "wrong_values",
                          counts={"ts": ts, "pi": pi, "cf": cf, **({} if cf else {"tl_reward": -0.25})},
                          labels={} if cf else {"tl_category": "content_mismatch"}, keywords=(scenario,))
    results = [result("first_turn_clean", "tg", 1, 1, 1), result("first_turn_clean", "rs", 1, 1, 0),
               result("first_turn_clean", "rs", 1, 0, 0), result("first_turn_clean", "du", 0, 0, 0),
               result("first_turn_clean", "pl", 1, 1, 1), result("first_turn_clean", "am", 1, 1, 1),
               result("first_turn_clean", "ir", 1, 1, 1),
               result("first_turn_heavy", "tg", 0, 0, 0), result("first_turn_heavy", "tg", 1, 1, 1)]
    metrics = {m.name: m for m in rotbench.aggregate(results)}
    assert metrics["first_turn_clean TS"].value == pytest.approx(6 / 7)
    assert metrics["first_turn_clean PI"].value == pytest.approx(5 / 7)
    assert metrics["first_turn_clean CF"].value == pytest.approx(4 / 7)
    # Scenario accuracy divides by N/7 (= 1 here), as upstream.
    assert metrics["first_turn_clean RS TS"].value == 1.0 and metrics["first_turn_clean RS PI"].correct == 1
    assert metrics["first_turn CF @ heavy"].value == 0.5
    assert metrics["first_turn mean CF over environments"].value == pytest.approx((4 / 7 + 0.5) / 2)
    assert metrics["TL content_mismatch"].correct == 4
    assert metrics["TL mean reward"].value == pytest.approx((5 * 1 + 4 * -0.25) / 9)


# ------------------------------------------------------------------------------------------------ suite files


def test_samples_load_and_pass_under_gold():
    cases = rotbench.load_cases(SuiteContext(SUITE_DIR / "samples", {}))
    assert cases and {c.category for c in cases} <= {f"{t}_{lv}" for t in ("first_turn", "third_turn")
                                                       for lv in LEVELS}
    for case in cases:
        assert rotbench.score(case, Generation(text=rotbench.gold_output(case))).passed, case.case_id


def test_third_turn_request_carries_history_with_function_names():
    case = next(c for c in rotbench.load_cases(SuiteContext(SUITE_DIR / "samples", {})) if c.case_id.startswith("third_turn"))
    messages = rotbench.build_request(case).messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "function", "assistant", "function"]
    assert messages[3]["name"] == "convert_currency"
    assert messages[0]["content"] == case.payload["history"][0]["value"]


# ------------------------------------------------------------------------------------------------ shared data


@pytest.fixture(scope="module")
def all_cases(shared_data):
    return rotbench.load_cases(SuiteContext(shared_data / "rotbench", dict(load_definition(SUITE_DIR / "suite.yaml").raw)))


def test_all_cases_loaded(all_cases):
    assert len(all_cases) == 1400
    assert sum(c.case_id.startswith("first_turn") for c in all_cases) == 840
    assert len({c.case_id for c in all_cases}) == 1400


def test_gold_failures_are_known_defects(all_cases):
    known = yaml.safe_load((SUITE_DIR / "known_defects.yaml").read_text())
    failing = {c.case_id for c in all_cases
               if not rotbench.score(c, Generation(text=rotbench.gold_output(c))).passed}
    assert failing == set(known)


def test_differential_against_official_verdicts(all_cases):
    path = _verdicts_file()
    if path is None:
        pytest.skip("dev verdicts not available")
    by_id = {c.case_id: c for c in all_cases}
    disagreements = []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in lines:
        case = by_id[f"{TURNS[line['turn']]}-{line['level']}-{line['index']}"]
        assert case.payload["id"] == line["id"]
        counts = rotbench.score(case, Generation(text=line["output"])).counts
        mine = (counts["ts"], counts["pi"], counts["cf"])
        if mine != (line["ts"], line["pi"], line["cf"]):
            disagreements.append((case.case_id, line["operator"], mine))
    assert not disagreements, f"{len(disagreements)}/{len(lines)} disagree: {disagreements[:10]}"


def test_replay_reads_official_output_layout(all_cases):
    path = _verdicts_file()
    if path is None:
        pytest.skip("dev verdicts not available")
    outputs = rotbench.replay_outputs(path.parent / "round_0")
    assert len(outputs) == 1400
    lines = {f"{TURNS[v['turn']]}-{v['level']}-{v['index']}": v
             for v in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    assert all(outputs[case_id] == line["output"] for case_id, line in lines.items())
    single = rotbench.replay_outputs(path.parent / "round_0" / "Third_Turn" / "heavy.jsonl")
    assert len(single) == 140 and all(k.startswith("third_turn-heavy-") for k in single)
