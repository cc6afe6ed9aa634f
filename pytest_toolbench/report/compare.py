"""Baseline comparison (per-metric deltas, newly failing and newly passing cases) and CI gates."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..run.summary import RunSummary, SuiteSummary, to_case_result
from ..run.records import CaseRecord
from .estimates import drop_on_estimate, limit_refusal, paired_on_sample, threshold_on_estimate
from .significance import CaseFigures, PairedResult, case_figures, p_text, paired_result
from .settings import ReportSettings, Threshold
from .stats import format_counts, format_value, is_percentage, lower_is_better, metric_field, worsening


@dataclass(frozen=True)
class MetricDelta:
    group: str
    name: str
    unit: str
    current: float | None
    baseline: float | None
    better: str = "higher"  # the current run's Metric.better
    #: the paired test against the baseline's cases (report/significance.py); None when it was not computed
    paired: PairedResult | None = None

    @property
    def delta(self) -> float | None:
        if self.current is None or self.baseline is None:
            return None
        return self.current - self.baseline


@dataclass
class SuiteComparison:
    name: str
    in_baseline: bool
    metrics: dict[tuple[str, str], MetricDelta] = field(default_factory=dict)
    newly_failing: list[str] = field(default_factory=list)
    newly_passing: list[str] = field(default_factory=list)
    compared_cases: int = 0

    def delta(self, metric: Any) -> MetricDelta | None:
        return self.metrics.get((metric_field(metric, "group", ""), metric_field(metric, "name")))

    def to_json(self) -> dict[str, Any]:
        return {
            "in_baseline": self.in_baseline, "compared_cases": self.compared_cases,
            "newly_failing": self.newly_failing, "newly_passing": self.newly_passing,
            "metrics": [{"group": d.group, "name": d.name, "current": d.current, "baseline": d.baseline,
                         "delta": d.delta, "better": d.better,
                         **(d.paired or PairedResult(None, "n/a")).to_json()} for d in self.metrics.values()],
        }


@dataclass
class Comparison:
    path: str
    header: Mapping[str, Any]
    suites: dict[str, SuiteComparison]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "header": dict(self.header),
                "suites": {name: s.to_json() for name, s in self.suites.items()}}


def baseline_label(header: Mapping[str, Any]) -> str:
    """What answered in the baseline run: its model (and backend), or for a gold or replay run what that means;
    never ``gold (gold)``."""
    backend = header.get("backend") or "?"
    model = header.get("model") or (header.get("fingerprint") or {}).get("model")
    if model:
        return f"model {model}, backend {backend}"
    if backend == "gold":
        return "no model: the gold reference answers, backend gold"
    if backend == "replay":
        return f"replayed outputs {header.get('replay') or '?'}, backend replay"
    return f"backend {backend}"


def baseline_cases(baseline: Mapping[str, Any]) -> list[CaseRecord]:
    """A results file's cases as records (the same type this run's cases have); malformed entries are skipped."""
    cases = []
    for entry in baseline.get("cases") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("suite"), str) and isinstance(entry.get("case_id"), str):
            try:
                cases.append(CaseRecord.from_json(entry))
            except (TypeError, ValueError):
                continue
    return cases


def _case_outcomes(records: list[Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """(case id, passed) per case in the suite's order; a case's ``--toolbench-repeat`` samples make one outcome,
    passed when every sample passed."""
    outcomes: dict[str, bool] = {}
    for record in sorted(records, key=lambda r: r.get("order", 0)):
        outcomes[record["case_id"]] = outcomes.get(record["case_id"], True) and bool(record["passed"])
    return list(outcomes.items())


def compare(summary: RunSummary, records: Iterable[Mapping[str, Any]], baseline: Mapping[str, Any],
            path: Path | str) -> Comparison:
    baseline_suites: Mapping[str, Any] = baseline.get("suites") or {}
    # A case with --toolbench-repeat samples counts as passed when all of them pass (its pass^k outcome).
    baseline_passed: dict[tuple[str, str], bool] = {}
    for case in baseline_cases(baseline):
        key = (case.suite, case.case_id)
        baseline_passed[key] = baseline_passed.get(key, True) and case.passed
    by_suite: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_suite.setdefault(record["suite"], []).append(record)
    suites: dict[str, SuiteComparison] = {}
    for suite in summary.suites:
        old = baseline_suites.get(suite.name)
        comparison = SuiteComparison(suite.name, in_baseline=old is not None)
        old_metrics = {(m.get("group", ""), m.get("name")): m for m in (old or {}).get("metrics", [])}
        for metric in suite.metrics:
            key = (metric.group, metric.name)
            if key in old_metrics:
                comparison.metrics[key] = MetricDelta(metric.group, metric.name, getattr(metric, "unit", "%"),
                                                      metric.value, old_metrics[key].get("value"),
                                                      getattr(metric, "better", "higher"))
        for case_id, passed in _case_outcomes(by_suite.get(suite.name, [])):
            before = baseline_passed.get((suite.name, case_id))
            if before is None:
                continue
            comparison.compared_cases += 1
            if before and not passed:
                comparison.newly_failing.append(case_id)
            elif passed and not before:
                comparison.newly_passing.append(case_id)
        if comparison.metrics and suite.aggregate is not None:
            _attach_paired_tests(comparison, suite, by_suite.get(suite.name, []),
                                 [c for c in baseline_cases(baseline) if c.suite == suite.name], old_metrics)
        suites[suite.name] = comparison
    return Comparison(str(path), baseline.get("header") or {}, suites)


def _attach_paired_tests(comparison: SuiteComparison, suite: SuiteSummary, records: list[Mapping[str, Any]],
                         old_records: list[CaseRecord], old_metrics: Mapping[tuple[str, Any], Any]) -> None:
    """Each compared figure's paired test (exact McNemar or paired bootstrap, or n/a with the reason)."""
    if not old_records:
        for key, found in comparison.metrics.items():
            comparison.metrics[key] = replace(found, paired=PairedResult(
                None, "n/a: the baseline file holds no per-case records of this suite"))
        return
    keys = set(comparison.metrics)
    now = case_figures(suite.aggregate, [to_case_result(r) for r in records],
                       [m for m in suite.metrics if (m.group, m.name) in keys])
    before: CaseFigures = case_figures(suite.aggregate, [to_case_result(r) for r in old_records],
                                       [m for key, m in old_metrics.items() if key in keys])
    for key, found in comparison.metrics.items():
        comparison.metrics[key] = replace(found, paired=paired_result(key, now, before,
                                                                      lower_is_better=found.better == "lower"))
    # --toolbench-sample: the full benchmark's change estimated from the sampled cases (report/estimates.py)
    for key, paired in paired_on_sample(suite, records, old_records, list(keys), PairedResult).items():
        comparison.metrics[key] = replace(comparison.metrics[key], paired=paired)


# -- gates -----------------------------------------------------------------------------------------------------
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


#: The rows --toolbench-max-drop watches: the headline figures. Other groups can hold shares of failures or
#: diagnostic breakdowns where a fall is no regression (e.g. the share of one failure category).
DROP_GROUPS = ("aggregate", "category")


def _drop_gates(comparison: Comparison, max_drop: float, significance: float | None = None) -> list[GateResult]:
    """Every headline figure that got worse by more than ``max_drop`` points misses the gate; with ``significance``,
    only when its paired test also says the change is real (p < significance). A figure without a paired test (a
    formula over several counts) is gated on its drop alone, and the message says so."""
    gate = f"--toolbench-max-drop {max_drop:g}" + (f" --toolbench-significance {significance:g}"
                                                    if significance is not None else "")
    results = []
    within_noise = []
    for suite_name, suite in comparison.suites.items():
        for metric in suite.metrics.values():
            if metric.delta is None or metric.group not in DROP_GROUPS or not is_percentage({"unit": metric.unit}):
                continue
            # A lower-is-better figure (an attack success rate) regresses when it rises.
            drop = 100 * worsening(metric.delta, metric)
            estimated = drop_on_estimate(metric.paired, metric, max_drop, significance)  # --toolbench-sample
            if estimated is not None:
                if estimated[0]:
                    results.append(GateResult(gate, False, f"{suite_name}.{metric.name}: {estimated[1]}"))
                continue
            if drop > max_drop + 1e-9:
                moved = "rose" if lower_is_better(metric) else "fell"
                note = " (lower is better)" if lower_is_better(metric) else ""
                label = f"{suite_name}.{metric.name}"
                tested = metric.paired if metric.paired is not None and metric.paired.test else None
                evidence = ""
                if significance is not None:
                    if tested is not None and tested.p_value is not None and tested.p_value >= significance:
                        within_noise.append(f"{label} {moved} {drop:.2f} points, {p_text(tested.p_value)}")
                        continue
                    evidence = (f", significant ({tested.test} {p_text(tested.p_value)}, level {significance:g})"
                                if tested is not None else ", no paired test for this figure (gated on the drop "
                                                           "alone)")
                results.append(GateResult(gate, False, (
                    f"{label} {moved} {drop:.2f} points "
                    f"({format_value(metric.baseline)} → {format_value(metric.current)}){note}, "
                    f"more than the allowed {max_drop:g}{evidence}")))
    if within_noise:  # said even beside missed figures: these drops were looked at and found within noise
        results.append(GateResult(gate, True, (
            f"worse by more than {max_drop:g} points but not significantly at level {significance:g} (passed): "
            f"{'; '.join(within_noise)}")))
    if not any(not r.passed for r in results):
        message = f"no aggregate or category figure got worse by more than {max_drop:g} points"
        if within_noise:
            message = (f"no aggregate or category figure got significantly worse (level {significance:g}) by more "
                       f"than {max_drop:g} points")
        results.append(GateResult(gate, True, message))
    return results


def evaluate_gates(summary: RunSummary, comparison: Comparison | None, settings: ReportSettings) -> list[GateResult]:
    refused = limit_refusal(summary.header)  # --toolbench-limit: no gate is judged on first-N figures
    if refused and (settings.thresholds or settings.max_drop is not None):
        return [GateResult("gates", False, refused)]
    results = [_threshold_gate(summary, threshold) for threshold in settings.thresholds]
    if settings.max_drop is not None and comparison is not None:
        results.extend(_drop_gates(comparison, settings.max_drop, settings.significance))
    return results
