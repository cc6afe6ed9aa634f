"""Figures as reports show them: percentages, counts, and Wilson score intervals for count-backed rates."""

from __future__ import annotations

import math
from typing import Any, Mapping

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def wilson_interval(correct: float, total: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for a binomial proportion (stays inside [0, 1], sensible at 0/n and n/n)."""
    if not total or total <= 0:
        return None
    p = correct / total
    z2 = z * z
    denominator = 1 + z2 / total
    center = (p + z2 / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denominator
    # At 0/n and n/n the bound is exactly 0 or 1; rounding would otherwise leave 0.9999999999999999.
    low = 0.0 if correct <= 0 else max(0.0, center - half)
    high = 1.0 if correct >= total else min(1.0, center + half)
    return low, high


def metric_field(metric: Any, name: str, default: Any = None) -> Any:
    """Metrics arrive as ``Metric`` objects (this run) or dicts (a baseline file)."""
    if isinstance(metric, Mapping):
        return metric.get(name, default)
    return getattr(metric, name, default)


def is_percentage(metric: Any) -> bool:
    return (metric_field(metric, "unit", "%") or "") == "%"


def lower_is_better(metric: Any) -> bool:
    """``Metric.better == "lower"`` (an attack success rate, say); a baseline file without the field reads as higher."""
    return metric_field(metric, "better", "higher") == "lower"


def direction_note(metric: Any) -> str:
    """What reports add beside a lower-is-better figure (nothing for the usual higher-is-better one)."""
    return "lower is better" if lower_is_better(metric) else ""


def worsening(delta: float, metric: Any) -> float:
    """A change turned so that positive means worse: a fall for higher-is-better, a rise for lower-is-better."""
    return delta if lower_is_better(metric) else -delta


def change_css(delta: float | None, metric: Any) -> str:
    """``tb-up`` (an improvement, green) or ``tb-down`` (worse, red) for a delta, honouring the direction."""
    if delta is None or abs(delta) <= 1e-12:
        return ""
    return "tb-down" if worsening(delta, metric) > 0 else "tb-up"


def format_change(delta: float | None, metric: Any, unit: str = "%") -> str:
    """The signed delta; for a lower-is-better figure the sign alone would mislead, so it says better or worse."""
    text = format_delta(delta, unit)
    if text and lower_is_better(metric) and abs(delta) > 1e-12:
        text += " (worse)" if delta > 0 else " (better)"
    return text


def is_whole(number: Any) -> bool:
    return isinstance(number, (int, float)) and not isinstance(number, bool) and float(number).is_integer()


def count_interval(metric: Any) -> tuple[float, float] | None:
    """A 95% Wilson interval when the figure is exactly correct/total of whole-number counts, else None
    (F1 scores, means over categories and plain numbers have no binomial interval). A figure estimated from
    ``--toolbench-sample`` gives its estimate's interval (of the full benchmark's figure) instead."""
    estimate = metric_field(metric, "estimate")
    if estimate:  # --toolbench-sample: the design-based interval of the estimate (run.estimation)
        interval = estimate.get("interval95")
        return (float(interval[0]), float(interval[1])) if interval else None
    value, correct, total = (metric_field(metric, k) for k in ("value", "correct", "total"))
    if value is None or not is_percentage(metric) or not (is_whole(correct) and is_whole(total)):
        return None
    if total <= 0 or not 0 <= correct <= total or abs(value - correct / total) > 1e-9:
        return None
    return wilson_interval(float(correct), float(total))


def format_value(value: float | None, unit: str = "%") -> str:
    if value is None:
        return "N/A"
    if unit == "%":
        return f"{100 * value:.2f}%"
    return format_count(value) if is_whole(value) else f"{value:.3f}"  # a count reads as one: 1054, not 1054.000


def format_count(number: float | None) -> str:
    if number is None:
        return ""
    return str(int(number)) if is_whole(number) else f"{number:.2f}"


def format_counts(metric: Any) -> str:
    total = metric_field(metric, "total")
    if total is None:
        return ""
    if (metric_field(metric, "unit") or "%") != "%" or metric_field(metric, "correct") is None:
        # a mean (e.g. TL-Training's reward) has a sample size, not correct/total counts
        return f"n={format_count(total)}"
    return f"{format_count(metric_field(metric, 'correct'))}/{format_count(total)}"


def format_interval(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return ""
    return f"{100 * interval[0]:.1f}–{100 * interval[1]:.1f}"


def format_delta(delta: float | None, unit: str = "%") -> str:
    """A difference in percentage points (or plain units), always signed."""
    if delta is None:
        return ""
    if unit == "%":
        return f"{100 * delta:+.2f}"
    return f"{delta:+.3f}"


def figure_notes(metric: Any) -> list[str]:
    """What reports print beside a figure, most urgent first: why it is incomplete, the part of the suite the
    selection left it over, which way is better, and its formula."""
    notes = [metric_field(metric, "incomplete", "") or "", metric_field(metric, "scope", "") or "",
             direction_note(metric), metric_field(metric, "formula", "") or ""]
    first = notes[0]
    if first and first in notes[3]:  # the formula already says it (BFCL's Overall names the missing categories)
        notes[0] = ""
    return [note for note in notes if note]


def warning_notes(metric: Any) -> list[str]:
    """The notes a table shows beside a figure's name: incomplete, and over part of the suite only."""
    return [note for note in (metric_field(metric, "incomplete", ""), metric_field(metric, "scope", "")) if note]


#: What the 95% column means for a --toolbench-sample suite (every writer's interval note).
ESTIMATE_INTERVALS_NOTE = ("A sampled suite's 95% interval is the design-based interval of the full benchmark's "
                           "figure (README: Smoke tier).")


def sample_line(design: Any) -> str:
    """The line every writer gives a ``--toolbench-sample`` suite: what the figures estimate, from how much."""
    return (f"SAMPLED RUN: {design.note()}: every figure estimates the full benchmark's, with a 95% design-based "
            f"interval (stratified by category, --toolbench-sample={design.spec.text})")


def samples_note() -> str:
    """The one warning every report gives a suite that ran on its shipped samples."""
    return ("SAMPLE DATA ONLY: the real data could not be had, so these figures are over the shipped samples, "
            "not the benchmark's; a gate on them is missed")


def repeat_text(repeat: Any, listed: int = 10) -> str:
    """One line of a suite's ``--toolbench-repeat`` figures (``SuiteSummary.repeat``): pass@1, pass^k and the flaky
    cases, the first ``listed`` of them named."""
    samples, cases, flaky = repeat["samples"], repeat["cases"], repeat["flaky_cases"]
    named = ", ".join(flaky[:listed]) + (f", ... and {len(flaky) - listed} more" if len(flaky) > listed else "")
    return (f"{samples} samples per case: pass@1 {format_value(repeat['pass_at_1'])} (the figures are means over the "
            f"samples), pass^{samples} {format_value(repeat['pass_hat_k'])} (all {samples} pass), flaky "
            f"{format_value(repeat['flaky'])} ({len(flaky)} of {cases} cases" + (f": {named})" if flaky else ")"))
