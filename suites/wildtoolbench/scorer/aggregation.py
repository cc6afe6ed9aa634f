"""WildToolBench's metrics (upstream ``eval_runner.calc_accuracy`` -> ``*_metric.json``).

Upstream: yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065, ``wild-tool-bench/wtb/eval_runner.py``.

* Task accuracy: correct tasks / tasks. Session accuracy: dialogues whose tasks are all correct / dialogues (each
  task scored on its own with the gold history, so this is an AND of independent verdicts). Here a dialogue counts
  only when all its tasks ran (a ``-k`` selection of single tasks leaves sessions out).
* By task type: Single-Tool, Multi-Tool (= Parallel + Sequential + Mixed), Parallel / Sequential / Mixed Multi-Tool,
  Clarify, Chat. By position: upstream's "layer" 0..3 (the paper's tasks 1..4). By turn subtype: First Turn (task
  0), Subsequent Turn (every later task), and each later task's ``english_turn_subtypes`` entry.
* OP (optimal path rate): over Parallel + Mixed tasks, those finished action- and argument-correct in exactly
  ``min_length`` turns; also per type.
* AP (accomplishment progress): over Sequential + Mixed tasks, micro: sum of the ``step_*`` entries left in the
  result after the argument check / sum of the gold node counts (of ``answer_list``, the other-language list, as
  upstream). Units differ (model turns vs gold nodes, the answer node included): parallel calls share one turn but
  are one node each, so the gold run's AP over Mixed tasks is below 100% (the formula line says so); also per type.

Upstream's accuracies are plain ratios (``correct / total``, 0.0 when total is 0); the paper prints them as
percentages with two decimals. Here a metric with no members is None.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from pytest_toolbench.contract.suite import CaseResult, Metric
from .loading import FIRST_TURN, TURN_SUBTYPES, dialogue_of

TASK_TYPE_ORDER = ("Single-Tool", "Multi-Tool", "Parallel Multi-Tool", "Sequential Multi-Tool", "Mixed Multi-Tool",
                   "Clarify", "Chat")
OPTIMAL_TYPES = ("Parallel Multi-Tool", "Mixed Multi-Tool")
PROGRESS_TYPES = ("Sequential Multi-Tool", "Mixed Multi-Tool")


def _task_type(result: CaseResult) -> str:
    return (result.labels or {}).get("task_type", "")


def _ratio(name: str, correct: float, total: float, group: str, formula: str) -> Metric:
    return Metric(name, correct / total if total else None, correct, total, group, formula)


def _accuracy(name: str, members: Sequence[CaseResult], group: str, formula: str) -> Metric:
    correct = sum(1 for r in members if r.passed)
    return _ratio(name, correct, len(members), group, formula)


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    metrics: list[Metric] = [_accuracy("Task accuracy", results, "aggregate", "correct tasks / tasks")]

    by_dialogue: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_dialogue[dialogue_of(result.case_id)].append(result)
    complete = [members for members in by_dialogue.values() if len(members) == _expected_tasks(members)]
    sessions = sum(1 for members in complete if all(r.passed for r in members))
    metrics.append(_ratio("Session accuracy", sessions, len(complete), "aggregate",
                          "dialogues with every task correct / dialogues (all of whose tasks ran)"))

    for task_type in TASK_TYPE_ORDER:
        if task_type == "Multi-Tool":
            members = [r for r in results if "Multi-Tool" in _task_type(r)]
        else:
            members = [r for r in results if _task_type(r) == task_type]
        if members:
            metrics.append(_accuracy(task_type, members, "task type", f"correct / {task_type} tasks"))

    for layer in range(4):
        members = [r for r in results if (r.labels or {}).get("layer") == str(layer)]
        if members:
            metrics.append(_accuracy(f"position {layer + 1} (layer {layer})", members, "position",
                                     f"correct / tasks at index {layer}"))
    extra_layers = sorted({(r.labels or {}).get("layer") for r in results} - {"0", "1", "2", "3", None},
                          key=lambda v: int(v) if str(v).isdigit() else 0)
    for layer in extra_layers:
        members = [r for r in results if (r.labels or {}).get("layer") == layer]
        metrics.append(_accuracy(f"position {int(layer) + 1} (layer {layer})", members, "position",
                                 f"correct / tasks at index {layer}"))

    for subtype in (FIRST_TURN, "Subsequent Turn") + tuple(t for t in TURN_SUBTYPES if t != FIRST_TURN):
        if subtype == "Subsequent Turn":
            members = [r for r in results if (r.labels or {}).get("turn_subtype") not in (None, FIRST_TURN)]
        else:
            members = [r for r in results if (r.labels or {}).get("turn_subtype") == subtype]
        if members:
            metrics.append(_accuracy(subtype, members, "turn subtype", f"correct / {subtype} tasks"))

    optimal_members = [r for r in results if _task_type(r) in OPTIMAL_TYPES]
    if optimal_members:
        metrics.append(_optimal("OP", optimal_members))
        for task_type in OPTIMAL_TYPES:
            members = [r for r in optimal_members if _task_type(r) == task_type]
            if members:
                metrics.append(_optimal(f"OP {task_type}", members))
    progress_members = [r for r in results if _task_type(r) in PROGRESS_TYPES]
    if progress_members:
        metrics.append(_progress("AP", progress_members))
        for task_type in PROGRESS_TYPES:
            members = [r for r in progress_members if _task_type(r) == task_type]
            if members:
                metrics.append(_progress(f"AP {task_type}", members))
    return metrics


def _expected_tasks(members: Sequence[CaseResult]) -> int:
    """The dialogue's number of tasks (``counts["dialogue_tasks"]``, 4 in the benchmark); -1 when unknown."""
    for result in members:
        value = (result.counts or {}).get("dialogue_tasks")
        if value:
            return int(value)
    return -1


def _optimal(name: str, members: Sequence[CaseResult]) -> Metric:
    correct = sum(1 for r in members if (r.counts or {}).get("optimal", 0) >= 1)
    return _ratio(name, correct, len(members), "orchestration",
                  "tasks solved correctly in min_length turns / Parallel + Mixed tasks")


def _progress(name: str, members: Sequence[CaseResult]) -> Metric:
    done = sum(float((r.counts or {}).get("ap_steps", 0)) for r in members)
    total = sum(float((r.counts or {}).get("ap_total", 0)) for r in members)
    return _ratio(name, done, total, "orchestration",
                  "sum of step entries kept after the argument check / sum of gold nodes (micro, Sequential + Mixed); "
                  "upstream's arithmetic: a step is one model turn, and parallel calls share one, while each gold "
                  "call is a node, so a task with parallel calls scores below 100% even for the reference answer")
