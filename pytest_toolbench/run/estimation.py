"""The figures of a ``--toolbench-sample`` run as estimates of the full benchmark's, with design-based intervals.

The sample is stratified by category, simple random without replacement within a stratum (``run.sampling``).
Each figure is estimated by **the suite's own aggregation applied to the stratum estimates**: the sampled cases of
stratum ``h`` stand for the ``N_h`` cases of the population, each with weight ``N_h / n_h`` (in units: a unit of
several cases carries its cases). The suite's ``aggregate`` takes a list of records, not weights, so it is run on
the sample with each record repeated ``m_h ≈ R * N_h / n_h`` times (``R`` chosen so that no stratum's weight is off
by more than :data:`WEIGHT_TOLERANCE` relative): a category's rate is then its sampled rate, an unweighted mean of
categories is the mean of the stratum estimates, and a rate pooled over categories (BFCL's Live) pools them with
their population sizes, as the full run would.

The interval of a figure comes from how it depends on the strata. Each category's pass rate ``p_h`` is moved by
flipping one sampled case (all its copies) and the figure re-aggregated: a figure that moves in proportion (two
flips move it twice as far) and does not move when a case is swapped for another case of its stratum with the same
verdict is a linear function of the categories' pass rates, ``F = c_0 + sum_h c_h p_h``, with ``c_h`` read off the
flips (flipping another case of the stratum moves it as much, a case of the other verdict as much the other
way, and some flip moves it at all). Its variance is the stratified one (Cochran, *Sampling Techniques*, 3rd ed. 1977, eq. 5.7, with the finite
population correction ``1 - f_h``)::

    v(F) = sum_h c_h^2 (1 - f_h) s_h^2 / n_h

where ``s_h^2`` uses the Agresti-Coull adjusted rate ``(k_h + z^2/2) / (n_h + z^2)`` (Agresti & Coull 1998, *The
American Statistician* 52:119-126) in place of ``k_h / n_h``, so that a small stratum whose sampled cases all pass
(or all fail) still contributes its uncertainty instead of none; for units of several cases ``s_h^2`` is the ratio
estimator's (Cochran eq. 6.13 over unit totals), never below the adjusted binomial one. The interval is
``F ± 1.96 sqrt(v)``, kept inside [0, 1] for a rate; a figure that is a weighted share of cases (positive
coefficients adding up to 1: Live, Non-live, a full run's Overall) gets Wilson's interval with the effective sample
size ``F (1 - F) / v`` instead (Korn & Graubard 1998), which holds its coverage where the rate is far from 50%. A figure that is one category's rate (or a linear map of it),
over single-case units, gets the exact interval of a hypergeometric proportion instead (the set of population
counts ``K`` that a two-sided 2.5% test does not reject; Cochran §3.5, Wright 1991), which covers at least 95%
whatever the size of the stratum. A figure that is not determined by the pass rates (an F1 over pooled counts, a
mean of scores) keeps its point estimate and says it has no interval.

Pure functions on records; :func:`estimate_figures` is what the summary calls.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..contract.suite import NOT_SCORED
from .sampling import Design

Z95 = 1.959963984540054
#: Largest relative error allowed between a stratum's weight ``N_h / n_h`` and its whole-number repetition.
WEIGHT_TOLERANCE = 0.01
#: The same for the repeated samples the probes aggregate (coefficients within this).
PROBE_TOLERANCE = 0.05
#: The repeated sample is kept below this many records (the weight error is then the smallest reachable).
MAX_EXPANDED = 400_000
_TOLERANCE = 1e-9

STRATIFIED = "stratified, Agresti-Coull adjusted strata, fpc (Cochran 5.7)"
STRATIFIED_WILSON = "stratified variance (Agresti-Coull adjusted strata, fpc), Wilson with effective sample size"
HYPERGEOMETRIC = "exact hypergeometric (finite population)"
RATIO_WILSON = "combined ratio estimator, Wilson with effective sample size (Korn-Graubard), fpc"
RATIO_NORMAL = "combined ratio estimator, linearized variance, fpc (Cochran 6.11)"
INFLUENCE = "linearized (influence function) stratified variance, fpc (Woodruff 1971)"
NO_INTERVAL = "none"
#: The influence fallback is skipped above this many record visits (cases probed x size of the repeated sample).
MAX_INFLUENCE_WORK = 40_000_000
#: The influence fallback gives no interval to a figure over fewer sampled cases than this (in the strata where it
#: moves), or that fewer cases than MIN_MOVERS move: the normal approximation needs them.
MIN_BEARING = 30
MIN_MOVERS = 5
PROBE_ERROR = "estimate_probe"

MetricKey = tuple[str, str]


@dataclass(frozen=True)
class Estimate:
    """One figure's estimate of its full-benchmark value. ``coefficients``: ``c_h`` per stratum for a figure linear
    in the categories' pass rates (what the paired difference against a baseline needs), else None."""

    value: float | None
    interval95: tuple[float, float] | None
    sampled: int
    population: int
    seed: int
    method: str
    note: str = ""
    coefficients: Mapping[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {"value": self.value, "interval95": list(self.interval95) if self.interval95 else None,
                "sampled": self.sampled, "population": self.population, "seed": self.seed, "method": self.method}
        if self.note:
            data["note"] = self.note
        if self.coefficients is not None:
            data["coefficients"] = dict(self.coefficients)
        return data


# -- exact interval for one stratum's proportion -----------------------------------------------------------------
def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeometric_cdf(k: int, population: int, successes: int, draws: int) -> float:
    """P(X <= k) for X ~ Hypergeometric(population, successes, draws)."""
    low, high = max(0, draws - (population - successes)), min(draws, successes)
    if k < low:
        return 0.0
    if k >= high:
        return 1.0
    denominator = _log_choose(population, draws)
    return min(1.0, sum(math.exp(_log_choose(successes, x) + _log_choose(population - successes, draws - x)
                                 - denominator) for x in range(low, k + 1)))


def hypergeometric_interval(k: int, n: int, population: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact two-sided ``1 - alpha`` interval of ``K / N`` from ``k`` successes in a simple random sample of
    ``n`` of ``N = population``: the smallest ``K`` with ``P(X >= k | K) > alpha/2`` to the largest with
    ``P(X <= k | K) > alpha/2`` (each tail monotone in ``K``: found by bisection). ``n == N`` gives ``k / N``."""
    if n >= population:
        return k / population, k / population
    # lower bound: P(X >= k | K) = 1 - cdf(k-1) rises with K
    lo, hi = k, population - (n - k)
    while lo < hi:
        mid = (lo + hi) // 2
        if k == 0 or 1 - hypergeometric_cdf(k - 1, population, mid, n) > alpha / 2:
            hi = mid
        else:
            lo = mid + 1
    lower = lo
    # upper bound: P(X <= k | K) falls with K
    lo, hi = k, population - (n - k)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if hypergeometric_cdf(k, population, mid, n) > alpha / 2:
            lo = mid
        else:
            hi = mid - 1
    return lower / population, lo / population


# -- the design's strata as seen in the records ------------------------------------------------------------------
@dataclass
class _Stratum:
    name: str
    units_population: int
    cases_population: int
    units_sampled: int
    records: list[int] = field(default_factory=list)  # indexes of the stratum's scored records

    @property
    def weight(self) -> float:
        """Each sampled case stands for this many cases of the population."""
        return self.units_population / self.units_sampled if self.units_sampled else 0.0


def _repetitions(strata: Mapping[str, _Stratum], sizes: Mapping[str, int], tolerance: float = 0.01
                 ) -> dict[str, int]:
    """Whole repetitions ``m_h ≈ R * w_h`` with the smallest ``R`` that keeps every weight within the tolerance (or
    the best ``R`` below the size cap). ``sizes``: records per stratum."""
    weights = {name: s.weight for name, s in strata.items() if s.weight > 0}
    if not weights:
        return {}
    smallest = min(weights.values())
    best: tuple[float, float] | None = None
    for scale in range(1, 1000):
        factor = scale / smallest
        expanded = sum(sizes.get(name, 0) * round(factor * w) for name, w in weights.items())
        if expanded > MAX_EXPANDED and best is not None:
            break
        error = max(abs(round(factor * w) - factor * w) / (factor * w) for w in weights.values())
        if best is None or error < best[0] - 1e-15:
            best = (error, factor)
        if error <= tolerance:
            break
    return {name: max(1, round(best[1] * w)) for name, w in weights.items()}


def _flipped(record: Any) -> Any:
    if record.passed:
        return dataclasses.replace(record, passed=False, error_type=PROBE_ERROR)
    return dataclasses.replace(record, passed=True, error_type=None)


def _values(aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any],
            units: dict[MetricKey, str] | None = None) -> dict[MetricKey, Any]:
    values = {}
    for metric in aggregate(records):
        if units is not None:
            units[(metric.group or "", metric.name)] = getattr(metric, "unit", "%") or ""
        value = metric.value
        values[(metric.group or "", metric.name)] = value if isinstance(value, (int, float)) and \
            not isinstance(value, bool) and math.isfinite(value) else None
    return values


def estimate_figures(records: Sequence[Any], design: Design,
                     aggregate: Callable[[Sequence[Any]], Sequence[Any]]) -> dict[MetricKey, Estimate]:
    """Each figure of ``aggregate`` as an :class:`Estimate` of its full-benchmark value, from the sampled
    ``records`` (one per case, no ``--toolbench-repeat`` samples) of the ``design``."""
    records = list(records)
    strata: dict[str, _Stratum] = {
        name: _Stratum(name, int(row[0]), int(row[1]), int(row[2])) for name, row in design.strata.items()}
    for index, record in enumerate(records):
        stratum = strata.get(record.category)
        if stratum is None:  # a category the design does not know (cannot happen from a draw): its own stratum
            stratum = strata[record.category] = _Stratum(record.category, 1, 1, 1)
        if record.error_type != NOT_SCORED:
            stratum.records.append(index)
    sizes: dict[str, int] = {}
    for record in records:
        sizes[record.category] = sizes.get(record.category, 0) + 1
    # the probes (many aggregations) use coarser repetitions, weights within PROBE_TOLERANCE: the coefficients
    # they read are as close; the point estimate uses weights within WEIGHT_TOLERANCE
    repeat = _repetitions(strata, sizes, PROBE_TOLERANCE)
    fine_repeat = _repetitions(strata, sizes, WEIGHT_TOLERANCE)

    def expanded(replaced: Mapping[int, Any] = {}, moved: Mapping[int, int] = {}) -> list[Any]:  # noqa: B006
        out: list[Any] = []
        for index, record in enumerate(records):
            out.extend([replaced.get(index, record)] * (repeat.get(record.category, 1) + moved.get(index, 0)))
        return out

    unit_of: dict[MetricKey, str] = {}
    base = _values(aggregate, expanded(), unit_of)
    fine = base if fine_repeat == repeat else _values(aggregate, [record for record in records for _ in range(
        fine_repeat.get(record.category, 1))])
    # A figure that changes when every case is simply counted twice is no function of the categories' shares (a
    # count of cases, a grouping by case id): repeating cases cannot weight it, so it is not estimated.
    plain_values = _values(aggregate, records)
    doubled = _values(aggregate, [record for record in records for _ in range(2)])
    unweighable = {key for key, value in plain_values.items()
                   if (value is None) != (doubled.get(key) is None)
                   or (value is not None and abs(doubled[key] - value) > _TOLERANCE * max(1.0, abs(value)))}
    coefficient: dict[MetricKey, dict[str, float]] = {key: {} for key in base}
    linear: dict[MetricKey, bool] = {key: True for key in base}
    for name, stratum in strata.items():
        scored = stratum.records
        if not scored:
            continue
        first = scored[0]
        twin = next((i for i in scored[1:] if records[i].passed == records[first].passed), None)
        other = next((i for i in scored if records[i].passed != records[first].passed), None)
        step = (1.0 if not records[first].passed else -1.0) / len(scored)
        one = _values(aggregate, expanded({first: _flipped(records[first])}))
        probes = []  # (values, expected move in units of one flip's move)
        if twin is not None:
            probes.append((_values(aggregate, expanded({first: _flipped(records[first]),
                                                        twin: _flipped(records[twin])})), 2.0))
            probes.append((_values(aggregate, expanded({first: records[twin]})), 0.0))
        if other is not None:
            probes.append((_values(aggregate, expanded({other: _flipped(records[other])})), -1.0))
        for key, value in base.items():
            if not linear[key]:
                continue
            moved = one.get(key)
            if value is None or moved is None:
                linear[key] = False
                continue
            tolerance = _TOLERANCE * max(1.0, abs(value))
            if any(probe.get(key) is None or abs((probe[key] - value) - times * (moved - value)) > tolerance
                   for probe, times in probes):
                linear[key] = False
                continue
            slope = (moved - value) / step
            if abs(slope) > _TOLERANCE:
                coefficient[key][name] = slope
    for key in base:  # a figure no flip moves is not read off the pass rates (it reads labels, counts, scores)
        if not coefficient[key]:
            linear[key] = False

    units = design.units
    sampled, population, seed = design.sampled, design.population, design.spec.seed
    influence_cost = sum(max(0, len(st.records) - 1) for st in strata.values()) * sum(
        sizes[name] * repeat.get(name, 1) for name in sizes)
    estimates: dict[MetricKey, Estimate] = {}
    per_case: list[dict[MetricKey, tuple[Any, Any, Any]]] | None = None
    plain: dict[MetricKey, Any] = {}
    influence: dict[MetricKey, float] | None = None
    for key, value in base.items():
        value = fine.get(key) if value is not None else None
        if key in unweighable:
            estimates[key] = Estimate(None, None, sampled, population, seed, NO_INTERVAL,
                                      "not estimated: the figure depends on the number of cases (a count) or on "
                                      "their ids, so the sample's weights cannot be applied to it")
            continue
        if value is None:
            estimates[key] = Estimate(None, None, sampled, population, seed, NO_INTERVAL, "no value")
            continue
        if not linear[key]:
            if per_case is None:
                per_case = _per_case(aggregate, records)
                plain = plain_values
            found = _ratio_estimate(key, plain.get(key), unit_of.get(key) == "%", per_case, records, strata, design)
            if found is None and not units and influence_cost <= MAX_INFLUENCE_WORK:
                if influence is None:
                    influence = _influence(base, records, strata, aggregate, expanded, repeat)
                variance = influence.get(key)
                if variance is not None:
                    half = Z95 * math.sqrt(variance)
                    interval = (value - half, value + half)
                    if unit_of.get(key) == "%":
                        interval = (max(0.0, interval[0]), min(1.0, interval[1]))
                    found = Estimate(value, interval, sampled, population, seed, INFLUENCE)
            estimates[key] = found or Estimate(
                value, None, sampled, population, seed, NO_INTERVAL,
                "no interval: the figure is neither determined by the categories' pass rates nor a count or mean "
                f"of cases, and fewer than {MIN_BEARING} sampled cases bear on it for a linearized one (the point "
                "estimate is the suite's aggregation of the weighted sample)")
            continue
        terms = coefficient[key]
        interval, method = None, STRATIFIED
        single = next(iter(terms)) if len(terms) == 1 else None
        if single is not None and not any(records[i].case_id in units for i in strata[single].records) \
                and strata[single].cases_population > len(strata[single].records) > 0:
            stratum = strata[single]
            k = sum(records[i].passed for i in stratum.records)
            low, high = hypergeometric_interval(k, len(stratum.records), stratum.cases_population)
            offset = value - terms[single] * k / len(stratum.records)
            ends = sorted((offset + terms[single] * low, offset + terms[single] * high))
            interval, method = (ends[0], ends[1]), HYPERGEOMETRIC
        else:
            variance = sum(c * c * _stratum_variance(strata[name], records, units) for name, c in terms.items())
            if unit_of.get(key) == "%" and all(c > 0 for c in terms.values()) and \
                    abs(sum(terms.values()) - 1) < 1e-6 and 0 <= value <= 1:
                # a weighted share of cases (Live, Non-live, the Overall of a full run): Wilson's interval with
                # the effective sample size p(1-p)/v, which a skewed rate needs (Korn & Graubard 1998)
                interval, method = _wilson_effective(value, variance, sum(len(strata[n].records) for n in terms)), \
                    STRATIFIED_WILSON
            else:
                half = Z95 * math.sqrt(variance)
                interval = (value - half, value + half)
        if unit_of.get(key) == "%":
            interval = (max(0.0, interval[0]), min(1.0, interval[1]))
        estimates[key] = Estimate(value, interval, sampled, population, seed, method, "", dict(sorted(terms.items())))
    return estimates


def _wilson_effective(rate: float, variance: float, cases: int) -> tuple[float, float]:
    """Wilson's score interval for ``rate`` with the effective sample size ``rate (1 - rate) / variance`` (the
    cases themselves when the variance or the rate's spread is zero)."""
    effective = rate * (1 - rate) / variance if 0 < rate < 1 and variance > 0 else float(max(1, cases))
    effective = max(1.0, min(effective, 1e9))
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * effective)) / (1 + z2 / effective)
    half = Z95 * math.sqrt(rate * (1 - rate) / effective + z2 / (4 * effective * effective)) / (1 + z2 / effective)
    return max(0.0, centre - half), min(1.0, centre + half)


def _per_case(aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any]
              ) -> list[dict[MetricKey, tuple[Any, Any, Any]]] | None:
    """Each record aggregated alone: (correct, total, value) per figure; None when the aggregation cannot take one
    case alone."""
    try:
        return [{(m.group or "", m.name): (m.correct, m.total, m.value) for m in aggregate([record])}
                for record in records]
    except Exception:  # noqa: BLE001 - such a suite's figures then have no interval, and say so
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _ratio_estimate(key: MetricKey, plain: float | None, rate: bool,
                    per_case: list[dict[MetricKey, tuple[Any, Any, Any]]] | None, records: Sequence[Any],
                    strata: Mapping[str, _Stratum], design: Design) -> Estimate | None:
    """A figure that is a ratio of per-case sums over the cases it covers, ``sum correct_i / sum total_i`` with each
    case alone giving it a total of 1 or leaving it out (a count of cases: 0/1 or 1/1; a sum of per-case credits),
    or a mean over cases (each case alone gives it its value over one
    case): the combined ratio estimator ``sum_h w_h sum y / sum_h w_h sum x`` (Cochran §6.11) with its linearized
    variance ``sum_h N_h^2 (1-f_h) s_zh^2 / n_h / X^2`` over ``z = y - R x``. A count's interval is Wilson's with
    the effective sample size ``p(1-p) / v`` (Korn & Graubard 1998, *Survey Methodology* 24:193-201; at 0% or
    100% the cases it covers); any other ratio's is ``R ± 1.96 sqrt(v)``. ``plain``: the figure over the sample as
    the suite computes it, which the per-case sums must reproduce. None when the figure is none of these (or
    several-case units are involved)."""
    if per_case is None or design.units or plain is None:
        return None

    def rows_as(kind: str) -> dict[str, list[tuple[float, float]]] | None:
        rows: dict[str, list[tuple[float, float]]] = {}
        for record, figures in zip(records, per_case):
            if record.error_type == NOT_SCORED:
                continue
            correct, total, value = (_number(x) for x in figures.get(key, (None, None, None)))
            if kind == "ratio":
                if total is None and correct is None:
                    x, y = 0.0, 0.0  # the figure does not cover this case
                elif total is None or correct is None or total not in (0.0, 1.0):
                    return None  # a denominator that is not one case (RoTBench's scenario quirk): no test
                else:
                    x, y = total, correct
            else:
                if value is None and not total:
                    x, y = 0.0, 0.0
                elif value is None or total != 1 or (correct is not None and abs(correct - value) > 1e-9):
                    return None
                else:
                    x, y = 1.0, value
            rows.setdefault(record.category, []).append((x, y))
        sample_x = sum(x for part in rows.values() for x, _ in part)
        sample_y = sum(y for part in rows.values() for _, y in part)
        if sample_x <= 0 or abs(sample_y / sample_x - plain) > 1e-7:
            return None
        return rows

    kind = "ratio"
    rows = rows_as("ratio")
    if rows is None:
        kind, rows = "mean", rows_as("mean")
        if rows is None:
            return None
    binary = kind == "ratio" and rate and all(x in (0.0, 1.0) and y in (0.0, 1.0) and y <= x
                                              for part in rows.values() for x, y in part)
    totals_y = totals_x = 0.0
    for name, part in rows.items():
        weight = strata[name].cases_population / len(part)
        totals_y += weight * sum(y for _, y in part)
        totals_x += weight * sum(x for x, _ in part)
    if totals_x <= 0:
        return None
    ratio = totals_y / totals_x
    variance = 0.0
    covered = 0
    for name, part in rows.items():
        n = len(part)
        population = strata[name].cases_population
        covered += sum(1 for x, _ in part if x)
        if n < 2:
            continue
        z = [y - ratio * x for x, y in part]
        mean = sum(z) / n
        spread = sum((v - mean) ** 2 for v in z) / (n - 1)
        variance += population * population * max(0.0, 1 - n / population) * spread / n
    variance /= totals_x * totals_x
    covering = [name for name, part in rows.items() if any(x for x, _ in part)]
    if binary and len(covering) == 1 and all(x for x, _ in rows[covering[0]]):
        # the figure is one whole stratum's share of cases: the exact hypergeometric interval
        part, population = rows[covering[0]], strata[covering[0]].cases_population
        k = int(round(sum(y for _, y in part)))
        if population > len(part):
            interval = hypergeometric_interval(k, len(part), population)
        else:
            interval = (k / len(part), k / len(part))
        return Estimate(ratio, interval, design.sampled, design.population, design.spec.seed, HYPERGEOMETRIC)
    if binary:
        interval, method = _wilson_effective(ratio, variance, covered), RATIO_WILSON
    else:
        half = Z95 * math.sqrt(variance)
        interval = (ratio - half, ratio + half)
        if rate:
            interval = (max(0.0, interval[0]), min(1.0, interval[1]))
        method = RATIO_NORMAL
    return Estimate(ratio, interval, design.sampled, design.population, design.spec.seed, method)


def _influence(base: Mapping[MetricKey, Any], records: Sequence[Any], strata: Mapping[str, _Stratum],
               aggregate: Callable[[Sequence[Any]], Sequence[Any]], expanded: Callable[..., list[Any]],
               repeat: Mapping[str, int]) -> dict[MetricKey, float]:
    """The linearized (influence-function) variance of every figure, for figures that are smooth functions of the
    strata's means of anything the records hold (an F1 over pooled counts, a mean of category figures): in each
    stratum one copy of a reference case is replaced by a copy of case ``i``, which moves the stratum's mean by
    ``(v_i - v_ref) / M_h`` (``M_h`` copies in the stratum) and the figure by its derivative times that; ``u_i =
    M_h * change`` is then the case's influence up to a constant, and the variance is ``sum_h (1 - f_h) s_uh^2 /
    n_h`` (Woodruff 1971, *JASA* 66:411-414, with the stratified variance of Cochran eq. 5.7). A figure without a value in
    some probe gets none."""
    influences: dict[MetricKey, list[float]] = {key: [] for key, value in base.items() if value is not None}
    variance = {key: 0.0 for key in influences}
    bearing: dict[MetricKey, int] = {}  # sampled cases of the strata where the figure moves
    movers: dict[MetricKey, int] = {}  # sampled cases whose replacement moves it
    for name, stratum in strata.items():
        scored = stratum.records
        n = len(scored)
        if n < 2:
            continue
        copies = n * repeat.get(name, 1)
        reference = scored[0]
        per_key: dict[MetricKey, list[float]] = {key: [0.0] for key in influences}
        for index in scored[1:]:
            values = _values(aggregate, expanded(moved={index: 1, reference: -1}))
            for key in list(per_key):
                moved = values.get(key)
                if moved is None:
                    per_key.pop(key)
                    influences.pop(key, None)
                    variance.pop(key, None)
                    continue
                per_key[key].append(copies * (moved - base[key]))
        fpc = max(0.0, 1 - n / stratum.cases_population) if stratum.cases_population else 0.0
        for key, values in per_key.items():
            if key not in variance:
                continue
            moving = sum(1 for v in values[1:] if abs(v) > _TOLERANCE)
            if moving:
                bearing[key] = bearing.get(key, 0) + n
                movers[key] = movers.get(key, 0) + moving
            mean = sum(values) / n
            variance[key] += fpc * sum((v - mean) ** 2 for v in values) / (n - 1) / n
    # too few sampled cases bear on a figure (a small domain) for the normal approximation: no interval
    return {key: v for key, v in variance.items()
            if bearing.get(key, 0) >= MIN_BEARING and movers.get(key, 0) >= MIN_MOVERS}


def _stratum_variance(stratum: _Stratum, records: Sequence[Any], units: Mapping[str, str]) -> float:
    """The estimated variance of the stratum's pass rate (see the module docstring)."""
    indexes = stratum.records
    n = len(indexes)
    if n == 0:
        return 0.0
    k = sum(records[i].passed for i in indexes)
    z2 = Z95 * Z95
    adjusted = (k + z2 / 2) / (n + z2)
    cases_fpc = max(0.0, 1 - n / stratum.cases_population) if stratum.cases_population else 0.0
    binomial = cases_fpc * adjusted * (1 - adjusted) / max(1, n - 1)
    grouped: dict[str, list[bool]] = {}
    for i in indexes:
        grouped.setdefault(units.get(records[i].case_id, records[i].case_id), []).append(records[i].passed)
    if len(grouped) == n:
        return binomial
    # units of several cases: the ratio estimator's variance over unit totals (Cochran 6.13), fpc in units
    units_n = len(grouped)
    if units_n < 2:
        return max(binomial, adjusted * (1 - adjusted))  # one unit: no estimate of the spread between units
    rate = k / n
    mean_size = n / units_n
    spread = sum((sum(v) - rate * len(v)) ** 2 for v in grouped.values()) / (units_n - 1)
    units_fpc = max(0.0, 1 - units_n / stratum.units_population) if stratum.units_population else 0.0
    return max(binomial, units_fpc * spread / (units_n * mean_size * mean_size))


def paired_difference(current: Sequence[Any], baseline: Mapping[str, Any], estimate: Estimate,
                      design: Design) -> tuple[float, tuple[float, float], float, int] | None:
    """The full benchmark's change of a figure linear in the categories' pass rates, estimated from the sampled
    cases of a sampled run (``current``) and the same cases of a full ``baseline`` (case id -> record): the
    stratified mean of the per-case differences ``d_i = y_i - y_i'`` times each stratum's coefficient (a
    difference estimator: Cochran eq. 5.7 applied to ``d``), its variance ``sum c_h^2 (1-f_h) s_dh^2 / n_h``
    and a two-sided normal test of no change. Returns (delta, interval95, p-value, pairs), or None when the figure
    is not linear in the pass rates or a sampled case is missing from the baseline."""
    if estimate.coefficients is None:
        return None
    differences: dict[str, list[float]] = {}
    for record in current:
        if record.error_type == NOT_SCORED:
            continue
        before = baseline.get(record.case_id)
        if before is None:
            return None
        differences.setdefault(record.category, []).append(float(record.passed) - float(bool(before.passed)))
    delta, variance, pairs = 0.0, 0.0, 0
    for name, c in estimate.coefficients.items():
        values = differences.get(name)
        if not values:
            return None
        n = len(values)
        pairs += n
        mean = sum(values) / n
        delta += c * mean
        population = int(design.strata[name][1]) if name in design.strata else n
        if n > 1:
            spread = sum((v - mean) ** 2 for v in values) / (n - 1)
            variance += c * c * max(0.0, 1 - n / population) * spread / n
    half = Z95 * math.sqrt(variance)
    if variance <= 0:
        p_value = 1.0 if abs(delta) <= _TOLERANCE else 0.0
    else:
        p_value = math.erfc(abs(delta) / math.sqrt(2 * variance))
    return delta, (delta - half, delta + half), p_value, pairs
