"""RoTBench's figures: official per-environment TS/PI/CF and per-scenario accuracies, the robustness curve."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric
from .loading import LEVELS, SCENARIOS, TURNS


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """Official per-environment TS/PI/CF, per-scenario accuracies, the robustness curve and TL-Training tallies."""
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    metrics: list[Metric] = []
    curves: dict[str, dict[str, float]] = defaultdict(dict)
    ordered = [f"{TURNS[t]}_{lv}" for t in TURNS for lv in LEVELS]
    for category in ordered + sorted(set(by_category) - set(ordered)):
        rows = by_category.get(category, [])
        if not rows:
            continue
        total = len(rows)
        for stage in ("ts", "pi", "cf"):
            correct = sum(r.counts.get(stage, 0.0) for r in rows)
            metrics.append(Metric(name=f"{category} {stage.upper()}", value=correct / total, correct=correct,
                                  total=total, group="category",
                                  formula=f"cases with {stage.upper()} / all cases of the environment file"))
        turn_key, _, level = category.rpartition("_")
        curves[turn_key][level] = sum(r.counts.get("cf", 0.0) for r in rows) / total
        # Upstream divides by N/7 (it assumes seven equal scenario groups), not by the scenario's own count.
        share = total / len(SCENARIOS)
        for code in SCENARIOS:
            chosen = [r for r in rows if code.lower() in r.keywords]
            if not chosen:
                continue
            for stage in ("ts", "pi", "cf"):
                correct = sum(r.counts.get(stage, 0.0) for r in chosen)
                metrics.append(Metric(name=f"{category} {code} {stage.upper()}", value=min(correct / share, 1.0),
                                      correct=correct, total=share, group="scenario",
                                      formula=f"{stage.upper()} count in scenario / (environment cases / 7)"))
    for turn_key, curve in curves.items():
        for level in LEVELS:
            if level in curve:
                metrics.append(Metric(name=f"{turn_key} CF @ {level}", value=curve[level], group="robustness",
                                      formula="CF of the environment, in order of increasing noise"))
    for turn_key, curve in curves.items():
        metrics.append(Metric(name=f"{turn_key} mean CF over environments", value=sum(curve.values()) / len(curve),
                              total=len(curve), group="aggregate",
                              formula="mean of the per-environment CF (ToLeaP's representative metric)"))
    if results:
        passed = sum(1 for r in results if r.passed)
        metrics.append(Metric(name="CF (all items)", value=passed / len(results), correct=passed,
                              total=len(results), group="aggregate", formula="items with CF / all items"))
    metrics.extend(tl_metrics(results))
    return metrics
