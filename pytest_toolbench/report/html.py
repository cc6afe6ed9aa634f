"""pytest-html integration: a benchmark summary at the top, suite/category/error columns, per-case details.

What the page shows, as functions of plain values; the pytest-html hooks that place it live in ``plugin/html.py``
(the HTML writer, registered on the controller only, and only when pytest-html is active, ``--html``). Everything is
built from the JSON-safe records that ride on the test reports, so a ``-n 2`` run gives the same page as a serial
one. This module is the summary section; the results table's columns and each row's details are
``report/html_rows.py`` (re-exported here).
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping
from urllib.parse import quote

from ..run.summary import SuiteSummary
from .charts import CHART_CSS, Bar, bar_chart
from . import leaderboard
from .compare import SuiteComparison
from . import profile_views
from .significance import PairedResult, decision_cells, format_delta_interval, \
    format_p, format_power, mde_text
from .history import html_section as history_html
from .html_rows import TABLE_HEADER_CELLS, case_details, table_row_cells, without_repeated_log  # noqa: F401
from .notes import SuiteNotes
from .stats import change_css, count_interval, direction_note, format_change, format_counts, format_interval, \
    format_value, no_delta_text, warning_notes

if TYPE_CHECKING:
    from .leaderboard import SuiteRanks
    from .run_report import RunReport

LISTED_CASES = 200
PRIMARY_GROUPS = ("aggregate", "category")
CHART_BARS = 60
LISTED_GATES = 12
OPEN_LIST = 30


# -- summary section -------------------------------------------------------------------------------------------
def _metric_table(suite: SuiteSummary, metrics: list[Any], comparison: SuiteComparison | None) -> str:
    head = "<tr><th>Group</th><th>Metric</th><th>Value</th><th>Correct/Total</th><th>95% CI</th>"
    if comparison is not None:
        head += ("<th>Baseline</th><th>Δ points</th><th>p adj.</th><th>CI adj. of Δ</th>"
                 "<th>MDE 80%</th><th>Power (5-pt drop)</th>")
    rows = [head + "</tr>"]
    for metric in metrics:
        unit = getattr(metric, "unit", "%")
        name = escape(metric.name) + (f" <small>({direction_note(metric)})</small>" if direction_note(metric) else "")
        name += "".join(f' <small class="tb-note">{escape(note)}</small>' for note in warning_notes(metric))
        cells = [escape(metric.group or ""), name, format_value(metric.value, unit),
                 format_counts(metric), format_interval(count_interval(metric), unit)]
        row = "".join(f"<td>{c}</td>" for c in cells[:2]) + "".join(f'<td class="tb-n">{c}</td>' for c in cells[2:])
        if comparison is not None:
            found = comparison.delta(metric)
            if found is None or found.delta is None:
                shown = format_value(found.baseline, unit) if found is not None and found.baseline is not None else "–"
                row += f'<td class="tb-n">{shown}</td><td class="tb-n">{no_delta_text(found)}</td>'
                row += '<td class="tb-n">–</td>' * 4
            else:
                css = change_css(found.delta, metric)  # green for an improvement: a fall, for lower-is-better
                row += (f'<td class="tb-n">{format_value(found.baseline, unit)}</td>'
                        f'<td class="tb-n {css}">{format_change(found.delta, metric, unit)}</td>')
                row += _paired_cells(found.paired, unit)
        title = f' title="{escape(metric.formula)}"' if metric.formula else ""
        rows.append(f"<tr{title}>{row}</tr>")
    return f'<table class="tb-table tb-metrics">{"".join(rows)}</table>'


def _paired_cells(paired: "PairedResult | None", unit: str) -> str:
    """The decision columns (the adjusted p and the simultaneous interval; outside the gated family the unadjusted
    ones, marked), the MDE and the power; hover the p for the test, the flips and the unadjusted p and interval;
    "n/a" with the reason on hover when no paired test applies."""
    if paired is None or paired.test is None:
        why = escape(paired.note if paired is not None else "n/a")
        return f'<td class="tb-n" title="{why}">n/a</td>' + '<td class="tb-n">–</td>' * 4
    hover = escape(f"{paired.test} over {paired.pairs} paired cases: {paired.flipped_to_fail} got worse, "
                   f"{paired.flipped_to_pass} got better; unadjusted: p (two-sided) {format_p(paired.p_value)}, "
                   f"95% interval {format_delta_interval(paired.delta_interval95, unit) or 'none'}"
                   + (f"; {paired.note}" if paired.note else "") + (f"; {paired.power_note}"
                                                                    if paired.power_note else ""))
    p_cell, interval_cell = decision_cells(paired, unit)
    return (f'<td class="tb-n" title="{hover}">{escape(p_cell)}</td>'
            f'<td class="tb-n">{escape(interval_cell)}</td>'
            f'<td class="tb-n">{escape(mde_text(paired, unit)) or "–"}</td>'
            f'<td class="tb-n">{escape(format_power(paired)) or "–"}</td>')


def _chart(suite: SuiteSummary, comparison: SuiteComparison | None, baseline_name: str = "") -> str:
    rates = [m for m in suite.metrics if getattr(m, "unit", "%") == "%" and m.value is not None]
    picked = [m for m in rates if m.group == "category"] or [m for m in rates if m.group == "aggregate"] or rates
    if not picked:
        return ""
    bars = []
    for metric in picked[:CHART_BARS]:
        interval = count_interval(metric)
        found = comparison.delta(metric) if comparison is not None else None
        bars.append(Bar(metric.name, metric.value, found.baseline if found and found.delta is not None else None,
                        interval[0] if interval else None, interval[1] if interval else None,
                        format_counts(metric)))
    group = picked[0].group or "metrics"
    title = f"{suite.name}: {group} figures" + (f" (first {CHART_BARS} of {len(picked)})"
                                                  if len(picked) > CHART_BARS else "")
    return bar_chart(bars, title, with_baseline=comparison is not None, baseline_name=baseline_name)


def _failure_table(suite: SuiteSummary) -> str:
    if not suite.error_types_by_category:
        return ""
    error_types = list(suite.error_types)
    head = "<tr><th>Category</th><th>Failed</th>" + "".join(f"<th>{breakable(e)}</th>" for e in error_types) + "</tr>"
    rows = [head]
    for category, tally in suite.error_types_by_category.items():
        rows.append(f"<tr><td>{escape(category)}</td><td class=\"tb-n\">{sum(tally.values())}</td>"
                    + "".join(f'<td class="tb-n">{tally.get(e, "") or ""}</td>' for e in error_types) + "</tr>")
    rows.append(f'<tr class="tb-total"><td>all</td><td class="tb-n">{sum(suite.error_types.values())}</td>'
                + "".join(f'<td class="tb-n">{suite.error_types[e]}</td>' for e in error_types) + "</tr>")
    return (f'<h4>Failures by category and error type</h4><div class="tb-scroll"><table class="tb-table tb-failures">'
            f'{"".join(rows)}</table></div>')


def breakable(name: str) -> str:
    """Escaped, with line-break opportunities after ``:`` and ``_`` only: an error type such as
    ``parallel_function_checker_no_order:cannot_find_match`` wraps between its words, never inside one."""
    return re.sub(r"([:_])", r"\1<wbr>", escape(name))


def _case_links(suite: SuiteSummary, ids: list[str], nodeids: Mapping[tuple[str, str], str]) -> str:
    links = []
    for case_id in ids[:LISTED_CASES]:
        nodeid = nodeids.get((suite.name, case_id))
        links.append(f'<a href="#{escape(quote(nodeid, safe="/:[]"))}">{escape(case_id)}</a>' if nodeid
                     else escape(case_id))
    more = f" … and {len(ids) - LISTED_CASES} more" if len(ids) > LISTED_CASES else ""
    return ", ".join(links) + more


def _leaderboard(ranks: "SuiteRanks") -> str:
    """Per fully run figure, a bar chart of this run and its neighbours on the published leaderboard."""
    if ranks.problem:
        return f"<p>Leaderboard: no rank: {escape(ranks.problem)}</p>"
    charts = []
    for rank in ranks.ranks:
        bars = [Bar(("→ " if entry.this_run else "") + leaderboard.entry_text(entry).rsplit(" ", 1)[0],
                    entry.value) for entry in rank.neighbours]
        charts.append(bar_chart(bars, f"{rank.label}: rank {rank.rank} of {rank.of} ({rank.range_text()})",
                                with_baseline=False))
    missing = "".join(f"<li>{escape(figure)}: {escape(why)}</li>" for figure, why in ranks.not_ranked.items())
    return (f"<h4>Leaderboard: {escape(leaderboard.heading(ranks))}</h4>"
            f'<div class="tb-flex">{"".join(f"<div>{chart}</div>" for chart in charts)}</div>'
            + (f"<details><summary>{len(ranks.not_ranked)} figures without a rank</summary><ul>{missing}</ul>"
               "</details>" if missing else ""))


def _suite_section(suite: SuiteSummary, comparison: SuiteComparison | None,
                   nodeids: Mapping[tuple[str, str], str], baseline_name: str = "",
                   ranks: "SuiteRanks | None" = None, *, notes: SuiteNotes) -> str:
    compared = comparison if comparison is not None and comparison.in_baseline else None
    parts = [f'<div class="tb-suite" id="tb-suite-{escape(suite.name)}">',
             f"<h3>{escape(suite.name)}: {escape(suite.title)}"
             + (' <span class="tb-warn">(shipped samples)</span>' if suite.is_sample else "") + "</h3>",
             f"<p><b>{suite.passed}/{suite.total}</b> {'samples' if suite.repeat else 'cases'} passed · data: "
             f"{escape(suite.data_source.get('description', '?'))}</p>"]
    if notes.repeat:
        parts.append(f"<p>Repeat: {escape(notes.repeat)}</p>")
        curve = suite.repeat.get("pass_hat") or []
        if len(curve) > 1:  # the pass^k curve, one bar per k (tau-bench's C(c,k)/C(n,k))
            parts.append(bar_chart([Bar(f"pass^{point['k']}", point["value"],
                                        counts=f"over {point['cases']} cases") for point in curve],
                                   "pass^k: all of k samples pass", with_baseline=False))
    if notes.samples:
        parts.append(f'<p class="tb-warn">{escape(notes.samples)}</p>')
    if notes.selection:  # a sampled run's figures are estimates, not a selection
        parts.append(f"<p>Selection: {notes.selection}; the figures marked (selection) "
                     "cover only them.</p>")
    if notes.sampling:
        parts.append(f'<p class="tb-warn">{escape(notes.sampling)}</p>')
    if notes.in_baseline is False:
        parts.append("<p>Not in the baseline.</p>")
    if compared is not None and notes.delta:
        parts.append(f"<p><b>{escape(notes.delta)}.</b></p>")
    primary = [m for m in suite.metrics if m.group in PRIMARY_GROUPS] or list(suite.metrics)
    rest = [m for m in suite.metrics if m not in primary]
    parts.append(f'<div class="tb-flex"><div>{_metric_table(suite, primary, compared)}')
    if rest:
        groups = ", ".join(dict.fromkeys(m.group or "metrics" for m in rest))
        parts.append(f"<details><summary>{len(rest)} more metrics ({escape(groups)})</summary>"
                     f"{_metric_table(suite, rest, compared)}</details>")
    parts.append(f'</div><div>{_chart(suite, compared, baseline_name)}</div></div>')
    parts.append(_failure_table(suite))
    if ranks is not None:
        parts.append(_leaderboard(ranks))
    if compared is not None:
        parts.append(f"<p>Against the baseline ({compared.compared_cases} cases in both runs): "
                     f"<b>{len(compared.newly_failing)} newly failing</b>, "
                     f"<b>{len(compared.newly_passing)} newly passing</b>.</p>")
        if notes.coverage:
            parts.append(f"<p>{escape(notes.coverage)}.</p>")
        for label, ids, css in (("Newly failing", compared.newly_failing, "tb-down"),
                                ("Newly passing", compared.newly_passing, "tb-up")):
            if not ids:
                continue
            links = _case_links(suite, ids, nodeids)
            if len(ids) > OPEN_LIST:  # a long list stays one click away, the summary above says how many
                parts.append(f'<details class="tb-list {css}"><summary>{label} ({len(ids)})</summary>'
                             f"<p>{links}</p></details>")
            else:
                parts.append(f'<p class="tb-list {css}">{label}: {links}</p>')
    parts.append("</div>")
    return "".join(parts)


SUMMARY_CSS = CHART_CSS + """
/* The verdict first: pytest-html's summary (which holds this section) above its environment table. */
body{display:flex;flex-direction:column}
body>.summary{order:1}
body>#environment-header,body>#environment{order:2}
body>#results-table{order:3}
/* A failed row's log is shown in its details: no empty "expand [+]" box where pytest-html has no log. */
.logwrapper:not(:has(.log)){display:none}
#toolbench-summary{margin:0 0 16px 0;max-width:100%;overflow-wrap:break-word;color:#222}
#toolbench-summary a{color:#1a5fb4}
.tb-verdict{border:2px solid #bbb;padding:6px 10px;margin:8px 0 12px 0}
.tb-verdict.tb-bad{border-color:#c62828}
.tb-verdict p{margin:4px 0}
.tb-verdict .tb-headline{font-size:13px}
.tb-scroll{max-width:100%;overflow-x:auto}
.tb-facts td{overflow-wrap:anywhere}
.tb-metrics td:first-child{white-space:nowrap}
.tb-failures th{white-space:normal;min-width:5em;max-width:11em}
#toolbench-summary .tb-flex>div{min-width:0;max-width:100%}
#toolbench-summary h3{margin:18px 0 4px 0;color:#222}
#toolbench-summary b{color:inherit}
.tb-gates b{color:#222}
#toolbench-summary h4{margin:10px 0 4px 0}
.tb-table{border-collapse:collapse;font-size:12px;margin:4px 0}
.tb-table th,.tb-table td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top;color:#222}
.tb-table th{background:#f2f2f2;white-space:nowrap;overflow-wrap:normal}
.tb-table td.tb-n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
#results-table td{overflow-wrap:anywhere}
.tb-total td{font-weight:bold}
.tb-flex{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
.tb-up{color:#18794e}.tb-down{color:#c62828}
.tb-warn{color:#c62828;font-weight:bold}
.tb-note{color:#c62828;font-weight:normal}
.tb-gates{border:1px solid #ddd;padding:6px 10px;margin:8px 0}
.tb-gates.tb-missed{border-color:#c62828;background:#fff4f4}
.tb-list{font-size:12px}
.tb-case{font-size:12px}
.tb-case pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;border:1px solid #e6e6e6;
 padding:4px 6px;margin:2px 0 6px 0;max-height:360px;overflow:auto}
.tb-case summary{cursor:pointer;font-weight:bold}
.tb-why{margin:4px 0}
.tb-ok{color:#18794e}.tb-ko{color:#c62828}
.tb-cut{color:#888}
.tb-diff .tb-a{color:#18794e;background:#e9f7ef}
.tb-diff .tb-d{color:#c62828;background:#fdecea}
.tb-diff .tb-h{color:#6a4fb3}
.tb-compare td{overflow-wrap:anywhere}
.tb-compare tr.tb-fail td{background:#fdecea;color:#c62828}
.tb-compare tr.tb-pass td:first-child{color:#18794e}
"""


def _gates_html(run: Any) -> str:
    if run is None or not run.gates:
        return ""
    missed = run.missed_gates
    ordered = sorted(run.gates, key=lambda g: g.passed)
    items = "".join(f'<li class="{"tb-up" if g.passed else "tb-down"}">{"passed" if g.passed else "MISSED"}: '
                    f"{escape(g.message)}</li>" for g in ordered[:LISTED_GATES])
    if len(ordered) > LISTED_GATES:
        items += f"<li>… and {len(ordered) - LISTED_GATES} more (all in the terminal and the JSON)</li>"
    return (f'<div class="tb-gates{" tb-missed" if missed else ""}"><b>Gates: '
            f'{f"{len(missed)} missed" if missed else "all passed"}</b><ul>{items}</ul></div>')


def _note_label(metric: Any, note: str) -> str:
    """The short label of a figure's warning note: a sampled run's figures are estimates, never "(selection)"."""
    if note != metric.scope:
        return "INCOMPLETE"
    return "(estimated)" if getattr(metric, "estimate", None) else "(selection)"


def verdict_html(report: "RunReport") -> str:
    """What the first screen must answer: how many cases passed, the gates, and each suite's headline figures (its
    aggregate rows), before the run's settings, the tables and pytest-html's environment."""
    summary, run = report.summary, report.outcome
    passed, total = sum(s.passed for s in summary.suites), sum(s.total for s in summary.suites)
    unit = "samples" if any(s.repeat for s in summary.suites) else "cases"
    bad = (run is not None and bool(run.missed_gates)) or any(s.is_sample for s in summary.suites)
    lines = [f'<div class="tb-verdict{" tb-bad" if bad else ""}">',
             f"<p><b>{passed:,} of {total:,} {unit} passed</b> ({total - passed:,} failed) in "
             f"{len(summary.suites)} suite{'s' if len(summary.suites) != 1 else ''}</p>"]
    lines.append(_gates_html(run))
    for suite in summary.suites:
        headline = [m for m in suite.metrics if m.group == "aggregate"] or \
            [m for m in suite.metrics if m.group in PRIMARY_GROUPS][:6]
        figures = " · ".join(
            f"{escape(m.name)} <b>{format_value(m.value, getattr(m, 'unit', '%'))}</b>"
            + (f" ({escape(format_counts(m))})" if format_counts(m) else "")
            + "".join(f' <span class="tb-note" title="{escape(note)}">{_note_label(m, note)}'
                      "</span>" for note in warning_notes(m))
            for m in headline[:12])
        more = f" · … {len(headline) - 12} more below" if len(headline) > 12 else ""
        sample = ' <span class="tb-warn">SAMPLE DATA ONLY</span>' if suite.is_sample else ""
        lines.append(f'<p class="tb-headline"><a href="#tb-suite-{escape(suite.name)}">{escape(suite.name)}</a>'
                     f"{sample}: {suite.passed:,}/{suite.total:,} passed · {figures}{more}</p>")
    lines.append("</div>")
    return "".join(lines)


def summary_html(report: "RunReport") -> str:
    summary, run, comparison = report.summary, report.outcome, report.comparison
    nodeids = report.case_anchors()
    parts = [f"<style>{SUMMARY_CSS}</style>", '<section id="toolbench-summary">', "<h2>Tool-use benchmarks</h2>"]
    parts.append(verdict_html(report))
    parts.append('<table class="tb-table tb-facts">' + "".join(
        f"<tr><th>{escape(label)}</th><td>{escape(value)}</td></tr>" for label, value in report.facts) + "</table>")
    notes = report.notes
    if notes.baseline is not None:
        parts.append(f"<p>Baseline: <code>{escape(str(notes.baseline_path))}</code> "
                     f"({escape(str(notes.baseline_label))}); Δ in percentage points.</p>")
        parts.append(f"<p>Paired tests: {escape(str(notes.paired_tests))}.</p>")
        parts.append(f"<p>{escape(str(notes.family))}.</p>")
        if notes.settings_differ:
            parts.append("<p><b>Settings that differ from the baseline</b> (this run vs baseline): "
                         f"{escape('; '.join(notes.settings_differ))}.</p>")
    if report.history is not None:
        parts.append(history_html(report.history))
    if notes.samples:
        parts.append(f'<p class="tb-warn">Ran on shipped samples, not the benchmark\'s data: '
                     f'{escape(", ".join(notes.samples))}</p>')
    parts.append(f"<p>{escape(notes.intervals)}. "
                 + (f"{escape(notes.estimate_intervals)} " if notes.estimate_intervals else "")
                 + "Hover a chart bar or a metric row for its exact figures or formula.</p>")
    parts.append(profile_views.html_section(run.profile if run else None))
    for suite in summary.suites:
        parts.append(_suite_section(suite, comparison.suites.get(suite.name) if comparison else None, nodeids,
                                    Path(comparison.path).name if comparison else "",
                                    report.leaderboards.get(suite.name), notes=notes.suite(suite.name)))
    parts.append("</section>")
    return "".join(parts)
