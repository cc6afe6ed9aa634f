"""τ²-bench's figures: per domain the average reward (pass^1 with one trial), and over all tasks."""

from __future__ import annotations

from typing import Sequence

from pytest_toolbench.contract.suite import NOT_SCORED, CaseResult, Metric

from .conversation_cost import cost_metrics


def _mean(results, name, group) -> Metric:
    scored = [r for r in results if r.error_type != NOT_SCORED]
    total = len(scored)
    reward = sum(float(r.counts.get("reward", 0.0)) for r in scored)
    skipped = [r for r in results if r.error_type == NOT_SCORED]
    judged = sum(1 for r in skipped if "needs_judge" in r.keywords)
    notes = []
    if judged:
        notes.append(f"{judged} task(s) not scored (NL assertions need a judge)")
    if len(skipped) > judged:
        notes.append(f"{len(skipped) - judged} task(s) not generated")
    note = "; ".join(notes)
    return Metric(name, reward / total if total else None, reward, total, group=group,
                  formula="mean of the task rewards (upstream's average reward, pass^1)", incomplete=note)


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    by_domain: dict[str, list[CaseResult]] = {}
    for result in results:
        by_domain.setdefault(result.category, []).append(result)
    metrics = [_mean(by_domain[d], f"{d} average reward", "category") for d in sorted(by_domain)]
    metrics.insert(0, _mean(list(results), "average reward", "aggregate"))
    return metrics + cost_metrics(results)
