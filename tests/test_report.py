"""Reports: intervals, gate parsing, terminal/JSON/Markdown summaries, baselines, gates and the exit status."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import EXAMPLE_SUITE
from pytest_toolbench.plugin.report_options import parse_threshold
from pytest_toolbench.report.results_file import metric_from_json
from pytest_toolbench.report.stats import count_interval
from pytest_toolbench.stats.intervals import wilson_interval
from pytest_toolbench.contract.suite import Metric

# echo_0 right, echo_1 wrong text, echo_2 undecodable: 1/3 against gold's 3/3.
WORSE_OUTPUTS = [
    {"id": "echo_0", "result": json.dumps({"name": "echo", "arguments": {"text": "hello"}})},
    {"id": "echo_1", "result": json.dumps({"name": "echo", "arguments": {"text": "hello world"}})},
    {"id": "echo_2", "result": "not json"},
]


@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    (pytester.path / "reports").mkdir()  # a project that keeps its reports there: bare report names go to it
    pytester.syspathinsert()
    (pytester.path / "worse.jsonl").write_text("".join(json.dumps(row) + "\n" for row in WORSE_OUTPUTS))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly",
                                         "-p", "no:cacheprovider", *args)


def worse(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return run(pytester, "--toolbench-replay", "worse.jsonl", *args)


# -- figures ---------------------------------------------------------------------------------------------------
def test_wilson_interval_matches_published_values():
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == 1
    low, high = wilson_interval(81, 263)  # Newcombe (1998), method 3: 0.2553 to 0.3662
    assert (low, high) == (pytest.approx(0.2553, abs=1e-4), pytest.approx(0.3662, abs=1e-4))
    assert wilson_interval(0, 0) is None


def test_intervals_only_for_rates_of_whole_counts():
    assert count_interval(Metric("acc", 0.5, 5, 10)) == wilson_interval(5, 10)
    # a results file's figure (a baseline) reads back as a Metric with the same interval
    assert count_interval(metric_from_json({"name": "acc", "value": 0.5, "correct": 5, "total": 10})) == \
        wilson_interval(5, 10)
    assert count_interval(Metric("f1", 0.8)) is None  # no counts
    assert count_interval(Metric("mean", 0.55, 11, 20, group="aggregate")) == wilson_interval(11, 20)
    assert count_interval(Metric("avg", 0.6, 5, 10)) is None  # a value that is not correct/total
    assert count_interval(Metric("partial", 0.25, 2.5, 10)) is None  # fractional credit
    assert count_interval(Metric("reward", 0.9, 9, 10, unit="")) is None  # a plain number


@pytest.mark.parametrize("given, value", [("bfcl.overall=85", 0.85), ("bfcl.overall=85%", 0.85),
                                          ("bfcl.overall=0.85", 0.85), ("bfcl.overall=1", 1.0),
                                          ("bfcl.overall=100", 1.0), ("acebench.combined/overall=90.5", 0.905)])
def test_fail_under_values_are_percentages_or_fractions(given, value):
    threshold = parse_threshold(given)
    assert threshold.value == pytest.approx(value)
    assert threshold.suite == given.split(".")[0]


@pytest.mark.parametrize("given", ["overall=85", "bfcl.overall", "bfcl.=3", "bfcl.overall=high"])
def test_malformed_fail_under_is_a_usage_error(given):
    with pytest.raises(pytest.UsageError, match="--toolbench-fail-under"):
        parse_threshold(given)


# -- exit status -----------------------------------------------------------------------------------------------
def test_failing_cases_are_the_measurement_and_exit_zero(echo):
    result = worse(echo)
    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*2 failing benchmark cases are the measurement*exit status 0*"])


def test_strict_restores_pytests_exit_status(echo):
    result = worse(echo, "--toolbench-strict")
    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_failing_ordinary_test_still_fails_the_run(echo):
    (echo.path / "suites" / "test_plain.py").write_text("def test_plain():\n    assert 1 == 2\n")
    result = worse(echo)
    result.assert_outcomes(passed=1, failed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_collection_error_still_fails_the_run(echo):
    (echo.path / "suites" / "test_broken.py").write_text("import no_such_module_anywhere\n")
    result = worse(echo, "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, failed=2, errors=1)
    assert result.ret != 0


def test_runs_without_benchmark_cases_keep_pytests_status(pytester: pytest.Pytester):
    pytester.makepyfile("def test_plain():\n    assert False\n")
    assert pytester.runpytest_subprocess("-p", "no:cacheprovider").ret == pytest.ExitCode.TESTS_FAILED


# -- baselines and gates ---------------------------------------------------------------------------------------
def test_worse_run_than_the_baseline_misses_the_drop_gate_and_names_the_metric(echo):
    run(echo, "--toolbench-json", "gold.json").assert_outcomes(passed=3)
    result = worse(echo, "--toolbench-baseline", "reports/gold.json", "--toolbench-max-drop", "5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "toolbench gate missed: echo.overall fell 66.67 points (100.00% → 33.33%), more than the allowed 5" \
        in out
    assert "toolbench gate missed: echo.long fell 100.00 points" in out
    result.stdout.fnmatch_lines(["*overall*33.33%*1/3*[6.1–79.2]*-66.67*",
                                 "*vs baseline (3 cases in both): 2 newly failing, 0 newly passing",
                                 "*newly failing: echo_1, echo_2"])


def test_baseline_alone_reports_deltas_and_keeps_exit_zero(echo):
    worse(echo, "--toolbench-json", "worse.json")
    result = run(echo, "--toolbench-baseline", "reports/worse.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*overall*100.00%*3/3*+66.67*", "*2 newly passing", "*newly passing: echo_1, echo_2"])


def test_fail_under_gates(echo):
    missed = worse(echo, "--toolbench-fail-under", "echo.overall=50%", "--toolbench-fail-under", "echo.short=0.5")
    assert missed.ret == pytest.ExitCode.TESTS_FAILED
    missed.stdout.fnmatch_lines([
        "toolbench gate missed: echo.overall = 33.33% (1/3), below the required 50.00% "
        "(--toolbench-fail-under echo.overall=50%)",
        "toolbench gate passed: echo.short = 50.00% (1/2), at least 50.00%"])
    unknown = run(echo, "--toolbench-fail-under", "echo.nonsense=10")
    assert unknown.ret == pytest.ExitCode.TESTS_FAILED
    unknown.stdout.fnmatch_lines(["*echo.nonsense: no such metric in echo (e.g. overall)*"])
    # a gate on a suite outside the selection cannot pass: refused before anything runs (exit 4), not missed at the end
    elsewhere = run(echo, "--toolbench-fail-under", "bfcl.overall=10")
    assert elsewhere.ret == pytest.ExitCode.USAGE_ERROR
    assert "--toolbench-fail-under bfcl.overall=10: suite 'bfcl' is not in this run's selection (selected: echo)" \
        in elsewhere.stdout.str() + elsewhere.stderr.str()
    assert "passed" not in elsewhere.stdout.str().splitlines()[-1]
    assert run(echo, "--toolbench-fail-under", "echo.overall=100").ret == 0


def test_gate_option_errors_are_usage_errors(echo):
    result = run(echo, "--toolbench-max-drop", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolbench-max-drop needs --toolbench-baseline PATH*"])
    (echo.path / "bad.json").write_text("[1, 2]")
    result = run(echo, "--toolbench-baseline", "bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolbench-baseline*bad.json: not a --toolbench-json results file*"])


# -- JSON and Markdown -----------------------------------------------------------------------------------------
def test_json_keeps_its_fields_and_adds_intervals_comparison_and_gates(echo):
    run(echo, "--toolbench-json", "gold.json")
    worse(echo, "--toolbench-json", "worse.json", "--toolbench-baseline", "reports/gold.json",
          "--toolbench-fail-under", "echo.overall=0.9")
    document = json.loads((echo.path / "reports" / "worse.json").read_text())
    assert {"format_version", "header", "suites", "cases"} <= set(document)
    suite = document["suites"]["echo"]
    assert suite["error_types_by_category"] == {"long": {"wrong_text": 1}, "short": {"format_error": 1}}
    overall = next(m for m in suite["metrics"] if m["name"] == "overall")
    assert overall["correct"] == 1 and overall["total"] == 3
    assert overall["interval95"] == [pytest.approx(0.0615, abs=1e-4), pytest.approx(0.7923, abs=1e-4)]
    report = document["report"]
    assert report["baseline"]["suites"]["echo"]["newly_failing"] == ["echo_1", "echo_2"]
    assert report["gates"] == [{"gate": "--toolbench-fail-under echo.overall=0.9", "passed": False,
                                "message": "echo.overall = 33.33% (1/3), below the required 90.00%"}]
    assert report["exit_status"] == 1 and report["failures"] == {"cases": 2, "other": 0}


def _cells(row: str) -> list[str]:
    assert row.startswith("| ") and row.endswith(" |"), row
    return re.split(r"(?<!\\)\|", row[1:-1])


def markdown_tables(text: str) -> list[list[str]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables + ([current] if current else [])


def test_markdown_summary_is_github_tables_without_html(echo):
    run(echo, "--toolbench-json", "gold.json")
    worse(echo, "--toolbench-md", "pr.md", "--toolbench-baseline", "reports/gold.json",
          "--toolbench-max-drop", "1")
    text = (echo.path / "reports" / "pr.md").read_text()
    assert not re.search(r"(?<!\\)</?[a-zA-Z][^>]*>", text), "GitHub comments must not need HTML"
    assert not re.search(r"&[a-z]+;|&#\d+;", text), "no HTML entity: it shows as such in a plain-text view"
    # the verdict first, as on the HTML page: cases passed, then the gates, then the run's settings and statistics
    lines = text.splitlines()
    assert lines[2] == "**1 of 3 cases passed** (2 failed) in 1 suite" and lines[4] == "**Gates: 3 missed**", lines[:6]
    assert lines.index("**Gates: 3 missed**") < next(i for i, l in enumerate(lines) if l.startswith("| Run |")) \
        < next(i for i, l in enumerate(lines) if l.startswith("Paired tests:"))
    tables = markdown_tables(text)
    assert len(tables) == 3  # run header, echo metrics, failures by category (the verdict is a list)
    for table in tables:
        width = len(_cells(table[0]))
        assert re.fullmatch(r"\|( -{3,}:? \|)+", table[1]) and len(_cells(table[1])) == width
        assert all(len(_cells(row)) == width for row in table[2:])
        before = text.splitlines()[text.splitlines().index(table[0]) - 1]
        assert before == "", "a table needs a blank line before it to render"
    metrics = [[c.strip() for c in _cells(row)] for row in tables[1]]
    assert metrics[0] == ["Group", "Metric", "Value", "Correct/Total", "95% CI", "Baseline", "Δ (points)",
                          "p adj.", "CI adj. of Δ", "MDE 80%", "Power (5-pt drop)"]
    # the paired test: 2 of 3 cases flipped to fail, exact McNemar p = 2 * (1/2)^2 = 0.5; Newcombe's interval; three
    # cases cannot reach the level, so the figure is outside the gated family: no adjusted p, its unadjusted p and
    # interval marked as such, no MDE, no power to catch anything
    assert ["aggregate", "overall", "33.33%", "1/3", "6.1–79.2", "100.00%", "-66.67", "unadj. 0.500",
            "unadj. [-93.85, +5.86]", "-", "0% at 0.0% flips"] in metrics
    assert "**Gates: 3 missed**" in text
    assert "- Newly failing: `echo_1`, `echo_2`" in text
    assert "| Model | replayed outputs:" in text


def test_bare_report_names_go_to_the_reports_folder(echo):
    result = run(echo, "--toolbench-md", "summary.md", "--html", "page.html")
    assert result.ret == 0
    assert (echo.path / "reports" / "summary.md").is_file()
    assert (echo.path / "reports" / "page.html").is_file()
    shutil.rmtree(echo.path / "reports")  # installed use: a project without a reports/ folder
    result = run(echo, "--toolbench-md=summary.md", "--toolbench-json=run.json")
    assert result.ret == 0
    assert (echo.path / "summary.md").is_file() and (echo.path / "run.json").is_file()
    assert not (echo.path / "reports").exists()
    run(echo, "--html", "out/page.html")
    assert (echo.path / "out" / "page.html").is_file()


EXTENDING_CONFTEST = '''
from pytest_toolbench.report.compare import GateResult


def pytest_toolbench_gates(config, summary, comparison):
    echo = next(suite for suite in summary.suites if suite.name == "echo")
    return [GateResult("echo.no_format_errors", "format_error" not in echo.error_types,
                       f"echo format errors: {echo.error_types.get('format_error', 0)}")]


def pytest_toolbench_results_document(config, document):
    document["dashboard"] = {"run": "nightly", "cases": len(document["cases"])}
'''


def test_conftest_gates_and_results_document_hooks(echo):
    conftest = echo.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n" + EXTENDING_CONFTEST)
    gold = run(echo, "--toolbench-json=gold.json")
    assert gold.ret == 0 and "toolbench gate passed: echo format errors: 0" in gold.stdout.str()
    document = json.loads((echo.path / "reports" / "gold.json").read_text())
    assert document["dashboard"] == {"run": "nightly", "cases": 3}
    assert document["report"]["gates"][0]["gate"] == "echo.no_format_errors"
    missed = worse(echo)
    assert missed.ret == pytest.ExitCode.TESTS_FAILED
    assert "toolbench gate missed: echo format errors: 1 (echo.no_format_errors)" in missed.stdout.str()


def test_markdown_cells_escape_tags_without_html_entities():
    from pytest_toolbench.report.markdown import cell, code
    # "max_tokens 4096 -> 256 by the engine" (a run-header fact) reads as written; a tag-like "<" is escaped the
    # Markdown way; a pipe never splits a cell; a code span keeps its text literal
    assert cell("max_tokens 4096 -> 256 by the engine") == "max_tokens 4096 -> 256 by the engine"
    assert cell("<b>bold</b> p < 0.05 | x") == "\\<b>bold\\</b> p < 0.05 \\| x"
    assert cell("<!-- c --> <?x") == "\\<!-- c --> \\<?x"
    assert code("a<b>`c`") == "`a<b>c`"
