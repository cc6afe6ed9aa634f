"""The capability profile (report/profile.py, suites/profile.yaml): each area from the named figures of the suites that
ran, its MOVER interval, the baseline compared over the same figures, TL-Training tallies, and what the reports show."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import markdown, terminal
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.profile import Contribution, ProfileMapping, area_interval, build_profile, \
    load_mapping, parse_mapping
from pytest_toolbench.report.profile_views import html_section, radar_svg
from pytest_toolbench.report.stats import wilson_interval
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

MAPPING = ProfileMapping(
    areas={"selection": "Tool selection", "params": "Parameters", "robust": "Robustness"},
    suites={"alpha": {"selection": ("pick",), "params": ("fill", "absent")},
            "beta": {"selection": ("choose",), "robust": ("ASR",)}})


def suite(name: str, *metrics: Metric, labels: dict | None = None) -> SuiteSummary:
    return SuiteSummary(name=name, title=name, data_source={"description": "test"}, total=100, passed=50,
                        metrics=list(metrics), error_types={}, error_types_by_category={}, labels=labels or {})


def run_summary(*suites: SuiteSummary) -> RunSummary:
    return RunSummary(header={"backend": "test"}, suites=list(suites))


def test_each_area_is_the_mean_of_its_named_figures():
    summary = run_summary(
        suite("alpha", Metric("pick", 0.8, 80, 100, group="category"), Metric("fill", 0.6, 60, 100),
              Metric("pick", 0.5, 5, 10, group="other")),  # the same name elsewhere: the first row is taken
        suite("beta", Metric("choose", 0.4, 20, 50, group="aggregate"), Metric("ASR", 0.3, 30, 100, better="lower"),
              labels={"tl_category": {"wrong_tool": 3, "unparseable": 5}}))
    profile = build_profile(summary, mapping=MAPPING)
    selection, params, robust = profile.areas
    assert selection.value == pytest.approx((0.8 + 0.4) / 2)
    assert [(c.suite, c.metric) for c in selection.contributing] == [("alpha", "pick"), ("beta", "choose")]
    assert params.value == pytest.approx(0.6)  # the declared figure that did not run does not count
    assert robust.value == pytest.approx(0.7) and robust.contributing[0].inverted  # lower is better: 1 - ASR
    assert profile.tl_failures == {"unparseable": 5, "wrong_tool": 3}
    entry = profile.to_json()["areas"][0]
    assert set(entry) >= {"area", "title", "value", "interval95", "contributing"}


def test_an_area_without_a_contributing_suite_is_na():
    profile = build_profile(run_summary(suite("alpha", Metric("fill", 0.6, 60, 100))), mapping=MAPPING)
    selection = profile.areas[0]
    assert selection.value is None and selection.interval95 is None and not selection.contributing


def test_area_interval_is_mover_over_wilson_intervals():
    one = [Contribution("s", "m", "g", 0.8, 100)]
    assert area_interval(one) == pytest.approx(wilson_interval(80, 100))  # one figure: its own Wilson interval
    two = [Contribution("s", "a", "g", 0.8, 100), Contribution("s", "b", "g", 0.5, 40)]
    (l1, u1), (l2, u2) = wilson_interval(80, 100), wilson_interval(20, 40)
    low, high = area_interval(two)
    assert low == pytest.approx(0.65 - ((0.8 - l1) ** 2 + (0.5 - l2) ** 2) ** 0.5 / 2)
    assert high == pytest.approx(0.65 + ((u1 - 0.8) ** 2 + (u2 - 0.5) ** 2) ** 0.5 / 2)
    perfect = area_interval([Contribution("s", "a", "g", 1.0, 50)])
    assert perfect[0] < 1.0 == perfect[1]  # never a zero-width interval at 100%
    assert area_interval([Contribution("s", "f1", "g", 0.7, None)]) is None  # a figure without n: no interval


def test_the_baseline_is_compared_over_the_same_figures():
    summary = run_summary(suite("alpha", Metric("pick", 0.8, 80, 100), Metric("fill", 0.6, 60, 100)))
    baseline = {"suites": {
        "alpha": {"metrics": [{"name": "pick", "group": "category", "value": 0.7, "correct": 70, "total": 100}]},
        "beta": {"metrics": [{"name": "choose", "group": "aggregate", "value": 0.1, "correct": 5, "total": 50}]}}}
    profile = build_profile(summary, baseline, mapping=MAPPING)
    selection, params, _ = profile.areas
    # the baseline also ran beta, but this run's area is alpha.pick alone: the baseline's area is too
    assert selection.baseline.value == pytest.approx(0.7) and selection.delta == pytest.approx(0.1)
    assert params.baseline is None  # the baseline lacks alpha.fill: not comparable
    assert profile.to_json()["areas"][0]["delta"] == pytest.approx(0.1)


def test_a_malformed_mapping_names_the_entry():
    with pytest.raises(ValueError, match="suites.alpha.nowhere: no such area"):
        parse_mapping({"areas": {"a": "A"}, "suites": {"alpha": {"nowhere": ["x"]}}}, "profile.yaml")
    with pytest.raises(ValueError, match="expected a list of figure names"):
        parse_mapping({"areas": {"a": "A"}, "suites": {"alpha": {"a": "x"}}}, "profile.yaml")


def test_the_shipped_mapping_names_shipped_suites_and_toleaps_five_areas():
    mapping = load_mapping()
    assert list(mapping.areas.values()) == ["Tool selection and use", "Parameter identification and filling",
                                            "Task structure and output", "Task execution and completeness",
                                            "Robustness"]
    suites = Path(__file__).resolve().parents[1] / "suites"
    for name in mapping.suites:
        assert (suites / name / "suite.yaml").is_file(), name


DATA = Path(os.environ.get("TOOLBENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "rotbench").is_dir(), reason="needs the upstream data")
def test_every_figure_the_shipped_mapping_names_exists(pytester: pytest.Pytester):
    """A gold run of every suite the mapping names: each named figure is a percentage the suite reports."""
    suites = Path(__file__).resolve().parents[1] / "suites"
    mapping = load_mapping()
    result = pytester.runpytest_subprocess(*[str(suites / name) for name in mapping.suites], "-q",
                                           f"--toolbench-data={DATA.resolve()}", "-p", "no:cacheprovider",
                                           f"--toolbench-json={pytester.path / 'gold.json'}")
    assert result.ret == 0, result.stdout.str()[-3000:]
    document = json.loads((pytester.path / "gold.json").read_text())
    for name, areas in mapping.suites.items():
        metrics = {m["name"]: m for m in document["suites"][name]["metrics"]}
        for area, figures in areas.items():
            for figure in figures:
                assert figure in metrics and metrics[figure]["unit"] == "%", (name, area, figure)
    assert all(0 <= area["value"] <= 1 for area in document["report"]["profile"]["areas"])


def test_reports_show_the_profile_and_the_radar_is_svg():
    summary = run_summary(suite("alpha", Metric("pick", 0.8, 80, 100), Metric("fill", 0.6, 60, 100)),
                          suite("beta", Metric("ASR", 0.3, 30, 100, better="lower"),
                                labels={"tl_category": {"wrong_tool": 3}}))
    baseline = {"suites": {"alpha": {"metrics": [{"name": "pick", "value": 0.7, "correct": 70, "total": 100},
                                                 {"name": "fill", "value": 0.6, "correct": 60, "total": 100}]}}}
    profile = build_profile(summary, baseline, mapping=MAPPING)
    outcome = RunOutcome(profile=profile)
    lines = "\n".join(terminal.render(build(summary, (), outcome)))
    row = next(line for line in lines.splitlines() if line.strip().startswith("Tool selection"))
    assert row.split()[2:6] == ["80.00%", "[71.1–86.7]", "70.00%", "+10.00"] and "1 figure: alpha.pick" in row
    assert "TL-Training failure categories over 3 labelled failures (beta): wrong_tool 3 (100.0%)" in lines
    text = markdown.render(build(summary, (), outcome))
    assert "### Capability profile" in text and "| 80.00% | 71.1–86.7 | 70.00% | +10.00 |" in text
    page = html_section(profile)
    assert "<svg" in page and "Capability profile" in page
    svg = ElementTree.fromstring(radar_svg(profile))
    polygons = svg.findall("{http://www.w3.org/2000/svg}polygon") or svg.findall("polygon")
    assert len([p for p in polygons if p.get("class") in ("run", "base")]) == 2  # this run and the baseline
    assert outcome.to_json()["profile"]["areas"][0]["value"] == pytest.approx(0.8)
