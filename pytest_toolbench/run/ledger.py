"""The run's ledger: the record of every scored case, the items skipped, and the selection they are measured
against (a manifest), from which the cases that never reached a verdict get a ``not_run`` record.

Plain data in, plain data out: the manifest is JSON (it crosses from an xdist worker to the controller), the records
are :class:`~pytest_toolbench.contract.suite.CaseRecord`. Imports the contract and ``run.records`` only.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Protocol

from ..contract.suite import NOT_RUN, Case, CaseRecord
from . import records

#: One row of a manifest: [nodeid, suite, case id, category, keywords, order in the suite], and with
#: ``--toolbench-repeat`` the sample index as a seventh item.
ManifestRow = list


class SelectedSuite(Protocol):
    """What the manifest reads of a loaded suite (``run.catalog.LoadedSuite``)."""

    name: str
    definition: Any
    source: Any
    cases: list[Case]


def manifest(entries: Iterable[tuple]) -> dict[str, Any]:
    """The selected cases as plain JSON: suite facts once, then one row per item, enough to count and name a case
    that never reaches its verdict. ``entries``: (nodeid, suite, case) or (nodeid, suite, case, sample), the sample
    None without ``--toolbench-repeat``."""
    suites: dict[str, Any] = {}
    cases = []
    for nodeid, suite, case, *sample in entries:
        if suite.name not in suites:
            suites[suite.name] = {"scorer": suite.definition.scorer, "definition": str(suite.definition.path),
                                  "title": suite.definition.title, "data_source": suite.source.to_json(),
                                  "available": _available(suite)}
        row = [nodeid, suite.name, case.case_id, case.category, list(case.keywords), case_order(suite, case)]
        if sample and sample[0] is not None:
            row.append(sample[0])
        cases.append(row)
    return {"suites": suites, "cases": cases}


def case_order(suite: SelectedSuite, case: Case) -> int:
    """The case's position in its suite (records and reports keep the suite's own order)."""
    index = getattr(suite, "_order_index", None)
    if index is None:
        index = {c.case_id: i for i, c in enumerate(suite.cases)}
        suite._order_index = index  # type: ignore[attr-defined]
    return index[case.case_id]


def _available(suite: SelectedSuite) -> dict[str, Any]:
    """What the suite has in this run's data (after ``--toolbench-limit``): the selection is measured against it."""
    by_category: dict[str, int] = {}
    for case in suite.cases:
        by_category[case.category] = by_category.get(case.category, 0) + 1
    design = getattr(suite, "design", None)  # --toolbench-sample: what was drawn, for the estimates
    return {"cases": len(suite.cases), "by_category": by_category,
            **({"design": design.to_json()} if design is not None else {})}


class Ledger:
    """Records as the test reports bring them, the node ids of skipped items, and the selection's manifest."""

    def __init__(self) -> None:
        self.records: list[CaseRecord] = []
        self.skipped: set[str] = set()  # node ids of skipped benchmark items: no verdict expected
        self.expected: dict[str, Any] | None = None  # the selected cases (a manifest), to find those never scored

    def add(self, record: CaseRecord) -> None:
        self.records.append(record)

    def skip(self, nodeid: str) -> None:
        self.skipped.add(nodeid)

    def expect(self, selection: dict[str, Any]) -> None:
        self.expected = selection

    @property
    def selected_suites(self) -> dict[str, dict[str, Any]]:
        """Suite name -> its facts (scorer, definition, title, data source, available cases) in the selection."""
        return (self.expected or {}).get("suites", {})

    def selected_cases(self) -> list[Case]:
        """The selected cases, without their payload (enough to count and name them)."""
        return [Case(case_id, category, {}, tuple(keywords), suite=suite)
                for _, suite, case_id, category, keywords, _, *sample in (self.expected or {}).get("cases", [])
                if not sample or sample[0] == 0]  # a case once, whatever its --toolbench-repeat samples

    def has_selection(self) -> bool:
        return bool(self.expected and self.expected["cases"])

    def suite_facts(self, name: str) -> dict[str, Any]:
        """What a suite's records share (scorer, definition, title, data source): kept once per suite, from the
        selection's manifest, instead of on every case record."""
        return self.selected_suites.get(name) or {}

    def not_run_records(self) -> list[CaseRecord]:
        """A failed ``not_run`` record for each selected, unskipped case that has no verdict at session end (a
        crashed worker, a setup error, an interrupted run): counted in the figures and named, never left out."""
        if not self.expected:
            return []
        scored = {record.get("nodeid") for record in self.records}
        missing = []
        for nodeid, suite, case_id, category, keywords, order, *sample in self.expected["cases"]:
            if nodeid in scored or nodeid in self.skipped:
                continue
            missing.append(CaseRecord(
                suite=suite, case_id=case_id, category=category, keywords=tuple(keywords), order=order,
                passed=False, error_type=NOT_RUN,
                explanation="no verdict: the test never reached its scorer (a crashed xdist worker, a setup error "
                            "or an interrupted run)",
                labels={"outcome": NOT_RUN}, nodeid=nodeid, sample=sample[0] if sample else None))
        return [dataclasses.replace(record, message=records.fail_message(record)) for record in missing]

    def close(self) -> list[CaseRecord]:
        """At session end: add the ``not_run`` records; returns every record."""
        self.records.extend(self.not_run_records())
        return self.records
