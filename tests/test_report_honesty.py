"""Figures never look more complete than they are: incomplete runs, shipped samples, selections, skipped items and
0/0 figures are said so on every figure (and a gate on such a figure is missed); a replay line that cannot be read is
a missing output counted in every denominator; a cut data line is reported at json's column; the HTML page fits a
1,280 px window with its chart labels whole and its baseline named."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.run.catalog import Catalog, Registry
from pytest_toolbench.run.cache_layout import CacheLayout
from pytest_toolbench.contract.data_files import iter_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.report.compare import baseline_label, evaluate_gates
from pytest_toolbench.report.settings import ReportSettings
from pytest_toolbench.report import terminal
from pytest_toolbench.report.run_report import build
from pytest_toolbench.plugin.report_options import parse_threshold
from pytest_toolbench.contract.suite import NOT_RUN, NOT_SCORED, CaseResult, Metric
from pytest_toolbench.run.summary import SuiteInput, summarize
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "suites"


def run_pytest(cwd: Path, *args: str, data: bool = False) -> tuple[subprocess.CompletedProcess, str]:
    """The plugin in a subprocess on the shipped suites (their samples unless ``data``), downloads turned off."""
    env = {key: value for key, value in os.environ.items() if key != "TOOLBENCH_DATA"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no",
               *args]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    return result, result.stdout + result.stderr


def settings(*gates: str) -> ReportSettings:
    return ReportSettings(thresholds=tuple(parse_threshold(gate) for gate in gates))


class Aggregates:
    """A benchmark object whose aggregation is given."""

    def __init__(self, aggregate):
        self.aggregate = aggregate


def result(category: str, passed: bool = True, error_type: str | None = None, case_id: str = "c") -> CaseResult:
    return CaseResult(suite="s", case_id=case_id, category=category, passed=passed,
                      error_type=None if passed else error_type or "wrong", counts={})


# -- BFCL: an interrupted run is INCOMPLETE ----------------------------------------------------------------------
def _bfcl_results(not_run_in: str | None) -> list[CaseResult]:
    categories = scorer("bfcl", "categories").ALL_CATEGORIES
    results = []
    for category in categories:
        results.append(result(category, case_id=f"{category}_0"))
        if category == not_run_in:
            results.append(result(category, passed=False, error_type=NOT_RUN, case_id=f"{category}_1"))
    return results


def test_bfcl_category_with_a_not_run_case_makes_the_overall_incomplete_and_its_gate_missed():
    aggregate = scorer("bfcl", "aggregation").aggregate
    complete = {m.name: m for m in aggregate(_bfcl_results(None))}
    assert complete["overall_official"].value == 1.0 and not complete["overall_official"].incomplete
    assert "complete: every scored category ran" in complete["overall_official"].formula

    stopped = {m.name: m for m in aggregate(_bfcl_results("multi_turn_base"))}
    overall = stopped["overall_official"]
    assert "INCOMPLETE" in overall.formula and "multi_turn_base" in overall.formula
    assert overall.incomplete and "multi_turn_base" in overall.incomplete
    assert "not_run" in stopped["multi_turn_base"].incomplete and stopped["multi_turn_base"].value == 0.5
    assert "multi_turn_base" in stopped["multi_turn"].incomplete
    # figures over categories that ran in full stay complete
    assert not stopped["simple_python"].incomplete and not stopped["non_live_ast"].incomplete
    assert "multi_turn" not in stopped["overall_over_categories_ran"].formula.split("(", 1)[1]

    summary = summarize([CaseResult(**{"suite": "bfcl", "case_id": r.case_id, "category": r.category, "passed": r.passed,
                          "error_type": r.error_type}) for r in _bfcl_results("multi_turn_base")],
                        {"bfcl": SuiteInput(Aggregates(aggregate), "BFCL", {"kind": "folder"})}, {})
    gates = evaluate_gates(summary, None, settings("bfcl.overall_official=0", "bfcl.simple_python=0",
                                                   "bfcl.multi_turn_base=0"))
    assert [gate.passed for gate in gates] == [False, True, False]
    assert "incomplete" in gates[0].message and "multi_turn_base" in gates[0].message


def test_bfcl_run_stopped_by_x_reports_incomplete_figures_and_misses_its_gate(tmp_path):
    """``-x`` after the first failing case: every later case is not_run, the Overall says INCOMPLETE."""
    catalog = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=None)
    suite = catalog.load(SUITES / "bfcl" / "suite.yaml")
    folder = tmp_path / "result"
    folder.mkdir()
    by_category: dict[str, list[str]] = {}
    first = suite.cases[0]
    for case in suite.cases:
        output = "[wrong_function(x=1)]" if case is first else suite.benchmark.gold_output(case)
        by_category.setdefault(case.category, []).append(json.dumps({"id": case.case_id, "result": output}))
    for category, lines in by_category.items():
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run.json"
    # (the shipped samples: a gate on them is refused before the run, so the gate is judged below on the figures)
    result, text = run_pytest(tmp_path, str(SUITES / "bfcl"), "-x", f"--toolbench-replay={folder}",
                              f"--toolbench-json={out}")
    document = json.loads(out.read_text())
    metrics = {m["name"]: m for m in document["suites"]["bfcl"]["metrics"]}
    assert sum(case["error_type"] == "not_run" for case in document["cases"]) == len(suite.cases) - 1
    assert "INCOMPLETE" in metrics["overall_official"]["formula"] and metrics["overall_official"]["incomplete"]
    assert "complete: every scored category ran" not in text
    assert result.returncode == 1  # -x: pytest's status is kept
    overall = Metric("overall_official", metrics["overall_official"]["value"], group="aggregate",
                     incomplete=metrics["overall_official"]["incomplete"])
    summary = summarize([CaseResult("bfcl", "1", "simple_python", True)],
                        {"bfcl": SuiteInput(Aggregates(lambda r: [overall]), "BFCL", {"kind": "folder"})}, {})
    [gate] = evaluate_gates(summary, None, settings("bfcl.overall_official=0"))
    assert not gate.passed and re.search(r"bfcl.overall_official = .* is incomplete", gate.message), gate.message


def test_not_run_cases_make_any_suites_figures_incomplete():
    """A suite that does not mark it itself: its figures are marked, except complete categories."""

    def aggregate(results):
        return [Metric("a", 1.0, 1, 1, group="category"), Metric("b", 0.0, 0, 1, group="category"),
                Metric("overall", 0.5, 1, 2, group="aggregate")]

    records = [CaseResult("s", "1", "a", True), CaseResult("s", "2", "b", False, NOT_RUN)]
    summary = summarize(records, {"s": SuiteInput(Aggregates(aggregate), "S", {})}, {})
    metrics = {m.name: m for m in summary.suites[0].metrics}
    assert not metrics["a"].incomplete
    assert metrics["b"].incomplete == "INCOMPLETE: 1 of 1 cases have no verdict (not_run, counted as failed)"
    assert metrics["overall"].incomplete.startswith("INCOMPLETE: 1 of 2 cases")
    assert any("INCOMPLETE: 1 of 2 cases" in line for line in terminal.render(build(summary)))


# -- shipped samples ---------------------------------------------------------------------------------------------
def test_samples_are_marked_everywhere_and_a_gate_on_them_is_missed(tmp_path):
    out, md = tmp_path / "run.json", tmp_path / "run.md"
    result, text = run_pytest(tmp_path, str(SUITES / "taskbench"), "--toolbench-no-download",
                              f"--toolbench-json={out}", f"--toolbench-md={md}")
    assert result.returncode == 0, text[-3000:]  # the main job stays green ...
    assert "toolbench: 1 suite(s) ran on their shipped samples, not the benchmark's data" in text
    assert "taskbench" in text.split("ran on their shipped samples")[1].splitlines()[0]  # ... and says which
    assert "SHIPPED SAMPLES ONLY" in text and "[SHIPPED SAMPLES]" in text
    assert "SAMPLE DATA ONLY: the real data" in text
    document = json.loads(out.read_text())
    assert document["suites"]["taskbench"]["samples"] is True
    markdown = md.read_text()
    assert "Ran on shipped samples, not the benchmark's data:** taskbench" in markdown
    assert "### taskbench: " in markdown and "(shipped samples)" in markdown
    # the gold run's link_f1 is below 100%: ToLeaP's arithmetic, said in the formula line
    link = next(m for m in document["suites"]["taskbench"]["metrics"] if m["name"] == "huggingface link_f1")
    assert link["value"] < 1 and "empty vs empty scores 0" in link["formula"]

    # a gate on them cannot pass: refused before anything runs (exit 4), with what to do instead
    result, text = run_pytest(tmp_path, str(SUITES / "taskbench"), "--toolbench-no-download",
                              "--toolbench-fail-under", "taskbench.huggingface name_f1=0")
    assert result.returncode == 4
    assert ("--toolbench-fail-under taskbench.huggingface name_f1=0: taskbench runs on its shipped samples, not the "
            "benchmark's data") in text and "no gate passes on them; give the data folder" in text
    assert "toolbench summary" not in text  # nothing ran


def test_real_data_suite_gate_still_passes():
    summary = summarize([CaseResult("s", "1", "a", True)],
                        {"s": SuiteInput(Aggregates(lambda r: [Metric("acc", 1.0, 1, 1, group="aggregate")]), "S",
                               {"kind": "folder"})}, {})
    assert [gate.passed for gate in evaluate_gates(summary, None, settings("s.acc=0.5"))] == [True]
    summary.suites[0].data_source = {"kind": "samples", "description": "samples"}
    assert [gate.passed for gate in evaluate_gates(summary, None, settings("s.acc=0.5"))] == [False]


def test_wildtoolbench_gold_ap_below_100_is_explained(tmp_path):
    out = tmp_path / "run.json"
    result, text = run_pytest(tmp_path, str(SUITES / "wildtoolbench"), "--toolbench-mode=native",
                              f"--toolbench-json={out}")
    metrics = {m["name"]: m for m in json.loads(out.read_text())["suites"]["wildtoolbench"]["metrics"]}
    assert metrics["Task accuracy"]["value"] == 1.0  # every case passes ...
    assert metrics["AP Mixed Multi-Tool"]["value"] < 1  # ... and AP over Mixed tasks is below 100%:
    assert metrics["AP Sequential Multi-Tool"]["value"] == 1.0
    assert "parallel calls share one" in metrics["AP"]["formula"]  # upstream's arithmetic, said where it shows


# -- T-Eval: selected files only; skipped items are N/A ----------------------------------------------------------
def test_teval_needs_and_reports_only_the_selected_files(tmp_path):
    data = tmp_path / "data" / "teval"
    (data / "data").mkdir(parents=True)
    chosen = ["instruct_v2.json", "review_str_v2.json", "retrieve_str_v2.json"]
    for name in chosen:
        shutil.copy(SUITES / "teval" / "samples" / "data" / name, data / "data" / name)
    out = tmp_path / "run.json"
    result, text = run_pytest(tmp_path, str(SUITES / "teval"), f"--toolbench-data={tmp_path / 'data'}",
                              "--toolbench-data-unverified", "--toolbench-no-download",
                              f"--toolbench-suite-option=teval.files=[{', '.join(chosen)}]",
                              f"--toolbench-json={out}")
    assert result.returncode == 0, text[-3000:]
    suite = json.loads(out.read_text())["suites"]["teval"]
    assert suite["samples"] is False and suite["data_source"]["kind"] == "folder"
    assert "UNVERIFIED: 3 of 3 files differ" in suite["data_source"]["description"]
    assert {case["case_id"].split("/")[0] for case in json.loads(out.read_text())["cases"]} == \
        {"instruct", "review_str", "retrieve_str"}


def test_teval_skipped_items_are_na_not_zero():
    aggregate = scorer("teval", "aggregation").aggregate
    skipped = [CaseResult("teval", f"plan_str/{n}", "plan_str", False, NOT_SCORED, {}) for n in range(2)]
    scored = [CaseResult("teval", "review_str/0", "review_str", True, None, {"review_quality": 1.0,
                                                                            "parse_rate": 1.0})]
    summary = summarize([CaseResult(**{"suite": "teval", "case_id": r.case_id, "category": r.category, "passed": r.passed,
                          "error_type": r.error_type, "counts": r.counts}) for r in skipped + scored],
                        {"teval": SuiteInput(Aggregates(aggregate), "T-Eval", {})}, {})
    category = {m.name: m for m in summary.suites[0].metrics if m.group == "category"}
    assert category["plan_str"].value is None and "2 of 2 items skipped" in category["plan_str"].formula
    assert category["review_str"].value == 1.0
    row = next(line for line in terminal.render(build(summary)) if line.strip().startswith("plan_str "))
    assert "N/A" in row and "0/2" not in row and "0.00%" not in row


# -- selections and 0/0 ------------------------------------------------------------------------------------------
@pytest.fixture
def echo(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_SUITE, tmp_path / "echo")
    return tmp_path / "echo"


def echo_run(folder: Path, *args: str) -> tuple[dict, str]:
    out = folder / "run.json"
    result, text = run_pytest(folder, "suites", "--toolbench-data=data", f"--toolbench-json={out}", *args)
    assert result.returncode == 0, text[-3000:]
    return json.loads(out.read_text()), text


def test_figures_over_part_of_a_suite_say_so(echo):
    document, text = echo_run(echo, "-k", "echo_0", f"--toolbench-md={echo / 'run.md'}")
    suite = document["suites"]["echo"]
    metrics = {m["name"]: m for m in suite["metrics"]}
    assert suite["total"] == 1 and suite["available"] == 3
    assert metrics["overall"]["scope"] == "over 1 of 3 cases (selection)"
    assert metrics["short"]["scope"] == "over 1 of 2 cases (selection)"
    assert "selection: 1 of 3 cases" in text
    assert re.search(r"overall .*over 1 of 3 cases \(selection\)", text)
    assert "overall — over 1 of 3 cases (selection)" in (echo / "run.md").read_text()

    document, text = echo_run(echo, "-k", "echo_0 or echo_2")  # every 'short' case: that figure is whole
    metrics = {m["name"]: m for m in document["suites"]["echo"]["metrics"]}
    assert metrics["short"]["scope"] == "" and metrics["overall"]["scope"] == "over 2 of 3 cases (selection)"

    document, text = echo_run(echo)
    assert all(not m["scope"] for m in document["suites"]["echo"]["metrics"]) and "(selection)" not in text


def test_a_zero_over_zero_figure_is_na_everywhere():
    def aggregate(results):
        return [Metric("Selection P", 0.0, 0, 0, group="P/R/F1"), Metric("Selection R", None, 0, 0, group="P/R/F1")]

    summary = summarize([CaseResult("s", "1", "a", False)],
                        {"s": SuiteInput(Aggregates(aggregate), "S", {})}, {})
    assert [m.value for m in summary.suites[0].metrics] == [None, None]
    rows = [line for line in terminal.render(build(summary)) if "Selection" in line]
    assert all("N/A" in row and "0.00%" not in row for row in rows), rows
    assert [gate.passed for gate in evaluate_gates(summary, None, settings("s.Selection P=0"))] == [False]


# -- replay and data errors --------------------------------------------------------------------------------------
def nestools_replay(folder: Path, cut: str | None = None, api_failure: str | None = None) -> list[str]:
    catalog = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=None)
    suite = catalog.load(SUITES / "nestools" / "suite.yaml")
    lines = []
    for case in suite.cases:
        row = {"test_id": int(case.case_id), "prompt": "p", "response": suite.benchmark.gold_output(case)}
        if case.case_id == api_failure:
            row["response"] = -1
        line = json.dumps(row)
        lines.append(line[:40] if case.case_id == cut else line)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "raw_response.jsonl").write_text("\n".join(lines) + "\n")
    return [case.case_id for case in suite.cases]


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_replay_line_cut_short_is_a_missing_output_in_every_denominator(tmp_path, workers):
    ids = nestools_replay(tmp_path / "replay")
    cut = ids[2]  # line 3
    nestools_replay(tmp_path / "replay", cut=cut)
    out = tmp_path / "run.json"
    result, text = run_pytest(tmp_path, str(SUITES / "nestools"), f"--toolbench-replay={tmp_path / 'replay'}",
                              f"--toolbench-json={out}", *workers)
    document = json.loads(out.read_text())
    cases = {case["case_id"]: case for case in document["cases"]}
    assert cases[cut]["error_type"] == "missing_output" and not cases[cut]["passed"]
    assert [c for c in cases if not cases[c]["passed"]] == [cut]
    metrics = {m["name"]: m for m in document["suites"]["nestools"]["metrics"]}
    assert metrics["Tree"]["total"] == len(ids) and metrics["Format"]["total"] == len(ids)
    assert metrics["Tree"]["correct"] == len(ids) - 1
    category = cases[cut]["category"]
    coverage = document["header"]["replay_coverage"]["nestools"][category]
    assert coverage["without_output"] == 1
    assert f"selected cases without a saved output (scored missing_output): {category} 1/" in text
    assert re.search(r"raw_response.jsonl:3: error: invalid JSON", text)


def test_a_nestools_api_failure_stays_out_of_the_denominators_as_upstream(tmp_path):
    ids = nestools_replay(tmp_path / "replay")
    nestools_replay(tmp_path / "replay", api_failure=ids[0])
    out = tmp_path / "run.json"
    run_pytest(tmp_path, str(SUITES / "nestools"), f"--toolbench-replay={tmp_path / 'replay'}",
               f"--toolbench-json={out}")
    document = json.loads(out.read_text())
    metrics = {m["name"]: m for m in document["suites"]["nestools"]["metrics"]}
    assert next(c for c in document["cases"] if c["case_id"] == ids[0])["error_type"] == "missing_output"
    assert metrics["Tree"]["total"] == len(ids) - 1  # eval.py drops the -1 lines from every denominator


def test_a_data_line_cut_short_is_reported_at_jsons_column(tmp_path):
    path = tmp_path / "cases.jsonl"
    line = json.dumps({"id": "abcdefghijklmnop", "number": 123, "question": "what is the weather in Paris"})
    assert line[:40].endswith("123")  # cut right after a value: json stops at the missing ',' (column 41)
    path.write_text(line + "\n" + line[:40] + "\n" + line + "\n")
    with pytest.raises(DataError) as error:
        list(iter_jsonl(path))
    assert f"{path}:2:" in str(error.value) and "column 41)" in str(error.value), str(error.value)
    # cut inside a string: json's own column for that line too
    path.write_text(line[:30] + "\n")
    with pytest.raises(DataError) as error:
        list(iter_jsonl(path))
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(line[:30])
    assert f"{path}:1:" in str(error.value) and f"column {expected.value.colno})" in str(error.value)


# -- the HTML page ---------------------------------------------------------------------------------------------
def test_a_gold_baseline_is_named_by_what_answered():
    assert baseline_label({"backend": "gold"}) == "no model: the gold reference answers, backend gold"
    assert baseline_label({"backend": "vllm", "model": "Qwen/Qwen2.5-7B"}) == "model Qwen/Qwen2.5-7B, backend vllm"
    assert "gold (gold)" not in baseline_label({"backend": "gold", "model": None})


PAGE_PROBE = """<script>
(function () {
  const out = {inner: window.innerWidth, scroll: document.documentElement.scrollWidth, wide: [], cut: []};
  for (const el of document.querySelectorAll('#toolbench-summary *')) {
    const r = el.getBoundingClientRect();
    if (r.right > window.innerWidth + 0.5) out.wide.push(el.tagName + '.' + el.className.baseVal + el.className);
  }
  for (const svg of document.querySelectorAll('svg.tb-chart')) {
    const width = svg.viewBox.baseVal.width, box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.x < 0 || b.x + b.width > width) out.cut.push(t.textContent);
    }
    if (box.right > window.innerWidth) out.cut.push('svg right edge ' + box.right);
  }
  out.values = [...document.querySelectorAll('svg.tb-chart text.tb-val')].map(t => t.textContent);
  out.legend = [...document.querySelectorAll('svg.tb-chart text.tb-leg')].map(t => t.textContent);
  out.baseline = (document.querySelector('#toolbench-summary p code') || {}).parentNode.innerText;
  document.body.setAttribute('data-page-probe', JSON.stringify(out));
})();
</script>"""


def test_the_page_fits_1280_px_with_whole_labels_in_headless_chromium(echo):
    from test_report_html import chromium

    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (Debian package: chromium)")
    pytest.importorskip("pytest_html")
    long_category = "a_category_with_a_name_long_enough_to_fill_the_label_column"
    scorer_file = echo / "suites" / "echo" / "scorer" / "loading.py"
    scorer_file.write_text(scorer_file.read_text().replace(
        'row.get("kind", "short")', f'("{long_category}" if row.get("kind") == "long" else "short")'))
    definition = echo / "suites" / "echo" / "suite.yaml"
    definition.write_text(definition.read_text().replace("  - name: long", f"  - name: {long_category}"))
    # unbreakable tokens longer than the window: the data folder and the replay file's names
    data = echo / ("deep_" + "x" * 200) / ("more_" + "z" * 200)
    shutil.copytree(echo / "data", data)
    replay = echo / ("worse_" + "y" * 150 + ".jsonl")
    replay.write_text("".join(json.dumps(row) + "\n" for row in (
        {"id": "echo_0", "result": json.dumps({"name": "echo", "arguments": {"text": "hello"}})},
        {"id": "echo_1", "result": "not json"}, {"id": "echo_2", "result": "not json"})))
    run_pytest(echo, "suites", f"--toolbench-data={data}", f"--toolbench-json={echo / 'gold.json'}")
    page = echo / "page.html"
    run_pytest(echo, "suites", f"--toolbench-data={data}", f"--toolbench-replay={replay}", f"--html={page}",
               "--self-contained-html", f"--toolbench-baseline={echo / 'gold.json'}")
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PAGE_PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-dev-shm-usage", "--window-size=1280,1800", "--virtual-time-budget=5000",
                          "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-page-probe="([^"]*)"', dom)
    assert found, f"the probe did not run; chromium printed {dom[:500]!r}"
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["inner"] == 1280
    assert seen["scroll"] <= seen["inner"], seen["wide"]  # no horizontal scrolling
    assert seen["wide"] == [] and seen["cut"] == []
    assert sorted(seen["values"]) == ["0.0% (-100.0)", "50.0% (-50.0)"]  # whole, with their deltas
    assert seen["legend"] == ["this run", "baseline: gold.json"]
    assert "gold.json" in seen["baseline"] and "gold (gold)" not in seen["baseline"]
    assert "no model: the gold reference answers, backend gold" in seen["baseline"]


def test_every_report_marks_samples_incomplete_and_partial_figures():
    from pytest_toolbench.report import markdown
    from pytest_toolbench.report.html import summary_html
    from pytest_toolbench.run.summary import RunSummary, SuiteSummary

    metric = Metric("m", 1.0, 1, 1, group="aggregate", incomplete="INCOMPLETE: x did not run",
                    scope="over 1 of 2 cases (selection)")
    summary = RunSummary(header={"backend": "gold"}, suites=[SuiteSummary(
        "taskbench", "T", {"kind": "samples", "description": "d"}, 1, 1, [metric], {}, {}, {}, available=2)])
    page = summary_html(build(summary))
    comment = markdown.render(build(summary))
    lines = "\n".join(terminal.render(build(summary)))
    for text in (page, comment, lines):
        assert "SAMPLE DATA ONLY" in text and "INCOMPLETE: x did not run" in text
        assert "over 1 of 2 cases (selection)" in text
    assert "Ran on shipped samples, not the benchmark's data: taskbench" in page
    assert "Ran on shipped samples, not the benchmark's data:** taskbench" in comment
    assert "selection: 1 of 2 cases" in lines and "Selection: 1 of 2 cases" in page
    assert terminal.samples_line(build(summary)).endswith(": taskbench")
    assert summary.to_json()["suites"]["taskbench"]["samples"] is True
