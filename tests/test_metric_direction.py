"""Lower-is-better metrics (``Metric.better == "lower"``, e.g. an attack success rate): the gates read
``--toolbench-fail-under`` as a maximum and ``--toolbench-max-drop`` as a maximum rise, and every report (terminal,
Markdown, HTML, JSON) says which way is better and colours/labels a change by whether it is an improvement."""

from __future__ import annotations

import json

import pytest

from pytest_toolbench.report import results_file
from pytest_toolbench.report import html, markdown, terminal
from pytest_toolbench.report.compare import compare, evaluate_gates
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.settings import ReportSettings
from pytest_toolbench.plugin.report_options import parse_threshold
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.run.summary import RunSummary, SuiteSummary


def summary_of(*metrics: Metric) -> RunSummary:
    suite = SuiteSummary(name="attack", title="an attack benchmark", data_source={"description": "test"}, total=10,
                         passed=7, metrics=list(metrics), error_types={}, error_types_by_category={}, labels={})
    return RunSummary(header={"backend": "gold"}, suites=[suite])


def asr(value: float, correct: int = 0, total: int = 0) -> Metric:
    return Metric("ASR", value, correct or None, total or None, group="aggregate", better="lower")


def accuracy(value: float) -> Metric:
    return Metric("accuracy", value, group="aggregate")


def baseline_json(*metrics: Metric) -> dict:
    return json.loads(json.dumps(document(build(summary_of(*metrics)))))


def baseline_document(*metrics: Metric) -> results_file.ResultsFile:
    return results_file.read(baseline_json(*metrics))


def gates(summary: RunSummary, *given: str, baseline: results_file.ResultsFile | None = None, max_drop: float | None = None):
    comparison = compare(summary, [], baseline, "base.json") if baseline is not None else None
    settings = ReportSettings(thresholds=tuple(parse_threshold(g) for g in given), max_drop=max_drop)
    return evaluate_gates(summary, comparison, settings), comparison


def test_direction_defaults_to_higher_and_rejects_unknown_values():
    assert Metric("x", 0.5).better == "higher"
    assert Metric("x", 0.5, better="lower").better == "lower"
    with pytest.raises(ValueError, match="better must be one of"):
        Metric("x", 0.5, better="smaller")


def test_fail_under_is_a_maximum_for_lower_is_better():
    [passed], _ = gates(summary_of(asr(0.20, 2, 10)), "attack.ASR=25")
    assert passed.passed and "at most 25.00%" in passed.message and "lower is better" in passed.message
    [missed], _ = gates(summary_of(asr(0.30, 3, 10)), "attack.ASR=25")
    assert not missed.passed
    assert missed.message == "attack.ASR = 30.00% (3/10), above the allowed maximum 25.00% (lower is better)"
    [edge], _ = gates(summary_of(asr(0.25, 1, 4)), "attack.ASR=0.25")  # equal to the bound: at most holds
    assert edge.passed


def test_fail_under_stays_a_minimum_for_higher_is_better():
    [low], _ = gates(summary_of(accuracy(0.20)), "attack.accuracy=25")
    [high], _ = gates(summary_of(accuracy(0.30)), "attack.accuracy=25")
    assert not low.passed and "below the required 25.00%" in low.message
    assert high.passed and "at least 25.00%" in high.message


def test_an_incomplete_lower_is_better_figure_misses_its_gate():
    [gate], _ = gates(summary_of(Metric("ASR", None, better="lower", group="aggregate")), "attack.ASR=50")
    assert not gate.passed and "no value" in gate.message


def test_max_drop_is_a_maximum_rise_for_lower_is_better():
    baseline = baseline_document(asr(0.10), accuracy(0.80))
    # ASR rose 8 points (worse), accuracy rose 8 points (better): only the ASR misses a 5-point gate.
    results, _ = gates(summary_of(asr(0.18), accuracy(0.88)), baseline=baseline, max_drop=5)
    missed = [r for r in results if not r.passed]
    assert [r.message for r in missed] == [
        "attack.ASR rose 8.00 points (10.00% → 18.00%) (lower is better), more than the allowed 5"]
    # ASR fell 8 points (better), accuracy fell 8 points (worse): only the accuracy misses.
    results, _ = gates(summary_of(asr(0.02), accuracy(0.72)), baseline=baseline, max_drop=5)
    missed = [r.message for r in results if not r.passed]
    assert missed == ["attack.accuracy fell 8.00 points (80.00% → 72.00%), more than the allowed 5"]


def test_max_drop_passes_when_nothing_got_worse():
    baseline = baseline_document(asr(0.10), accuracy(0.80))
    results, _ = gates(summary_of(asr(0.01), accuracy(0.99)), baseline=baseline, max_drop=1)
    assert [r.passed for r in results] == [True]


def test_terminal_and_markdown_say_lower_is_better_and_label_the_change():
    baseline = baseline_document(asr(0.10), accuracy(0.80))
    current = summary_of(asr(0.18), accuracy(0.88))
    _, comparison = gates(current, baseline=baseline)
    run = RunOutcome(comparison=comparison)
    lines = terminal.render(build(current, outcome=run))
    asr_row = next(line for line in lines if line.strip().startswith("ASR"))
    accuracy_row = next(line for line in lines if line.strip().startswith("accuracy"))
    assert "+8.00 (worse)" in asr_row and "lower is better" in asr_row
    assert "+8.00" in accuracy_row and "worse" not in accuracy_row and "better" not in accuracy_row
    text = markdown.render(build(current, outcome=run))
    assert "| ASR (lower is better) | 18.00% |" in text and "+8.00 (worse)" in text
    assert "| accuracy | 88.00% |" in text
    improved = summary_of(asr(0.04), accuracy(0.88))
    _, comparison = gates(improved, baseline=baseline)
    assert "-6.00 (better)" in markdown.render(build(improved, outcome=RunOutcome(comparison=comparison)))


def test_html_colours_an_asr_rise_red_and_a_fall_green():
    baseline = baseline_document(asr(0.10), accuracy(0.80))
    for value, css in ((0.18, "tb-down"), (0.04, "tb-up")):
        current = summary_of(asr(value), accuracy(0.88))
        _, comparison = gates(current, baseline=baseline)
        page = html.summary_html(build(current, outcome=RunOutcome(comparison=comparison)))
        asr_row = next(row for row in page.split("<tr") if "<td>ASR" in row)
        accuracy_row = next(row for row in page.split("<tr") if "<td>accuracy" in row)
        assert f'class="tb-n {css}"' in asr_row and "lower is better" in asr_row
        assert 'class="tb-n tb-up"' in accuracy_row  # 80 -> 88: an improvement either way


def test_json_records_the_direction_of_metrics_and_deltas():
    baseline = baseline_document(asr(0.10), accuracy(0.80))
    current = summary_of(asr(0.18), accuracy(0.88))
    _, comparison = gates(current, baseline=baseline)
    doc = document(build(current, outcome=RunOutcome(comparison=comparison)))
    metrics = {m["name"]: m for m in doc["suites"]["attack"]["metrics"]}
    assert metrics["ASR"]["better"] == "lower" and metrics["accuracy"]["better"] == "higher"
    deltas = {d["name"]: d for d in doc["report"]["baseline"]["suites"]["attack"]["metrics"]}
    assert deltas["ASR"]["better"] == "lower" and deltas["ASR"]["delta"] == pytest.approx(0.08)


def test_a_baseline_file_without_the_field_reads_as_higher_is_better():
    baseline = baseline_json(accuracy(0.80))
    for metric in baseline["suites"]["attack"]["metrics"]:
        del metric["better"]
    results, _ = gates(summary_of(accuracy(0.70)), baseline=results_file.read(baseline), max_drop=5)
    assert [r.passed for r in results] == [False]
