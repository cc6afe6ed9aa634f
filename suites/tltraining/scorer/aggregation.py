"""TS / PI / CF per dataset (and per BFCL category), then the TL-Training tallies."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric
from .loading import BFCL_CATEGORIES, CATEGORY_DATASETS, DATASETS


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """TS / PI / CF per dataset (and per BFCL category), count / all cases, then the TL-Training tallies."""
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        dataset = CATEGORY_DATASETS.get(result.category, "bfcl_exec" if result.category.startswith("exec_")
                                        else result.category)
        groups[dataset].append(result)
        if dataset == "bfcl_exec":
            groups[f"bfcl_{result.category}"].append(result)
    metrics: list[Metric] = []
    order = ["toolalpaca_real", "rotbench_clean", "bfcl_exec"] + [f"bfcl_exec_{c}" for c in BFCL_CATEGORIES]
    for name in order + sorted(set(groups) - set(order)):
        rows = groups.get(name)
        if not rows:
            continue
        for stage in ("ts", "pi", "cf"):
            correct = sum(r.counts.get(stage, 0.0) for r in rows)
            metrics.append(Metric(name=f"{name} {stage.upper()}", value=correct / len(rows), correct=correct,
                                  total=len(rows), group="aggregate" if name in DATASETS else "category",
                                  formula=f"cases with {stage.upper()} / all cases (failures to decode count)"))
    metrics.extend(tl_metrics(results))
    return metrics
