"""The paired permutation (within-pair swap) test (stats/swap.py): the fallback for gated figures that are
neither counts nor means of cases, checked against a brute-force enumeration on NesTools' micro F1s."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_toolbench.contract.aggregates import NO_DECLARATION, parse
from pytest_toolbench.report.significance import PairedResult
from pytest_toolbench.stats.swap import SWAP, swap_tests
from pytest_toolbench.run.records import CaseRecord

from test_sign_flip import _compare

pytest.importorskip("numpy")

AVG = ("aggregate", "Avg")  # NesTools: the mean of four micro F1s over pooled calls


def _nestools():
    from suites.nestools.scorer.aggregation import aggregate

    return aggregate


def _case(index: int, gold: int, correct: int, predicted: int) -> CaseRecord:
    counts = {"all_num": 1, "correct_format_num": 1, "tree_acc": int(correct == gold == predicted)}
    for family in ("api", "order", "param", "nest"):
        counts.update({f"gold_{family}_num": gold, f"correct_{family}_num": correct,
                       f"predict_{family}_num": predicted})
    return CaseRecord(suite="s", case_id=f"c{index}", category="depth1", passed=correct == gold == predicted,
                      order=index, counts=counts)


def _runs(n: int, seed: int, shift: float) -> tuple[list[CaseRecord], list[CaseRecord]]:
    rng = random.Random(seed)
    before, now = [], []
    for i in range(n):
        gold = rng.randint(1, 4)
        good = rng.randint(0, gold)
        bad = max(0, min(gold, good - (rng.random() < shift) * rng.randint(1, gold)))
        before.append(_case(i, gold, good, gold + rng.randint(0, 1)))
        now.append(_case(i, gold, bad, gold + rng.randint(0, 2)))
    return before, now


def _avg(aggregate, records):
    return next(m.value for m in aggregate(records) if (m.group, m.name) == AVG)


def _brute_force(aggregate, now, before, units):
    """Every swap pattern of the units (lists of case indexes), by hand: (two-sided p, p that it got worse)."""
    observed = _avg(aggregate, now) - _avg(aggregate, before)
    two = worse = 0
    patterns = list(itertools.product((0, 1), repeat=len(units)))
    for pattern in patterns:
        swapped = {i for unit, s in zip(units, pattern) if s for i in unit}
        a = [before[i] if i in swapped else now[i] for i in range(len(now))]
        b = [now[i] if i in swapped else before[i] for i in range(len(now))]
        change = _avg(aggregate, a) - _avg(aggregate, b)
        two += abs(change) >= abs(observed) - 1e-9
        worse += change <= observed + 1e-9
    return two / len(patterns), worse / len(patterns)


def test_exact_swap_p_values_match_a_brute_force_enumeration_with_and_without_clusters():
    aggregate = _nestools()
    before, now = _runs(7, seed=3, shift=0.5)
    got = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult)[AVG]
    two, worse = _brute_force(aggregate, now, before, [[i] for i in range(7)])
    assert got.test.startswith(SWAP) and "exact, 128 patterns" in got.test
    assert (got.p_value, got.p_worse, got.p_floor) == (pytest.approx(two), pytest.approx(worse), 1 / 128)
    assert got.delta_interval95 is None
    # c0-c2 and c3-c4 as declared clusters: swapped together (4 units with c5 and c6)
    design = parse({"figures": {}, "clusters": [{"pattern": r"^c[0-2]$", "key": "a"},
                                                {"pattern": r"^c[34]$", "key": "b"}]})
    clusters: dict[str, list[int]] = {}
    for i in range(7):
        clusters.setdefault(design.cluster_of(f"c{i}"), []).append(i)
    clustered = swap_tests(aggregate, now, before, {AVG: False}, design, PairedResult)[AVG]
    two, worse = _brute_force(aggregate, now, before, [clusters[u] for u in sorted(clusters)])
    assert len(clusters) == 4 and "4 clusters" in clustered.test and "16 patterns" in clustered.test
    assert (clustered.p_value, clustered.p_worse) == (pytest.approx(two), pytest.approx(worse))


def test_monte_carlo_agrees_with_the_exact_enumeration():
    aggregate = _nestools()
    before, now = _runs(9, seed=4, shift=0.6)
    exact = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult)[AVG]
    drawn = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult, exact_units=0,
                       resamples=999)[AVG]
    assert "999 random patterns" in drawn.test and drawn.p_floor == 1 / 1000
    assert drawn.p_value == pytest.approx(exact.p_value, abs=0.05)  # 3.5 standard errors at p = 0.5


def test_identical_runs_give_p_one_and_a_clear_regression_a_small_p():
    aggregate = _nestools()
    before, now = _runs(30, seed=5, shift=0.9)
    same = swap_tests(aggregate, before, list(before), {AVG: False}, NO_DECLARATION, PairedResult,
                      resamples=199)[AVG]
    assert same.p_value == 1.0 and same.p_worse == 1.0
    worse = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult, resamples=499)[AVG]
    assert worse.p_value <= 0.01 and worse.p_worse <= 0.01
    # the same drop read as lower-is-better: not worse at all
    upside = swap_tests(aggregate, now, before, {AVG: True}, NO_DECLARATION, PairedResult, resamples=499)[AVG]
    assert upside.p_worse > 0.9


def test_the_test_does_not_apply_to_different_cases_or_beyond_its_budget():
    aggregate = _nestools()
    before, now = _runs(6, seed=6, shift=0.5)
    other = swap_tests(aggregate, now[1:], before, {AVG: False}, NO_DECLARATION, PairedResult)[AVG]
    assert other.test is None and "different cases" in other.note
    needed = 2 * 2 ** len(now) * len(now)  # two pseudo-runs per exact pattern, each reading every case
    costly = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult, max_records=needed - 1)[AVG]
    assert costly.test is None and costly.note.startswith("n/a: too costly") and f"{needed:,} records" in costly.note
    assert swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult, max_records=needed)[AVG].test
    reported = {AVG: (_avg(aggregate, now) + 0.01, _avg(aggregate, before))}  # not what the records give
    other = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult, reported=reported)[AVG]
    assert other.test is None and "does not give the reported figure" in other.note


def test_a_nestools_micro_f1_figure_against_a_baseline_now_carries_a_p_value():
    aggregate = _nestools()
    before, now = _runs(24, seed=7, shift=0.6)
    lines = []
    comparison = _compare(aggregate, None, before, now, progress=lines.append)
    paired = comparison.suites["s"].metrics[AVG].paired
    assert paired.test.startswith(SWAP), paired.note
    # the long part of a comparison says what it does before it starts
    assert lines == ["toolbench: s: paired permutation (swap) test of 1 gated figure(s) over 24 cases against the "
                     "baseline"]
    assert paired.p_value is not None and 0 < paired.p_value <= 1 and paired.p_worse is not None
    assert paired.p_adjusted is not None and comparison.family >= 1  # in the gated family (Holm)
    # the P/R/F1 breakdown is not gated: it keeps its n/a
    assert comparison.suites["s"].metrics[("P/R/F1", "Selection F1")].paired.test is None


def test_westfall_young_gives_way_to_holm_when_a_swap_tested_figure_is_in_the_family():
    from pytest_toolbench.report.compare import compare, evaluate_gates
    from pytest_toolbench.report.settings import ReportSettings
    from test_significance import toy_baseline, toy_records, toy_summary

    baseline = toy_baseline(toy_records([True] * 40))
    current = toy_records([False] * 12 + [True] * 28)
    summary = toy_summary(current)
    comparison = compare(summary, current, baseline, "base.json", "westfall-young")
    micro = comparison.suites["toy"].metrics[("aggregate", "micro F1")].paired
    assert micro.test.startswith(SWAP) and micro.p_adjusted is not None
    assert comparison.multiple == "holm"
    results = evaluate_gates(summary, comparison, ReportSettings(max_drop=2, significance=0.05,
                                                                 multiple="westfall-young"))
    missed = [gate for gate in results if not gate.passed and "toy.accuracy" in gate.message]
    assert missed and "holm-adjusted" in missed[0].message


def test_a_figure_no_swap_can_move_has_floor_one_and_leaves_the_family():
    """0 vs 0, or identical in both runs for every case: every swap pattern gives the same change (0), so the
    figure cannot move in this comparison: p = 1, p_floor = 1 (never in the gate's family), moving_units 0."""
    aggregate = _nestools()
    before, _ = _runs(7, seed=3, shift=0.5)
    same = swap_tests(aggregate, before, before, {AVG: False}, NO_DECLARATION, PairedResult)[AVG]
    assert same.test.startswith(SWAP) and (same.p_value, same.p_worse, same.p_floor) == (1.0, 1.0, 1.0)
    assert same.moving_units == 0 and not same.live
    _, now = _runs(7, seed=3, shift=0.5)
    moved = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult)[AVG]
    assert moved.live and moved.p_floor == 1 / 128
