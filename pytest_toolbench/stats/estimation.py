"""The figures of a ``--toolbench-sample`` run as estimates of the full benchmark's, with design-based intervals.

The sample is stratified by category, simple random without replacement within a stratum (:mod:`.sampling`).
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

import math
from typing import Any, Callable, Mapping, Sequence

from ..contract.suite import NOT_SCORED
from .distributions import Z95
from .estimate import HYPERGEOMETRIC, INFLUENCE, NO_INTERVAL, STRATIFIED, STRATIFIED_WILSON, TOLERANCE, Estimate, \
    MetricKey
from .intervals import hypergeometric_interval, wilson_effective
from .ratio import per_case as split_per_case, ratio_estimate
from .sampling import Design
from .strata import MAX_INFLUENCE_WORK, MIN_BEARING, PROBE_TOLERANCE, WEIGHT_TOLERANCE, Stratum, figure_values, \
    flipped, influence_variance, repetitions, stratum_variance


def estimate_figures(records: Sequence[Any], design: Design,
                     aggregate: Callable[[Sequence[Any]], Sequence[Any]]) -> dict[MetricKey, Estimate]:
    """Each figure of ``aggregate`` as an :class:`Estimate` of its full-benchmark value, from the sampled
    ``records`` (one per case, no ``--toolbench-repeat`` samples) of the ``design``."""
    records = list(records)
    strata: dict[str, Stratum] = {
        name: Stratum(name, int(row[0]), int(row[1]), int(row[2])) for name, row in design.strata.items()}
    for index, record in enumerate(records):
        stratum = strata.get(record.category)
        if stratum is None:  # a category the design does not know (cannot happen from a draw): its own stratum
            stratum = strata[record.category] = Stratum(record.category, 1, 1, 1)
        if record.error_type != NOT_SCORED:
            stratum.records.append(index)
    sizes: dict[str, int] = {}
    for record in records:
        sizes[record.category] = sizes.get(record.category, 0) + 1
    # the probes (many aggregations) use coarser repetitions, weights within PROBE_TOLERANCE: the coefficients
    # they read are as close; the point estimate uses weights within WEIGHT_TOLERANCE
    repeat = repetitions(strata, sizes, PROBE_TOLERANCE)
    fine_repeat = repetitions(strata, sizes, WEIGHT_TOLERANCE)

    def expanded(replaced: Mapping[int, Any] = {}, moved: Mapping[int, int] = {}) -> list[Any]:  # noqa: B006
        out: list[Any] = []
        for index, record in enumerate(records):
            out.extend([replaced.get(index, record)] * (repeat.get(record.category, 1) + moved.get(index, 0)))
        return out

    unit_of: dict[MetricKey, str] = {}
    base = figure_values(aggregate, expanded(), unit_of)
    fine = base if fine_repeat == repeat else figure_values(aggregate, [record for record in records for _ in range(
        fine_repeat.get(record.category, 1))])
    # A figure that changes when every case is simply counted twice is no function of the categories' shares (a
    # count of cases, a grouping by case id): repeating cases cannot weight it, so it is not estimated.
    plain_values = figure_values(aggregate, records)
    doubled = figure_values(aggregate, [record for record in records for _ in range(2)])
    unweighable = {key for key, value in plain_values.items()
                   if (value is None) != (doubled.get(key) is None)
                   or (value is not None and abs(doubled[key] - value) > TOLERANCE * max(1.0, abs(value)))}
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
        one = figure_values(aggregate, expanded({first: flipped(records[first])}))
        probes = []  # (values, expected move in units of one flip's move)
        if twin is not None:
            probes.append((figure_values(aggregate, expanded({first: flipped(records[first]),
                                                        twin: flipped(records[twin])})), 2.0))
            probes.append((figure_values(aggregate, expanded({first: records[twin]})), 0.0))
        if other is not None:
            probes.append((figure_values(aggregate, expanded({other: flipped(records[other])})), -1.0))
        for key, value in base.items():
            if not linear[key]:
                continue
            moved = one.get(key)
            if value is None or moved is None:
                linear[key] = False
                continue
            tolerance = TOLERANCE * max(1.0, abs(value))
            if any(probe.get(key) is None or abs((probe[key] - value) - times * (moved - value)) > tolerance
                   for probe, times in probes):
                linear[key] = False
                continue
            slope = (moved - value) / step
            if abs(slope) > TOLERANCE:
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
                per_case = split_per_case(aggregate, records)
                plain = plain_values
            found = ratio_estimate(key, plain.get(key), unit_of.get(key) == "%", per_case, records, strata, design)
            if found is None and not units and influence_cost <= MAX_INFLUENCE_WORK:
                if influence is None:
                    influence = influence_variance(base, records, strata, aggregate, expanded, repeat)
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
            variance = sum(c * c * stratum_variance(strata[name], records, units) for name, c in terms.items())
            if unit_of.get(key) == "%" and all(c > 0 for c in terms.values()) and \
                    abs(sum(terms.values()) - 1) < 1e-6 and 0 <= value <= 1:
                # a weighted share of cases (Live, Non-live, the Overall of a full run): Wilson's interval with
                # the effective sample size p(1-p)/v, which a skewed rate needs (Korn & Graubard 1998)
                interval, method = wilson_effective(value, variance, sum(len(strata[n].records) for n in terms)), \
                    STRATIFIED_WILSON
            else:
                half = Z95 * math.sqrt(variance)
                interval = (value - half, value + half)
        if unit_of.get(key) == "%":
            interval = (max(0.0, interval[0]), min(1.0, interval[1]))
        estimates[key] = Estimate(value, interval, sampled, population, seed, method, "", dict(sorted(terms.items())))
    return estimates


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
        p_value = 1.0 if abs(delta) <= TOLERANCE else 0.0
    else:
        p_value = math.erfc(abs(delta) / math.sqrt(2 * variance))
    return delta, (delta - half, delta + half), p_value, pairs
