"""History: several ``--toolbench-baseline`` files (oldest first); the comparison and the gates use the last one
given, the reports show each headline figure's trend across all of them (``report/history.py``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.report import results_file
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import history, markdown, terminal
from pytest_toolbench.report.html import summary_html
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.run_report import build
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

# echo_0 right, echo_1 wrong text, echo_2 undecodable: 1/3 against gold's 3/3.
WORSE_OUTPUTS = [
    {"id": "echo_0", "result": json.dumps({"name": "echo", "arguments": {"text": "hello"}})},
    {"id": "echo_1", "result": json.dumps({"name": "echo", "arguments": {"text": "hello world"}})},
    {"id": "echo_2", "result": "not json"},
]


def summary_of(overall: Metric, extra: Metric | None = None) -> RunSummary:
    metrics = [Metric("c1", 1.0, 1, 1, group="category"), overall] + ([extra] if extra else [])
    suite = SuiteSummary("demo", "Demo", {"kind": "local"}, 10, 6, metrics, {}, {}, {})
    return RunSummary(header={"backend": "gold"}, suites=[suite])


def baseline(overall: float, correct: int) -> results_file.ResultsFile:
    summary = summary_of(Metric("overall", overall, correct, 10, group="aggregate"))
    return results_file.read(json.loads(json.dumps(document(build(summary)))))


def test_the_history_follows_each_headline_figure_across_the_baselines_and_this_run():
    baselines = [(Path("ckpt/1000/run.json"), baseline(0.4, 4)), (Path("ckpt/1100/run.json"), baseline(0.5, 5))]
    current = summary_of(Metric("overall", 0.6, 6, 10, group="aggregate"),
                         Metric("new_figure", 0.7, group="aggregate"))
    made = history.build(current, baselines)
    assert [run.label for run in made.runs] == ["1000/run.json", "1100/run.json", "this run"]
    assert made.compared_with.path == "ckpt/1100/run.json"  # the last given
    overall, new = made.trends  # headline figures only: the aggregate rows, in this run's order
    assert [p.value for p in overall.points] == [0.4, 0.5, 0.6]
    assert overall.points[0].interval == pytest.approx((0.1682, 0.6873), abs=1e-4)  # Wilson 4/10
    assert [p.value for p in new.points] == [None, None, 0.7]  # a figure the baselines lack is a gap
    assert history.build(current, baselines[:1]) is None  # one baseline: the comparison says it all


def test_every_writer_shows_the_history():
    baselines = [(Path("a.json"), baseline(0.4, 4)), (Path("b.json"), baseline(0.5, 5))]
    current = summary_of(Metric("overall", 0.6, 6, 10, group="aggregate"))
    report = build(current, history=history.build(current, baselines))
    text = markdown.render(report)
    assert "| demo | a.json | b.json | this run |" in text
    assert "| overall | 40.00% | 50.00% | 60.00% |" in text
    assert "Δ and gates use the last, `b.json`" in text
    data = json.loads(json.dumps(document(report)))["history"]
    assert [run["label"] for run in data["runs"]] == ["a.json", "b.json", "this run"]
    assert data["compared_with"] == "b.json"
    assert [p["value"] for p in data["figures"][0]["points"]] == [0.4, 0.5, 0.6]
    page = summary_html(report)
    chart = re.search(r'<svg class="tb-chart tb-trend".*?</svg>', page).group(0)
    assert chart.count("<circle") == 3 and chart.count('class="tb-ci"') == 3 and "<polyline" in chart
    assert "b.json: 50.00%, 95% CI" in chart
    assert any(line.startswith("history: 2 baselines given") for line in terminal.render(report))


@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    (pytester.path / "reports").mkdir()  # bare report names go to it
    pytester.syspathinsert()
    (pytester.path / "worse.jsonl").write_text("".join(json.dumps(row) + "\n" for row in WORSE_OUTPUTS))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly",
                                         "-p", "no:cacheprovider", *args)


def test_several_baselines_compare_and_gate_on_the_last_and_chart_them_all(echo):
    assert run(echo, "--toolbench-json=old.json").ret == 0  # gold: 3/3
    assert run(echo, "--toolbench-replay=worse.jsonl", "--toolbench-json=worse.json").ret == 0  # 1/3
    result = run(echo, "--toolbench-baseline=reports/old.json", "--toolbench-baseline=reports/worse.json",
                 "--toolbench-max-drop=5", "--toolbench-json=now.json", "--toolbench-md=now.md", "--html=now.html")
    assert result.ret == 0  # gold against the last baseline (worse): nothing dropped
    result.stdout.fnmatch_lines(["baseline: *worse.json *", "history: 2 baselines given*",
                                 "*newly passing: echo_1, echo_2"])
    reports = echo.path / "reports"
    data = json.loads((reports / "now.json").read_text())
    assert data["report"]["baseline"]["path"].endswith("worse.json")
    overall = next(f for f in data["history"]["figures"] if f["name"] == "overall")
    assert [round(p["value"], 4) for p in overall["points"]] == [1.0, 0.3333, 1.0]
    assert "| overall | 100.00% | 33.33% | 100.00% |" in (reports / "now.md").read_text()
    assert 'class="tb-chart tb-trend"' in (reports / "now.html").read_text()
    # the same baselines the other way round: the last given (old, 3/3) is the one compared and gated on
    result = run(echo, "--toolbench-replay=worse.jsonl", "--toolbench-baseline=reports/worse.json",
                 "--toolbench-baseline=reports/old.json", "--toolbench-max-drop=5")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["toolbench gate missed: echo.overall fell 66.67 points*"])
