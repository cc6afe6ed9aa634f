"""A ``--toolbench-json`` results file read back as the values a run itself uses: its cases as
:class:`~pytest_toolbench.contract.suite.CaseRecord`, each suite's figures as
:class:`~pytest_toolbench.contract.suite.Metric`. A baseline (``--toolbench-baseline``) and a history entry are
read here once, so the comparison, the profile and the history read one typed value, never a raw document.

Files written by earlier versions load too: a field a file lacks takes its default (a results file keeps only
some of a record's fields), keys a file has beyond these are ignored, and entries that are not what they should
be (a case without a suite or case id, a figure that is not an object) are left out instead of failing the run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..contract.suite import METRIC_DIRECTIONS, CaseRecord, Metric

_METRIC_FIELDS = tuple(f.name for f in dataclasses.fields(Metric))


@dataclass(frozen=True)
class SuiteResults:
    """One suite of a results file: its figures, its label tallies, and whether it ran on the shipped samples."""

    name: str
    metrics: tuple[Metric, ...] = ()
    labels: Mapping[str, Any] = field(default_factory=dict)
    samples: bool = False


@dataclass(frozen=True)
class ResultsFile:
    """A results file: the run header (a free-form document, kept as written), each suite, and every case."""

    header: Mapping[str, Any] = field(default_factory=dict)
    suites: Mapping[str, SuiteResults] = field(default_factory=dict)
    cases: tuple[CaseRecord, ...] = ()

    def suite_cases(self, name: str) -> list[CaseRecord]:
        return [case for case in self.cases if case.suite == name]


def read(document: Mapping[str, Any]) -> ResultsFile:
    """The results file's values from its parsed JSON (``document`` must have a ``suites`` object)."""
    header = document.get("header")
    suites = document.get("suites") or {}
    return ResultsFile(
        header=header if isinstance(header, Mapping) else {},
        suites={name: _suite(name, body) for name, body in suites.items() if isinstance(body, Mapping)},
        cases=tuple(case for case in (_case(entry) for entry in document.get("cases") or ()) if case is not None))


def metric_from_json(data: Mapping[str, Any]) -> Metric:
    """A figure from its JSON (``SuiteSummary.to_json``'s ``metrics``); ``interval95`` and other added keys are
    dropped. A direction the file gives that is none of ``METRIC_DIRECTIONS`` (or none at all) reads as higher."""
    values = {name: data[name] for name in _METRIC_FIELDS if name in data}
    values.setdefault("name", None)
    values.setdefault("value", None)
    if values.get("better") not in METRIC_DIRECTIONS:
        values.pop("better", None)
    return Metric(**values)


def _suite(name: str, body: Mapping[str, Any]) -> SuiteResults:
    metrics = body.get("metrics") or []
    return SuiteResults(name, tuple(metric_from_json(m) for m in metrics if isinstance(m, Mapping)),
                        body.get("labels") or {}, bool(body.get("samples")))


def _case(entry: Any) -> CaseRecord | None:
    if not (isinstance(entry, Mapping) and isinstance(entry.get("suite"), str)
            and isinstance(entry.get("case_id"), str)):
        return None
    try:
        return CaseRecord.from_json(entry)
    except (TypeError, ValueError):
        return None
