"""The finished run as one plain value: what every writer (terminal, JSON, Markdown, HTML) renders.

pytest-html keeps its ``ReportData`` (the page's content) apart from ``BaseReport`` (the hooks that gather it); this
is the same split. :func:`build` makes a :class:`RunReport` once, on the controller, when the session finishes:
the summary, the case records, the outcome (baseline comparison, gates, exit status), the run facts and title,
each suite's leaderboard rank and the history across several baselines. Writers read it and never call back into
the run: no catalog, no scorer, no options.

One thing a writer shows is not known at the end of the run: pytest-html stores each row's details when that test's
report arrives. The case's request for those details is the one its scoring built (``run/case_request.py``); it
rides to the HTML writer as plain data on the test report (``toolbench_request``), never as a call from the writer
into the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..contract.suite import NOT_RUN
from ..run.records import CaseRecord
from ..run.summary import RunSummary
from .facts import report_title, run_facts
from .header import RunHeader
from .notes import RunNotes, build as build_notes
from .outcome import RunOutcome

if TYPE_CHECKING:
    from .compare import Comparison, SuiteComparison
    from .history import History
    from .leaderboard import SuiteRanks


@dataclass(frozen=True)
class RunReport:
    """Everything a writer shows, as plain values (``to_json`` gives all of it as JSON)."""

    summary: RunSummary
    records: tuple[CaseRecord, ...] = ()
    #: baseline comparison, gates, failure tallies and exit status (None: a report built outside a run, in tests)
    outcome: RunOutcome | None = None
    #: the reports' one title and the run facts table (model, backend, mode, parser, data, sampling, versions, ...)
    title: str = ""
    facts: tuple[tuple[str, str], ...] = ()
    #: suite name -> the rank each of its fully run headline figures would have on its published leaderboard
    leaderboards: Mapping[str, "SuiteRanks"] = field(default_factory=dict)
    #: the headline figures across several ``--toolbench-baseline`` files and this run (None with fewer than two)
    history: "History | None" = None
    #: the run marks known upstream defects as expected failures (the gold backend): the failures section says so
    defects_expected: bool = False
    #: the run header, typed (read once from ``summary.header`` when not given)
    run_header: RunHeader = None  # type: ignore[assignment]
    #: the notes every writer shows beside the figures (``report/notes.py``), made once
    notes: RunNotes = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.run_header is None:
            object.__setattr__(self, "run_header", RunHeader.read(self.summary.header))
        if self.notes is None:
            object.__setattr__(self, "notes", build_notes(self.summary, self.comparison))

    @property
    def header(self) -> Mapping[str, Any]:
        return self.summary.header

    @property
    def comparison(self) -> "Comparison | None":
        return self.outcome.comparison if self.outcome is not None else None

    def suite_comparison(self, name: str) -> "SuiteComparison | None":
        comparison = self.comparison
        return comparison.suites.get(name) if comparison is not None else None

    def case_anchors(self) -> dict[tuple[str, str], str]:
        """(suite, case id) -> node id of every case whose test reported a verdict (a ``not_run`` case has no row
        to link to)."""
        return {(record.suite, record.case_id): record.nodeid for record in self.records
                if record.nodeid and record.error_type != NOT_RUN}

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title, "facts": [list(fact) for fact in self.facts],
            "summary": self.summary.to_json(), "records": [record.to_json() for record in self.records],
            "outcome": self.outcome.to_json() if self.outcome is not None else None,
            "leaderboards": {name: ranks.to_json() for name, ranks in self.leaderboards.items()},
            "history": self.history.to_json() if self.history is not None else None,
            "defects_expected": self.defects_expected,
        }


def build(summary: RunSummary, records: Iterable[CaseRecord] = (), outcome: RunOutcome | None = None,
          tool_parser: str | None = None, leaderboards: Mapping[str, "SuiteRanks"] | None = None,
          history: "History | None" = None, defects_expected: bool = False) -> RunReport:
    """The run report, once: ``tool_parser`` is the run's ``--toolbench-tool-parser`` (the facts table names it
    when the backend's fingerprint does not)."""
    options = _ToolParser(tool_parser)
    header = RunHeader.read(summary.header)
    facts = run_facts(summary, options, header)
    return RunReport(summary=summary, records=tuple(records), outcome=outcome, run_header=header,
                     title=report_title(summary, options, facts), facts=tuple(facts),
                     leaderboards=dict(leaderboards or {}), history=history, defects_expected=defects_expected)


@dataclass(frozen=True)
class _ToolParser:
    """The one run option the facts read (``run_facts`` reads ``options.tool_parser``)."""

    tool_parser: str | None
