"""Items no model can pass (``unpassable.yaml`` beside this module): the ground truth holds what the environment
never produces (upstream issues such as ShishirPatil/gorilla#1367).

They are never removed from an official figure. A verdict on one carries the label ``unpassable`` (the upstream
issue) and, when it fails, its explanation starts with "fails for every model: upstream ground truth unreachable";
:func:`metrics` adds, beside each category's official accuracy, the accuracy over that category's passable items
(clearly not official). The reference answers pass them (they are the ground truth), so a gold run has nothing to
mark; unlike ``known_defects.yaml`` (answers that fail the official evaluation itself), they are no expected failure.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from pytest_toolbench.contract.suite import NOT_SCORED, Metric, Verdict

LIST_FILE = Path(__file__).resolve().parent / "unpassable.yaml"
NOTE = "fails for every model: upstream ground truth unreachable"


@lru_cache(maxsize=1)
def declared() -> Mapping[str, Mapping[str, str]]:
    """``{case id: {"issue", "why"}}`` from ``unpassable.yaml``."""
    loaded = yaml.safe_load(LIST_FILE.read_text(encoding="utf-8")) or {}
    return {str(case_id): {"issue": str(entry["issue"]), "why": " ".join(str(entry["why"]).split())}
            for case_id, entry in loaded.items()}


def mark(case_id: str, verdict: Verdict) -> Verdict:
    """Label a verdict on a declared item (and say why a failure is expected of every model)."""
    entry = declared().get(case_id)
    if entry is None:
        return verdict
    verdict.labels["unpassable"] = entry["issue"]
    if not verdict.passed:
        verdict.explanation = f"{NOTE} ({entry['issue']}: {entry['why']})\n{verdict.explanation}"
    return verdict


def metrics(results: Iterable[Any], categories: Iterable[str]) -> list[Metric]:
    """Per category holding a declared item that ran: its accuracy over the passable items only."""
    listed = declared()
    results = list(results)
    dropped: dict[str, list[str]] = defaultdict(list)
    for result in results:  # which categories hold a declared item that ran (one dict lookup a record)
        if result.case_id in listed and result.category in categories and result.error_type != NOT_SCORED:
            dropped[result.category].append(result.case_id)
    correct: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    if dropped:
        for result in results:
            if result.category in dropped and result.case_id not in listed and result.error_type != NOT_SCORED:
                total[result.category] += 1
                correct[result.category] += 1 if result.passed else 0
    out = []
    for category in categories:
        if not dropped[category] or not total[category]:
            continue
        issues = ", ".join(sorted({listed[c]["issue"] for c in dropped[category]}))
        out.append(Metric(
            f"{category}_passable", correct[category] / total[category], correct=correct[category],
            total=total[category], group="passable",
            formula=f"NOT official: {category} without the {len(dropped[category])} item(s) no model can pass "
                    f"({', '.join(sorted(dropped[category]))}; {issues}; suites/bfcl/scorer/unpassable.yaml); the "
                    f"official figure counts them as failed",
        ))
    return out
