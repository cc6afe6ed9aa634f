"""Hand-made checks of every ACEBench checker rule and documented quirk (no shared data needed)."""

from __future__ import annotations

import json

import pytest

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, CaseResult, Generation, SuiteContext

from shipped import scorer

acebench = scorer("acebench")
agent = scorer("acebench", "agent")
aggregate = scorer("acebench", "aggregation").official_metrics
check_normal_output = scorer("acebench", "checker").check_normal_output
check_special_output = scorer("acebench", "checker").check_special_output
standardize_string = scorer("acebench", "call_check").standardize_string
DecodeError = scorer("acebench", "decoding").DecodeError
decode_calls = scorer("acebench", "decoding").decode_calls
extract_first_bracket_span = scorer("acebench", "decoding").extract_first_bracket_span
single_turn_messages = scorer("acebench", "prompt").single_turn_messages


DOCS = [
    {
        "name": "book",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "nights": {"type": "integer"},
                "price": {"type": "number"},
                "breakfast": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "dates": {"type": "object", "properties": {"start": {"type": "string"}}},
                "rooms": {"type": "array", "items": {"type": "object"}},
                "note": {"type": "string"},
            },
            "required": ["city"],
        },
    },
    {"name": "ping", "description": "", "parameters": {}},
]
GT = {"book": {"city": "New York", "nights": 2, "price": 99.5, "breakfast": True, "tags": ["quiet", "Sea View"],
               "dates": {"start": "2024-01-01"}, "rooms": [{"kind": "double", "count": 1}]}}


def check(text, ground_truth=GT, multi_turn=False, docs=DOCS):
    return check_normal_output(text, docs, ground_truth, multi_turn)


def test_exact_answer_passes():
    text = "[book(city='New York', nights=2, price=99.5, breakfast=True, tags=['quiet', 'Sea View'], dates={'start': '2024-01-01'}, rooms=[{'kind': 'double', 'count': 1}])]"
    assert check(text).valid


def test_strings_pass_as_standardized_substrings():
    assert check("[book(city='new-york city')]").valid
    assert not check("[book(city='York')]").valid
    assert check("[book(city='York')]").error_type == "value_error:string"
    assert standardize_string("A-b_c.d/e*f^g h,'") == 'abcdefgh"'
    assert standardize_string("a\tb") == "a\tb"  # only the ASCII space is removed


def test_top_level_numbers_and_booleans_are_not_compared():
    assert check("[book(city='New York', nights=7, price=1.5, breakfast=False)]").valid


def test_number_types():
    assert check("[book(city='New York', nights='2')]").error_type == "type_error"
    # "number" maps to int; a float answer makes the parameter a "variable" that is not checked at all.
    assert check("[book(city='New York', price='cheap')]").error_type == "type_error"
    assert check("[book(city='New York', price=3)]").valid


def test_missing_required_and_extra_parameters():
    assert check("[book(nights=2)]").error_type == "lack_args"
    assert check("[book(city='New York', note='x')]").error_type == "addition_args"  # documented but not in GT
    assert check("[book(city='New York', floor=2)]").error_type == "addition_args"


def test_lists_are_order_sensitive_and_standardized():
    assert check("[book(city='New York', tags=['QUIET', 'sea view'])]").valid
    assert check("[book(city='New York', tags=['Sea View', 'quiet'])]").error_type == "value_error:list/tuple"


def test_dict_leaves_compare_string_forms_by_substring():
    assert check("[book(city='New York', dates={'start': '2024-01-01 morning'})]").valid
    assert check("[book(city='New York', dates={'start': '2024'})]").error_type == "value_error"
    assert check("[book(city='New York', dates={'start': '2024-01-01', 'end': 'x'})]").error_type == "value_error"
    gt = {"book": {"city": "x", "dates": {"start": 1}}}
    assert check("[book(city='x', dates={'start': 10})]", gt).valid  # 1 is a substring of 10


def test_list_of_dicts_counts_then_compares_by_index():
    assert check("[book(city='New York', rooms=[{'kind': 'double', 'count': 1}, {'kind': 'x', 'count': 2}])]").error_type == "value_error:list_dict_count"


def test_empty_list_ground_truth_never_passes_the_type_check():
    gt = {"book": {"city": "x", "tags": []}}
    assert check("[book(city='x', tags=[])]", gt).error_type == "type_error"
    assert check("[book(city='x')]", gt).valid


def test_function_count_names_and_suffixes():
    assert check("[]").error_type == "wrong functions number"
    assert check("[ping(a=1)]").error_type == "function_mismatch"
    gt = {"book_1": {"city": "Paris"}, "book_2": {"city": "Rome"}}
    assert check("[book(city='Rome'), book(city='Paris')]", gt).valid
    # Output calls are not consumed: one call can satisfy two identical ground-truth calls.
    gt_same = {"book_1": {"city": "Rome"}, "book_2": {"city": "Rome"}}
    assert check("[book(city='Rome'), book(city='Roma')]", gt_same).valid


def test_empty_parameter_rules():
    assert check("[ping()]", {"ping": {}}).valid
    assert check("[book()]", {"book": {}}).error_type == "wrong_param"


def test_ground_truth_alternatives():
    assert check("[book(city='Rome')]", [{"book": {"city": "Paris"}}, {"book": {"city": "Rome"}}]).valid


def test_single_turn_bracket_extraction():
    assert extract_first_bracket_span("ok [a(b='[1]')] done") == "[a(b='[1]')]"
    assert check("Sure: [book(city='New York')] thanks").valid
    assert check("```\n[book(city='New York')]\n```").valid
    assert check("\"[book(city='New York')]\"").valid
    assert check("Step [1]: [book(city='New York')]").error_type == "wrong_output_format"
    assert check("[book(city='New York ]')]").error_type == "wrong_output_format"  # ] in a string closes early
    assert check("book(city='New York')").error_type == "wrong_output_format"
    assert check("(book(city='New York'),)").error_type == "wrong_output_format"


def test_multi_turn_strips_all_whitespace_and_decodes_everything():
    assert check("book(city='New York'),", multi_turn=True).valid  # a one-element tuple
    assert check("```[book(city='New York')]```", multi_turn=True).error_type == "wrong_output_format"
    gt = {"book": {"city": "x", "dates": {"start": ["New York"]}}}
    # list leaves inside dicts are compared unstandardized after whitespace removal ...
    assert not check("[book(city='x', dates={'start': ['New York']})]", gt, multi_turn=True).valid
    # ... unless the space is escaped, which survives the stripping.
    assert check("[book(city='x', dates={'start': ['New\\x20York']})]", gt, multi_turn=True).valid


def test_decoder_quirks():
    assert decode_calls("[f(a=+5, b=not True)]") == [{"f": {"a": -5, "b": -1}}]
    assert decode_calls("[f(1, 2)]") == [{"f": {}}]
    assert decode_calls("[f(x=g(), y=true, z=a[0])]") == [{"f": {"x": {"g": {}}, "y": "true", "z": "a[0]"}}]
    assert decode_calls("[f(x=2*3+1)]") == [{"f": {"x": 7}}]
    for bad in ("[f(x=len('a')+1)]", "[f(x=-'a')]", "[f(x=lambda: 1)]", "[f(x={**d})]", "[f(x=2**10**7)]", "f(a=1)", "[1]"):
        with pytest.raises(DecodeError):
            decode_calls(bad)


def test_checker_never_raises_on_odd_text():
    for text in ("", "[", "[[]]", "[f(**{'a': 1})]", "[" * 5000 + "]" * 5000, "\x00", "[book(city={1: 2})]",
                 "[book(city=2**100000)]", "[book(city=(10**9999)**9999)]"):
        check(text)


def test_special_phrases():
    incomplete = {"Api": ["a", "b"]}
    assert check_special_output('["Missing necessary parameters (a, b) for the api (Api)"]', "special_incomplete", incomplete).valid
    assert check_special_output("Missing necessary parameters (a) for the api (Api)", "special_incomplete", incomplete).error_type == "error_correction"
    assert check_special_output("missing necessary parameters (a, b) for Api", "special_incomplete", incomplete).error_type == "error_detection"
    wrong = {"date": ["12-Feb"]}
    assert check_special_output("There is incorrect value (12-Feb) for the parameters (oops)", "special_error_param", wrong).valid
    assert check_special_output("There is incorrect value (x)", "special_error_param", wrong).error_type == "error_correction"
    assert check_special_output("Due to the limitations of the function, no.", "special_irrelevant", "").valid
    assert check_special_output("Due to the Limitations of the function", "special_irrelevant", "").error_type == "error_detection"


def _case(category, payload, language="en", upstream="x_0"):
    return Case(f"{language}-{upstream}", category, {"language": language, "upstream_id": upstream, **payload}, suite="acebench")


def test_score_maps_undecodable_output_to_format_error():
    case = _case("normal_atom_bool", {"question": "q", "function": DOCS, "ground_truth": GT, "time": ""})
    verdict = acebench.score(case, Generation(text="no calls here"))
    assert verdict.error_type == FORMAT_ERROR and verdict.details["official_error_type"] == "wrong_output_format"
    json.dumps(verdict.to_json())


def test_prompts_are_assembled_like_upstream():
    item = {"question": "user: hi\n", "function": [{"name": "f"}], "time": "The current time is X"}
    system, user = single_turn_messages("en", "normal_atom_bool", item)
    assert "\n\nThe current time is X\n\nRole Descriptions:" in system["content"]
    assert system["content"].endswith("API Specifications:\n[{'name': 'f'}]")
    assert user["content"] == "Conversation history 1..t:\nuser: hi\n"
    zh = single_turn_messages("zh", "normal_preference", {**item, "profile": {"a": 1}})
    assert "人物画像：\n{'a': 1}\n" in zh[0]["content"] and zh[1]["content"].startswith("对话历史1..t:\n")
    special = single_turn_messages("zh", "special_incomplete", item)[0]["content"]
    assert "Missing necessary parameters (key1，key2...)" in special


TARGET = [{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": {"1": {"m": "a"}}}}]


def _agent_case(milestones=("[a()]", "[b(x=1)]")):
    return _case("agent_multi_step", {"question": "q", "function": [], "initial_config": {}, "involved_classes": ["BaseApi"],
                                      "ground_truth": TARGET, "mile_stone": list(milestones)}, upstream="agent_multi_step_0")


def _run(final_state, process=()):
    return Generation(text=json.dumps({"final_state": final_state, "process": list(process)}))


def test_agent_end_to_end_and_process():
    case = _agent_case()
    assert acebench.score(case, _run(TARGET)).passed
    assert acebench.score(case, Generation(text=acebench.gold_output(case))).passed
    wrong = [{"BaseApi": {"wifi": False, "logged_in": True}}, TARGET[1]]
    verdict = acebench.score(case, _run(wrong, ["[a()]", "[c()]", " [b(x=1)] "]))
    assert verdict.error_type == "class attributes wrong" and verdict.counts["process"] == 1.0
    assert acebench.score(case, _run(wrong, ["[b(x=1)]", "[a()]"])).counts["process"] == 0.5
    assert acebench.score(case, _run(TARGET[:1])).error_type == "wrong number of class"
    assert acebench.score(case, Generation(text="[a()]")).error_type == FORMAT_ERROR
    # Extra model keys inside a dict attribute are ignored; int keys compare as their JSON strings.
    extra = [TARGET[0], {"MessageApi": {"inbox": {1: {"m": "a"}, 2: {"m": "b"}}}}]
    assert acebench.score(case, _run(extra)).passed


def test_agent_unmatched_first_class_reuses_the_initial_valid_result():
    # Upstream issue #25: no model class has the key set {"BaseApi"}, the stale "valid" result is reused.
    case = _agent_case()
    assert acebench.score(case, _run([{"Other": {}}, TARGET[1]])).passed


def test_agent_milestone_alternatives_take_the_best():
    assert agent.process_accuracy(["[b()]"], [["[a()]", "[b()]"], ["[b()]"]]) == 1.0


def _result(case_id, category, passed, process=None):
    counts = {"process": process} if process is not None else {}
    return CaseResult("acebench", case_id, category, passed, None, counts)


def test_aggregation_formulas():
    results = [
        _result("en-normal_multi_turn_user_switch_0_0", "normal_multi_turn_user_switch", True),
        _result("en-normal_multi_turn_user_switch_0_1", "normal_multi_turn_user_switch", False),
        _result("en-normal_multi_turn_user_switch_1_0", "normal_multi_turn_user_switch", True),
        _result("en-special_irrelevant_0", "special_irrelevant", True),
        _result("en-agent_multi_step_0", "agent_multi_step", False, 0.5),
        _result("en-agent_multi_turn_0", "agent_multi_turn", True, 1.0),
        _result("zh-special_irrelevant_0", "special_irrelevant", False),
    ]
    metrics = {m.name: m for m in aggregate(results)}
    assert metrics["en/normal_multi_turn_user_switch"].value == 0.5
    assert metrics["en/normal_multi_turn_user_switch_process"].value == 0.75
    assert metrics["en/agent_summary"].value == 0.5
    assert metrics["en/agent_multi_step_process"].value == 0.5
    assert metrics["en/overall"].value == pytest.approx(0.578 * 0.5 + 0.2676 * 1.0 + 0.1545 * 0.5)
    assert metrics["en/overall_without_agent_multi_turn"].value == pytest.approx(0.578 * 0.5 + 0.2676)
    assert metrics["combined/special_irrelevant"].value == 0.5
    assert "zh/overall" not in metrics


def test_samples_load_and_pass_under_gold():
    from pathlib import Path

    samples = Path(__file__).resolve().parents[1] / "suites" / "acebench" / "samples"
    cases = acebench.load_cases(SuiteContext(samples, {}))
    assert len(cases) >= 17
    assert {c.case_id.split("-")[0] for c in cases} == {"en"}
    for case in cases:
        assert acebench.score(case, Generation(text=acebench.gold_output(case))).passed, case.case_id
        acebench.build_request(case)
