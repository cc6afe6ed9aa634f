"""Rolling per-case records up into per-suite summaries, with each benchmark's own aggregation."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .suite import CaseResult, Metric


@dataclass
class SuiteSummary:
    name: str
    title: str
    data_source: Mapping[str, str]
    total: int
    passed: int
    metrics: list[Metric]
    error_types: dict[str, int]
    error_types_by_category: dict[str, dict[str, int]]
    labels: dict[str, dict[str, int]]
    known_defects: int = 0  # failing cases that are documented upstream defects (their reference is wrong)

    @property
    def is_sample(self) -> bool:
        return self.data_source.get("kind") == "samples"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "data_source": dict(self.data_source),
            "total": self.total, "passed": self.passed,
            "metrics": [m.__dict__ for m in self.metrics],
            "error_types": self.error_types, "error_types_by_category": self.error_types_by_category,
            "labels": self.labels, "known_defects": self.known_defects,
        }


@dataclass
class RunSummary:
    header: dict[str, Any]
    suites: list[SuiteSummary] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "suites": {s.name: s.to_json() for s in self.suites}}


def to_case_result(record: Mapping[str, Any]) -> CaseResult:
    return CaseResult(suite=record["suite"], case_id=record["case_id"], category=record["category"],
                      passed=bool(record["passed"]), error_type=record.get("error_type"),
                      counts=record.get("counts") or {}, labels=record.get("labels") or {},
                      output=record.get("output") or "", keywords=tuple(record.get("keywords") or ()))


def summarize(records: Iterable[Mapping[str, Any]], benchmarks: Mapping[str, Any],
              header: dict[str, Any]) -> RunSummary:
    """``benchmarks`` maps suite name to (benchmark object, for ``aggregate``; title; data source facts)."""
    by_suite: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_suite[record["suite"]].append(record)
    summary = RunSummary(header=header)
    for name in sorted(by_suite):
        suite_records = sorted(by_suite[name], key=lambda r: r.get("order", 0))
        results = [to_case_result(r) for r in suite_records]
        benchmark, title, data_source = benchmarks[name]
        errors = Counter(r.error_type for r in results if not r.passed and r.error_type)
        per_category: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            if not r.passed and r.error_type:
                per_category[r.category][r.error_type] += 1
        labels: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            for key, value in r.labels.items():
                labels[key][value] += 1
        summary.suites.append(SuiteSummary(
            name=name, title=title, data_source=data_source or {},
            total=len(results), passed=sum(r.passed for r in results),
            metrics=list(benchmark.aggregate(results)),
            error_types=dict(errors.most_common()),
            error_types_by_category={c: dict(v.most_common()) for c, v in sorted(per_category.items())},
            labels={k: dict(v.most_common()) for k, v in sorted(labels.items())},
            known_defects=sum(1 for r in suite_records if r.get("known_defect") and not r["passed"]),
        ))
    return summary
