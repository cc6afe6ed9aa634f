"""The paired sign-flip (Fisher-Pitman) randomisation test (pure functions).

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

Its interval is :func:`.intervals.stratified_t_interval`; its power :mod:`.power`; the joint resampling of a family
of such tests :func:`.multiplicity.westfall_young`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .distributions import log_choose

#: Seed and size of the Monte Carlo sign-flip (documented in docs/statistics.md; changing them changes the p-values).
SIGN_FLIP_SEED = 20261127
MONTE_CARLO_RESAMPLES = 9_999
#: The largest number of distinct sign patterns (after pooling equal weights) enumerated exactly: 2^20.
EXACT_SUPPORT_LIMIT = 1 << 20
#: Resamples drawn at a time (memory: chunk x units signs).
CHUNK = 500


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
        chunk = min(CHUNK, resamples - done)
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
    log_pmf = np.array([log_choose(count, i) for i in k]) - count * math.log(2)
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
        chunk = min(CHUNK, resamples - done)
        signs = rng.integers(0, 2, size=(chunk, matrix.shape[1]), dtype=np.int8).astype(float) * 2 - 1
        hits += (np.abs(signs @ matrix.T) >= (observed - tolerance)[None, :]).sum(axis=0)
        done += chunk
    return np.minimum(1.0, (1 + hits) / (1 + resamples))

