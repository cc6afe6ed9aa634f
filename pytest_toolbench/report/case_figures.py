"""Each compared figure split into per-case outcomes by the suite's own aggregation (see :mod:`.significance` for
when a figure is a count, a mean, or neither): the input of the paired tests."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from ..contract.aggregates import NO_DECLARATION, AggregatesDeclaration

_TOLERANCE = 1e-9
#: A mean over cases may be the mean as its benchmark prints it: rounded to two decimals of a percentage (API-Bank's
#: Table 9 figures); half a unit of that last digit, as a fraction.
PRINTED_TOLERANCE = 5e-5 + 1e-12

MetricKey = tuple[str, str]  # (group, name)


@dataclass(frozen=True)
class CaseFigures:
    """What each figure is made of, case by case: for a count, the cases it covers and whether each counts as
    ``correct``; for a mean, each case's value; for anything else the reason there is no test."""

    counts: Mapping[MetricKey, Mapping[str, bool]] = field(default_factory=dict)
    means: Mapping[MetricKey, Mapping[str, float]] = field(default_factory=dict)
    untestable: Mapping[MetricKey, str] = field(default_factory=dict)
    #: from ``--toolbench-repeat`` samples: ``means`` then holds, for a count, each case's pass rate over its samples
    repeated: bool = False


def number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                 figures: Sequence[Any], design: AggregatesDeclaration = NO_DECLARATION) -> CaseFigures:
    """Split each of ``figures`` (the run's Metrics) into per-case outcomes by aggregating each of ``results`` (the
    run's CaseResults) alone; see the module docstring for when a figure is a count, a mean, or neither. A figure
    that is neither over cases may be one over the ``design``'s declared clusters (ACEBench's multi-turn accuracy
    counts whole dialogues): each cluster's cases are then aggregated together, and the figure's outcomes are keyed
    by the cluster's unit name. Results that carry a ``sample`` (``--toolbench-repeat``) are split per sample index
    first (:func:`repeated_case_figures`)."""
    if any(result.sample is not None for result in results):
        return repeated_case_figures(aggregate, results, figures, design)
    return _single_case_figures(aggregate, results, figures, design)


def _split(aggregate: Callable[[Sequence[Any]], Sequence[Any]], groups: Sequence[tuple[str, Sequence[Any]]],
           wanted: Mapping[MetricKey, Any]) -> dict[MetricKey, list[tuple[str, float | None, float | None,
                                                                        float | None]]]:
    """Each group of results aggregated alone: per figure, (group name, correct, total, value) per group."""
    rows: dict[MetricKey, list[tuple[str, float | None, float | None, float | None]]] = {k: [] for k in wanted}
    for name, members in groups:
        alone = {(m.group or "", m.name): m for m in aggregate(list(members))}
        for key in wanted:
            metric = alone.get(key)
            if metric is None:
                continue
            rows[key].append((name, number(metric.correct), number(metric.total), number(metric.value)))
    return rows


def _single_case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                         figures: Sequence[Any], design: AggregatesDeclaration = NO_DECLARATION) -> CaseFigures:
    wanted = {(m.group or "", m.name): m for m in figures}
    try:
        per_case = _split(aggregate, [(result.case_id, [result]) for result in results], wanted)
    except Exception as error:  # an aggregation that cannot take one case alone: no test, and the reason
        reason = f"n/a: the suite's aggregation does not take one case alone ({type(error).__name__})"
        return CaseFigures(untestable={key: reason for key in wanted})
    counts: dict[MetricKey, dict[str, bool]] = {}
    means: dict[MetricKey, dict[str, float]] = {}
    untestable: dict[MetricKey, str] = {}
    for key, metric in wanted.items():
        rows = per_case[key]
        outcome = _as_count(metric, rows)
        if outcome is not None:
            counts[key] = outcome
            continue
        values = _as_mean(metric, rows)
        if values is not None:
            means[key] = values
            continue
        untestable[key] = "n/a: not a count or a mean of cases (a formula over several counts or figures)"
    if untestable and design.clusters:  # a figure over whole clusters (dialogues): split per cluster
        clusters: dict[str, list[Any]] = {}
        for result in results:
            clusters.setdefault(design.cluster_of(result.case_id), []).append(result)
        if len(clusters) < len(results):
            try:
                per_cluster = _split(aggregate, sorted(clusters.items()), {k: wanted[k] for k in untestable})
            except Exception:  # noqa: BLE001 - an aggregation that cannot take one cluster alone: stays n/a
                per_cluster = {}
            for key, rows in per_cluster.items():
                outcome = _as_count(wanted[key], rows)
                if outcome is not None:
                    counts[key] = outcome
                    del untestable[key]
                    continue
                values = _as_mean(wanted[key], rows)
                if values is not None:
                    means[key] = values
                    del untestable[key]
    return CaseFigures(counts, means, untestable)


def repeated_case_figures(aggregate: Callable[[Sequence[Any]], Sequence[Any]], results: Sequence[Any],
                          figures: Sequence[Any], design: AggregatesDeclaration = NO_DECLARATION) -> CaseFigures:
    """Per-case figures of a run with ``--toolbench-repeat`` samples: each sample index is split into per-case
    outcomes against its own aggregation, then each case's outcomes are averaged over its samples. A count becomes
    the case's pass rate (a mean over cases, the sign-flip test's input: McNemar needs one binary outcome per
    case), a mean the mean of the case's values. A figure that is not a count (or not a mean) in every sample has no
    test."""
    by_sample: dict[int, list[Any]] = {}
    for result in results:
        by_sample.setdefault(result.sample or 0, []).append(result)
    try:
        split = [_single_case_figures(aggregate, part, aggregate(part), design)
                 for _, part in sorted(by_sample.items())]
    except Exception as error:  # noqa: BLE001 - as in case_figures: no test, and the reason
        reason = f"n/a: the suite's aggregation does not take one sample alone ({type(error).__name__})"
        return CaseFigures(untestable={(m.group or "", m.name): reason for m in figures},
                           repeated=True)
    means: dict[MetricKey, dict[str, float]] = {}
    untestable: dict[MetricKey, str] = {}
    for metric in figures:
        key = (metric.group or "", metric.name)
        if all(key in part.counts for part in split):
            per_case = [{case_id: float(passed) for case_id, passed in part.counts[key].items()} for part in split]
        elif all(key in part.means for part in split):
            per_case = [dict(part.means[key]) for part in split]
        else:
            untestable[key] = next((part.untestable[key] for part in split if key in part.untestable),
                                   "n/a: not a count or a mean of cases in every sample")
            continue
        values: dict[str, list[float]] = {}
        for part in per_case:
            for case_id, value in part.items():
                values.setdefault(case_id, []).append(value)
        means[key] = {case_id: sum(v) / len(v) for case_id, v in values.items()}
    return CaseFigures(means=means, untestable=untestable, repeated=True)


def as_rates(key: MetricKey, figures: CaseFigures) -> CaseFigures:
    """A plain run's count as per-case rates (1.0 or 0.0), to pair it with a repeated run's pass rates."""
    if key not in figures.counts:
        return figures
    rates = {case_id: float(passed) for case_id, passed in figures.counts[key].items()}
    return replace(figures, means={**figures.means, key: rates})


def _as_count(metric: Any, rows: Sequence[tuple[str, float | None, float | None, float | None]]
              ) -> dict[str, bool] | None:
    correct, total, value = (number(metric.correct), number(metric.total), number(metric.value))
    if value is None or correct is None or total is None or not total or (metric.unit or "") != "%":
        return None
    if abs(value - correct / total) > _TOLERANCE:
        return None
    outcome: dict[str, bool] = {}
    for case_id, case_correct, case_total, _ in rows:
        if not case_total and not case_correct:  # 0/0 or no counts: the figure does not cover this case
            continue
        if case_total is None or case_correct is None:
            return None
        if case_total != 1 or case_correct not in (0.0, 1.0):
            return None
        outcome[case_id] = case_correct == 1.0
    if len(outcome) != total or sum(outcome.values()) != correct:
        return None
    return outcome


def _as_mean(metric: Any, rows: Sequence[tuple[str, float | None, float | None, float | None]]
             ) -> dict[str, float] | None:
    # The figure must say over how many cases it is a mean (``total``, no ``correct``), and each case alone must be
    # a mean over that one case: a value that merely equals the mean (every case perfect) proves nothing.
    # A mean may also carry its sum as ``correct`` (TL-Training's mean reward: sum / n), then each case's too.
    value, total = number(metric.value), number(metric.total)
    correct = metric.correct
    if value is None or total is None:
        return None
    if correct is not None and (number(correct) is None or abs(number(correct) - value * total) > 1e-6):
        return None
    values: dict[str, float] = {}
    for case_id, case_correct, case_total, case_value in rows:
        if case_value is None and not case_total:
            continue
        if case_value is None or case_total != 1:
            return None
        if (case_correct is None) != (correct is None) or (case_correct is not None
                                                            and abs(case_correct - case_value) > 1e-9):
            return None
        values[case_id] = case_value
    if not values or total != len(values):
        return None
    if abs(sum(values.values()) / len(values) - value) > PRINTED_TOLERANCE:
        return None
    return values
