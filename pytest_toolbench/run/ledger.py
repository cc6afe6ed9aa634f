"""The run's ledger: the record of every scored case, the items skipped, and the selection they are measured
against (a manifest), from which the cases that never reached a verdict get a ``not_run`` record.

Plain data in, plain data out: the manifest is a :class:`Manifest` of :class:`SuiteFacts` and :class:`ManifestRow`
values, with a JSON form (it crosses from an xdist worker to the controller); the records are
:class:`~pytest_toolbench.contract.suite.CaseRecord`. Imports the contract, ``run.records`` and ``stats.sampling``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol

from ..contract.suite import NOT_RUN, Case, CaseRecord
from . import records
from ..stats.sampling import Design


@dataclass(frozen=True)
class Available:
    """What a suite has in this run's data (after ``--toolbench-limit``): the selection is measured against it."""

    cases: int
    by_category: Mapping[str, int]
    #: ``--toolbench-sample``: what was drawn, for the estimates; None without the option
    design: Design | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "by_category": dict(self.by_category),
                **({"design": self.design.to_json()} if self.design is not None else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Available":
        design = data.get("design")
        return cls(int(data.get("cases") or 0), dict(data.get("by_category") or {}),
                   Design.from_json(design) if design else None)


@dataclass(frozen=True)
class SuiteFacts:
    """What a suite's records share, kept once per suite in the manifest instead of on every record: its scorer,
    the path of its ``suite.yaml``, its title, its data source (``DataSource.to_json()``) and what it has
    available."""

    scorer: str
    definition: str
    title: str
    data_source: Mapping[str, Any]
    available: Available

    def to_json(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "definition": self.definition, "title": self.title,
                "data_source": dict(self.data_source), "available": self.available.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SuiteFacts":
        return cls(data["scorer"], data["definition"], data["title"], dict(data["data_source"]),
                   Available.from_json(data["available"]))


@dataclass(frozen=True)
class ManifestRow:
    """One selected item: enough to count and name a case that never reaches its verdict. ``sample``: which of the
    case's ``--toolbench-repeat`` samples (None without the option)."""

    nodeid: str
    suite: str
    case_id: str
    category: str
    keywords: tuple[str, ...]
    order: int
    sample: int | None = None

    def to_json(self) -> list[Any]:
        """A compact row, ``[nodeid, suite, case id, category, keywords, order]`` and the sample when there is one."""
        row = [self.nodeid, self.suite, self.case_id, self.category, list(self.keywords), self.order]
        return row if self.sample is None else [*row, self.sample]

    @classmethod
    def from_json(cls, row: list[Any]) -> "ManifestRow":
        nodeid, suite, case_id, category, keywords, order, *sample = row
        return cls(nodeid, suite, case_id, category, tuple(keywords), order, sample[0] if sample else None)


@dataclass(frozen=True)
class Manifest:
    """The selection: each selected suite's facts once, then one row per selected item. Crosses from an xdist
    worker to the controller as JSON (``to_json``/``from_json``)."""

    suites: Mapping[str, SuiteFacts] = field(default_factory=dict)
    cases: tuple[ManifestRow, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"suites": {name: facts.to_json() for name, facts in self.suites.items()},
                "cases": [row.to_json() for row in self.cases]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Manifest":
        return cls({name: SuiteFacts.from_json(facts) for name, facts in (data.get("suites") or {}).items()},
                   tuple(ManifestRow.from_json(row) for row in data.get("cases") or ()))


class SelectedSuite(Protocol):
    """What the manifest reads of a loaded suite (``run.catalog.LoadedSuite``)."""

    name: str
    definition: Any
    source: Any
    cases: list[Case]


def manifest(entries: Iterable[tuple]) -> Manifest:
    """The selected cases: suite facts once, then one row per item. ``entries``: (nodeid, suite, case) or
    (nodeid, suite, case, sample), the sample None without ``--toolbench-repeat``."""
    suites: dict[str, SuiteFacts] = {}
    rows = []
    for nodeid, suite, case, *sample in entries:
        if suite.name not in suites:
            suites[suite.name] = SuiteFacts(suite.definition.scorer, str(suite.definition.path),
                                            suite.definition.title, suite.source.to_json(), _available(suite))
        rows.append(ManifestRow(nodeid, suite.name, case.case_id, case.category, tuple(case.keywords),
                                case_order(suite, case), sample[0] if sample else None))
    return Manifest(suites, tuple(rows))


def case_order(suite: SelectedSuite, case: Case) -> int:
    """The case's position in its suite (records and reports keep the suite's own order)."""
    index = getattr(suite, "_order_index", None)
    if index is None:
        index = {c.case_id: i for i, c in enumerate(suite.cases)}
        suite._order_index = index  # type: ignore[attr-defined]
    return index[case.case_id]


def _available(suite: SelectedSuite) -> Available:
    """What the suite has in this run's data (after ``--toolbench-limit``): the selection is measured against it."""
    by_category: dict[str, int] = {}
    for case in suite.cases:
        by_category[case.category] = by_category.get(case.category, 0) + 1
    design = getattr(suite, "design", None)  # --toolbench-sample: what was drawn, for the estimates
    # in the form a worker's manifest brings it, so a serial run and an -n 2 run estimate from the same value
    return Available(len(suite.cases), by_category,
                     Design.from_json(design.to_json()) if design is not None else None)


class Ledger:
    """Records as the test reports bring them, the node ids of skipped items, and the selection's manifest."""

    def __init__(self) -> None:
        self.records: list[CaseRecord] = []
        self.skipped: set[str] = set()  # node ids of skipped benchmark items: no verdict expected
        self.expected: Manifest | None = None  # the selected cases, to find those never scored

    def add(self, record: CaseRecord) -> None:
        self.records.append(record)

    def skip(self, nodeid: str) -> None:
        self.skipped.add(nodeid)

    def expect(self, selection: Manifest) -> None:
        self.expected = selection

    @property
    def selected_suites(self) -> Mapping[str, SuiteFacts]:
        """Suite name -> its facts (scorer, definition, title, data source, available cases) in the selection."""
        return self.expected.suites if self.expected is not None else {}

    def selected_cases(self) -> list[Case]:
        """The selected cases, without their payload (enough to count and name them)."""
        rows = self.expected.cases if self.expected is not None else ()
        return [Case(row.case_id, row.category, {}, row.keywords, suite=row.suite)
                for row in rows if not row.sample]  # a case once, whatever its --toolbench-repeat samples

    def has_selection(self) -> bool:
        return bool(self.expected and self.expected.cases)

    def suite_facts(self, name: str) -> SuiteFacts | None:
        """What a suite's records share (scorer, definition, title, data source): kept once per suite, from the
        selection's manifest, instead of on every case record; None for a suite outside the selection."""
        return self.selected_suites.get(name)

    def not_run_records(self) -> list[CaseRecord]:
        """A failed ``not_run`` record for each selected, unskipped case that has no verdict at session end (a
        crashed worker, a setup error, an interrupted run): counted in the figures and named, never left out."""
        if not self.expected:
            return []
        scored = {record.nodeid for record in self.records}
        explanation = ("no verdict: the test never reached its scorer (a crashed xdist worker, a setup error or an "
                       "interrupted run)")
        return [CaseRecord(suite=row.suite, case_id=row.case_id, category=row.category, keywords=row.keywords,
                           order=row.order, passed=False, error_type=NOT_RUN, explanation=explanation,
                           labels={"outcome": NOT_RUN}, nodeid=row.nodeid, sample=row.sample,
                           message=records.fail_message(NOT_RUN, explanation))
                for row in self.expected.cases if row.nodeid not in scored and row.nodeid not in self.skipped]

    def close(self) -> list[CaseRecord]:
        """At session end: add the ``not_run`` records; returns every record."""
        self.records.extend(self.not_run_records())
        return self.records
