"""The CI gates: ``--toolbench-fail-under`` (a figure against a bound, or a sampled run's interval) and
``--toolbench-max-drop`` (a drop of a gated figure, judged by its paired test adjusted over the family)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..run.summary import RunSummary, SuiteSummary
from ..stats.multiplicity import DEFAULT_MULTIPLE
from .comparison import Comparison, MetricDelta, gated
from .family import worse_p
from .estimates import drop_on_estimate, limit_refusal, threshold_on_estimate
from .settings import ReportSettings, Threshold
from .significance import p_text
from .stats import format_counts, format_value, lower_is_better, worsening


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "passed": self.passed, "message": self.message}


def find_metric(suite: SuiteSummary, name: str) -> Any:
    """Exact name; when several groups share it, the "aggregate" row wins, else the first."""
    matches = [m for m in suite.metrics if m.name == name]
    if not matches:
        return None
    return next((m for m in matches if m.group == "aggregate"), matches[0])


def _threshold_gate(summary: RunSummary, threshold: Threshold) -> GateResult:
    gate = f"--toolbench-fail-under {threshold.given}"
    suite = next((s for s in summary.suites if s.name == threshold.suite), None)
    if suite is None:
        ran = ", ".join(s.name for s in summary.suites) or "none"
        return GateResult(gate, False, f"{threshold.label}: suite {threshold.suite!r} did not run (ran: {ran})")
    metric = find_metric(suite, threshold.metric)
    if metric is None:
        names = ", ".join(dict.fromkeys(m.name for m in suite.metrics if m.group == "aggregate")) or \
            ", ".join(dict.fromkeys(m.name for m in suite.metrics[:8]))
        return GateResult(gate, False, f"{threshold.label}: no such metric in {suite.name} (e.g. {names})")
    unit = getattr(metric, "unit", "%")
    # A plain-number metric (a mean reward, say) is compared with the number as written, never as a percentage.
    limit = threshold.value if unit == "%" else threshold.raw
    shown = f"{format_value(metric.value, unit)}" + (f" ({format_counts(metric)})" if metric.total is not None
                                                   else "")
    if metric.value is None:
        return GateResult(gate, False, f"{threshold.label}: no value (nothing ran, or the figure is incomplete)")
    # A figure that looks more complete than it is never passes a gate: samples, or categories that did not run.
    reasons = []
    if getattr(metric, "incomplete", ""):
        reasons.append(f"is incomplete ({metric.incomplete})")
    if suite.is_sample:
        reasons.append(f"is over the shipped samples, not the benchmark's data "
                       f"({suite.data_source.get('description', '?')})")
    if reasons:
        return GateResult(gate, False, f"{threshold.label} = {shown} {' and '.join(reasons)}: no gate passes on it")
    estimated = threshold_on_estimate(metric, threshold.label, limit, unit)  # --toolbench-sample: its interval
    if estimated is not None:
        return GateResult(gate, *estimated)
    if lower_is_better(metric):  # an attack success rate, say: the bound is a maximum
        if metric.value - 1e-12 > limit:
            return GateResult(gate, False, f"{threshold.label} = {shown}, above the allowed maximum "
                                           f"{format_value(limit, unit)} (lower is better)")
        return GateResult(gate, True, f"{threshold.label} = {shown}, at most {format_value(limit, unit)} "
                                      "(lower is better)")
    if metric.value + 1e-12 < limit:
        return GateResult(gate, False, f"{threshold.label} = {shown}, below the required {format_value(limit, unit)}")
    return GateResult(gate, True, f"{threshold.label} = {shown}, at least {format_value(limit, unit)}")


@dataclass(frozen=True)
class DropDecision:
    """What the drop gate decides for one figure: ``verdict`` is "held" (no drop beyond POINTS), "noise" (beyond
    POINTS, not significant after the correction: passes), "missed", "untested" (beyond POINTS, no paired test:
    missed unless untested drops are accepted) or "accepted" (such a drop, accepted by the user)."""

    verdict: str
    label: str
    text: str = ""


def judge_drop(suite_name: str, metric: MetricDelta, max_drop: float, significance: float | None,
               multiple: str = DEFAULT_MULTIPLE, accept_untested: bool = False) -> DropDecision:
    """The drop gate's decision for one gated figure (see :class:`DropDecision`). With ``significance`` the
    figure's p-value adjusted over the gated family (``multiple``) must be below it for a drop to miss."""
    label = f"{suite_name}.{metric.name}"
    drop = 100 * worsening(metric.delta, metric)
    if drop <= max_drop + 1e-9:
        return DropDecision("held", label)
    moved = "rose" if lower_is_better(metric) else "fell"
    note = " (lower is better)" if lower_is_better(metric) else ""
    fell = (f"{label} {moved} {drop:.2f} points ({format_value(metric.baseline)} → "
            f"{format_value(metric.current)}){note}")
    if significance is None:
        return DropDecision("missed", label, f"{fell}, more than the allowed {max_drop:g}")
    tested = metric.paired if metric.paired is not None and metric.paired.test and \
        metric.paired.p_value is not None else None
    if tested is None:
        why = (metric.paired.note if metric.paired is not None else "n/a").removeprefix("n/a: ")
        if accept_untested:
            return DropDecision("accepted", label, f"{label} {moved} {drop:.2f} points, no paired test ({why})")
        return DropDecision("untested", label, (
            f"{fell}, more than the allowed {max_drop:g}, and no paired test can tell it from noise ({why}); "
            "--toolbench-accept-untested lets such drops pass"))
    if tested.p_adjusted is None and (tested.p_floor or 0.0) > significance:
        return DropDecision("noise", label, (f"{label} {moved} {drop:.2f} points, {p_text(tested.p_value)}; its test "
                                             f"cannot reach level {significance:g} on {tested.pairs} pairs (smallest "
                                             f"possible one-sided p {tested.p_floor:.3g}), so it is outside the "
                                             "family"))
    p_used = tested.p_adjusted if tested.p_adjusted is not None else worse_p(tested)
    shown = (f"{p_text(tested.p_value)}, one-sided p that it got worse {multiple}-adjusted {p_text(p_used)}"
             if multiple != "none" else f"{p_text(tested.p_value)}, one-sided p that it got worse "
                                          f"{p_text(p_used)}")
    if p_used >= significance:
        return DropDecision("noise", label, f"{label} {moved} {drop:.2f} points, {shown}")
    return DropDecision("missed", label, (f"{fell}, more than the allowed {max_drop:g}, significant ({tested.test} "
                                          f"{shown}, level {significance:g})"))


def _drop_gates(comparison: Comparison, max_drop: float, significance: float | None = None,
                multiple: str = DEFAULT_MULTIPLE, accept_untested: bool = False) -> list[GateResult]:
    """Every headline figure that got worse by more than ``max_drop`` points misses the gate; with
    ``significance``, only when its paired test, adjusted over the family of gated figures, also says the change is
    real. A figure without a paired test misses unless ``accept_untested``; the gate's lines say which."""
    correction = f" --toolbench-multiple {multiple}" if significance is not None else ""
    gate = f"--toolbench-max-drop {max_drop:g}" + (f" --toolbench-significance {significance:g}{correction}"
                                                    if significance is not None else "")
    results = []
    decisions = []
    for suite_name, suite in comparison.suites.items():
        for metric in suite.metrics.values():
            if not gated(metric):
                continue
            # --toolbench-sample: the estimated change of the full benchmark's figure (its p adjusted over the family)
            estimated = drop_on_estimate(metric.paired, metric, max_drop, significance)
            if estimated is not None:
                if estimated[0]:
                    results.append(GateResult(gate, False, f"{suite_name}.{metric.name}: {estimated[1]}"))
                continue
            decisions.append(judge_drop(suite_name, metric, max_drop, significance, multiple, accept_untested))
    results += [GateResult(gate, False, d.text) for d in decisions if d.verdict in ("missed", "untested")]
    family = (f"{multiple} correction over the {comparison.family} distinct gated figures that can move "
              + ("with a paired test" if multiple == "westfall-young" else "whose paired test can reach the level")
              if multiple != "none" else "no multiplicity correction")
    if comparison.multiple_refused:
        family += f"; {comparison.multiple_refused}"
    noise = [d.text for d in decisions if d.verdict == "noise"]
    if noise:  # said even beside missed figures: these drops were looked at and found within noise
        results.append(GateResult(gate, True, (
            f"worse by more than {max_drop:g} points but not significantly at level {significance:g} ({family}) "
            f"(passed): {'; '.join(noise)}")))
    accepted = [d.text for d in decisions if d.verdict == "accepted"]
    if accepted:
        results.append(GateResult(gate, True, (
            f"worse by more than {max_drop:g} points without a paired test, accepted by --toolbench-accept-untested "
            f"(passed): {'; '.join(accepted)}")))
    if not any(not r.passed for r in results):
        message = f"no aggregate or category figure got worse by more than {max_drop:g} points"
        if noise:
            message = (f"no aggregate or category figure got significantly worse (level {significance:g}, "
                       f"{family}) by more than {max_drop:g} points")
        results.append(GateResult(gate, True, message))
    return results


def evaluate_gates(summary: RunSummary, comparison: Comparison | None, settings: ReportSettings) -> list[GateResult]:
    refused = limit_refusal(summary.header)  # --toolbench-limit: no gate is judged on first-N figures
    if refused and (settings.thresholds or settings.max_drop is not None):
        return [GateResult("gates", False, refused)]
    results = [_threshold_gate(summary, threshold) for threshold in settings.thresholds]
    if settings.max_drop is not None and comparison is not None:
        # westfall-young refused (a swap-tested member: adjust_family): the gate's lines say so and why
        multiple = comparison.multiple if settings.significance is not None else settings.multiple
        results.extend(_drop_gates(comparison, settings.max_drop, settings.significance, multiple,
                                   settings.accept_untested))
    return results