"""Paired significance against a baseline (report/significance.py): each statistic against a reference, which figures
get which test, the gate with ``--toolbench-significance``, and what the reports show."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from pytest_toolbench.report import results_file
from pytest_toolbench.run.summary import SuiteInput
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import html, markdown, terminal
from pytest_toolbench.report.compare import compare, evaluate_gates
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.settings import ReportSettings
from pytest_toolbench.report.case_figures import case_figures
from pytest_toolbench.report.significance import MCNEMAR, SIGN_FLIP, paired_result
from pytest_toolbench.stats.intervals import newcombe_paired_interval
from pytest_toolbench.stats.mcnemar import mcnemar_exact_p
from pytest_toolbench.stats.swap import SWAP
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import summarize

from test_report import echo, run, worse  # noqa: F401  (the echo fixture and its runners)

# -- exact McNemar ---------------------------------------------------------------------------------------------------
#: (flipped to pass, flipped to fail) -> the two-sided exact binomial p-value, computed once with scipy 1.17.1
#: ``scipy.stats.binomtest(b, b + c, 0.5).pvalue`` (and checked against it below when scipy is installed).
MCNEMAR_REFERENCE = {
    (0, 0): 1.0,  # all pairs concordant: no evidence of a change
    (1, 0): 1.0,  # one discordant pair
    (0, 1): 1.0,
    (3, 12): 0.03515625,
    (6, 16): 0.052478790283203125,
    (0, 25): 5.960464477539063e-08,
    (180, 220): 0.05104022312914814,
    (1000, 1100): 0.03072070786424249,
}


@pytest.mark.parametrize("table", sorted(MCNEMAR_REFERENCE))
def test_mcnemar_matches_the_exact_binomial_test(table):
    assert mcnemar_exact_p(*table) == pytest.approx(MCNEMAR_REFERENCE[table], rel=1e-9)


def test_mcnemar_matches_scipy_on_random_tables():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(5)
    for _ in range(40):
        gained, lost = rng.randrange(0, 300), rng.randrange(0, 300)
        if gained + lost == 0:
            continue
        assert mcnemar_exact_p(gained, lost) == pytest.approx(stats.binomtest(gained, gained + lost, 0.5).pvalue,
                                                              rel=1e-9, abs=1e-300)


def test_mcnemar_large_n_is_exact_and_symmetric():
    # 20,000 discordant pairs: exact integer arithmetic, no overflow, and symmetric in the two directions
    assert mcnemar_exact_p(10_000, 10_000) == 1.0
    assert mcnemar_exact_p(9_700, 10_300) == mcnemar_exact_p(10_300, 9_700) < 3e-5


# -- Newcombe's paired interval ----------------------------------------------------------------------------------------
def test_newcombe_interval_matches_the_published_example():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8, complete response
    # before and after consolidation therapy (Cavo et al. 2012), table [[59, 6], [16, 80]]: the Newcombe
    # square-and-add interval is -0.0621 (95% CI -0.1186 to -0.0046) (also the R package contingencytables' test).
    low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert (low, high) == (pytest.approx(-0.1186, abs=5e-5), pytest.approx(-0.0046, abs=5e-5))


def test_newcombe_interval_all_concordant_and_one_discordant():
    low, high = newcombe_paired_interval(200, 0, 0, 200)  # no change at all: a symmetric interval around 0
    assert low == pytest.approx(-high) and low < 0 < high
    low, high = newcombe_paired_interval(400, 0, 0, 0)  # everything passes in both runs
    assert low < 0 <= high
    low, high = newcombe_paired_interval(199, 1, 0, 200)  # one case flipped to pass
    assert low < 0.0025 < high
    assert newcombe_paired_interval(0, 0, 0, 0) is None


def test_newcombe_interval_large_n_approaches_the_wald_interval():
    both, gained, lost, neither = 40_000, 1_500, 1_200, 57_300
    n = both + gained + lost + neither
    difference = (gained - lost) / n
    variance = ((gained + lost) / n - difference ** 2) / n  # the paired Wald interval's variance
    low, high = newcombe_paired_interval(both, gained, lost, neither)
    assert low == pytest.approx(difference - 1.959964 * variance ** 0.5, abs=2e-4)
    assert high == pytest.approx(difference + 1.959964 * variance ** 0.5, abs=2e-4)


# -- scores for the mean-valued figures ------------------------------------------------------------------------------------------------
def _scores(seed: int, n: int, shift: float) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    current = [rng.random() for _ in range(n)]
    baseline = [min(1.0, max(0.0, value - shift + rng.gauss(0, 0.1))) for value in current]
    return current, baseline


# -- which figure gets which test ------------------------------------------------------------------------------------
def toy_aggregate(results):
    """A suite with a count (accuracy), a per-category count, a mean over cases and a micro F1 (a formula)."""
    metrics = []
    if results:
        passed = sum(r.passed for r in results)
        metrics.append(Metric("accuracy", passed / len(results), passed, len(results), group="aggregate"))
        scores = [r.counts.get("score", 0.0) for r in results]
        metrics.append(Metric("mean score", sum(scores) / len(scores), None, len(scores), group="aggregate"))
        # a mean that also carries its sum as `correct` (TL-Training's mean reward), a plain number
        rewards = [1.0 if r.passed else -0.5 for r in results]
        metrics.append(Metric("mean reward", sum(rewards) / len(rewards), sum(rewards), len(rewards),
                              group="reward", unit=""))
        hit = sum(r.counts.get("hit", 0) for r in results)
        predicted = sum(r.counts.get("predicted", 0) for r in results)
        gold = sum(r.counts.get("gold", 0) for r in results)
        f1 = 2 * hit / (predicted + gold) if predicted + gold else None
        metrics.append(Metric("micro F1", f1, group="aggregate"))
    for category in ("a", "b"):
        rows = [r for r in results if r.category == category]
        passed = sum(r.passed for r in rows)
        metrics.append(Metric(category, passed / len(rows) if rows else None, passed if rows else None,
                              len(rows) if rows else None, group="category"))
    return metrics


class ToySuite:
    aggregate = staticmethod(toy_aggregate)


def toy_records(outcomes: list[bool], scores: list[float] | None = None) -> list[CaseRecord]:
    scores = scores or [1.0 if passed else 0.5 for passed in outcomes]
    return [CaseRecord(suite="toy", case_id=f"c{index}", category="a" if index % 2 else "b", passed=passed,
                       order=index, counts={"score": score, "hit": int(passed), "predicted": 1, "gold": 1 + index % 3})
            for index, (passed, score) in enumerate(zip(outcomes, scores))]


def toy_summary(records):
    return summarize(records, {"toy": SuiteInput(ToySuite, "a toy suite", {})},
                     header={"backend": "test"})


def toy_baseline(records) -> results_file.ResultsFile:
    return results_file.read(json.loads(json.dumps(document(build(toy_summary(records), records)))))


def test_counts_means_and_formulas_are_told_apart_by_the_suites_own_aggregation():
    records = toy_records([True, False, True, True])
    summary = toy_summary(records)
    figures = case_figures(toy_aggregate, [r for r in _results(records)], summary.suites[0].metrics)
    assert figures.counts[("aggregate", "accuracy")] == {"c0": True, "c1": False, "c2": True, "c3": True}
    assert figures.counts[("category", "a")] == {"c1": False, "c3": True}
    assert figures.means[("aggregate", "mean score")] == {"c0": 1.0, "c1": 0.5, "c2": 1.0, "c3": 1.0}
    assert figures.means[("reward", "mean reward")] == {"c0": 1.0, "c1": -0.5, "c2": 1.0, "c3": 1.0}
    assert "formula" in figures.untestable[("aggregate", "micro F1")]


def test_a_formula_is_not_mistaken_for_a_mean_when_every_case_is_perfect():
    # every case alone has micro F1 1.0, equal to the run's figure, yet micro F1 is no mean of cases
    records = [CaseRecord(suite="toy", case_id=f"c{i}", category="a", passed=True, order=i,
                          counts={"score": 1.0, "hit": 1, "predicted": 1, "gold": 1}) for i in range(5)]
    figures = case_figures(toy_aggregate, _results(records), toy_summary(records).suites[0].metrics)
    assert ("aggregate", "micro F1") in figures.untestable


def test_an_aggregation_that_cannot_take_one_case_gives_no_test():
    def fragile(results):
        if len(results) < 2:
            raise ZeroDivisionError("needs two cases")
        return toy_aggregate(results)

    records = toy_records([True, False])
    figures = case_figures(fragile, _results(records), toy_summary(records).suites[0].metrics)
    assert not figures.counts and not figures.means
    assert all("does not take one case alone" in note for note in figures.untestable.values())


def _results(records):
    return list(records)


def test_compare_attaches_the_paired_tests_to_each_figure():
    before = [True] * 30 + [False] * 10
    now = [True] * 22 + [False] * 8 + [True] * 2 + [False] * 8  # 8 flipped to fail, 2 flipped to pass
    baseline = toy_baseline(toy_records(before))
    current = toy_records(now)
    comparison = compare(toy_summary(current), current, baseline, "base.json")
    toy = comparison.suites["toy"]
    accuracy = toy.metrics[("aggregate", "accuracy")].paired
    assert accuracy.test == MCNEMAR and accuracy.pairs == 40
    assert (accuracy.flipped_to_fail, accuracy.flipped_to_pass) == (8, 2)
    assert accuracy.p_value == pytest.approx(mcnemar_exact_p(2, 8))
    assert accuracy.delta_interval95 == newcombe_paired_interval(22, 2, 8, 8)
    mean = toy.metrics[("aggregate", "mean score")].paired
    assert mean.test.startswith(SIGN_FLIP) and mean.pairs == 40 and (mean.flipped_to_fail, mean.flipped_to_pass) == (8, 2)
    formula = toy.metrics[("aggregate", "micro F1")].paired  # a formula: the swap test (stats/swap.py)
    assert formula.test.startswith(SWAP) and "formula" in formula.note and formula.delta_interval95 is None
    entry = next(m for m in toy.to_json()["metrics"] if m["name"] == "accuracy")
    assert entry["p_value"] == accuracy.p_value and entry["delta_interval95"] == list(accuracy.delta_interval95)
    assert (entry["flipped_to_fail"], entry["flipped_to_pass"]) == (8, 2)
    assert next(m for m in toy.to_json()["metrics"] if m["name"] == "micro F1")["p_value"] == formula.p_value


def test_a_run_over_part_of_the_baseline_is_compared_on_the_cases_in_both():
    baseline = toy_baseline(toy_records([False] + [True] * 9))
    current = toy_records([True] * 9)[1:]  # cases 1..8 of the baseline's 0..9
    comparison = compare(toy_summary(current), current, baseline, "base.json")
    suite = comparison.suites["toy"]
    found = suite.metrics[("aggregate", "accuracy")]
    # the baseline's figure over the same 8 cases (all passed there too), not its full 9/10
    assert found.baseline == 1.0 and found.baseline_full == 0.9 and found.delta == 0
    assert "same 8 cases" in found.basis
    assert found.paired.test == MCNEMAR and found.paired.pairs == 8
    assert suite.compared_cases == 8 and suite.baseline_cases == 10
    assert suite.coverage_text() == "compared on 8 of the baseline's 10 cases"


def test_cases_the_baseline_lacks_give_no_test():
    baseline = toy_baseline(toy_records([True] * 9))
    current = toy_records([True] * 10)  # one case more: the figure covers other cases
    comparison = compare(toy_summary(current), current, baseline, "base.json")
    paired = comparison.suites["toy"].metrics[("aggregate", "accuracy")].paired
    assert paired.test is None and "different cases" in paired.note


def test_a_baseline_without_case_records_gives_no_test():
    baseline = toy_baseline(toy_records([True] * 10))
    baseline = dataclasses.replace(baseline, cases=())
    current = toy_records([True] * 10)
    comparison = compare(toy_summary(current), current, baseline, "base.json")
    paired = comparison.suites["toy"].metrics[("aggregate", "accuracy")].paired
    assert paired.test is None and "no per-case records" in paired.note


def test_flips_follow_the_figures_direction():
    rate = ("aggregate", "ASR")
    from pytest_toolbench.report.case_figures import CaseFigures
    now = CaseFigures(counts={rate: {"a": True, "b": True, "c": False}})
    before = CaseFigures(counts={rate: {"a": False, "b": True, "c": False}})
    higher = paired_result(rate, now, before)
    lower = paired_result(rate, now, before, lower_is_better=True)  # an attack that starts succeeding: worse
    assert (higher.flipped_to_fail, higher.flipped_to_pass) == (0, 1)
    assert (lower.flipped_to_fail, lower.flipped_to_pass) == (1, 0)
    assert higher.delta_interval95 == lower.delta_interval95  # the interval is of current - baseline either way


# -- the gate ----------------------------------------------------------------------------------------------------------
@pytest.fixture
def no_swap_test(monkeypatch):
    """A swap test over budget: micro F1 stays without a paired test (the gate's untested path)."""
    monkeypatch.setattr("pytest_toolbench.stats.swap.SWAP_MAX_RECORDS", 0)


def _gates(now, before, max_drop, significance=None):
    baseline = toy_baseline(toy_records(before))
    current = toy_records(now)
    summary = toy_summary(current)
    comparison = compare(summary, current, baseline, "base.json", "holm")
    settings = ReportSettings(max_drop=max_drop, significance=significance, multiple="holm")
    return evaluate_gates(summary, comparison, settings), comparison


def test_a_drop_within_noise_passes_with_significance_and_misses_without(no_swap_test):
    before = [True] * 30 + [False] * 10
    now = [True] * 27 + [False] * 3 + [False] * 10  # 3 of 40 flipped to fail: 7.5 points, p = 0.25
    plain, _ = _gates(now, before, max_drop=2)
    assert any(not gate.passed and "accuracy fell 7.50 points" in gate.message for gate in plain)
    qualified, _ = _gates(now, before, max_drop=2, significance=0.05)
    assert not any(not gate.passed and "toy.accuracy" in gate.message for gate in qualified)
    noise = [gate for gate in qualified if gate.passed and "not significantly" in gate.message]
    # three discordant cases: the smallest one-sided p is 1/8, above the level, so the figure is outside the family
    assert noise and ("toy.accuracy fell 7.50 points, p=0.250; its test cannot reach level 0.05 on 40 pairs"
                      in noise[0].message)
    assert noise[0].gate == "--toolbench-max-drop 2 --toolbench-significance 0.05 --toolbench-multiple holm"
    # the other figures that fell: micro F1 has no paired test, so its drop alone misses the gate
    assert any(not gate.passed and "toy.micro F1" in gate.message for gate in qualified)


def test_a_significant_drop_misses_the_gate(no_swap_test):
    before = [True] * 40
    now = [False] * 12 + [True] * 28  # 12 of 40 flipped to fail: p = 2^-11
    results, _ = _gates(now, before, max_drop=2, significance=0.05)
    missed = [gate for gate in results if not gate.passed and "toy.accuracy" in gate.message]
    assert missed and "significant (exact McNemar p<0.001, one-sided p that it got worse holm-adjusted p<0.001, level 0.05)" in missed[0].message


def test_a_figure_without_a_paired_test_misses_unless_untested_drops_are_accepted(no_swap_test):
    before = [True] * 40
    now = [False] * 12 + [True] * 28
    results, _ = _gates(now, before, max_drop=2, significance=0.05)
    # "micro F1" is in the aggregate group, fell, and has no paired test
    micro = [gate for gate in results if "toy.micro F1" in gate.message]
    assert micro and not micro[0].passed and "no paired test can tell it from noise" in micro[0].message
    assert "--toolbench-accept-untested" in micro[0].message
    baseline = toy_baseline(toy_records(before))
    current = toy_records(now)
    summary = toy_summary(current)
    comparison = compare(summary, current, baseline, "base.json")
    accepted = evaluate_gates(summary, comparison, ReportSettings(max_drop=2, significance=0.05,
                                                                  accept_untested=True))
    micro = [gate for gate in accepted if "toy.micro F1" in gate.message]
    assert micro and micro[0].passed and "accepted by --toolbench-accept-untested" in micro[0].message


# -- reports -----------------------------------------------------------------------------------------------------------
def test_every_report_shows_p_and_the_interval_beside_the_delta(no_swap_test):
    before = [True] * 30 + [False] * 10
    now = [True] * 22 + [False] * 8 + [True] * 2 + [False] * 8
    baseline = toy_baseline(toy_records(before))
    current = toy_records(now)
    summary = toy_summary(current)
    comparison = compare(summary, current, baseline, "base.json", "holm")
    outcome = RunOutcome(comparison=comparison)
    report = build(summary, current, outcome)
    p_text = f"p={mcnemar_exact_p(2, 8):.3f}"
    lines = "\n".join(terminal.render(report))
    assert "paired tests: p adj. (the one-sided p that it got worse, adjusted over the gated family)" in lines
    assert "p adj.: the one-sided p-value that the figure got worse, holm correction over the" in lines
    accuracy = comparison.suites["toy"].metrics[("aggregate", "accuracy")].paired
    assert accuracy.p_adjusted is not None  # a member of the family: the decision columns are the adjusted ones
    adjusted_p = f"adj p={accuracy.p_adjusted:.3f}"
    low, high = accuracy.delta_interval_adjusted
    adjusted_ci = f"[{100 * low:+.2f}, {100 * high:+.2f}]"
    assert low < -0.2972 and high > 0.0069  # wider than the unadjusted 95% interval
    row = next(line for line in lines.splitlines() if line.strip().startswith("accuracy"))
    assert "-15.00" in row and adjusted_p in row and adjusted_ci + "adj" in row
    assert p_text not in row and "[-29.72, +0.69]" not in row  # the unadjusted ones are not a decision column
    assert "p n/a" in next(line for line in lines.splitlines() if line.strip().startswith("micro F1"))
    assert "p n/a (micro F1): " in lines  # the footnote names its figure
    text = markdown.render(report)
    assert f"| -15.00 | {adjusted_p[6:]} | {adjusted_ci} | " in text
    page = html.summary_html(report)
    assert f">{adjusted_p[6:]}</td>" in page and adjusted_ci in page and 'title="n/a: not a count' in page
    assert f"unadjusted: p (two-sided) {p_text[2:]}, 95% interval [-29.72, +0.69]" in page  # the detail view
    body = document(report)
    metric = next(m for m in body["report"]["baseline"]["suites"]["toy"]["metrics"] if m["name"] == "accuracy")
    assert set(metric) >= {"p_value", "p_adjusted", "p_floor", "mde80", "delta_interval95", "delta_interval_adjusted",
                           "power", "flipped_to_fail", "flipped_to_pass"}
    assert metric["p_adjusted"] >= metric["p_worse"] and metric["mde80"] > 0
    assert metric["p_floor"] == 0.5 ** 10
    assert metric["power"]["drop"] == 0.05 and metric["power"]["flip_rate"] == 2 * 2 / 40  # flips both ways


def test_significance_option_end_to_end(echo):  # noqa: F811
    run(echo, "--toolbench-json", "gold.json")
    result = worse(echo, "--toolbench-json", "worse.json", "--toolbench-baseline", "reports/gold.json",
                   "--toolbench-max-drop", "1", "--toolbench-significance", "0.05")
    # 2 of 3 cases flipped to fail: p = 0.5, nothing is significant on three cases, so the gate passes
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    row = next(line for line in out.splitlines() if line.strip().startswith("overall"))
    assert "33.33%          1/3     [6.1–79.2]   -66.67  unadj. p=0.500 [-93.85, +5.86]" in row
    # three cases: even three flips give a one-sided p of 1/8, so no figure can reach 0.05 and the family is empty
    assert ("toolbench gate passed: worse by more than 1 points but not significantly at level 0.05 (holm "
            "correction over the 0 distinct gated figures that can move whose paired test can reach the level) "
            "(passed): echo.long fell "
            "100.00 points, p=1.000; its test cannot reach level 0.05 on 1 pairs") in out
    assert "toolbench gate passed: no aggregate or category figure got significantly worse" in out
    saved = json.loads((echo.path / "reports" / "worse.json").read_text())
    overall = next(m for m in saved["report"]["baseline"]["suites"]["echo"]["metrics"] if m["name"] == "overall")
    assert (overall["p_value"], overall["flipped_to_fail"], overall["flipped_to_pass"]) == (0.5, 2, 0)
    assert overall["p_adjusted"] is None and saved["report"]["baseline"]["multiple"]["family"] == 0
    assert overall["p_worse"] == 0.25 and overall["mde80"] is None
    assert overall["test"] == MCNEMAR


@pytest.mark.parametrize("args, message", [
    (["--toolbench-significance", "0.05"], "--toolbench-significance needs --toolbench-max-drop"),
    (["--toolbench-baseline", "reports/gold.json", "--toolbench-max-drop", "1", "--toolbench-significance", "5"],
     "--toolbench-significance 5: the level must be between 0 and 1"),
])
def test_significance_option_usage_errors(echo, args, message):  # noqa: F811
    run(echo, "--toolbench-json", "gold.json")
    result = run(echo, *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert "Traceback" not in result.stderr.str()


def test_westfall_young_on_request_judges_the_family_jointly(no_swap_test):
    before = [True] * 40
    now = [False] * 12 + [True] * 28  # 12 of 40 flipped to fail
    baseline = toy_baseline(toy_records(before))
    current = toy_records(now)
    summary = toy_summary(current)
    assert compare(summary, current, baseline, "base.json").multiple == "holm" == ReportSettings().multiple
    comparison = compare(summary, current, baseline, "base.json", "westfall-young")
    results = evaluate_gates(summary, comparison, ReportSettings(max_drop=2, significance=0.05,
                                                                 multiple="westfall-young"))
    missed = [gate for gate in results if not gate.passed and "toy.accuracy" in gate.message]
    assert missed and "westfall-young-adjusted p<0.001" in missed[0].message
    assert missed[0].gate.endswith("--toolbench-multiple westfall-young")
