"""The gated family of a comparison: which figures it holds (Tarone's filter, one test per distinct set of
contributions), their adjusted p-values (``--toolbench-multiple``), simultaneous intervals, minimum detectable
effects and power (the statistics are :mod:`pytest_toolbench.stats.multiplicity` and :mod:`~pytest_toolbench.stats.power`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..stats.multiplicity import adjust, level_for_power, simultaneous_confidence, westfall_young
from ..stats.power import background_flips, mde_counts, mde_sign_flip, power_counts, power_sign_flip
from ..stats.swap import SWAP
from .comparison import POWER_DROP, Comparison, gated
from .significance import PairedResult, interval_at


def adjust_family(comparison: Comparison, method: str, alpha: float) -> None:
    """The family is every gated figure of the run that can move and whose paired test, on its pairs, can give a
    one-sided p-value at or below ``alpha`` (whatever its delta: it is fixed before the gate looks at any drop). A
    figure no unit of which differs between the runs (0 vs 0, identical in both runs for every case) cannot move,
    and one whose test cannot reach the level (a handful of discordant cases) could never miss the gate: leaving
    them out keeps the family-wise error at ``alpha`` (Tarone 1990, *Biometrics* 46:515: the tests that can reject
    are the family; Holm's closure holds over them). Figures whose tests are the same test (the same units with
    proportional contributions, e.g. a one-category aggregate and its category, or BFCL's Overall and its
    renormalised version on a run where only some components ran) count once. Each member gets ``p_adjusted``,
    its one-sided p that it got worse adjusted by ``method``, and the simultaneous interval of the family
    (Bonferroni, each at 1 - ``alpha`` / family); every tested gated figure gets ``mde80`` and its power against a
    drop of :data:`POWER_DROP` at the observed flip rate, at the per-figure level (``alpha`` / family size under a
    correction). ``westfall-young`` needs every member's per-unit contributions: when a member is swap-tested it
    is refused with the reason (``comparison.multiple_refused``) and Holm is applied, as the reports say."""
    tested = [(suite, key) for suite, c in comparison.suites.items() for key, m in c.metrics.items()
              if gated(m) and m.paired is not None and m.paired.test and m.paired.p_value is not None
              and m.paired.pairs > 0]
    paired = {(s, k): comparison.suites[s].metrics[k].paired for s, k in tested}
    live = [(s, k) for s, k in tested if paired[(s, k)].live]
    comparison.multiple_requested = method
    comparison.multiple_refused = ""
    if method == "westfall-young":
        swapped = [f"{s}.{k[1]}" for s, k in live if paired[(s, k)].test.startswith(SWAP)]
        if swapped:
            comparison.multiple_refused = (
                f"westfall-young refused: {', '.join(swapped)} "
                f"{'is' if len(swapped) == 1 else 'are'} tested by swapping the runs' records, which gives no "
                "per-unit contributions to flip jointly with the other figures; Holm's correction applied instead "
                "(declare such figures in the suite's aggregates.yaml to make them sign-flip tested)")
            method = "holm"
    if method == "westfall-young":  # the joint resampling weighs each test by what it can reach: no Tarone filter
        family = list(live)
    else:
        family = [(s, k) for s, k in live if (paired[(s, k)].p_floor or 0.0) <= alpha + 1e-15]
    # one test per distinct set of (proportional) contributions
    groups: dict[Any, list[tuple[str, Any]]] = {}
    for suite, key in family:
        groups.setdefault(_test_identity(suite, key, comparison), []).append((suite, key))
    members = list(groups.values())
    if method == "westfall-young":
        oriented = []
        for group in members:
            suite, key = group[0]
            metric = comparison.suites[suite].metrics[key]
            sign = 1.0 if metric.better == "lower" else -1.0  # positive: worse
            oriented.append({f"{suite}\x1f{unit}": sign * value for unit, value in metric.paired.units})
        group_p = westfall_young(oriented)
    else:
        group_p = adjust([max(worse_p(paired[m]) for m in group) for group in members], method)
    adjusted = {m: p for group, p in zip(members, group_p) for m in group}
    size = len(members)
    level = level_for_power(alpha, "holm" if method == "westfall-young" else method, size)
    confidence = simultaneous_confidence(alpha, method, size)
    for suite, key in tested:
        metric = comparison.suites[suite].metrics[key]
        result = metric.paired
        mde = _mde(result, level)
        power, flips = _power(result, level)
        in_family = (suite, key) in adjusted
        interval = interval_at(result, confidence) if in_family else None
        note = ""
        if result.ran_weight is not None and result.ran_weight < 1 - 1e-9:
            scale = 100 if metric.unit == "%" else 1
            note = (f"{metric.name} counts the components that did not run as 0, so the ones that ran weigh "
                    f"{result.ran_weight:.3g} of it: mde80 and power are in points of {metric.name}"
                    + (f"; mde80 {scale * mde:.2f} is {scale * mde / result.ran_weight:.2f} points of the weighted "
                       "mean of the components that ran" if mde is not None else ""))
        comparison.suites[suite].metrics[key] = replace(metric, paired=replace(
            result, p_adjusted=adjusted.get((suite, key)), mde80=mde, power=power,
            power_drop=POWER_DROP if power is not None else None, flip_rate=flips,
            delta_interval_adjusted=interval, adjusted_confidence=confidence if in_family else None,
            power_note=note))
    comparison.multiple = method
    comparison.family = size
    comparison.power_level = level
    comparison.adjusted_confidence = confidence
    comparison.not_moving = [f"{s}.{k[1]}" for s, c in comparison.suites.items() for k, m in c.metrics.items()
                             if gated(m) and m.paired is not None and not m.paired.live]




def _test_identity(suite: str, key: Any, comparison: Comparison) -> Any:
    """What makes two figures the same test: their units and contributions up to a positive factor, oriented to
    "worse" (a figure without per-unit contributions, the swap test, is its own)."""
    metric = comparison.suites[suite].metrics[key]
    units = metric.paired.units
    if not units or metric.paired.test.startswith(SWAP):
        return (suite, key)
    sign = 1.0 if metric.better == "lower" else -1.0
    scale = max(abs(v) for _, v in units)
    return (suite, tuple(sorted((unit, round(sign * value / scale, 9)) for unit, value in units)))


def _power(paired: PairedResult, level: float) -> tuple[float | None, float | None]:
    """(power against a drop of POWER_DROP at ``level``, the background flip rate it is given at: the share of
    units that flip both ways); None where the test gives no power (the swap test)."""
    basis = paired.power_basis
    values = [value for _, value in paired.units]
    flips = background_flips(values, paired.unit_count) if paired.unit_count else None
    if len(basis) == 2:
        worse, better = sum(1 for v in values if v < 0), sum(1 for v in values if v > 0)
        return power_counts(int(basis[0]), worse, better, POWER_DROP, level), flips
    if len(basis) == 1:
        return power_sign_flip(values, POWER_DROP, level), flips
    return None, flips


def worse_p(paired: PairedResult) -> float:
    """The one-sided p-value that the figure got worse (the two-sided one where a test gives none)."""
    return paired.p_worse if paired.p_worse is not None else paired.p_value


def _mde(paired: PairedResult, level: float) -> float | None:
    basis = paired.power_basis
    if len(basis) == 1 and (paired.pairs <= 0 or 0.5 ** paired.pairs > level):
        return None  # even every unit moving one way cannot reach the level
    if len(basis) == 2:
        return mde_counts(int(basis[0]), int(basis[1]), level)
    if len(basis) == 1:
        return mde_sign_flip([basis[0]], level)
    return None
