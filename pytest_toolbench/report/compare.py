"""Baseline comparison: per-figure deltas, newly failing and newly passing cases, each figure's paired test, then the
gated family's corrections (:mod:`.family`). The comparison's types are :mod:`.comparison`, the gates
:mod:`.gates` (``GateResult`` and ``evaluate_gates`` are named here too, where the writers and the plugin import
them)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..contract.suite import CaseRecord, Metric
from ..run.summary import RunSummary, SuiteSummary, no_value_without_cases
from ..contract.aggregates import NO_DECLARATION
from ..stats.multiplicity import DEFAULT_MULTIPLE
from ..stats import swap
from ..stats.swap import swap_tests
from .case_figures import CaseFigures, case_figures
from .comparison import Comparison, MetricDelta, SuiteComparison, gated
from .declared import declared_result
from .estimates import STRATIFIED_PAIRED, paired_on_sample
from .family import adjust_family
from .gates import GateResult, evaluate_gates
from .protocol import setting_differences
from .results_file import ResultsFile
from .significance import PairedResult, paired_result

__all__ = ["Comparison", "GateResult", "MetricDelta", "SuiteComparison", "adjust_family", "baseline_label",
           "compare", "evaluate_gates"]


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


def _case_outcomes(records: list[CaseRecord]) -> list[tuple[str, bool]]:
    """(case id, passed) per case in the suite's order; a case's ``--toolbench-repeat`` samples make one outcome,
    passed when every sample passed."""
    outcomes: dict[str, bool] = {}
    for record in sorted(records, key=lambda r: r.order):
        outcomes[record.case_id] = outcomes.get(record.case_id, True) and bool(record.passed)
    return list(outcomes.items())


def compare(summary: RunSummary, records: Iterable[CaseRecord], baseline: ResultsFile,
            path: Path | str, multiple: str = DEFAULT_MULTIPLE, alpha: float | None = None,
            progress: Callable[[str], None] | None = None) -> Comparison:
    """Deltas, newly failing/passing cases and each figure's paired test; then the gated family's adjusted
    p-values (``multiple``: holm, bonferroni or none) and each gated figure's minimum detectable effect at the
    family's per-figure level (``alpha``: the gate's level, 0.05 when there is none). ``progress`` gets a line
    before each suite's swap test (thousands of aggregate calls: up to a minute on a large suite)."""
    # A case with --toolbench-repeat samples counts as passed when all of them pass (its pass^k outcome).
    baseline_passed: dict[tuple[str, str], bool] = {}
    for case in baseline.cases:
        key = (case.suite, case.case_id)
        baseline_passed[key] = baseline_passed.get(key, True) and case.passed
    by_suite: dict[str, list[CaseRecord]] = {}
    for record in records:
        by_suite.setdefault(record.suite, []).append(record)
    suites: dict[str, SuiteComparison] = {}
    for suite in summary.suites:
        old = baseline.suites.get(suite.name)
        comparison = SuiteComparison(suite.name, in_baseline=old is not None)
        old_metrics = {(m.group, m.name): m for m in (old.metrics if old is not None else ())}
        ran = {record.case_id for record in by_suite.get(suite.name, [])}
        comparison.ran_cases = frozenset(ran)
        old_records = baseline.suite_cases(suite.name)
        comparison.baseline_cases = len({record.case_id for record in old_records})
        compared_records = [record for record in old_records if record.case_id in ran]
        # a run over part of the baseline's cases: the baseline's figures over the same cases (its own records,
        # aggregated by the suite), so that each delta compares like with like
        on_common = _on_common_cases(suite, compared_records, comparison.baseline_cases)
        for metric in suite.metrics:
            key = (metric.group, metric.name)
            if key in old_metrics:
                full = old_metrics[key]
                same = on_common.get(key)
                comparison.metrics[key] = MetricDelta(
                    metric.group, metric.name, getattr(metric, "unit", "%"), metric.value,
                    same.value if same is not None else full.value, getattr(metric, "better", "higher"),
                    not_compared=_not_run_here(metric, full),
                    baseline_full=full.value if same is not None and same.value != full.value else None,
                    basis=(f"this run minus the baseline on the same {len({r.case_id for r in compared_records}):,} "
                           "cases" if same is not None and same.value != full.value else ""))
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
                                 compared_records if on_common else old_records,
                                 {k: (on_common.get(k) or m) for k, m in old_metrics.items()}, progress)
            _sampled_deltas(comparison, suite)
        suites[suite.name] = comparison
    old_header = baseline.header
    result = Comparison(str(path), old_header, suites,
                        settings_differ=setting_differences(summary.header, old_header, [s.name for s in summary.suites]))
    adjust_family(result, multiple, 0.05 if alpha is None else alpha)
    return result


def _not_run_here(metric: Metric, old: Metric) -> str:
    """Why a figure is not compared: this run did not compute it in full where the baseline did (categories the
    selection left out or that could not run here), or the other way round; "" when both cover the same."""
    now, before = getattr(metric, "incomplete", "") or "", getattr(old, "incomplete", "") or ""
    if metric.value is None and old.value is not None:
        return "not run here: no value in this run"
    if now == before:
        return ""
    if now:
        return f"not run here in full ({now})"
    return f"not complete in the baseline ({before})"


def _on_common_cases(suite: SuiteSummary, compared: list[CaseRecord], baseline_cases: int
                     ) -> dict[tuple[str, str], Metric]:
    """The baseline's figures over the cases this run shares with it, when those are fewer than the baseline's
    (a ``-k`` rerun against a full baseline); empty when the run covers all of them, for a sampled run (whose
    figures estimate the full benchmark: its deltas are paired differences, :func:`_sampled_deltas`), a run with
    repeated samples, or a suite without its aggregation."""
    ids = {record.case_id for record in compared}
    if (not compared or len(ids) >= baseline_cases or suite.aggregate is None or suite.sampling_design is not None
            or any(record.sample is not None for record in compared)):
        return {}
    try:
        metrics = suite.aggregate(sorted(compared, key=lambda r: r.order))
    except Exception:  # noqa: BLE001 - records a results file kept too little of: the file's own figures
        return {}
    return {(m.group, m.name): no_value_without_cases(m) for m in metrics}


def _sampled_deltas(comparison: SuiteComparison, suite: SuiteSummary) -> None:
    """A sampled run (``--toolbench-sample``) against a baseline: each figure's delta is the paired difference over
    the sampled cases of both runs (the stratified paired difference, what the max-drop gate reads), so the
    baseline shown beside it is the baseline's estimate from those same cases (this run's estimate minus the
    difference); the baseline file's full figure stays in ``baseline_full``. A figure without a paired difference
    keeps this run's estimate minus the baseline's full figure, and says so."""
    if suite.sampling_design is None:
        return
    pairs = 0
    for key, found in comparison.metrics.items():
        paired = found.paired
        if found.current is None or found.baseline is None or found.not_compared:
            continue
        if paired is not None and paired.test == STRATIFIED_PAIRED and paired.delta_interval95:
            change = (paired.delta_interval95[0] + paired.delta_interval95[1]) / 2
            pairs = max(pairs, paired.pairs)
            comparison.metrics[key] = replace(
                found, baseline=found.current - change, baseline_full=found.baseline,
                basis=f"paired difference on the {paired.pairs:,} sampled cases of both runs")
        else:  # the estimate minus the full figure would be a second, noisier difference: not shown, not gated
            why = (paired.note if paired is not None else "n/a").removeprefix("n/a: ")
            comparison.metrics[key] = replace(
                found, not_compared=f"no paired difference on the sampled cases ({why}); this run's estimate minus "
                                    "the baseline's full figure is not a comparison of the same cases",
                baseline_full=found.baseline)
    comparison.sampled_cases = comparison.compared_cases if pairs else 0


def _attach_paired_tests(comparison: SuiteComparison, suite: SuiteSummary, records: list[CaseRecord],
                         old_records: list[CaseRecord], old_metrics: Mapping[tuple[str, Any], Metric],
                         progress: Callable[[str], None] | None = None) -> None:
    """Each compared figure's paired test (exact McNemar, sign-flip, the stratified sign-flip of a declared
    aggregate, or n/a with the reason)."""
    if not old_records:
        for key, found in comparison.metrics.items():
            comparison.metrics[key] = replace(found, paired=PairedResult(
                None, "n/a: the baseline file holds no per-case records of this suite"))
        return
    design = suite.design if suite.design is not None else NO_DECLARATION
    current_metrics = list(suite.metrics)
    baseline_metrics = list(old_metrics.values())
    now_results, before_results = list(records), list(old_records)
    now = case_figures(suite.aggregate, now_results, current_metrics, design)
    before: CaseFigures = case_figures(suite.aggregate, before_results, baseline_metrics, design)
    for key, found in comparison.metrics.items():
        lower = found.better == "lower"
        tested = paired_result(key, now, before, lower_is_better=lower, design=design)
        if tested.test is None and key[1] in design.figures:
            declared = declared_result(key[1], design, current_metrics, baseline_metrics, now, before, lower)
            tested = declared if declared is not None else tested
        if tested.test is None and design.problem:
            tested = replace(tested, note=f"{tested.note}; the suite's aggregates.yaml: {design.problem}")
        comparison.metrics[key] = replace(found, paired=tested)
    # the fallback for a gated figure no other test fits (a micro F1 over pooled calls): swap the two runs'
    # records of each case (or declared cluster) at random, one aggregate call per pseudo-run (stats/swap.py)
    untested = {key: found.better == "lower" for key, found in comparison.metrics.items()
                if gated(found) and (found.paired is None or found.paired.test is None)
                and found.paired.moving_units != 0}  # a figure over no case in either run cannot move
    if untested and progress is not None:
        progress(f"toolbench: {suite.name}: paired permutation (swap) test of {len(untested)} gated figure(s) over "
                 f"{len(now_results)} cases against the baseline")
    try:
        swapped = swap_tests(suite.aggregate, now_results, before_results, untested, design, PairedResult,
                             max_records=swap.SWAP_MAX_RECORDS,
                             reported={key: (comparison.metrics[key].current, comparison.metrics[key].baseline)
                                       for key in untested})
    except Exception as error:  # noqa: BLE001 - an aggregate that fails on a pseudo-run: the figures stay n/a
        swapped = {key: PairedResult(None, f"n/a: the swap test failed ({type(error).__name__})") for key in untested}
    for key, paired in swapped.items():
        before_note = comparison.metrics[key].paired.note
        if paired.test is None:
            paired = replace(paired, note=f"{before_note}; {paired.note.removeprefix('n/a: ')}")
        else:  # say why the figure's own split gave no test
            paired = replace(paired, note=f"{before_note.removeprefix('n/a: ')}: tested by swapping the runs' records")
        comparison.metrics[key] = replace(comparison.metrics[key], paired=paired)
    # --toolbench-sample: the full benchmark's change estimated from the sampled cases (report/estimates.py)
    for key, paired in paired_on_sample(suite, records, old_records, list(comparison.metrics), PairedResult).items():
        if paired.delta_interval95:  # a normal interval: the simultaneous one widens it by the quantiles' ratio
            paired = replace(paired, interval_basis=("normal", tuple(paired.delta_interval95)))
        comparison.metrics[key] = replace(comparison.metrics[key], paired=paired)
