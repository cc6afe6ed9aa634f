"""BFCL single-turn scorer: decoding quirks, checker rules, prompts, gold answers, aggregation, replay."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from pytest_toolbench.contract.suite import CaseResult, FORMAT_ERROR, Generation, SuiteContext
from conftest import shared_data_dir

from shipped import scorer

bfcl = scorer("bfcl")
decode_python = scorer("bfcl", "decoding").decode_python
parse_java_calls = scorer("bfcl", "decoders.java").parse_java_calls
parse_js_calls = scorer("bfcl", "decoders.javascript").parse_js_calls
DecodeError = scorer("bfcl", "decoders.common").DecodeError


REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "suites" / "bfcl" / "samples"


@pytest.fixture(scope="module")
def samples():
    return {case.case_id: case for case in bfcl.load_cases(SuiteContext(SAMPLES, {}))}


@pytest.fixture(scope="module")
def real_cases():
    data = shared_data_dir()
    if data is None or not (data / "bfcl").is_dir():
        pytest.skip("BFCL data not available (set TOOLBENCH_DATA)")
    return bfcl.load_cases(SuiteContext(data / "bfcl", {"categories": list(scorer("bfcl", "categories").CATEGORIES)}))


def run(case, text):
    return bfcl.score(case, Generation(text=text))


@pytest.mark.parametrize("text, expected", [
    ("[f(a=-5)]", [{"f": {"a": -5}}]),
    ("[f(a=+5)]", [{"f": {"a": -5}}]),  # every unary operator negates its constant
    ("[f(a=~5)]", [{"f": {"a": -5}}]),
    ("[f(a=not 1)]", [{"f": {"a": -1}}]),
    ("[f(a=2*3, b=1/4, c='a'+'b')]", [{"f": {"a": 6, "b": 0.25, "c": "ab"}}]),
    ("[f(a=x, b=...)]", [{"f": {"a": "x", "b": "..."}}]),
    ("[f(a=g(5), b=g(k=1))]", [{"f": {"a": "g(5)", "b": {"g": {"k": 1}}}}]),
    ("[f(a=d[0], b=(1, 2))]", [{"f": {"a": "d[0]", "b": (1, 2)}}]),
    ("[f(1, 2, a=3)]", [{"f": {"a": 3}}]),  # positional arguments are dropped
    ("```\nf(a=1)\n```", [{"f": {"a": 1}}]),
    ("[m.n.f(a=1), g()]", [{"m.n.f": {"a": 1}}, {"g": {}}]),
    ("", []),
    ("[]", []),
])
def test_python_decoding(text, expected):
    assert decode_python(text) == expected


@pytest.mark.parametrize("text", [
    "[f(a=-(-5))]", "[f(a=-x)]", "[f(a=x*2)]", "[f(a=lambda: 1)]", "[f(a={1, 2})]", "[f(a=[i for i in y])]",
    "```python\n[f(a=1)]\n```", "Sure: [f(a=1)]", "<think>x</think>[f(a=1)]", "[f(a=1), 3]", "[f(a=10**(10**9))]",
    "[f(a='x'*10**9)]", "[f(a=1/0)]",
])
def test_python_decode_failures(text):
    with pytest.raises(DecodeError):
        decode_python(text)


def test_java_and_js_decoding():
    assert parse_java_calls('Foo.bar(a="x y", b=new int[]{1, 2}, c=1 + 2, d=x, e=new ArrayList<>(Arrays.asList("p", "q")))') == [
        {"Foo.bar": {"a": "x y", "b": "new int[]{1,2}", "c": "1+2", "d": "x", "e": 'new ArrayList<>(Arrays.asList("p", "q"))'}}]
    # the anonymous class body is dropped, as tree-sitter based decoding does
    assert parse_java_calls('Foo.bar(m=new HashMap<String, Object>() {{ put("k", 1); }})') == [
        {"Foo.bar": {"m": "new HashMap<String,Object>()"}}]
    assert parse_java_calls("Foo.bar(x, a=1)") == [{"Foo.bar": {None: "x", "a": "1"}}]
    with pytest.raises(DecodeError):
        parse_java_calls("f(a=1)")  # short program without ';': tree-sitter reports an ERROR node
    with pytest.raises(DecodeError):
        parse_java_calls("Foo.bar(a=1), Baz.q(b=2)")
    assert parse_js_calls("javascript\nf(a='x', b={k: 1}, c=[1, 2])") == [{"f": {"a": "x", "b": "{k: 1}", "c": "[1, 2]"}}]
    assert parse_js_calls("f(a=1), g(b=2)") is None  # a sequence expression is not a call statement
    assert parse_js_calls("f(true, false, a=1)") == [{"f": {None: "true", "a": "1"}}]
    with pytest.raises(DecodeError):
        parse_js_calls("Sure f(a=1)")


def test_checker_rules_on_samples(samples):
    area, books, timer = samples["simple_python_0"], samples["simple_python_1"], samples["simple_python_2"]
    assert run(area, "[geometry.rectangle_area(width=3, height=4.5)]").passed  # int accepted for float
    assert run(area, "[geometry.rectangle_area(width='3', height=4.5)]").error_type == "type_error:simple"
    assert run(books, "[library.search_books(author='ursula le-guin', year=1969, tags=['Sci Fi'])]").passed
    assert run(books, "[library.search_books(author='Le Guin', year=1969)]").error_type == "value_error:string"
    assert run(books, "[library.search_books(author='Ursula Le Guin', year=1969, tags=['x'])]").error_type == \
        "value_error:list/tuple"
    assert run(timer, "[set_timer(minutes=True)]").error_type == "type_error:simple"
    assert run(timer, "[set_timer(minutes=15, label='tea')]").error_type == "value_error:string"
    assert run(timer, "[set_timer(minutes=15, extra=1)]").error_type == "simple_function_checker:unexpected_param"
    assert run(timer, "[set_timer(15)]").error_type == "simple_function_checker:missing_required"
    assert run(timer, "[set_timer(minutes=15), set_timer(minutes=15)]").error_type == \
        "simple_function_checker:wrong_count"
    assert run(timer, "[set_timer(minutes=+15)]").error_type == "value_error:others"  # +15 decodes to -15
    greedy = samples["parallel_2"]
    assert run(greedy, "[set_timer(minutes=10), set_timer(minutes=5)]").passed
    # greedy matching: GT call 0 takes output 0 (5), so GT call 1 (needs 5) cannot match output 1 (10)
    assert run(greedy, "[set_timer(minutes=5), set_timer(minutes=10)]").error_type == \
        "parallel_function_checker_no_order:cannot_find_match"


def test_format_errors_and_relevance(samples):
    timer = samples["simple_python_2"]
    verdict = run(timer, "```python\n[set_timer(minutes=15)]\n```")
    assert verdict.error_type == "ast_decoder:decoder_failed" and verdict.labels["outcome"] == FORMAT_ERROR
    verdict = run(samples["simple_java_0"], "[]")
    assert not verdict.passed and verdict.labels["outcome"] == FORMAT_ERROR
    irrelevant = samples["irrelevance_0"]
    assert run(irrelevant, "No function fits.").passed
    assert run(irrelevant, "[]").passed
    assert run(irrelevant, "[geometry.rectangle_area()]").error_type == "irrelevance_error:decoder_success"
    relevant = samples["live_relevance_0-0-0"]
    assert run(relevant, "[set_timer(color='red')]").passed  # arguments are not checked
    assert run(relevant, "[]").error_type == "relevance_error:decoder_failed"


@pytest.mark.parametrize("text", ["", "[", "]]]", "\x00", "[f(a=10**5000)]", "[f(a=" + "[" * 5000 + ")]",
                                  "([{", "'" * 3, "`" * 7, "[f(**{})]", "f(a=1)" * 2000])
def test_never_raises(samples, text):
    for case in samples.values():
        verdict = run(case, text)
        json.dumps(verdict.to_json())


def test_huge_int_fails_instead_of_crashing(samples):
    verdict = run(samples["simple_python_2"], "[set_timer(minutes=10**5000)]")
    assert not verdict.passed
    json.dumps(verdict.to_json())


def test_gold_passes_on_samples(samples):
    for case in samples.values():
        verdict = run(case, bfcl.gold_output(case))
        assert verdict.passed, (case.case_id, verdict.explanation)


def test_gold_passes_on_real_data_except_known_defects(real_cases):
    defects = yaml.safe_load((REPO / "suites" / "bfcl" / "known_defects.yaml").read_text())
    failing = {case.case_id for case in real_cases if not run(case, bfcl.gold_output(case)).passed}
    assert len(real_cases) == 3641
    # the format-sensitivity defects are tests/test_bfcl_format_sensitivity.py's
    assert failing == {case_id for case_id in defects if not case_id.startswith("format_sensitivity_")}


GOLDEN_PROMPTS = {  # sha256 of json.dumps(messages, ensure_ascii=False, sort_keys=True), rendered by bfcl-eval 2026.3.23
    "simple_python_0": "f64916d0f60e75b09aed3ea8b78989a377149854ade2d2a3566ccdfb77b987ca",
    "simple_java_3": "97c35f3c63453e959b66d9c2623febec6567438a00c47cf902e4b4258dc49ba6",
    "simple_javascript_7": "4f0af96408f0010ddcc7868fe98757900750e2d20f0225074589f0002eb4a524",
    "parallel_multiple_5": "da96d5cad2407b488e313be56bc4f87672322c823c9d8c22c6614b27141b9ea0",
    "live_simple_13-3-9": "9efec7be34be7e99ce9c33af1a2d6b13dd49df0f74e90da6781db0cec25392ea",
    "live_simple_58-27-0": "aba9f49c0c69996b9c3702407701253ceeb66a24e2772297cba6b47f1196bd95",  # prepends to a system message
    "live_multiple_0-0-0": "c869d2049f98938a444177782156980783e0f82d518367a87d2ed4794f0e2dac",
    "live_irrelevance_2-0-2": "b5f87f8275d10070dc7a225e762c78debc3f3c6581abc7a0fc71dd08b53c6a21",
}


def test_prompts_match_official_rendering(real_cases):
    by_id = {case.case_id: case for case in real_cases}
    for case_id, digest in GOLDEN_PROMPTS.items():
        messages = [dict(m) for m in bfcl.build_request(by_id[case_id]).messages]
        rendered = json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()
        assert hashlib.sha256(rendered).hexdigest() == digest, case_id


def test_prompt_layout_on_samples(samples):
    messages = bfcl.build_request(samples["simple_python_0"]).messages
    system = messages[0]["content"]
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert system.startswith("You are an expert in composing functions.You are given a question")
    assert "params_name2=params_value2...), func_name2(params)].  You SHOULD NOT include any other text" in system
    assert "Here is a list of functions in json format that you can invoke.\n[\n    {\n" in system
    assert "Note that the provided function is in Python 3 syntax." in system
    with_system = bfcl.build_request(samples["live_simple_0-0-0"]).messages
    assert len(with_system) == 2 and with_system[0]["content"].endswith("\n\nYou are a helpful travel assistant.")
    java = bfcl.build_request(samples["simple_java_0"])
    assert '"type": "string"' in java.messages[0]["content"] and "This is Java long type parameter" in \
        java.messages[0]["content"]
    tool = bfcl.build_request(samples["simple_python_0"]).tools[0]["function"]
    assert tool["name"] == "geometry_rectangle_area" and tool["parameters"]["type"] == "object"
    assert tool["parameters"]["properties"]["width"]["type"] == "number"


def test_aggregate_formulas():
    def results(category, correct, total):
        return [CaseResult("bfcl", f"{category}_{i}", category, i < correct, None, {}) for i in range(total)]

    rows = (results("simple_python", 4, 4) + results("simple_java", 1, 2) + results("simple_javascript", 0, 2)
            + results("multiple", 1, 1) + results("parallel", 1, 2) + results("parallel_multiple", 0, 1)
            + results("irrelevance", 1, 1) + results("live_simple", 2, 2) + results("live_multiple", 1, 3)
            + results("live_irrelevance", 1, 2) + results("live_relevance", 1, 1))
    metrics = {m.name: m for m in bfcl.aggregate(rows)}
    simple = (1 + 0.5 + 0) / 3
    non_live = (simple + 1 + 0.5 + 0) / 4
    live = 3 / (2 + 3 + 16 + 24)  # missing live_parallel(_multiple) weigh their full counts at 0
    irrelevance = (1 + 0.5) / 2
    assert metrics["simple"].value == pytest.approx(simple)
    assert metrics["non_live_ast"].value == pytest.approx(non_live)
    assert metrics["live_ast"].value == pytest.approx(live)
    assert metrics["irrelevance_detection"].value == pytest.approx(irrelevance)
    assert metrics["relevance_detection"].value == 1.0
    assert metrics["overall_official"].value == pytest.approx(0.1 * non_live + 0.1 * live + 0.1 * irrelevance)
    assert metrics["live_parallel"].value is None and metrics["simple_java"].correct == 1
    assert "overall_over_categories_ran" in metrics
    assert metrics["overall_over_categories_ran"].value == pytest.approx((non_live + irrelevance) / 2)


def test_replay_reads_bfcl_result_files(tmp_path, samples):
    folder = tmp_path / "result" / "My-Model" / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_simple_python_result.json").write_text(
        json.dumps({"id": "simple_python_2", "result": "[set_timer(minutes=15)]"}) + "\n")
    fc_folder = tmp_path / "result" / "My-Model-FC" / "non_live"
    fc_folder.mkdir(parents=True)
    (fc_folder / "BFCL_v4_simple_python_result.json").write_text(
        json.dumps({"id": "simple_python_0", "result": [{"geometry_rectangle_area": '{"width": 3, "height": 4.5}'}]})
        + "\n")
    outputs = bfcl.replay_outputs(tmp_path / "result")
    assert outputs["simple_python_2"] == "[set_timer(minutes=15)]"
    # an FC record (a list) reaches the FC path unchanged: names with "_" for ".", arguments as JSON text
    verdict = bfcl.score(samples["simple_python_0"], outputs["simple_python_0"])
    assert verdict.passed and verdict.labels["mode"] == "fc"


def test_load_cases_pairs_by_index_and_marks(samples):
    case = samples["live_multiple_1-1-0"]
    assert case.category == "live_multiple" and set(case.keywords) >= {"live", "ast"}
    assert case.payload["ground_truth"][0]["save_preferences"]
    assert samples["irrelevance_0"].payload["ground_truth"] is None
    assert "relevance" in samples["irrelevance_0"].keywords
