"""The capability profile (report/profile.py, suites/profile.yaml): each area from the named figures of the suites that
ran, its MOVER interval, the baseline compared over the same figures, TL-Training tallies, and what the reports show."""

from __future__ import annotations

import dataclasses
import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from pytest_toolbench.report import results_file
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import markdown, terminal
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.profile import Contribution, build_profile
from pytest_toolbench.report.profile_mapping import ProfileMapping, load_mapping, parse_mapping
from pytest_toolbench.report.profile_views import html_section, radar_svg
from pytest_toolbench.report.profile_views import terminal_lines as profile_terminal_lines
from pytest_toolbench.stats.intervals import mover_mean_interval, wilson_interval
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

MAPPING = ProfileMapping(
    areas={"selection": "Tool selection", "params": "Parameters", "robust": "Robustness"},
    suites={"alpha": {"selection": ("pick",), "params": ("fill", "absent")},
            "beta": {"selection": ("choose",), "robust": ("ASR",)}})


def area_interval(contributions):
    """MOVER over the contributions' Wilson intervals, as the profile calls it (stats.intervals)."""
    return mover_mean_interval([(c.value, c.total) for c in contributions])


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
    profile = build_profile(summary, results_file.read(baseline), mapping=MAPPING)
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
    profile = build_profile(summary, results_file.read(baseline), mapping=MAPPING)
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


# -- intervals over shared units, what enters an area, the paired test of a change ---------------------------------
from pytest_toolbench.contract.suite import CaseRecord  # noqa: E402
from pytest_toolbench.stats.bootstrap import AreaFigures, cluster_bootstrap_interval, paired_area_test, \
    strata  # noqa: E402

UNITS_MAPPING = parse_mapping({
    "areas": {"robust": "Robustness", "other": "Other"},
    "suites": {"noisy": {"robust": ["slight", "heavy"]}, "plain": {"other": ["score"]}},
    "units": {"noisy": [{"match": r"(?P<level>\w+)-(?P<query>\d+)", "unit": "q{query}", "modulo": {"query": 5}}]}})


def count_aggregate(results):
    """Each category's share of passed cases (a count of cases)."""
    by_category = {}
    for result in results:
        by_category.setdefault(result.category, []).append(result.passed)
    return [Metric(category, sum(passed) / len(passed), sum(passed), len(passed), group="category")
            for category, passed in by_category.items()]


def noisy_records(slight: list[bool], heavy: list[bool]) -> list[CaseRecord]:
    return [CaseRecord("noisy", f"{level}-{i}", level, passed, None if passed else "wrong", order=i)
            for level, outcomes in (("slight", slight), ("heavy", heavy)) for i, passed in enumerate(outcomes)]


def noisy_summary(records, samples: bool = False, incomplete: str = "", scope: str = "") -> RunSummary:
    metrics = [dataclasses.replace(m, incomplete=incomplete if m.name == "heavy" else "", scope=scope)
               for m in count_aggregate(records)]
    source = {"kind": "samples"} if samples else {"kind": "folder"}
    return RunSummary(header={}, suites=[SuiteSummary("noisy", "noisy", source, len(records), 0, metrics, {}, {},
                                                      {}, aggregate=count_aggregate)])


def test_unit_rules_group_cases_that_share_a_query():
    assert UNITS_MAPPING.unit_of("noisy", "heavy-7") == "q2" == UNITS_MAPPING.unit_of("noisy", "slight-2")
    assert UNITS_MAPPING.unit_of("noisy", "odd id") == "odd id"  # no rule matches: a unit of its own
    assert UNITS_MAPPING.unit_of("plain", "heavy-7") == "heavy-7"  # rules are per suite
    with pytest.raises(ValueError, match="names query, not a named group"):
        parse_mapping({"areas": {"a": "A"}, "units": {"s": [{"match": "x", "unit": "{query}"}]}})
    shipped = load_mapping()
    assert shipped.unit_of("rotbench", "first_turn-slight-107") == shipped.unit_of("rotbench", "first_turn-clean-2")
    assert shipped.unit_of("bfcl", "multi_turn_miss_param_12") == shipped.unit_of("bfcl", "multi_turn_base_12")
    assert shipped.unit_of("injecagent", "dh_enhanced-A-B") == shipped.unit_of("injecagent", "dh_base-A-B")


def test_figures_over_the_same_queries_are_resampled_together():
    # heavy's 10 cases are two versions of each of slight's 5 queries: one stratum of 5 units
    records = noisy_records([True, True, False, True, False], [True, True, False, True, False] * 2)
    profile = build_profile(noisy_summary(records), mapping=UNITS_MAPPING, records=records)
    area = profile.areas[0]
    assert area.value == pytest.approx(0.6) and area.interval_method.startswith("stratified cluster bootstrap")
    assert [c.to_json()["units"] for c in area.contributing] == [5, 5]
    figures = AreaFigures(("noisy", "noisy"), tuple(c.parts for c in area.contributing), (False, False))
    assert strata(figures) == [([0, 1], ["q0", "q1", "q2", "q3", "q4"])]
    # the two figures move together: the interval is that of one figure over 5 queries, not of 15 independent cases
    independent = area_interval(area.contributing)
    assert area.interval95[1] - area.interval95[0] > independent[1] - independent[0]


def test_the_cluster_bootstrap_agrees_with_scipy_resampling_whole_units():
    rng = np.random.default_rng(3)
    units = [rng.random(3) < 0.7 for _ in range(40)]  # a query, its three noise levels' outcomes
    parts = tuple({f"q{i}": (float(u[level]), 1.0) for i, u in enumerate(units)} for level in range(3))
    ours = cluster_bootstrap_interval(AreaFigures(("s",) * 3, parts, (False,) * 3))
    data = np.array([u.mean() for u in units])  # equal unit sizes: the area is the mean of unit means
    reference = scipy_stats.bootstrap((data,), np.mean, method="percentile", n_resamples=5000,
                                      random_state=4).confidence_interval
    assert ours == pytest.approx((reference.low, reference.high), abs=0.015)


def test_incomplete_figures_samples_and_selection_are_said_not_averaged_in():
    records = noisy_records([True] * 5, [True] * 10)
    stopped = build_profile(noisy_summary(records, incomplete="INCOMPLETE: 9 of 10 cases have no verdict"),
                            mapping=UNITS_MAPPING, records=records)
    area = stopped.areas[0]
    assert area.value == pytest.approx(1.0)  # heavy left out, never a 0.00% from its not_run cases
    assert area.incomplete.startswith("INCOMPLETE: left out noisy.heavy (INCOMPLETE: 9 of 10")
    lines = "\n".join(profile_terminal_lines(stopped))
    assert "INCOMPLETE: left out noisy.heavy" in lines
    assert stopped.to_json()["areas"][0]["left_out"][0]["metric"] == "heavy"
    sampled = build_profile(noisy_summary(records, samples=True), mapping=UNITS_MAPPING, records=records)
    assert sampled.areas[0].value is None and sampled.sample_suites == ("noisy",)
    assert "left out of every area: noisy (ran on the shipped samples" in "\n".join(profile_terminal_lines(sampled))
    selected = build_profile(noisy_summary(records, scope="over 3 of 5 cases (selection)"), mapping=UNITS_MAPPING,
                             records=records)
    assert selected.areas[0].selection == "(selection)"
    assert "(selection)" in "\n".join(profile_terminal_lines(selected))


def test_an_area_change_gets_the_cluster_sign_flip_test():
    before = noisy_records([True] * 5, [True] * 10)
    after = noisy_records([True, False, False, True, True], [True, False, False, True, True] * 2)
    baseline = {"suites": {"noisy": {"metrics": [m.__dict__ for m in count_aggregate(before)]}},
                "cases": [r.to_json() for r in before]}
    profile = build_profile(noisy_summary(after), results_file.read(baseline), mapping=UNITS_MAPPING, records=after)
    change = profile.areas[0].change
    # two queries differ: exact over the 2^2 flips, and never below 2 / 2^2
    assert change.test == "cluster sign-flip" and change.differing == 2 and change.p_value == pytest.approx(0.5)
    assert profile.to_json()["areas"][0]["change"]["p_value"] == pytest.approx(0.5)
    assert "p=0.500" in "\n".join(profile_terminal_lines(profile))


def test_the_sign_flip_test_matches_scipy_on_independent_units():
    rng = np.random.default_rng(5)
    now = rng.random(30) < 0.6
    before = rng.random(30) < 0.8
    current = AreaFigures(("s",), ({f"c{i}": (float(v), 1.0) for i, v in enumerate(now)},), (False,))
    baseline = AreaFigures(("s",), ({f"c{i}": (float(v), 1.0) for i, v in enumerate(before)},), (False,))
    ours = paired_area_test(current, baseline, resamples=4000)
    reference = scipy_stats.permutation_test((now.astype(float), before.astype(float)),
                                             lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                                             permutation_type="samples", n_resamples=4000, random_state=6)
    assert ours.p_value == pytest.approx(reference.pvalue, abs=0.02)
    assert ours.delta_interval95[0] < now.mean() - before.mean() < ours.delta_interval95[1]
