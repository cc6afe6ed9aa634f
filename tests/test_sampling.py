"""--toolbench-sample: the stratified draw (the same cases for a seed on every machine, serially and under -n 2) and
the design-based estimates of the full benchmark's figures (checked against scipy and by a fixed-seed simulation of
their coverage; the large simulations on real result sets are benchmarks/bench_sampling.py)."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from conftest import EXAMPLE_SUITE, XDIST
from pytest_toolbench.contract.suite import CaseRecord, Metric
from pytest_toolbench.report.estimates import limit_refusal, threshold_on_estimate
from pytest_toolbench.report.leaderboard import rank_range
from pytest_toolbench.report.leaderboard import rank_of  # noqa: F401
from pytest_toolbench.stats import estimation, sampling
from pytest_toolbench.stats.estimate import HYPERGEOMETRIC, INFLUENCE
from pytest_toolbench.stats.intervals import hypergeometric_interval
from pytest_toolbench.run.summary import SuiteSummary


# -- the draw --------------------------------------------------------------------------------------------------
def test_sample_option_reads_counts_fractions_and_percentages():
    assert sampling.parse_sample("400").count == 400
    assert sampling.parse_sample("0.1", 7) == sampling.SampleSpec(fraction=0.1, seed=7)
    assert sampling.parse_sample("10%").fraction == pytest.approx(0.1)
    for bad in ("0", "1.5", "ten", "0%", "100%", "-3", "nan"):
        with pytest.raises(ValueError, match="--toolbench-sample"):
            sampling.parse_sample(bad)
    with pytest.raises(ValueError, match="--toolbench-sample-seed"):
        sampling.parse_sample("0.1", "x")


def test_allocation_is_proportional_with_a_minimum_per_stratum():
    sizes = {"big": 1000, "mid": 200, "small": 16, "tiny": 3}
    taken = sampling.allocate(sizes, sampling.SampleSpec(fraction=0.1))
    assert taken == {"big": 100, "mid": 20, "small": 5, "tiny": 3}
    assert sum(sampling.allocate({"a": 333, "b": 667}, sampling.SampleSpec(count=100)).values()) == 100


def _items(counts: dict[str, int]) -> list[tuple[str, str]]:
    return [(f"{category}_{i}", category) for category, n in counts.items() for i in range(n)]


def test_the_draw_depends_only_on_the_seed_and_the_ids():
    items = _items({"a": 120, "b": 40, "c": 9})
    spec = sampling.SampleSpec(fraction=0.25, seed=11)
    first, design = sampling.draw(items, spec, "s", lambda r: r[1], lambda r: r[0])
    shuffled = list(items)
    random.Random(3).shuffle(shuffled)
    again, _ = sampling.draw(shuffled, spec, "s", lambda r: r[1], lambda r: r[0])
    assert {r[0] for r in again} == {r[0] for r in first}  # not the order the data were read in
    other, _ = sampling.draw(items, sampling.SampleSpec(fraction=0.25, seed=12), "s", lambda r: r[1], lambda r: r[0])
    assert {r[0] for r in other} != {r[0] for r in first}
    larger, _ = sampling.draw(items, sampling.SampleSpec(fraction=0.5, seed=11), "s", lambda r: r[1], lambda r: r[0])
    assert {r[0] for r in first} <= {r[0] for r in larger}  # one seed: a larger sample contains the smaller
    assert design.strata == {"a": (120, 120, 30, 30), "b": (40, 40, 10, 10), "c": (9, 9, 5, 5)}
    assert design.note() == "estimated from 45 of 169 cases (seed 11)"


def test_units_are_drawn_whole_and_lie_in_one_category():
    items = [(f"memory_kv_{i}-{s}-{i}", "memory_kv") for s in ("x", "y", "z", "u", "v", "w", "q") for i in range(4)]
    unit = lambda r: r[0].split("-")[1]  # noqa: E731
    drawn, design = sampling.draw(items, sampling.SampleSpec(fraction=0.3, seed=1, minimum=2), "s",
                                  lambda r: r[1], lambda r: r[0], unit)
    scenarios = {unit(r) for r in drawn}
    assert len(drawn) == 4 * len(scenarios) and design.strata["memory_kv"][:3] == (7, 28, 2)
    with pytest.raises(ValueError, match="must lie in one category"):
        sampling.draw([("a1", "x"), ("a2", "y")], sampling.SampleSpec(fraction=0.5), "s", lambda r: r[1],
                      lambda r: r[0], lambda r: "a")


# -- the estimates ---------------------------------------------------------------------------------------------
def test_hypergeometric_interval_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    numpy = pytest.importorskip("numpy")
    for k, n, population in ((0, 5, 16), (5, 5, 16), (7, 10, 100), (40, 105, 1053), (3, 20, 24)):
        low, high = hypergeometric_interval(k, n, population)
        # the reference: every population count K that a two-sided 2.5% tail test does not reject
        counts = numpy.arange(population + 1)
        keep = (stats.hypergeom.sf(k - 1, population, counts, n) > 0.025) & \
            (stats.hypergeom.cdf(k, population, counts, n) > 0.025)
        kept = [int(K) for K in counts[keep]]
        assert (round(low * population), round(high * population)) == (min(kept), max(kept))


def _aggregate(results):
    """A suite's official-style figures: category rates, their unweighted mean, a rate pooled over categories
    a and b (weighted by their cases), and an F1-like formula that is no linear function of the pass rates."""
    rows, rates = [], {}
    for category in ("a", "b", "c"):
        picked = [r for r in results if r.category == category]
        passed = sum(r.passed for r in picked)
        rates[category] = passed / len(picked) if picked else 0.0
        rows.append(Metric(category, rates[category] if picked else None, passed, len(picked), group="category"))
    pooled = [r for r in results if r.category in ("a", "b")]
    rows.append(Metric("mean", sum(rates.values()) / 3, group="aggregate"))
    rows.append(Metric("pooled", sum(r.passed for r in pooled) / len(pooled), sum(r.passed for r in pooled),
                       len(pooled), group="aggregate"))
    rows.append(Metric("harmonic", 2 * rates["a"] * rates["b"] / (rates["a"] + rates["b"] or 1), group="aggregate"))
    return rows


def _population(rates: dict[str, tuple[int, float]], seed: int) -> list[CaseRecord]:
    rng = random.Random(seed)
    records = []
    for category, (n, rate) in rates.items():
        flags = [i < round(rate * n) for i in range(n)]
        rng.shuffle(flags)
        records += [CaseRecord("t", f"{category}{i}", category, flag) for i, flag in enumerate(flags)]
    return records


def test_estimates_apply_the_aggregation_to_population_weighted_strata():
    population = _population({"a": (400, 0.5), "b": (40, 0.9), "c": (30, 0.2)}, 0)
    drawn, design = sampling.draw(population, sampling.SampleSpec(fraction=0.1, seed=4), "t", lambda r: r.category,
                                  lambda r: r.case_id)
    estimates = estimation.estimate_figures(drawn, design, _aggregate)
    rate = {c: sum(r.passed for r in drawn if r.category == c) / sum(r.category == c for r in drawn) for c in "abc"}
    assert estimates[("aggregate", "mean")].value == pytest.approx(sum(rate.values()) / 3)
    # pooled with the population's sizes (400 and 40), not the sample's (40 and 5)
    assert estimates[("aggregate", "pooled")].value == pytest.approx((400 * rate["a"] + 40 * rate["b"]) / 440,
                                                                     abs=0.002)
    assert estimates[("aggregate", "mean")].coefficients == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    assert estimates[("category", "b")].method == HYPERGEOMETRIC
    assert estimates[("aggregate", "harmonic")].method == INFLUENCE  # smooth, not linear
    assert estimates[("aggregate", "mean")].to_json()["sampled"] == design.sampled == 50  # 47, and the minimum of 5 in b and c


def test_the_95_percent_intervals_cover_the_full_figure_in_a_fixed_seed_simulation():
    population = _population({"a": (300, 0.55), "b": (40, 0.95), "c": (24, 0.3)}, 1)
    truth = {(m.group, m.name): m.value for m in _aggregate(population)}
    hits: dict[tuple[str, str], int] = {}
    draws = 60
    for seed in range(draws):
        drawn, design = sampling.draw(population, sampling.SampleSpec(fraction=0.15, seed=seed), "t",
                                      lambda r: r.category, lambda r: r.case_id)
        for key, estimate in estimation.estimate_figures(drawn, design, _aggregate).items():
            low, high = estimate.interval95
            hits[key] = hits.get(key, 0) + (low - 1e-9 <= truth[key] <= high + 1e-9)
    # 60 draws: a true 95% coverage falls below 52/60 with probability under 2%
    assert all(count >= 52 for count in hits.values()), hits


def test_paired_difference_estimates_the_full_change_from_the_sampled_cases():
    baseline = _population({"a": (300, 0.5), "b": (40, 0.8), "c": (24, 0.3)}, 2)
    current = [CaseRecord(r.suite, r.case_id, r.category, r.passed or (r.category == "a" and int(r.case_id[1:]) % 5
                                                                        == 0)) for r in baseline]
    full_change = (sum(r.passed for r in current if r.category == "a")
                   - sum(r.passed for r in baseline if r.category == "a")) / 300 / 3
    drawn, design = sampling.draw(current, sampling.SampleSpec(fraction=0.3, seed=5), "t", lambda r: r.category,
                                  lambda r: r.case_id)
    estimate = estimation.estimate_figures(drawn, design, _aggregate)[("aggregate", "mean")]
    delta, (low, high), p_value, pairs = estimation.paired_difference(
        drawn, {r.case_id: r for r in baseline}, estimate, design)
    assert low <= full_change <= high and pairs == design.sampled and p_value < 0.05


# -- gates, rank range, limit ------------------------------------------------------------------------------------
def test_a_gate_on_an_estimate_reads_its_interval():
    metric = Metric("overall", 0.8, estimate={"value": 0.8, "interval95": [0.74, 0.86], "sampled": 100,
                                              "population": 1000, "seed": 0})
    assert threshold_on_estimate(metric, "x", 0.7, "%")[0] is True
    assert threshold_on_estimate(metric, "x", 0.9, "%")[0] is False and "whole interval is below" in \
        threshold_on_estimate(metric, "x", 0.9, "%")[1]
    assert "undecided" in threshold_on_estimate(metric, "x", 0.8, "%")[1]
    assert threshold_on_estimate(Metric("overall", 0.8), "x", 0.7, "%") is None
    assert "--toolbench-sample" in limit_refusal({"limit": 3}) and limit_refusal({}) is None
    scores = [("m1", 0.9), ("m2", 0.82), ("m3", 0.78), ("m4", 0.7)]
    assert rank_range(tuple(metric.estimate["interval95"]), scores) == (2, 4)


def test_repeat_selection_counts_cases_not_samples():
    suite = SuiteSummary("s", "S", {}, total=104, passed=50, metrics=[], error_types={},
                         error_types_by_category={}, labels={}, available=88,
                         repeat={"samples": 2, "cases": 52})
    assert suite.selection_text() == "52 of 88 cases"
    whole = SuiteSummary("s", "S", {}, total=150, passed=50, metrics=[], error_types={},
                         error_types_by_category={}, labels={}, available=88, repeat={"samples": 2, "cases": 88})
    assert whole.selection_text() == "150 of 176 samples (2 per case)"


# -- end to end ----------------------------------------------------------------------------------------------------
@pytest.fixture
def many_echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    lines = [json.dumps({"id": f"echo_{i}", "text": f"t{i}", "kind": "short" if i % 3 else "long"})
             for i in range(60)]
    (pytester.path / "data" / "echo" / "cases.jsonl").write_text("\n".join(lines) + "\n")
    pytester.syspathinsert()
    return pytester


@pytest.mark.parametrize("workers", [[], XDIST])
def test_the_same_seed_selects_the_same_cases_serially_and_under_xdist(many_echo, workers):
    out = many_echo.path / "run.json"
    result = many_echo.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:randomly",
                                            "--toolbench-sample=0.25", "--toolbench-sample-seed=9",
                                            f"--toolbench-json={out}", *workers)
    document = json.loads(out.read_text())
    ran = sorted(case["case_id"] for case in document["cases"])
    items = [(f"echo_{i}", "short" if i % 3 else "long") for i in range(60)]
    expected, _ = sampling.draw(items, sampling.SampleSpec(fraction=0.25, seed=9), "echo", lambda r: r[1],
                                lambda r: r[0])
    assert ran == sorted(r[0] for r in expected)
    result.stdout.fnmatch_lines(["*SAMPLED RUN: estimated from 15 of 60 cases (seed 9)*"])
    overall = next(m for m in document["suites"]["echo"]["metrics"] if m["name"] == "overall")
    assert overall["estimate"]["population"] == 60 and overall["estimate"]["sampled"] == 15
    assert overall["interval95"] == overall["estimate"]["interval95"]


def test_sample_and_limit_options_are_checked():
    from pytest_toolbench.plugin.options import _parse_sample

    with pytest.raises(pytest.UsageError, match="--toolbench-sample=2.5: a fraction must be above 0 and below 1"):
        _parse_sample("2.5", None, None)
    with pytest.raises(pytest.UsageError, match="exclude each other"):
        _parse_sample("0.1", None, 2)
    with pytest.raises(pytest.UsageError, match="needs --toolbench-sample"):
        _parse_sample(None, "3", None)
    assert _parse_sample("10%", "4", None) == {"count": None, "fraction": 0.1, "seed": 4, "minimum": 5}


def test_a_limit_run_is_labelled_and_no_gate_is_judged_on_it(many_echo):
    gated = many_echo.runpytest_subprocess("suites", "--toolbench-data=data", "--toolbench-limit=2",
                                           "--toolbench-fail-under=echo.overall=50")
    out = gated.stdout.str()
    assert "do not estimate the full benchmark, so no gate is judged on them" in out
    assert "does NOT estimate the full benchmark" in out
    assert gated.ret != 0
