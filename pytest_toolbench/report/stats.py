"""Figures as reports show them: percentages, counts, and which interval each kind of figure gets (the intervals
themselves are :mod:`pytest_toolbench.stats.intervals`)."""

from __future__ import annotations

from typing import Any

from ..stats.intervals import t_interval, wilson_interval

#: What every report says of its intervals.
INTERVALS_NOTE = ("95% intervals by kind: Wilson score for a proportion (correct/total of whole counts of cases or "
                  "items); t (mean ± t·sd/√n) for a mean over cases; none for a formula over pooled counts or "
                  "categories")


def is_percentage(metric: Any) -> bool:
    return (getattr(metric, "unit", "%") or "") == "%"


def lower_is_better(metric: Any) -> bool:
    """``Metric.better == "lower"`` (an attack success rate, say); a baseline file without the field reads as higher."""
    return getattr(metric, "better", "higher") == "lower"


def no_direction(metric: Any) -> bool:
    """``Metric.better == "none"``: neither way is an improvement (a share of the failures)."""
    return getattr(metric, "better", "higher") == "none"


def direction_note(metric: Any) -> str:
    """What reports add beside a lower-is-better or directionless figure (nothing for the usual higher-is-better
    one)."""
    if no_direction(metric):
        return "neither direction is better"
    return "lower is better" if lower_is_better(metric) else ""


def worsening(delta: float, metric: Any) -> float:
    """A change turned so that positive means worse: a fall for higher-is-better, a rise for lower-is-better, and
    never for a figure without a direction."""
    if no_direction(metric):
        return 0.0
    return delta if lower_is_better(metric) else -delta


def change_css(delta: float | None, metric: Any) -> str:
    """``tb-up`` (an improvement, green) or ``tb-down`` (worse, red) for a delta, honouring the direction."""
    if delta is None or abs(delta) <= 1e-12 or no_direction(metric):
        return ""
    return "tb-down" if worsening(delta, metric) > 0 else "tb-up"


def format_change(delta: float | None, metric: Any, unit: str = "%") -> str:
    """The signed delta; for a lower-is-better figure the sign alone would mislead, so it says better or worse."""
    text = format_delta(delta, unit)
    if text and lower_is_better(metric) and abs(delta) > 1e-12:
        text += " (worse)" if delta > 0 else " (better)"
    return text


def no_delta_text(found: Any) -> str:
    """What a Δ cell says when a figure has no delta (``found``: its ``MetricDelta``, None when the baseline lacks
    the figure): "new" only for a figure the baseline does not have; "not run" for one this run did not compute in
    full (it is not compared); "N/A" when it is N/A in both runs, "was N/A" or "now N/A" when in one."""
    if found is None:
        return "new"
    why = getattr(found, "not_compared", "")
    if why:
        return "not run" if why.startswith("not run") else "not compared"
    current, baseline = found.current, found.baseline
    if current is None and baseline is None:
        return "N/A"
    return "was N/A" if baseline is None else "now N/A"


def is_whole(number: Any) -> bool:
    return isinstance(number, (int, float)) and not isinstance(number, bool) and float(number).is_integer()


def count_interval(metric: Any) -> tuple[float, float] | None:
    """The figure's 95% interval by its kind: for a figure estimated from ``--toolbench-sample``, its estimate's
    design-based interval (of the full benchmark's figure); for a mean over cases that states its per-case standard
    deviation (``Metric.sd``), the t interval ``mean ± t(n-1) sd / sqrt(n)``; for a proportion (exactly
    correct/total of whole-number counts, and no ``sd``) the Wilson score interval; else None (F1 over pooled
    counts, means over categories)."""
    estimate = metric.estimate
    if estimate:  # --toolbench-sample: the design-based interval of the estimate (stats.estimation)
        interval = estimate.get("interval95")
        return (float(interval[0]), float(interval[1])) if interval else None
    value, correct, total, sd = (metric.value, metric.correct, metric.total, metric.sd)
    if value is None:
        return None
    if sd is not None:
        if not isinstance(total, (int, float)) or total < 2:
            return None
        return t_interval(value, sd, total)
    if not is_percentage(metric) or not (is_whole(correct) and is_whole(total)):
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
    total = metric.total
    if total is None:
        return ""
    if (metric.unit or "%") != "%" or metric.correct is None:
        # a mean (e.g. TL-Training's reward) has a sample size, not correct/total counts
        return f"n={format_count(total)}"
    return f"{format_count(metric.correct)}/{format_count(total)}"


def format_interval(interval: tuple[float, float] | None, unit: str = "%") -> str:
    if interval is None:
        return ""
    if unit != "%":
        return f"{interval[0]:.3f}–{interval[1]:.3f}"
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
    notes = [getattr(metric, "incomplete", "") or "", getattr(metric, "scope", "") or "",
             direction_note(metric), getattr(metric, "formula", "") or ""]
    first = notes[0]
    if first and first in notes[3]:  # the formula already says it (BFCL's Overall names the missing categories)
        notes[0] = ""
    return [note for note in notes if note]


def warning_notes(metric: Any) -> list[str]:
    """The notes a table shows beside a figure's name: incomplete, and over part of the suite only."""
    return [note for note in (getattr(metric, "incomplete", ""), getattr(metric, "scope", "")) if note]


#: What the 95% column means for a --toolbench-sample suite (every writer's interval note).
ESTIMATE_INTERVALS_NOTE = ("A sampled suite's 95% interval is the design-based interval of the full benchmark's "
                           "figure (docs/statistics.md: Smoke tier).")


def sample_line(design: Any) -> str:
    """The line every writer gives a ``--toolbench-sample`` suite: what the figures estimate, from how much."""
    return (f"SAMPLED RUN: {design.note()}: every figure estimates the full benchmark's, with a 95% design-based "
            f"interval (stratified by category, --toolbench-sample={design.spec.text})")


def samples_note() -> str:
    """The one warning every report gives a suite that ran on its shipped samples."""
    return ("SAMPLE DATA ONLY: the real data could not be had, so these figures are over the shipped samples, "
            "not the benchmark's; a gate on them is missed")


def repeat_text(repeat: Any, listed: int = 10) -> str:
    """One line of a suite's ``--toolbench-repeat`` figures (``SuiteSummary.repeat``): pass@1, the pass^k curve for
    k = 1..K (and the cases a point leaves out for having fewer than k samples) and the flaky cases, the first
    ``listed`` of them named."""
    samples, cases, flaky = repeat["samples"], repeat["cases"], repeat["flaky_cases"]
    named = ", ".join(flaky[:listed]) + (f", ... and {len(flaky) - listed} more" if len(flaky) > listed else "")
    curve = repeat.get("pass_hat") or [{"k": samples, "value": repeat["pass_hat_k"], "excluded": 0}]
    points = ", ".join(format_value(point["value"]) for point in curve)
    short = [f"k={point['k']}: {point['excluded']}" for point in curve if point.get("excluded")]
    left_out = (f"; left out of pass^k for having fewer than k samples: {', '.join(short)} cases" if short else "")
    return (f"{samples} samples per case: pass@1 {format_value(repeat['pass_at_1'])} (the mean of each case's pass "
            f"rate; the figures are means over the samples), pass^k for k=1..{samples} {points} (tau-bench's "
            f"C(c,k)/C(n,k)), pass^{samples} {format_value(repeat['pass_hat_k'])}{left_out}, flaky "
            f"{format_value(repeat['flaky'])} ({len(flaky)} of {cases} cases" + (f": {named})" if flaky else ")"))
