"""Baseline comparison (per-metric deltas, newly failing and newly passing cases) and CI gates."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..contract.suite import CaseRecord, Metric
from ..run.summary import RunSummary, SuiteSummary, no_value_without_cases
from ..contract.aggregates import NO_DECLARATION
from .estimates import STRATIFIED_PAIRED, drop_on_estimate, limit_refusal, paired_on_sample, threshold_on_estimate
from .significance import CaseFigures, PairedResult, case_figures, declared_result, interval_at, p_text, \
    paired_result
from .protocol import setting_differences
from .results_file import ResultsFile
from .settings import ReportSettings, Threshold
from .sign_flip import DEFAULT_MULTIPLE, adjust, background_flips, level_for_power, mde_counts, mde_sign_flip, \
    power_counts, power_sign_flip, westfall_young
from . import swap_test
from .swap_test import SWAP, swap_tests
from .stats import format_counts, format_value, is_percentage, lower_is_better, worsening


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
    #: why the figure is not compared (this run did not compute it in full: "not run here: ..."); "" when it is
    not_compared: str = ""
    #: the baseline file's own figure, when ``baseline`` is the baseline on the compared cases instead (a run over
    #: part of the baseline's cases, a sampled run); None when they are the same
    baseline_full: float | None = None
    #: what ``delta`` is, when it is not simply this run's figure minus the baseline file's
    basis: str = ""

    @property
    def delta(self) -> float | None:
        if self.current is None or self.baseline is None or self.not_compared:
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
    #: the cases the baseline holds of this suite (its per-case records; 0 without them)
    baseline_cases: int = 0
    #: --toolbench-sample: the sampled cases the deltas are paired on (0 for a full run)
    sampled_cases: int = 0
    #: the case ids this run scored in the suite (not serialised): what the comparison covers
    ran_cases: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)

    def delta(self, metric: Any) -> MetricDelta | None:
        return self.metrics.get((metric.group, metric.name))

    @property
    def not_compared(self) -> dict[str, str]:
        """Figure name -> why it is not compared (this run did not compute it in full)."""
        return {d.name: d.not_compared for d in self.metrics.values() if d.not_compared}

    def coverage_text(self) -> str:
        """"compared on 400 of 3,641 cases; 9 figures not run here are not compared" (the part that applies)."""
        parts = []
        if self.baseline_cases and self.compared_cases < self.baseline_cases:
            parts.append(f"compared on {self.compared_cases:,} of the baseline's {self.baseline_cases:,} cases")
        skipped = {name: why for name, why in self.not_compared.items() if why.startswith("not run")}
        others = [name for name in self.not_compared if name not in skipped]
        if skipped:
            names = list(skipped)
            listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            parts.append(f"{len(skipped)} figure{'s' if len(skipped) != 1 else ''} not run in full here "
                         f"{'are' if len(skipped) != 1 else 'is'} not compared, never a drop ({listed})")
        if others:
            parts.append(f"not compared, without a paired difference on the same cases: {', '.join(others[:8])}"
                         + (f" and {len(others) - 8} more" if len(others) > 8 else ""))
        return "; ".join(parts)

    def delta_note(self) -> str:
        """What the deltas of a sampled run are (empty for a full run)."""
        if not self.sampled_cases:
            return ""
        return (f"Δ is the paired difference on the {self.sampled_cases:,} sampled cases in both runs (what the "
                "gate reads); the baseline beside it is the baseline's estimate from those same cases, its full "
                "figure is in the JSON (baseline_full)")

    def to_json(self) -> dict[str, Any]:
        return {
            "in_baseline": self.in_baseline, "compared_cases": self.compared_cases,
            "baseline_cases": self.baseline_cases, "sampled_cases": self.sampled_cases,
            "not_compared": self.not_compared,
            "newly_failing": self.newly_failing, "newly_passing": self.newly_passing,
            "metrics": [{"group": d.group, "name": d.name, "current": d.current, "baseline": d.baseline,
                         "delta": d.delta, "better": d.better,
                         **({"not_compared": d.not_compared} if d.not_compared else {}),
                         **({"baseline_full": d.baseline_full, "delta_basis": d.basis}
                            if d.baseline_full is not None or d.basis else {}),
                         **(d.paired or PairedResult(None, "n/a")).to_json()} for d in self.metrics.values()],
        }


@dataclass
class Comparison:
    path: str
    header: Mapping[str, Any]
    suites: dict[str, SuiteComparison]
    #: the correction over the gated family (--toolbench-multiple), its size, and the per-figure level the
    #: minimum detectable effects are given at
    multiple: str = DEFAULT_MULTIPLE
    family: int = 0
    power_level: float = 0.05
    #: the settings that differ between this run and the baseline ("max_tokens 256 vs 24"; report/protocol.py)
    settings_differ: list[str] = field(default_factory=list)
    #: the correction asked for (--toolbench-multiple), and why it was refused ("" when applied)
    multiple_requested: str = DEFAULT_MULTIPLE
    multiple_refused: str = ""
    #: the confidence of each member's simultaneous interval (1 - alpha / family)
    adjusted_confidence: float = 0.95
    #: gated figures that cannot move in this comparison (no unit differs between the runs): not in the family
    not_moving: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "header": dict(self.header),
                "multiple": {"method": self.multiple, "family": self.family, "power_level": self.power_level,
                             "requested": self.multiple_requested, "refused": self.multiple_refused or None,
                             "adjusted_confidence": self.adjusted_confidence, "power_drop": POWER_DROP,
                             "not_moving": list(self.not_moving)},
                "suites": {name: s.to_json() for name, s in self.suites.items()},
                "settings_differ": list(self.settings_differ)}


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
    # records of each case (or declared cluster) at random, one aggregate call per pseudo-run (report/swap_test.py)
    untested = {key: found.better == "lower" for key, found in comparison.metrics.items()
                if gated(found) and (found.paired is None or found.paired.test is None)
                and found.paired.moving_units != 0}  # a figure over no case in either run cannot move
    if untested and progress is not None:
        progress(f"toolbench: {suite.name}: paired permutation (swap) test of {len(untested)} gated figure(s) over "
                 f"{len(now_results)} cases against the baseline")
    try:
        swapped = swap_tests(suite.aggregate, now_results, before_results, untested, design, PairedResult,
                             max_records=swap_test.SWAP_MAX_RECORDS,
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


def gated(metric: MetricDelta) -> bool:
    """Whether ``--toolbench-max-drop`` watches this figure: a headline percentage (an aggregate or a category)
    with a value in both runs."""
    return metric.delta is not None and metric.group in DROP_GROUPS and is_percentage(metric)


def adjust_family(comparison: Comparison, method: str, alpha: float) -> None:
    """The family is every gated figure of the run that can move and whose paired test, on its pairs, can give a
    one-sided p-value at or below ``alpha`` (whatever its delta: it is fixed before the gate looks at any drop). A
    figure no unit of which differs between the runs (0 vs 0, identical in both runs for every case) cannot move,
    and one whose test cannot reach the level (a handful of discordant cases) could never miss the gate: leaving
    them out keeps the family-wise error at ``alpha`` (Tarone 1990, *Biometrics* 46:515: the tests that can reject
    are the family; Holm's closure holds over them). Figures whose tests are the same test (the same units with
    proportional contributions, e.g. a one-category aggregate and its category, or BFCL's Overall and its
    renormalised version on a run where only some components ran) count once. Each member gets ``p_adjusted``,
    its one-sided p that it got worse adjusted by ``method``, and the simultaneous interval of the family
    (Bonferroni, each at 1 - ``alpha`` / family); every tested gated figure gets ``mde80`` and its power against a
    drop of :data:`POWER_DROP` at the observed flip rate, at the per-figure level (``alpha`` / family size under a
    correction). ``westfall-young`` needs every member's per-unit contributions: when a member is swap-tested it
    is refused with the reason (``comparison.multiple_refused``) and Holm is applied, as the reports say."""
    tested = [(suite, key) for suite, c in comparison.suites.items() for key, m in c.metrics.items()
              if gated(m) and m.paired is not None and m.paired.test and m.paired.p_value is not None
              and m.paired.pairs > 0]
    paired = {(s, k): comparison.suites[s].metrics[k].paired for s, k in tested}
    live = [(s, k) for s, k in tested if paired[(s, k)].live]
    comparison.multiple_requested = method
    comparison.multiple_refused = ""
    if method == "westfall-young":
        swapped = [f"{s}.{k[1]}" for s, k in live if paired[(s, k)].test.startswith(SWAP)]
        if swapped:
            comparison.multiple_refused = (
                f"westfall-young refused: {', '.join(swapped)} "
                f"{'is' if len(swapped) == 1 else 'are'} tested by swapping the runs' records, which gives no "
                "per-unit contributions to flip jointly with the other figures; Holm's correction applied instead "
                "(declare such figures in the suite's aggregates.yaml to make them sign-flip tested)")
            method = "holm"
    if method == "westfall-young":  # the joint resampling weighs each test by what it can reach: no Tarone filter
        family = list(live)
    else:
        family = [(s, k) for s, k in live if (paired[(s, k)].p_floor or 0.0) <= alpha + 1e-15]
    # one test per distinct set of (proportional) contributions
    groups: dict[Any, list[tuple[str, Any]]] = {}
    for suite, key in family:
        groups.setdefault(_test_identity(suite, key, comparison), []).append((suite, key))
    members = list(groups.values())
    if method == "westfall-young":
        oriented = []
        for group in members:
            suite, key = group[0]
            metric = comparison.suites[suite].metrics[key]
            sign = 1.0 if metric.better == "lower" else -1.0  # positive: worse
            oriented.append({f"{suite}\x1f{unit}": sign * value for unit, value in metric.paired.units})
        group_p = westfall_young(oriented)
    else:
        group_p = adjust([max(_worse_p(paired[m]) for m in group) for group in members], method)
    adjusted = {m: p for group, p in zip(members, group_p) for m in group}
    size = len(members)
    level = level_for_power(alpha, "holm" if method == "westfall-young" else method, size)
    confidence = 1 - (alpha / size if method != "none" and size > 1 else alpha)
    for suite, key in tested:
        metric = comparison.suites[suite].metrics[key]
        result = metric.paired
        mde = _mde(result, level)
        power, flips = _power(result, level)
        in_family = (suite, key) in adjusted
        interval = interval_at(result, confidence) if in_family else None
        note = ""
        if result.ran_weight is not None and result.ran_weight < 1 - 1e-9:
            scale = 100 if metric.unit == "%" else 1
            note = (f"{metric.name} counts the components that did not run as 0, so the ones that ran weigh "
                    f"{result.ran_weight:.3g} of it: mde80 and power are in points of {metric.name}"
                    + (f"; mde80 {scale * mde:.2f} is {scale * mde / result.ran_weight:.2f} points of the weighted "
                       "mean of the components that ran" if mde is not None else ""))
        comparison.suites[suite].metrics[key] = replace(metric, paired=replace(
            result, p_adjusted=adjusted.get((suite, key)), mde80=mde, power=power,
            power_drop=POWER_DROP if power is not None else None, flip_rate=flips,
            delta_interval_adjusted=interval, adjusted_confidence=confidence if in_family else None,
            power_note=note))
    comparison.multiple = method
    comparison.family = size
    comparison.power_level = level
    comparison.adjusted_confidence = confidence
    comparison.not_moving = [f"{s}.{k[1]}" for s, c in comparison.suites.items() for k, m in c.metrics.items()
                             if gated(m) and m.paired is not None and not m.paired.live]


#: the drop each gated figure states its power against (5 points, as a fraction)
POWER_DROP = 0.05


def _test_identity(suite: str, key: Any, comparison: Comparison) -> Any:
    """What makes two figures the same test: their units and contributions up to a positive factor, oriented to
    "worse" (a figure without per-unit contributions, the swap test, is its own)."""
    metric = comparison.suites[suite].metrics[key]
    units = metric.paired.units
    if not units or metric.paired.test.startswith(SWAP):
        return (suite, key)
    sign = 1.0 if metric.better == "lower" else -1.0
    scale = max(abs(v) for _, v in units)
    return (suite, tuple(sorted((unit, round(sign * value / scale, 9)) for unit, value in units)))


def _power(paired: PairedResult, level: float) -> tuple[float | None, float | None]:
    """(power against a drop of POWER_DROP at ``level``, the background flip rate it is given at: the share of
    units that flip both ways); None where the test gives no power (the swap test)."""
    basis = paired.power_basis
    values = [value for _, value in paired.units]
    flips = background_flips(values, paired.unit_count) if paired.unit_count else None
    if len(basis) == 2:
        worse, better = sum(1 for v in values if v < 0), sum(1 for v in values if v > 0)
        return power_counts(int(basis[0]), worse, better, POWER_DROP, level), flips
    if len(basis) == 1:
        return power_sign_flip(values, POWER_DROP, level), flips
    return None, flips


def _worse_p(paired: PairedResult) -> float:
    """The one-sided p-value that the figure got worse (the two-sided one where a test gives none)."""
    return paired.p_worse if paired.p_worse is not None else paired.p_value


def _mde(paired: PairedResult, level: float) -> float | None:
    basis = paired.power_basis
    if len(basis) == 1 and (paired.pairs <= 0 or 0.5 ** paired.pairs > level):
        return None  # even every unit moving one way cannot reach the level
    if len(basis) == 2:
        return mde_counts(int(basis[0]), int(basis[1]), level)
    if len(basis) == 1:
        return mde_sign_flip([basis[0]], level)
    return None


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
    p_used = tested.p_adjusted if tested.p_adjusted is not None else _worse_p(tested)
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
