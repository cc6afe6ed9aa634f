"""TaskBench: prompt bytes, loading (both label layouts, the real request files), both protocols' parsing and
per-metric rules, verdicts, figures, gold, TL categories and replay.

Each differential test names the upstream rule it pins: ToLeaP ``scripts/taskbench_eval.py`` (``main``'s parsing,
``evaluate``) and ``src/utils/llm.py`` ``extract_first_json`` (thunlp/ToLeaP @ b9507131); JARVIS
``taskbench/evaluate.py`` and ``inference.py`` (microsoft/JARVIS @ c62e0fa). Expected values were worked out by
reading that code, then confirmed by running the upstream functions themselves on the same inputs (ToLeaP's
``evaluate`` with rouge-score 0.1.2 and nltk 3.10.4; JARVIS's ``evaluate`` with Levenshtein 0.21.1 and sklearn, its
empty-pool behaviour patched to sklearn 1.0.2's). Outside this file the whole per-sample scorer was compared with
those functions on 15,000 (ToLeaP) and 11,000 (upstream; about 9,200 of them written) fuzzed outputs, and the
ROUGE/Porter re-implementation with rouge-score/nltk on 298,381 words and 3,000 text pairs with and without the
stemmer: no difference.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolbench.run.catalog import import_scorer
from pytest_toolbench.contract.definition import SUITE_SCHEMA
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import FORMAT_ERROR, CaseResult, Generation, SuiteContext

from conftest import REPO, shared_data_dir

SUITE_DIR = REPO / "suites" / "taskbench"
SAMPLES = SUITE_DIR / "samples"

scorer = import_scorer(SUITE_DIR)
prompt = import_scorer(SUITE_DIR, "prompt")
decoding = import_scorer(SUITE_DIR, "decoding")
rouge = import_scorer(SUITE_DIR, "rouge")
toleap = import_scorer(SUITE_DIR, "toleap")
upstream = import_scorer(SUITE_DIR, "upstream")
aggregation = import_scorer(SUITE_DIR, "aggregation")
loading = import_scorer(SUITE_DIR, "loading")
checker = import_scorer(SUITE_DIR, "checker")

DOMAINS = ["huggingface", "multimedia", "dailylifeapis"]


def definition(**options) -> dict:
    return {"name": "taskbench", "libraries": ["tl_failures"],
            "options": {"domains": DOMAINS, "protocol": "toleap", **options}}


def sample_cases(**options):
    return scorer.load_cases(SuiteContext(SAMPLES, definition(**options)))


def case(case_id: str, **options):
    return next(c for c in sample_cases(**options) if c.case_id == case_id)


def score(case_id: str, output, **options):
    text = output if isinstance(output, str) else json.dumps(output)
    return scorer.score(case(case_id, **options), Generation(text=text))


def result_of(c, verdict) -> CaseResult:
    return CaseResult("taskbench", c.case_id, c.category, verdict.passed, verdict.error_type, verdict.counts,
                      labels=verdict.labels, keywords=c.keywords)


# -- prompt (inference.py lines 133-189; ToLeaP taskbench.py lines 36-51) ------------------------------------------
def test_prompt_templates_are_upstreams_bytes():
    digests = {name: hashlib.sha256(getattr(prompt, name).encode()).hexdigest()[:16]
               for name in ("RESOURCE_GOAL", "RESOURCE_REQUIREMENTS", "TEMPORAL_GOAL", "TEMPORAL_REQUIREMENTS",
                            "REQUEST_TEMPLATE")}
    assert digests == {"RESOURCE_GOAL": "1e9bae7ad677b4b3", "RESOURCE_REQUIREMENTS": "79724965dbc260f1",
                       "TEMPORAL_GOAL": "9bdd1cefe7258f8f", "TEMPORAL_REQUIREMENTS": "06171f4d39cbceff",
                       "REQUEST_TEMPLATE": "c44f25d33fa0cbba"}
    assert prompt.RESOURCE_GOAL.endswith("]}]} ")  # the trailing space is part of the protocol


def test_toleap_prompt_is_tool_list_goal_requirements_and_instruction():
    c = case("huggingface-10000002")
    text = scorer.build_request(c).messages[0]["content"]
    tools = json.loads((SAMPLES / "data_huggingface" / "tool_desc.json").read_text())["nodes"]
    expected = ("# TASK LIST #:\n" + "".join(json.dumps(t) + "\n" for t in tools) + prompt.RESOURCE_GOAL
                + prompt.RESOURCE_REQUIREMENTS + "\n\n# USER REQUEST #: There is a photo called 'garden.jpg'. "
                "Tell me out loud what it shows.\nnow please generate your result in a strict JSON format:\n# RESULT #:")
    assert text == expected
    request = scorer.build_request(c)
    assert len(request.messages) == 1 and request.messages[0]["role"] == "user" and request.max_tokens is None


def test_upstream_prompt_uses_user_requests_and_reduces_dailylifeapis_parameters():
    c = case("dailylifeapis-30000001", protocol="upstream")
    request = scorer.build_request(c)
    text = request.messages[0]["content"]
    assert request.max_tokens == 2000  # inference.py payload
    assert '{"id": "get_weather", "desc": "Tells the weather of a city on a day", "parameters": ["location", "date"]}\n' \
        in text
    assert text.endswith("# USER REQUEST #: What is the weather in Lisbon on 2024-05-03?\nnow please generate your "
                         "result in a strict JSON format:\n# RESULT #:")
    assert prompt.TEMPORAL_GOAL + prompt.TEMPORAL_REQUIREMENTS in text
    toleap_text = scorer.build_request(case("dailylifeapis-30000001")).messages[0]["content"]
    assert '"parameters": [{"name": "location", "type": "string", "desc": "The city"}' in toleap_text
    assert "Will it rain in Lisbon on 3rd May 2024?" in toleap_text


# -- loading ------------------------------------------------------------------------------------------------------
def test_samples_one_item_per_data_line_with_dataset_ids():
    cases = sample_cases()
    assert [c.case_id for c in cases] == [
        "huggingface-10000001", "huggingface-10000002", "huggingface-10000003", "huggingface-10000004",
        "huggingface-10000005", "huggingface-10000001-2", "multimedia-20000001", "multimedia-20000002",
        "multimedia-20000003", "dailylifeapis-30000001", "dailylifeapis-30000002", "dailylifeapis-30000003"]
    assert {c.category for c in cases} == set(DOMAINS)
    assert {c.keywords for c in cases} == {("single",), ("chain",), ("dag",)}
    assert [c.payload["superseded"] for c in cases[:6]] == [True, False, False, False, False, False]
    assert all(c.context.uses("tl_failures") and "tl_failures" not in c.payload for c in cases)
    assert cases[1].payload["tools"] is cases[2].payload["tools"]  # one shared object per domain
    only = scorer.load_cases(SuiteContext(SAMPLES, {"name": "taskbench", "options": {"domains": ["multimedia"]}}))
    assert [c.category for c in only] == ["multimedia"] * 3 and "tl_failures" not in only[0].payload


def test_both_label_layouts_give_the_same_label(tmp_path):
    # released layout: tool_steps/tool_nodes/tool_links as JSON text; format_data.py's: task_* values + user_request
    folder = tmp_path / "data_multimedia"
    folder.mkdir()
    for name in ("tool_desc.json", "user_requests.json"):
        (folder / name).write_bytes((SAMPLES / "data_multimedia" / name).read_bytes())
    lines = []
    for line in (SAMPLES / "data_multimedia" / "data.json").read_text().splitlines():
        record = json.loads(line)
        converted = {"id": record["id"], "seed": record["seed"], "type": record["type"], "n_tools": record["n_tools"],
                     "user_request": record["instruction"]}
        converted.update({k.replace("tool_", "task_"): json.loads(record[k])
                          for k in ("tool_steps", "tool_nodes", "tool_links")})
        lines.append(json.dumps(converted))
    (folder / "data.json").write_text("\n".join(lines) + "\n")
    options = {"name": "taskbench", "options": {"domains": ["multimedia"]}}
    converted = scorer.load_cases(SuiteContext(tmp_path, options))
    original = scorer.load_cases(SuiteContext(SAMPLES, options))
    assert [(c.case_id, c.payload["label"], c.payload["request"]) for c in converted] == \
        [(c.case_id, c.payload["label"], c.payload["request"]) for c in original]


def test_malformed_labels_fail_once_naming_file_line_and_field(tmp_path):
    folder = tmp_path / "data_dailylifeapis"
    folder.mkdir()
    for name in ("tool_desc.json", "user_requests.json"):
        (folder / name).write_bytes((SAMPLES / "data_dailylifeapis" / name).read_bytes())
    lines = (SAMPLES / "data_dailylifeapis" / "data.json").read_text().splitlines()
    options = {"name": "taskbench", "options": {"domains": ["dailylifeapis"]}}
    broken = json.loads(lines[1])
    broken["tool_nodes"] = "[{\"task\": "
    (folder / "data.json").write_text("\n".join([lines[0], json.dumps(broken), lines[2]]) + "\n")
    with pytest.raises(DataError) as error:
        scorer.load_cases(SuiteContext(tmp_path, options))
    assert error.value.line == 2 and error.value.field == "tool_nodes" and "not JSON text" in error.value.message
    broken = json.loads(lines[2])
    broken["type"] = "tree"
    (folder / "data.json").write_text("\n".join([lines[0], lines[1], json.dumps(broken)]) + "\n")
    with pytest.raises(DataError) as error:
        scorer.load_cases(SuiteContext(tmp_path, options))
    assert error.value.line == 3 and error.value.field == "type"
    broken = json.loads(lines[0])
    broken["tool_steps"] = json.dumps(["Step 1", 2])  # ToLeaP joins the label steps: they must be strings
    (folder / "data.json").write_text(json.dumps(broken) + "\n")
    with pytest.raises(DataError) as error:
        scorer.load_cases(SuiteContext(tmp_path, options))
    assert error.value.line == 1 and error.value.field == "task_steps/1"


def test_missing_labels_name_the_download(tmp_path):
    folder = tmp_path / "data_huggingface"
    folder.mkdir()
    for name in ("tool_desc.json", "user_requests.json"):
        (folder / name).write_bytes((SAMPLES / "data_huggingface" / name).read_bytes())
    with pytest.raises(DataError) as error:
        scorer.load_cases(SuiteContext(tmp_path, {"name": "taskbench", "options": {"domains": ["huggingface"]}}))
    assert error.value.path.endswith("data_huggingface/data.json")
    assert "4c545595480bf029328ef7453ce114f78a6539ff" in error.value.message
    assert ("raw.githubusercontent.com/microsoft/JARVIS/c62e0faac76c4a2907cabe2cfe4bbe5f2e613400/taskbench/"
            "data_huggingface/data.json") in error.value.message
    assert scorer.run_info(SuiteContext(tmp_path)) == {"labels": "data.json present for no domain; missing for huggingface, "
                                                   "multimedia, dailylifeapis"}


def test_options_are_checked():
    from shipped import option_refusal

    assert "taskbench.protocol=\"jarvis\": not accepted: taskbench.protocol must be one of toleap, upstream" in \
        option_refusal("taskbench", protocol="jarvis")
    assert "taskbench.domains=" in option_refusal("taskbench", domains=["tools"])
    assert option_refusal("taskbench", domains="multimedia", protocol="upstream") == ""


def _write_labels_for_real_requests(target: Path, real: Path) -> dict[str, int]:
    """A data folder with the real tool and request files and one made-up label line per request (the real labels
    are not redistributable); returns the line count per domain."""
    counts = {}
    for domain in DOMAINS:
        folder = target / f"data_{domain}"
        folder.mkdir(parents=True)
        for name in ("tool_desc.json", "user_requests.json"):
            (folder / name).symlink_to(real / f"data_{domain}" / name)
        tools = json.loads((real / f"data_{domain}" / "tool_desc.json").read_text())["nodes"]
        lines = []
        for number, line in enumerate((real / f"data_{domain}" / "user_requests.json").read_text().splitlines()):
            request = json.loads(line)
            tool = tools[number % len(tools)]
            if domain == "dailylifeapis":
                arguments = [{"name": p["name"], "value": f"v{number}"} for p in tool["parameters"]]
            else:
                arguments = [f"example{number}.jpg"]
            lines.append(json.dumps({
                "id": request["id"], "seed": number, "n_tools": 1, "type": "single",
                "sampled_nodes": "[]", "sampled_links": "[]", "instruction": request["user_request"],
                "tool_steps": json.dumps([f"Step 1: call {tool['id']}"]),
                "tool_nodes": json.dumps([{"task": tool["id"], "arguments": arguments}]), "tool_links": "[]"}))
        (folder / "data.json").write_text("\n".join(lines) + "\n")
        counts[domain] = len(lines)
    return counts


@pytest.mark.skipif(shared_data_dir() is None or not (shared_data_dir() / "taskbench").is_dir(),
                    reason="upstream TaskBench request files not available (set TOOLBENCH_DATA)")
def test_real_request_files_counts_prompts_and_gold(tmp_path):
    real = shared_data_dir() / "taskbench"
    counts = _write_labels_for_real_requests(tmp_path, real)
    assert counts == {"huggingface": 7546, "multimedia": 5584, "dailylifeapis": 4320}
    cases = scorer.load_cases(SuiteContext(tmp_path, definition()))
    per_domain = {d: sum(1 for c in cases if c.category == d) for d in DOMAINS}
    assert per_domain == counts
    ids = [c.case_id for c in cases]
    assert len(set(ids)) == len(ids)
    assert {"huggingface-32742251-2", "dailylifeapis-29108446-2", "dailylifeapis-14194530-2"} <= set(ids)
    by_id = {c.case_id: c for c in cases}
    tools = json.loads((real / "data_dailylifeapis" / "tool_desc.json").read_text())["nodes"]
    text = scorer.build_request(by_id["dailylifeapis-13590101"]).messages[0]["content"]
    assert text.startswith("# TASK LIST #:\n" + json.dumps(tools[0]) + "\n")
    assert text.count("\n{\"id\": ") == len(tools)  # one line per tool, the first after the header
    upstream_cases = scorer.load_cases(SuiteContext(tmp_path, definition(protocol="upstream", domains=["dailylifeapis"])))
    reduced = scorer.build_request(upstream_cases[0]).messages[0]["content"]
    assert '"parameters": ["location", "date"]}' in reduced and len(reduced) < len(text)
    rng = random.Random(0)
    for c in rng.sample(cases, 300):
        assert scorer.score(c, Generation(text=scorer.gold_output(c))).passed, c.case_id


# -- ToLeaP parsing (main + extract_first_json) ----------------------------------------------------------------------
@pytest.mark.parametrize("text, block", [
    ('x {"a": "}"} y', '{"a": "}"}'),                         # braces inside strings do not count
    ('{"a": "\\"}"}', '{"a": "\\"}"}'),                       # an escaped quote does not end the string
    ('[1, {"a": [2]}] {"b": 1}', '[1, {"a": [2]}]'),          # the first bracket decides the kind
    ('{"a": [1, 2}', '{"a": [1, 2}'),                         # only braces are counted (then invalid JSON)
    ('{"a": "unterminated', None),                            # a string running to the end: no block
    ('no json here', None),
    ('{"a": {"b": 1}}}', '{"a": {"b": 1}}'),
])
def test_extract_first_json(text, block):
    assert decoding.extract_first_json(text) == block


def test_toleap_result_bad_cases_and_arrays():
    result, bad, is_list = decoding.toleap_result('Result: {"task_nodes": [{"task": "a"}], "task_steps": null}')
    assert bad is None and not is_list
    assert result == {"task_steps": None, "task_nodes": [{"task": "a"}], "task_links": []}
    assert decoding.toleap_result('{"task_nodes": [}')[1].startswith("invalid JSON")
    assert decoding.toleap_result("nothing")[1] == "no JSON object or array in the output"
    result, bad, is_list = decoding.toleap_result('[{"task_nodes": [{"task": "a"}]}]')
    assert bad is None and is_list and result == {"task_steps": [], "task_nodes": [], "task_links": []}


# -- upstream parsing (inference.py get_response) ---------------------------------------------------------------------
def test_upstream_cleaning_rules():
    # newlines and every backslash are removed, the text after "RESULT #:" is cut from the first { to the last }
    result, error = decoding.upstream_result('# RESULT #:\n{"task_steps": ["a\\_b"],\n "task_nodes": []} trailing }x')
    assert error is not None  # the last "}" is the stray one: '... []} trailing }' is not JSON
    result, error = decoding.upstream_result('Sure. RESULT #: {"task_steps": ["say \\"hi\\""], "task_nodes": []}')
    assert error is not None  # removing the backslashes breaks the escaped quotes
    result, error = decoding.upstream_result('{"task_steps": ["a\\_b\\nc"], "task_nodes": []}')
    assert error is None and result == {"task_steps": ["a_bnc"], "task_nodes": []}
    assert decoding.upstream_result("no braces")[1].startswith("ContentFormatError")
    result, error = decoding.upstream_result(decoding.PARSED_RESULT + '{"task_steps": ["say \\"hi\\""]}')
    assert error is None and result == {"task_steps": ['say "hi"']}  # a replayed result is not cleaned again


# -- ROUGE (rouge_score 0.1.2 + nltk PorterStemmer) ------------------------------------------------------------------
NLTK_STEMS = {
    'caresses': 'caress', 'ponies': 'poni', 'ties': 'tie', 'cats': 'cat', 'feed': 'feed', 'agreed': 'agre',
    'plastered': 'plaster', 'bled': 'bled', 'motoring': 'motor', 'sing': 'sing', 'conflated': 'conflat',
    'troubled': 'troubl', 'sized': 'size', 'hopping': 'hop', 'tanned': 'tan', 'falling': 'fall', 'hissing': 'hiss',
    'fizzed': 'fizz', 'failing': 'fail', 'filing': 'file', 'happy': 'happi', 'sky': 'sky', 'skies': 'sky',
    'dying': 'die', 'lying': 'lie', 'news': 'news', 'relational': 'relat', 'conditional': 'condit',
    'rational': 'ration', 'valenci': 'valenc', 'digitizer': 'digit', 'conformabli': 'conform', 'radicalli': 'radic',
    'differentli': 'differ', 'vileli': 'vile', 'analogousli': 'analog', 'vietnamization': 'vietnam',
    'predication': 'predic', 'operator': 'oper', 'feudalism': 'feudal', 'decisiveness': 'decis',
    'hopefulness': 'hope', 'callousness': 'callous', 'formaliti': 'formal', 'sensitiviti': 'sensit',
    'sensibiliti': 'sensibl', 'triplicate': 'triplic', 'formative': 'form', 'formalize': 'formal',
    'electriciti': 'electr', 'electrical': 'electr', 'hopeful': 'hope', 'goodness': 'good', 'revival': 'reviv',
    'allowance': 'allow', 'inference': 'infer', 'airliner': 'airlin', 'gyroscopic': 'gyroscop',
    'adjustable': 'adjust', 'defensible': 'defens', 'irritant': 'irrit', 'replacement': 'replac',
    'adjustment': 'adjust', 'dependent': 'depend', 'adoption': 'adopt', 'homologou': 'homolog',
    'communism': 'commun', 'activate': 'activ', 'angulariti': 'angular', 'homologous': 'homolog',
    'effective': 'effect', 'bowdlerize': 'bowdler', 'probate': 'probat', 'rate': 'rate', 'cease': 'ceas',
    'controlling': 'control', 'roll': 'roll', 'dies': 'die', 'spied': 'spi', 'enjoy': 'enjoy', 'fly': 'fli',
    'flies': 'fli', 'generously': 'gener', 'analogi': 'analog', 'archaeology': 'archaeolog', 'fully': 'fulli',
    'hopefully': 'hope', 'yyyy': 'yyyi', 'eyes': 'eye', 'syzygy': 'syzygi', 'toy': 'toy', 'image': 'imag',
    'images': 'imag', 'classification': 'classif', 'summarization': 'summar', 'transcribe': 'transcrib',
    'recognition': 'recognit', 'speech': 'speech', 'generating': 'gener', 'translated': 'translat',
    'detecting': 'detect',
}


def test_porter_stemmer_matches_nltk():
    assert {word: rouge.porter_stem(word) for word in NLTK_STEMS} == NLTK_STEMS


def test_rouge_matches_rouge_score():
    a = "Step 1: Generate an image of a red bicycle leaning on a fence.\nStep 2: Detect the objects in the generated image."
    b = "Step 1: generating images of red bicycles\nStep 2: detecting objects"
    assert rouge.rouge_n(a, b, 1, stem=True) == (1.0, 0.5, 0.6666666666666666)
    assert rouge.rouge_n(a, b, 2, stem=True) == (0.7, 0.3333333333333333, 0.45161290322580644)
    assert rouge.rouge_n(a, b, 1, stem=False)[2] == 0.4242424242424242
    assert rouge.rouge_n(a, b, 2, stem=False)[2] == 0.12903225806451613
    assert rouge.rouge_n("", "", 1, stem=True) == (0.0, 0.0, 0.0)  # no n-grams: 0, not 1
    # lower() before the [a-z0-9] filter: "İ" lowers to "i" + a combining dot, the "i" stays
    assert rouge.rouge_n("Ünïcode café-au-lait İstanbul x_y", "unicode cafe au lait istanbul x y", 1, True)[2] == 0.5
    assert rouge.rouge_n("Ünïcode café-au-lait İstanbul x_y", "unicode cafe au lait istanbul x y", 2, True)[2] == \
        0.28571428571428575


# -- ToLeaP per-metric rules (evaluate) -------------------------------------------------------------------------------
def toleap_scores(case_id: str, output) -> dict:
    return score(case_id, output).details["scores"]


def test_toleap_node_names_first_present_key_and_consecutive_links():
    # names: first PRESENT key of task/name/...; a present but empty "task" drops the node (no fall-through);
    # its arguments keep task_name "" -> " - text"; links: consecutive predicted names only
    out = {"task_steps": ["Step 1: Classify the image.", "Step 2: Speak it."],
           "task_nodes": [{"name": "Image Classification", "arguments": ["garden.jpg"]},
                          {"task": "", "name": "Text-to-Speech", "arguments": ["<node-0>"]}]}
    assert toleap_scores("huggingface-10000002", out) == {
        "rouge_1": 0.5833333333333334, "rouge_2": 0.36363636363636365, "name_f1": 0.6666666666666666,
        "t_f1": 0.5, "v_f1": 0.5, "link_f1": 0.0}
    # the same nodes in the other order: names and arguments right, the consecutive link reversed; no steps: 0
    out = {"task_steps": [], "task_nodes": [{"task": "Text-to-Speech", "arguments": ["<node-0>"]},
                                            {"task": "Image Classification", "arguments": ["garden.jpg"]}]}
    verdict = score("huggingface-10000002", out)
    assert verdict.details["scores"] == {"rouge_1": 0.0, "rouge_2": 0.0, "name_f1": 1.0, "t_f1": 1.0, "v_f1": 1.0,
                                         "link_f1": 0.0}
    assert verdict.error_type == "wrong_links" and "'Text-to-Speech - Image Classification'" in verdict.explanation


def test_toleap_argument_rules():
    # a list argument: the last item's type names it, the item lines joined; numbers and null: "PRED ERROR";
    # a string "arguments" is iterated character by character; "tool" names the second node; string steps are
    # joined character by character (no token matches)
    out = {"task_steps": "Classify",
           "task_nodes": [{"task": "Image Classification",
                           "arguments": [["garden.jpg", "x.wav"], 7, None, {"name": "image", "value": "garden.jpg"}]},
                          {"tool": "Text-to-Speech", "arguments": "ab"}]}
    assert toleap_scores("huggingface-10000002", out) == {
        "rouge_1": 0.0, "rouge_2": 0.0, "name_f1": 1.0, "t_f1": 0.6666666666666666, "v_f1": 0.28571428571428575,
        "link_f1": 1.0}
    # content type strips quotes for the type (video) but the value keeps them; ".au" in "echo.aux" is audio
    out = {"task_steps": ["Extract audio from party.mp4", "Reduce noises", "Add echoes"],
           "task_nodes": [{"task": "Video-to-Audio", "arguments": ["'party.mp4'"]},
                          {"task": "Audio Noise Reduction", "arguments": ["<node-0>"]},
                          {"task": "Audio Effects", "arguments": ["<node-1>", "echo.aux"]}]}
    assert toleap_scores("multimedia-20000001", out) == {
        "rouge_1": 0.5333333333333333, "rouge_2": 0.07142857142857144, "name_f1": 1.0, "t_f1": 0.8571428571428571,
        "v_f1": 0.5, "link_f1": 1.0}


def test_toleap_label_numbers_cap_the_reference_and_single_nodes_score_zero_links():
    # label argument 5 is "<task> - number" on the label side but "PRED ERROR" on the prediction side: even the
    # reference answer gets t_f1 1/2 and v_f1 2/3; one node has no consecutive link: empty vs empty = 0
    gold = score("huggingface-10000005", scorer.gold_output(case("huggingface-10000005")))
    assert gold.passed and gold.details["scores"] == {"rouge_1": 1.0, "rouge_2": 1.0, "name_f1": 1.0, "t_f1": 0.5,
                                                      "v_f1": 0.6666666666666666, "link_f1": 0.0}
    assert gold.details["gold_ceiling"] == {"t_f1": 0.5, "v_f1": 0.6666666666666666, "link_f1": 0.0}
    # steps: a dict gives its first present key of description/step_description/step_name/step; an int str();
    # a list of strings is joined, another list str()-ed
    out = {"task_steps": [{"step_name": "compare", "description": "Comparing the sentences"}, 3, ["a", "b"], ["a", 1]],
           "task_nodes": [{"task": "Sentence Similarity", "arguments": ["The cat sleeps.", "A cat is sleeping.", "5"]}]}
    verdict = score("huggingface-10000005", out)
    assert verdict.details["scores"] == {"rouge_1": 0.5, "rouge_2": 0.14285714285714285, "name_f1": 1.0,
                                         "t_f1": 0.6666666666666666, "v_f1": 0.6666666666666666, "link_f1": 0.0}
    assert verdict.error_type == "wrong_argument_names"  # "Sentence Similarity - text" instead of PRED ERROR


def test_toleap_temporal_links_are_source_i_target_i_plus_one():
    # dailylifeapis: links[i].source + " - " + links[i+1].target; one predicted link gives none
    out = {"task_steps": ["Step 1: Call book_flight"],
           "task_nodes": [{"task": "book_flight", "arguments": [{"name": "date", "value": "2024-06-10"},
                                                                {"name": "from", "value": "Paris"},
                                                                {"name": "to", "value": "Rome"}]}],
           "task_links": [{"source": "book_flight", "target": "book_hotel"}]}
    assert toleap_scores("dailylifeapis-30000002", out) == {
        "rouge_1": 0.1923076923076923, "rouge_2": 0.16, "name_f1": 0.5, "t_f1": 0.6, "v_f1": 0.6, "link_f1": 0.0}
    # the reference's two links give the one string "book_flight - send_email"; a third link with a number
    # target raises inside ToLeaP's try: no links at all
    assert toleap.temporal_links([{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]) == ["a - c"]
    assert toleap.temporal_links([{"source": "a", "target": "b"}, {"source": "b", "target": 5}]) == []
    out = {"task_steps": [], "task_nodes": [], "task_links": [{"source": "book_flight", "target": "book_hotel"},
                                                              {"source": "book_hotel", "target": "send_email"}]}
    assert toleap_scores("dailylifeapis-30000002", out)["link_f1"] == 1.0


def test_toleap_crashes_are_format_errors_scored_empty():
    # "task_steps": null makes ToLeaP's evaluate raise (len(None)); the steps are scored empty, the rest counts
    out = json.loads(scorer.gold_output(case("multimedia-20000002")))
    out["task_steps"] = None
    verdict = score("multimedia-20000002", out)
    assert verdict.details["scores"]["rouge_1"] == 0.0 and verdict.details["scores"]["name_f1"] == 1.0
    assert verdict.counts["toleap_crash"] == 1.0 and "task_steps" in verdict.details["toleap_crash"]
    assert verdict.passed  # the graph is the reference's: the steps are not part of the pass
    out["task_nodes"] = [{"task": "Image Downloader", "arguments": 3}]  # iterating an int
    verdict = score("multimedia-20000002", out)
    assert not verdict.passed and verdict.error_type == FORMAT_ERROR and "TypeError" in verdict.explanation


def test_toleap_bad_cases_and_arrays_are_format_errors():
    verdict = score("huggingface-10000001", "I cannot help with that.")
    assert verdict.error_type == FORMAT_ERROR and verdict.counts["bad_case"] == 1.0
    assert all(verdict.counts[k] == 0.0 for k in ("rouge_1", "name_f1", "v_f1"))
    verdict = score("huggingface-10000001", "[" + scorer.gold_output(case("huggingface-10000001")) + "]")
    assert verdict.error_type == FORMAT_ERROR and verdict.counts["bad_case"] == 0.0  # ToLeaP: not a bad case


# -- upstream per-metric rules (evaluate.py) ---------------------------------------------------------------------------
def upstream_group(items):
    results, verdicts = [], {}
    for case_id, out in items:
        c = case(case_id, protocol="upstream")
        verdict = scorer.score(c, Generation(text=out if isinstance(out, str) else json.dumps(out)))
        verdicts[case_id] = verdict
        results.append(result_of(c, verdict))
    return aggregation.upstream_figures(results), verdicts


def test_upstream_resource_pools_and_quirks():
    figures, verdicts = upstream_group([
        # "_" -> " " in names, but a link's target is the raw task: Object_Detection's link misses; the int
        # argument raises and repeats the previous converted argument ({image, Text-to-Image})
        ("huggingface-10000003", {"task_steps": ["Step 1: draw a red bicycle", "Step 2: detect objects"],
                                  "task_nodes": [{"task": "Text-to-Image", "arguments": ["a red bicycle leaning on a fence"]},
                                                 {"task": "Object_Detection", "arguments": ["<node-0>"]},
                                                 {"task": "Image Classification", "arguments": ["<node-0>", 5]}]}),
        # dict steps: their "step"; a self-reference is dropped; "<PAD>" and an unknown tool count in no node pool
        # but in the edit distance ("<PAD>" -> -1, unknown -> 0)
        ("huggingface-10000002", {"task_steps": [{"step": "classify garden.jpg"}, {"step": "read aloud"}],
                                  "task_nodes": [{"task": "Image_Classification", "arguments": ["garden.jpg"]},
                                                 {"task": "Text-to-Speech", "arguments": ["<node-0>", "<node-1>"]},
                                                 {"task": "<PAD>", "arguments": []},
                                                 {"task": "Image Captioning", "arguments": ["garden.jpg"]}]}),
        # no "task" key: the sample is skipped, but its steps ("[]") were already counted
        ("huggingface-10000004", {"task_steps": [], "task_nodes": [{"name": "Summarization", "arguments": ["notes.txt"]}]}),
        # the int argument raises first and repeats the LABEL side's last converted argument: a match
        ("huggingface-10000001-2", {"task_steps": ["Transcribe meeting.wav"],
                                    "task_nodes": [{"task": "Automatic Speech Recognition", "arguments": [5, "meeting.wav"]}]}),
    ])
    expected = {"all_samples": 4.0, "step_supports": 4.0, "node_supports": 3.0, "not_written": 0.0,
                "step_rouge1": 0.34342105263157896, "step_rouge2": 0.1356837606837607,
                "node_micro_precision_no_matching": 1.0, "node_micro_recall_no_matching": 1.0,
                "node_micro_f1_no_matching": 1.0, "node_macro_precision_no_matching": 0.5555555555555556,
                "node_macro_recall_no_matching": 0.5555555555555556, "node_macro_f1_no_matching": 0.5555555555555556,
                "argument_task_argname_binary_f1_no_matching": 0.9230769230769231,
                "argument_task_argname_value_binary_f1_no_matching": 0.9230769230769231,
                "edit_distance": pytest.approx(0.11111111111111105), "link_binary_f1": 0.6666666666666666}
    assert figures == expected
    assert verdicts["huggingface-10000003"].error_type == "wrong_links"
    assert "Text-to-Image -> Object_Detection" in verdicts["huggingface-10000003"].explanation
    assert verdicts["huggingface-10000004"].error_type == FORMAT_ERROR
    assert "KeyError" in verdicts["huggingface-10000004"].explanation
    assert verdicts["huggingface-10000001-2"].passed


def test_upstream_temporal_pools_and_skips():
    figures, verdicts = upstream_group([
        ("dailylifeapis-30000001", json.loads(scorer.gold_output(case("dailylifeapis-30000001")))),
        ("dailylifeapis-30000002", {"task_steps": ["Step 1: Call book_flight", "Step 2: Call book_hotel"],
                                    "task_nodes": [{"task": "book_flight", "arguments": [
                                        {"name": "date", "value": "2024-06-10"}, {"name": "from", "value": "Paris"},
                                        {"name": "to", "value": "Milan"}]},
                                        {"task": "book_hotel", "arguments": [{"name": "date", "value": "2024-06-10"},
                                                                             {"name": "name", "value": "Hotel Roma"}]}],
                                    "task_links": [{"source": "book_flight", "target": "book_hotel"}]}),
        # a string argument has no ["name"]: skipped
        ("dailylifeapis-30000003", {"task_steps": ["sell", "alarm", "mail"],
                                    "task_nodes": [{"task": "stock_operation", "arguments": [
                                        {"name": "stock", "value": "ACME"}, {"name": "operation", "value": "sell"}]},
                                        {"task": "set_alarm", "arguments": ["07:30"]}], "task_links": []}),
    ])
    assert figures == {"all_samples": 3.0, "step_supports": 3.0, "node_supports": 2.0, "not_written": 0.0,
                       "step_rouge1": 0.48632843369685474, "step_rouge2": 0.43030303030303035,
                       "node_micro_precision_no_matching": 1.0, "node_micro_recall_no_matching": 0.75,
                       "node_micro_f1_no_matching": 0.8571428571428571, "node_macro_precision_no_matching": 0.5,
                       "node_macro_recall_no_matching": 0.5, "node_macro_f1_no_matching": 0.5,
                       "argument_task_argname_binary_f1_no_matching": 0.875,
                       "argument_task_argname_value_binary_f1_no_matching": 0.75,
                       "edit_distance": pytest.approx(0.09999999999999998), "link_binary_f1": 0.6666666666666666}
    assert verdicts["dailylifeapis-30000003"].error_type == FORMAT_ERROR


def test_upstream_not_written_superseded_and_no_support():
    figures, verdicts = upstream_group([("huggingface-10000002", "I would rather not."),
                                        ("huggingface-10000001", scorer.gold_output(case("huggingface-10000001")))])
    assert verdicts["huggingface-10000002"].counts == {"superseded": 0.0, "written": 0.0}
    assert figures["not_written"] == 1.0 and figures["all_samples"] == 0.0  # 10000001's first line is superseded
    assert figures["node_micro_f1_no_matching"] is None  # "No supports, skip"


def test_upstream_stale_argument_without_predecessor_skips_the_sample():
    # no earlier converted argument in the sample (the label's only argument is a self-reference): NameError
    label = {"task_steps": ["s"], "task_nodes": [{"task": "A", "arguments": ["<node-0>"]}], "task_links": []}
    result = {"task_steps": ["s"], "task_nodes": [{"task": "A", "arguments": [3]}]}
    out = upstream.sample(result, label, temporal=False, output_types={"A": "text"})
    assert out["graph"] is None and "NameError" in out["skipped"] and out["steps"] == ("s", "s")
    assert upstream.lcs_ratio([], []) == 1.0 and upstream.lcs_ratio([1, 2, 3], [3, 2, 1]) == pytest.approx(1 / 3)
    assert upstream.steps_text([]) == "[]" and upstream.steps_text("ab") == "a\nb"
    assert upstream.steps_text([{"id": "x"}, {"id": "y"}]) == "x\ny" and upstream.steps_text([1, 2]) == "[1, 2]"


def test_upstream_link_crash_counts_as_no_links():
    out = json.loads(scorer.gold_output(case("dailylifeapis-30000002")))
    out["task_links"] = [{"source": "book_flight"}]
    verdict = score("dailylifeapis-30000002", out, protocol="upstream")
    assert verdict.counts["upstream_crash"] == 1.0 and verdict.counts["link_tp"] == 0.0
    assert verdict.error_type == "wrong_links"


# -- verdicts, gold, figures, TL --------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["toleap", "upstream"])
def test_gold_passes_every_sample_case(protocol):
    results = []
    for c in sample_cases(protocol=protocol):
        verdict = scorer.score(c, Generation(text=scorer.gold_output(c)))
        assert verdict.passed, (c.case_id, verdict.explanation)
        assert verdict.labels == {}
        results.append(result_of(c, verdict))
    metrics = {m.name: m for m in scorer.aggregate(results)}
    if protocol == "toleap":
        assert metrics["multimedia v_f1"].value == 1.0 and metrics["huggingface name_f1"].value == 1.0
        # huggingface: (1+1+1+1+2/3+1)/6 (10000005's number argument); links 0 for single nodes
        assert metrics["huggingface v_f1"].value == pytest.approx((5 + 2 / 3) / 6)
        assert metrics["huggingface link_f1"].value == pytest.approx(3 / 6)
        assert metrics["v_f1 (mean of domains)"].value == pytest.approx(((5 + 2 / 3) / 6 + 2) / 3)
        assert metrics["dailylifeapis bad cases"].value == 0.0
    else:
        assert metrics["huggingface overall node_micro_f1_no_matching"].value == 1.0
        assert metrics["huggingface overall all_samples"].value == 5.0  # the repeated id counts once
        assert metrics["huggingface overall node_macro_f1_no_matching"].value == pytest.approx(8 / 9)  # Translation
        assert metrics["dailylifeapis dag link_binary_f1"].value == 1.0
        assert metrics["multimedia overall edit_distance"].better == "lower"


def test_toleap_aggregate_is_a_per_sample_mean():
    c = sample_cases()
    rows = [CaseResult("taskbench", "a", "dailylifeapis", False, "x", {"v_f1": 1.0, "bad_case": 0.0}),
            CaseResult("taskbench", "b", "dailylifeapis", False, "x", {"v_f1": 0.0, "bad_case": 1.0}),
            CaseResult("taskbench", "c", "dailylifeapis", False, "x", {"v_f1": 0.5, "bad_case": 0.0})]
    metrics = {m.name: m for m in scorer.aggregate(rows)}
    assert metrics["dailylifeapis v_f1"].value == 0.5 and metrics["dailylifeapis v_f1"].total == 3
    assert metrics["dailylifeapis bad cases"].value == pytest.approx(1 / 3)
    assert "v_f1 (mean of domains)" not in metrics and c  # only with all three domains


def test_tl_categories_on_dailylifeapis_only():
    out = json.loads(scorer.gold_output(case("dailylifeapis-30000001")))
    out["task_nodes"][0]["arguments"] = [{"name": "location", "value": "Lisbon"}]
    verdict = score("dailylifeapis-30000001", out)
    assert verdict.error_type == "wrong_argument_names"
    assert verdict.labels == {"tl_category": "parameter_missing"} and verdict.counts["tl_reward"] == -0.5
    out["task_nodes"][0]["task"] = "get_forecast"
    assert score("dailylifeapis-30000001", out).labels == {"tl_category": "tool_hallucination"}
    assert score("dailylifeapis-30000001", "nope").labels == {"tl_category": "unparseable"}
    assert score("huggingface-10000001", "nope").labels == {}  # resource domains: no named parameters
    # right calls, wrong links: no TL category applies
    out = json.loads(scorer.gold_output(case("dailylifeapis-30000002")))
    out["task_links"] = []
    verdict = score("dailylifeapis-30000002", out)
    assert verdict.error_type == "wrong_links" and verdict.labels == {}


HOSTILE = ["", "{", "}", "[", "[]", "{}", "null", '{"task_nodes": 5}', '{"task_nodes": [5, "x", null]}',
           '{"task_nodes": [{"task": ["a"], "arguments": [[[]]]}]}', '{"task_steps": {"a": 1}}',
           '{"task_steps": [1.5, null]}', '{"task_links": "abc", "task_nodes": {"task": "x"}}',
           '{"task_nodes": [{"task": {"x": 1}, "arguments": [{"name": [1], "value": {"a": NaN}}]}]}',
           '{"task_nodes": [{"task": "A", "arguments": ["<node-", "<node-99>", "<node-x>", ">"]}]}',
           "[" * 5000 + "]" * 5000, '{"a": ' * 3000 + "1" + "}" * 3000, "\x00\ud800\U0001F600",
           '{"task_nodes": [{"task": "get_weather", "arguments": [{"name": "date", "value": Infinity}]}], '
           '"task_links": [{"source": [], "target": {}}]}',
           decoding.PARSED_RESULT + "not json", decoding.PARSED_RESULT + "[1, 2]"]


@pytest.mark.parametrize("protocol", ["toleap", "upstream"])
def test_scorer_never_raises_on_hostile_output(protocol):
    rng = random.Random(7)
    cases = sample_cases(protocol=protocol)
    texts = list(HOSTILE)
    alphabet = '{}[]",:<>-_ node0123456789task arguments name value source target \\'
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(300)]
    for text in texts:
        for c in cases:
            verdict = scorer.score(c, Generation(text=text))
            json.dumps(verdict.to_json(), allow_nan=False)
            assert verdict.passed in (True, False)


# -- replay (inference.py's predictions files) -------------------------------------------------------------------
def write_predictions(folder: Path, lines: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gpt-4.json"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_replay_reads_predictions_by_id_and_occurrence(tmp_path):
    gold = json.loads(scorer.gold_output(case("huggingface-10000002")))
    wrong = {"task_steps": ["x"], "task_nodes": [{"task": "Translation", "arguments": ["garden.jpg"]}]}
    path = write_predictions(tmp_path / "data_huggingface" / "predictions", [
        {"id": "10000001", "user_request": "r", "result": {"task_steps": [], "task_nodes": []}},
        {"id": "10000002", "user_request": "r", "result": gold},
        {"id": "10000001", "user_request": "r", "result": json.loads(scorer.gold_output(case("huggingface-10000001")))},
        '{"id": "10000003", "user_request": "r", "result": {"task_steps": [',
        {"id": "10000004", "user_request": "r", "result": wrong},
    ])
    outputs = scorer.replay_outputs(path)
    assert sorted(outputs) == ["huggingface-10000001", "huggingface-10000001-2", "huggingface-10000002",
                               "huggingface-10000004"]
    assert "huggingface-10000003" in outputs.unreadable
    assert any(p.line == 4 and p.file == str(path) for p in outputs.problems)
    by_id = {c.case_id: c for c in sample_cases(protocol="upstream")}
    verdicts = {k: scorer.score(by_id[k], Generation(text=v)) for k, v in outputs.items()}
    assert {k: v.error_type for k, v in verdicts.items()} == {
        "huggingface-10000001": "wrong_nodes", "huggingface-10000001-2": None, "huggingface-10000002": None,
        "huggingface-10000004": "wrong_nodes"}
    toleap_verdict = scorer.score(case("huggingface-10000002"), Generation(text=outputs["huggingface-10000002"]))
    assert toleap_verdict.passed  # under ToLeaP the replayed result goes through ToLeaP's parser: the same dict
    # the folder forms: data_<domain>/predictions*/ with one file each; two files are ambiguous
    assert sorted(scorer.replay_outputs(tmp_path)) == sorted(outputs)
    assert sorted(scorer.replay_outputs(tmp_path / "data_huggingface")) == sorted(outputs)
    write_predictions(tmp_path / "data_huggingface" / "predictions_use_demos_2", [{"id": "10000002", "result": gold}])
    assert any("2 prediction files" in p.message for p in scorer.replay_outputs(tmp_path).problems)
    assert scorer.replay_outputs(tmp_path / "missing").problems
    stray = tmp_path / "elsewhere.json"
    stray.write_text("{}\n")
    assert "cannot tell the domain" in scorer.replay_outputs(stray).problems[0].message


# -- end to end (needs the core's download entries in suite.yaml) --------------------------------------------------
CORE_DOWNLOADS = "download" in json.dumps(SUITE_SCHEMA)
needs_downloads = pytest.mark.skipif(not CORE_DOWNLOADS, reason="this core's suite.yaml schema has no download "
                                                                "entries (pytest_toolbench.data.entries, wt-downloads)")


def run_suite(tmp_path: Path, *args: str, data: str | None = None) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    if data:
        env["TOOLBENCH_DATA"] = data
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "pytest", str(SUITE_DIR), "-q", "-p", "no:cacheprovider",
                           f"--toolbench-json={out}", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          check=False)
    return (json.loads(out.read_text()) if out.is_file() else {}), done.stdout + done.stderr


@needs_downloads
def test_gold_run_on_samples_end_to_end(tmp_path):
    document, log = run_suite(tmp_path)
    assert "12 passed" in log, log[-2000:]
    metrics = {m["name"]: m for m in document["suites"]["taskbench"]["metrics"]}
    assert metrics["multimedia v_f1"]["value"] == 1.0


@needs_downloads
def test_replay_run_end_to_end(tmp_path):
    gold = json.loads(scorer.gold_output(case("multimedia-20000001")))
    write_predictions(tmp_path / "preds" / "data_multimedia" / "predictions",
                      [{"id": "20000001", "user_request": "r", "result": gold},
                       {"id": "20000002", "user_request": "r", "result": {"task_steps": [], "task_nodes": []}}])
    document, log = run_suite(tmp_path, "-k", "multimedia", "--toolbench-backend=replay",
                              f"--toolbench-replay={tmp_path / 'preds'}")
    states = {c["case_id"]: c["passed"] for c in document["cases"]}
    assert states["multimedia-20000001"] is True and states["multimedia-20000002"] is False, log[-2000:]
