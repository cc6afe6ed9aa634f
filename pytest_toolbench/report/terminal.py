"""The end-of-run terminal table: one per suite, per-category and official aggregate figures."""

from __future__ import annotations

from ..summary import RunSummary


def _format_value(value: float | None, unit: str = "%") -> str:
    if value is None:
        return "N/A"
    return f"{100 * value:6.2f}%" if unit == "%" else f"{value:7.3f}"


def _format_count(number: float | None) -> str:
    if number is None:
        return ""
    return str(int(number)) if float(number).is_integer() else f"{number:.2f}"


def render(summary: RunSummary) -> list[str]:
    lines: list[str] = []
    header = summary.header
    lines.append(f"backend: {header.get('backend')}" + (f"  model: {header['model']}" if header.get("model") else ""))
    for suite in summary.suites:
        lines.append("")
        lines.append(f"{suite.name}: {suite.title}  ({suite.passed}/{suite.total} cases passed)")
        lines.append(f"  data: {suite.data_source.get('description', '?')}")
        if suite.is_sample:
            lines.append("  !!! SAMPLE DATA ONLY: these figures are not the benchmark's published numbers !!!")
        width = max([len(m.name) for m in suite.metrics] + [6]) + 2
        group = None
        for metric in suite.metrics:
            if metric.group != group:
                group = metric.group
                lines.append(f"  [{group or 'metrics'}]")
            counts = ""
            if metric.total is not None:
                counts = f"{_format_count(metric.correct)}/{_format_count(metric.total)}"
            formula = f"  {metric.formula}" if metric.formula else ""
            lines.append(f"    {metric.name:<{width}}{_format_value(metric.value, metric.unit):>8}  {counts:>11}{formula}")
        if suite.error_types:
            lines.append("  [failures by error type]")
            for error_type, count in suite.error_types.items():
                lines.append(f"    {error_type:<{width}}{count:>8}")
        for label, tally in suite.labels.items():
            lines.append(f"  [{label}]")
            for value, count in tally.items():
                lines.append(f"    {value:<{width}}{count:>8}")
    return lines
