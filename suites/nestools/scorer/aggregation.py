"""Benchmark protocol: aggregate (``eval.py``)."""

from __future__ import annotations

from typing import Mapping, Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric
from .checker import COUNT_KEYS, ERROR_KEYS, FAMILIES
from .gold import FIGURE_STRUCTURES

FAMILY_NAMES = {"api": "Selection", "order": "Order", "param": "Parameter", "nest": "Nested-Param"}


SUMMED_KEYS = ("all_num", "correct_format_num", "tree_acc") + COUNT_KEYS + ERROR_KEYS
#: the upstream depth views (--target_depths 1 / 2 / 3 4 5)
DEPTH_VIEWS = (("depth 1", {1}), ("depth 2", {2}), ("depth 3-5", {3, 4, 5}))


def _family_metrics(totals: Mapping[str, float], prefix: str, group: str, with_nest: bool = True,
                    f1_only: bool = False) -> list[Metric]:
    """P/R/F1 per family (micro: sums first), Avg of the four F1s, Format and Tree accuracy.

    Upstream gives P = 0 when nothing was predicted and F1 = 0 when P + R = 0; R with no gold raises upstream, here
    it is None. QUIRK: for a depth-1-only view ``eval.py`` skips the nested family and prints no Average.
    ``f1_only`` keeps the views short (the paper's figures plot F1).
    """
    metrics: list[Metric] = []
    f1s: list[float | None] = []
    for family in FAMILIES:
        if family == "nest" and not with_nest:
            continue
        correct = totals.get(f"correct_{family}_num", 0)
        predicted = totals.get(f"predict_{family}_num", 0)
        gold = totals.get(f"gold_{family}_num", 0)
        precision = correct / predicted if predicted else 0.0
        recall = correct / gold if gold else None
        if recall is None:
            f1 = None
        else:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        f1s.append(f1)
        name = FAMILY_NAMES[family]
        if not f1_only:
            metrics += [
                Metric(f"{prefix}{name} P", precision, correct, predicted, group,
                       f"correct_{family}/predicted_{family}"),
                Metric(f"{prefix}{name} R", recall, correct, gold, group, f"correct_{family}/gold_{family}"),
            ]
        metrics.append(Metric(f"{prefix}{name} F1", f1, None, None, group, "2PR/(P+R), micro"))
    if with_nest:
        average = None if any(f is None for f in f1s) else sum(f1s) / len(f1s)
        metrics.append(Metric(f"{prefix}Avg", average, None, None, group if prefix else "aggregate",
                              "mean(F1 Selection, F1 Order, F1 Parameter, F1 Nested-Param)"))
    scored = totals.get("all_num", 0)
    metrics.append(Metric(f"{prefix}Format", totals.get("correct_format_num", 0) / scored if scored else None,
                          totals.get("correct_format_num", 0), scored, group if prefix else "aggregate",
                          "parsable outputs / scored cases"))
    metrics.append(Metric(f"{prefix}Tree", totals.get("tree_acc", 0) / scored if scored else None,
                          totals.get("tree_acc", 0), scored, group if prefix else "aggregate",
                          "cases with correct == predicted == gold in all four families / scored cases"))
    return metrics


def _depth_of(result: CaseResult) -> int | None:
    label = result.labels.get("depth") if result.labels else None
    if label is not None and str(label).isdigit():
        return int(label)
    return None


def _structure_of(result: CaseResult) -> str | None:
    return result.labels.get("structure") if result.labels else None


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    results = [r for r in results if r.counts]
    # One pass over the records for every view (the paired tests call this thousands of times: the swap test makes
    # 2 x 1,999 pseudo-runs). Each view still adds its records' counts in the records' order, as a sum over its
    # members would: the counts can be fractions (partial parameter credit), whose sum depends on the order.
    totals = dict.fromkeys(SUMMED_KEYS, 0)
    depth_totals = {label: dict.fromkeys(SUMMED_KEYS, 0) for label, _ in DEPTH_VIEWS}
    structure_totals = {str(key): dict.fromkeys(SUMMED_KEYS, 0) for key in FIGURE_STRUCTURES}
    seen: set[str] = set()
    for r in results:
        views = [totals]
        depth = _depth_of(r)
        for label, depths in DEPTH_VIEWS:
            if depth in depths:
                views.append(depth_totals[label])
                seen.add(label)
        structure = _structure_of(r)
        if isinstance(structure, str) and structure in structure_totals:
            views.append(structure_totals[structure])
            seen.add(f"structure {structure}")
        counts = r.counts
        for key in SUMMED_KEYS:
            value = counts.get(key, 0)
            for view in views:
                view[key] += value
    metrics = _family_metrics(totals, "", "P/R/F1")
    for category in ("depth1", "depth2", "depth3plus"):
        members = [r for r in results if r.category == category]
        if members:
            passed = sum(1 for r in members if r.passed)
            metrics.append(Metric(category, passed / len(members), passed, len(members), "category",
                                  "Tree accuracy within the category"))
    # The upstream depth views (--target_depths 1 / 2 / 3 4 5).
    for label, depths in DEPTH_VIEWS:
        if label in seen:
            metrics += _family_metrics(depth_totals[label], f"{label}: ", "depth", with_nest=depths != {1},
                                       f1_only=True)
    # The structure views of the paper's Fig. 5 (--structure_key 0 / 2 / 3 / 7).
    for key in FIGURE_STRUCTURES:
        if f"structure {key}" in seen:
            metrics += _family_metrics(structure_totals[str(key)], f"structure {key}: ", "structure", f1_only=True)
    # TL-Training's categories and mean reward over the flat cases (the ones that carry a reward).
    metrics += tl_metrics([r for r in results if "tl_reward" in r.counts])
    return metrics
