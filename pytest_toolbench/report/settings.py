"""The resolved reporting settings: plain values (``pytest_toolbench.plugin.report_options`` reads them from the command
line, on the controller only; workers never report, so these never travel)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .results_file import ResultsFile


@dataclass(frozen=True)
class Threshold:
    """``--toolbench-fail-under SUITE.METRIC=VALUE``: ``value`` is a fraction for percentage metrics."""

    suite: str
    metric: str
    value: float
    raw: float  # the number as written, for plain-number metrics
    given: str

    @property
    def label(self) -> str:
        return f"{self.suite}.{self.metric}"


@dataclass(frozen=True)
class ReportSettings:
    json_path: Path | None = None
    markdown_path: Path | None = None
    #: --toolbench-eee: the folder the Every Eval Ever export is written to
    eee_path: Path | None = None
    baseline_path: Path | None = None
    baseline: ResultsFile | None = None
    thresholds: tuple[Threshold, ...] = ()
    max_drop: float | None = None  # percentage points
    #: --toolbench-significance: a drop beyond max_drop misses the gate only when its paired p-value is below it
    significance: float | None = None
    #: --toolbench-multiple: the correction over the gated family (holm, westfall-young, bonferroni, none)
    multiple: str = "holm"
    #: --toolbench-accept-untested: a drop beyond max_drop of a figure without a paired test passes (with a line)
    accept_untested: bool = False
    strict: bool = False
    html_path: Path | None = None
    #: every --toolbench-baseline given, oldest first, as (path, results file); the last is ``baseline``
    baselines: tuple[tuple[Path, ResultsFile], ...] = ()
    #: suite name -> its leaderboard (``report.leaderboard.Source``), for the suites that declare one
    leaderboards: Mapping[str, Any] = field(default_factory=dict)
