"""The distributions the tests and intervals read (pure functions, the standard library only): the normal quantile,
Student's t quantile, log binomial coefficients, the binomial tails of a fair coin (exact McNemar), the binomial
cumulative table a bootstrap draws from, and the hypergeometric cdf."""

from __future__ import annotations

import math
from statistics import NormalDist

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def normal_quantile(probability: float) -> float:
    """The standard normal quantile (``scipy.stats.norm.ppf``)."""
    return NormalDist().inv_cdf(probability)


def normal_cdf(x: float) -> float:
    """The standard normal cdf (``scipy.stats.norm.cdf``)."""
    return NormalDist().cdf(x)


def log_choose(n: int, k: int) -> float:
    """``log C(n, k)`` through ``lgamma``."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


# -- Student's t ---------------------------------------------------------------------------------------------------
def t_quantile(probability: float, df: float) -> float:
    """Student's t quantile (Hill 1970, *Comm. ACM* 13:617, algorithm 396's expansion), refined by Newton steps
    on the incomplete-beta cdf; exact to about 1e-10 for df >= 1."""
    if df > 1e7:
        return normal_quantile(probability)
    x = normal_quantile(probability)
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


# -- the binomial ----------------------------------------------------------------------------------------------------
def binomial_two_sided_half(successes: int, trials: int) -> float:
    """The two-sided exact binomial p-value for ``successes`` of ``trials`` under p = 1/2 (the exact McNemar test on
    discordant pairs): twice the smaller tail, at most 1. The tail is summed from its largest term down with the
    ratio ``P(k-1) / P(k) = k / (n-k+1)``, starting from ``P(low)`` in log space, so any n costs O(low) float steps
    and keeps about 12 significant digits."""
    if trials <= 0:
        return 1.0
    low = min(successes, trials - successes)
    if 2 * low == trials:
        return 1.0
    term = math.exp(log_choose(trials, low) - trials * math.log(2))
    tail = 0.0
    for k in range(low, -1, -1):
        tail += term
        if term < tail * 1e-17:
            break
        term *= k / (trials - k + 1)
    return min(1.0, 2 * tail)


def binomial_upper_half(successes: int, trials: int) -> float:
    """P(X >= successes) for X ~ Binomial(trials, 1/2): the one-sided exact McNemar p-value that the discordant
    pairs lean ``successes`` of ``trials`` one way (summed in log space from the largest term)."""
    if trials <= 0 or successes <= 0:
        return 1.0
    if successes > trials:
        return 0.0
    log_half = trials * math.log(2)
    terms = [math.exp(log_choose(trials, k) - log_half) for k in range(successes, trials + 1)]
    return min(1.0, math.fsum(terms))


def binomial_cdf_table(trials: int, p: float) -> tuple[int, list[float]]:
    """The cumulative distribution of Binomial(trials, p), for drawing by inversion: (first k, CDF from it), the
    tails below 1e-16 cut off. Built from the mode outwards with the ratio of successive terms."""
    if p <= 0.0 or trials == 0:
        return 0, [1.0]
    if p >= 1.0:
        return trials, [1.0]
    mode = min(trials, int((trials + 1) * p))
    log_mode = log_choose(trials, mode) + mode * math.log(p) + (trials - mode) * math.log1p(-p)
    ratio = p / (1 - p)
    above, term, k = [], math.exp(log_mode), mode
    while k <= trials and (term > 1e-16 or k == mode):
        above.append(term)
        term *= (trials - k) / (k + 1) * ratio
        k += 1
    below, term, k = [], math.exp(log_mode), mode
    while k > 0:
        term *= k / (trials - k + 1) / ratio
        k -= 1
        if term <= 1e-16:
            break
        below.append(term)
    terms = below[::-1] + above
    cdf, total = [], 0.0
    for t in terms:
        total += t
        cdf.append(total)
    return mode - len(below), cdf


# -- the hypergeometric ------------------------------------------------------------------------------------------------
def hypergeometric_cdf(k: int, population: int, successes: int, draws: int) -> float:
    """P(X <= k) for X ~ Hypergeometric(population, successes, draws)."""
    low, high = max(0, draws - (population - successes)), min(draws, successes)
    if k < low:
        return 0.0
    if k >= high:
        return 1.0
    denominator = log_choose(population, draws)
    return min(1.0, sum(math.exp(log_choose(successes, x) + log_choose(population - successes, draws - x)
                                 - denominator) for x in range(low, k + 1)))
