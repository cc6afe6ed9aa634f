"""The suite's figures: accuracy per category and overall."""

from __future__ import annotations

from typing import Sequence

from pytest_toolbench.contract.suite import CaseResult, Metric


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    rows = []
    for category in sorted({r.category for r in results}):
        picked = [r for r in results if r.category == category]
        rows.append(Metric(category, sum(r.passed for r in picked) / len(picked), sum(r.passed for r in picked),
                           len(picked), group="category"))
    passed = sum(r.passed for r in results)
    rows.append(Metric("overall", passed / len(results), passed, len(results), group="aggregate",
                       formula="correct / total"))
    return rows
