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
flips. Its variance is the stratified one (Cochran, *Sampling Techniques*, 3rd ed. 1977, eq. 5.7, with the finite
population correction ``1 - f_h``)::

    v(F) = sum_h c_h^2 (1 - f_h) s_h^2 / n_h

where ``s_h^2`` uses the Agresti-Coull adjusted rate ``(k_h + z^2/2) / (n_h + z^2)`` (Agresti & Coull 1998, *The
American Statistician* 52:119-126) in place of ``k_h / n_h``, so that a small stratum whose sampled cases all pass
(or all fail) still contributes its uncertainty instead of none; for units of several cases ``s_h^2`` is the ratio
estimator's (Cochran eq. 6.13 over unit totals), never below the adjusted binomial one. The interval is
``F ± 1.96 sqrt(v)``, kept inside [0, 1] for a rate. A figure that is one category's rate (or a linear map of it),
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
#: The repeated sample is kept below this many records (the weight error is then the smallest reachable).
MAX_EXPANDED = 400_000
_TOLERANCE = 1e-9

STRATIFIED = "stratified, Agresti-Coull adjusted strata, fpc (Cochran 5.7)"
HYPERGEOMETRIC = "exact hypergeometric (finite population)"
NO_INTERVAL = "none"
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


def _repetitions(strata: Mapping[str, _Stratum], sizes: Mapping[str, int]) -> dict[str, int]:
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
        if error <= WEIGHT_TOLERANCE:
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
    repeat = _repetitions(strata, sizes)

    def expanded(replaced: Mapping[int, Any] = {}) -> list[Any]:  # noqa: B006 - read only
        out: list[Any] = []
        for index, record in enumerate(records):
            out.extend([replaced.get(index, record)] * repeat.get(record.category, 1))
        return out

    unit_of: dict[MetricKey, str] = {}
    base = _values(aggregate, expanded(), unit_of)
    coefficient: dict[MetricKey, dict[str, float]] = {key: {} for key in base}
    linear: dict[MetricKey, bool] = {key: True for key in base}
    for name, stratum in strata.items():
        scored = stratum.records
        if not scored:
            continue
        first = scored[0]
        twin = next((i for i in scored[1:] if records[i].passed == records[first].passed), None)
        step = (1.0 if not records[first].passed else -1.0) / len(scored)
        one = _values(aggregate, expanded({first: _flipped(records[first])}))
        two = _values(aggregate, expanded({first: _flipped(records[first]), twin: _flipped(records[twin])})) \
            if twin is not None else None
        swap = _values(aggregate, expanded({first: records[twin]})) if twin is not None else None
        for key, value in base.items():
            if not linear[key]:
                continue
            moved = one.get(key)
            if value is None or moved is None:
                linear[key] = False
                continue
            slope = (moved - value) / step
            tolerance = _TOLERANCE * max(1.0, abs(value))
            if two is not None and (two.get(key) is None or abs((two[key] - value) - 2 * (moved - value)) > tolerance):
                linear[key] = False
                continue
            if swap is not None and (swap.get(key) is None or abs(swap[key] - value) > tolerance):
                linear[key] = False
                continue
            if abs(slope) > _TOLERANCE:
                coefficient[key][name] = slope

    units = design.units
    sampled, population, seed = design.sampled, design.population, design.spec.seed
    estimates: dict[MetricKey, Estimate] = {}
    for key, value in base.items():
        if value is None:
            estimates[key] = Estimate(None, None, sampled, population, seed, NO_INTERVAL, "no value")
            continue
        if not linear[key]:
            estimates[key] = Estimate(value, None, sampled, population, seed, NO_INTERVAL,
                                      "no interval: the figure is not determined by the categories' pass rates "
                                      "(the point estimate is the suite's aggregation of the weighted sample)")
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
            half = Z95 * math.sqrt(variance)
            interval = (value - half, value + half)
        if unit_of.get(key) == "%":
            interval = (max(0.0, interval[0]), min(1.0, interval[1]))
        estimates[key] = Estimate(value, interval, sampled, population, seed, method, "", dict(sorted(terms.items())))
    return estimates


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
        differences.setdefault(record.category, []).append(float(record.passed) - float(bool(before["passed"])))
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
