"""The 95% interval a ranked leaderboard figure comes with: Wilson's for a count of cases; for a figure that is a fixed
linear combination of its categories' accuracies (its weights read off the suite's own aggregation,
:func:`linear_form`) a stratified cluster bootstrap over its categories' cases
(:func:`pytest_toolbench.stats.bootstrap.cluster_bootstrap_interval`); a sampled run's estimate keeps its own."""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Callable, Sequence

from ..stats.bootstrap import RESAMPLES, SEED, AreaFigures, cluster_bootstrap_interval
from ..stats.intervals import wilson_interval
from .stats import count_interval


def _key(metric: Any) -> tuple[str, Any]:
    return (getattr(metric, "group", "") or "", getattr(metric, "name", None))


def linear_form(aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any], key: tuple[str, Any],
                categories: Sequence[str]) -> tuple[dict[str, float], float] | None:
    """The figure ``key`` as ``constant + sum over categories of weight * accuracy`` when the suite's own aggregation
    makes it so: each category's weight is read off the change one case's flipped outcome makes (times the
    category's size), and the form is checked on a seeded random third of the cases flipped at once; None when it
    does not hold to 1e-9 (the figure is not linear in its cases' outcomes) or the aggregation fails."""
    def figure(rows: Sequence[Any]) -> float | None:
        metric = next((m for m in aggregate(rows) if _key(m) == key), None)
        value = getattr(metric, "value", None)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    rows = list(records)
    by_category: dict[str, list[int]] = {}
    for index, record in enumerate(rows):
        by_category.setdefault(record.category, []).append(index)
    if any(not by_category.get(c) for c in categories):
        return None
    try:
        base = figure(rows)
        if base is None:
            return None
        per_case: dict[str, float] = {}
        for category in categories:
            first = by_category[category][0]
            flipped = list(rows)
            flipped[first] = dataclasses.replace(rows[first], passed=not rows[first].passed)
            moved = figure(flipped)
            if moved is None:
                return None
            per_case[category] = (moved - base) * (-1.0 if rows[first].passed else 1.0)
        rng = random.Random(SEED)
        chosen = [i for c in categories for i in by_category[c] if rng.random() < 1 / 3]
        check = list(rows)
        predicted = base
        for index in chosen:
            record = rows[index]
            check[index] = dataclasses.replace(record, passed=not record.passed)
            predicted += per_case[record.category] * (-1.0 if record.passed else 1.0)
        seen = figure(check)
    except Exception:  # noqa: BLE001 - an aggregation that cannot take flipped records: no interval, and why
        return None
    if seen is None or abs(seen - predicted) > 1e-9:
        return None
    weights = {c: per_case[c] * len(by_category[c]) for c in categories}
    accuracy = {c: sum(rows[i].passed for i in by_category[c]) / len(by_category[c]) for c in categories}
    return weights, base - sum(weights[c] * accuracy[c] for c in categories)


def figure_interval(metric: Any, suite: Any, declared_categories: Sequence[str] | None, records: Sequence[Any],
                    unit_of: Callable[[str], str] | None = None) -> tuple[tuple[float, float] | None, str]:
    """The ranked figure's 95% interval and its method (or why there is none): Wilson for a count of cases, else a
    stratified cluster bootstrap when the figure is a fixed linear combination of its categories' accuracies
    (``declared_categories``: the leaderboard declaration's, else the suite's categories with cases)."""
    estimate = metric.estimate
    if estimate:  # --toolbench-sample: the estimate's own design-based interval (stats.estimation)
        interval = estimate.get("interval95")
        return ((float(interval[0]), float(interval[1])), f"design-based interval of the sample estimate "
                f"({estimate.get('method') or 'stratified'})") if interval else \
            (None, "the sample estimate has no interval")
    counted = count_interval(metric)
    if counted is not None:
        return counted, "Wilson score interval (a count of cases)"
    aggregate = getattr(suite, "aggregate", None)
    categories = declared_categories if declared_categories is not None else \
        tuple(m.name for m in suite.metrics if m.group == "category" and m.total)
    if aggregate is None or not records or not categories:
        return None, "no per-case records to resample"
    cases = [r for r in records if r.category in set(categories)]
    if any(r.sample is not None for r in cases):
        return None, "--toolbench-repeat samples: the figure is a mean over samples, not resampled here"
    form = linear_form(aggregate, cases, _key(metric), categories)
    if form is None:
        return None, "the figure is not a fixed linear combination of its cases' outcomes"
    weights, constant = form
    unit_of = unit_of or (lambda case_id: case_id)
    parts = []
    for category in categories:
        units: dict[str, list[float]] = {}
        for record in cases:
            if record.category == category:
                sums = units.setdefault(unit_of(record.case_id), [0.0, 0.0])
                sums[0] += 1.0 if record.passed else 0.0
                sums[1] += 1.0
        parts.append({unit: (v[0], v[1]) for unit, v in units.items()})
    figures = AreaFigures(tuple(suite.name for _ in categories), tuple(parts), tuple(False for _ in categories),
                          tuple(weights[c] for c in categories), constant)
    interval = cluster_bootstrap_interval(figures)
    method = (f"stratified cluster bootstrap over the cases of {len(categories)} categories ({RESAMPLES} resamples, "
              f"seed {SEED})")
    if interval is not None and interval[1] - interval[0] <= 1e-12:
        # every case of every category has the same outcome: the categories' Wilson bounds, fully dependent
        bounds = [wilson_interval(sum(v[0] for v in p.values()), sum(v[1] for v in p.values())) for p in parts]
        low = constant + sum(w * (b[0] if w >= 0 else b[1]) for w, b in zip(figures.weights, bounds))
        high = constant + sum(w * (b[1] if w >= 0 else b[0]) for w, b in zip(figures.weights, bounds))
        return (max(0.0, low), min(1.0, high)), "the categories' Wilson bounds (no spread in the cases)"
    return interval, method
