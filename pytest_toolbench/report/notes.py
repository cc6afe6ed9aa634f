"""The notes every writer shows beside the figures, made once per run (``RunReport.notes``): each writer only puts
them in its own markup (terminal lines, Markdown, HTML).

Run notes: the baseline compared with and what its deltas, paired tests and family mean, the settings that differ
from it, the intervals' kinds, the suites that ran on their shipped samples. Suite notes: the repeats, the shipped
samples' warning, a partial selection, a sampled run's design, the suite's place in the baseline, what its deltas
are and which of its cases and figures were compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from .compare import baseline_label
from .significance import PAIRED_TESTS_NOTE, family_note
from .stats import ESTIMATE_INTERVALS_NOTE, INTERVALS_NOTE, repeat_text, sample_line, samples_note

if TYPE_CHECKING:
    from ..run.summary import RunSummary, SuiteSummary
    from .compare import Comparison, SuiteComparison


@dataclass(frozen=True)
class SuiteNotes:
    #: ``--toolbench-repeat``'s figures in words (None without repeats)
    repeat: str | None = None
    #: the warning of a suite that ran on its shipped samples (None on the benchmark's data)
    samples: str | None = None
    #: "N of M cases" of a partial selection of a full (not sampled) run; None otherwise
    selection: str | None = None
    #: a ``--toolbench-sample`` run's design in one line (None otherwise)
    sampling: str | None = None
    #: None without a baseline; else whether the suite is in it
    in_baseline: bool | None = None
    #: what the deltas of a sampled run are ("" for a full run or without a baseline; writers show it for a suite in
    #: the baseline)
    delta: str = ""
    #: which cases and figures were compared with the baseline ("" when all or without a baseline)
    coverage: str = ""


@dataclass(frozen=True)
class RunNotes:
    #: ``path (label)`` of the baseline compared with (None without one)
    baseline: str | None = None
    baseline_path: str | None = None
    baseline_label: str | None = None
    paired_tests: str | None = None
    family: str | None = None
    #: the settings that differ from the baseline's ("this run vs baseline")
    settings_differ: tuple[str, ...] = ()
    intervals: str = INTERVALS_NOTE
    #: the sampled suites' intervals are design-based (None when no suite was sampled)
    estimate_intervals: str | None = None
    #: the suites that ran on their shipped samples
    samples: tuple[str, ...] = ()
    suites: Mapping[str, SuiteNotes] = field(default_factory=dict)

    def suite(self, name: str) -> SuiteNotes:
        return self.suites.get(name) or SuiteNotes()


def suite_notes(suite: "SuiteSummary", comparison: "SuiteComparison | None") -> SuiteNotes:
    return SuiteNotes(
        repeat=repeat_text(suite.repeat) if suite.repeat else None,
        samples=samples_note() if suite.is_sample else None,
        selection=suite.selection_text() if suite.partial_selection and suite.sampling_design is None else None,
        sampling=sample_line(suite.sampling_design) if suite.sampling_design is not None else None,
        in_baseline=None if comparison is None else bool(comparison.in_baseline),
        delta=comparison.delta_note() if comparison is not None else "",
        coverage=comparison.coverage_text() if comparison is not None else "")


def build(summary: "RunSummary", comparison: "Comparison | None") -> RunNotes:
    label = baseline_label(comparison.header) if comparison is not None else None
    return RunNotes(
        baseline=f"{comparison.path} ({label})" if comparison is not None else None,
        baseline_path=comparison.path if comparison is not None else None, baseline_label=label,
        paired_tests=PAIRED_TESTS_NOTE if comparison is not None else None,
        family=family_note(comparison) if comparison is not None else None,
        settings_differ=tuple(comparison.settings_differ) if comparison is not None else (),
        estimate_intervals=ESTIMATE_INTERVALS_NOTE if any(s.sampling_design for s in summary.suites) else None,
        samples=tuple(suite.name for suite in summary.suites if suite.is_sample),
        suites={suite.name: suite_notes(suite, comparison.suites.get(suite.name) if comparison else None)
                for suite in summary.suites})
