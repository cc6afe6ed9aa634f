"""A comparison with a baseline as a value: per figure its delta and paired test (``MetricDelta``), per suite
(``SuiteComparison``) and for the run (``Comparison``); which figures the drop gate watches (:func:`gated`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..stats.multiplicity import DEFAULT_MULTIPLE
from .significance import PairedResult
from .stats import is_percentage

#: the drop each gated figure states its power against (5 points, as a fraction)
POWER_DROP = 0.05

#: The rows --toolbench-max-drop watches: the headline figures. Other groups can hold shares of failures or
#: diagnostic breakdowns where a fall is no regression (e.g. the share of one failure category).
DROP_GROUPS = ("aggregate", "category")


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


def gated(metric: MetricDelta) -> bool:
    """Whether ``--toolbench-max-drop`` watches this figure: a headline percentage (an aggregate or a category)
    with a value in both runs."""
    return metric.delta is not None and metric.group in DROP_GROUPS and is_percentage(metric)
