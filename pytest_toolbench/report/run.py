"""One run's reporting on the controller: failure tally, baseline comparison, gates, files and the exit status.

Failing benchmark cases are the measurement, not a broken run: when every failure of a run is a scored toolbench
case, the run exits 0 (``--toolbench-strict`` restores pytest's status). Anything else that fails (a collection
error, a crashed worker, a fixture error, an ordinary test, a known defect that unexpectedly passes) keeps
pytest's status. Missed gates make the run fail whatever the cases did. :meth:`ReportRun.finish` decides the
status; the plugin's session sets it in ``pytest_sessionfinish`` through ``session.exitstatus``, the way syrupy does.
Nothing here knows pytest: the session hands in pytest's status and the hooks as callables.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..run.records import CaseRecord
from ..run.summary import RunSummary
from .compare import Comparison, GateResult, compare, evaluate_gates
from .history import build as build_history
from .leaderboard import rank_run
from .outcome import RunOutcome
from .profile import build_profile
from .run_report import RunReport
from .run_report import build as build_report
from .settings import ReportSettings


class ExitStatus(IntEnum):
    """The exit statuses the run's reporting reads and sets: pytest's own (``pytest.ExitCode``), by value."""

    OK = 0
    TESTS_FAILED = 1
    INTERRUPTED = 2
    INTERNAL_ERROR = 3
    USAGE_ERROR = 4
    NO_TESTS_COLLECTED = 5


#: A conftest's own gates: (summary, comparison) -> each implementation's list of ``GateResult`` (or None).
ExtraGates = Callable[[RunSummary, "Comparison | None"], Iterable["list[GateResult] | None"]]


@dataclass(frozen=True)
class FinishedRun:
    """What the run ended with, as a value the terminal renders (``report/terminal.py``, ``run_end``): the run
    report (None when no case ran), the outcome, the files written and those that could not be, the lines on
    reports left as they were, the interruption, why the exit status differs from pytest's, and that status."""

    report: RunReport | None
    outcome: RunOutcome
    written: tuple[tuple[str, Path], ...] = ()
    write_errors: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # lines on reports left as they were (an interrupted run that scored nothing)
    interrupted: str | None = None  # Ctrl-C stopped the run: when
    status_note: str | None = None
    exit_status: int = ExitStatus.OK

    @property
    def not_run(self) -> tuple[str, ...]:
        return self.outcome.not_run


class ReportRun:
    """The run's reporting on the controller (or the single process; never on xdist workers): the plugin's session
    tallies each failure here as its report arrives, and :meth:`finish` ends the run into a :class:`FinishedRun`.
    ``writers``: the run's outputs (``report/writers.py``), each handed the run report once, in order."""

    def __init__(self, settings: ReportSettings, writers: Sequence[Any] = ()):
        self.settings = settings
        self.writers = list(writers)
        self.case_failures = 0
        self.other_failures = 0
        self.comparison: Comparison | None = None
        self.gates: list[GateResult] = []
        self.original_status: int | None = None
        self.final_status: int | None = None
        self.written: list[tuple[str, Path]] = []
        self.not_run: list[str] = []  # node ids of selected cases that never reached a verdict
        self.write_errors: list[str] = []
        self.kept: list[str] = []  # lines on reports left as they were (an interrupted run that scored nothing)
        self.profile: Any = None  # the capability profile (report/profile.py)
        #: what every writer renders, built once by ``finish`` (None when no case ran)
        self.report: RunReport | None = None

    # -- tally -------------------------------------------------------------------------------------------------
    def count_failure(self, scored_case: bool) -> None:
        """A failed report: ``scored_case`` when it is a benchmark case's verdict (the measurement), else anything
        else that failed (a collection error, a crashed worker, a fixture error, an ordinary test, ...)."""
        if scored_case:
            self.case_failures += 1
        else:
            self.other_failures += 1

    # -- session finish ----------------------------------------------------------------------------------------
    @property
    def missed_gates(self) -> list[GateResult]:
        return [gate for gate in self.gates if not gate.passed]

    def finish(self, exit_status: int, summary: RunSummary | None, records: list[CaseRecord],
               tool_parser: str | None = None, extra_gates: ExtraGates | None = None,
               interrupted: str | None = None, defects_expected: bool = False,
               progress: Callable[[str], None] | None = None) -> FinishedRun:
        """Compare, gate and decide the exit status (from pytest's ``exit_status``); then build the run report once
        and hand it to every writer. ``tool_parser``: the run's ``--toolbench-tool-parser``, for the facts table;
        ``extra_gates``: a conftest's own gates (``pytest_toolbench_gates``); ``defects_expected``: the run marks
        known upstream defects as expected failures; ``progress``: where the comparison says what takes long (a
        line each)."""
        settings = self.settings
        self.not_run = [record.nodeid or record.case_id for record in records
                        if record.error_type == "not_run"]
        if summary is not None and settings.baseline is not None:
            self.comparison = compare(summary, records, settings.baseline, settings.baseline_path or "",
                                      settings.multiple, settings.significance, progress)
        if summary is not None:
            try:
                self.profile = build_profile(summary, settings.baseline, records=records, comparison=self.comparison)
            except (OSError, ValueError) as error:  # the shipped suites/profile.yaml is unreadable or malformed
                self.write_errors.append(f"toolbench: no capability profile: {error}")
        if summary is not None or settings.thresholds:
            self.gates = evaluate_gates(summary or RunSummary(header={}), self.comparison, settings)
        if summary is not None and extra_gates is not None:  # kept with the built-in ones
            for extra in extra_gates(summary, self.comparison):
                self.gates.extend(extra or ())
        self.original_status = int(exit_status)
        self.final_status = int(self.exit_status(exit_status))
        if summary is not None:
            self.report = self._report(summary, records, tool_parser, defects_expected)
        return FinishedRun(report=self.report, outcome=self.outcome, written=tuple(self.written),
                           write_errors=tuple(self.write_errors), kept=tuple(self.kept), interrupted=interrupted,
                           status_note=self.status_note(), exit_status=self.final_status)

    def _report(self, summary: RunSummary, records: list[CaseRecord], tool_parser: str | None,
                defects_expected: bool) -> RunReport:
        settings = self.settings
        report = build_report(
            summary, records, self.outcome, tool_parser=tool_parser,
            leaderboards=rank_run(settings.leaderboards, summary, records),
            history=build_history(summary, settings.baselines), defects_expected=defects_expected)
        # Ctrl-C before any verdict: a report of nothing but not_run records would replace the last real one
        keep = bool(summary.header.get("interrupted")) and all(record.error_type == "not_run" for record in records)
        for writer in self.writers:
            if keep and writer.path is not None:
                self.kept.append(f"toolbench: interrupted before any case was scored: the {writer.what} file "
                                 f"{writer.path} was not written"
                                 f"{' and is left as it was' if Path(writer.path).exists() else ''}")
            else:
                self._write(writer, report)
        if self.write_errors and self.final_status == ExitStatus.OK:
            self.final_status = int(ExitStatus.INTERNAL_ERROR)
        return report

    def _write(self, writer: Any, report: RunReport) -> None:
        """An output that cannot be written is one line naming it; the run's other outputs still appear."""
        try:
            written = writer.write(report)
        except OSError as error:
            self.write_errors.append(f"toolbench: could not write the {writer.what} to {writer.path}: "
                                     f"{error.strerror or error}")
        else:
            if written is not None:
                self.written.append((writer.what, written))

    def exit_status(self, status: int) -> int:
        if self.not_run and status == ExitStatus.OK:
            return ExitStatus.TESTS_FAILED
        if self.missed_gates and status in (ExitStatus.OK, ExitStatus.TESTS_FAILED):
            return ExitStatus.TESTS_FAILED
        if (status == ExitStatus.TESTS_FAILED and not self.settings.strict and self.case_failures
                and not self.other_failures and not self.not_run):
            return ExitStatus.OK
        return status

    def status_note(self) -> str | None:
        """Why the exit status differs from pytest's, in one line (None when it does not)."""
        if self.original_status == ExitStatus.TESTS_FAILED and self.final_status == ExitStatus.OK:
            return (f"toolbench: {self.case_failures} failing benchmark cases are the measurement, not a broken "
                    "run: exit status 0 (--toolbench-strict restores pytest's status)")
        if self.not_run:
            return (f"toolbench: {len(self.not_run)} selected cases have no verdict (counted as failed, error type "
                    f"not_run): exit status {self.final_status}")
        if self.missed_gates:
            return f"toolbench: {len(self.missed_gates)} gate(s) missed: exit status {self.final_status}"
        return None

    @property
    def outcome(self) -> RunOutcome:
        """The plain value the writers read (the tallies, comparison, gates and final status so far)."""
        return RunOutcome(comparison=self.comparison, gates=tuple(self.gates), exit_status=self.final_status,
                          case_failures=self.case_failures, other_failures=self.other_failures,
                          not_run=tuple(self.not_run), profile=self.profile)
