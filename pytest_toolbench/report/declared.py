"""The stratified sign-flip test of a figure the suite declares as a combination of other figures (``aggregates.yaml``:
a mean of category accuracies, an official weighted formula, a pooled count): each case's difference weighted by its
component's official weight (:mod:`.significance`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from ..contract.aggregates import AggregatesDeclaration
from .case_figures import PRINTED_TOLERANCE, CaseFigures, MetricKey, number
from .significance import NO_CASES, STRATIFIED, PairedResult, sign_flip_result


def declared_result(name: str, design: AggregatesDeclaration, current_metrics: Sequence[Any],
                    baseline_metrics: Sequence[Any], current: CaseFigures, baseline: CaseFigures,
                    lower_is_better: bool = False) -> PairedResult | None:
    """The stratified sign-flip test of a figure the suite declares as a combination of other figures (None when
    it declares none): each case's difference weighted by its component's official weight over its component's
    cases. The declaration must reproduce the figure's value in both runs, and each component must be a count or
    a mean of the same cases in both runs; otherwise n/a with the reason."""
    if name not in design.figures:
        return None
    try:
        leaves = _leaf_weights(name, design, current)
    except _Untestable as why:
        return PairedResult(None, f"n/a: {why}")
    runs = ((current, current_metrics, "this run"), (baseline, baseline_metrics, "the baseline"))
    per_leaf: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    for leaf in leaves:
        found = [_leaf_values(leaf, figures, metrics) for figures, metrics, _ in runs]
        if isinstance(found[0], str) or isinstance(found[1], str):
            return PairedResult(None, f"n/a: {next(f for f in found if isinstance(f, str))}")
        if set(found[0]) != set(found[1]):
            return PairedResult(None, f"n/a: component {leaf} covers different cases in the two runs")
        per_leaf[leaf] = (found[0], found[1])
    for index, (_, metrics, label) in enumerate(runs):
        declared_value = _metric_value(name, metrics)
        rebuilt = sum(weight * (sum(per_leaf[leaf][index].values()) / len(per_leaf[leaf][index])
                                if per_leaf[leaf][index] else 0.0) for leaf, weight in leaves.items())
        if declared_value is None or abs(rebuilt - declared_value) > PRINTED_TOLERANCE:
            return PairedResult(None, f"n/a: the declared combination ({design.figures[name].kind} of "
                                      f"{', '.join(design.figures[name].weights)}) does not reproduce the figure in "
                                      f"{label} ({rebuilt!r} vs {declared_value!r}: a component did not run in full)")
    contributions: dict[str, float] = {}
    strata: dict[str, str] = {}
    for leaf, weight in leaves.items():
        now, before = per_leaf[leaf]
        for case_id in now:
            contributions[case_id] = contributions.get(case_id, 0.0) + weight * (now[case_id] - before[case_id]) \
                / len(now)
            strata[case_id] = leaf
    if not contributions:
        return PairedResult(None, NO_CASES, moving_units=0)
    ran_weight = sum(weight for leaf, weight in leaves.items() if per_leaf[leaf][0])
    tested = sign_flip_result(contributions, strata, lower_is_better, design, STRATIFIED, len(contributions),
                               note=f"strata: {len([leaf for leaf in leaves if per_leaf[leaf][0]])} components with "
                                    "their official weights")
    return replace(tested, ran_weight=ran_weight)


class _Untestable(Exception):
    pass


def _leaf_weights(name: str, design: AggregatesDeclaration, current: CaseFigures) -> dict[str, float]:
    """A declared figure flattened to its undeclared components and their total weights."""
    combination = design.figures[name]
    if combination.kind == "ran":  # the weights renormalised over the components whose every leaf has cases
        ran = {component: weight for component, weight in combination.weights.items()
               if all(_cases_of(leaf, current) for leaf in
                      (_leaf_weights(component, design, current) if component in design.figures else {component: 1}))}
        if not ran:
            raise _Untestable(f"none of the components of {name} ran")
        combination = replace(combination, kind="weights", weights=ran)
    if combination.kind == "pooled":
        sizes = {}
        for component in combination.weights:
            cases = _cases_of(component, current)
            sizes[component] = float(len(cases)) if cases is not None else 0.0
        total = sum(sizes.values())
        shares = {c: (size / total if total else 0.0) for c, size in sizes.items()}
    elif combination.kind == "sum":  # the weights as given
        shares = dict(combination.weights)
    else:
        total = sum(combination.weights.values())
        shares = {c: w / total for c, w in combination.weights.items()}
    flat: dict[str, float] = {}
    for component, share in shares.items():
        parts = _leaf_weights(component, design, current) if component in design.figures else {component: 1.0}
        for leaf, weight in parts.items():
            flat[leaf] = flat.get(leaf, 0.0) + share * weight
    return flat


def _cases_of(name: str, figures: CaseFigures) -> Mapping[str, Any] | None:
    for table in (figures.counts, figures.means):
        for (group, figure), values in table.items():
            if figure == name:
                return values
    return None


def _leaf_values(name: str, figures: CaseFigures, metrics: Sequence[Any]) -> dict[str, float] | str:
    """A component's per-case values (a count's 0/1 outcomes or a mean's values), {} when it did not run, or why
    it cannot be split per case."""
    key = _metric_key(name, metrics)
    if key is None:
        return {}
    if key in figures.counts:
        return {case_id: float(passed) for case_id, passed in figures.counts[key].items()}
    if key in figures.means:
        return dict(figures.means[key])
    if _metric_value(name, metrics) is None:
        return {}
    reason = figures.untestable.get(key, "not split per case")
    return f"component {name} is not a count or a mean of cases ({reason.removeprefix('n/a: ')})"


def _metric_key(name: str, metrics: Sequence[Any]) -> MetricKey | None:
    """(group, name) of the figure called ``name``; several groups: the "aggregate" one, else the first."""
    matches = [m for m in metrics if m.name == name]
    if not matches:
        return None
    chosen = next((m for m in matches if (m.group or "") == "aggregate"), matches[0])
    return (chosen.group or "", name)


def _metric_value(name: str, metrics: Sequence[Any]) -> float | None:
    key = _metric_key(name, metrics)
    if key is None:
        return None
    for metric in metrics:
        if ((metric.group or ""), metric.name) == key:
            return number(metric.value)
    return None
