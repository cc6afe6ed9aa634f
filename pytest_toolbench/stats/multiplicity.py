"""Multiplicity: the family-wise corrections of the gate (pure functions): Holm's step-down, Bonferroni, none, and
Westfall & Young's step-down minP over sign-flip tests that share their units; the Bonferroni simultaneous
confidence of a family's intervals (Dunn 1961) and the per-figure level power is given at."""

from __future__ import annotations

from typing import Mapping, Sequence

from .sign_flip import CHUNK, MONTE_CARLO_RESAMPLES, SIGN_FLIP_SEED

#: --toolbench-multiple: the corrections of the gate's family.
MULTIPLE_METHODS = ("holm", "westfall-young", "bonferroni", "none")
#: The default: Holm's step-down over the figures whose test can reach the level (docs/statistics.md "Is the change real?":
#: westfall-young has more power on nested figures, and a family-wise error at the level rather than below it).
DEFAULT_MULTIPLE = "holm"


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
        chunk = min(CHUNK, resamples - done)
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


def simultaneous_confidence(alpha: float, method: str, family: int) -> float:
    """The confidence of each member's interval so that the family's intervals hold together at ``1 - alpha``:
    Bonferroni, each at ``1 - alpha / family`` (Dunn 1961, *JASA* 56:52); ``1 - alpha`` without a correction or for
    a family of one."""
    return 1 - (alpha / family if method != "none" and family > 1 else alpha)
