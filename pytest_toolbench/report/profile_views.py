"""The capability profile as the writers show it: terminal lines, Markdown, and HTML with an inline SVG radar chart.

Rendering only; the figures come from :mod:`pytest_toolbench.report.profile`.
"""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

from .profile import CONSTANT_METHOD, AreaFigure, Profile
from ..stats.bootstrap import SIGN_FLIP
from .significance import format_delta_interval, p_text
from .stats import format_delta, format_interval, format_value

NOTE = ("capability profile (suites/profile.yaml): each area is the mean of the named figures of the suites that "
        "ran on their real data (a lower-is-better figure as 1 - value); 95% interval: a cluster bootstrap over the "
        "cases' shared units (queries, conversations), unless an area says otherwise")
CHANGE_NOTE = (f"p: {SIGN_FLIP} test of the area's change over the same cases (units swapped between the runs); "
               "[95% interval of the change]: paired cluster bootstrap")


def samples_text(profile: Profile) -> str:
    """The suites left out of every area for running on their shipped samples ("" when none)."""
    if not profile.sample_suites:
        return ""
    return (f"left out of every area: {', '.join(profile.sample_suites)} (ran on the shipped samples, not the "
            "benchmark's data)")


def _notes(area: AreaFigure) -> str:
    """What a row says beside its figures: incomplete first, then selection, then an interval that is not the
    bootstrap's."""
    notes = area.notes()
    if area.interval_method.startswith("MOVER"):
        notes.append("interval by MOVER, figures taken as independent (not split into cases)")
    elif area.interval_method == CONSTANT_METHOD:
        notes.append("no spread in the cases: interval from the figures' Wilson bounds")
    return "; ".join(notes)


def _change(area: AreaFigure) -> str:
    change = area.change
    if change is None:
        return ""
    if change.test is None or change.p_value is None:
        return "p n/a"
    return f"{p_text(change.p_value)} {format_delta_interval(change.delta_interval95)}".rstrip()


def has_values(profile: Profile | None) -> bool:
    return profile is not None and (any(a.value is not None or a.left_out for a in profile.areas)
                                    or bool(profile.tl_failures) or bool(profile.sample_suites))


def _sources(area: AreaFigure) -> str:
    return ", ".join(f"{c.suite}.{c.metric}" + (" (1 - value)" if c.inverted else "") for c in area.contributing)


def _delta(area: AreaFigure) -> str:
    if area.baseline is None:
        return ""
    return format_delta(area.delta) if area.delta is not None else "-"


def terminal_lines(profile: Profile | None) -> list[str]:
    if not has_values(profile):
        return []
    compared = any(area.baseline is not None for area in profile.areas)
    lines = ["", NOTE] + ([f"  {CHANGE_NOTE}"] if compared else [])
    if samples_text(profile):
        lines.append(f"  {samples_text(profile)}")
    width = max(len(area.title) for area in profile.areas) + 2
    for area in profile.areas:
        interval = format_interval(area.interval95)
        row = f"  {area.title:<{width}}{format_value(area.value):>8}  {('[' + interval + ']') if interval else '':>13}"
        if compared:
            row += f"  {format_value(area.baseline.value) if area.baseline else 'N/A':>8}  {_delta(area):>7}"
            row += f"  {_change(area):<26}" if area.change is not None else ""
        notes = _notes(area)
        row += f"  {notes}" if notes else ""
        sources = _sources(area)
        count = len(area.contributing)
        lines.append(row + (f"  {count} figure{'s' if count > 1 else ''}: {sources}" if sources
                            else "  no contributing suite"))
    if profile.tl_failures:
        total = sum(profile.tl_failures.values())
        tally = ", ".join(f"{category} {count} ({100 * count / total:.1f}%)"
                          for category, count in profile.tl_failures.items())
        lines.append(f"  TL-Training failure categories over {total} labelled failures "
                     f"({', '.join(profile.tl_by_suite)}): {tally}")
    return lines


def markdown_lines(profile: Profile | None, cell) -> list[str]:
    if not has_values(profile):
        return []
    compared = any(area.baseline is not None for area in profile.areas)
    headers = ["Area", "Value", "95% CI"] + (["Baseline", "Δ (points)", "p [95% CI of Δ]"] if compared else []) \
        + ["From"]
    lines = ["### Capability profile", "", f"_{cell(NOTE)}._" + (f" _{cell(CHANGE_NOTE)}._" if compared else ""), ""]
    if samples_text(profile):
        lines += [f"_{cell(samples_text(profile))}._", ""]
    lines += ["| " + " | ".join(headers) + " |",
              "| " + " | ".join("---:" if h in ("Value", "Baseline", "Δ (points)") else "---" for h in headers) + " |"]
    for area in profile.areas:
        title = " — ".join([area.title] + ([_notes(area)] if _notes(area) else []))
        row = [title, format_value(area.value), format_interval(area.interval95) or "-"]
        if compared:
            row += [format_value(area.baseline.value) if area.baseline else "N/A", _delta(area) or "-",
                    _change(area) or "-"]
        row.append(_sources(area) or "no contributing suite")
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    if profile.tl_failures:
        total = sum(profile.tl_failures.values())
        lines += ["", f"TL-Training failure categories ({total} labelled failures in "
                      f"{cell(', '.join(profile.tl_by_suite))}):", "", "| Category | Failures | Share |",
                  "| --- | ---: | ---: |"]
        lines += [f"| {cell(category)} | {count} | {100 * count / total:.1f}% |"
                  for category, count in profile.tl_failures.items()]
    return lines + [""]


# -- radar chart -------------------------------------------------------------------------------------------------
RADAR_SIZE = 360
RADAR_RADIUS = 120


def _point(index: int, count: int, fraction: float) -> tuple[float, float]:
    angle = -math.pi / 2 + 2 * math.pi * index / count
    center = RADAR_SIZE / 2
    return center + RADAR_RADIUS * fraction * math.cos(angle), center + RADAR_RADIUS * fraction * math.sin(angle)


def _polygon(values: Sequence[float | None], css: str, label: str) -> str:
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in
                      (_point(i, len(values), v or 0.0) for i, v in enumerate(values)))
    return f'<polygon class="{css}" points="{points}"><title>{escape(label)}</title></polygon>'


def radar_svg(profile: Profile) -> str:
    """One axis per area (0 at the centre, 100% at the rim); the run filled, the baseline dashed; an N/A area sits at
    the centre and its label says N/A."""
    areas = profile.areas
    count = len(areas)
    if count < 3:
        return ""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="tb-radar" role="img" width="{RADAR_SIZE + 380}" height="{RADAR_SIZE}" '
             f'viewBox="-190 0 {RADAR_SIZE + 380} {RADAR_SIZE}"><title>Capability profile</title>',
             "<style>.tb-radar .g{fill:none;stroke:#ddd}.tb-radar .run{fill:rgba(33,99,196,.25);stroke:#2163c4;"
             "stroke-width:2}.tb-radar .base{fill:none;stroke:#888;stroke-width:1.5;stroke-dasharray:4 3}"
             ".tb-radar text{font-size:11px;fill:#222}</style>"]
    for ring in (0.25, 0.5, 0.75, 1.0):
        ring_points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (_point(i, count, ring) for i in range(count)))
        parts.append(f'<polygon class="g" points="{ring_points}"/>')
    for index, area in enumerate(areas):
        x, y = _point(index, count, 1.0)
        parts.append(f'<line class="g" x1="{RADAR_SIZE / 2}" y1="{RADAR_SIZE / 2}" x2="{x:.1f}" y2="{y:.1f}"/>')
        lx, ly = _point(index, count, 1.18)
        anchor = "middle" if abs(lx - RADAR_SIZE / 2) < 10 else ("start" if lx > RADAR_SIZE / 2 else "end")
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}">{escape(area.title)}: '
                     f"{format_value(area.value)}</text>")
    if any(area.baseline is not None for area in areas):
        parts.append(_polygon([a.baseline.value if a.baseline else None for a in areas], "base", "baseline"))
    parts.append(_polygon([a.value for a in areas], "run", "this run"))
    parts.append("</svg>")
    return "".join(parts)


def html_section(profile: Profile | None) -> str:
    if not has_values(profile):
        return ""
    compared = any(area.baseline is not None for area in profile.areas)
    head = "<tr><th>Area</th><th>Value</th><th>95% CI</th>" + \
        ("<th>Baseline</th><th>Δ points</th><th>p [95% CI of Δ]</th>" if compared else "") + "<th>From</th></tr>"
    rows = [head]
    for area in profile.areas:
        notes = _notes(area)
        cells = [f"<td>{escape(area.title)}" + (f"<br><small>{escape(notes)}</small>" if notes else "") + "</td>",
                 f'<td class="tb-n">{format_value(area.value)}</td>',
                 f'<td class="tb-n">{format_interval(area.interval95)}</td>']
        if compared:
            cells += [f'<td class="tb-n">{format_value(area.baseline.value) if area.baseline else "N/A"}</td>',
                      f'<td class="tb-n">{escape(_delta(area))}</td>', f'<td class="tb-n">{escape(_change(area))}</td>']
        cells.append(f"<td><small>{escape(_sources(area) or 'no contributing suite')}</small></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    tl = ""
    if profile.tl_failures:
        total = sum(profile.tl_failures.values())
        tl = ("<p>TL-Training failure categories (" + escape(", ".join(profile.tl_by_suite)) + "): "
              + escape(", ".join(f"{c} {n} ({100 * n / total:.1f}%)" for c, n in profile.tl_failures.items()))
              + "</p>")
    legend = (" The dashed outline is the baseline. " + CHANGE_NOTE + ".") if compared else ""
    if samples_text(profile):
        legend += " " + samples_text(profile) + "."
    return (f'<div class="tb-profile"><h3>Capability profile</h3><p>{escape(NOTE)}.{legend}</p>'
            f'<div class="tb-flex"><div><table class="tb-table">{"".join(rows)}</table>{tl}</div>'
            f"<div>{radar_svg(profile)}</div></div></div>")
