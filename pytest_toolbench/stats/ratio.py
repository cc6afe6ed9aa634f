"""The combined ratio estimator of a count or a mean of cases in a sampled run (Cochran 1977 §6.11), with its
linearized variance and the finite population correction (pure functions on records)."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from ..contract.suite import NOT_SCORED
from .distributions import Z95
from .estimate import HYPERGEOMETRIC, RATIO_NORMAL, RATIO_WILSON, Estimate, MetricKey
from .intervals import hypergeometric_interval, wilson_effective
from .sampling import Design
from .strata import Stratum


def per_case(aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any]
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


def ratio_estimate(key: MetricKey, plain: float | None, rate: bool,
                    per_case: list[dict[MetricKey, tuple[Any, Any, Any]]] | None, records: Sequence[Any],
                    strata: Mapping[str, Stratum], design: Design) -> Estimate | None:
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
        interval, method = wilson_effective(ratio, variance, covered), RATIO_WILSON
    else:
        half = Z95 * math.sqrt(variance)
        interval = (ratio - half, ratio + half)
        if rate:
            interval = (max(0.0, interval[0]), min(1.0, interval[1]))
        method = RATIO_NORMAL
    return Estimate(ratio, interval, design.sampled, design.population, design.spec.seed, method)
