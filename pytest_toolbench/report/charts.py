"""Inline SVG bar charts (no JavaScript): one horizontal bar per metric, baseline bars beside the current ones."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

WIDTH = 640
PLOT = 300  # pixels for 0..100%
CHAR = 7.2  # width of one 12px sans-serif character, taken generously (digits and capitals run about 6.7)
LABEL_MAX = 64  # characters; a longer label is cut with "…" (its tooltip has it whole)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None  # a fraction in [0, 1]
    baseline: float | None = None
    low: float | None = None  # 95% interval of the current value
    high: float | None = None
    counts: str = ""


def _short(label: str, limit: int = LABEL_MAX) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


def _fmt(value: float | None) -> str:
    return "N/A" if value is None else f"{100 * value:.1f}%"


def _value_text(bar: Bar, with_baseline: bool) -> str:
    """What stands right of a bar: the value, and its change from the baseline in points."""
    text = _fmt(bar.value)
    if with_baseline and bar.value is not None and bar.baseline is not None:
        text += f" ({100 * (bar.value - bar.baseline):+.1f})"
    return text


def bar_chart(bars: list[Bar], title: str, with_baseline: bool, baseline_name: str = "") -> str:
    """A self-contained ``<svg>`` element; every bar carries a ``<title>`` tooltip with the exact figures."""
    label_width = int(min(LABEL_MAX, max([len(b.label) for b in bars] + [4])) * CHAR) + 12
    row = 28 if with_baseline else 18
    top, bottom = 22, 22
    height = top + row * len(bars) + bottom
    x0 = label_width
    # Room for the longest value text ("36.0% (-64.0)"), so that no figure is ever cut at the right edge.
    value_width = int(max(len(_value_text(bar, with_baseline)) for bar in bars) * CHAR) + 12 if bars else 70
    width = old_width = max(WIDTH, x0 + PLOT + 6 + value_width)
    parts = [f'<svg class="tb-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
             f'<text x="0" y="14" class="tb-ct">{escape(title)}</text>']
    for tick in (0, 25, 50, 75, 100):
        x = x0 + PLOT * tick / 100
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - bottom + 4}" class="tb-grid"/>'
                     f'<text x="{x:.1f}" y="{height - 6}" class="tb-tick">{tick}%</text>')
    for index, bar in enumerate(bars):
        y = top + index * row
        tip = f"{bar.label}: {_fmt(bar.value)}" + (f" ({bar.counts})" if bar.counts else "")
        if bar.low is not None and bar.high is not None:
            tip += f", 95% CI {_fmt(bar.low)}–{_fmt(bar.high)}"
        if with_baseline:
            tip += f"; baseline {_fmt(bar.baseline)}"
        parts.append(f'<g class="tb-row"><title>{escape(tip)}</title>'
                     f'<text x="{x0 - 6}" y="{y + row / 2 + 4:.1f}" class="tb-label">{escape(_short(bar.label))}</text>')
        thickness = 10 if with_baseline else 12
        current_y = y + (row - (2 * thickness + 2 if with_baseline else thickness)) / 2
        value = bar.value or 0.0
        parts.append(f'<rect class="tb-bar tb-now" x="{x0}" y="{current_y:.1f}" width="{PLOT * value:.1f}" '
                     f'height="{thickness}"/>')
        if bar.low is not None and bar.high is not None:
            mid = current_y + thickness / 2
            parts.append(f'<line class="tb-ci" x1="{x0 + PLOT * bar.low:.1f}" y1="{mid:.1f}" '
                         f'x2="{x0 + PLOT * bar.high:.1f}" y2="{mid:.1f}"/>')
        text = _value_text(bar, with_baseline)
        if with_baseline:
            base_y = current_y + thickness + 2
            parts.append(f'<rect class="tb-bar tb-base" x="{x0}" y="{base_y:.1f}" '
                         f'width="{PLOT * (bar.baseline or 0.0):.1f}" height="{thickness}"/>')
        parts.append(f'<text x="{x0 + PLOT + 6}" y="{y + row / 2 + 4:.1f}" class="tb-val">{escape(text)}</text></g>')
    if with_baseline:
        legend = _short(f"baseline: {baseline_name}" if baseline_name else "baseline", 48)
        # right-aligned with the chart's edge, after the title (11px legend characters: about 6.6 px each)
        lx = max(len(title) * CHAR + 12, width - 89 - len(legend) * 6.6 - 6)
        if lx + 89 + len(legend) * 6.6 > width:  # a long title: the chart widens so that the legend still fits
            width = int(lx + 89 + len(legend) * 6.6 + 6)
            parts[0] = parts[0].replace(f'width="{old_width}"', f'width="{width}"').replace(
                f'viewBox="0 0 {old_width} ', f'viewBox="0 0 {width} ')
        parts.append(f'<rect class="tb-now" x="{lx:.1f}" y="5" width="10" height="10"/>'
                     f'<text x="{lx + 14:.1f}" y="14" class="tb-leg">this run</text>'
                     f'<rect class="tb-base" x="{lx + 75:.1f}" y="5" width="10" height="10"/>'
                     f'<text x="{lx + 89:.1f}" y="14" class="tb-leg">{escape(legend)}</text>')
    parts.append("</svg>")
    return "".join(parts)


CHART_CSS = """
.tb-chart{font-family:sans-serif;font-size:12px;background:#fff;max-width:100%;height:auto}
/* max-width: a chart wider than its box scales down (viewBox) instead of making the page scroll sideways */
.tb-chart .tb-ct{font-weight:bold}
.tb-chart .tb-grid{stroke:#ddd;stroke-width:1}
.tb-chart .tb-tick{fill:#666;font-size:10px;text-anchor:middle}
.tb-chart .tb-label{text-anchor:end;fill:#222}
.tb-chart .tb-val{fill:#222}
.tb-chart .tb-leg{fill:#444;font-size:11px}
.tb-chart .tb-now{fill:#3b73b9}
.tb-chart .tb-base{fill:#b8b8b8}
.tb-chart .tb-ci{stroke:#0d2a4d;stroke-width:1.5}
.tb-chart .tb-row:hover .tb-label{font-weight:bold}
"""
