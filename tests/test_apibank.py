"""API-Bank suite: upstream rules pinned with hand-made outputs (prompts, parser, rouge 1.0.1 ROUGE-L, the API-call
check of DAMO-ConvAI@483554e, Table 9's aggregation), samples, gold and replay runs, and the full data's counts."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pytest_toolbench.contract.definition import load_definition

from pytest_toolbench.run.catalog import import_scorer
from pytest_toolbench.scorer_lib import rouge as rouge_l  # the shared rouge 1.0.1 ROUGE-L
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext

from conftest import REPO, shared_data_dir

SUITE_DIR = REPO / "suites" / "apibank"
SAMPLES = SUITE_DIR / "samples"

scorer = import_scorer(SUITE_DIR)
loading = import_scorer(SUITE_DIR, "loading")
prompt = import_scorer(SUITE_DIR, "prompt")
decoding = import_scorer(SUITE_DIR, "decoding")
api_check = import_scorer(SUITE_DIR, "api_check")
checker = import_scorer(SUITE_DIR, "checker")
aggregation = import_scorer(SUITE_DIR, "aggregation")
specs = import_scorer(SUITE_DIR, "specs")


def _definition(samples=("dialog",), **options) -> dict:
    definition = dict(load_definition(SUITE_DIR / "suite.yaml").raw)  # options: their default values
    definition["options"] = {**definition["options"], "samples": list(samples), **options}
    return definition


def _data_dir() -> Path | None:
    data = shared_data_dir()
    if data is None or not (data / "apibank" / "lv1-lv2-samples" / "level-1-given-desc").is_dir():
        return None
    return data / "apibank"


@pytest.fixture(scope="module")
def full_cases() -> list[Case]:
    data = _data_dir()
    if data is None:
        pytest.skip("API-Bank data not available (set TOOLBENCH_DATA)")
    return scorer.load_cases(SuiteContext(data, _definition(("dialog", "api_call"))))


def _sample_cases(**options) -> list[Case]:
    return scorer.load_cases(SuiteContext(SAMPLES, _definition(("dialog", "api_call"), **options)))


def _by_id(cases: list[Case]) -> dict[str, Case]:
    return {c.case_id: c for c in cases}


def _api_case(api_name: str, params: dict, gold_request=None, output="success", exception=None,
              level="level-1-given-desc") -> Case:
    """A hand-made API sample: one user turn, then the gold API row as the target."""
    target = {"role": "API", "api_name": api_name, "param_dict": params,
              "result": {"api_name": api_name, "input": params if gold_request is None else gold_request,
                         "output": output, "exception": exception}}
    payload = {"level": level, "file": "Hand-level-1-1.jsonl", "sample_id": 0, "kind": "api_call",
               "history": [{"role": "User", "text": "please"}], "target": target, "apis": [api_name],
               "level_files": 1}
    return Case(suite="apibank", case_id="Hand-level-1-1.jsonl#0", category="level_1", payload=payload,
                keywords=("api_call",), context=SuiteContext(Path("."), {"libraries": ["tl_failures"]}))


def _dialog_case(reference: str, threshold: float = 0.2) -> Case:
    payload = {"level": "level-1-given-desc", "file": "Hand-level-1-1.jsonl", "sample_id": 1, "kind": "dialog",
               "history": [{"role": "User", "text": "hi"}], "target": {"role": "AI", "text": reference},
               "apis": [], "level_files": 1}
    return Case(suite="apibank", case_id="Hand-level-1-1.jsonl#1", category="level_1", payload=payload,
                keywords=("dialog",), context=SuiteContext(Path("."), {"options": {"dialog_pass_threshold": threshold}}))


def _judge(case: Case, text: str):
    return scorer.score(case, Generation(text=text))


# ---------------------------------------------------------------------------------------------------------------
# Prompts (ToLeaP b950713 scripts/apibank_eval.py, DAMO-ConvAI 483554e api-bank/evaluator.py)


@pytest.mark.parametrize("variant, kind, digest", [
    # sha256 of the string literals of the pinned files, read with ast.literal_eval.
    ("toleap", "api_call", "a4cad30ab2832e464d3b4b2ec30feee64a41f003cc33e16297ab43b7555ffe8b"),
    ("toleap", "dialog", "a89d3ac30acebf6a858fdc36eae9d093853de894bbbbba774cd5febe6c236e3a"),
    ("upstream", "api_call", "bf428a1d00aa56b8520e62b45fc4c1a65512c0fdda8d9993c8e6e07d527ce892"),
    ("upstream", "dialog", "363519dc74125e1f38721bf6b9fe1a9cf8c7bf570a3a5dda0c08646fad5e2383"),
])
def test_prompt_texts_are_upstreams_verbatim(variant, kind, digest):
    assert prompt.prompt_sha256(variant, kind) == digest


def test_toleap_prompts_are_upstreams_indented_by_four_spaces():
    for kind in ("dialog", "api_call"):
        toleap, upstream = prompt.PROMPTS["toleap"][kind], prompt.PROMPTS["upstream"][kind]
        assert toleap != upstream and toleap.replace("\n    ", "\n") == upstream  # blank lines stay blank


def test_api_description_is_tool_managers_json_dumps():
    # ToolManager.get_api_description: json.dumps of name, description, input_parameters, output_parameters.
    assert specs.description("GetUserToken", "upstream") == (
        '{"name": "GetUserToken", "description": "Get the user token by username and password.", '
        '"input_parameters": {"username": {"type": "str", "description": "The username of the user."}, '
        '"password": {"type": "str", "description": "The password of the user."}}, '
        '"output_parameters": {"token": {"type": "str", "description": "The token of the user."}}}')
    # ToLeaP's ToolManager skips translate.py, so its prompts never describe Translate; upstream's does.
    assert specs.description("Translate", "toleap") is None
    assert specs.description("Translate", "upstream").startswith('{"name": "Translate"')
    assert len(specs.api_specs()) == 53


def test_only_two_simulators_have_optional_arguments():
    optional = {name: [p for p in s["call_parameters"] if p not in s["call_required"]]
                for name, s in specs.api_specs().items()}
    assert {k: v for k, v in optional.items() if v} == {
        "ModifyRegistration": ["new_appointment_date", "new_appointment_doctor"], "RecordHealthData": ["health_data"]}


def test_dialog_request_layout():
    case = _by_id(_sample_cases())["AddReminder-GetUserToken-level-2-1.jsonl#3"]
    messages = scorer.build_request(case).messages
    system = messages[0]["content"]
    assert messages[0]["role"] == "system"
    # sorted by name, joined with "\n", right after the prompt (which ends with 4 spaces in ToLeaP's variant)
    assert system == (prompt.TOLEAP_RESPONSE_PROMPT + specs.description("AddReminder", "toleap") + "\n"
                      + specs.description("GetUserToken", "toleap"))
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "system", "assistant", "system"]
    assert messages[4]["content"] == ("[GetUserToken(username='plantlover', password='green123')] Response: "
                                      "{'token': 'p1a2n3t4l5o6v7e8r9'}")  # str() of the JSON value: Python repr
    assert messages[-1]["content"].endswith("Response: success")


def test_description_order_option():
    case = _by_id(_sample_cases(description_order="dialogue"))["AddReminder-GetUserToken-level-2-1.jsonl#3"]
    system = scorer.build_request(case).messages[0]["content"]
    assert system.index('"name": "GetUserToken"') < system.index('"name": "AddReminder"')


def test_level_2_api_samples_describe_toolsearcher_only_and_upstream_variant():
    cases = _by_id(_sample_cases(prompt="upstream"))
    api = scorer.build_request(cases["AddAlarm-level-3-1.jsonl#4"]).messages[0]["content"]
    assert api == prompt.UPSTREAM_API_CALL_PROMPT + specs.description("ToolSearcher", "upstream")
    dialog = scorer.build_request(cases["AddAlarm-level-3-1.jsonl#5"]).messages[0]["content"]
    assert dialog.startswith(prompt.UPSTREAM_RESPONSE_PROMPT) and '"name": "AddAlarm"' in dialog


# ---------------------------------------------------------------------------------------------------------------
# Samples (Sample.from_chat_history) and the full data


def test_samples_follow_from_chat_history():
    cases = _sample_cases()
    ids = [c.case_id for c in cases if c.payload["file"] == "Calculator-GetToday-level-1-1.jsonl"]
    # rows: User, API GetToday, API Calculator, AI, API Calculator, User. Samples: 0 (->GetToday), 1 (->Calculator),
    # 2 (->Calculator again: the duplicate pair), 3 (->AI), 4 (->Calculator), 5 (->User: not scored upstream).
    assert ids == [f"Calculator-GetToday-level-1-1.jsonl#{i}" for i in range(5)]
    by_id = _by_id(cases)
    one, two = by_id["Calculator-GetToday-level-1-1.jsonl#1"], by_id["Calculator-GetToday-level-1-1.jsonl#2"]
    assert one.payload["history"] == two.payload["history"] and one.payload["target"] == two.payload["target"]
    assert {c.category for c in cases} == {"level_1", "level_2"}
    default = scorer.load_cases(SuiteContext(SAMPLES, _definition()))
    assert {c.payload["kind"] for c in default} == {"dialog"} and len(default) == 7


def test_samples_pass_under_gold():
    for case in _sample_cases():
        verdict = _judge(case, scorer.gold_output(case))
        assert verdict.passed, (case.case_id, verdict.explanation)


def test_bad_options_are_refused():
    from shipped import option_refusal

    for bad in ({"samples": ["api"]}, {"samples": []}, {"prompt": "other"}, {"description_order": "set"},
                {"levels": ["level-3"]}, {"dialog_pass_threshold": "high"}, {"dialog_pass_threshold": True}):
        key = next(iter(bad))
        assert f"apibank.{key}=" in option_refusal("apibank", **bad), bad
    assert option_refusal("apibank", samples=["dialog", "api_call"], dialog_pass_threshold=0.5) == ""


def test_full_data_counts(full_cases):
    from collections import Counter
    counts = Counter((c.category, c.payload["kind"]) for c in full_cases)
    assert counts == {("level_1", "dialog"): 375, ("level_2", "dialog"): 103,
                      ("level_1", "api_call"): 399, ("level_2", "api_call"): 135}
    assert len({c.case_id for c in full_cases}) == len(full_cases)
    files = {c.category: c.payload["level_files"] for c in full_cases}
    assert files == {"level_1": 214, "level_2": 50}


def test_every_gold_value_can_be_written_in_the_call_syntax(full_cases):
    for case in full_cases:
        if case.payload["kind"] == "api_call":
            params = case.payload["target"]["param_dict"]
            # written unquoted when it is a list text, else quoted: it must then hold no quote and not be empty
            assert all(isinstance(v, str) and v and (v.startswith("[") and v.endswith("]")
                                                     or ("'" not in v and '"' not in v)) for v in params.values())
            call = decoding.decode_call(scorer.gold_output(case))
            assert call.params == params, case.case_id


def test_gold_failures_are_exactly_the_known_defects(full_cases):
    defects = yaml.safe_load((SUITE_DIR / "known_defects.yaml").read_text())
    failed = {}
    for case in full_cases:
        verdict = _judge(case, scorer.gold_output(case))
        if not verdict.passed:
            failed[case.case_id] = (case.payload["target"]["api_name"], verdict.error_type)
    assert set(failed) == set(defects)
    assert all(kind == "api_call" for kind in (c.payload["kind"] for c in full_cases if c.case_id in failed))
    assert sorted({api for api, _ in failed.values()}) == [
        "AddMeeting", "CancelTimedSwitch", "DeleteMeeting", "ModifyMeeting", "QueryMeeting", "TimedSwitch"]


# ---------------------------------------------------------------------------------------------------------------
# rouge==1.0.1 ROUGE-L (values computed with the package: Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"])


@pytest.mark.parametrize("hypothesis, reference, expected", [
    ("the cat sat on the mat", "the cat sat on the mat", 0.999999995),
    ("The cat sat.", "the cat sat.", 0.6666666616666668),  # case-sensitive
    ("the cat sat on the mat. the dog ran", "the dog sat. the cat ran on the mat", 0.999999995),  # union of LCS words
    ("a b c d", "d c b a", 0.24999999500000009),
    ("Hello. ", "Hello", 0.6666666622222223),  # the blank piece after "." is a sentence whose word is ""
    ("Hello.  . World", "Hello World", 0.7999999952000001),
    ("a b a b", "b a b a", 0.999999995),  # distinct words only
    ("b a", "a b. a", 0.999999995),  # pins the reconstruction's tie-breaking (the other choice gives 0.5)
    ("I have added the reminder for you.",
     "Your reminder to water the plants on May 3rd at 8:00 AM has been added.", 0.09090908657024814),
    ("x", "y", 0.0),
])
def test_rouge_l_matches_rouge_1_0_1(hypothesis, reference, expected):
    assert rouge_l.rouge_l_f(hypothesis, reference) == expected


@pytest.mark.parametrize("hypothesis", ["...", ".", ""])
def test_rouge_refuses_an_output_without_sentences(hypothesis):
    with pytest.raises(rouge_l.RougeError, match="Hypothesis is empty."):
        rouge_l.rouge_l_f(hypothesis, "reference")


# ---------------------------------------------------------------------------------------------------------------
# Dialogue samples (Evaluator.evaluate for an AI target; the scripts' loop)


def test_dialog_score_is_rounded_rouge_l_and_passes_at_the_low_score_line():
    case = _dialog_case("Your reminder to water the plants on May 3rd at 8:00 AM has been added.")
    verdict = _judge(case, "I have added the reminder for you.")
    assert verdict.counts["rouge_l"] == 0.0909 and not verdict.passed and verdict.error_type == "low_rouge_l"
    assert _judge(_dialog_case("a b c d e"), "a b x y z").counts["rouge_l"] == 0.4
    exactly = _judge(_dialog_case("a b c d e f g h i j"), "a b k l m n o p q r")  # f = 0.19999999 -> 0.2
    assert exactly.counts["rouge_l"] == 0.2 and exactly.passed
    assert not _judge(_dialog_case("a b c d e f g h i j", threshold=0.5), "a b k l m n o p q r").passed


def test_empty_output_scores_zero_and_dots_are_a_rouge_error():
    case = _dialog_case("Done.")
    empty = _judge(case, "")
    assert empty.counts["rouge_l"] == 0.0 and empty.error_type == "empty_output"
    dots = _judge(case, "...")
    assert dots.counts["rouge_l"] == 0.0 and dots.error_type == "rouge_error"
    # whitespace is not empty upstream (`if model_output:`): it is scored, and scores 0
    blank = _judge(case, " ")
    assert blank.counts["rouge_l"] == 0.0 and blank.error_type == "low_rouge_l"


def test_output_is_not_stripped_but_trailing_special_tokens_are():
    case = _dialog_case("Hello")
    assert _judge(case, "Hello<|eot_id|>").counts["rouge_l"] == 1.0
    assert _judge(case, "Hello. ").counts["rouge_l"] == 0.6667  # the trailing blank sentence counts, as upstream
    assert _judge(case, "<think>x</think>Hello").counts["rouge_l"] < 1.0  # no <think> handling in ToLeaP


# ---------------------------------------------------------------------------------------------------------------
# The call parser (get_api_call + parse_api_call): regex only


@pytest.mark.parametrize("text, name, params", [
    ("[GetUserToken(username='a', password='b')]", "GetUserToken", {"username": "a", "password": "b"}),
    ("Sure! [QueryStock(stock_code=\"NFLX\", date='2022-06-01')] done", "QueryStock",
     {"stock_code": "NFLX", "date": "2022-06-01"}),
    # greedy to the last ")]" of the line: one call named A
    ("[A(x='1')] and [B(y='2')]", "A", {"x": "1", "y": "2"}),
    # a quoted value ends at the next quote of either kind
    ("[SendEmail(content=\"it's fine\")]", "SendEmail", {"content": "it"}),
    # an empty quoted value swallows text up to a later quote
    ("[A(a='', b='x')]", "A", {"a": "', b="}),
    # unquoted lists up to the last "]" of the parameters; bare words; "3.5" is read as "3"
    ("[AddMeeting(attendees=['a', 'b'], n=3.5)]", "AddMeeting", {"attendees": "['a', 'b']", "n": "3"}),
    ("[A(k='1', k='2')]", "A", {"k": "2"}),  # the last repeated key wins
    ("[A(k = 'spaced' )]", "A", {"k": "spaced"}),
    ("[A(positional)]", "A", {}),
])
def test_parse_api_call(text, name, params):
    call = decoding.decode_call(text)
    assert (call.name, call.params) == (name, params)


@pytest.mark.parametrize("text", ["GetUserToken(username='a')", "[GetUserToken(username='a'\n)]", "[Get User()]",
                                  "[(x='1')]", "", "[A(x='1')"])
def test_no_api_call_found(text):
    assert decoding.decode_call(text) is None


def test_parser_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    text = f"[A(x=__import__('os').system('touch {marker}'))]"
    call = decoding.decode_call(text)
    assert call.name == "A" and not marker.exists()


# ---------------------------------------------------------------------------------------------------------------
# The API-call check (evaluator.py evaluate, tool_manager.py api_call, apis/*.py call + check_api_call_correctness)


def test_no_call_is_a_format_error_and_wrong_name_a_mismatch():
    case = _api_case("GetUserToken", {"username": "u", "password": "p"}, output={"token": "t"})
    verdict = _judge(case, "I would call GetUserToken.")
    assert not verdict.passed and verdict.error_type == FORMAT_ERROR
    assert verdict.labels["tl_category"] == "unparseable"
    verdict = _judge(case, "[CheckToken(token='x')]")
    assert verdict.error_type == "api_name_mismatch" and "API Name Mismatch: CheckToken vs GetUserToken" in \
        verdict.explanation
    assert verdict.labels["tl_category"] == "tool_hallucination"  # CheckToken is not among the described tools


def test_tool_manager_parameter_rules():
    case = _api_case("GetUserToken", {"username": "u", "password": "p"}, output={"token": "t"})
    assert _judge(case, "[GetUserToken(username='u', password='p')]").passed
    assert _judge(case, "[GetUserToken(password=\"p\", username=u)]").passed  # bare word, any order
    bad = _judge(case, "[GetUserToken(username='u', password='p', email='e')]")
    assert bad.error_type == "invalid_input_parameter" and bad.labels["tl_category"] == "parameter_hallucination"
    missing = _judge(case, "[GetUserToken(username='u')]")
    assert missing.error_type == "miss_input_argument" and missing.labels["tl_category"] == "parameter_missing"
    wrong = _judge(case, "[GetUserToken(username='u', password='q')]")
    assert wrong.error_type == "input_mismatch" and wrong.labels["tl_category"] == "content_mismatch"


def test_int_float_bool_conversions():
    gold = {"hotel_name": "H", "check_in_time": "2023-08-10", "check_out_time": "2023-08-15", "room_count": 1,
            "adult_count": 2, "child_count": 0}
    case = _api_case("BookHotel", {k: str(v) for k, v in gold.items()}, gold_request=gold, output="1")
    call = "[BookHotel(hotel_name='H', check_in_time='2023-08-10', check_out_time='2023-08-15', room_count='{}', " \
           "adult_count='2', child_count='0')]"
    assert _judge(case, call.format("1")).passed  # "1" -> int 1 equals the gold request's 1
    assert _judge(case, call.format("one")).error_type == "invalid_parameter_type"  # not isdigit
    assert _judge(case, call.format("²")).error_type == "invalid_parameter_type"  # isdigit, but int() fails
    assert _judge(case, call.format("2")).error_type == "input_mismatch"
    switch = _api_case("TimedSwitch", {"name": "Lamp", "time": "2023-01-01 10:00:00", "on": "True"},
                       gold_request={"name": "lamp", "time": "2023-01-01 10:00:00", "on": True})
    assert _judge(switch, "[TimedSwitch(name=' LAMP ', time='2023-01-01 10:00:00', on='True')]").passed
    assert not _judge(switch, "[TimedSwitch(name='lamp', time='2023-01-01 10:00:00', on='true')]").passed  # == 'True'


def test_content_word_jaccard_must_exceed_one_half():
    gold = {"token": "t", "content": "Meeting with John", "time": "2023-09-12 14:00:00", "location": "office"}
    case = _api_case("AddAgenda", gold)
    call = "[AddAgenda(token='t', content='{}', time='2023-09-12 14:00:00', location='office')]"
    assert _judge(case, call.format("Meeting with John today")).passed  # 3/4
    assert not _judge(case, call.format("Meeting with Jane")).passed  # 2/4 = 0.5 is not > 0.5
    assert not _judge(case, call.format("meeting with John")).passed  # case-sensitive for agendas: 2/4
    assert _judge(case, "[AddAgenda(token='other', content='Meeting with John', time='2023-09-12 14:00:00', "
                        "location='office')]").passed  # the token is not compared (only through the output)
    reminder = _api_case("AddReminder", {"token": "t", "content": "Call Mom", "time": "2023-01-01 09:00:00"})
    assert _judge(reminder, "[AddReminder(token='t', content='call mom', time='2023-01-01 09:00:00')]").passed


def test_meeting_attendees_never_match_a_gold_list():
    gold = {"token": "t", "meeting_topic": "Sync", "start_time": "2023-01-01 10:00:00",
            "end_time": "2023-01-01 11:00:00", "location": "room", "attendees": ["A", "B"]}
    case = _api_case("AddMeeting", {**gold, "attendees": "['A', 'B']"}, gold_request=gold)
    verdict = _judge(case, scorer.gold_output(case))
    assert not verdict.passed and verdict.error_type == "input_mismatch"


def test_date_normalisations_and_invalid_dates():
    stock = _api_case("QueryStock", {"stock_code": "NFLX", "date": "2022-06-01"}, output=197.44)
    assert _judge(stock, "[QueryStock(stock_code=' nflx', date=' 2022-06-01 ')]").passed
    assert not _judge(stock, "[QueryStock(stock_code='NFLX', date='22-06-01')]").passed  # zfill: year 0022
    bad = _api_case("QueryStock", {"stock_code": "NFLX", "date": "June 1"}, output=None, exception="x")
    assert not _judge(bad, "[QueryStock(stock_code='NFLX', date='June 1')]").passed  # two exceptions never equal
    history = _api_case("QueryHistoryToday", {"date": "2023-10-12"}, output=[])
    assert _judge(history, "[QueryHistoryToday(date='10-12')]").passed  # both become %m-%d
    health = _api_case("QueryHealthData", {"user_id": "E1", "start_time": "2023-01-01 00:00:00",
                                           "end_time": "2023-01-02 00:00:00"}, output=[])
    assert _judge(health, "[QueryHealthData(user_id='e1 ', start_time='2023-01-01 00:00:00', "
                          "end_time='2023-01-02 00:00:00')]").passed


def test_delete_rules_and_the_delete_meeting_key_error():
    agenda = _api_case("DeleteAgenda", {"token": "t", "content": "x", "time": "2023-01-01 10:00:00",
                                        "location": "here"})
    assert _judge(agenda, "[DeleteAgenda(token='t', content='other', time='2023-01-01 10:00:00', "
                          "location='elsewhere')]").passed  # only the time counts when both outputs are 'success'
    assert not _judge(agenda, "[DeleteAgenda(token='t', content='x', time='2023-01-01 11:00:00', "
                              "location='here')]").passed
    meeting = _api_case("DeleteMeeting", {"token": "t", "meeting_topic": "m", "start_time": "s", "end_time": "e",
                                          "location": "l", "attendees": "x"})
    verdict = _judge(meeting, scorer.gold_output(meeting))
    assert not verdict.passed and verdict.error_type == "key_error"


def test_get_today_is_right_without_arguments_only():
    case = _api_case("GetToday", {}, gold_request=None, output="2023-03-31")
    assert _judge(case, "[GetToday()]").passed
    assert _judge(case, "[GetToday(date='today')]").error_type == "invalid_input_parameter"


def test_output_only_apis_need_the_exact_request():
    case = _api_case("ToolSearcher", {"keywords": "add alarm"}, output={"name": "AddAlarm"},
                     level="level-2-toolsearcher")
    verdict = _judge(case, "[ToolSearcher(keywords='add alarm')]")
    assert verdict.passed and verdict.labels["api_rule"] == "exact request"
    assert not _judge(case, "[ToolSearcher(keywords='alarm')]").passed


def test_a_check_that_raises_upstream_is_a_wrong_call():
    case = _api_case("EmergencyKnowledge", {"symptom": "fever"}, output=[])
    verdict = _judge(case, "[EmergencyKnowledge(symptom=' ')]")
    assert not verdict.passed and verdict.error_type == "check_raises"


def test_optional_arguments_default_to_none():
    case = _api_case("ModifyRegistration", {"appointment_id": "123"},
                     gold_request={"appointment_id": "123", "new_appointment_date": "2023-1-5",
                                   "new_appointment_doctor": None})
    assert _judge(case, "[ModifyRegistration(appointment_id=' 123', new_appointment_date='2023-01-05')]").passed
    assert not _judge(case, "[ModifyRegistration(appointment_id='123')]").passed  # None vs the gold date


@pytest.mark.parametrize("text", ["", "[", "[]", "[(", "[A(" * 5000, "\x00[\x00(]", "[GetUserToken(" + "a=" * 3000 + ")]",
                                  "[GetUserToken(username=" + "[" * 2000 + ")]", "…" * 100, "." * 5000,
                                  "<|eot_id|>" * 10, "[GetUserToken(username='²', password=None)]"])
def test_the_scorer_never_raises(text):
    for case in (_api_case("GetUserToken", {"username": "u", "password": "p"}, output={"token": "t"}),
                 _dialog_case("The token is t.")):
        verdict = _judge(case, text)
        json.dumps(verdict.to_json())


# ---------------------------------------------------------------------------------------------------------------
# Aggregation: Table 9


TABLE9 = [  # ToLeaP Table 9: level-1 / level-2 / weighted average
    (9.14, 9.20, 9.15), (47.42, 36.41, 45.33), (45.99, 36.06, 44.11), (41.95, 38.44, 41.29), (45.98, 36.71, 44.22),
    (45.62, 39.59, 44.48), (45.76, 40.07, 44.68), (2.86, 0.82, 2.47), (44.20, 35.11, 42.48), (44.90, 35.31, 43.08),
    (44.96, 39.44, 43.91), (45.32, 38.04, 43.94), (37.62, 32.28, 36.61), (41.55, 35.69, 40.44),
    (30.07, 25.93, 29.29)]


@pytest.mark.parametrize("l1, l2, average", TABLE9)
def test_weighted_average_reproduces_table_9(l1, l2, average):
    weights = {"level_1": 214.0, "level_2": 50.0}
    assert abs(aggregation.weighted_average({"level_1": l1, "level_2": l2}, weights) - average) < 0.0051


def _result(category, score, case_id, files):
    return CaseResult(suite="apibank", case_id=case_id, category=category, passed=score >= 0.2,
                      error_type=None if score >= 0.2 else "low_rouge_l",
                      counts={"rouge_l": score, "level_files": files}, labels={"kind": "dialog"})


def test_aggregate_rounds_each_level_then_weights_by_dialogue_files():
    results = [_result("level_1", s, f"f{i}.jsonl#1", 214) for i, s in enumerate((0.47421, 0.47424))]
    results += [_result("level_2", 0.36411, "g.jsonl#1", 50)]
    metrics = {m.name: m for m in scorer.aggregate(results)}
    assert metrics["level_1 dialog score (Table 9)"].value == pytest.approx(0.4742)
    assert metrics["level_2 dialog score (Table 9)"].value == pytest.approx(0.3641)
    # (214 * 47.42 + 50 * 36.41) / 264 = 45.3348 -> 45.33
    assert metrics["weighted dialog score (Table 9)"].value == pytest.approx(0.4533)
    api = CaseResult(suite="apibank", case_id="x.jsonl#0", category="level_1", passed=True, error_type=None,
                     counts={"api_correct": 1.0, "tl_reward": 1.0}, labels={"kind": "api_call"})
    metrics = {m.name: m for m in scorer.aggregate(results + [api])}
    assert metrics["level_1 API-call accuracy (offline)"].value == 1.0
    assert metrics["level_1 dialog score (Table 9)"].total == 2  # API samples stay out of the dialogue mean


# ---------------------------------------------------------------------------------------------------------------
# Replay of evaluator_by_json.py prediction files


def test_replay_reads_evaluator_by_json_lines(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join([
        json.dumps({"file": "QueryStock-level-1-1.jsonl", "id": 1, "pred": "The price was 197.44 dollars.",
                    "instruction": "...", "input": "...", "expected_output": "..."}),
        json.dumps({"file": "QueryStock-level-1-1.jsonl", "id": 0, "pred": None}),
        json.dumps({"file": "QueryStock-level-1-1.jsonl", "id": 1, "pred": "duplicate"}),
        '{"file": "x.jsonl", "id": "three", "pred": ""}',
    ]) + "\n")
    outputs = scorer.replay_outputs(path)
    assert dict(outputs) == {"QueryStock-level-1-1.jsonl#1": "The price was 197.44 dollars.",
                             "QueryStock-level-1-1.jsonl#0": ""}
    assert any("duplicate id" in str(p) for p in outputs.problems)
    assert any(":4:" in str(p) for p in outputs.problems)


def test_replay_run_end_to_end(tmp_path):
    cases = scorer.load_cases(SuiteContext(SAMPLES, _definition()))
    folder = tmp_path / "preds"
    folder.mkdir()
    rows = [{"file": c.payload["file"], "id": c.payload["sample_id"], "pred": scorer.gold_output(c)} for c in cases]
    wrong = rows[0]["file"] + "#" + str(rows[0]["id"])
    rows[0]["pred"] = "Sorry."
    by_level: dict[str, list] = {}
    for case, row in zip(cases, rows):
        by_level.setdefault(case.payload["level"], []).append(row)
    for level, level_rows in by_level.items():
        (folder / f"{level}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in level_rows))
    out = tmp_path / "run.json"
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    result = subprocess.run([sys.executable, "-m", "pytest", str(SUITE_DIR), "-q", "-p", "no:cacheprovider",
                             f"--toolbench-replay={folder}", f"--toolbench-json={out}"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env=env)
    assert "INTERNALERROR" not in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    document = json.loads(out.read_text())
    verdicts = {c["case_id"]: c for c in document["cases"]}
    assert len(verdicts) == len(cases)
    assert sorted(k for k, v in verdicts.items() if not v["passed"]) == [wrong]
