"""Is a change against the baseline real? Paired tests on the per-case outcomes of the two runs (pure functions).

Which test a figure gets is decided by the suite's own aggregation, never guessed from its name: each case of both
runs is aggregated on its own (``aggregate([case])``), and the figure is

- a **count of cases** when every case alone gives it ``0/1`` or ``1/1`` (or leaves it out, ``0/0``) and those add
  up to the run's ``correct/total``: the figure is then exactly the share of its cases that succeed, and it gets
  the exact McNemar test (a two-sided binomial test on the discordant pairs) and Newcombe's hybrid-score interval
  for the difference of paired proportions (Newcombe 1998, *Statistics in Medicine* 17:2635-2650, method 10);
- a **mean over cases** (a mean ROUGE-L, a mean F1 per case) when every case alone gives it a value and the mean of
  those values is the run's figure: it gets a paired bootstrap over cases (:data:`BOOTSTRAP_RESAMPLES` resamples,
  seed :data:`BOOTSTRAP_SEED`, Python's own Mersenne Twister, so the figures are the same on every machine);
- anything else (micro F1 over pooled counts, a mean of category accuracies, an official weighted formula): no
  test, reported as n/a with the reason, rather than a test that does not fit.

A test needs the same cases behind the figure in both runs (the case ids, and for a count which cases the figure
covers); otherwise it is n/a too.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from .stats import Z95, wilson_interval

#: Paired-bootstrap settings for mean-valued figures (documented in the README; changing them changes the p-values).
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261126

MCNEMAR = "exact McNemar"
BOOTSTRAP = "paired bootstrap"

_TOLERANCE = 1e-9

#: One line every report gives beside the p-values.
PAIRED_TESTS_NOTE = (f"p and [95% interval of the delta] from the cases of both runs: {MCNEMAR} test with Newcombe's "
                     f"paired interval for counts of cases, {BOOTSTRAP} ({BOOTSTRAP_RESAMPLES} resamples, seed "
                     f"{BOOTSTRAP_SEED}) for means over cases; 'p n/a' for a formula over several counts")


#: The ``test_note`` of a figure tested over ``--toolbench-repeat`` samples.
REPEATED_NOTE = "over each case's mean across its repeated samples (a count: its pass rate)"


# -- the statistics --------------------------------------------------------------------------------------------------
def binomial_two_sided_half(successes: int, trials: int) -> float:
    """The two-sided exact binomial p-value for ``successes`` of ``trials`` under p = 1/2 (the exact McNemar test on
    discordant pairs): twice the smaller tail, at most 1. The tail is summed from its largest term down with the
    ratio ``P(k-1) / P(k) = k / (n-k+1)``, starting from ``P(low)`` in log space, so any n costs O(low) float steps
    and keeps about 12 significant digits."""
    if trials <= 0:
        return 1.0
    low = min(successes, trials - successes)
    if 2 * low == trials:
        return 1.0
    term = math.exp(math.lgamma(trials + 1) - math.lgamma(low + 1) - math.lgamma(trials - low + 1)
                    - trials * math.log(2))
    tail = 0.0
    for k in range(low, -1, -1):
        tail += term
        if term < tail * 1e-17:
            break
        term *= k / (trials - k + 1)
    return min(1.0, 2 * tail)


def mcnemar_exact_p(flipped_to_pass: int, flipped_to_fail: int) -> float:
    """Exact McNemar: the discordant pairs split as a fair coin under "no change"."""
    return binomial_two_sided_half(flipped_to_pass, flipped_to_pass + flipped_to_fail)


def newcombe_paired_interval(both: int, only_current: int, only_baseline: int, neither: int,
                             z: float = Z95) -> tuple[float, float] | None:
    """95% interval of ``p_current - p_baseline`` for paired proportions: Newcombe's method 10 (the square-and-add of
    the two Wilson intervals, with the correlation correction phi); ``None`` over no pairs."""
    n = both + only_current + only_baseline + neither
    if n <= 0:
        return None
    current, baseline = both + only_current, both + only_baseline
    p1, p2 = current / n, baseline / n
    l1, u1 = wilson_interval(current, n, z)
    l2, u2 = wilson_interval(baseline, n, z)
    phi = 0.0
    margins = (both + only_current) * (only_baseline + neither) * (both + only_baseline) * (only_current + neither)
    if margins > 0:
        cross = both * neither - only_current * only_baseline
        corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = corrected / math.sqrt(margins)
    difference = p1 - p2
    low = difference - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = difference + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high)


def paired_bootstrap(current: Sequence[float], baseline: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED) -> tuple[float, tuple[float, float]] | None:
    """Resample the cases (with replacement, the pairs kept together) and read the mean difference ``current -
    baseline`` off each resample: the two-sided p-value is the share of resampled differences, centred on the
    observed one, at least as far from 0 as the observed one (``(1 + count) / (1 + resamples)``); the interval is
    the 2.5th and 97.5th percentiles. ``None`` over no pairs."""
    n = len(current)
    if n == 0 or n != len(baseline):
        return None
    differences = [a - b for a, b in zip(current, baseline)]
    observed = sum(differences) / n
    if all(abs(d) <= _TOLERANCE for d in differences):
        return 1.0, (0.0, 0.0)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    extreme = sum(1 for m in means if abs(m - observed) >= abs(observed) - _TOLERANCE)
    p_value = min(1.0, (1 + extreme) / (1 + resamples))
    return p_value, (_percentile(means, 0.025), _percentile(means, 0.975))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# -- per-case outcomes, from the suite's own aggregation -------------------------------------------------------------
MetricKey = tuple[str, str]  # (group, name)


@dataclass(frozen=True)
class CaseFigures:
    """What each figure is made of, case by case: for a count, the cases it covers and whether each counts as
    ``correct``; for a mean, each case's value; for anything else the reason there is no test."""

    counts: Mapping[MetricKey, Mapping[str, bool]] = field(default_factory=dict)
    means: Mapping[MetricKey, Mapping[str, float]] = field(default_factory=dict)
    untestable: Mapping[MetricKey, str] = field(default_factory=dict)
    #: from ``--toolbench-repeat`` samples: ``means`` then holds, for a count, each case's pass rate over its samples
    repeated: bool = False


def _get(metric: Any, name: str, default: Any = None) -> Any:
    if isinstance(metric, Mapping):
        return metric.get(name, default)
    return getattr(metric, name, default)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                 figures: Sequence[Any]) -> CaseFigures:
    """Split each of ``figures`` (the run's Metrics) into per-case outcomes by aggregating each of ``results`` (the
    run's CaseResults) alone; see the module docstring for when a figure is a count, a mean, or neither.
    Results that carry a ``sample`` (``--toolbench-repeat``) are split per sample index first
    (:func:`repeated_case_figures`)."""
    if any(getattr(result, "sample", None) is not None for result in results):
        return repeated_case_figures(aggregate, results, figures)
    return _single_case_figures(aggregate, results, figures)


def _single_case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                         figures: Sequence[Any]) -> CaseFigures:
    wanted = {(_get(m, "group", "") or "", _get(m, "name")): m for m in figures}
    per_case: dict[MetricKey, list[tuple[str, float | None, float | None, float | None]]] = {k: [] for k in wanted}
    try:
        for result in results:
            alone = {(_get(m, "group", "") or "", _get(m, "name")): m for m in aggregate([result])}
            for key in wanted:
                metric = alone.get(key)
                if metric is None:
                    continue
                per_case[key].append((result.case_id, _number(_get(metric, "correct")),
                                      _number(_get(metric, "total")), _number(_get(metric, "value"))))
    except Exception as error:  # an aggregation that cannot take one case alone: no test, and the reason
        reason = f"n/a: the suite's aggregation does not take one case alone ({type(error).__name__})"
        return CaseFigures(untestable={key: reason for key in wanted})
    counts: dict[MetricKey, dict[str, bool]] = {}
    means: dict[MetricKey, dict[str, float]] = {}
    untestable: dict[MetricKey, str] = {}
    for key, metric in wanted.items():
        rows = per_case[key]
        outcome = _as_count(metric, rows)
        if outcome is not None:
            counts[key] = outcome
            continue
        values = _as_mean(metric, rows)
        if values is not None:
            means[key] = values
            continue
        untestable[key] = "n/a: not a count or a mean of cases (a formula over several counts or figures)"
    return CaseFigures(counts, means, untestable)


def repeated_case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                          figures: Sequence[Any]) -> CaseFigures:
    """Per-case figures of a run with ``--toolbench-repeat`` samples: each sample index is split into per-case
    outcomes against its own aggregation, then each case's outcomes are averaged over its samples. A count becomes
    the case's pass rate (a mean over cases, the paired bootstrap's input: McNemar needs one binary outcome per
    case), a mean the mean of the case's values. A figure that is not a count (or not a mean) in every sample has no
    test."""
    by_sample: dict[int, list[Any]] = {}
    for result in results:
        by_sample.setdefault(getattr(result, "sample", None) or 0, []).append(result)
    try:
        split = [_single_case_figures(aggregate, part, aggregate(part)) for _, part in sorted(by_sample.items())]
    except Exception as error:  # noqa: BLE001 - as in case_figures: no test, and the reason
        reason = f"n/a: the suite's aggregation does not take one sample alone ({type(error).__name__})"
        return CaseFigures(untestable={(_get(m, "group", "") or "", _get(m, "name")): reason for m in figures},
                           repeated=True)
    means: dict[MetricKey, dict[str, float]] = {}
    untestable: dict[MetricKey, str] = {}
    for metric in figures:
        key = (_get(metric, "group", "") or "", _get(metric, "name"))
        if all(key in part.counts for part in split):
            per_case = [{case_id: float(passed) for case_id, passed in part.counts[key].items()} for part in split]
        elif all(key in part.means for part in split):
            per_case = [dict(part.means[key]) for part in split]
        else:
            untestable[key] = next((part.untestable[key] for part in split if key in part.untestable),
                                   "n/a: not a count or a mean of cases in every sample")
            continue
        values: dict[str, list[float]] = {}
        for part in per_case:
            for case_id, value in part.items():
                values.setdefault(case_id, []).append(value)
        means[key] = {case_id: sum(v) / len(v) for case_id, v in values.items()}
    return CaseFigures(means=means, untestable=untestable, repeated=True)


def _as_rates(key: MetricKey, figures: CaseFigures) -> CaseFigures:
    """A plain run's count as per-case rates (1.0 or 0.0), to pair it with a repeated run's pass rates."""
    if key not in figures.counts:
        return figures
    rates = {case_id: float(passed) for case_id, passed in figures.counts[key].items()}
    return replace(figures, means={**figures.means, key: rates})


def _as_count(metric: Any, rows: Sequence[tuple[str, float | None, float | None, float | None]]
              ) -> dict[str, bool] | None:
    correct, total, value = (_number(_get(metric, k)) for k in ("correct", "total", "value"))
    if value is None or correct is None or total is None or not total or (_get(metric, "unit", "%") or "") != "%":
        return None
    if abs(value - correct / total) > _TOLERANCE:
        return None
    outcome: dict[str, bool] = {}
    for case_id, case_correct, case_total, _ in rows:
        if not case_total and not case_correct:  # 0/0 or no counts: the figure does not cover this case
            continue
        if case_total is None or case_correct is None:
            return None
        if case_total != 1 or case_correct not in (0.0, 1.0):
            return None
        outcome[case_id] = case_correct == 1.0
    if len(outcome) != total or sum(outcome.values()) != correct:
        return None
    return outcome


def _as_mean(metric: Any, rows: Sequence[tuple[str, float | None, float | None, float | None]]
             ) -> dict[str, float] | None:
    # The figure must say over how many cases it is a mean (``total``, no ``correct``), and each case alone must be
    # a mean over that one case: a value that merely equals the mean (every case perfect) proves nothing.
    # A mean may also carry its sum as ``correct`` (TL-Training's mean reward: sum / n), then each case's too.
    value, total = _number(_get(metric, "value")), _number(_get(metric, "total"))
    correct = _get(metric, "correct")
    if value is None or total is None:
        return None
    if correct is not None and (_number(correct) is None or abs(_number(correct) - value * total) > 1e-6):
        return None
    values: dict[str, float] = {}
    for case_id, case_correct, case_total, case_value in rows:
        if case_value is None and not case_total:
            continue
        if case_value is None or case_total != 1:
            return None
        if (case_correct is None) != (correct is None) or (case_correct is not None
                                                            and abs(case_correct - case_value) > 1e-9):
            return None
        values[case_id] = case_value
    if not values or total != len(values):
        return None
    if abs(sum(values.values()) / len(values) - value) > 1e-7:
        return None
    return values


# -- one compared figure -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedResult:
    """The paired test of one figure against the baseline. ``test`` is None when none applies (``note`` says why).

    ``flipped_to_fail`` / ``flipped_to_pass``: for a count, the cases whose outcome got worse / better (honouring the
    figure's direction: for a lower-is-better rate a case that starts counting got worse); for a mean, the cases
    whose value fell / rose in that sense."""

    test: str | None
    note: str = ""
    pairs: int = 0
    p_value: float | None = None
    delta_interval95: tuple[float, float] | None = None
    flipped_to_fail: int | None = None
    flipped_to_pass: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "test_note": self.note, "pairs": self.pairs, "p_value": self.p_value,
                "delta_interval95": list(self.delta_interval95) if self.delta_interval95 else None,
                "flipped_to_fail": self.flipped_to_fail, "flipped_to_pass": self.flipped_to_pass}


NOT_TESTED = PairedResult(None, "n/a")


def paired_result(key: MetricKey, current: CaseFigures, baseline: CaseFigures, lower_is_better: bool = False
                  ) -> PairedResult:
    """The test for figure ``key`` given both runs' per-case figures. When either run has ``--toolbench-repeat``
    samples, a count is compared as per-case pass rates by the paired bootstrap."""
    if current.repeated or baseline.repeated:
        current, baseline = _as_rates(key, current), _as_rates(key, baseline)
        if key in current.means and key in baseline.means:
            tested = _bootstrap_result(current.means[key], baseline.means[key], lower_is_better)
            return replace(tested, note=REPEATED_NOTE) if tested.test is not None else tested
    if key in current.counts and key in baseline.counts:
        now, before = current.counts[key], baseline.counts[key]
        if set(now) != set(before):
            return PairedResult(None, "n/a: the figure covers different cases in the two runs")
        table = {(a, b): 0 for a in (True, False) for b in (True, False)}
        for case_id, outcome in now.items():
            table[(outcome, before[case_id])] += 1
        gained, lost = table[(True, False)], table[(False, True)]
        interval = newcombe_paired_interval(table[(True, True)], gained, lost, table[(False, False)])
        worse, better = (gained, lost) if lower_is_better else (lost, gained)
        return PairedResult(MCNEMAR, "", len(now), mcnemar_exact_p(gained, lost), interval, worse, better)
    if key in current.means and key in baseline.means:
        return _bootstrap_result(current.means[key], baseline.means[key], lower_is_better)
    note = current.untestable.get(key) or baseline.untestable.get(key)
    if note is None:
        note = "n/a: a count in one run and a mean in the other"
    return PairedResult(None, note)


def _bootstrap_result(now: Mapping[str, float], before: Mapping[str, float], lower_is_better: bool) -> PairedResult:
    if set(now) != set(before):
        return PairedResult(None, "n/a: the figure covers different cases in the two runs")
    ids = sorted(now)
    tested = paired_bootstrap([now[i] for i in ids], [before[i] for i in ids])
    if tested is None:
        return PairedResult(None, "n/a: no cases")
    rose = sum(1 for i in ids if now[i] > before[i] + _TOLERANCE)
    fell = sum(1 for i in ids if now[i] < before[i] - _TOLERANCE)
    worse, better = (rose, fell) if lower_is_better else (fell, rose)
    return PairedResult(BOOTSTRAP, "", len(ids), tested[0], tested[1], worse, better)


def format_test(result: PairedResult | None, unit: str = "%") -> str:
    """``p=0.031 [-4.1, -0.3]`` beside a delta (interval in points for a percentage), or ``p n/a``."""
    if result is None or result.test is None or result.p_value is None:
        return "p n/a"
    return f"{p_text(result.p_value)} {format_delta_interval(result.delta_interval95, unit)}".rstrip()


def p_text(p_value: float | None) -> str:
    """``p=0.031``, ``p<0.001`` or ``p n/a``."""
    shown = format_p(p_value)
    return "p n/a" if p_value is None else (f"p{shown}" if shown.startswith("<") else f"p={shown}")


def format_p(p_value: float | None) -> str:
    if p_value is None:
        return "n/a"
    if p_value < 0.001:
        return "<0.001"
    return f"{p_value:.3f}"


def format_delta_interval(interval: tuple[float, float] | None, unit: str = "%") -> str:
    if interval is None:
        return ""
    scale, digits = (100, 2) if unit == "%" else (1, 3)
    return f"[{scale * interval[0]:+.{digits}f}, {scale * interval[1]:+.{digits}f}]"
