"""TL-Training's failure categories and reward wired into NesTools and ACEBench (issue #7, item 3): hand-made failing
outputs for each reachable category, with the reward, and the TL rows of each suite's summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext

from shipped import scorer

acebench = scorer("acebench")
nestools = scorer("nestools")
gold_calls = scorer("nestools", "gold").gold_calls
max_depth = scorer("nestools", "gold").max_depth
structure_key = scorer("nestools", "gold").structure_key
depth_bucket = scorer("nestools", "loading").depth_bucket
#: The context of a suite that opts into TL-Training's categories (suite.yaml ``libraries: [tl_failures]``).
OPTED_IN = SuiteContext(Path("."), {"libraries": ["tl_failures"]})


# ------------------------------------------------------------------------------------------------ NesTools

GREENHOUSE = {"api_name": "set_temperature", "api_description": "Set a zone's temperature.",
              "parameters": {"zone": {"type": "str", "description": "zone"},
                             "celsius": {"type": "float", "description": "target"},
                             "humidity": {"type": "int", "description": "optional target humidity"}},
              "required": ["zone", "celsius"], "responses": {"confirmation": {"type": "str", "description": "ok"}}}
WATERING = {"api_name": "schedule_watering", "api_description": "Schedule watering.",
            "parameters": {"zone": {"type": "str", "description": "zone"},
                           "start_date": {"type": "str", "description": "first day"}},
            "required": ["zone", "start_date"], "responses": {"schedule_id": {"type": "int", "description": "id"}}}
LIGHTS = {"api_name": "switch_lights", "api_description": "Switch grow lights.",
          "parameters": {"zone": {"type": "str", "description": "zone"}},
          "required": ["zone"], "responses": {"status": {"type": "str", "description": "status"}}}
FLAT_CALLS = [
    {"api_name": "set_temperature", "parameters": {"zone": "tomato", "celsius": 22.5}, "responses": ["API_call_0"]},
    {"api_name": "schedule_watering", "parameters": {"zone": "tomato", "start_date": "2025-03-03"},
     "responses": ["API_call_1"]},
]
DISTRACTOR_ID = 777


def _nestools_case(calls, apis, ids, test_id=1) -> Case:
    # An official-prompt case: the offered ids are read from the prompt text, so no data folder is needed.
    offered = ids + [DISTRACTOR_ID]
    prompt = str([{"api_name": f"tool{i}", "api_id": i} for i in offered])
    payload = {"test_id": test_id, "task": "Set the tomato zone to 22.5 degrees and water it from March 3rd, 2025.",
               "api": apis, "api_ids": ids, "call": calls, "field": "Gardening/Greenhouse",
               "prompt_source": "official", "prompt": prompt}
    chain = gold_calls(payload)
    payload["depth"] = max_depth(chain)
    payload["structure_key"] = structure_key(chain)
    return Case(suite="nestools", case_id=str(test_id), category=depth_bucket(payload["depth"]),
                payload=payload, context=OPTED_IN)  # the suite opts in (suite.yaml libraries: [tl_failures])


FLAT = _nestools_case(FLAT_CALLS, [GREENHOUSE, WATERING], [501, 502])
SINGLE = _nestools_case(FLAT_CALLS[:1], [GREENHOUSE], [501], test_id=2)


def _gold(case: Case) -> list[dict]:
    return json.loads(nestools.gold_output(case))


def _with(calls, index, **changes):
    calls = json.loads(json.dumps(calls))
    call = calls[index]
    for key, value in changes.items():
        if key == "parameters":
            call["parameters"] = value
        else:
            call[key] = value
    return json.dumps(calls)


def _nes(case: Case, text: str):
    verdict = nestools.score(case, Generation(text=text))
    assert not verdict.passed
    return verdict.labels.get("tl_category"), verdict.counts.get("tl_reward")


def test_nestools_passed_flat_case_carries_the_correct_reward_and_no_label():
    for case in (FLAT, SINGLE):
        verdict = nestools.score(case, Generation(text=nestools.gold_output(case)))
        assert verdict.passed and verdict.counts["tl_reward"] == 1.0 and "tl_category" not in verdict.labels


@pytest.mark.parametrize("text", ["I would call set_temperature first.", "[]", "[{'api_name': 'x'}]"])
def test_nestools_no_decoded_call_is_unparseable(text):
    assert _nes(FLAT, text) == ("unparseable", -2.0)


def test_nestools_tool_is_the_api_id_and_an_id_never_offered_is_a_hallucination():
    gold = _gold(FLAT)
    assert _nes(FLAT, _with(gold, 1, api_id=9999)) == ("tool_hallucination", -2.0)
    # Upstream pairs by id only: the right name with a made-up id is still a hallucinated tool.
    assert _nes(SINGLE, _with(_gold(SINGLE), 0, api_id=9999)) == ("tool_hallucination", -2.0)
    # "501" is not 501 for upstream's ``==``.
    assert _nes(SINGLE, _with(_gold(SINGLE), 0, api_id="501")) == ("tool_hallucination", -2.0)


def test_nestools_offered_distractor_or_unanswered_gold_call_is_a_wrong_tool():
    gold = _gold(FLAT)
    assert _nes(FLAT, _with(gold, 1, api_id=DISTRACTOR_ID)) == ("wrong_tool", -1.5)
    assert _nes(FLAT, json.dumps(gold[:1])) == ("wrong_tool", -1.5)
    assert _nes(FLAT, json.dumps(gold + gold[:1])) == ("wrong_tool", -1.5)


def test_nestools_swapped_order_is_a_wrong_tool_at_each_step():
    verdict = nestools.score(FLAT, Generation(text=json.dumps(_gold(FLAT)[::-1])))
    assert verdict.labels["tool_error"] == "tool_order"
    assert (verdict.labels["tl_category"], verdict.counts["tl_reward"]) == ("wrong_tool", -1.5)


def test_nestools_parameter_categories():
    gold = _gold(FLAT)
    params = dict(gold[0]["parameters"])
    assert _nes(FLAT, _with(gold, 0, parameters={**params, "colour": "red"})) == ("parameter_hallucination", -0.8)
    assert _nes(FLAT, _with(gold, 0, parameters={**params, "humidity": 60})) == ("parameter_redundant", -0.5)
    assert _nes(FLAT, _with(gold, 0, parameters={"zone": "tomato"})) == ("parameter_missing", -0.5)
    # "UNK" is an omission in the official error analysis, so a missing parameter here.
    assert _nes(FLAT, _with(gold, 0, parameters={"zone": "tomato", "celsius": "UNK"})) == ("parameter_missing", -0.5)
    renamed = {"zone": "tomato", "degrees": 22.5}
    assert _nes(FLAT, _with(gold, 0, parameters=renamed)) == ("parameter_hallucination+parameter_missing", -1.3)
    both = {"zone": "tomato", "degrees": 22.5, "humidity": 60}
    assert _nes(FLAT, _with(gold, 0, parameters=both)) == (
        "parameter_hallucination+parameter_redundant+parameter_missing", -1.8)


def test_nestools_content_mismatch_is_a_value_scored_below_one():
    gold = _gold(FLAT)
    wrong_number = _with(gold, 0, parameters={"zone": "tomato", "celsius": 25})
    assert _nes(FLAT, wrong_number) == ("content_mismatch", -0.25)
    # ROUGE-L partial credit and an equal date in another format are both below 1 upstream.
    partial = _with(gold, 0, parameters={"zone": "tomato zone", "celsius": 22.5})
    assert _nes(FLAT, partial) == ("content_mismatch", -0.25)
    dated = _with(gold, 1, parameters={"zone": "tomato", "start_date": "March 3rd, 2025"})
    assert _nes(FLAT, dated) == ("content_mismatch", -0.25)
    # A placeholder where the gold has a plain value.
    assert _nes(FLAT, _with(gold, 1, parameters={"zone": "API_call_0", "start_date": "2025-03-03"})) == (
        "content_mismatch", -0.25)


def test_nestools_nested_chains_are_not_labelled():
    nested = [FLAT_CALLS[0], {"api_name": "schedule_watering", "parameters": {"zone": "API_call_0",
                                                                           "start_date": "2025-03-03"},
                              "responses": ["API_call_1"]}]
    case = _nestools_case(nested, [GREENHOUSE, WATERING], [501, 502], test_id=4)
    assert case.payload["depth"] == 2
    verdict = nestools.score(case, Generation(text="no list"))
    assert verdict.error_type == FORMAT_ERROR and "tl_category" not in verdict.labels
    assert "tl_reward" not in verdict.counts


def test_nestools_tl_labels_leave_the_official_verdict_alone():
    gold = _gold(FLAT)
    verdict = nestools.score(FLAT, Generation(text=_with(gold, 1, api_id=DISTRACTOR_ID)))
    assert verdict.error_type == "tool_selection" and verdict.labels["tool_error"] == "tool_selection"
    assert verdict.counts["correct_api_num"] == 1 and verdict.counts["tree_acc"] == 0


def _result(suite: str, case: Case, verdict) -> CaseResult:
    return CaseResult(suite=suite, case_id=case.case_id, category=case.category, passed=verdict.passed,
                      error_type=verdict.error_type, counts=verdict.counts, labels=verdict.labels)


def test_nestools_aggregate_appends_tl_rows_over_flat_cases_only():
    gold = _gold(FLAT)
    nested = _nestools_case([FLAT_CALLS[0], {"api_name": "schedule_watering",
                                             "parameters": {"zone": "API_call_0", "start_date": "x"},
                                             "responses": ["API_call_1"]}], [GREENHOUSE, WATERING], [501, 502], 5)
    results = [
        _result("nestools", FLAT, nestools.score(FLAT, Generation(text=json.dumps(gold)))),
        _result("nestools", FLAT, nestools.score(FLAT, Generation(text="nothing"))),
        _result("nestools", FLAT, nestools.score(FLAT, Generation(text=_with(gold, 1, api_id=DISTRACTOR_ID)))),
        _result("nestools", nested, nestools.score(nested, Generation(text=nestools.gold_output(nested)))),
    ]
    metrics = {m.name: m for m in nestools.aggregate(results)}
    assert metrics["TL unparseable"].correct == 1 and metrics["TL unparseable"].total == 2
    assert metrics["TL wrong_tool"].value == 0.5
    mean = metrics["TL mean reward"]
    assert mean.total == 3 and mean.value == pytest.approx((1.0 - 2.0 - 1.5) / 3) and mean.unit == ""
    assert "Tree" in metrics and "Selection F1" in metrics  # the benchmark's own rows are still there


# ------------------------------------------------------------------------------------------------ ACEBench

ACE_DOCS = [
    {"name": "book_hotel", "description": "",
     "parameters": {"type": "object",
                    "properties": {"city": {"type": "string"}, "nights": {"type": "integer"},
                                   "breakfast": {"type": "boolean"}, "note": {"type": "string"},
                                   "tags": {"type": "array", "items": {"type": "string"}}},
                    "required": ["city", "nights"]}},
    {"name": "book_flight", "description": "",
     "parameters": {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}},
]
ACE_GT = {"book_hotel": {"city": "New York", "nights": 2, "breakfast": True, "tags": ["quiet"]}}


def _ace_case(ground_truth=ACE_GT, category="normal_single_turn_single_function", number=0) -> Case:
    return Case(suite="acebench", case_id=f"en-{category}_{number}", category=category,
                payload={"language": "en", "function": ACE_DOCS, "ground_truth": ground_truth,
                         "question": "user: book it"},
                context=OPTED_IN)


ACE = _ace_case()


def _ace(text: str, case: Case = ACE):
    verdict = acebench.score(case, Generation(text=text))
    assert not verdict.passed
    return verdict.details["official_error_type"], verdict.labels.get("tl_category"), verdict.counts.get("tl_reward")


def test_acebench_passed_single_call_case_carries_the_correct_reward():
    verdict = acebench.score(ACE, Generation(text=acebench.gold_output(ACE)))
    assert verdict.passed and verdict.counts["tl_reward"] == 1.0 and not verdict.labels
    # Lenient like the checker: another number, standardised substring, optional parameters left out.
    lenient = acebench.score(ACE, Generation(text="[book_hotel(city='new-york city', nights=5)]"))
    assert lenient.passed and lenient.counts["tl_reward"] == 1.0


@pytest.mark.parametrize("text,official,category,reward", [
    ("I will book the hotel.", "wrong_output_format", "unparseable", -2.0),
    ("[]", "wrong functions number", "unparseable", -2.0),
    ("[reserve_room(city='New York', nights=2)]", "function_mismatch", "tool_hallucination", -2.0),
    ("[book_flight(to='New York')]", "function_mismatch", "wrong_tool", -1.5),
    ("[book_hotel(city='New York', nights=2), book_flight(to='Boston')]", "wrong functions number",
     "wrong_tool", -1.5),
    ("[book_hotel(city='New York', nights=2, pets=True)]", "addition_args", "parameter_hallucination", -0.8),
    ("[book_hotel(city='New York', nights=2, note='late')]", "addition_args", "parameter_redundant", -0.5),
    ("[book_hotel(city='New York')]", "lack_args", "parameter_missing", -0.5),
    # No arguments at all: the checker's "wrong_param"; every gold parameter is missing, optional ones too.
    ("[book_hotel()]", "wrong_param", "parameter_missing", -0.5),
    ("[book_hotel(city='Boston', nights=2)]", "value_error:string", "content_mismatch", -0.25),
    ("[book_hotel(city='New York', nights='2')]", "type_error", "content_mismatch", -0.25),
    ("[book_hotel(city='New York', nights=2, tags=['loud'])]", "value_error:list/tuple", "content_mismatch", -0.25),
])
def test_acebench_categories(text, official, category, reward):
    assert _ace(text) == (official, category, reward)


def test_acebench_optional_gold_parameter_left_out_is_not_missing():
    # The checker only requires "required" parameters: with breakfast and tags left out, the wrong city is what
    # failed, not a missing parameter.
    assert _ace("[book_hotel(city='Boston', nights=2)]")[1:] == ("content_mismatch", -0.25)
    assert _ace("[book_hotel(nights=2, breakfast=True)]")[1:] == ("parameter_missing", -0.5)


def test_acebench_best_alternative_gives_the_label():
    case = _ace_case([{"book_flight": {"to": "Paris"}}, {"book_hotel": {"city": "Paris", "nights": 1}}], number=1)
    assert _ace("[book_hotel(city='Rome', nights=1)]", case) == ("function_mismatch", "content_mismatch", -0.25)


def test_acebench_gold_names_lose_their_index_suffix():
    case = _ace_case({"book_flight_1": {"to": "Paris"}}, number=2)
    assert _ace("[book_flight(to='Rome')]", case)[1:] == ("content_mismatch", -0.25)


def test_acebench_out_of_scope_cases_are_not_labelled():
    parallel = _ace_case({"book_flight": {"to": "Paris"}, "book_hotel": {"city": "Paris", "nights": 1}},
                         category="normal_single_turn_parallel_function")
    verdict = acebench.score(parallel, Generation(text="nothing"))
    assert not verdict.passed and not verdict.labels and "tl_reward" not in verdict.counts
    special = Case(suite="acebench", case_id="en-special_irrelevant_0", category="special_irrelevant",
                   payload={"language": "en", "function": ACE_DOCS, "ground_truth": {}, "question": "q"},
                context=OPTED_IN)
    verdict = acebench.score(special, Generation(text="[book_flight(to='x')]"))
    assert not verdict.passed and not verdict.labels and "tl_reward" not in verdict.counts


def test_acebench_multi_turn_single_call_turns_are_labelled():
    case = _ace_case({"book_flight": {"to": "Paris"}}, category="normal_multi_turn_user_adjust", number=3)
    case = Case(suite="acebench", case_id="en-normal_multi_turn_user_adjust_3_1", category=case.category,
                payload=case.payload, context=case.context)
    assert _ace("[book_flight(to='Rome')]", case)[1:] == ("content_mismatch", -0.25)


def test_acebench_aggregate_appends_tl_rows_over_single_call_cases_only():
    special = Case(suite="acebench", case_id="en-special_irrelevant_0", category="special_irrelevant",
                   payload={"language": "en", "function": ACE_DOCS, "ground_truth": {}, "question": "q"},
                context=OPTED_IN)
    scored = [
        (ACE, acebench.score(ACE, Generation(text=acebench.gold_output(ACE)))),
        (ACE, acebench.score(ACE, Generation(text="nothing"))),
        (ACE, acebench.score(ACE, Generation(text="[book_hotel(city='Boston', nights=2)]"))),
        (special, acebench.score(special, Generation(text="beyond the limitations of the functions"))),
    ]
    assert scored[-1][1].passed
    metrics = {m.name: m for m in acebench.aggregate([_result("acebench", c, v) for c, v in scored])}
    assert metrics["TL unparseable"].value == 0.5 and metrics["TL content_mismatch"].value == 0.5
    mean = metrics["TL mean reward"]
    assert mean.total == 3 and mean.value == pytest.approx((1.0 - 2.0 - 0.25) / 3)
    assert "en/normal_single_turn_single_function" in metrics and "en/special_irrelevant" in metrics
