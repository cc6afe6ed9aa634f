"""NesTools scorer: the official count rules on hand-made predictions, the dev-verdict differential test, gold and
replay runs, cases and prompts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext
from conftest import REPO, shared_data_dir

from shipped import scorer

nestools = scorer("nestools")
candidate_ids = scorer("nestools", "candidates").candidate_ids
rebuilt_candidates = scorer("nestools", "candidates").rebuilt_candidates
COUNT_KEYS = scorer("nestools", "checker").COUNT_KEYS
ERROR_KEYS = scorer("nestools", "checker").ERROR_KEYS
gold_calls = scorer("nestools", "gold").gold_calls
max_depth = scorer("nestools", "gold").max_depth
structure_key = scorer("nestools", "gold").structure_key
OFFICIAL_PROMPT_FILE = scorer("nestools", "loading").OFFICIAL_PROMPT_FILE
depth_bucket = scorer("nestools", "loading").depth_bucket
prompt_source = scorer("nestools", "loading").prompt_source
ANSWER_HEADER = scorer("nestools", "prompt").ANSWER_HEADER
BASE_PROMPT = scorer("nestools", "prompt").BASE_PROMPT
TASK_HEADER = scorer("nestools", "prompt").TASK_HEADER
render_prompt = scorer("nestools", "prompt").render_prompt
normalize_date = scorer("nestools", "values").normalize_date
rouge_l_f = scorer("nestools", "values").rouge_l_f
safe_value_score = scorer("nestools", "values").safe_value_score
value_score = scorer("nestools", "values").value_score


SUITE_DIR = REPO / "suites" / "nestools"
SAMPLES = SUITE_DIR / "samples"


def _data_dir() -> Path | None:
    data = shared_data_dir()
    if data is None or not (data / "nestools" / "test_data.jsonl").is_file():
        return None
    return data / "nestools"


def _verdicts_dir() -> Path | None:
    data = shared_data_dir()
    if data is None:
        return None
    path = data.parent / "dev-verdicts" / "nestools"
    return path if (path / "verdicts.jsonl").is_file() else None


# A hand-made three-call case: lookup → (parcel_id, carrier); reroute(parcel_id) → status; notify(carrier, status).
API = [
    {"api_name": "lookup_parcel", "api_description": "Find a parcel.",
     "parameters": {"tracking": {"type": "str", "description": "tracking number"}}, "required": ["tracking"],
     "responses": {"parcel_id": {"type": "str", "description": "id"}, "carrier": {"type": "str", "description": "c"}}},
    {"api_name": "reroute_parcel", "api_description": "Reroute a parcel.",
     "parameters": {"parcel_id": {"type": "str", "description": "id"},
                    "address": {"type": "str", "description": "new address"},
                    "date": {"type": "str", "description": "delivery date"}},
     "required": ["parcel_id", "address"],
     "responses": {"status": {"type": "str", "description": "status"}}},
    {"api_name": "notify_carrier", "api_description": "Notify the carrier.",
     "parameters": {"carrier": {"type": "str", "description": "carrier"},
                    "status": {"type": "str", "description": "status"}, "urgent": {"type": "bool", "description": "u"}},
     "required": ["carrier", "status"],
     "responses": {"ack": {"type": "bool", "description": "ack"}}},
]
CALLS = [
    {"api_name": "lookup_parcel", "parameters": {"tracking": "1Z999"}, "responses": ["API_call_0", "API_call_1"]},
    {"api_name": "reroute_parcel",
     "parameters": {"parcel_id": "API_call_0", "address": "12 Baker Street London", "date": "2025-03-03"},
     "responses": ["API_call_2"]},
    {"api_name": "notify_carrier", "parameters": {"carrier": "API_call_1", "status": "API_call_2", "urgent": True},
     "responses": ["API_call_3"]},
]
TASK = "Find parcel 1Z999, reroute it to 12 Baker Street London for March 3rd, 2025, and tell the carrier urgently."
IDS = [11, 22, 33]


def _case(calls=CALLS, api=API, ids=IDS, task=TASK) -> Case:
    payload = {"test_id": 7, "task": task, "api": api, "api_ids": ids, "call": calls, "field": "Logistics/Parcels",
               "prompt_source": "rebuilt"}
    chain = gold_calls(payload)
    payload["depth"] = max_depth(chain)
    payload["structure_key"] = structure_key(chain)
    return Case(suite="nestools", case_id="7", category=depth_bucket(payload["depth"]), payload=payload,
                context=SuiteContext(SAMPLES, {"name": "nestools"}))


def _call(name, api_id, parameters, responses=None):
    call = {"api_name": name, "api_id": api_id, "parameters": parameters}
    if responses is not None:
        call["responses"] = responses
    return call


def _gold_prediction():
    return [
        _call("lookup_parcel", 11, {"tracking": "1Z999"}, {"parcel_id": "API_call_0", "carrier": "API_call_1"}),
        _call("reroute_parcel", 22, {"parcel_id": "API_call_0", "address": "12 Baker Street London",
                                     "date": "2025-03-03"}, {"status": "API_call_2"}),
        _call("notify_carrier", 33, {"carrier": "API_call_1", "status": "API_call_2", "urgent": True},
              {"ack": "API_call_3"}),
    ]


def _score(prediction, case=None):
    text = prediction if isinstance(prediction, str) else json.dumps(prediction)
    return nestools.score(case or _case(), Generation(text=text))


def _counts(verdict, family):
    return tuple(verdict.counts[f"{kind}_{family}_num"] for kind in ("correct", "predict", "gold"))


# ------------------------------------------------------------------------------------------------ parsing / format


def test_gold_prediction_passes_every_family():
    verdict = _score(_gold_prediction())
    assert verdict.passed and verdict.error_type is None
    assert _counts(verdict, "api") == (3, 3, 3)
    assert _counts(verdict, "order") == (2, 2, 2)
    assert _counts(verdict, "param") == (7, 7, 7)
    assert _counts(verdict, "nest") == (3, 3, 3)


def test_python_literal_and_surrounding_prose_are_accepted():
    text = "Sure! Here it is:\n```python\n" + repr(_gold_prediction()) + "\n```\nDone."
    assert _score(text).passed


@pytest.mark.parametrize("text", [
    "",
    "no list here",
    "[{'api_name': 'lookup_parcel', 'parameters': {}}]",  # api_id missing
    "[{'api_name': 'lookup_parcel', 'api_id': 11, 'parameters': ['1Z999']}]",  # parameters not a dict
    '[{"api_name": "a", "api_id": 11, "parameters": {}}, "stray"]',  # one element is no dict
    '[{api_name: "a"}]',
    "[1], [2]",  # a tuple of lists
])
def test_format_failure_adds_only_gold_counts(text):
    verdict = _score(text)
    assert not verdict.passed and verdict.error_type == FORMAT_ERROR
    assert verdict.counts["correct_format_num"] == 0
    # A failed parse still contributes every gold count (recall denominators) and nothing predicted.
    assert _counts(verdict, "api") == (0, 0, 3)
    assert _counts(verdict, "order") == (0, 0, 2)
    assert _counts(verdict, "param") == (0, 0, 7)
    assert _counts(verdict, "nest") == (0, 0, 3)


def test_trailing_comma_parses_only_as_a_python_literal():
    assert _score(repr(_gold_prediction())[:-1] + ",]").passed
    # JSON ``true`` is no Python literal, and JSON refuses the trailing comma: a format failure.
    assert _score(json.dumps(_gold_prediction())[:-1] + ",]").error_type == FORMAT_ERROR


def test_empty_list_is_well_formed_but_predicts_nothing():
    verdict = _score("[]")
    assert verdict.counts["correct_format_num"] == 1 and not verdict.passed
    assert _counts(verdict, "order") == (0, 0, 2)
    assert verdict.error_type == "tool_omission"


def test_missing_responses_is_allowed_but_breaks_nesting_through_that_call():
    prediction = _gold_prediction()
    del prediction[0]["responses"]
    verdict = _score(prediction)
    assert verdict.counts["correct_format_num"] == 1
    assert _counts(verdict, "api") == (3, 3, 3)
    assert _counts(verdict, "nest") == (1, 3, 3)  # only status → API_call_2 still resolves


# ------------------------------------------------------------------------------------------------ selection / order


def test_matching_is_by_api_id_not_by_name():
    prediction = _gold_prediction()
    prediction[1]["api_name"] = "totally_different_name"
    assert _counts(_score(prediction), "api") == (3, 3, 3)
    prediction[1]["api_id"] = 99
    verdict = _score(prediction)
    assert _counts(verdict, "api") == (2, 3, 3)
    assert verdict.error_type == "tool_hallucination"  # 99 is not among the case's candidates


def test_repeated_api_ids_are_a_multiset_and_pair_with_the_best_scoring_gold_call():
    api = [API[0], {**API[1], "api_name": "send_note"}]
    calls = [
        {"api_name": "lookup_parcel", "parameters": {"tracking": "A1"}, "responses": ["API_call_0", "API_call_1"]},
        {"api_name": "lookup_parcel", "parameters": {"tracking": "B2"}, "responses": ["API_call_2", "API_call_3"]},
        {"api_name": "send_note", "parameters": {"parcel_id": "API_call_2"}, "responses": ["API_call_4"]},
    ]
    case = _case(calls=calls, api=api, ids=[11, 22])
    prediction = [
        _call("lookup_parcel", 11, {"tracking": "B2"}, {"p": "API_call_0", "c": "API_call_1"}),
        _call("lookup_parcel", 11, {"tracking": "A1"}, {"p": "API_call_2", "c": "API_call_3"}),
        _call("lookup_parcel", 11, {"tracking": "A1"}, {"p": "API_call_4", "c": "API_call_5"}),
        _call("send_note", 22, {"parcel_id": "API_call_0"}, {"s": "API_call_6"}),
    ]
    verdict = _score(prediction, case)
    # Third id-11 call finds the pool empty; B2 pairs with gold call 1 (its best), so the nested reference to
    # the first predicted call's slot 0 resolves to gold call 1's slot 0 = API_call_2.
    assert _counts(verdict, "api") == (3, 4, 3)
    assert verdict.details["matches"] == [[0, 1], [1, 0], [2, 3]]
    assert _counts(verdict, "nest") == (1, 1, 1)
    assert _counts(verdict, "param") == (3, 4, 3)
    # Order: gold pairs (11,11),(11,22); predicted (11,11),(11,11),(11,22) → intersection 2.
    assert _counts(verdict, "order") == (2, 3, 2)
    # Gold call 2 is paired with a placeholder of another number: structurally right, but upstream's non-nested
    # analysis also compares it by ROUGE and counts a "transformation" (QUIRK), which dominates the error type;
    # the tool-level reading is kept as a label.
    assert not verdict.passed and verdict.error_type == "param_transformation"
    assert verdict.labels["tool_error"] == "tool_redundancy"


def test_order_counts_adjacent_pairs_and_a_single_call_predicts_no_pair():
    prediction = _gold_prediction()
    swapped = [prediction[1], prediction[0], prediction[2]]
    assert _counts(_score(swapped), "order") == (0, 2, 2)
    assert _counts(_score(prediction[:1]), "order") == (0, 0, 2)


def test_an_integral_float_id_matches_an_int_id_as_in_python():
    prediction = _gold_prediction()
    prediction[0]["api_id"] = 11.0
    assert _score(prediction).passed


def test_string_ids_do_not_match():
    prediction = _gold_prediction()
    for call in prediction:
        call["api_id"] = str(call["api_id"])
    verdict = _score(prediction)
    assert _counts(verdict, "api") == (0, 3, 3)
    assert _counts(verdict, "order") == (0, 2, 2)


# ------------------------------------------------------------------------------------------------ nesting


def test_placeholder_renumbering_is_structural():
    renumbered = _gold_prediction()
    renumbered[0]["responses"] = {"parcel_id": "API_call_7", "carrier": "API_call_3"}
    renumbered[1]["parameters"]["parcel_id"] = "API_call_7"
    renumbered[1]["responses"] = {"status": "API_call_1"}
    renumbered[2]["parameters"].update(carrier="API_call_3", status="API_call_1")
    renumbered[2]["responses"] = {"ack": "API_call_0"}
    verdict = _score(renumbered)
    assert _counts(verdict, "nest") == (3, 3, 3)
    assert verdict.passed


def test_placeholder_to_the_wrong_slot_of_the_right_producer_fails():
    prediction = _gold_prediction()
    prediction[1]["parameters"]["parcel_id"] = "API_call_1"  # slot 1 of call 0 instead of slot 0
    verdict = _score(prediction)
    assert _counts(verdict, "nest") == (2, 3, 3)
    assert verdict.counts["nest_error_wrong_place"] == 1
    # QUIRK: the same parameter is also a non-nested "transformation" error (placeholders compared by ROUGE).
    assert verdict.counts["para_error_transformation"] == 1
    assert verdict.error_type == "nest_wrong_place"


def test_nested_error_kinds():
    prediction = _gold_prediction()
    prediction[1]["parameters"]["parcel_id"] = "UNK"  # omission
    prediction[2]["parameters"]["carrier"] = "FastShip"  # unfind: a literal where a placeholder belongs
    prediction[1]["parameters"]["address"] = "API_call_1"  # hallucination: a placeholder in a literal slot
    verdict = _score(prediction)
    assert verdict.counts["nest_error_omission"] == 1
    assert verdict.counts["nest_error_unfind"] == 1
    assert verdict.counts["nest_error_hallucination"] == 1
    assert verdict.counts["para_error_omission"] == 1  # the UNK counts as a parameter omission too


def test_a_placeholder_to_a_later_call_does_not_resolve():
    prediction = _gold_prediction()
    prediction[1]["parameters"]["parcel_id"] = "API_call_3"  # produced by the last call
    prediction[2]["responses"] = {"ack": "API_call_3"}
    assert _counts(_score(prediction), "nest") == (2, 3, 3)


# ------------------------------------------------------------------------------------------------ parameters


def test_rouge_partial_credit_is_fractional():
    prediction = _gold_prediction()
    prediction[1]["parameters"]["address"] = "12 Baker Street Paris"
    verdict = _score(prediction)
    correct, predicted, gold = _counts(verdict, "param")
    assert (predicted, gold) == (7, 7)
    assert correct == pytest.approx(6 + 0.749999995, abs=1e-12)
    assert not verdict.passed
    assert verdict.counts["para_error_extaction"] == 1  # the gold value is written in the task


def test_a_case_only_difference_is_not_exact_because_of_rouge_epsilon():
    prediction = _gold_prediction()
    prediction[0]["parameters"]["tracking"] = "1z999"
    verdict = _score(prediction)
    assert _counts(verdict, "param")[0] == pytest.approx(6.999999995, abs=1e-12)
    assert not verdict.passed
    assert verdict.counts["para_error_extaction"] == 1  # gold value appears in the task


@pytest.mark.parametrize("written", ["March 3rd, 2025", "march 3, 2025", "March 03, 2025"])
def test_date_normalisation_gives_full_credit_to_long_dates(written):
    assert value_score("2025-03-03", written) == pytest.approx(0.999999995)
    prediction = _gold_prediction()
    prediction[1]["parameters"]["date"] = written
    assert _counts(_score(prediction), "param")[0] == pytest.approx(6.999999995)


@pytest.mark.parametrize("written, normalised", [
    ("March 3rd, 2025", "2025-03-03"),
    ("March 3th, 2025", "March 3th, 2025"),  # a wrong ordinal suffix is left alone
    ("3 March 2025", "3 March 2025"),
    ("2025-02-30", "2025-02-30"),
    ("Due March 3, 2025", "Due March 3, 2025"),  # strptime needs the whole string
])
def test_normalize_date(written, normalised):
    assert normalize_date(written) == normalised


@pytest.mark.parametrize("gold, predicted, expected", [
    (5, 5.0, 1),
    (5, "5", 0),
    (True, 1, 1),
    (2.5, 2.25, 0),
    (["a b", "c"], ["a b", "c"], 1),
    (["red fox", "x"], ["red fox", "y"], 0.5),
    (["a"], ["a", "b"], 0),
    ({"Start_Date": "x", "n": 1}, {"start date": "x", "n": 1}, 1),
    ({"a": 1, "b": 2}, {"b": 1, "a": 2}, 0),  # keys are compared by position
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, 1),  # ... after a plain equality test
    ("", "x", 0),  # ROUGE refuses an empty reference: upstream's try/except gives 0
])
def test_value_score(gold, predicted, expected):
    assert safe_value_score(gold, predicted) == pytest.approx(expected)


@pytest.mark.parametrize("hypothesis, reference, expected", [
    # Values computed with rouge==1.0.1: Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"].
    ("the quick brown fox", "the quick red fox", 0.749999995),
    ("new york city", "york new city", 0.6666666616666668),
    ("a b. c d", "a c. b d", 0.999999995),
    ("the the cat", "the cat cat", 0.999999995),
    ("central park, new york", "central park", 0.33333332888888895),
    ("  spaced   out  words ", "spaced out words", 0.999999995),
    ("1.5 kg", "1.5 kg of rice", 0.7499999953125),
    ("x", "y", 0.0),
])
def test_rouge_l_matches_the_rouge_package(hypothesis, reference, expected):
    assert rouge_l_f(hypothesis, reference) == expected


def test_rouge_recursion_limit_of_the_official_scorer_scores_zero():
    # An LCS walk of 988 steps overflows rouge 1.0.1's recursive reconstruction under eval.py (CPython 3.11).
    assert value_score("zzz", " ".join(f"w{i}" for i in range(987))) == 0.0  # no error yet
    tail = " ".join(f"w{i}" for i in range(986))
    assert value_score("zzz", tail + " zzz") > 0  # 987 words, the match at the end
    with pytest.raises(Exception):
        value_score("zzz", " ".join(f"w{i}" for i in range(988)))


def test_parameter_error_kinds():
    prediction = _gold_prediction()
    prediction[0]["parameters"]["tracking"] = "2Y000"  # extraction: the gold value is in the task
    prediction[1]["parameters"]["address"] = "Baker Street"  # transformation: partial credit, value not in task
    prediction[1]["parameters"]["extra"] = 1  # redundancy
    del prediction[1]["parameters"]["date"]  # omission
    prediction[2]["parameters"]["urgent"] = "True"  # type: str(gold) == str(pred)
    case = _case(task=TASK.replace("12 Baker Street London", "my office"))
    verdict = _score(prediction, case)
    assert verdict.counts["para_error_extaction"] == 1
    assert verdict.counts["para_error_transformation"] == 1
    assert verdict.counts["para_error_redundancy"] == 1
    assert verdict.counts["para_error_omission"] == 1
    assert verdict.counts["para_error_type"] == 1


@pytest.mark.parametrize("text", [
    "[" * 5000, "]" * 10, "[{'api_name': 'x', 'api_id': [1], 'parameters': {}}, {'api_name': 'y', 'api_id': {}, "
    "'parameters': {}}]", "[{'api_name': 1, 'api_id': None, 'parameters': {1: {2: 3}}, 'responses': [1]}]",
    "[{'api_name': 'a', 'api_id': 22, 'parameters': {'address': {'k': b'x'}, 'date': 1e999}}]",
    "\x00[]\x00", "[1e5, 'x']",
    "[{'api_name': 'a', 'api_id': 22, 'parameters': {'address': '" + "w " * 3000 + "'}}]",
])
def test_the_scorer_never_raises(text):
    verdict = _score(text)
    json.dumps(verdict.to_json())


# ------------------------------------------------------------------------------------------------ depth / structure


def test_depth_and_structure_of_the_hand_made_case():
    case = _case()
    assert case.payload["depth"] == 3
    # lookup → reroute, lookup → notify, reroute → notify: structure 3 (chain + skip).
    assert case.payload["structure_key"] == 3


def test_depth_uses_upstreams_substring_test():
    calls = [
        {"api_name": "lookup_parcel", "parameters": {"tracking": "API_call_10"}, "responses": ["API_call_1"]},
    ]
    # "API_call_1" is a substring of "API_call_10", and a call's own responses are already in scope.
    assert max_depth(gold_calls({"api": API, "api_ids": IDS, "call": calls})) == 2


# ------------------------------------------------------------------------------------------------ aggregation


def _result(case_id, counts, depth="2", structure="0", passed=False):
    full = {"all_num": 1.0, "correct_format_num": 1.0, "tree_acc": float(passed)}
    full.update({key: 0.0 for key in COUNT_KEYS + ERROR_KEYS})
    full.update(counts)
    category = depth_bucket(int(depth))
    return CaseResult(suite="nestools", case_id=case_id, category=category, passed=passed, error_type=None,
                      counts=full, labels={"depth": depth, "structure": structure})


def test_aggregate_is_micro_and_avg_is_the_mean_of_four_f1():
    a = _result("1", {"correct_api_num": 3, "predict_api_num": 3, "gold_api_num": 3, "correct_order_num": 2,
                      "predict_order_num": 2, "gold_order_num": 2, "correct_param_num": 4, "predict_param_num": 4,
                      "gold_param_num": 4, "correct_nest_num": 2, "predict_nest_num": 2, "gold_nest_num": 2},
                passed=True)
    b = _result("2", {"correct_format_num": 0.0, "gold_api_num": 3, "gold_order_num": 2, "gold_param_num": 6,
                      "gold_nest_num": 2}, depth="3", structure="7")
    metrics = {m.name: m for m in nestools.aggregate([a, b])}
    assert metrics["Selection P"].value == 1.0
    assert metrics["Selection R"].value == 0.5
    assert metrics["Parameter R"].value == 0.4
    f1 = {name: metrics[f"{name} F1"].value for name in ("Selection", "Order", "Parameter", "Nested-Param")}
    assert f1["Parameter"] == pytest.approx(2 * 1.0 * 0.4 / 1.4)
    assert metrics["Avg"].value == pytest.approx(sum(f1.values()) / 4)
    assert metrics["Format"].value == 0.5 and metrics["Tree"].value == 0.5
    assert metrics["depth2"].group == "category" and metrics["depth2"].value == 1.0
    assert metrics["depth 3-5: Tree"].value == 0.0
    assert metrics["structure 7: Format"].value == 0.0
    assert all(m.value is None or 0 <= m.value <= 1 for m in metrics.values())


def test_depth1_view_has_no_nest_family_and_no_average_as_upstream():
    flat = _result("1", {"correct_api_num": 2, "predict_api_num": 2, "gold_api_num": 2}, depth="1", structure="10")
    names = {m.name for m in nestools.aggregate([flat])}
    assert "depth 1: Selection F1" in names
    assert "depth 1: Nested-Param F1" not in names and "depth 1: Avg" not in names


# ------------------------------------------------------------------------------------------------ cases, prompts


def test_samples_load_and_pass_under_gold():
    definition = load_definition(SUITE_DIR / "suite.yaml")
    cases = nestools.load_cases(SuiteContext(SAMPLES, definition.raw))
    assert {c.category for c in cases} == set(definition.categories)
    assert len({c.case_id for c in cases}) == len(cases)
    for case in cases:
        assert nestools.score(case, Generation(text=nestools.gold_output(case))).passed, case.case_id
        depth_marker = f"depth{min(case.payload['depth'], 3)}"
        assert depth_marker in case.keywords
        assert ("nested" in case.keywords) == (case.payload["depth"] > 1)


def test_rebuilt_prompt_layout_and_candidates():
    cases = nestools.load_cases(SuiteContext(SAMPLES, {"name": "nestools"}))
    case = cases[-1]
    assert prompt_source(SAMPLES) == "rebuilt" and case.payload["prompt_source"] == "rebuilt"
    request = nestools.build_request(case)
    # the limit is suite.yaml's (inference.py: max_tokens=768), applied by the core to every request of the suite
    assert request.max_tokens is None and len(request.messages) == 1
    assert load_definition(REPO / "suites" / "nestools" / "suite.yaml").max_tokens == 768
    message = request.messages[0]
    assert message["role"] == "user"
    text = message["content"]
    assert text.startswith(BASE_PROMPT + "[{'api_name': ")
    assert text.endswith("\n\nTask description:\n" + case.payload["task"] + "\n\nAPI call result:\n")
    candidates = rebuilt_candidates(SAMPLES, case.payload["test_id"])
    assert str(candidates) in text
    assert set(case.payload["api_ids"]) <= {c["api_id"] for c in candidates}
    assert all(list(c)[:2] == ["api_name", "api_id"] for c in candidates)
    assert nestools.build_request(case) == request  # seeded: reproducible


def test_official_prompt_file_is_used_verbatim_when_present(tmp_path):
    for name in ("test_data.jsonl", "test_api_ids.jsonl"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    rows = [json.loads(line) for line in (SAMPLES / "test_data.jsonl").read_text().splitlines()]
    with (tmp_path / "test_prompt.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps({"test_id": row["test_id"], "prompt": f"official prompt {row['test_id']} "
                                     "[{'api_name': 'x', 'api_id': 4242}]"}) + "\n")
    cases = nestools.load_cases(SuiteContext(tmp_path, {"name": "nestools"}))
    assert prompt_source(tmp_path) == "official"
    assert "prompt_official" in cases[0].keywords
    assert nestools.build_request(cases[0]).messages[0]["content"].startswith("official prompt 1 ")
    assert candidate_ids(cases[0]) == {4242}


def test_replay_reads_raw_responses_and_drops_api_failures(tmp_path):
    lines = [{"test_id": 1, "prompt": "p", "response": "[]", "tokens": [1, 1]},
             {"test_id": 2, "prompt": "p", "response": -1, "tokens": -1, "error": "timeout"}]
    (tmp_path / "raw_response.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert nestools.replay_outputs(tmp_path) == {"1": "[]"}
    assert nestools.replay_dropped(tmp_path) == ["2"]
    only_parsed = tmp_path / "parsed"
    only_parsed.mkdir()
    (only_parsed / "new_response.jsonl").write_text(
        json.dumps({"test_id": 1, "lst_response": [{"api_name": "a"}]}) + "\n"
        + json.dumps({"test_id": 2, "lst_response": -1}) + "\n")
    assert nestools.replay_outputs(only_parsed) == {"1": '[{"api_name": "a"}]', "2": ""}


# ------------------------------------------------------------------------------------------------ shared data


@pytest.fixture(scope="module")
def full_cases() -> dict[str, Case]:
    data = _data_dir()
    if data is None:
        pytest.skip("NesTools data not available (set TOOLBENCH_DATA)")
    return {c.case_id: c for c in nestools.load_cases(SuiteContext(data, {"name": "nestools"}))}


def test_full_data_statistics(full_cases):
    cases = list(full_cases.values())
    assert len(cases) == 1000
    depths = {d: sum(1 for c in cases if c.payload["depth"] == d) for d in range(1, 6)}
    assert depths == {1: 170, 2: 458, 3: 354, 4: 17, 5: 1}  # the spec's table (scorer's algorithm)
    assert sum(1 for c in cases if "nested" in c.keywords) == 830


def test_every_gold_chain_passes_or_is_a_known_defect(full_cases):
    defects = load_definition(SUITE_DIR / "suite.yaml").known_defects()
    failing = [case_id for case_id, case in full_cases.items()
               if not nestools.score(case, Generation(text=nestools.gold_output(case))).passed]
    assert sorted(failing) == sorted(defects)


def test_differential_against_official_dev_verdicts(full_cases):
    folder = _verdicts_dir()
    if folder is None:
        pytest.skip("dev verdicts not available")
    rows = [json.loads(line) for line in (folder / "verdicts.jsonl").read_text().splitlines() if line.strip()]
    disagreements = []
    for row in rows:
        case = full_cases[str(row["test_id"])]
        verdict = nestools.score(case, Generation(text=row["output"]))
        problems = [key for key, value in row["counts"].items()
                    if not math.isclose(verdict.counts[key], value, rel_tol=0, abs_tol=1e-9)]
        problems += [key for key, value in row["errors"].items() if verdict.counts[key] != value]
        if verdict.passed != row["tree"]:
            problems.append("tree")
        if bool(verdict.counts["correct_format_num"]) != row["format"]:
            problems.append("format")
        if (verdict.error_type == FORMAT_ERROR) == row["format"]:
            problems.append("format_error label")
        if case.payload["depth"] != row["depth"]:
            problems.append("depth")
        if problems:
            disagreements.append((row["test_id"], row["operator"], problems))
    assert not disagreements, f"{len(disagreements)}/{len(rows)} disagree: {disagreements[:10]}"


def test_rebuilt_prompt_has_the_official_layout_when_the_official_file_is_available():
    data = _data_dir()
    if data is None or not (data / OFFICIAL_PROMPT_FILE).is_file():
        pytest.skip("the official inference/test_prompt.jsonl is not in the data folder")
    official = {c.case_id: c for c in nestools.load_cases(SuiteContext(data, {"name": "nestools"}))}
    case = official["1"]
    rebuilt = render_prompt(rebuilt_candidates(data, 1), case.payload["task"])
    text = nestools.build_request(case).messages[0]["content"]
    head = BASE_PROMPT + "[{'api_name': "
    tail = TASK_HEADER + case.payload["task"] + ANSWER_HEADER
    assert text.startswith(head) and rebuilt.startswith(head)
    assert text.endswith(tail) and rebuilt.endswith(tail)
    assert set(case.payload["api_ids"]) <= candidate_ids(case)


def test_replay_of_the_official_prediction_files_matches_the_verdicts(full_cases):
    folder = _verdicts_dir()
    if folder is None:
        pytest.skip("dev verdicts not available")
    rows = {str(r["test_id"]): r for r in map(json.loads, (folder / "verdicts.jsonl").read_text().splitlines())}
    raw = nestools.replay_outputs(folder / "round_0")
    assert raw == {case_id: row["output"] for case_id, row in rows.items()}
    parsed = nestools.replay_outputs(folder / "round_0" / "new_response.jsonl")
    assert set(parsed) == set(rows)
    disagreements = []
    for case_id, text in parsed.items():
        verdict = nestools.score(full_cases[case_id], Generation(text=text))
        expected = rows[case_id]
        if verdict.passed != expected["tree"] or bool(verdict.counts["correct_format_num"]) != expected["format"]:
            disagreements.append(case_id)
    assert not disagreements
