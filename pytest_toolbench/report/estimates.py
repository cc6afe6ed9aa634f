"""What reports and gates do with the estimates of a ``--toolbench-sample`` run (``stats.estimation``), and with the
first-N figures of ``--toolbench-limit``. Small decisions, each called once from the gate, the comparison or the
leaderboard, so that those modules stay as they are for full runs:

- a threshold gate on an estimate uses its 95% interval: missed only when the whole interval is on the wrong side
  of the bound, passed only when the whole interval is on the right side; an interval that straddles the bound
  cannot decide, and is reported as *undecided* and missed (a gate passes only on evidence). An estimate without an
  interval is never gated on.
- a gate on a ``--toolbench-limit`` run is refused: its first N cases per category are no random draw, so its
  figures estimate nothing; the message points to ``--toolbench-sample``.
- against a full baseline, each figure linear in the categories' pass rates gets the stratified paired difference
  over the sampled cases (``stats.estimation.paired_difference``): the estimate of the full benchmark's change, its
  95% interval and a two-sided normal test; the max-drop gate is missed only when the estimated drop is beyond the
  allowed one and that test says the change is real.
- the leaderboard places an estimate as a rank range: the ranks its interval's two ends would have.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..contract.suite import CaseRecord
from ..stats.estimate import Estimate
from ..stats.estimation import paired_difference
from .stats import format_value, lower_is_better

#: The name paired results of a sampled run carry as their test.
STRATIFIED_PAIRED = "stratified paired difference"
#: The level at which a sampled run's max-drop gate calls a change real when --toolbench-significance is not given.
DEFAULT_LEVEL = 0.05


def limit_refusal(header: Mapping[str, Any]) -> str | None:
    """Why no gate is judged on a ``--toolbench-limit`` run (None for any other run)."""
    limit = header.get("limit")
    if not limit:
        return None
    return (f"--toolbench-limit {limit} ran the first {limit} cases of each category, which are no random draw: its "
            "figures do not estimate the full benchmark, so no gate is judged on them; use --toolbench-sample=N|"
            "FRACTION for a smoke tier whose figures are estimates with an interval")


def threshold_on_estimate(metric: Any, label: str, bound: float, unit: str) -> tuple[bool, str] | None:
    """The threshold gate's verdict on an estimated figure (None when ``metric`` is no estimate): (passed,
    message)."""
    estimate = metric.estimate
    if not estimate:
        return None
    value, interval = estimate.get("value"), estimate.get("interval95")
    source = f"estimated from {estimate.get('sampled')} of {estimate.get('population')} cases (seed " \
             f"{estimate.get('seed')})"
    if value is None:
        return False, f"{label}: no value ({source})"
    if not interval:
        return False, (f"{label} = {format_value(value, unit)} {source} has no interval "
                       f"({estimate.get('note') or 'not determined by the categories pass rates'}): no gate is "
                       "judged on it")
    low, high = float(interval[0]), float(interval[1])
    shown = f"{format_value(value, unit)} [95% {format_value(low, unit)}, {format_value(high, unit)}] {source}"
    if lower_is_better(metric):
        if low - 1e-12 > bound:
            return False, f"{label} = {shown}: the whole interval is above the allowed maximum " \
                          f"{format_value(bound, unit)} (lower is better)"
        if high <= bound + 1e-12:
            return True, f"{label} = {shown}: the whole interval is at most {format_value(bound, unit)}"
        return False, (f"{label} = {shown}: undecided, the interval straddles the maximum {format_value(bound, unit)}"
                       " (a larger sample or a full run decides)")
    if high + 1e-12 < bound:
        return False, f"{label} = {shown}: the whole interval is below the required {format_value(bound, unit)}"
    if low >= bound - 1e-12:
        return True, f"{label} = {shown}: the whole interval is at least {format_value(bound, unit)}"
    return False, (f"{label} = {shown}: undecided, the interval straddles the required {format_value(bound, unit)} "
                   "(a larger sample or a full run decides)")


def paired_on_sample(suite: Any, records: Sequence[CaseRecord], old_records: Sequence[CaseRecord],
                     keys: Sequence[tuple[str, str]], make_result: Callable[..., Any]) -> dict[tuple[str, str], Any]:
    """For a sampled ``suite`` (``SuiteSummary`` with a ``sampling_design``) against a baseline's records: each
    figure's paired result built by ``make_result(test, note, pairs, p_value, interval, worse, better)`` (the
    comparison's ``PairedResult``). Empty for a run that is not sampled."""
    design = getattr(suite, "sampling_design", None)
    if design is None:
        return {}
    current = list(records)
    baseline = {r.case_id: r for r in old_records}
    metrics = {(m.group or "", m.name): m for m in suite.metrics}
    results = {}
    for key in keys:
        metric = metrics.get(key)
        data = metric.estimate if metric is not None else None
        if not data:
            continue
        estimate = Estimate(data.get("value"), None, 0, 0, 0, "", coefficients=data.get("coefficients"))
        found = paired_difference(current, baseline, estimate, design)
        if found is None:
            results[key] = make_result(None, "n/a: not linear in the categories' pass rates, or a sampled case is "
                                             "missing from the baseline", 0, None, None, None, None)
            continue
        delta, interval, p_value, pairs = found
        results[key] = make_result(STRATIFIED_PAIRED, "the full benchmark's change estimated from the sampled "
                                   "cases of both runs", pairs, p_value, interval, None, None)
    return results


def drop_on_estimate(paired: Any, metric: Any, max_drop: float, level: float | None) -> tuple[bool, str] | None:
    """The max-drop gate on a sampled run's figure (None when ``paired`` is not a stratified paired difference):
    missed only when the estimated change of the full benchmark's figure (the centre of the paired interval) is a
    drop of more than ``max_drop`` points and the paired test rejects no change at ``level`` (default 0.05);
    (missed, why)."""
    if paired is None or getattr(paired, "test", None) != STRATIFIED_PAIRED or not paired.delta_interval95:
        return None
    level = DEFAULT_LEVEL if level is None else level
    low, high = paired.delta_interval95
    change = (low + high) / 2
    drop = 100 * (change if lower_is_better(metric) else -change)
    interval = f"[{100 * low:+.2f}, {100 * high:+.2f}]"
    # the p-value adjusted over the gate's family (--toolbench-multiple) when the comparison made one
    p_used = getattr(paired, "p_adjusted", None)
    p_used = paired.p_value if p_used is None else p_used
    if drop > max_drop + 1e-9 and p_used is not None and p_used < level:
        shown = f"p={paired.p_value:.3g}" + (f", adjusted {p_used:.3g}" if p_used != paired.p_value else "")
        return True, (f"estimated drop of the full benchmark's figure {drop:.2f} points (95% {interval}), more than "
                      f"the allowed {max_drop:g} and significant ({STRATIFIED_PAIRED}, {shown}, level {level:g})")
    return False, f"estimated change {-drop:+.2f} points (95% {interval}), p={paired.p_value:.3g}"
