"""History: each headline figure across several ``--toolbench-baseline`` files (oldest first) and this run.

With two or more baselines (the last few checkpoints' ``--toolbench-json`` files, say), the reports show where each
headline figure went: the HTML as one small line chart per figure with its 95% intervals, the Markdown as a compact
table, the JSON as its ``history`` section. The comparison and the gates still use one baseline: the last given.
Headline figures are each suite's ``aggregate`` rows, in this run's order; a figure a baseline lacks is a gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, Sequence

from ..run.summary import RunSummary
from .compare import baseline_label
from .results_file import ResultsFile
from .stats import count_interval, format_value

HEADLINE_GROUP = "aggregate"
THIS_RUN = "this run"


@dataclass(frozen=True)
class Run:
    """One column of the history: a baseline file, or this run (``path`` empty)."""

    label: str
    path: str = ""
    what: str = ""  # the baseline's model and backend (``compare.baseline_label``)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "path": self.path or None, "what": self.what or None}


@dataclass(frozen=True)
class Point:
    value: float | None
    interval: tuple[float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "interval95": list(self.interval) if self.interval else None}


@dataclass(frozen=True)
class Trend:
    suite: str
    group: str
    name: str
    unit: str
    better: str
    points: tuple[Point, ...]  # one per run, oldest first, this run last

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "group": self.group, "name": self.name, "unit": self.unit,
                "better": self.better, "points": [point.to_json() for point in self.points]}


@dataclass(frozen=True)
class History:
    runs: tuple[Run, ...]  # the baselines as given, oldest first, then this run
    trends: tuple[Trend, ...]

    @property
    def compared_with(self) -> Run:
        """The baseline the comparison and the gates use: the last one given."""
        return self.runs[-2]

    def suites(self) -> list[str]:
        return list(dict.fromkeys(trend.suite for trend in self.trends))

    def to_json(self) -> dict[str, Any]:
        return {"runs": [run.to_json() for run in self.runs], "compared_with": self.compared_with.path,
                "figures": [trend.to_json() for trend in self.trends]}


def labels(paths: Sequence[Path]) -> list[str]:
    """Short, distinct column names: the file names, with as many parent folders as it takes to tell them apart."""
    for depth in range(1, 8):
        names = ["/".join(Path(path).parts[-depth:]) for path in paths]
        if len(set(names)) == len(names):
            return names
    return [str(path) for path in paths]


def _point(metric: Any) -> Point:
    if metric is None:
        return Point(None)
    interval = count_interval(metric)
    return Point(metric.value, interval)


def build(summary: RunSummary, baselines: Sequence[tuple[Path, ResultsFile]]) -> History | None:
    """The history of ``summary``'s headline figures across ``baselines`` (path, results file), oldest first; None
    with fewer than two baselines (one baseline is the comparison itself)."""
    if len(baselines) < 2:
        return None
    names = labels([path for path, _ in baselines])
    runs = [Run(name, str(path), baseline_label(document.header))
            for name, (path, document) in zip(names, baselines)]
    runs.append(Run(THIS_RUN))
    trends = []
    for suite in summary.suites:
        olds = []
        for _, document in baselines:
            old = document.suites.get(suite.name)
            olds.append({(m.group, m.name): m for m in (old.metrics if old is not None else ())})
        for metric in suite.metrics:
            if metric.group != HEADLINE_GROUP:
                continue
            key = (metric.group, metric.name)
            points = [_point(old.get(key)) for old in olds] + [_point(metric)]
            trends.append(Trend(suite.name, metric.group, metric.name, getattr(metric, "unit", "%"),
                                getattr(metric, "better", "higher"), tuple(points)))
    return History(tuple(runs), tuple(trends))


def row(trend: Trend) -> list[str]:
    """A trend's values as the tables print them (N/A where a run lacks the figure)."""
    return [format_value(point.value, trend.unit) for point in trend.points]


# -- the HTML line chart -------------------------------------------------------------------------------------
CHART_WIDTH, CHART_HEIGHT = 300, 150
LEFT, RIGHT, TOP, BOTTOM = 44, 14, 22, 28


def _y_range(trend: Trend) -> tuple[float, float]:
    values = [v for p in trend.points for v in ([p.value] + list(p.interval or ())) if v is not None]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max((high - low) * 0.15, 0.02 if trend.unit == "%" else abs(high) * 0.05 or 0.05)
    low, high = low - pad, high + pad
    if trend.unit == "%":
        low, high = max(0.0, low), min(1.0, high)
    return low, high


def _tick(value: float, unit: str) -> str:
    return f"{100 * value:.0f}%" if unit == "%" else f"{value:.3g}"


def line_chart(trend: Trend, runs: Sequence[Run]) -> str:
    """One figure's trend as a self-contained ``<svg>``: a line through the runs' values, each with its 95%
    interval as a vertical bar; every point carries a ``<title>`` tooltip with the run and the exact figures."""
    low, high = _y_range(trend)
    plot_w, plot_h = CHART_WIDTH - LEFT - RIGHT, CHART_HEIGHT - TOP - BOTTOM
    step = plot_w / max(1, len(runs) - 1)

    def x(index: int) -> float:
        return LEFT + index * step if len(runs) > 1 else LEFT + plot_w / 2

    def y(value: float) -> float:
        return TOP + plot_h * (1 - (value - low) / ((high - low) or 1))

    title = f"{trend.suite}: {trend.name}"
    parts = [f'<svg class="tb-chart tb-trend" xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" '
             f'height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" '
             f'aria-label="{escape(title)}">',
             f'<text x="0" y="14" class="tb-ct">{escape(title if len(title) <= 44 else title[:43] + "…")}</text>']
    for fraction in (0.0, 0.5, 1.0):
        value = low + (high - low) * fraction
        parts.append(f'<line x1="{LEFT}" y1="{y(value):.1f}" x2="{CHART_WIDTH - RIGHT}" y2="{y(value):.1f}" '
                     f'class="tb-grid"/><text x="{LEFT - 4}" y="{y(value) + 3:.1f}" class="tb-tick" '
                     f'text-anchor="end" style="text-anchor:end">{_tick(value, trend.unit)}</text>')
    line = [f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(trend.points) if p.value is not None]
    if len(line) > 1:
        parts.append(f'<polyline class="tb-line" points="{" ".join(line)}"/>')
    for index, (point, run) in enumerate(zip(trend.points, runs)):
        label = f"B{index + 1}" if run.label != THIS_RUN else "now"
        parts.append(f'<text x="{x(index):.1f}" y="{CHART_HEIGHT - 8}" class="tb-tick">{label}</text>')
        if point.value is None:
            continue
        tip = f"{run.label}: {format_value(point.value, trend.unit)}"
        if point.interval:
            tip += f", 95% CI {format_value(point.interval[0])}–{format_value(point.interval[1])}"
            parts.append(f'<line class="tb-ci" x1="{x(index):.1f}" y1="{y(point.interval[0]):.1f}" '
                         f'x2="{x(index):.1f}" y2="{y(point.interval[1]):.1f}"/>')
        css = "tb-dot tb-dot-now" if run.label == THIS_RUN else "tb-dot"
        parts.append(f'<circle class="{css}" cx="{x(index):.1f}" cy="{y(point.value):.1f}" r="3.5">'
                     f"<title>{escape(tip)}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


TREND_CSS = """
.tb-chart .tb-line{fill:none;stroke:#3b73b9;stroke-width:1.5}
.tb-chart .tb-dot{fill:#b8b8b8;stroke:#555}
.tb-chart .tb-dot-now{fill:#3b73b9;stroke:#0d2a4d}
.tb-trends{display:flex;flex-wrap:wrap;gap:12px}
"""
#: charts per suite in the HTML (every figure is in the Markdown table and the JSON)
CHARTS_PER_SUITE = 12


def html_section(history: History) -> str:
    """The HTML history: the runs' legend, then per suite one line chart per headline figure."""
    legend = "".join(f"<li><b>{'B' + str(i + 1) if run.label != THIS_RUN else 'now'}</b>: "
                     f"{escape(run.label)}{' (' + escape(run.what) + ')' if run.what else ''}"
                     f"{' — compared with and gated on' if run is history.compared_with else ''}</li>"
                     for i, run in enumerate(history.runs))
    parts = [f"<style>{TREND_CSS}</style>", '<div class="tb-history"><h3>History</h3>',
             f"<p>Headline figures across {len(history.runs) - 1} baselines (oldest first) and this run; bars are "
             f"95% Wilson intervals. Deltas and gates use the last baseline given.</p><ul>{legend}</ul>"]
    for suite in history.suites():
        trends = [trend for trend in history.trends if trend.suite == suite]
        more = (f" (first {CHARTS_PER_SUITE} of {len(trends)}; all in the Markdown and the JSON)"
                if len(trends) > CHARTS_PER_SUITE else "")
        parts.append(f"<h4>{escape(suite)}{more}</h4><div class=\"tb-trends\">"
                     + "".join(line_chart(trend, history.runs) for trend in trends[:CHARTS_PER_SUITE]) + "</div>")
    parts.append("</div>")
    return "".join(parts)
