"""Is a change against the baseline real? Which paired test each figure gets, on the per-case outcomes of the two runs
(:mod:`.case_figures`), and how its result reads; the tests themselves are :mod:`pytest_toolbench.stats`.

Which test a figure gets is decided by the suite's own aggregation, never guessed from its name: each case of both
runs is aggregated on its own (``aggregate([case])``), and the figure is

- a **count of cases** when every case alone gives it ``0/1`` or ``1/1`` (or leaves it out, ``0/0``) and those add
  up to the run's ``correct/total``: the figure is then exactly the share of its cases that succeed, and it gets
  the exact McNemar test (a two-sided binomial test on the discordant pairs) and Newcombe's hybrid-score interval
  for the difference of paired proportions (Newcombe 1998, *Statistics in Medicine* 17:2635-2650, method 10);
- a **mean over cases** (a mean ROUGE-L, a mean F1 per case) when every case alone gives it a value and the mean of
  those values is the run's figure: it gets the paired sign-flip test (exact up to 2^20 sign patterns, Monte Carlo
  above: :mod:`pytest_toolbench.stats.sign_flip`) and a paired t interval;
- a figure the suite declares as a combination of such figures (``aggregates.yaml``: a mean of category
  accuracies, an official weighted formula, a pooled count; :mod:`pytest_toolbench.contract.aggregates`): the
  **stratified sign-flip test** on each case's weighted difference, the weights being the official ones, with the
  stratified t interval; cases the suite declares as one cluster (variants of one conversation) are flipped
  together, and so are they in counts and means;
- anything else (micro F1 over pooled counts): no test here, n/a with the reason; a gated one then gets the paired
  permutation (swap) test of :mod:`pytest_toolbench.stats.swap`, which recomputes the figure itself on swapped runs.

A test needs the same cases behind the figure in both runs (the case ids, and for a count which cases the figure
covers); otherwise it is n/a too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ..contract.aggregates import NO_DECLARATION, AggregatesDeclaration
from ..stats.distributions import Z95, normal_quantile
from ..stats.intervals import newcombe_paired_interval, stratified_t_interval
from ..stats.mcnemar import mcnemar_exact_p, mcnemar_one_sided_p
from ..stats.sign_flip import EXACT_SUPPORT_LIMIT, MONTE_CARLO_RESAMPLES, SIGN_FLIP_SEED, sign_flip_test
from .case_figures import CaseFigures, MetricKey, as_rates

MCNEMAR = "exact McNemar"
SIGN_FLIP = "paired sign-flip"
STRATIFIED = "stratified sign-flip"
CLUSTERED = "clustered sign-flip"

#: One line every report gives beside the p-values.
PAIRED_TESTS_NOTE = (f"p adj. (the one-sided p that it got worse, adjusted over the gated family) and CI adj. (the "
                     f"family's simultaneous interval of the delta), or outside the family the unadjusted two-sided "
                     f"p and 95% interval marked 'unadj.', from the cases "
                     f"of both runs: {MCNEMAR} test with Newcombe's paired interval for counts of cases; {SIGN_FLIP} "
                     f"test (exact up to {EXACT_SUPPORT_LIMIT.bit_length() - 1} cases, else {MONTE_CARLO_RESAMPLES} "
                     f"random sign vectors, seed {SIGN_FLIP_SEED}) with a t interval for means over cases and, "
                     "stratified with the official weights, for the aggregates the suite declares; the paired "
                     "permutation (swap) test for any other gated figure (a formula over several counts); 'p n/a' "
                     "where none applies")


def family_note(comparison: Any) -> str:
    """One line on the gated family: its correction (and a refused one, with why), its size, the confidence of the
    simultaneous intervals, and the level the minimum detectable effects and powers are given at."""
    method = getattr(comparison, "multiple", "holm")
    family = getattr(comparison, "family", 0)
    level = getattr(comparison, "power_level", 0.05)
    confidence = getattr(comparison, "adjusted_confidence", 0.95)
    refused = getattr(comparison, "multiple_refused", "")
    not_moving = getattr(comparison, "not_moving", [])
    correction = "no correction" if method == "none" else f"{method} correction"
    return (f"p adj.: the one-sided p-value that the figure got worse, {correction} over the {family} distinct "
            "gated figures (aggregates and categories) that can move in this comparison "
            + ("with a paired test (joint sign-flip resampling)" if method == "westfall-young"
               else "and whose paired test can reach the level (Tarone)")
            + ", what the gate compares with its level"
            + (f" ({refused})" if refused else "")
            + (f"; {len(not_moving)} gated figure(s) identical in both runs for every case cannot move and are "
               f"not in the family ({', '.join(not_moving[:6])}{', ...' if len(not_moving) > 6 else ''})"
               if not_moving else "")
            + f"; CI adj.: the simultaneous {100 * confidence:.4g}% interval of the delta (Bonferroni over the "
            f"family: its members' intervals hold together with {100 * (1 - (1 - confidence) * max(family, 1)):.3g}%"
            " confidence; the unadjusted 95% interval and p are in the JSON and the HTML's hover; a figure "
            "outside the family shows them marked 'unadj.'); mde80: the drop each test detects with 80% power at level "
            f"{level:.3g} per figure (one-sided); power(-5): its chance to catch a 5-point drop at that level, at the "
            "run's background flips (the share of cases or clusters that flip both ways between the two runs)")


#: The note of a declared figure none of whose components has a case in either run (0 vs 0): it cannot move, so
#: no test (not even the swap test) is run for it and it is not in the gate's family.
NO_CASES = "n/a: no cases in either run (the figure cannot move in this comparison)"

#: The ``test_note`` of a figure tested over ``--toolbench-repeat`` samples.
REPEATED_NOTE = "over each case's mean across its repeated samples (a count: its pass rate)"


# -- one compared figure -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedResult:
    """The paired test of one figure against the baseline. ``test`` is None when none applies (``note`` says why).

    ``flipped_to_fail`` / ``flipped_to_pass``: for a count, the cases whose outcome got worse / better (honouring the
    figure's direction: for a lower-is-better rate a case that starts counting got worse); for a mean, the cases
    whose value fell / rose in that sense. ``p_adjusted``: the p-value adjusted over the gated family
    (``--toolbench-multiple``; None for a figure outside it); ``mde80``: the smallest change (a fraction, or plain
    units) the test detects with 80% power at the family's per-figure level; ``power_basis``: what that is computed
    from (counts: ``(pairs, discordant)``; the others: ``(spread,)``, the square root of the sum of squared
    contributions)."""

    test: str | None
    note: str = ""
    pairs: int = 0
    p_value: float | None = None
    delta_interval95: tuple[float, float] | None = None
    flipped_to_fail: int | None = None
    flipped_to_pass: int | None = None
    p_adjusted: float | None = None
    #: the one-sided p-value that the figure got worse (honouring its direction): what the gate adjusts and judges
    p_worse: float | None = None
    #: the smallest one-sided p-value the test can give on these pairs (1/2^discordant for McNemar, 1/2^units for
    #: an exact sign-flip, 1/(1 + resamples) for Monte Carlo): a figure that cannot reach the gate's level is
    #: left out of its family (Tarone 1990)
    p_floor: float | None = None
    #: each unit's contribution to the figure's change (current - baseline), unit -> value: what the
    #: Westfall-Young adjustment flips jointly with the other figures of the family (not written to the JSON)
    units: tuple[tuple[str, float], ...] = ()
    mde80: float | None = None
    power_basis: tuple[float, ...] = ()
    interval_method: str = ""
    #: what the interval is recomputed from at another confidence (the simultaneous interval of the family):
    #: ("newcombe", (both, only current, only baseline, neither)) or ("t", ((stratum's unit values), ...));
    #: not written to the JSON
    interval_basis: tuple[Any, ...] = ()
    #: the simultaneous interval of the delta over the gated family (Bonferroni: each at confidence
    #: 1 - alpha / family; Dunn 1961), with its confidence; None outside the family or where there is no interval
    delta_interval_adjusted: tuple[float, float] | None = None
    adjusted_confidence: float | None = None
    #: the power of the gate's test against a drop of ``power_drop`` (a fraction) at the family's per-figure level,
    #: at the share of units whose outcome differs between the two runs (``flip_rate``)
    power: float | None = None
    power_drop: float | None = None
    flip_rate: float | None = None
    #: what mde80 and the power are in, when the figure is not what a reader would take it for (a weighted figure
    #: some of whose components did not run)
    power_note: str = ""
    #: how many units differ between the runs (0: the figure cannot move in this run and leaves the family), of
    #: how many units (cases or declared clusters) in all
    moving_units: int | None = None
    unit_count: int | None = None
    #: for a declared weighted figure: the total weight of the components that ran (below 1 when some did not run
    #: and count as 0: the figure then moves by that share of a change of the components that ran)
    ran_weight: float | None = None

    @property
    def live(self) -> bool:
        """Whether the figure can move in this comparison: some unit (case, cluster) differs between the runs."""
        return self.moving_units is None or self.moving_units > 0

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "test_note": self.note, "pairs": self.pairs, "p_value": self.p_value,
                "p_worse": self.p_worse, "p_adjusted": self.p_adjusted, "p_floor": self.p_floor,
                "delta_interval95": list(self.delta_interval95) if self.delta_interval95 else None,
                "interval_method": self.interval_method or None,
                "delta_interval_adjusted": list(self.delta_interval_adjusted) if self.delta_interval_adjusted
                else None,
                "adjusted_confidence": self.adjusted_confidence, "mde80": self.mde80,
                "power": ({"drop": self.power_drop, "power": self.power, "flip_rate": self.flip_rate}
                          if self.power is not None else None),
                "power_note": self.power_note or None, "moving_units": self.moving_units,
                "flipped_to_fail": self.flipped_to_fail, "flipped_to_pass": self.flipped_to_pass}


NOT_TESTED = PairedResult(None, "n/a")


def paired_result(key: MetricKey, current: CaseFigures, baseline: CaseFigures, lower_is_better: bool = False,
                  design: AggregatesDeclaration = NO_DECLARATION) -> PairedResult:
    """The test for figure ``key`` given both runs' per-case figures. When either run has ``--toolbench-repeat``
    samples, a count is compared as per-case pass rates (a mean over cases). Cases the suite's ``design`` declares
    as one cluster are flipped together."""
    if current.repeated or baseline.repeated:
        current, baseline = as_rates(key, current), as_rates(key, baseline)
        if key in current.means and key in baseline.means:
            tested = _mean_result(current.means[key], baseline.means[key], lower_is_better, design)
            return replace(tested, note=REPEATED_NOTE) if tested.test is not None else tested
    if (key in current.counts and key in baseline.means) or (key in current.means and key in baseline.counts):
        # a mean of per-case values that happen to be all 0 or 1 in one run reads as a count there: compare means
        current, baseline = as_rates(key, current), as_rates(key, baseline)
        return _mean_result(current.means[key], baseline.means[key], lower_is_better, design)
    if key in current.counts and key in baseline.counts:
        now, before = current.counts[key], baseline.counts[key]
        if set(now) != set(before):
            return PairedResult(None, "n/a: the figure covers different cases in the two runs")
        if _clustered(now, design):
            return _mean_result({i: float(v) for i, v in now.items()}, {i: float(v) for i, v in before.items()},
                                lower_is_better, design)
        table = {(a, b): 0 for a in (True, False) for b in (True, False)}
        for case_id, outcome in now.items():
            table[(outcome, before[case_id])] += 1
        gained, lost = table[(True, False)], table[(False, True)]
        interval = newcombe_paired_interval(table[(True, True)], gained, lost, table[(False, False)])
        worse, better = (gained, lost) if lower_is_better else (lost, gained)
        return PairedResult(MCNEMAR, "", len(now), mcnemar_exact_p(gained, lost), interval, worse, better,
                            p_worse=mcnemar_one_sided_p(worse, better), p_floor=0.5 ** (gained + lost),
                            units=tuple((design.cluster_of(case_id), (float(now[case_id]) - float(before[case_id]))
                                         / len(now)) for case_id in sorted(now) if now[case_id] != before[case_id]),
                            power_basis=(len(now), gained + lost), interval_method="Newcombe",
                            interval_basis=("newcombe", (table[(True, True)], gained, lost, table[(False, False)])),
                            moving_units=gained + lost, unit_count=len(now))
    if key in current.means and key in baseline.means:
        return _mean_result(current.means[key], baseline.means[key], lower_is_better, design)
    note = current.untestable.get(key) or baseline.untestable.get(key)
    if note is None:
        note = "n/a: a count in one run and a mean in the other"
    return PairedResult(None, note)


def _clustered(cases: Mapping[str, Any], design: AggregatesDeclaration) -> bool:
    """Whether two of ``cases`` share a declared cluster (then they are not independent pairs)."""
    if not design.clusters:
        return False
    units = [design.cluster_of(case_id) for case_id in cases]
    return len(set(units)) < len(units)


def _mean_result(now: Mapping[str, float], before: Mapping[str, float], lower_is_better: bool,
                 design: AggregatesDeclaration) -> PairedResult:
    if set(now) != set(before):
        return PairedResult(None, "n/a: the figure covers different cases in the two runs")
    if not now:
        return PairedResult(None, "n/a: no cases")
    n = len(now)
    weighted = {case_id: (now[case_id] - before[case_id]) / n for case_id in now}
    return sign_flip_result(weighted, {case_id: "" for case_id in now}, lower_is_better, design,
                             SIGN_FLIP, n)


def sign_flip_result(contributions: Mapping[str, float], strata: Mapping[str, str], lower_is_better: bool,
                      design: AggregatesDeclaration, test: str, pairs: int, note: str = "") -> PairedResult:
    """The sign-flip test of ``sum(contributions)`` over units (declared clusters, else cases), with the
    stratified t interval; ``strata``: each case's stratum (a unit's stratum is the set of its cases' strata)."""
    units: dict[str, float] = {}
    unit_strata: dict[str, set[str]] = {}
    for case_id in sorted(contributions):
        unit = design.cluster_of(case_id)
        units[unit] = units.get(unit, 0.0) + contributions[case_id]
        unit_strata.setdefault(unit, set()).add(strata[case_id])
    clustered = len(units) < len(contributions)
    if clustered and test == SIGN_FLIP:
        test = CLUSTERED
    values = [units[u] for u in sorted(units)]
    flipped = sign_flip_test(values)
    by_stratum: dict[tuple[str, ...], list[float]] = {}
    for unit in sorted(units):
        by_stratum.setdefault(tuple(sorted(unit_strata[unit])), []).append(units[unit])
    interval = stratified_t_interval(by_stratum)
    tolerance = 1e-12
    rose = sum(1 for c in contributions.values() if c > tolerance)
    fell = sum(1 for c in contributions.values() if c < -tolerance)
    worse, better = (rose, fell) if lower_is_better else (fell, rose)
    detail = [flipped.method]
    if clustered:
        detail.append(f"{len(units)} clusters")
    label = f"{test} ({', '.join(detail)})"
    return PairedResult(label, note, pairs, flipped.p_value, interval, worse, better,
                        p_worse=flipped.p_upper if lower_is_better else flipped.p_lower,
                        p_floor=0.5 ** flipped.units if flipped.exact else 1 / (1 + MONTE_CARLO_RESAMPLES),
                        units=tuple((unit, units[unit]) for unit in sorted(units) if units[unit] != 0.0),
                        power_basis=(math.sqrt(sum(v * v for v in values)),),
                        interval_method="stratified t" if len(by_stratum) > 1 else "t",
                        interval_basis=("t", tuple(tuple(v) for _, v in sorted(by_stratum.items()))),
                        moving_units=flipped.units, unit_count=len(values))



def interval_at(result: PairedResult, confidence: float) -> tuple[float, float] | None:
    """The figure's interval of the delta recomputed at ``confidence`` (the simultaneous interval of the gated
    family: Bonferroni, each at 1 - alpha / family; Dunn 1961, *JASA* 56:52): Newcombe's interval with the matching
    normal quantile, the (stratified) t interval with the matching t quantile. None where the test gives no
    interval (the swap test, a sampled run's difference estimate)."""
    if not result.interval_basis:
        return None
    kind, basis = result.interval_basis
    if kind == "newcombe":
        return newcombe_paired_interval(*basis, z=normal_quantile(0.5 + confidence / 2))
    if kind == "t":
        return stratified_t_interval({i: list(values) for i, values in enumerate(basis)}, confidence)
    if kind == "normal":  # estimate +- z * se (a sampled run's difference estimator): the half-width rescaled
        low, high = basis
        centre, half = (low + high) / 2, (high - low) / 2 * normal_quantile(0.5 + confidence / 2) / Z95
        return centre - half, centre + half
    return None


def format_test(result: PairedResult | None, unit: str = "%") -> str:
    """The decision columns beside a delta: for a member of the gated family ``adj p=0.402 [-6.10, +1.30]adj
    mde80 4.41 power 75% at 4.6% flips`` (the adjusted one-sided p, the simultaneous interval, the minimum
    detectable effect at 80% power and the power against a 5-point drop, in points for a percentage); outside it
    the unadjusted two-sided p and 95% interval, marked ``unadj.``; ``p n/a`` without a test."""
    if result is None or result.test is None or result.p_value is None:
        return "p n/a"
    if result.p_adjusted is None:
        parts = ["unadj.", p_text(result.p_value), format_delta_interval(result.delta_interval95, unit)]
    else:
        shown = format_p(result.p_adjusted)
        parts = [f"adj p{shown}" if shown.startswith("<") else f"adj p={shown}"]
        if result.delta_interval_adjusted is not None:
            parts.append(format_delta_interval(result.delta_interval_adjusted, unit) + "adj")
    if result.mde80 is not None:
        parts.append(f"mde80 {mde_text(result, unit)}")
    power = format_power(result)
    if power:
        parts.append(f"power(-{100 * (result.power_drop or 0):g}) {power}")
    return " ".join(part for part in parts if part)


def decision_cells(result: PairedResult, unit: str = "%") -> list[str]:
    """The two decision cells of a table row: the adjusted one-sided p and the simultaneous interval for a member
    of the gated family; outside it the unadjusted two-sided p and 95% interval, each marked ``unadj.``."""
    if result.p_adjusted is not None:
        return [format_p(result.p_adjusted), format_delta_interval(result.delta_interval_adjusted, unit) or "-"]
    interval = format_delta_interval(result.delta_interval95, unit)
    return [f"unadj. {format_p(result.p_value)}", f"unadj. {interval}" if interval else "-"]


def format_power(result: PairedResult | None) -> str:
    """``75% at 4.6% flips``: the power against the stated drop at this comparison's flip rate ("" without)."""
    if result is None or result.power is None:
        return ""
    flips = f" at {100 * result.flip_rate:.1f}% flips" if result.flip_rate is not None else ""
    return f"{100 * result.power:.0f}%{flips}"


def mde_text(result: PairedResult | None, unit: str = "%") -> str:
    """The mde80 cell: ``4.41``, or for a weighted figure some of whose components did not run (they count 0)
    ``1.44 (4.80 of what ran)``: the same drop in points of the weighted mean of the components that ran."""
    if result is None or result.mde80 is None:
        return ""
    shown = format_mde(result.mde80, unit)
    if result.ran_weight is not None and 0 < result.ran_weight < 1 - 1e-9:
        shown += f" ({format_mde(result.mde80 / result.ran_weight, unit)} of what ran)"
    return shown


def format_mde(mde: float | None, unit: str = "%") -> str:
    """The minimum detectable effect in points (a percentage) or plain units."""
    if mde is None:
        return ""
    return f"{100 * mde:.2f}" if unit == "%" else f"{mde:.3f}"


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


def untested_notes(comparison: Any) -> list[tuple[str, list[str]]]:
    """Each reason a compared figure has no paired test, with the figures it applies to (the ``p n/a`` footnotes:
    each says which figures it is about)."""
    by_note: dict[str, list[str]] = {}
    for delta in comparison.metrics.values():
        if delta.paired is not None and delta.paired.test is None and delta.delta is not None:
            by_note.setdefault(delta.paired.note, []).append(delta.name)
    return sorted((note, names) for note, names in by_note.items())


def figures_text(names: Sequence[str], shown: int = 6) -> str:
    """``a, b, c`` or ``a, b, c, ... and 12 more``: the figures a footnote is about."""
    head = ", ".join(names[:shown])
    return head + (f", ... and {len(names) - shown} more" if len(names) > shown else "")
