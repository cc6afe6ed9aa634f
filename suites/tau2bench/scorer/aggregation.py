"""τ²-bench's figures, as upstream's ``metrics/agent_metrics.py`` (``compute_metrics``) makes them: per domain and
over all tasks the average reward (the mean reward over the simulations: pass^1), and with ``--toolbench-repeat=K``
trials (``aggregate_samples``) pass^k for k = 1..K per domain, the mean over tasks of C(c, k) / C(n, k) with c of
the task's n trials successful (reward 1 within 1e-6; upstream's ``pass_hat_k``, Yao et al. 2024,
arXiv:2406.12045), k at most the fewest trials any task has (upstream's ``max_k``).

Items not scored (no verdict: NL assertions without a judge, a judge's reply that cannot be read, a conversation
not generated) are left out of every figure, and the figure names how many; upstream excludes only its
infrastructure errors, so a figure with such a note does not cover the whole domain."""

from __future__ import annotations

import math
from typing import Sequence

from pytest_toolbench.contract.suite import NOT_SCORED, CaseResult, Metric

from .conversation_cost import cost_metrics
from .judge import JUDGE_MODEL

MEAN_FORMULA = "mean of the task rewards over the trials (upstream's average reward, pass^1)"
PASS_HAT_FORMULA = ("mean over tasks of C(c,k)/C(n,k), c of a task's n trials with reward 1 (upstream's pass^k, "
                    "Yao et al. 2024)")


def is_successful(reward: float) -> bool:
    return (1 - 1e-6) <= reward <= (1 + 1e-6)


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    if trials < k:
        raise ValueError(f"Number of trials {trials} is less than k {k}.")
    return math.comb(successes, k) / math.comb(trials, k)


def _notes(results: Sequence[CaseResult]) -> tuple[str, str]:
    """What a figure leaves out (``incomplete``) and how its NL assertions were judged (added to the formula)."""
    skipped = [r for r in results if r.error_type == NOT_SCORED]
    judged = sum(1 for r in skipped if "needs_judge" in r.keywords)
    notes = []
    if judged:
        notes.append(f"{judged} task(s) not scored (NL assertions without a judge, or a reply it could not read)")
    if len(skipped) > judged:
        notes.append(f"{len(skipped) - judged} task(s) not generated")
    judges: dict[str, int] = {}
    for record in results:
        if record.error_type != NOT_SCORED and record.labels.get("nl_judge"):
            judges[record.labels["nl_judge"]] = judges.get(record.labels["nl_judge"], 0) + 1
    judge_note = "; ".join(
        f"NL assertions of {count} item(s) judged by {who}" + ("" if "results file" in who else
                                                           f" (upstream's judge: {JUDGE_MODEL}; figures "
                                                           "comparable only when it is that model)")
        for who, count in sorted(judges.items()))
    return "; ".join(notes), judge_note


def _mean(results: Sequence[CaseResult], name: str, group: str) -> Metric:
    scored = [r for r in results if r.error_type != NOT_SCORED]
    total = len(scored)
    reward = sum(float(r.counts.get("reward", 0.0)) for r in scored)
    incomplete, judge_note = _notes(results)
    formula = MEAN_FORMULA + (f"; {judge_note}" if judge_note else "")
    return Metric(name, reward / total if total else None, reward, total, group=group, formula=formula,
                  incomplete=incomplete)


def _by_domain(results: Sequence[CaseResult]) -> dict[str, list[CaseResult]]:
    by_domain: dict[str, list[CaseResult]] = {}
    for result in results:
        by_domain.setdefault(result.category, []).append(result)
    return by_domain


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    by_domain = _by_domain(results)
    metrics = [_mean(by_domain[d], f"{d} average reward", "category") for d in sorted(by_domain)]
    metrics.insert(0, _mean(list(results), "average reward", "aggregate"))
    return metrics + cost_metrics(results)


def _pass_hat_curve(results: Sequence[CaseResult], name: str) -> list[Metric]:
    trials: dict[str, list[bool]] = {}
    for record in results:
        if record.error_type != NOT_SCORED:
            trials.setdefault(record.case_id, []).append(is_successful(float(record.counts.get("reward", 0.0))))
    if not trials:
        return []
    incomplete, judge_note = _notes(results)
    formula = PASS_HAT_FORMULA + (f"; {judge_note}" if judge_note else "")
    max_k = min(len(t) for t in trials.values())
    metrics = []
    for k in range(1, max_k + 1):
        values = [pass_hat_k(len(t), sum(t), k) for t in trials.values()]
        metrics.append(Metric(f"{name} pass^{k}", sum(values) / len(values), sum(values), len(values),
                              group="pass^k", formula=formula, incomplete=incomplete))
    return metrics


def aggregate_samples(results: Sequence[CaseResult]) -> list[Metric]:
    """pass^k per domain and over all tasks, from every trial's record at once (``--toolbench-repeat``)."""
    by_domain = _by_domain(results)
    metrics = _pass_hat_curve(list(results), "all")
    for domain in sorted(by_domain):
        metrics += _pass_hat_curve(by_domain[domain], domain)
    return metrics
