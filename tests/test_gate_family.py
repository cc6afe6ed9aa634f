"""The gate's decision column (report/compare.py adjust_family, report/significance.py): the family (figures that
can move, identical tests once), the simultaneous interval and its coverage, the stated power and its accuracy,
westfall-young applied or refused with the reason, tests that follow what a figure counts (ACEBench's dialogues),
and BFCL's renormalised Overall declared. Simulations are seeded and fast."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from statistics import NormalDist

import pytest

from pytest_toolbench.contract.aggregates import load as load_design, parse
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import terminal
from pytest_toolbench.report.compare import compare
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.report.results_file import read
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.significance import MCNEMAR, PairedResult, interval_at
from pytest_toolbench.stats.distributions import binomial_upper_half
from pytest_toolbench.stats.intervals import newcombe_paired_interval
from pytest_toolbench.stats.power import power_counts, power_sign_flip
from pytest_toolbench.stats.swap import SWAP
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import SuiteInput, summarize

ROOT = Path(__file__).resolve().parents[1]


# -- the simultaneous interval ---------------------------------------------------------------------------------------
def test_simultaneous_newcombe_intervals_cover_the_family_at_95_percent():
    """Bonferroni's simultaneous intervals (Dunn 1961): each of m figures' Newcombe interval at 1 - 0.05/m; over
    seeded draws every one of them covers its true change at once in at least 95% of the draws (less 3 Monte Carlo
    s.e.), where the unadjusted 95% intervals do so far less often."""
    rng = random.Random(20261129)
    m, n, draws = 8, 150, 300
    confidence = 1 - 0.05 / m
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    truths = [(0.06 + 0.02 * f, 0.03 + 0.01 * (f % 3)) for f in range(m)]  # (P(better), P(worse)) per figure
    together = unadjusted = 0
    for _ in range(draws):
        hold = hold_raw = True
        for better, worse in truths:
            table = [0, 0, 0, 0]  # both pass, only current, only baseline, neither
            for _ in range(n):
                u = rng.random()
                table[1 if u < better else 2 if u < better + worse else (0 if rng.random() < 0.7 else 3)] += 1
            change = better - worse
            low, high = newcombe_paired_interval(*table, z=z)
            hold &= low <= change <= high
            low, high = newcombe_paired_interval(*table)
            hold_raw &= low <= change <= high
        together += hold
        unadjusted += hold_raw
    se = math.sqrt(0.05 * 0.95 / draws)
    assert together / draws >= 0.95 - 3 * se
    assert unadjusted / draws < 0.85  # about 0.95^8: why the decision column needs the adjusted interval


def test_simultaneous_t_intervals_cover_the_family_at_95_percent():
    """The same for the (stratified) t interval of a mean or a declared aggregate, recomputed by interval_at from
    what the test kept (its strata's unit values)."""
    rng = random.Random(7)
    m, draws = 10, 400
    confidence = 1 - 0.05 / m
    together = 0
    for _ in range(draws):
        hold = True
        for f in range(m):
            shift = 0.01 * f
            strata = tuple(tuple(rng.gauss(shift / 2, 0.2) / 60 for _ in range(30)) for _ in range(2))
            result = PairedResult("t", interval_basis=("t", strata))
            low, high = interval_at(result, confidence)
            hold &= low <= shift / 2 <= high  # the sum over 2 x 30 units of mean shift/2/60 each
        together += hold
    assert together / draws >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / draws)


def test_interval_at_95_is_the_unadjusted_interval():
    result = PairedResult(MCNEMAR, interval_basis=("newcombe", (59, 6, 16, 80)))
    assert interval_at(result, 0.95) == pytest.approx(newcombe_paired_interval(59, 6, 16, 80))
    assert interval_at(PairedResult(SWAP), 0.99) is None  # the swap test keeps no interval
    # a sampled run's normal interval (difference estimator): the half-width scales with the normal quantile
    low, high = interval_at(PairedResult("s", interval_basis=("normal", (-0.03, 0.01))), 0.99)
    z99, z95 = NormalDist().inv_cdf(0.995), NormalDist().inv_cdf(0.975)
    assert (low + high) / 2 == pytest.approx(-0.01) and (high - low) / 2 == pytest.approx(0.02 * z99 / z95)


# -- the stated power ------------------------------------------------------------------------------------------------
def test_exact_one_sided_mcnemar_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for worse, better in [(12, 3), (30, 25), (5, 0), (0, 4), (200, 160)]:
        assert binomial_upper_half(worse, worse + better) == pytest.approx(
            stats.binomtest(worse, worse + better, 0.5, alternative="greater").pvalue, rel=1e-9)


@pytest.mark.parametrize("flip_rate", [0.046, 0.20])
def test_stated_power_of_a_count_matches_a_seeded_simulation(flip_rate):
    """simple_python-like: 400 cases, a background share of cases flipping either way, a planted 5-point drop;
    the exact one-sided McNemar test at Holm's first-step level over 14 figures. The power the reports state
    (Connor's normal approximation at the observed flips) is within 5 points of the simulated one."""
    rng = random.Random(11)
    n, drop, alpha, draws = 400, 0.05, 0.05 / 14, 1500
    caught = 0
    for _ in range(draws):
        worse = better = 0
        for _ in range(n):
            u = rng.random()
            if u < flip_rate / 2:
                worse += 1
            elif u < flip_rate:
                better += 1
            elif u < flip_rate + drop:
                worse += 1
        caught += binomial_upper_half(worse, worse + better) <= alpha
    # what a run shows: its background flips both ways (half each), which the stated power is given at
    stated = power_counts(n, round(flip_rate * n / 2), round(flip_rate * n / 2), drop, alpha)
    # a run that already holds the drop shows the same background (the symmetric part of its flips)
    assert power_counts(n, round(flip_rate * n / 2) + round(drop * n), round(flip_rate * n / 2), drop, alpha) \
        == stated
    assert abs(stated - caught / draws) < 0.05, (stated, caught / draws)


def test_stated_power_of_a_sign_flip_matches_a_seeded_simulation():
    """A mean of two categories (weights 1/2 each over 200 cases): the sign-flip test's power at the observed
    flips (normal approximation, the drop adding flips like the observed ones) against a simulated exact-size
    test (normal approximation of the randomisation distribution, which the exact test tracks at this size)."""
    rng = random.Random(5)
    n, drop, alpha, draws, flip = 200, 0.05, 0.05 / 10, 1500, 0.08
    weight = 0.5 / n
    caught = 0
    z = NormalDist().inv_cdf(1 - alpha)
    for _ in range(draws):
        contributions = []
        for _ in range(2 * n):
            u = rng.random()
            if u < flip / 2:
                contributions.append(-weight)
            elif u < flip:
                contributions.append(weight)
            elif u < flip + drop:
                contributions.append(-weight)
        total = -sum(contributions)
        caught += total / math.sqrt(sum(c * c for c in contributions)) >= z
    observed = [weight if i % 2 else -weight for i in range(round(flip * 2 * n))]
    stated = power_sign_flip(observed, drop, alpha)
    assert abs(stated - caught / draws) < 0.06, (stated, caught / draws)


# -- the family ------------------------------------------------------------------------------------------------------
def _two_category_aggregate(results):
    metrics = []
    for category in ("a", "b", "c"):
        rows = [r for r in results if r.category == category]
        if rows:
            passed = sum(r.passed for r in rows)
            metrics.append(Metric(category, passed / len(rows), passed, len(rows), group="category"))
    rows = [r for r in results if r.category == "a"]
    if rows:  # an aggregate over category a alone: the same test as a's
        passed = sum(r.passed for r in rows)
        metrics.append(Metric("only_a", passed / len(rows), passed, len(rows), group="aggregate"))
    return metrics


class _Toy:
    aggregate = staticmethod(_two_category_aggregate)


def _records(outcomes: dict[str, list[bool]]) -> list[CaseRecord]:
    records, order = [], 0
    for category, passes in outcomes.items():
        for i, passed in enumerate(passes):
            records.append(CaseRecord(suite="toy", case_id=f"{category}_{i}", category=category, passed=passed,
                                      order=order))
            order += 1
    return records


def _comparison(before: dict[str, list[bool]], now: dict[str, list[bool]], multiple: str = "holm"):
    inputs = {"toy": SuiteInput(_Toy, "Toy", {}, None, None)}
    base_records = _records(before)
    baseline = read(json.loads(json.dumps(document(build(summarize(base_records, inputs, {"backend": "test"}),
                                                         base_records)))))
    records = _records(now)
    summary = summarize(records, inputs, {"backend": "test"})
    return summary, records, compare(summary, records, baseline, "base.json", multiple, 0.05)


def test_figures_that_cannot_move_leave_the_family_and_identical_tests_count_once():
    before = {"a": [True] * 60 + [False] * 40, "b": [True] * 80, "c": [True] * 50 + [False] * 50}
    now = {"a": [False] * 10 + [True] * 50 + [True] * 5 + [False] * 35, "b": [True] * 80,
           "c": [True] * 50 + [False] * 50}
    _, _, comparison = _comparison(before, now)
    metrics = comparison.suites["toy"].metrics
    # b and c are identical in both runs for every case: they cannot move, and are not in the family
    assert metrics[("category", "b")].paired.moving_units == 0 and metrics[("category", "b")].paired.p_adjusted is None
    assert comparison.not_moving == ["toy.b", "toy.c"]
    # a and only_a are one test: one member of the family, the same adjusted p (Holm over 1 = the raw one-sided p)
    a, only_a = metrics[("category", "a")].paired, metrics[("aggregate", "only_a")].paired
    assert comparison.family == 1
    assert a.p_adjusted == only_a.p_adjusted == pytest.approx(a.p_worse)
    # one member: its simultaneous interval is the 95% one
    assert a.delta_interval_adjusted == pytest.approx(a.delta_interval95)
    assert a.p_floor == 0.5 ** 15 and document_fields(comparison)["p_floor"] == 0.5 ** 15


def document_fields(comparison) -> dict:
    body = comparison.to_json()
    return next(m for m in body["suites"]["toy"]["metrics"] if m["name"] == "a")


def test_two_distinct_figures_get_the_bonferroni_simultaneous_interval():
    before = {"a": [True] * 60 + [False] * 40, "b": [True] * 70 + [False] * 30}
    now = {"a": [False] * 10 + [True] * 50 + [True] * 5 + [False] * 35,
           "b": [False] * 12 + [True] * 58 + [True] * 4 + [False] * 26}
    _, _, comparison = _comparison(before, now)
    assert comparison.family == 2 and comparison.adjusted_confidence == pytest.approx(0.975)
    a = comparison.suites["toy"].metrics[("category", "a")].paired
    z = NormalDist().inv_cdf(1 - 0.025 / 2)
    assert a.delta_interval_adjusted == pytest.approx(newcombe_paired_interval(50, 5, 10, 35, z=z))
    low, high = a.delta_interval95
    assert a.delta_interval_adjusted[0] < low and a.delta_interval_adjusted[1] > high
    # the stated power: Connor's formula at a's background flips (5 each way of 100 cases), at Holm's first-step
    # level 0.05 / 2
    assert a.power == pytest.approx(power_counts(100, 10, 5, 0.05, 0.025)) and a.flip_rate == pytest.approx(0.10)


# -- westfall-young applied or refused -------------------------------------------------------------------------------
def _micro_aggregate(results):
    metrics = _two_category_aggregate(results)
    if results:  # a formula over counts: swap-tested
        passed = sum(r.passed for r in results)
        metrics.append(Metric("ratio", passed / (passed + len(results)), group="aggregate"))
    return metrics


def test_westfall_young_is_refused_with_the_reason_when_a_member_is_swap_tested(monkeypatch):
    monkeypatch.setattr(_Toy, "aggregate", staticmethod(_micro_aggregate))
    before = {"a": [True] * 60 + [False] * 40, "b": [True] * 70 + [False] * 30}
    now = {"a": [False] * 10 + [True] * 50 + [True] * 5 + [False] * 35,
           "b": [False] * 12 + [True] * 58 + [True] * 4 + [False] * 26}
    summary, records, comparison = _comparison(before, now, "westfall-young")
    assert comparison.suites["toy"].metrics[("aggregate", "ratio")].paired.test.startswith(SWAP)
    assert comparison.multiple == "holm" and comparison.multiple_requested == "westfall-young"
    assert "westfall-young refused: toy.ratio is tested by swapping the runs' records" in comparison.multiple_refused
    assert comparison.to_json()["multiple"]["refused"] == comparison.multiple_refused
    report = build(summary, records, RunOutcome(comparison=comparison))
    assert "westfall-young refused: toy.ratio" in "\n".join(terminal.render(report))


def test_westfall_young_is_applied_when_every_member_has_unit_contributions():
    before = {"a": [True] * 60 + [False] * 40, "b": [True] * 70 + [False] * 30}
    now = {"a": [False] * 10 + [True] * 50 + [True] * 5 + [False] * 35,
           "b": [False] * 12 + [True] * 58 + [True] * 4 + [False] * 26}
    _, _, comparison = _comparison(before, now, "westfall-young")
    assert comparison.multiple == "westfall-young" and not comparison.multiple_refused
    assert comparison.to_json()["multiple"]["refused"] is None


# -- clusters follow what a figure counts: ACEBench's dialogues ------------------------------------------------------
def _acebench_records(dialogues: dict[int, list[bool]], language: str = "en") -> list[CaseRecord]:
    records = []
    for category, shown in (("normal_multi_turn_user_switch", dialogues),
                            ("normal_multi_turn_user_adjust", {d: [True, True] for d in range(20)})):
        for d, turns in shown.items():
            for t, passed in enumerate(turns):
                records.append(CaseRecord(suite="acebench", case_id=f"{language}-{category}_{d}_{t}",
                                          category=category, passed=passed, order=len(records)))
    return records


def test_acebench_multi_turn_is_tested_per_dialogue_and_agrees_with_an_exact_dialogue_level_test():
    """A dialogue counts when all its turns are valid, so a figure over dialogues is tested over dialogues:
    the exact McNemar test on the dialogues whose outcome changed, equal to scipy's binomial test and to a
    brute-force enumeration of the dialogue-level sign flips; the turn-level split (no longer used) would have
    counted turns."""
    from suites.acebench.scorer.aggregation import aggregate

    class Ace:
        pass

    Ace.aggregate = staticmethod(aggregate)
    design = load_design(ROOT / "suites" / "acebench" / "aggregates.yaml")
    rng = random.Random(3)
    before_d = {d: [True] * rng.choice([2, 3, 4]) for d in range(40)}
    now_d = {d: list(turns) for d, turns in before_d.items()}
    worse, better = [0, 1, 2, 3, 4, 5, 6, 7, 8], [9]
    for d in worse:  # one or more turns fail: the dialogue fails
        now_d[d][rng.randrange(len(now_d[d]))] = False
    for d in better:
        before_d[d][0] = False
    inputs = {"acebench": SuiteInput(Ace, "ACEBench", {}, None, design)}
    base_records = _acebench_records(before_d)
    baseline = read(json.loads(json.dumps(document(build(summarize(base_records, inputs, {"backend": "t"}),
                                                         base_records)))))
    records = _acebench_records(now_d)
    summary = summarize(records, inputs, {"backend": "t"})
    comparison = compare(summary, records, baseline, "b.json", "holm", 0.05)
    paired = comparison.suites["acebench"].metrics[("category", "en/normal_multi_turn_user_switch")].paired
    assert paired.test == MCNEMAR and paired.pairs == 40  # dialogues, not turns
    assert (paired.flipped_to_fail, paired.flipped_to_pass) == (9, 1)
    # independent: the one-sided exact sign-flip over the 40 dialogues' changes, enumerated over the 10 that moved
    changes = [-1.0] * 9 + [1.0]
    hits = sum(1 for signs in itertools.product((1, -1), repeat=10)
               if sum(s * c for s, c in zip(signs, changes)) <= sum(changes))
    assert paired.p_worse == pytest.approx(hits / 2 ** 10)
    stats = pytest.importorskip("scipy.stats")
    assert paired.p_value == pytest.approx(stats.binomtest(9, 10, 0.5).pvalue)
    assert paired.p_worse == pytest.approx(stats.binomtest(9, 10, 0.5, alternative="greater").pvalue)
    # the declared mean of the two dialogue accuracies (user_adjust unchanged) is the same dialogue-level test
    multi = comparison.suites["acebench"].metrics[("aggregate", "en/multi_turn")].paired
    assert multi.test.startswith("stratified sign-flip (exact") and multi.p_worse == pytest.approx(paired.p_worse)


def test_acebench_declares_its_overall_with_the_official_weights_as_given():
    design = load_design(ROOT / "suites" / "acebench" / "aggregates.yaml")
    overall = design.figures["en/overall"]
    assert overall.kind == "sum" and sum(overall.weights.values()) == pytest.approx(1.0001)


# -- BFCL's renormalised Overall is declared -------------------------------------------------------------------------
def test_bfcl_declares_the_overall_over_the_categories_that_ran():
    design = load_design(ROOT / "suites" / "bfcl" / "aggregates.yaml")
    assert design.figures["overall_over_categories_ran"].kind == "ran"
    assert parse({"figures": {"x": {"weights_over_ran": {"a": 1, "b": 3}}}}).figures["x"].kind == "ran"


def test_bfcl_single_turn_run_tests_every_gated_figure_by_sign_flip_so_westfall_young_runs():
    """A BFCL run without multi-turn and agentic categories: overall_official and overall_over_categories_ran are
    declared and sign-flip tested (no swap test), the 0-vs-0 figures cannot move and are not tested, and
    westfall-young is applied; overall_official's power note says what its mde80 is in."""
    from suites.bfcl.scorer.aggregation import aggregate

    class Bfcl:
        pass

    Bfcl.aggregate = staticmethod(aggregate)
    design = load_design(ROOT / "suites" / "bfcl" / "aggregates.yaml")
    categories = ["simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
                  "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "irrelevance",
                  "live_irrelevance", "live_relevance"]
    rng = random.Random(2)
    base, now = [], []
    for category in categories:
        for i in range(12):
            passed = rng.random() < 0.8
            base.append(CaseRecord(suite="bfcl", case_id=f"{category}_{i}", category=category, passed=passed,
                                   order=len(base)))
            flip = rng.random() < 0.3
            now.append(CaseRecord(suite="bfcl", case_id=f"{category}_{i}", category=category,
                                  passed=(not passed) if flip else passed, order=len(now)))
    inputs = {"bfcl": SuiteInput(Bfcl, "BFCL", {}, None, design)}
    baseline = read(json.loads(json.dumps(document(build(summarize(base, inputs, {"backend": "t"}), base)))))
    summary = summarize(now, inputs, {"backend": "t"})
    comparison = compare(summary, now, baseline, "b.json", "westfall-young", 0.05)
    metrics = {key[1]: m.paired for key, m in comparison.suites["bfcl"].metrics.items()
               if key[0] == "aggregate" and m.paired is not None}
    assert comparison.multiple == "westfall-young" and not comparison.multiple_refused
    assert metrics["overall_over_categories_ran"].test.startswith("stratified sign-flip")
    assert metrics["overall_official"].test.startswith("stratified sign-flip")
    assert metrics["multi_turn"].test is None and metrics["multi_turn"].moving_units == 0
    assert "bfcl.multi_turn" in comparison.not_moving
    # Overall and its renormalised version are one test (proportional contributions): the same adjusted p
    assert metrics["overall_official"].p_adjusted == metrics["overall_over_categories_ran"].p_adjusted
    official = metrics["overall_official"]
    assert official.ran_weight == pytest.approx(0.3)
    assert "weigh 0.3 of it" in official.power_note
    # and every table says it beside the mde80: in points of what ran, too
    from pytest_toolbench.report.significance import format_mde, mde_text

    assert mde_text(official) == f"{format_mde(official.mde80)} ({format_mde(official.mde80 / 0.3)} of what ran)"
    report = build(summary, now, RunOutcome(comparison=comparison))
    row = next(line for line in "\n".join(terminal.render(report)).splitlines()
               if line.strip().startswith("overall_official "))
    assert "of what ran)" in row
