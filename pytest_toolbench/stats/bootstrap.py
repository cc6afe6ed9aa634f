"""The capability profile's statistics: a stratified cluster bootstrap for an area's interval and a cluster sign-flip
test for its change against a baseline (pure functions, Python's own Mersenne Twister, so every machine gets the
same figures).

An area is the unweighted mean of figures; each figure is a ratio of sums over its cases (``sum(num) / sum(den)``:
a count is correct/total, a mean over cases its values over 1 each). Cases are grouped into **units**, the things
that are sampled independently: RoTBench's noise levels repeat the same queries, BFCL's multi-turn variants the same
base conversations, NesTools' Format and Tree score the same cases. Figures whose cases share units are resampled
together; figures that share none are independent **strata**. The bootstrap resamples whole units with replacement
within each stratum (the cluster bootstrap of Davison & Hinkley 1997, *Bootstrap Methods and their Application*,
section 3.8, stratified as in their section 3.7; the percentile interval of their section 5.3), so the dependence
between figures over the same units is kept instead of assumed away.

A change against the baseline over the same cases is tested by flipping units: under "no change" the two runs'
answers for a unit are exchangeable, so swapping them for any set of units gives a change as likely as the one seen
(a randomisation test, Davison & Hinkley section 4.3; the cluster version of the paired sign-flip test). Exact over
every assignment when at most :data:`EXACT_UNITS` units differ between the runs, Monte Carlo with
:data:`RESAMPLES` draws above; the p-value is never below what the test can resolve (``2 / 2**d`` exact, ``1 / (B
+ 1)`` by Monte Carlo).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from dataclasses import dataclass
from typing import Mapping, Sequence

from .distributions import binomial_cdf_table

#: Bootstrap resamples and sign-flip draws per area (documented in docs/statistics.md; changing them changes the figures).
RESAMPLES = 2000
SEED = 20261127
#: At most this many units differing between the two runs: the sign-flip test enumerates all 2**d assignments.
EXACT_UNITS = 12

#: one figure over its cases: unit -> (numerator, denominator) summed over the unit's cases
FigureParts = Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class AreaFigures:
    """An area's figures for the bootstrap: per figure its suite (units of different suites are never shared), its
    parts, and whether it enters as ``1 - value``."""

    suites: tuple[str, ...]
    parts: tuple[FigureParts, ...]
    inverted: tuple[bool, ...]
    #: the value is ``constant + sum(weights * figures)``; None: the unweighted mean (an area)
    weights: tuple[float, ...] | None = None
    constant: float = 0.0

    def value(self, sums: Sequence[tuple[float, float]]) -> float | None:
        values = []
        for (num, den), inverted in zip(sums, self.inverted):
            if den <= 0:
                return None
            values.append(1 - num / den if inverted else num / den)
        if self.weights is None:
            return sum(values) / len(values)
        return self.constant + sum(w * v for w, v in zip(self.weights, values))


def strata(area: AreaFigures) -> list[tuple[list[int], list[str]]]:
    """The independent groups of an area: figures of one suite linked (directly or through others) by a shared
    unit, with the units they cover, in a fixed order."""
    parent = list(range(len(area.parts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[str, str], int] = {}
    for index, (suite, parts) in enumerate(zip(area.suites, area.parts)):
        for unit in parts:
            first = owner.setdefault((suite, unit), index)
            parent[root(index)] = root(first)
    groups: dict[int, list[int]] = {}
    for index in range(len(area.parts)):
        groups.setdefault(root(index), []).append(index)
    result = []
    for figures in groups.values():
        units = sorted({unit for index in figures for unit in area.parts[index]})
        result.append((figures, units))
    return result


class _Binomial:
    """Exact Binomial(n, p) draws by inversion of cached cumulative tables (one per n)."""

    def __init__(self, p: float):
        self.p = p
        self.tables: dict[int, tuple[int, list[float]]] = {}

    def draw(self, rng: random.Random, trials: int) -> int:
        table = self.tables.get(trials)
        if table is None:
            table = self.tables[trials] = binomial_cdf_table(trials, self.p)
        first, cdf = table
        return first + min(bisect.bisect_left(cdf, rng.random() * cdf[-1]), len(cdf) - 1)


#: A stratum with at most this many distinct unit vectors draws its resample as multinomial counts of them.
MULTINOMIAL_DISTINCT = 16


class _StratumSampler:
    """Draws the resampled (num, den) sums of one stratum's figures. Resampling n units with replacement draws each
    distinct unit vector (its figures' (num, den)) a Multinomial(n, shares) number of times: with few distinct
    vectors (0/1 outcomes: at most 2^figures) the counts are drawn exactly as successive binomials by inversion;
    otherwise the units themselves are drawn with ``random.choices``."""

    def __init__(self, area: AreaFigures, figures: list[int], units: list[str]):
        self.figures = figures
        self.vectors = [tuple(area.parts[f].get(unit, (0.0, 0.0)) for f in figures) for unit in units]
        counted: dict[tuple, int] = {}
        for vector in self.vectors:
            counted[vector] = counted.get(vector, 0) + 1
        self.distinct = sorted(counted)
        self.binomials: list[_Binomial] | None = None
        if len(self.distinct) <= MULTINOMIAL_DISTINCT:
            frequencies = [counted[v] / len(self.vectors) for v in self.distinct]
            remaining, self.binomials = 1.0, []
            for share in frequencies[:-1]:
                self.binomials.append(_Binomial(min(1.0, share / remaining) if remaining > 0 else 1.0))
                remaining -= share

    def draw(self, rng: random.Random) -> list[tuple[float, float]]:
        count = len(self.vectors)
        if self.binomials is not None:
            left, counts = count, []
            for binomial in self.binomials:
                drawn = binomial.draw(rng, left) if left else 0
                counts.append(drawn)
                left -= drawn
            counts.append(left)
            return [(sum(c * v[i][0] for c, v in zip(counts, self.distinct)),
                     sum(c * v[i][1] for c, v in zip(counts, self.distinct))) for i in range(len(self.figures))]
        drawn = rng.choices(self.vectors, k=count)
        return [(sum(v[i][0] for v in drawn), sum(v[i][1] for v in drawn)) for i in range(len(self.figures))]


def constant(area: AreaFigures) -> bool:
    """Every unit of every figure has the same ratio (every case passes, say): every resample is the observed
    value, and the bootstrap has nothing to say."""
    for parts in area.parts:
        ratios = {round(num / den, 12) for num, den in parts.values() if den > 0}
        if len(ratios) > 1 or any(den <= 0 < num or (den == 0 and num == 0) for num, den in parts.values()):
            return False
    return True


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def observed_sums(area: AreaFigures) -> list[tuple[float, float]]:
    return [(sum(n for n, _ in parts.values()), sum(d for _, d in parts.values())) for parts in area.parts]


def cluster_bootstrap_interval(area: AreaFigures, resamples: int = RESAMPLES, seed: int = SEED
                               ) -> tuple[float, float] | None:
    """The 95% percentile interval of the area's value under the stratified cluster bootstrap; None when a figure
    has no cases. A resample in which a figure covers no case (its denominator 0) is drawn again."""
    observed = area.value(observed_sums(area)) if area.parts else None
    if observed is None:
        return None
    if constant(area):
        return observed, observed
    rng = random.Random(seed)
    samplers = [_StratumSampler(area, figures, units) for figures, units in strata(area)]
    values = []
    attempts = 0
    while len(values) < resamples and attempts < 20 * resamples:
        attempts += 1
        sums: list[tuple[float, float]] = [(0.0, 0.0)] * len(area.parts)
        for sampler in samplers:
            for index, drawn in zip(sampler.figures, sampler.draw(rng)):
                sums[index] = drawn
        value = area.value(sums)
        if value is not None:
            values.append(value)
    if len(values) < resamples // 2:
        return None
    values.sort()
    return _percentile(values, 0.025), _percentile(values, 0.975)


@dataclass(frozen=True)
class AreaChange:
    """The paired test of an area's change against the baseline over the same cases."""

    test: str | None
    note: str = ""
    units: int = 0  # units the area's figures cover in both runs
    differing: int = 0  # units whose answers differ between the runs
    p_value: float | None = None
    delta_interval95: tuple[float, float] | None = None

    def to_json(self) -> dict:
        return {"test": self.test, "test_note": self.note, "units": self.units, "differing_units": self.differing,
                "p_value": self.p_value,
                "delta_interval95": list(self.delta_interval95) if self.delta_interval95 else None}


SIGN_FLIP = "cluster sign-flip"


def paired_area_test(current: AreaFigures, baseline: AreaFigures, resamples: int = RESAMPLES, seed: int = SEED
                     ) -> AreaChange:
    """The change ``current - baseline`` of an area over the same figures and cases: the cluster sign-flip p-value
    (exact or Monte Carlo, see the module docstring) and a 95% percentile interval of the change from the paired
    stratified cluster bootstrap (units resampled with both runs' answers kept together)."""
    if len(current.parts) != len(baseline.parts) or any(set(a) != set(b) for a, b in zip(current.parts,
                                                                                          baseline.parts)):
        return AreaChange(None, "n/a: the area's figures cover different cases in the two runs")
    now, before = observed_sums(current), observed_sums(baseline)
    if current.value(now) is None or baseline.value(before) is None:
        return AreaChange(None, "n/a: a figure covers no case")
    observed = current.value(now) - baseline.value(before)
    # every (suite, unit) with its per-figure difference in (num, den) between the runs
    keys = sorted({(suite, unit) for suite, parts in zip(current.suites, current.parts) for unit in parts})
    index_of = {key: i for i, key in enumerate(keys)}
    diffs: list[list[tuple[int, float, float, float, float]]] = [[] for _ in keys]
    for f, (suite, a, b) in enumerate(zip(current.suites, current.parts, baseline.parts)):
        for unit, (num, den) in a.items():
            old_num, old_den = b[unit]
            diffs[index_of[(suite, unit)]].append((f, num, den, old_num, old_den))
    differing = [entries for entries in diffs if any(abs(n - on) > 1e-12 or abs(d - od) > 1e-12
                                                     for _, n, d, on, od in entries)]
    units, count = len(keys), len(differing)
    if count == 0:
        return AreaChange(SIGN_FLIP, "no unit differs between the runs", units, 0, 1.0, (0.0, 0.0))

    def flipped(signs: Sequence[bool]) -> float | None:
        cur, base = [list(s) for s in now], [list(s) for s in before]
        for entries, flip in zip(differing, signs):
            if not flip:
                continue
            for f, num, den, old_num, old_den in entries:  # the unit's answers swapped between the runs
                cur[f][0] += old_num - num
                cur[f][1] += old_den - den
                base[f][0] += num - old_num
                base[f][1] += den - old_den
        a, b = current.value([tuple(s) for s in cur]), baseline.value([tuple(s) for s in base])
        return None if a is None or b is None else a - b

    tolerance = 1e-12
    if count <= EXACT_UNITS:
        changes = [flipped(signs) for signs in itertools.product((False, True), repeat=count)]
        extreme = sum(1 for c in changes if c is None or abs(c) >= abs(observed) - tolerance)
        p_value, note = extreme / len(changes), f"exact over all 2^{count} flips of the differing units"
    else:
        rng = random.Random(seed)
        extreme = 0
        for _ in range(resamples):
            change = flipped([rng.random() < 0.5 for _ in range(count)])
            extreme += change is None or abs(change) >= abs(observed) - tolerance
        p_value = (1 + extreme) / (1 + resamples)
        note = f"Monte Carlo, {resamples} random flips of the {count} differing units (seed {seed})"
    return AreaChange(SIGN_FLIP, note, units, count, min(1.0, p_value), _paired_interval(current, baseline,
                                                                                         resamples, seed))


def _paired_interval(current: AreaFigures, baseline: AreaFigures, resamples: int, seed: int
                     ) -> tuple[float, float] | None:
    """The paired stratified cluster bootstrap's 95% percentile interval of the change: units resampled within the
    area's strata with both runs' answers of a unit drawn together."""
    joined = AreaFigures(current.suites + baseline.suites, current.parts + baseline.parts,
                         current.inverted + baseline.inverted)
    width = len(current.parts)
    rng = random.Random(seed + 1)
    groups = []
    for figures, units in strata(current):
        both = figures + [f + width for f in figures]
        groups.append((both, [tuple(joined.parts[f].get(u, (0.0, 0.0)) for f in both) for u in units]))
    changes = []
    attempts = 0
    while len(changes) < resamples and attempts < 20 * resamples:
        attempts += 1
        sums: list[tuple[float, float]] = [(0.0, 0.0)] * len(joined.parts)
        for figures, vectors in groups:
            drawn = rng.choices(vectors, k=len(vectors))
            for i, f in enumerate(figures):
                sums[f] = (sum(v[i][0] for v in drawn), sum(v[i][1] for v in drawn))
        a, b = current.value(sums[:width]), baseline.value(sums[width:])
        if a is not None and b is not None:
            changes.append(a - b)
    if len(changes) < resamples // 2:
        return None
    changes.sort()
    return _percentile(changes, 0.025), _percentile(changes, 0.975)
