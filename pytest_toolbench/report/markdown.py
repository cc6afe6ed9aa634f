"""``--toolbench-md``: the summary as GitHub-flavoured Markdown, fit to paste as a pull-request comment.

Plain pipe tables and lists only (no HTML), so it renders the same in a comment, a job summary or a terminal.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..run.summary import SuiteSummary
from . import leaderboard
from .compare import SuiteComparison
from . import profile_views
from .significance import decision_cells, format_power, mde_text
from .history import row as history_row
from .notes import SuiteNotes
from .stats import count_interval, direction_note, format_change, format_counts, format_interval, format_value, \
    no_delta_text, warning_notes

if TYPE_CHECKING:
    from .history import History
    from .leaderboard import SuiteRanks
    from .run_report import RunReport

#: GitHub refuses comments over 65,536 characters; beyond this budget only aggregate and category rows are kept.
COMMENT_BUDGET = 60_000
LISTED_CASES = 25
LISTED_GATES = 12


#: A ``<`` that GitHub could read as the start of an HTML tag, comment or declaration (``<b``, ``</``, ``<!``, ``<?``)
TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def cell(text: Any) -> str:
    """One table cell: pipes escaped, line breaks flattened, and no HTML: a ``<`` that could open a tag is
    backslash-escaped (Markdown's own escape: it renders as ``<``). No HTML entity is written: ``&gt;`` would show as
    such in a terminal, a code span or any plain-text view of the comment, and a lone ``>`` or ``<`` (``a -> b``,
    ``p < 0.05``) is text to GitHub already."""
    value = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return TAG_START.sub(r"\\<", value)


def code(text: Any) -> str:
    """A code span: its content is literal in Markdown (no escape works or is needed inside it), so only the
    backticks that would end it and the line breaks go."""
    return "`" + str(text).replace("`", "").replace("\r", " ").replace("\n", " ") + "`"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()) -> list[str]:
    align = ["---:" if index in right else "---" for index in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _code_list(ids: list[str]) -> str:
    shown = ", ".join(code(case_id) for case_id in ids[:LISTED_CASES])
    return shown + (f" … and {len(ids) - LISTED_CASES} more" if len(ids) > LISTED_CASES else "")


def _metric_rows(suite: SuiteSummary, comparison: SuiteComparison | None, groups: set[str] | None):
    rows = []
    for metric in suite.metrics:
        if groups is not None and metric.group not in groups:
            continue
        unit = getattr(metric, "unit", "%")
        name = f"{metric.name} ({direction_note(metric)})" if direction_note(metric) else metric.name
        name = " — ".join([name] + warning_notes(metric))
        row = [metric.group or "-", name, format_value(metric.value, unit), format_counts(metric) or "-",
               format_interval(count_interval(metric), unit) or "-"]
        if comparison is not None:
            found = comparison.delta(metric)
            if found is None or found.delta is None:
                row += [format_value(found.baseline, unit) if found is not None and found.baseline is not None
                        else "-", no_delta_text(found), "-", "-", "-", "-"]
            else:
                row += [format_value(found.baseline, unit), format_change(found.delta, metric, unit)]
                tested = found.paired if found.paired is not None and found.paired.test else None
                row += (decision_cells(tested, unit) + [mde_text(tested, unit) or "-",
                                                        format_power(tested) or "-"]
                        if tested is not None and found.delta is not None else ["n/a", "-", "-", "-"])
        rows.append(row)
    return rows


def _leaderboard_section(ranks: "SuiteRanks") -> list[str]:
    if ranks.problem:
        return ["", f"_Leaderboard: no rank: {cell(ranks.problem)}_"]
    lines = ["", f"Leaderboard: {cell(leaderboard.heading(ranks))}.", ""]
    rows = [[rank.label, f"{100 * rank.value:.2f}%", f"{rank.rank} of {rank.of} ({rank.range_text()})",
             " · ".join(("**" + leaderboard.entry_text(e) + "**") if e.this_run else leaderboard.entry_text(e)
                        for e in rank.neighbours)] for rank in ranks.ranks]
    rows += [[figure, "-", "no rank", why] for figure, why in ranks.not_ranked.items()]
    return lines + table(["Figure", "This run", "Rank", "Neighbours"], rows, right=[1, 2])


def _history_section(history: "History") -> list[str]:
    """One compact table per suite: a row per headline figure, a column per baseline (oldest first) and this run."""
    lines = [f"**History** ({len(history.runs) - 1} baselines, oldest first; Δ and gates use the last, "
             f"{code(history.compared_with.label)}):", ""]
    for suite in history.suites():
        trends = [trend for trend in history.trends if trend.suite == suite]
        lines += table([suite] + [run.label for run in history.runs], [[t.name] + history_row(t) for t in trends],
                       right=range(1, len(history.runs) + 1))
        lines.append("")
    return lines


def _suite_section(suite: SuiteSummary, comparison: SuiteComparison | None, groups: set[str] | None,
                   ranks: "SuiteRanks | None" = None, *, notes: SuiteNotes) -> list[str]:
    lines = [f"### {cell(suite.name)}: {cell(suite.title)}" + (" (shipped samples)" if suite.is_sample else ""), "",
             f"**{suite.passed}/{suite.total}** {'samples' if suite.repeat else 'cases'} passed · data: "
             f"{cell(suite.data_source.get('description', '?'))}", ""]
    if notes.repeat:
        lines += [f"**Repeat**: {cell(notes.repeat)}", ""]
    if notes.samples:
        lines += [f"> **{cell(notes.samples)}**", ""]
    if notes.selection:  # a sampled run's figures are estimates, not a selection
        lines += [f"_Selection: {notes.selection}; the figures marked (selection) cover "
                  "only them._", ""]
    if notes.sampling:
        lines += [f"**Sample**: {cell(notes.sampling)}", ""]
    with_baseline = comparison is not None and comparison.in_baseline
    if with_baseline and notes.delta:
        lines += [f"_{cell(notes.delta)}._", ""]
    headers = ["Group", "Metric", "Value", "Correct/Total", "95% CI"]
    right = [2, 3]
    if with_baseline:
        headers += ["Baseline", "Δ (points)", "p adj.", "CI adj. of Δ", "MDE 80%", "Power (5-pt drop)"]
        right += [5, 6, 7, 8, 9, 10]
    lines += table(headers, _metric_rows(suite, comparison if with_baseline else None, groups), right)
    if groups is not None:
        hidden = sum(1 for m in suite.metrics if m.group not in groups)
        if hidden:
            lines += ["", f"_{hidden} more metric rows in the JSON and HTML reports._"]
    if suite.error_types_by_category:
        error_types = list(suite.error_types)
        rows = [[category, sum(tally.values()), *[tally.get(e, 0) or "" for e in error_types]]
                for category, tally in suite.error_types_by_category.items()]
        rows.append(["**all**", sum(suite.error_types.values()), *[suite.error_types[e] for e in error_types]])
        lines += ["", "Failures by category and error type:", ""]
        lines += table(["Category", "Failed", *error_types], rows, right=range(1, len(error_types) + 2))
    if ranks is not None:
        lines += _leaderboard_section(ranks)
    if with_baseline:
        lines += ["", f"Against the baseline ({comparison.compared_cases} cases in both runs): "
                      f"**{len(comparison.newly_failing)} newly failing**, "
                      f"**{len(comparison.newly_passing)} newly passing**."]
        if notes.coverage:
            lines += ["", f"_{cell(notes.coverage)}._"]
        if comparison.newly_failing:
            lines += ["", f"- Newly failing: {_code_list(comparison.newly_failing)}"]
        if comparison.newly_passing:
            lines += ["", f"- Newly passing: {_code_list(comparison.newly_passing)}"]
    elif comparison is not None:
        lines += ["", "_Not in the baseline._"]
    return lines + [""]


def _verdict_lines(report: "RunReport") -> list[str]:
    """What a reviewer reads first, as the HTML page's verdict box: how many cases passed, the gates, and each
    suite's headline figures (its aggregate rows); the run's settings and the statistics notes come after."""
    summary, run = report.summary, report.outcome
    passed, total = sum(s.passed for s in summary.suites), sum(s.total for s in summary.suites)
    unit = "samples" if any(s.repeat for s in summary.suites) else "cases"
    lines = [f"**{passed:,} of {total:,} {unit} passed** ({total - passed:,} failed) in {len(summary.suites)} "
             f"suite{'s' if len(summary.suites) != 1 else ''}", ""]
    if run is not None and run.gates:
        missed = run.missed_gates
        lines.append(f"**Gates: {len(missed)} missed**" if missed else "**Gates: all passed**")
        lines.append("")
        ordered = sorted(run.gates, key=lambda g: g.passed)
        lines += [f"- {'❌ missed' if not gate.passed else '✅ passed'}: {cell(gate.message)}"
                  for gate in ordered[:LISTED_GATES]]
        if len(ordered) > LISTED_GATES:
            lines.append(f"- … and {len(ordered) - LISTED_GATES} more (all in the job log and the JSON results)")
        lines.append("")
    for suite in summary.suites:
        headline = [m for m in suite.metrics if m.group == "aggregate"] or \
            [m for m in suite.metrics if m.group in ("aggregate", "category")][:6]
        figures = " · ".join(
            f"{cell(m.name)} **{format_value(m.value, getattr(m, 'unit', '%'))}**"
            + (f" ({cell(format_counts(m))})" if format_counts(m) else "")
            + "".join(" (selection)" if note == m.scope else " INCOMPLETE" for note in warning_notes(m))
            for m in headline[:12])
        more = f" · … {len(headline) - 12} more below" if len(headline) > 12 else ""
        sample = " **SAMPLE DATA ONLY**" if suite.is_sample else ""
        lines.append(f"- **{cell(suite.name)}**{sample}: {suite.passed:,}/{suite.total:,} passed"
                     + (f" · {figures}{more}" if figures else ""))
    return lines + [""]


class MarkdownWriter:
    """The built-in writer of ``--toolbench-md`` (``report/writers.py``)."""

    name = "markdown"
    what = "Markdown summary"

    def __init__(self, path: Path):
        self.path = path

    def write(self, report: "RunReport") -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(render(report), encoding="utf-8")
        return self.path


def render(report: "RunReport") -> str:
    text = _render(report, groups=None)
    if len(text) > COMMENT_BUDGET:
        text = _render(report, groups={"aggregate", "category"})
    return text


def _render(report: "RunReport", groups: set[str] | None) -> str:
    summary, run, comparison = report.summary, report.outcome, report.comparison
    lines = [f"## {cell(report.title)}", ""]
    lines += _verdict_lines(report)
    lines += table(["Run", ""], report.facts)
    lines.append("")
    notes = report.notes
    if notes.baseline is not None:
        lines += [f"Baseline: {code(notes.baseline_path)} ({cell(notes.baseline_label)}); "
                  "Δ in percentage points.", "", f"Paired tests: {cell(notes.paired_tests)}.", "",
                  f"{cell(notes.family)}.", ""]
        if notes.settings_differ:
            lines += [f"**Settings that differ from the baseline** (this run vs baseline): "
                      f"{cell('; '.join(notes.settings_differ))}.", ""]
    if report.history is not None:
        lines += _history_section(report.history)
    if notes.samples:
        lines += [f"**Ran on shipped samples, not the benchmark's data:** {cell(', '.join(notes.samples))}", ""]
    lines += profile_views.markdown_lines(run.profile if run else None, cell)
    for suite in summary.suites:
        suite_comparison = comparison.suites.get(suite.name) if comparison else None
        lines += _suite_section(suite, suite_comparison, groups, report.leaderboards.get(suite.name),
                                notes=notes.suite(suite.name))
    lines.append(f"_{cell(notes.intervals)}._" + (f" _{notes.estimate_intervals}_" if notes.estimate_intervals else ""))
    return "\n".join(lines) + "\n"
