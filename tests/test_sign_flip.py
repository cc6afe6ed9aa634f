"""The sign-flip test, its interval, power and multiplicity (stats/sign_flip.py, intervals.py, power.py, multiplicity.py) against scipy, its type-I error by
simulation (fixed seed), and the stratified test of declared aggregates (BFCL's headline figures, API-Bank's
ROUGE-L, TaskBench's F1s) through ``compare``."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from pytest_toolbench.report import results_file
from pytest_toolbench.run.summary import SuiteInput
from pytest_toolbench.contract.aggregates import AggregatesError, load as load_design, parse
from pytest_toolbench.report.compare import compare
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.run_report import build
from pytest_toolbench.stats.intervals import stratified_t_interval
from pytest_toolbench.stats.multiplicity import adjust
from pytest_toolbench.stats.power import mde_counts
from pytest_toolbench.stats.sign_flip import EXACT_SUPPORT_LIMIT, monte_carlo_p_values, sign_flip_test
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import summarize

np = pytest.importorskip("numpy")
ROOT = Path(__file__).resolve().parents[1]


# -- the test against scipy ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 5, 9, 14])
def test_exact_sign_flip_matches_scipys_permutation_test(n):
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(n)
    differences = rng.normal(0.4, 1.0, n)
    reference = stats.permutation_test((differences,), np.mean, permutation_type="samples",
                                       n_resamples=2 ** 15).pvalue  # all 2^n sign patterns: exact
    result = sign_flip_test(list(differences))
    assert result.exact and result.p_value == pytest.approx(reference, rel=1e-9)


def test_equal_weights_of_zeros_and_ones_are_the_exact_mcnemar_test():
    stats = pytest.importorskip("scipy.stats")
    for gained, lost in [(3, 12), (12, 30), (180, 220), (0, 7)]:
        result = sign_flip_test([0.01] * gained + [-0.01] * lost + [0.0] * 50)
        assert result.exact and result.units == gained + lost
        assert result.p_value == pytest.approx(stats.binomtest(gained, gained + lost, 0.5).pvalue, rel=1e-9)


def test_strata_of_binary_outcomes_are_enumerated_exactly():
    # two strata of 0/1 outcomes weighted 1/400 and 1/200: the sum's distribution is a convolution of two binomials
    contributions = [1 / 400] * 12 + [-1 / 400] * 30 + [1 / 200] * 5 + [-1 / 200] * 9
    result = sign_flip_test(contributions)
    assert result.exact
    k1, k2 = np.arange(43), np.arange(15)
    from math import comb
    p1 = np.array([comb(42, k) for k in k1]) / 2 ** 42
    p2 = np.array([comb(14, k) for k in k2]) / 2 ** 14
    totals = ((2 * k1 - 42)[:, None] / 400 + (2 * k2 - 14)[None, :] / 200)
    observed = abs(sum(contributions))
    assert result.p_value == pytest.approx(float((p1[:, None] * p2[None, :])[np.abs(totals) >= observed - 1e-12].sum()),
                                           rel=1e-9)


def test_monte_carlo_above_the_enumeration_limit_agrees_with_the_t_test():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(7)
    differences = rng.normal(0.08, 1.0, 400)
    result = sign_flip_test(list(differences))
    assert not result.exact and 2 ** 400 > EXACT_SUPPORT_LIMIT
    reference = stats.ttest_1samp(differences, 0.0).pvalue  # the randomisation and t tests agree at this n
    assert result.p_value == pytest.approx(reference, abs=0.02)
    assert sign_flip_test(list(differences)) == result  # fixed seed: the same p every time


def test_a_p_value_is_never_below_what_the_test_can_resolve():
    assert sign_flip_test([0.3]).p_value == 1.0  # one pair
    assert sign_flip_test([0.0] * 10).p_value == 1.0  # no difference at all
    assert sign_flip_test([]).p_value == 1.0
    rng = random.Random(3)
    for n in range(2, 21):
        for values in ([0.5] * n, [rng.uniform(0.1, 1) for _ in range(n)]):  # all one way: the most extreme
            assert sign_flip_test(values).p_value >= 2 / 2 ** n - 1e-15
            assert sign_flip_test(values).p_value == pytest.approx(2 / 2 ** n)
    assert monte_carlo_p_values([[1.0] * 60])[0] >= 1 / 10_000  # (1 + hits) / (1 + resamples)


@pytest.mark.parametrize("n", [3, 6, 10, 20, 50, 100, 400])
def test_type_one_error_at_005(n):
    """Under the null (each pair's sign a fair coin, skewed differences) the test rejects at most 5% of the time,
    within Monte Carlo error; above n = 6 it is not conservative either (exact or Monte Carlo sign-flip)."""
    rng = np.random.default_rng(20261127 + n)
    draws = 1000 if n <= 20 else 600
    data = rng.exponential(1.0, size=(draws, n)) * rng.choice([-1.0, 1.0], size=(draws, n))
    if n <= 20:
        p_values = np.array([sign_flip_test(list(row)).p_value for row in data])
    else:
        p_values = monte_carlo_p_values(data, resamples=2_000)
        assert sign_flip_test(list(data[0])).exact is False
    rate = float(np.mean(p_values < 0.05))
    error = math.sqrt(0.05 * 0.95 / draws)
    assert rate <= 0.05 + 3 * error
    if n >= 10:
        assert rate >= 0.05 - 3 * error - (0.002 if n == 10 else 0.0)  # 25 of 512 patterns reject at n = 10


# -- the interval, power, multiplicity ---------------------------------------------------------------------------------
def test_the_interval_of_one_stratum_is_the_paired_t_interval():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2)
    differences = rng.normal(0.1, 1.0, 30)
    low, high = stratified_t_interval({"": list(differences / 30)})
    reference = stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    assert (low, high) == (pytest.approx(reference.low, rel=1e-8), pytest.approx(reference.high, rel=1e-8))


def test_the_stratified_interval_matches_welch_for_two_strata():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(4)
    a, b = rng.normal(0, 1, 12), rng.normal(0, 2, 20)
    # D = mean(a) - mean(b): strata of a / 12 and -b / 20; Satterthwaite's df is Welch's
    low, high = stratified_t_interval({"a": list(a / 12), "b": list(-b / 20)})
    reference = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (low, high) == (pytest.approx(reference.low, rel=1e-8), pytest.approx(reference.high, rel=1e-8))


def test_holm_and_bonferroni():
    p = [0.01, 0.04, 0.03, 0.2]
    assert adjust(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert adjust(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.8])
    assert adjust(p, "none") == p


def test_minimum_detectable_effect_of_mcnemar():
    # Connor (1987) with the one-sided quantile: 400 pairs, 10% discordant, 0.05, 80% power: about 3.9 points; the
    # two-sided 0.05 (0.025 one-sided) figure is about 4.4 points
    assert mde_counts(400, 40, 0.05) == pytest.approx(0.039, abs=0.001)
    assert mde_counts(400, 40, 0.025) == pytest.approx(0.044, abs=0.001)
    assert mde_counts(400, 0, 0.05) > mde_counts(4000, 0, 0.05)
    assert mde_counts(3, 0, 0.05) is None  # three cases cannot show anything


# -- declarations ------------------------------------------------------------------------------------------------------
def test_every_shipped_declaration_loads_and_a_broken_one_says_why(tmp_path):
    for path in sorted((ROOT / "suites").glob("*/aggregates.yaml")):
        assert load_design(path).figures
    with pytest.raises(AggregatesError, match="cycle"):
        parse({"figures": {"a": {"mean": ["b"]}, "b": {"mean": ["a"]}}})
    broken = tmp_path / "aggregates.yaml"
    broken.write_text("figures: {x: {median: [a]}}")
    with pytest.raises(AggregatesError, match="aggregates.yaml.*expected one of"):
        load_design(broken)


class _Suite:
    def __init__(self, aggregate):
        self.aggregate = aggregate


def _compare(aggregate, design, before, now, progress=None):
    def summary_of(records):
        return summarize(records, {"s": SuiteInput(_Suite(aggregate), "S", {}, None, design)},
                         header={"backend": "test"})

    baseline = results_file.read(json.loads(json.dumps(document(build(summary_of(before), before)))))
    return compare(summary_of(now), now, baseline, "base.json", progress=progress)


def _bfcl_records(outcomes: dict[str, list[bool]]) -> list[CaseRecord]:
    records, order = [], 0
    for category, passed in outcomes.items():
        for index, ok in enumerate(passed):
            if category.startswith("memory_"):
                case_id = f"{category}_{index}-customer-{index}"
            else:
                case_id = f"{category}_{index}" if not category.startswith("live_") else f"{category}_{index}-0-0"
            records.append(CaseRecord(suite="s", case_id=case_id, category=category, passed=ok, order=order,
                                      error_type=None if ok else "wrong"))
            order += 1
    return records


def test_every_bfcl_headline_figure_carries_a_p_value():
    from suites.bfcl.scorer.aggregation import UPSTREAM_COUNTS, aggregate

    design = load_design(ROOT / "suites" / "bfcl" / "aggregates.yaml")
    rng = random.Random(9)
    before = {c: [rng.random() < 0.7 for _ in range(12)] for c in UPSTREAM_COUNTS}
    now = {c: [ok if rng.random() < 0.8 else not ok for ok in outcomes] for c, outcomes in before.items()}
    comparison = compare_ = _compare(aggregate, design, _bfcl_records(before), _bfcl_records(now))
    metrics = {key[1]: delta.paired for key, delta in comparison.suites["s"].metrics.items()}
    for name in ("non_live_ast", "live_ast", "irrelevance_detection", "multi_turn", "agentic", "overall_official",
                 "simple", "memory", "web_search", "relevance_detection", "simple_python"):
        paired = metrics[name]
        assert paired.p_value is not None and 0 < paired.p_value <= 1, (name, paired.note)
        assert paired.delta_interval95 is not None and paired.p_worse is not None
    assert metrics["overall_official"].test.startswith("stratified sign-flip")
    # the Overall without web search is declared too (aggregates.yaml): the same test, its own weights
    assert metrics["overall_without_web_search"].test.startswith("stratified sign-flip")
    assert "clusters" in metrics["multi_turn"].test  # the four variants of a base conversation flip together
    for name in ("overall_official", "non_live_ast", "live_ast"):
        assert metrics[name].p_adjusted is not None  # over enough cases to reach the level: in the family
    assert compare_.family >= 4


def test_a_declaration_that_does_not_reproduce_the_figure_gives_no_test():
    from suites.bfcl.scorer.aggregation import aggregate

    design = load_design(ROOT / "suites" / "bfcl" / "aggregates.yaml")
    # only live_simple ran: the official Live weighs the other live categories' upstream counts at 0
    before = _bfcl_records({"live_simple": [True] * 8 + [False] * 4})
    now = _bfcl_records({"live_simple": [True] * 6 + [False] * 6})
    live = next(d.paired for k, d in _compare(aggregate, design, before, now).suites["s"].metrics.items()
                if k[1] == "live_ast")
    # the swap test (stats/swap.py) takes it instead, the note saying why the declaration did not
    assert live.test.startswith("paired permutation (swap)") and "does not reproduce the figure" in live.note


def test_apibank_rouge_and_taskbench_f1s_carry_a_p_value():
    from suites.apibank.scorer.aggregation import aggregate as apibank
    from suites.taskbench.scorer.aggregation import aggregate as taskbench

    rng = random.Random(4)

    def dialog(scores):
        return [CaseRecord(suite="s", case_id=f"{level}-{i}#{i}", category=level, passed=s >= 0.2, order=i,
                           counts={"rouge_l": s, "kind": 0, "level_files": 214 if level == "level_1" else 50})
                for level in ("level_1", "level_2") for i, s in enumerate(scores)]

    before = [round(rng.random(), 4) for _ in range(15)]
    now = [round(min(1.0, s + rng.uniform(-0.1, 0.3)), 4) for s in before]
    design = load_design(ROOT / "suites" / "apibank" / "aggregates.yaml")
    metrics = {k[1]: d.paired for k, d in _compare(apibank, design, dialog(before), dialog(now)).suites["s"]
               .metrics.items()}
    for name in ("level_1 dialog score (Table 9)", "level_2 dialog score (Table 9)",
                 "weighted dialog score (Table 9)"):
        assert metrics[name].p_value is not None, (name, metrics[name].note)

    def tasks(values):  # F1s that are all 0 or 1 in one run: still a mean over cases
        return [CaseRecord(suite="s", case_id=f"t{i}", category="huggingface", passed=v == 1.0, order=i,
                           keywords=("huggingface",), counts={"n_f1": v, "l_f1": v, "a_f1": v, "v_f1": v})
                for i, v in enumerate(values)]

    base = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    cand = [0.5, 0.25, 1.0, 0.8, 0.0, 0.4, 1.0, 0.9]
    metrics = {k[1]: d.paired for k, d in _compare(taskbench, None, tasks(base), tasks(cand)).suites["s"]
               .metrics.items()}
    f1s = [name for name in metrics if name.endswith("_f1")]
    assert f1s and all(metrics[name].p_value is not None for name in f1s), {n: metrics[n].note for n in f1s}


def test_rotbench_noise_levels_flip_together_and_the_mean_over_environments_is_tested():
    from suites.rotbench.scorer.aggregation import aggregate as rotbench

    design = load_design(ROOT / "suites" / "rotbench" / "aggregates.yaml")
    rng = random.Random(5)
    sizes = {"clean": 105, "slight": 210, "medium": 210, "heavy": 210, "union": 105}

    def run(shift):
        records = []
        for level, size in sizes.items():
            for index in range(size):
                ok = rng.random() < 0.7 - shift
                flag = 1.0 if ok else 0.0
                records.append(CaseRecord(suite="s", case_id=f"first_turn-{level}-{index}",
                                          category=f"first_turn_{level}", passed=ok, order=len(records),
                                          counts={"ts": flag, "pi": flag, "cf": flag}))
        return records

    metrics = {k[1]: d.paired for k, d in _compare(rotbench, design, run(0.0), run(0.1)).suites["s"].metrics.items()}
    mean = metrics["first_turn mean CF over environments"]
    assert mean.test.startswith("stratified sign-flip") and "105 clusters" in mean.test and mean.p_value < 0.05
    assert "105 clusters" in metrics["CF (all items)"].test  # a count over the noisy copies: clustered too
    assert metrics["first_turn_clean CF"].test == "exact McNemar"  # one copy per query: plain pairs


def test_westfall_young_on_one_figure_is_its_own_p_and_nested_figures_cost_nothing():
    from pytest_toolbench.stats.multiplicity import westfall_young

    rng = np.random.default_rng(11)
    figure = {f"u{i}": float(v) for i, v in enumerate(rng.normal(0.15, 1.0, 80))}
    alone = westfall_young([figure])[0]
    assert alone == pytest.approx(sign_flip_test(list(figure.values())).p_upper, abs=0.01)
    # the same units twice (an aggregate that is its only category): perfectly dependent, no penalty; Holm doubles
    twice = westfall_young([figure, {u: v / 2 for u, v in figure.items()}])
    assert twice == [pytest.approx(alone, abs=1e-12)] * 2
    assert adjust([alone, alone], "holm")[0] == pytest.approx(min(1.0, 2 * alone))


def test_westfall_young_controls_the_family_wise_error():
    from pytest_toolbench.stats.multiplicity import westfall_young

    rng = np.random.default_rng(12)
    misses = 0
    draws = 100
    for _ in range(draws):
        units = {f"u{i}": float(rng.exponential(1.0) * rng.choice([-1.0, 1.0])) for i in range(90)}
        categories = [{u: v for u, v in units.items() if int(u[1:]) % 3 == j} for j in range(3)]
        overall = {u: v / 3 for u, v in units.items()}
        misses += min(westfall_young(categories + [overall], resamples=499)) <= 0.05
    assert misses / draws <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws)
