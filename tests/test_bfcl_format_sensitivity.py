"""BFCL's format-sensitivity category against the official bfcl-eval 2026.3.23, frozen by
scripts/make_format_sensitivity_oracle.py in tests/data/bfcl_format_sensitivity_oracle.json.gz: the system prompts
of all 26 formats byte for byte, every entry's verdict and error type on a result file with spoiled outputs, and the
score file's figures (per-format accuracy, Max Delta, Variance, Std Dev)."""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO
from pytest_toolbench.contract.suite import CaseRecord, Generation, SuiteContext
from shipped import scorer

bfcl = scorer("bfcl")
fs = scorer("bfcl", "format_sensitivity")
formats = scorer("bfcl", "decoders.formats")
replay = scorer("bfcl", "replay")
ORACLE = REPO / "tests" / "data" / "bfcl_format_sensitivity_oracle.json.gz"


@pytest.fixture(scope="module")
def oracle() -> dict:
    with gzip.open(ORACLE, "rt", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def cases(shared_data):
    context = SuiteContext(shared_data / "bfcl", {"categories": [{"name": "format_sensitivity"}]})
    return {case.case_id: case for case in bfcl.load_cases(context)}


def test_the_26_formats_in_upstream_order():
    assert len(fs.CONFIGS) == 26 == len(set(fs.CONFIGS))
    assert fs.CONFIGS[0] == "ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic"
    assert fs.CONFIGS[-1].endswith("prompt_fmt=plaintext&style=experimental")
    assert {fs.Config.parse(c).return_format for c in fs.CONFIGS} == {"python", "json", "verbose_xml",
                                                                      "concise_xml"}


def test_5200_cases_with_upstream_ids_and_markers(cases, oracle):
    assert len(cases) == 5200
    # upstream's ids, in upstream's order; the case id leaves the entry's id out (a category name in the node
    # name would put these items under `-k simple_python`)
    assert [json.loads(line)["id"] for line in oracle["results"]] == [c.payload["id"] for c in cases.values()]
    assert list(cases) == [fs.case_id_of(json.loads(line)["id"]) for line in oracle["results"]]
    case = next(iter(cases.values()))
    assert case.category == "format_sensitivity"
    assert set(case.keywords) == {"ret_python", "tool_call_tag", "doc_python", "prompt_plaintext", "style_classic"}


def test_every_system_prompt_is_the_official_handlers_byte_for_byte(cases, oracle):
    assert len(oracle["prompts"]) == 78  # three entries x 26 formats
    seen = set()
    for frozen in oracle["prompts"]:
        request = bfcl.build_request(cases[fs.case_id_of(frozen["id"])])
        assert request.messages == frozen["messages"], frozen["id"]
        seen.add(frozen["id"].split(":")[1])
    assert seen == set(fs.CONFIGS)


def _score_replayed(tmp_path: Path, lines: list[str], cases: dict) -> list[CaseRecord]:
    path = tmp_path / "result" / "Qwen_Qwen3-8B" / "format_sensitivity" / "BFCL_v4_format_sensitivity_result.json"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = replay.replay_outputs(tmp_path / "result")
    assert not outputs.problems
    records = []
    for case_id, case in cases.items():
        output = outputs[case_id]
        generation = output if isinstance(output, Generation) else Generation(text=output)
        verdict = bfcl.score(case, generation)
        records.append(CaseRecord(suite="bfcl", case_id=case_id, category=case.category, passed=verdict.passed,
                                  error_type=verdict.error_type))
    return records


def test_replayed_result_file_gets_the_official_verdicts_and_figures(cases, oracle, tmp_path):
    records = _score_replayed(tmp_path, oracle["results"], cases)
    ours = {r.case_id: (None if r.passed else r.error_type) for r in records}
    assert ours == {fs.case_id_of(k): v for k, v in oracle["failed"].items()}
    figures = fs.official_figures(records)
    header = oracle["header"]
    for key in ("accuracy_max_delta", "accuracy_variance", "accuracy_std"):
        assert figures[key] == header[key], key
    for config in fs.CONFIGS:
        assert figures[config] == header[config], config
    category = next(m for m in bfcl.aggregate(records) if m.name == "format_sensitivity")
    assert (category.correct, category.total) == (header["correct_count"], header["total_count"])
    assert category.value == header["accuracy"]


def test_format_sensitivity_is_in_no_official_figure(cases, oracle, tmp_path):
    records = _score_replayed(tmp_path, oracle["results"], cases)
    names = {m.name for m in bfcl.aggregate(records)}
    assert "format_sensitivity_max_delta" in names and "format_sensitivity_std_dev" in names
    # nothing of the official figures moved: every scored category is missing, the Overall is 0
    overall = next(m for m in bfcl.aggregate(records) if m.name == "overall_official")
    assert overall.value == 0.0 and "format_sensitivity" not in overall.formula


def test_a_non_text_result_fails_as_upstream_decode_ast_does(cases, tmp_path):
    case_id = next(iter(cases))
    lines = [json.dumps({"id": cases[case_id].payload["id"], "result": [{"f": "{}"}]})]
    path = tmp_path / "BFCL_v4_format_sensitivity_result.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = replay.replay_outputs(path)[case_id]
    verdict = bfcl.score(cases[case_id], output)
    assert not verdict.passed and verdict.error_type == "ast_decoder:decoder_failed"


def test_gold_passes_every_case_but_the_known_defects(cases):
    import yaml

    defects = yaml.safe_load((REPO / "suites" / "bfcl" / "known_defects.yaml").read_text(encoding="utf-8"))
    failing = {case_id for case_id, case in cases.items()
               if not bfcl.score(case, Generation(text=bfcl.gold_output(case))).passed}
    listed = {case_id for case_id in defects if case_id.startswith("format_sensitivity_")}
    assert failing == listed
    assert Counter(cases[case_id].payload["original_id"] for case_id in failing) == {"simple_python_96": 6}


JSON_CALLS = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)


def test_the_linear_json_call_match_is_re_search():
    rng = random.Random(7)
    alphabet = "[]{},: \n\ta\"1"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        found = JSON_CALLS.search(text)
        assert formats._json_call_list(text) == (found.group(0) if found else None), repr(text)


def test_hostile_json_is_linear():
    # upstream's regular expression backtracks exponentially here; the scan answers at once
    text = "[{}" + ",{}" * 5000
    assert formats._json_call_list(text) is None
    with pytest.raises(formats.DecodeError):
        formats.decode_format("<TOOLCALL>" * 3, "json", True)
    assert formats.decode_format("[1,,2]", "json", False) == []  # does not load: no call, as upstream
    with pytest.raises(formats.DecodeError):  # json.loads' RecursionError escapes upstream's except: a failure
        formats.decode_format("[" * 100000 + "]" * 100000, "json", False)


# slow (-m slow): a pytest subprocess replaying 5,200 results, about 16 s of CPU
@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_replayed_official_result_file_reports_the_official_figures(shared_data, oracle, tmp_path, workers):
    import subprocess
    import sys

    folder = tmp_path / "result" / "Qwen_Qwen3-8B" / "format_sensitivity"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_format_sensitivity_result.json").write_text("\n".join(oracle["results"]) + "\n",
                                                                     encoding="utf-8")
    args = [sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-m", "format_sensitivity", "-q",
            "-p", "no:cacheprovider", f"--toolbench-data={shared_data}", f"--toolbench-replay={tmp_path / 'result'}",
            f"--toolbench-json={tmp_path / 'run.json'}", *workers]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    metrics = {m["name"]: m for m in run["suites"]["bfcl"]["metrics"]}
    header = oracle["header"]
    assert round(metrics["format_sensitivity_max_delta"]["value"] * 100, 2) == header["accuracy_max_delta"]
    assert round(metrics["format_sensitivity_std_dev"]["value"] * 100, 2) == header["accuracy_std"]
    assert round(metrics["format_sensitivity_variance"]["value"] * 100 ** 2, 2) == header["accuracy_variance"]
    for config in fs.CONFIGS:
        figure = metrics[f"format_sensitivity:{config}"]
        assert (figure["correct"], figure["total"]) == (header[config]["correct_count"], header[config]["total_count"])
    failed = {case["case_id"]: case["error_type"] for case in run["cases"] if not case["passed"]}
    assert failed == {fs.case_id_of(k): v for k, v in oracle["failed"].items() if v is not None}
    assert "overall_official" in metrics and "format_sensitivity" not in metrics["overall_official"]["formula"]


def test_k_with_a_category_name_selects_that_category_only(shared_data, tmp_path):
    """The format items are built from simple_python, multiple, parallel... entries; their node names leave the
    entry's id out, so `-k simple_python` collects simple_python's 400 cases, and `-k format_sensitivity` the 5,200."""
    for keyword, count in (("simple_python", 400), ("format_sensitivity", 5200)):
        done = subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-k", keyword,
                               "--collect-only", "-q", "-p", "no:cacheprovider", f"--toolbench-data={shared_data}"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert f"{count}/" in done.stdout.splitlines()[-1] or f"{count} tests collected" in done.stdout, \
            done.stdout[-1500:]
