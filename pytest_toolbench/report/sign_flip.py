"""The paired sign-flip test, the interval of a weighted mean difference, power, and multiplicity (pure functions).

A compared figure that is not a plain count of cases is a weighted sum of per-case differences: ``D = sum_u c_u``,
where a unit ``u`` is a case (or a cluster of cases that share a source, e.g. the variants of one conversation) and
``c_u`` its weighted difference current - baseline. Under "no change" the two runs' outcomes of a unit are
exchangeable, so each ``c_u`` is as likely to carry either sign: the **sign-flip (Fisher-Pitman) randomisation
test** compares ``|D|`` with the distribution of ``|sum_u e_u c_u|`` over independent random signs ``e_u``
(Fisher 1935, *The Design of Experiments* section 21; Good 2005, *Permutation, Parametric and Bootstrap Tests of
Hypotheses*, ch. 3). It is exact whatever the distribution of the values:

- when the signs can be enumerated (the distinct sign patterns, after units of equal ``|c_u|`` are pooled into
  binomial counts, number at most :data:`EXACT_SUPPORT_LIMIT` = 2^20: every figure over at most 20 units, and a
  figure over a few strata of 0/1 outcomes whatever its size) the p-value is computed exactly, by a
  meet-in-the-middle convolution of the two halves' distributions;
- otherwise by Monte Carlo: :data:`MONTE_CARLO_RESAMPLES` random sign vectors (numpy PCG64, seed
  :data:`SIGN_FLIP_SEED`), ``p = (1 + hits) / (1 + resamples)`` (Phipson & Smyth 2010, *Stat. Appl. Genet. Mol.
  Biol.* 9:39: never 0).

So a p-value is never below what the test can resolve: ``2 / 2^m`` over ``m`` non-zero units (one unit, or no
non-zero difference: p = 1).

The interval of ``D`` is a **t interval with the stratified variance** (units are independent, and alike within
their stratum): ``Var(D) = sum_s n_s / (n_s - 1) * sum_(u in s) (c_u - mean_s)^2`` with Satterthwaite's degrees of
freedom (Satterthwaite 1946, *Biometrics Bulletin* 2:110; Cochran 1977, *Sampling Techniques*, 5.4). For one
stratum of equal weights it is the paired t interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping, Sequence

#: Seed and size of the Monte Carlo sign-flip (documented in docs/statistics.md; changing them changes the p-values).
SIGN_FLIP_SEED = 20261127
MONTE_CARLO_RESAMPLES = 9_999
#: The largest number of distinct sign patterns (after pooling equal weights) enumerated exactly: 2^20.
EXACT_SUPPORT_LIMIT = 1 << 20
#: Resamples drawn at a time (memory: chunk x units signs).
_CHUNK = 500
#: The power the minimum detectable effect is given at.
POWER = 0.80
#: --toolbench-multiple: the corrections of the gate's family.
MULTIPLE_METHODS = ("holm", "westfall-young", "bonferroni", "none")
#: The default: Holm's step-down over the figures whose test can reach the level (docs/statistics.md "Is the change real?":
#: westfall-young has more power on nested figures, and a family-wise error at the level rather than below it).
DEFAULT_MULTIPLE = "holm"


def _relative_tolerance(values: Sequence[float]) -> float:
    return 1e-9 * max(1e-300, sum(abs(v) for v in values))


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip test's result: the two-sided p-value, the one-sided ones (``p_lower`` = P(sum <= observed),
    ``p_upper`` = P(sum >= observed) under the null), whether they were enumerated exactly, and over how many
    units with a non-zero difference."""

    p_value: float
    exact: bool
    units: int
    p_lower: float = 1.0
    p_upper: float = 1.0

    @property
    def method(self) -> str:
        return "exact" if self.exact else f"Monte Carlo, {MONTE_CARLO_RESAMPLES} resamples"


def sign_flip_test(contributions: Sequence[float], resamples: int = MONTE_CARLO_RESAMPLES,
                   seed: int = SIGN_FLIP_SEED) -> SignFlip:
    """Sign-flip test of ``sum(contributions) == 0``, two-sided and one-sided (see the module docstring)."""
    tolerance = _relative_tolerance(contributions)
    units = [float(c) for c in contributions if abs(c) > tolerance]
    total = sum(units)
    observed = abs(total)
    if len(units) <= 1 or observed <= tolerance:
        one_sided = 1.0 if not units or observed <= tolerance else 0.5
        return SignFlip(1.0, True, len(units), p_lower=1.0 if total >= 0 else one_sided,
                        p_upper=1.0 if total <= 0 else one_sided)
    groups = _pooled(units)
    support = 1
    for _, count in groups:
        support *= count + 1
        if support > EXACT_SUPPORT_LIMIT:
            break
    if support <= EXACT_SUPPORT_LIMIT:
        return SignFlip(_exact_p(groups, observed - tolerance), True, len(units),
                        p_lower=_exact_tail(groups, total + tolerance), p_upper=_exact_tail(groups, -total + tolerance))
    two_sided, lower, upper = _monte_carlo(units, resamples, seed)
    return SignFlip(two_sided, False, len(units), p_lower=lower, p_upper=upper)


def _monte_carlo(units: Sequence[float], resamples: int, seed: int) -> tuple[float, float, float]:
    """Two-sided, lower and upper Monte Carlo p-values of one row, from the same sign vectors."""
    import numpy as np

    row = np.asarray(units, dtype=float)
    total = float(row.sum())
    tolerance = 1e-9 * max(1e-300, float(np.abs(row).sum()))
    rng = np.random.Generator(np.random.PCG64(seed))
    both = lower = upper = 0
    done = 0
    while done < resamples:
        chunk = min(_CHUNK, resamples - done)
        signs = rng.integers(0, 2, size=(chunk, row.size), dtype=np.int8).astype(float) * 2 - 1
        sums = signs @ row
        both += int((np.abs(sums) >= abs(total) - tolerance).sum())
        lower += int((sums <= total + tolerance).sum())
        upper += int((sums >= total - tolerance).sum())
        done += chunk
    return tuple(min(1.0, (1 + hits) / (1 + resamples)) for hits in (both, lower, upper))  # type: ignore[return-value]


def _exact_tail(groups: Sequence[tuple[float, int]], threshold: float) -> float:
    """P(sum of the groups' signed values <= threshold), enumerated as in :func:`_exact_p`."""
    import numpy as np

    a_values, a_probabilities, b_values, b_cumulative = _halves(groups)
    below = b_cumulative[np.searchsorted(b_values, threshold - a_values, side="right")]
    return float(min(1.0, max(0.0, float(np.sum(a_probabilities * below)))))


def _pooled(units: Sequence[float]) -> list[tuple[float, int]]:
    """Units of equal ``|c|`` (to 12 significant digits) pooled: (|c|, how many)."""
    counts: dict[float, int] = {}
    for value in units:
        key = float(f"{abs(value):.12g}")
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items())


def _group_distribution(value: float, count: int):
    """``value * (2K - count)`` for K ~ Binomial(count, 1/2): (values, probabilities)."""
    import numpy as np

    k = np.arange(count + 1)
    log_pmf = np.array([math.lgamma(count + 1) - math.lgamma(i + 1) - math.lgamma(count - i + 1) for i in k]) \
        - count * math.log(2)
    return value * (2 * k - count), np.exp(log_pmf)


def _side(groups: Sequence[tuple[float, int]]):
    import numpy as np

    values, probabilities = np.zeros(1), np.ones(1)
    for value, count in groups:
        v, p = _group_distribution(value, count)
        values = (values[:, None] + v[None, :]).ravel()
        probabilities = (probabilities[:, None] * p[None, :]).ravel()
    return values, probabilities


def _halves(groups: Sequence[tuple[float, int]]):
    """The groups split into two halves of about equal support: one half's (values, probabilities), the other's
    sorted values and cumulative probabilities (with a leading 0)."""
    import numpy as np

    ordered = sorted(groups, key=lambda g: g[1], reverse=True)
    total = math.prod(count + 1 for _, count in ordered)
    left: list[tuple[float, int]] = []
    right: list[tuple[float, int]] = []
    size = 1
    for group in ordered:
        if size * size < total:
            left.append(group)
            size *= group[1] + 1
        else:
            right.append(group)
    a_values, a_probabilities = _side(left)
    b_values, b_probabilities = _side(right)
    order = np.argsort(b_values, kind="stable")
    b_values, b_cumulative = b_values[order], np.cumsum(b_probabilities[order])
    return a_values, a_probabilities, b_values, np.concatenate([[0.0], b_cumulative])


def _exact_p(groups: Sequence[tuple[float, int]], threshold: float) -> float:
    """P(|sum of the groups' signed values| >= threshold), enumerated: the groups are split into two halves of
    about equal support, and for each value ``a`` of one half the other's probability of ``|a + b| >= threshold``
    is read off its sorted cumulative distribution."""
    import numpy as np

    a_values, a_probabilities, b_values, b_cumulative = _halves(groups)
    # P(B >= threshold - a) + P(B <= -threshold - a): disjoint because threshold > 0
    upper = 1.0 - b_cumulative[np.searchsorted(b_values, threshold - a_values, side="left")]
    lower = b_cumulative[np.searchsorted(b_values, -threshold - a_values, side="right")]
    return float(min(1.0, max(0.0, float(np.sum(a_probabilities * (upper + lower))))))


def monte_carlo_p_values(rows: Sequence[Sequence[float]], resamples: int = MONTE_CARLO_RESAMPLES,
                         seed: int = SIGN_FLIP_SEED):
    """Monte Carlo sign-flip p-values of several rows of contributions of the same length at once (one run's
    figure is one row; the type-I simulation passes many): the same ``resamples`` sign vectors for every row,
    ``p = (1 + hits) / (1 + resamples)``."""
    import numpy as np

    matrix = np.asarray(rows, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("rows of contributions of one length expected")
    observed = np.abs(matrix.sum(axis=1))
    tolerance = 1e-9 * np.maximum(1e-300, np.abs(matrix).sum(axis=1))
    rng = np.random.Generator(np.random.PCG64(seed))
    hits = np.zeros(matrix.shape[0])
    done = 0
    while done < resamples:
        chunk = min(_CHUNK, resamples - done)
        signs = rng.integers(0, 2, size=(chunk, matrix.shape[1]), dtype=np.int8).astype(float) * 2 - 1
        hits += (np.abs(signs @ matrix.T) >= (observed - tolerance)[None, :]).sum(axis=0)
        done += chunk
    return np.minimum(1.0, (1 + hits) / (1 + resamples))


# -- the interval ----------------------------------------------------------------------------------------------------
def t_quantile(probability: float, df: float) -> float:
    """Student's t quantile (Hill 1970, *Comm. ACM* 13:617, algorithm 396's expansion), refined by Newton steps
    on the incomplete-beta cdf; exact to about 1e-10 for df >= 1."""
    if df > 1e7:
        return NormalDist().inv_cdf(probability)
    x = NormalDist().inv_cdf(probability)
    for _ in range(60):
        cdf = _t_cdf(x, df)
        density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi) \
            * (1 + x * x / df) ** (-(df + 1) / 2)
        step = (cdf - probability) / density
        x -= step
        if abs(step) < 1e-12 * max(1.0, abs(x)):
            break
    return x


def _t_cdf(x: float, df: float) -> float:
    """Student's t cdf through the regularized incomplete beta function."""
    z = df / (df + x * x)
    tail = 0.5 * _betainc(df / 2, 0.5, z)
    return 1 - tail if x > 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes, 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        fraction *= d * c
        numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + numerator * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + numerator / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        fraction *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return front * fraction / a


def stratified_t_interval(strata: Mapping[Any, Sequence[float]], confidence: float = 0.95
                          ) -> tuple[float, float] | None:
    """The interval of ``D = sum of every unit's contribution`` (units grouped by stratum), as in the module
    docstring; None when no stratum has two units (no variance to estimate)."""
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


# -- power -----------------------------------------------------------------------------------------------------------
def mde_counts(cases: int, discordant: int, alpha: float, power: float = POWER) -> float | None:
    """The smallest drop of a paired proportion the one-sided McNemar test at level ``alpha`` (the gate's test)
    detects with ``power``, at ``cases`` pairs and the observed share of discordant pairs (Connor 1987,
    *Biometrics* 43:207, equation 3 with the one-sided quantile, solved for the difference):
    ``sqrt(n) d = z_(1-a) sqrt(psi) + z_power sqrt(psi - d^2)``, where
    the discordance ``psi`` is the observed one, or the difference itself when that is larger (a drop cannot flip
    fewer cases than it moves)."""
    if cases <= 0 or 0.5 ** cases > alpha:  # even every case dropping cannot reach the level (exact test)
        return None
    z_alpha, z_power = NormalDist().inv_cdf(1 - alpha), NormalDist().inv_cdf(power)
    observed = discordant / cases

    def excess(d: float) -> float:
        psi = max(observed, d)
        return math.sqrt(cases) * d - z_alpha * math.sqrt(psi) - z_power * math.sqrt(max(0.0, psi - d * d))

    low, high = 0.0, 1.0
    if excess(high) < 0:
        return None  # not even a change of every case is detected
    for _ in range(80):
        middle = (low + high) / 2
        if excess(middle) < 0:
            low = middle
        else:
            high = middle
    return high


def mde_sign_flip(contributions: Sequence[float], alpha: float, power: float = POWER) -> float | None:
    """The smallest drop of ``D`` detected with ``power`` by the one-sided sign-flip test at level ``alpha`` (the
    gate's test), in the normal approximation to its randomisation distribution (Fisher-Pitman: the null variance
    is ``sum c_u^2``): ``(z_(1-a) + z_power) * sqrt(sum c_u^2)``. None when no unit differs (no spread
    observed)."""
    spread = math.sqrt(sum(c * c for c in contributions))
    if spread <= 0:
        return None
    return (NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(power)) * spread


# -- multiplicity ----------------------------------------------------------------------------------------------------
def adjust(p_values: Sequence[float], method: str) -> list[float]:
    """Family-wise adjusted p-values: Holm's step-down (Holm 1979, *Scand. J. Statist.* 6:65), Bonferroni, or
    none; each adjusted p is compared with the level itself (``statsmodels.stats.multitest.multipletests``
    gives the same numbers)."""
    m = len(p_values)
    if method == "none" or m == 0:
        return list(p_values)
    if method == "bonferroni":
        return [min(1.0, m * p) for p in p_values]
    if method != "holm":
        raise ValueError(f"unknown correction {method!r} (one of {', '.join(MULTIPLE_METHODS)})")
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def westfall_young(figures: Sequence[Mapping[str, float]], resamples: int = MONTE_CARLO_RESAMPLES,
                   seed: int = SIGN_FLIP_SEED) -> list[float]:
    """Westfall & Young's step-down minP adjusted p-values (Westfall & Young 1993, *Resampling-Based Multiple
    Testing*, algorithm 2.8; Ge, Dudoit & Speed 2003, *TEST* 12:1) of one-sided sign-flip tests that share their
    units: ``figures[f]`` maps unit -> the unit's contribution to figure f, oriented so that a positive sum is
    "worse". One random sign per unit and resample flips every figure at once, so the joint null distribution
    (nested aggregates move with their categories) is the one resampled; each figure's p-value, observed and
    resampled, is its rank among its own resampled sums. Strong family-wise control: subset pivotality holds, each
    figure's null distribution depends only on its own units' signs."""
    import numpy as np

    if not figures:
        return []
    keys = sorted({unit for figure in figures for unit in figure})
    index = {unit: i for i, unit in enumerate(keys)}
    matrix = np.zeros((len(figures), max(1, len(keys))))
    for row, figure in enumerate(figures):
        for unit, value in figure.items():
            matrix[row, index[unit]] += value
    observed = matrix.sum(axis=1)
    tolerance = 1e-9 * np.maximum(1e-300, np.abs(matrix).sum(axis=1))
    rng = np.random.Generator(np.random.PCG64(seed))
    sums = np.empty((resamples, len(figures)))
    done = 0
    while done < resamples:
        chunk = min(_CHUNK, resamples - done)
        signs = rng.integers(0, 2, size=(chunk, matrix.shape[1]), dtype=np.int8).astype(float) * 2 - 1
        sums[done:done + chunk] = signs @ matrix.T
        done += chunk
    ordered = np.sort(sums, axis=0)
    # a figure's p-value: the share of resampled sums at least as large (worse) as its own
    p_observed = np.array([(1 + resamples - np.searchsorted(ordered[:, f], observed[f] - tolerance[f], side="left"))
                           / (1 + resamples) for f in range(len(figures))])
    p_resampled = np.empty_like(sums)
    for f in range(len(figures)):
        p_resampled[:, f] = (1 + resamples - np.searchsorted(ordered[:, f], sums[:, f] - tolerance[f],
                                                             side="left")) / (1 + resamples)
    order = np.argsort(p_observed, kind="stable")
    successive_min = np.minimum.accumulate(p_resampled[:, order][:, ::-1], axis=1)[:, ::-1]
    adjusted_sorted = (1 + (successive_min <= p_observed[order][None, :] + 1e-15).sum(axis=0)) / (1 + resamples)
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(adjusted_sorted))
    adjusted = np.empty(len(figures))
    adjusted[order] = adjusted_sorted
    return [float(a) for a in adjusted]


def level_for_power(alpha: float, method: str, family: int) -> float:
    """The per-figure level the minimum detectable effect is given at: ``alpha`` without a correction, else
    Bonferroni's ``alpha / family`` (Holm's first step; its later steps only make the test more powerful)."""
    return alpha if method == "none" or family <= 1 else alpha / family


def power_counts(cases: int, worse: int, better: int, drop: float, alpha: float) -> float | None:
    """The power of the one-sided McNemar test at level ``alpha`` against a drop of ``drop`` (a fraction) of a
    paired proportion over ``cases`` pairs, at this comparison's background flips: the pairs that flip both ways
    (``2 min(worse, better)``: the symmetric part of the discordance, what two runs of one model also show, and
    not a drop the run may already hold) are the background, and the drop adds its own flips, so the discordance
    under the alternative is ``psi = 2 min(worse, better) / cases + drop`` (Connor 1987, *Biometrics* 43:207,
    equation 3 solved for the power: ``z_power = (sqrt(n) d - z_(1-a) sqrt(psi)) / sqrt(psi - d^2)``). 0 when even
    every case dropping cannot reach the level (the exact test's floor); None over no cases."""
    if cases <= 0:
        return None
    if 0.5 ** cases > alpha or drop <= 0:
        return 0.0
    psi = min(1.0, 2 * min(worse, better) / cases + drop)
    numerator = math.sqrt(cases) * drop - NormalDist().inv_cdf(1 - alpha) * math.sqrt(psi)
    spread = psi - drop * drop
    if spread <= 1e-15:
        return 1.0 if numerator > 0 else 0.0
    return NormalDist().cdf(numerator / math.sqrt(spread))


def power_sign_flip(contributions: Sequence[float], drop: float, alpha: float) -> float | None:
    """The power of the one-sided sign-flip test at level ``alpha`` against a drop of ``drop`` of ``D``, at this
    comparison's background flips, in the normal approximation :func:`mde_sign_flip` uses: the symmetric part of
    the units that differ (twice the smaller of the two sides' sums of squares) is the background, and the drop
    adds ``drop / mean|c|`` more units like the observed ones, so the null variance is
    ``2 min(sum c+^2, sum c-^2) + drop * mean|c|`` and the power ``Phi(drop / sqrt(that) - z_(1-a))``. None when
    no unit differs (no flip to scale the drop by)."""
    moving = [c for c in contributions if c]
    if not moving or drop <= 0:
        return None
    up = sum(c * c for c in moving if c > 0)
    down = sum(c * c for c in moving if c < 0)
    variance = 2 * min(up, down) + drop * sum(abs(c) for c in moving) / len(moving)
    return NormalDist().cdf(drop / math.sqrt(variance) - NormalDist().inv_cdf(1 - alpha))


def background_flips(contributions: Sequence[float], units: int) -> float | None:
    """The share of units that flip both ways (twice the smaller side): the run's background noise, the flip rate
    the stated power is given at."""
    if units <= 0:
        return None
    up = sum(1 for c in contributions if c > 0)
    down = sum(1 for c in contributions if c < 0)
    return 2 * min(up, down) / units
