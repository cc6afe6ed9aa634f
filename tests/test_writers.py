"""Writers as plug-ins: the documented example writer runs as written, a broken writer is one line (or one usage
error), the suites' own report declarations reach the reports, and the Every Eval Ever export of a gold run and of a
replayed run validates against the JSON Schemas of the pinned every-eval-ever wheel."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import EXAMPLE_SUITE, REPO, shared_data_dir
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import eee
from pytest_toolbench.report.writers import collect
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import SuiteInput, summarize

SUITES = REPO / "suites"
WHEEL = REPO.parent / "shared" / "data" / "every-eval-ever" / "every_eval_ever-0.3.0-py3-none-any.whl"


def docs_example() -> str:
    """The first Python block of docs/adding-a-writer.md."""
    text = (REPO / "docs" / "adding-a-writer.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    return pytester


def run_echo(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly", *args)


def test_the_documented_example_writer_runs_as_written(echo):
    example = docs_example()
    assert 15 <= len(example.strip().splitlines()) <= 30  # the page promises a short example
    (echo.path / "conftest.py").write_text(example, encoding="utf-8")
    result = run_echo(echo, "--figures-csv=figures.csv", "--toolbench-json=run.json")
    assert result.ret == 0, result.stdout.str()
    rows = list(csv.DictReader((echo.path / "figures.csv").open(encoding="utf-8")))
    document = json.loads((echo.path / "run.json").read_text())
    expected = [(name, metric["name"], metric["value"]) for name, suite in document["suites"].items()
                for metric in suite["metrics"]]
    assert [(row["suite"], row["figure"], float(row["value"])) for row in rows] == expected and expected
    out = result.stdout.str()
    # the built-in writers first, then the conftest's, each named on its own line
    assert out.index("toolbench: results written to") < out.index("toolbench: figures CSV written to figures.csv")


def test_a_writer_that_cannot_write_is_one_line_and_the_others_still_appear(echo):
    (echo.path / "conftest.py").write_text(
        "class Broken:\n"
        "    name, what, path = 'broken', 'broken export', 'nowhere/at/all'\n"
        "    def write(self, report):\n"
        "        raise PermissionError(13, 'Permission denied')\n\n"
        "def pytest_toolbench_writers(config, settings):\n"
        "    return [Broken()]\n", encoding="utf-8")
    result = run_echo(echo, "--toolbench-md=run.md")
    out = result.stdout.str()
    assert "toolbench: could not write the broken export to nowhere/at/all: Permission denied" in out
    assert (echo.path / "run.md").is_file() and "toolbench summary" in out
    assert result.ret == 3  # a report that could not be written is an internal error, not a pass


def test_an_object_that_is_not_a_writer_is_one_usage_error(echo):
    (echo.path / "conftest.py").write_text(
        "def pytest_toolbench_writers(config, settings):\n    return [object()]\n", encoding="utf-8")
    result = run_echo(echo)
    assert result.ret == 4
    assert re.search(r"pytest_toolbench_writers: <object object at \w+> is not a writer: it lacks name, what, "
                     r"path, write", result.stderr.str())
    with pytest.raises(ValueError, match="two writers are named 'x'"):
        collect([[SimpleNamespace(name="x", what="", path=None, write=print)],
                 SimpleNamespace(name="x", what="", path=None, write=print)])


def test_a_suites_own_label_notes_and_run_facts_reach_its_summary():
    """What the core used to know of BFCL and NesTools (a label's meaning, the leaderboard row) is declared by the
    suite's scorer (``LABEL_NOTES``, ``header_facts``) and read once, where the summary is made."""
    benchmark = SimpleNamespace(aggregate=lambda results: [Metric("all", 1.0, 1, 1)],
                                LABEL_NOTES={"kind": "what kind of case"},
                                header_facts=lambda header: [("Row", f"row of {header['backend']}")])
    records = [CaseRecord("s", "a", "c", True, labels={"kind": "x"})]
    summary = summarize(records, {"s": SuiteInput(benchmark, "S", {})}, {"backend": "vllm"})
    suite = summary.suites[0]
    assert suite.label_notes == {"kind": "what kind of case"} and suite.header_facts == (("Row", "row of vllm"),)
    assert "label_notes" not in suite.to_json() and "header_facts" not in suite.to_json()  # the JSON is unchanged
    plain = summarize(records, {"s": SuiteInput(SimpleNamespace(aggregate=benchmark.aggregate), "S", {})}, {})
    assert plain.suites[0].label_notes == {} and plain.suites[0].header_facts == ()


# -- Every Eval Ever ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def eee_validators():
    if not WHEEL.is_file():
        pytest.skip(f"the pinned every-eval-ever wheel is not there ({WHEEL})")
    jsonschema = pytest.importorskip("jsonschema")
    with zipfile.ZipFile(WHEEL) as wheel:
        schemas = [json.loads(wheel.read(f"every_eval_ever/schemas/{name}.schema.json"))
                   for name in ("eval", "instance_level_eval")]
    return [jsonschema.Draft7Validator(schema) for schema in schemas]


def validate_export(folder: Path, validators) -> tuple[list[dict], list[dict]]:
    """Every file of the export, validated: (the evaluation logs, the sample lines)."""
    aggregate, instance = validators
    logs, lines = [], []
    for path in sorted(folder.rglob("*.json")):
        log = json.loads(path.read_text(encoding="utf-8"))
        errors = [error.message for error in aggregate.iter_errors(log)]
        assert not errors, (path, errors[:3])
        samples = folder / log["detailed_evaluation_results"]["file_path"]
        assert samples.parent == path.parent and samples.name == f"{path.stem}_samples.jsonl"
        text = samples.read_text(encoding="utf-8")
        assert log["detailed_evaluation_results"]["total_rows"] == len(text.splitlines())
        for line in text.splitlines():
            sample = json.loads(line)
            errors = [error.message for error in instance.iter_errors(sample)]
            assert not errors, (samples, sample["sample_id"], errors[:3])
            assert sample["evaluation_id"] == log["evaluation_id"]
            lines.append(sample)
        logs.append(log)
    return logs, lines


def run_pytest(cwd: Path, *args: str, data: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "TOOLBENCH_NO_DOWNLOAD": "1", "HOME": str(cwd)}
    if data is not None:
        env["TOOLBENCH_DATA"] = str(data)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--tb=no", *args], cwd=cwd, capture_output=True, text=True, timeout=900, env=env)


def test_the_eee_export_of_a_gold_run_validates_against_the_schemas(tmp_path, eee_validators):
    result = run_pytest(tmp_path, str(SUITES / "nestools"), str(SUITES / "sealtools"),
                        f"--toolbench-eee={tmp_path / 'export'}", f"--toolbench-json={tmp_path / 'run.json'}")
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"toolbench: Every Eval Ever export written to {tmp_path / 'export'}" in result.stdout
    logs, lines = validate_export(tmp_path / "export", eee_validators)
    document = json.loads((tmp_path / "run.json").read_text())
    assert sorted(log["eval_library"]["additional_details"]["suite"] for log in logs) == ["nestools", "sealtools"]
    for log in logs:
        suite = document["suites"][log["eval_library"]["additional_details"]["suite"]]
        assert log["model_info"]["id"] == "pytest-toolbench/gold-reference-answers"
        shown = {f"{suite['name']}.{metric['name']}": metric for metric in suite["metrics"]
                 if metric["value"] is not None}
        assert {result["evaluation_name"] for result in log["evaluation_results"]} == set(shown)
        for result in log["evaluation_results"]:
            metric = shown[result["evaluation_name"]]
            assert result["score_details"]["score"] == metric["value"]
            interval = result["score_details"].get("uncertainty", {}).get("confidence_interval")
            assert (interval and [interval["lower"], interval["upper"]]) == (metric["interval95"] or None)
    assert len(lines) == len(document["cases"])
    assert {line["interaction_type"] for line in lines} == {"agentic"}  # every gold answer is a list of calls
    assert all(line["messages"][1]["tool_calls"] for line in lines)


def test_a_proportions_uncertainty_is_the_reports_interval_and_the_binomial_standard_error():
    found = eee.uncertainty(Metric("acc", 0.75, 3, 4))
    assert found["standard_error"]["value"] == pytest.approx((0.75 * 0.25 / 4) ** 0.5)
    assert found["confidence_interval"]["method"] == "Wilson score" and found["num_samples"] == 4
    mean = eee.uncertainty(Metric("reward", 0.5, 5.0, 10, unit="", sd=0.2))
    assert mean["standard_error"]["value"] == pytest.approx(0.2 / 10 ** 0.5) and mean["standard_deviation"] == 0.2
    assert eee.uncertainty(Metric("F1", 0.5)) == {}  # a formula over pooled counts has no interval here either
    assert eee.tool_calls([{"get_weather": {"city": "Paris", "days": 3}}]) == [
        ("get_weather", {"city": "Paris", "days": "3"})]
    assert eee.tool_calls([{"function": {"name": "f", "arguments": '{"a": [1]}'}}]) == [("f", {"a": "[1]"})]
    assert eee.tool_calls("f(a=1)") is None and eee.tool_calls([1, 2]) is None


@pytest.mark.slow
def test_the_eee_export_of_a_replayed_real_run_validates_against_the_schemas(tmp_path, eee_validators):
    data = shared_data_dir()
    verdicts = data.parent / "dev-verdicts" / "nestools" / "round_0" if data is not None else None
    if verdicts is None or not (verdicts / "raw_response.jsonl").is_file() or \
            not (data / "nestools" / "test_data.jsonl").is_file():
        pytest.skip("the NesTools data and dev verdicts are not available")
    result = run_pytest(tmp_path, str(SUITES / "nestools"), f"--toolbench-replay={verdicts}", "-k", "depth1",
                        f"--toolbench-eee={tmp_path / 'export'}", data=data)
    assert "Every Eval Ever export written to" in result.stdout, result.stdout[-3000:]
    logs, lines = validate_export(tmp_path / "export", eee_validators)
    assert [log["model_info"]["id"] for log in logs] == ["unknown/round_0"]
    assert {line["interaction_type"] for line in lines} <= {"agentic", "single_turn"}
    assert any(not line["evaluation"]["is_correct"] for line in lines)  # the mutated outputs fail
    calls = [line for line in lines if line["interaction_type"] == "agentic"]
    assert calls and all(line["evaluation"]["tool_calls_count"] == len(line["messages"][1]["tool_calls"])
                         for line in calls)


def test_the_shipped_suites_declare_what_the_core_no_longer_names():
    """BFCL's row line and BFCL's and NesTools' label notes come from the suites' scorers, word for word as before."""
    from pytest_toolbench.report import terminal
    from pytest_toolbench.report.run_report import build
    from pytest_toolbench.suites.bfcl import scorer as bfcl
    from pytest_toolbench.suites.nestools import scorer as nestools

    def declared(module):
        return SimpleNamespace(aggregate=lambda results: [], LABEL_NOTES=module.LABEL_NOTES,
                               header_facts=getattr(module, "header_facts", lambda header: ()))

    records = [CaseRecord("bfcl", "a", "c", False, "wrong", labels={"config": "plain"}),
               CaseRecord("nestools", "b", "c", False, "wrong", labels={"tool_error": "tool_redundancy"})]
    summary = summarize(records, {"bfcl": SuiteInput(declared(bfcl), "BFCL", {}),
                                  "nestools": SuiteInput(declared(nestools), "NesTools", {})},
                        {"backend": "replay", "replay": "results/"})
    lines = terminal.render(build(summary))
    assert "bfcl row: no row: not comparable with the board (replayed outputs decoded by the per-file rule; name the " \
           "row with --toolbench-bfcl-model)" in lines
    assert "  [cases by config: BFCL format sensitivity: the system-prompt format the case was asked in]" in lines
    assert "  [cases by tool_error: NesTools: the kind of wrong tool use]" in lines
