"""Confidence intervals (pure functions): Wilson's score interval (also at an effective sample size), the t interval
of a mean and of a stratified sum, Newcombe's interval of a paired difference of proportions, the exact
hypergeometric interval of a finite population's proportion, and MOVER for a mean of figures."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .distributions import Z95, hypergeometric_cdf, t_quantile


def wilson_bounds(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval (Wilson 1927, *JASA* 22:209) of a share ``p`` over ``n`` cases, unclipped: the one
    formula :func:`wilson_interval` and :func:`wilson_effective` read."""
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return center - half, center + half


def wilson_interval(correct: float, total: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for a binomial proportion (stays inside [0, 1], sensible at 0/n and n/n)."""
    if not total or total <= 0:
        return None
    low, high = wilson_bounds(correct / total, total, z)
    # At 0/n and n/n the bound is exactly 0 or 1; rounding would otherwise leave 0.9999999999999999.
    return 0.0 if correct <= 0 else max(0.0, low), 1.0 if correct >= total else min(1.0, high)


def wilson_effective(rate: float, variance: float, cases: int) -> tuple[float, float]:
    """Wilson's score interval for ``rate`` with the effective sample size ``rate (1 - rate) / variance`` (Korn &
    Graubard 1998; the cases themselves when the variance or the rate's spread is zero)."""
    effective = rate * (1 - rate) / variance if 0 < rate < 1 and variance > 0 else float(max(1, cases))
    low, high = wilson_bounds(rate, max(1.0, min(effective, 1e9)))
    return max(0.0, low), min(1.0, high)


def t_interval(mean: float, sd: float, n: float) -> tuple[float, float]:
    """The 95% t interval of a mean over ``n`` values with sample standard deviation ``sd``:
    ``mean ± t(0.975, n - 1) sd / sqrt(n)``."""
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def stratified_t_interval(strata: Mapping[Any, Sequence[float]], confidence: float = 0.95
                          ) -> tuple[float, float] | None:
    """The interval of ``D = sum of every unit's contribution`` (units grouped by stratum): a t interval with the
    stratified variance ``Var(D) = sum_s n_s / (n_s - 1) * sum_(u in s) (c_u - mean_s)^2`` and Satterthwaite's degrees
    of freedom (Satterthwaite 1946, *Biometrics Bulletin* 2:110; Cochran 1977, *Sampling Techniques*, 5.4); for one
    stratum of equal weights the paired t interval. None when no stratum has two units (no variance to estimate)."""
    total, variance, satterthwaite = 0.0, 0.0, 0.0
    estimable = False
    for units in strata.values():
        n = len(units)
        total += sum(units)
        if n < 2:
            continue
        estimable = True
        mean = sum(units) / n
        part = n / (n - 1) * sum((u - mean) ** 2 for u in units)
        variance += part
        satterthwaite += part * part / (n - 1)
    if not estimable:
        return None
    if variance <= 0:
        return total, total
    df = variance * variance / satterthwaite
    half = t_quantile(0.5 + confidence / 2, df) * math.sqrt(variance)
    return total - half, total + half



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


# -- per-case outcomes, from the suite's own aggregation -------------------------------------------------------------
MetricKey = tuple[str, str]  # (group, name)



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




def mover_mean_interval(figures: Sequence[tuple[float, float | None]], z: float = Z95) -> tuple[float, float] | None:
    """MOVER (Zou & Donner 2008, *Statistics in Medicine* 27:1693) for the mean of independent figures, each a
    ``(value, total)``: each figure's own Wilson interval (its value over its total), its distances below and above
    the value squared and added, over the number of figures."""
    if not figures or any(not total or total <= 0 for _, total in figures):
        return None
    k = len(figures)
    mean = sum(value for value, _ in figures) / k
    below = above = 0.0
    for value, total in figures:
        low, high = wilson_interval(value * total, total, z)
        below += (value - low) ** 2
        above += (high - value) ** 2
    return max(0.0, mean - math.sqrt(below) / k), min(1.0, mean + math.sqrt(above) / k)


def dependent_mean_interval(figures: Sequence[tuple[float, float | None]], z: float = Z95
                            ) -> tuple[float, float] | None:
    """The mean of the figures' Wilson bounds (each a ``(value, total)``): MOVER for a mean of fully dependent
    figures (the widest case)."""
    if not figures or any(not total or total <= 0 for _, total in figures):
        return None
    bounds = [wilson_interval(value * total, total, z) for value, total in figures]
    return sum(b[0] for b in bounds) / len(bounds), sum(b[1] for b in bounds) / len(bounds)
