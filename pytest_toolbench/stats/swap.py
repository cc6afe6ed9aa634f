"""The paired permutation (within-pair swap) test: the fallback for a gated figure no other paired test fits.

A figure such as a micro F1 over pooled calls (NesTools, SealTools), or a formula over several counts that the suite
declares nowhere, is not a count or a mean of cases, so neither McNemar nor the sign-flip test applies. Under H0
(the two runs answer alike) a case's current record and its baseline record are exchangeable; so are the records of
a declared cluster of cases, swapped together (``aggregates.yaml``'s clusters). Fisher's randomisation test for
paired designs (Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, ch. 3) therefore swaps the
two runs' records on a random subset of units, recomputes the figures of both pseudo-runs with the suite's own
``aggregate`` and compares the observed change with the changes so obtained: exact over all 2^units swap patterns
up to 2^12 of them, else ``SWAP_RESAMPLES`` random patterns (numpy PCG64, seed ``SWAP_SEED``) with
p = (1 + hits) / (1 + R) (Phipson & Smyth 2010, *Stat. Appl. Genet. Mol. Biol.* 9:39). One ``aggregate`` call per
pseudo-run gives every figure at once. A pseudo-run in which a figure has no value counts as a change at least as
extreme (conservative).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from ..contract.aggregates import AggregatesDeclaration

SWAP = "paired permutation (swap)"
SWAP_RESAMPLES = 1999
SWAP_SEED = 20100901
#: enumerate every swap pattern up to this many units (2^12 patterns), draw at random above
SWAP_EXACT_UNITS = 12
#: the most records the test may hand to ``aggregate`` for one suite, summed over its pseudo-runs (2 per pattern,
#: each reading every case's record): 2 x 1,999 x 8,192. A count of the data, never a clock, so whether a figure is
#: tested does not depend on the machine or its load (the shipped suites' largest, BFCL's 5,106 cases, fits).
SWAP_MAX_RECORDS = 2 * SWAP_RESAMPLES * 8192

MetricKey = tuple[str, str]


def _values(metrics: Sequence[Any], keys: Sequence[MetricKey]) -> list[float | None]:
    found = {(m.group or "", m.name): m.value for m in metrics}
    out: list[float | None] = []
    for key in keys:
        value = found.get(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        out.append(float(value) if ok else None)
    return out


def swap_tests(aggregate: Callable[[Sequence[Any]], Sequence[Any]], current: Sequence[Any], baseline: Sequence[Any],
               figures: Mapping[MetricKey, bool], design: AggregatesDeclaration, make_result: Callable[..., Any],
               max_records: int = SWAP_MAX_RECORDS, resamples: int = SWAP_RESAMPLES, seed: int = SWAP_SEED,
               exact_units: int = SWAP_EXACT_UNITS,
               reported: Mapping[MetricKey, tuple[float | None, float | None]] | None = None) -> dict[MetricKey, Any]:
    """The swap test of each of ``figures`` (key -> lower is better) between the runs' case results ``current``
    and ``baseline``; ``make_result`` builds the result (``report.significance.PairedResult``). Returns n/a results
    with the reason when the test does not apply (different cases, repeated samples, more than ``max_records``
    records to read), and nothing for a figure the suite's aggregate does not give a value in both runs.
    ``reported``: each figure's (current, baseline) value as the reports give it; a figure the aggregate over the
    records does not reproduce is n/a."""
    keys = list(figures)
    if not keys:
        return {}

    def untested(reason: str) -> dict[MetricKey, Any]:
        return {key: make_result(None, f"n/a: {reason}") for key in keys}

    if any(getattr(r, "sample", None) is not None for r in list(current) + list(baseline)):
        return untested("no swap test over repeated samples")
    now_by_case = {r.case_id: r for r in current}
    before_by_case = {r.case_id: r for r in baseline}
    if len(now_by_case) != len(current) or len(before_by_case) != len(baseline) \
            or set(now_by_case) != set(before_by_case):
        return untested("no swap test: the two runs hold different cases")
    order = [r.case_id for r in current]
    unit_of = {case_id: design.cluster_of(case_id) for case_id in order}
    unit_names = sorted(set(unit_of.values()))
    position = {unit: i for i, unit in enumerate(unit_names)}
    unit_index = [position[unit_of[c]] for c in order]
    units = len(unit_names)
    exact = units <= exact_units
    draws = 2 ** units if exact else resamples
    if 2 * draws * len(order) > max_records:
        return untested(f"too costly: the swap test's {2 * draws} aggregate calls over {len(order)} cases would "
                        f"read {2 * draws * len(order):,} records, over its limit of {max_records:,}")
    observed_now = _values(aggregate(list(current)), keys)
    observed_before = _values(aggregate(list(baseline)), keys)
    observed = [None if a is None or b is None else a - b for a, b in zip(observed_now, observed_before)]
    if exact:
        patterns: Any = ([(p >> u) & 1 for u in range(units)] for p in range(draws))
    else:
        import numpy as np

        rng = np.random.Generator(np.random.PCG64(seed))
        patterns = rng.integers(0, 2, size=(resamples, units), dtype=np.int8).tolist()
    hits_two = [0] * len(keys)
    hits_worse = [0] * len(keys)
    #: whether any pattern moved the figure's change off the observed one (a figure that no swap moves, 0 vs 0 or
    #: identical in both runs for every case, cannot move in this comparison: p_floor 1, out of the gate's family)
    moved = [False] * len(keys)
    lower = [figures[key] for key in keys]
    tolerance = [1e-9 * max(1.0, abs(d)) if d is not None else 0.0 for d in observed]
    for pattern in patterns:
        swapped = [pattern[i] for i in unit_index]
        pseudo_now = [before_by_case[c] if s else now_by_case[c] for c, s in zip(order, swapped)]
        pseudo_before = [now_by_case[c] if s else before_by_case[c] for c, s in zip(order, swapped)]
        values_now = _values(aggregate(pseudo_now), keys)
        values_before = _values(aggregate(pseudo_before), keys)
        for f, d in enumerate(observed):
            if d is None:
                continue
            a, b = values_now[f], values_before[f]
            if a is None or b is None:  # no value in a pseudo-run: as extreme as can be (conservative)
                hits_two[f] += 1
                hits_worse[f] += 1
                continue
            change = a - b
            if not moved[f] and abs(change - d) > tolerance[f]:
                moved[f] = True
            if abs(change) >= abs(d) - tolerance[f]:
                hits_two[f] += 1
            if (change >= d - tolerance[f]) if lower[f] else (change <= d + tolerance[f]):
                hits_worse[f] += 1
    method = f"exact, {draws} patterns" if exact else f"{resamples} random patterns, seed {seed}"
    clustered = units < len(order)
    label = f"{SWAP} ({method}" + (f", {units} clusters)" if clustered else ")")
    results: dict[MetricKey, Any] = {}
    for f, key in enumerate(keys):
        if observed[f] is None:
            continue
        shown = (reported or {}).get(key)
        if shown is not None and any(v is None or abs(v - o) > 1e-9 for v, o in
                                     zip(shown, (observed_now[f], observed_before[f]))):
            results[key] = make_result(None, "n/a: the suite's aggregate over the records does not give the "
                                             "reported figure (no swap test)")
            continue
        if exact:  # the identity pattern is among the patterns: hits >= 1
            p_two, p_worse, floor = hits_two[f] / draws, hits_worse[f] / draws, 1 / draws
        else:
            p_two = (1 + hits_two[f]) / (1 + resamples)
            p_worse = (1 + hits_worse[f]) / (1 + resamples)
            floor = 1 / (1 + resamples)
        if not moved[f] and abs(observed[f]) <= tolerance[f]:
            results[key] = make_result(label, "the figure is the same in every swap of the runs' records: it "
                                              "cannot move in this comparison", len(order), 1.0, None,
                                       p_worse=1.0, p_floor=1.0, moving_units=0, unit_count=units)
            continue
        results[key] = make_result(label, "", len(order), min(1.0, p_two), None, p_worse=min(1.0, p_worse),
                                   p_floor=floor, unit_count=units)
    return results
