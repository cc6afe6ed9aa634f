"""Power and the minimum detectable effect of the gate's one-sided paired tests (pure functions): the exact McNemar
test of a count (Connor 1987, *Biometrics* 43:207) and the sign-flip test of a weighted mean difference, in the
normal approximation to its randomisation distribution."""

from __future__ import annotations

import math
from typing import Sequence

from .distributions import normal_cdf, normal_quantile

#: The power the minimum detectable effect is given at.
POWER = 0.80


def mde_counts(cases: int, discordant: int, alpha: float, power: float = POWER) -> float | None:
    """The smallest drop of a paired proportion the one-sided McNemar test at level ``alpha`` (the gate's test)
    detects with ``power``, at ``cases`` pairs and the observed share of discordant pairs (Connor 1987,
    *Biometrics* 43:207, equation 3 with the one-sided quantile, solved for the difference):
    ``sqrt(n) d = z_(1-a) sqrt(psi) + z_power sqrt(psi - d^2)``, where
    the discordance ``psi`` is the observed one, or the difference itself when that is larger (a drop cannot flip
    fewer cases than it moves)."""
    if cases <= 0 or 0.5 ** cases > alpha:  # even every case dropping cannot reach the level (exact test)
        return None
    z_alpha, z_power = normal_quantile(1 - alpha), normal_quantile(power)
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
    return (normal_quantile(1 - alpha) + normal_quantile(power)) * spread


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
    numerator = math.sqrt(cases) * drop - normal_quantile(1 - alpha) * math.sqrt(psi)
    spread = psi - drop * drop
    if spread <= 1e-15:
        return 1.0 if numerator > 0 else 0.0
    return normal_cdf(numerator / math.sqrt(spread))


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
    return normal_cdf(drop / math.sqrt(variance) - normal_quantile(1 - alpha))


def background_flips(contributions: Sequence[float], units: int) -> float | None:
    """The share of units that flip both ways (twice the smaller side): the run's background noise, the flip rate
    the stated power is given at."""
    if units <= 0:
        return None
    up = sum(1 for c in contributions if c > 0)
    down = sum(1 for c in contributions if c < 0)
    return 2 * min(up, down) / units
