"""The strata of a sampled run as its records show them, the whole-number repetitions that weight them, and the
variances the estimates read: a stratum's pass rate (Agresti-Coull adjusted, finite population correction, Cochran
eq. 5.7; units of several cases: the ratio estimator's, Cochran 6.13) and the linearized (influence-function)
variance of any smooth figure (Woodruff 1971). Pure functions on records and the suite's ``aggregate``."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .distributions import Z95
from .estimate import TOLERANCE, MetricKey

#: Largest relative error allowed between a stratum's weight ``N_h / n_h`` and its whole-number repetition.
WEIGHT_TOLERANCE = 0.01
#: The same for the repeated samples the probes aggregate (coefficients within this).
PROBE_TOLERANCE = 0.05
#: The repeated sample is kept below this many records (the weight error is then the smallest reachable).
MAX_EXPANDED = 400_000
#: The influence fallback is skipped above this many record visits (cases probed x size of the repeated sample).
MAX_INFLUENCE_WORK = 40_000_000
#: The influence fallback gives no interval to a figure over fewer sampled cases than this (in the strata where it
#: moves), or that fewer cases than MIN_MOVERS move: the normal approximation needs them.
MIN_BEARING = 30
MIN_MOVERS = 5
PROBE_ERROR = "estimate_probe"


@dataclass
class Stratum:
    name: str
    units_population: int
    cases_population: int
    units_sampled: int
    records: list[int] = field(default_factory=list)  # indexes of the stratum's scored records

    @property
    def weight(self) -> float:
        """Each sampled case stands for this many cases of the population."""
        return self.units_population / self.units_sampled if self.units_sampled else 0.0


def repetitions(strata: Mapping[str, Stratum], sizes: Mapping[str, int], tolerance: float = 0.01
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


def flipped(record: Any) -> Any:
    if record.passed:
        return dataclasses.replace(record, passed=False, error_type=PROBE_ERROR)
    return dataclasses.replace(record, passed=True, error_type=None)


def figure_values(aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any],
            units: dict[MetricKey, str] | None = None) -> dict[MetricKey, Any]:
    values = {}
    for metric in aggregate(records):
        if units is not None:
            units[(metric.group or "", metric.name)] = getattr(metric, "unit", "%") or ""
        value = metric.value
        values[(metric.group or "", metric.name)] = value if isinstance(value, (int, float)) and \
            not isinstance(value, bool) and math.isfinite(value) else None
    return values


def influence_variance(base: Mapping[MetricKey, Any], records: Sequence[Any], strata: Mapping[str, Stratum],
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
            values = figure_values(aggregate, expanded(moved={index: 1, reference: -1}))
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
            moving = sum(1 for v in values[1:] if abs(v) > TOLERANCE)
            if moving:
                bearing[key] = bearing.get(key, 0) + n
                movers[key] = movers.get(key, 0) + moving
            mean = sum(values) / n
            variance[key] += fpc * sum((v - mean) ** 2 for v in values) / (n - 1) / n
    # too few sampled cases bear on a figure (a small domain) for the normal approximation: no interval
    return {key: v for key, v in variance.items()
            if bearing.get(key, 0) >= MIN_BEARING and movers.get(key, 0) >= MIN_MOVERS}


def stratum_variance(stratum: Stratum, records: Sequence[Any], units: Mapping[str, str]) -> float:
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
