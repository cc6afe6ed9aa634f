"""The end-of-run terminal summary: one block per suite, with counts, 95% intervals and baseline deltas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import failures, leaderboard
from .facts import generation_figures, suite_facts
from . import profile_views
from .significance import figures_text, format_test, untested_notes
from .stats import count_interval, figure_notes, format_change, format_counts, format_interval, format_value, \
    no_delta_text

if TYPE_CHECKING:
    from .leaderboard import SuiteRanks
    from .outcome import RunOutcome
    from .run import FinishedRun
    from .run_report import RunReport

LISTED_CASES = 10

#: What each per-case label the core sets means (counts are cases); a suite's own labels are described by the suite
#: (its scorer's ``LABEL_NOTES``, ``SuiteSummary.label_notes``).
LABEL_NOTES = {
    "outcome": "how each case ended: pass; wrong (read, judged wrong); format_error (could not be read); "
               "checker_crash (the official checker raises); scorer_error; missing_output; not_run",
    "mode": "how the output was read: prompt (call text) or native (structured tool calls)",
    "has_call": "whether the output held at least one tool call",
    "truncated": "the generation stopped at the max-tokens limit",
}


def case_list(ids: list[str]) -> str:
    shown = ", ".join(ids[:LISTED_CASES])
    return shown + (f", ... and {len(ids) - LISTED_CASES} more" if len(ids) > LISTED_CASES else "")


def render(report: "RunReport") -> list[str]:
    summary = report.summary
    comparison = report.comparison
    lines: list[str] = []
    header = report.run_header
    lines.append(f"backend: {header.backend}" + (f"  model: {header.model}" if header.model else ""))
    for label, text in suite_facts(summary):  # what the suites that ran add (a leaderboard row)
        lines.append(f"{label.lower()}: {text}")
    if header.user_simulator:
        lines.append(f"simulated user: {header.user_simulator}")
    generation = generation_figures(header)
    if generation:
        lines.append(f"generation: {generation}")
    run_notes = report.notes
    if run_notes.baseline is not None:
        lines.append(f"baseline: {run_notes.baseline}; deltas in percentage points")
        lines.append(f"paired tests: {run_notes.paired_tests}")
        lines.append(str(run_notes.family))
        if run_notes.settings_differ:
            lines.append(f"settings that differ from the baseline (this run vs baseline): "
                         f"{'; '.join(run_notes.settings_differ)}")
    if report.history is not None:
        lines.append(f"history: {len(report.history.runs) - 1} baselines given; deltas and gates use the last one, "
                     "the trend across all of them is in the HTML and Markdown reports and the JSON (history)")
    lines.append(f"intervals: {run_notes.intervals}"
                 + (f"; {run_notes.estimate_intervals}" if run_notes.estimate_intervals else ""))
    for suite in summary.suites:
        suite_comparison = comparison.suites.get(suite.name) if comparison else None
        suite_notes = run_notes.suite(suite.name)
        lines.append("")
        lines.append(f"{suite.name}: {suite.title}  ({suite.passed}/{suite.total} "
                     f"{'samples' if suite.repeat else 'cases'} passed)"
                     + ("  [SHIPPED SAMPLES]" if suite.is_sample else ""))
        if suite_notes.repeat:
            lines.append(f"  repeat: {suite_notes.repeat}")
        if suite.known_defects:
            lines.append(f"  {suite.known_defects} of the failing cases are documented upstream defects "
                         "(known_defects.yaml: the reference answer itself is wrong); they count as failures in these "
                         "figures, as in the official scorer (a run on the reference answers reports them as xfailed)")
        lines.append(f"  data: {suite.data_source.get('description', '?')}")
        if suite.data_source.get("data_sha256"):
            lines.append(f"  data sha256: {suite.data_source['data_sha256']}")
        for key, value in (suite.data_source.get("info") or {}).items():
            lines.append(f"  {key}: {value}")
        if suite_notes.samples:
            lines.append(f"  !!! {suite_notes.samples} !!!")
        if suite_notes.selection:  # a sampled run's figures are estimates, not a selection
            lines.append(f"  selection: {suite_notes.selection}; the figures marked "
                         "'(selection)' cover only them")
        if suite_notes.sampling:
            lines.append(f"  {suite_notes.sampling}")
        if suite_notes.in_baseline is False:
            lines.append("  (not in the baseline)")
        if suite_notes.delta:
            lines.append(f"  {suite_notes.delta}")
        names = [m.name for m in suite.metrics] + list(suite.error_types) + list(suite.error_types_by_category)
        names += [str(value) for tally in suite.labels.values() for value in tally]
        width = min(max([len(n) for n in names] + [6]), 48) + 2
        group = None
        for metric in suite.metrics:
            if metric.group != group:
                group = metric.group
                lines.append(f"  [{group or 'metrics'}]")
            unit = getattr(metric, "unit", "%")
            interval = format_interval(count_interval(metric), unit)
            interval = f"[{interval}]" if interval else ""
            delta = ""
            tested = ""
            if suite_comparison is not None:
                found = suite_comparison.delta(metric)
                delta = format_change(found.delta, metric, unit) if found and found.delta is not None \
                    else no_delta_text(found)
                if found is not None and found.delta is not None and found.paired is not None:
                    tested = format_test(found.paired, unit)
            notes = figure_notes(metric)
            formula = f"  {'; '.join(notes)}" if notes else ""
            row = f"    {metric.name:<{width}}{format_value(metric.value, unit):>8}  {format_counts(metric):>11}"
            row += f"  {interval:>13}"
            if suite_comparison is not None:
                row += f"  {delta:>7}"
                if tested:
                    row += f"  {tested:<26}"
            lines.append(row + formula)
        if suite.error_types:
            lines.append("  [failures by error type]")
            for error_type, count in suite.error_types.items():
                lines.append(f"    {error_type:<{width}}{count:>8}")
        if suite.error_types_by_category:
            lines.append("  [failures by category]")
            for category, tally in suite.error_types_by_category.items():
                detail = ", ".join(f"{error_type} {count}" for error_type, count in tally.items())
                lines.append(f"    {category:<{width}}{sum(tally.values()):>8}  {detail}")
        shown_groups = {metric.group for metric in suite.metrics}
        for label, tally in suite.labels.items():
            if label in shown_groups:  # already a metric group above (e.g. tl_category): one table, one meaning
                continue
            note = suite.label_notes.get(label) or LABEL_NOTES.get(label, "a label the scorer gives each case")
            lines.append(f"  [cases by {label}: {note}]")
            for value, count in tally.items():
                lines.append(f"    {value:<{width}}{count:>8}")
        if suite.name in report.leaderboards:
            lines.extend(leaderboard_lines(report.leaderboards[suite.name]))
        if suite_comparison is not None and suite_comparison.in_baseline:
            lines.append(f"  vs baseline ({suite_comparison.compared_cases} cases in both): "
                         f"{len(suite_comparison.newly_failing)} newly failing, "
                         f"{len(suite_comparison.newly_passing)} newly passing")
            if suite_notes.coverage:
                lines.append(f"    {suite_notes.coverage}")
            for note, names in untested_notes(suite_comparison):
                lines.append(f"    p n/a ({figures_text(names)}): {note.removeprefix('n/a: ')}")
            if suite_comparison.newly_failing:
                lines.append(f"    newly failing: {case_list(suite_comparison.newly_failing)}")
            if suite_comparison.newly_passing:
                lines.append(f"    newly passing: {case_list(suite_comparison.newly_passing)}")
    lines += profile_views.terminal_lines(report.outcome.profile if report.outcome else None)
    return lines


def leaderboard_lines(ranks: "SuiteRanks") -> list[str]:
    """The suite's block's leaderboard part: per fully run figure, its rank and its neighbours; then the figures
    that have no rank and why."""
    if ranks.problem:
        return [f"  [leaderboard: no rank: {ranks.problem}]"]
    lines = [f"  [{leaderboard.heading(ranks)}]"]
    for rank in ranks.ranks:
        lines.append(f"    {rank.label} ({rank.figure}): {100 * rank.value:.2f}%, rank {rank.rank} of {rank.of} "
                     f"({rank.range_text()})" + (f"; protocol unchecked: {', '.join(rank.unchecked)}"
                                                 if rank.unchecked else ""))
        lines.append("      " + " | ".join(leaderboard.entry_text(entry) for entry in rank.neighbours))
    for figure, why in ranks.not_ranked.items():
        lines.append(f"    {figure}: no rank ({why})")
    return lines


def samples_line(report: "RunReport") -> str | None:
    """One closing line naming the suites that ran on their shipped samples (the run still passes without gates;
    a gate on their figures is missed)."""
    names = [suite.name for suite in report.summary.suites if suite.is_sample]
    if not names:
        return None
    return (f"toolbench: {len(names)} suite(s) ran on their shipped samples, not the benchmark's data (their figures "
            f"are not the benchmark's): {', '.join(names)}")


def gate_lines(run: "RunOutcome") -> list[str]:
    """One line per gate: missed gates first, each naming the metric, its value and the bound."""
    missed = [f"toolbench gate missed: {gate.message} ({gate.gate})" for gate in run.gates if not gate.passed]
    passed = [f"toolbench gate passed: {gate.message}" for gate in run.gates if gate.passed]
    return missed + passed


# -- the end of the run: what pytest's terminal summary shows ---------------------------------------------------
@dataclass(frozen=True)
class TerminalLine:
    """One line of the terminal summary: its text and markup (pytest's names: ``red``, ``yellow``, ``bold``), or
    the title of a section (``section``)."""

    text: str
    markup: tuple[str, ...] = ()
    section: bool = False


class TerminalWriter:
    """The built-in writer of the terminal summary (``report/writers.py``): it formats the failures and summary
    sections when the run's report is handed to it; the plugin prints them, then :func:`run_end`'s closing lines,
    in pytest's terminal summary."""

    name = "terminal"
    what = "terminal summary"
    path = None

    def __init__(self) -> None:
        self.lines: list[TerminalLine] = []

    def write(self, report: "RunReport") -> None:
        self.lines = sections(report)
        return None


def sections(report: "RunReport") -> list[TerminalLine]:
    """The failures section (the failing cases, one line each) and the summary section (each suite's block)."""
    lines: list[TerminalLine] = []
    failure_lines = failures.lines(report.records, defects_expected=report.defects_expected)
    if failure_lines:
        lines.append(TerminalLine("toolbench failures", section=True))
        lines += [TerminalLine(line) for line in failure_lines]
    lines.append(TerminalLine("toolbench summary", section=True))
    lines += [TerminalLine(line) for line in render(report)]
    samples = samples_line(report)
    if samples:
        lines.append(TerminalLine(samples, ("yellow", "bold")))
    return lines


def run_end(finished: "FinishedRun", shown: "list[TerminalLine] | tuple[TerminalLine, ...]" = ()) -> list[TerminalLine]:
    """The toolbench part of pytest's terminal summary: what the terminal writer formatted (``shown``: the failures
    and summary sections), then the files written, the reports left as they were, the interruption, write errors,
    cases without a verdict, gates, and why the exit status differs from pytest's."""
    lines: list[TerminalLine] = list(shown)
    lines += [TerminalLine(f"toolbench: {what} written to {path}") for what, path in finished.written]
    lines += [TerminalLine(line, ("yellow",)) for line in finished.kept]
    if finished.interrupted:
        lines.append(TerminalLine(f"toolbench: INTERRUPTED {finished.interrupted}: the figures above cover the "
                                  "cases scored before that, the others have no verdict (not_run)", ("red", "bold")))
    lines += [TerminalLine(line, ("red", "bold")) for line in finished.write_errors]
    if finished.not_run:
        lines.append(TerminalLine(f"toolbench: no verdict for {len(finished.not_run)} selected cases (not_run): "
                                  f"{case_list(list(finished.not_run))}", ("red", "bold")))
    for line in gate_lines(finished.outcome):
        lines.append(TerminalLine(line, ("red", "bold") if line.startswith("toolbench gate missed") else ("bold",)))
    if finished.status_note:
        lines.append(TerminalLine(finished.status_note))
    return lines
