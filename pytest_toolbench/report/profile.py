"""What can it do? One capability profile per run across suites (pure functions; the mapping is data).

ToLeaP's five capability areas (tool selection and use; parameter identification and filling; task structure and
output; task execution and completeness; robustness), each built from the named figures of the suites that ran, as
``suites/profile.yaml`` declares them, plus TL-Training's failure categories tallied over every suite that labels
them (``libraries: [tl_failures]``).

An area's value is the unweighted mean of its contributing figures (a figure whose improvement is a fall enters as
``1 - value``), so a 100-case suite counts as much as a 5,000-case one. Its 95% interval is a stratified cluster
bootstrap over the units the area's figures share (stats/bootstrap.py; units per suite in ``profile.yaml``'s
``units``); where a figure cannot be split into its cases (no per-case records, or a formula that is not a sum over
cases) the area falls back to MOVER over the figures' Wilson intervals, assuming independence (Zou & Donner 2008,
*Statistics in Medicine* 27:1693), and says so.

What enters an area: figures over the benchmark's real data that ran in full. A suite that ran on its shipped
samples is left out of every area (and listed); a figure marked incomplete (``not_run`` cases after Ctrl-C, a
category that did not run) is left out of its area, which then says INCOMPLETE; a figure over part of its cases
(``-k``, ``--lf``) enters, and its area says ``(selection)``.
"""


from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..contract.suite import CaseRecord
from ..stats.bootstrap import RESAMPLES, SEED, AreaChange, AreaFigures, FigureParts, cluster_bootstrap_interval, \
    paired_area_test
from ..stats.intervals import dependent_mean_interval, mover_mean_interval
from .profile_mapping import ProfileMapping, load_mapping
from .results_file import ResultsFile

TL_LABEL = "tl_category"


@dataclass(frozen=True)
class Contribution:
    suite: str
    metric: str
    group: str
    value: float  # as it enters the area (1 - value for a lower-is-better figure)
    total: float | None
    inverted: bool = False
    note: str = ""  # the selection warning of the figure ("over N of M cases (selection)")
    #: unit -> (numerator, denominator) summed over the unit's cases, the figure being sum(num) / sum(den); None
    #: when the figure cannot be split into its cases (never serialised: the JSON has ``units``)
    parts: FigureParts | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "metric": self.metric, "group": self.group, "value": self.value,
                "total": self.total, "inverted": self.inverted, "note": self.note,
                "units": len(self.parts) if self.parts is not None else None}


@dataclass(frozen=True)
class LeftOut:
    """A figure the mapping names that did not enter its area, and why (incomplete, shipped samples)."""

    suite: str
    metric: str
    why: str

    def text(self) -> str:
        return f"{self.suite}.{self.metric} ({self.why})"

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "metric": self.metric, "why": self.why}


BOOTSTRAP_METHOD = (f"stratified cluster bootstrap over shared units ({RESAMPLES} resamples, seed {SEED}; "
                    "Davison & Hinkley 1997, 3.8)")
MOVER_METHOD = "MOVER over the figures' Wilson intervals, figures assumed independent (Zou & Donner 2008)"
CONSTANT_METHOD = ("every case of every figure has the same outcome, so the bootstrap sees no spread: the mean of "
                   "the figures' Wilson bounds (figures taken as fully dependent)")


@dataclass(frozen=True)
class AreaFigure:
    area: str
    title: str
    value: float | None
    interval95: tuple[float, float] | None
    contributing: tuple[Contribution, ...] = ()
    baseline: "AreaFigure | None" = None
    #: how the interval was made (``BOOTSTRAP_METHOD``, ``MOVER_METHOD`` with the reason, ...); "" without one
    interval_method: str = ""
    #: named figures that did not enter (an incomplete figure); the area is then INCOMPLETE
    left_out: tuple[LeftOut, ...] = ()
    #: the paired test of the change against the baseline (None without a baseline)
    change: AreaChange | None = None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.value is None or self.baseline.value is None:
            return None
        return self.value - self.baseline.value

    @property
    def incomplete(self) -> str:
        if not self.left_out:
            return ""
        return "INCOMPLETE: left out " + "; ".join(item.text() for item in self.left_out)

    @property
    def selection(self) -> str:
        if not any(c.note for c in self.contributing):
            return ""
        # a sampled run's figures say "estimated from n of N cases": estimates, not a selection
        return "(estimated)" if all(c.note.startswith("estimated") for c in self.contributing if c.note) \
            else "(selection)"

    def notes(self) -> list[str]:
        return [note for note in (self.incomplete, self.selection) if note]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "area": self.area, "title": self.title, "value": self.value,
            "interval95": list(self.interval95) if self.interval95 else None,
            "interval_method": self.interval_method or None,
            "contributing": [c.to_json() for c in self.contributing],
            "left_out": [item.to_json() for item in self.left_out],
            "incomplete": self.incomplete or None, "selection": bool(self.selection),
        }
        if self.baseline is not None:
            data["baseline"] = {"value": self.baseline.value,
                                "interval95": list(self.baseline.interval95) if self.baseline.interval95 else None,
                                "contributing": [c.to_json() for c in self.baseline.contributing]}
            data["delta"] = self.delta
            data["change"] = self.change.to_json() if self.change is not None else None
        return data


@dataclass(frozen=True)
class Profile:
    areas: tuple[AreaFigure, ...]
    #: TL-Training failure category -> failed cases, over every suite that labels them; and per suite
    tl_failures: Mapping[str, int] = field(default_factory=dict)
    tl_by_suite: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    baseline_tl_failures: Mapping[str, int] | None = None
    #: suites the mapping names that ran on their shipped samples: left out of every area
    sample_suites: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"areas": [area.to_json() for area in self.areas],
                "left_out_sample_suites": list(self.sample_suites),
                "tl_failures": {"total": sum(self.tl_failures.values()), "categories": dict(self.tl_failures),
                                "by_suite": {s: dict(t) for s, t in self.tl_by_suite.items()},
                                "baseline": dict(self.baseline_tl_failures)
                                if self.baseline_tl_failures is not None else None}}


def _find(metrics: Sequence[Any], name: str) -> Any:
    """The figure named ``name``: the "aggregate" row when several groups share the name, else the first."""
    matches = [m for m in metrics if m.name == name]
    if not matches:
        return None
    return next((m for m in matches if m.group == "aggregate"), matches[0])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _value_totals(contributions: Sequence[Contribution]) -> list[tuple[float, float | None]]:
    return [(c.value, c.total) for c in contributions]


def _area_figures(parts: Sequence[Contribution]) -> AreaFigures:
    return AreaFigures(tuple(c.suite for c in parts), tuple(c.parts or {} for c in parts),
                       tuple(c.inverted for c in parts))


def interval_of(parts: Sequence[Contribution]) -> tuple[tuple[float, float] | None, str]:
    """The area's 95% interval and how it was made (see the module docstring)."""
    if not parts:
        return None, ""
    unsplit = [c for c in parts if c.parts is None]
    if unsplit:
        interval = mover_mean_interval(_value_totals(parts))
        names = ", ".join(f"{c.suite}.{c.metric}" for c in unsplit)
        return interval, (f"{MOVER_METHOD}: {names} cannot be split into cases" if interval else "")
    interval = cluster_bootstrap_interval(_area_figures(parts))
    if interval is not None and interval[1] - interval[0] <= 1e-12:
        return dependent_mean_interval(_value_totals(parts)), CONSTANT_METHOD
    return interval, BOOTSTRAP_METHOD if interval else ""


# -- each figure split into its cases' units -----------------------------------------------------------------------
class CaseSplit:
    """A suite's records each aggregated alone with the suite's own ``aggregate``, once per record (memoised: an
    area's figures and the baseline's reuse them)."""

    def __init__(self, aggregate: Callable[[Sequence[Any]], Sequence[Any]], records: Sequence[Any]):
        self.aggregate = aggregate
        self.records = list(records)
        self._alone: dict[int, dict[tuple[str, Any], Any] | None] = {}

    def alone(self, index: int) -> dict[tuple[str, Any], Any]:
        if index not in self._alone:
            figures = self.aggregate([self.records[index]])
            self._alone[index] = {((m.group or ""), m.name): m for m in figures}
        return self._alone[index]


def figure_parts(split: CaseSplit, metric: Any, unit_of: Callable[[str], str]) -> FigureParts | None:
    """The figure as a ratio of sums over its cases, grouped by unit: each case (each sample of it, with
    ``--toolbench-repeat``) aggregated alone with the suite's own ``aggregate`` gives its numerator and denominator
    (a count: correct and total; a mean over cases: its value over 1). None when those do not add up to the
    figure (a formula that is not a sum over cases, say) or the aggregation cannot take one case alone."""
    group, name = metric.group or "", metric.name
    value = _number(metric.value)
    if value is None:
        return None
    indexes = range(len(split.records))
    if group == "category" and any(r.category == name for r in split.records):
        indexes = [i for i in indexes if split.records[i].category == name]  # a category's figure: its own cases
        by_outcome = _by_outcome(split, indexes, metric, group, name, unit_of)
        if by_outcome is not None:
            return by_outcome
    parts: dict[str, list[float]] = {}
    try:
        for index in indexes:
            alone = split.alone(index).get((group, name))
            if alone is None:
                continue
            correct, total, case_value = (_number(alone.correct), _number(alone.total), _number(alone.value))
            if correct is not None and total is not None:
                num, den = correct, total
            elif case_value is not None and total == 1:
                num, den = case_value, 1.0
            elif not total:
                continue  # the figure does not cover this case
            else:
                return None
            if den == 0 and num == 0:
                continue
            sums = parts.setdefault(unit_of(split.records[index].case_id), [0.0, 0.0])
            sums[0] += num
            sums[1] += den
    except Exception:  # noqa: BLE001 - an aggregation that cannot take one case alone: no split, MOVER instead
        return None
    numerator, denominator = sum(v[0] for v in parts.values()), sum(v[1] for v in parts.values())
    if not parts or denominator <= 0 or abs(numerator / denominator - value) > 1e-6:
        return None
    return {unit: (v[0], v[1]) for unit, v in parts.items()}


#: cases of each outcome aggregated alone to confirm that a category's figure is its share of passed cases
SPOT_CHECKS = 3


def _by_outcome(split: CaseSplit, indexes: Sequence[int], metric: Any, group: str, name: Any,
                unit_of: Callable[[str], str]) -> FigureParts | None:
    """A category's figure that is the share of its cases that passed (``correct`` the passed cases, ``total``
    all of them), split by the cases' outcomes without aggregating each case alone (thousands of calls for BFCL):
    confirmed on :data:`SPOT_CHECKS` passed and failed cases aggregated alone (1/1 and 0/1), else None (the
    general split then runs)."""
    correct, total = _number(metric.correct), _number(metric.total)
    records = [split.records[i] for i in indexes]
    if correct is None or total != len(records) or correct != sum(r.passed for r in records):
        return None
    passed = [i for i in indexes if split.records[i].passed][:SPOT_CHECKS]
    failed = [i for i in indexes if not split.records[i].passed][:SPOT_CHECKS]
    try:
        for index, expected in [(i, 1.0) for i in passed] + [(i, 0.0) for i in failed]:
            alone = split.alone(index).get((group, name))
            if alone is None or _number(alone.total) != 1 or _number(alone.correct) != expected:
                return None
    except Exception:  # noqa: BLE001 - as in figure_parts: the general split decides
        return None
    parts: dict[str, list[float]] = {}
    for record in records:
        sums = parts.setdefault(unit_of(record.case_id), [0.0, 0.0])
        sums[0] += 1.0 if record.passed else 0.0
        sums[1] += 1.0
    return {unit: (v[0], v[1]) for unit, v in parts.items()}


# -- building the areas ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Suite:
    name: str
    metrics: Sequence[Any]
    labels: Mapping[str, Any]
    samples: bool
    split: CaseSplit | None = None


def _by_suite(records: Iterable[CaseRecord]) -> dict[str, list[CaseRecord]]:
    by_suite: dict[str, list[CaseRecord]] = {}
    for record in records:
        by_suite.setdefault(record.suite, []).append(record)
    return by_suite


def _suites(summary: Any, records: Iterable[CaseRecord] = ()) -> list[_Suite]:
    """Each suite of a RunSummary, with its records and its aggregation."""
    by_suite = _by_suite(records)
    return [_Suite(s.name, s.metrics, s.labels, s.is_sample, _split(s.aggregate, by_suite.get(s.name, ())))
            for s in summary.suites]


def _baseline_suites(baseline: ResultsFile, aggregates: Mapping[str, Any], comparison: Any = None) -> list[_Suite]:
    """Each suite of a results file, with its cases, aggregated by this run's aggregation of the same suite. With
    the run's ``comparison``: a suite compared on part of the baseline's cases (a ``-k`` rerun, a sampled run) keeps
    only those cases, and its figures are the ones the comparison compared with (the baseline over the same cases;
    for a sampled run, this run's estimate minus the paired difference), so an area's change is the same difference
    as its figures'."""
    by_suite = _by_suite(baseline.cases)
    suites = []
    for name, s in baseline.suites.items():
        records, metrics = by_suite.get(name, ()), s.metrics
        compared = comparison.suites.get(name) if comparison is not None else None
        if compared is not None and (compared.sampled_cases or compared.compared_cases < compared.baseline_cases):
            same = {(d.group, d.name): d for d in compared.metrics.values() if d.baseline_full is not None}
            metrics = [dataclasses.replace(m, value=same[(m.group, m.name)].baseline) if (m.group, m.name) in same
                       else m for m in metrics]
            ran = {d for d in compared.ran_cases}
            records = [r for r in records if r.case_id in ran]
        suites.append(_Suite(name, metrics, s.labels, s.samples, _split(aggregates.get(name), records)))
    return suites


def _split(aggregate: Any, records: Sequence[Any]) -> CaseSplit | None:
    return CaseSplit(aggregate, records) if aggregate is not None and records else None


def build_areas(suites: Iterable[_Suite], mapping: ProfileMapping, only: set[tuple[str, str]] | None = None
                ) -> tuple[AreaFigure, ...]:
    """The areas over ``suites``; ``only`` (suite, figure) keeps the baseline on this run's figures."""
    contributions: dict[str, list[Contribution]] = {area: [] for area in mapping.areas}
    left_out: dict[str, list[LeftOut]] = {area: [] for area in mapping.areas}
    for suite in suites:
        if suite.samples:
            continue  # the shipped samples are not the benchmark's figures: listed, never averaged in
        for area, names in mapping.suites.get(suite.name, {}).items():
            for figure in names:
                if only is not None and (suite.name, figure) not in only:
                    continue
                metric = _find(suite.metrics, figure)
                if metric is not None and metric.incomplete:
                    left_out[area].append(LeftOut(suite.name, figure, metric.incomplete))
                    continue
                value = _number(metric.value) if metric is not None else None
                if value is None or (metric.unit or "%") != "%":
                    continue
                value = min(1.0, max(0.0, value))  # a rounded figure may print 1.0000000108 (API-Bank's x100 / 100)
                inverted = metric.better == "lower"
                parts = None
                if suite.split is not None:
                    parts = figure_parts(suite.split, metric,
                                         lambda case_id, name=suite.name: mapping.unit_of(name, case_id))
                contributions[area].append(Contribution(
                    suite.name, figure, metric.group or "", 1 - value if inverted else value,
                    _number(metric.total), inverted, metric.scope or "", parts))
    areas = []
    for area, title in mapping.areas.items():
        parts = contributions[area]
        value = sum(c.value for c in parts) / len(parts) if parts else None
        interval, method = interval_of(parts)
        areas.append(AreaFigure(area, title, value, interval, tuple(parts), interval_method=method,
                                left_out=tuple(left_out[area])))
    return tuple(areas)


def tl_tallies(suites: Iterable[_Suite]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    total: dict[str, int] = {}
    by_suite: dict[str, dict[str, int]] = {}
    for suite in suites:
        tally = suite.labels.get(TL_LABEL) or {}
        if not tally:
            continue
        by_suite[suite.name] = {str(k): int(v) for k, v in tally.items()}
        for category, count in tally.items():
            total[str(category)] = total.get(str(category), 0) + int(count)
    return dict(sorted(total.items(), key=lambda item: (-item[1], item[0]))), by_suite


def _same_figures(area: AreaFigure, old: AreaFigure | None) -> AreaFigure | None:
    """The baseline's figure for ``area`` over exactly the figures that fed it in this run (a baseline that ran more
    suites is compared on the same footing); None when the baseline lacks one of them (not comparable)."""
    if old is None or not area.contributing:
        return None
    order = {(c.suite, c.metric): i for i, c in enumerate(area.contributing)}
    parts = tuple(sorted((c for c in old.contributing if (c.suite, c.metric) in order),
                         key=lambda c: order[(c.suite, c.metric)]))
    if {(c.suite, c.metric) for c in parts} != set(order):
        return None
    interval, method = interval_of(parts)
    return AreaFigure(old.area, old.title, sum(c.value for c in parts) / len(parts), interval, parts,
                      interval_method=method)


def area_change(area: AreaFigure) -> AreaChange | None:
    """The paired test of an area's change against its baseline (same figures, same cases)."""
    old = area.baseline
    if old is None or area.value is None or old.value is None:
        return None
    missing = [f"{c.suite}.{c.metric}" for c in area.contributing + old.contributing if c.parts is None]
    if missing:
        return AreaChange(None, "n/a: no per-case split of " + ", ".join(dict.fromkeys(missing)))
    return paired_area_test(_area_figures(area.contributing), _area_figures(old.contributing))


def build_profile(summary: Any, baseline: ResultsFile | None = None, mapping: ProfileMapping | None = None,
                  records: Iterable[CaseRecord] = (), comparison: Any = None) -> Profile:
    """The run's profile (``summary``: a RunSummary; ``records``: its case records, for the intervals), compared
    with ``baseline`` (a results file) when given: each baseline area is rebuilt from the baseline's
    suites and cases over the same figures as this run's area, or is missing (N/A) when the baseline lacks one of
    them; the change then gets the paired cluster test."""
    mapping = mapping or load_mapping()
    suites = _suites(summary, records)
    areas = build_areas(suites, mapping)
    tl, tl_by_suite = tl_tallies(suites)
    samples = tuple(s.name for s in suites if s.samples and s.name in mapping.suites)
    baseline_tl = None
    if baseline is not None:
        aggregates = {s.name: s.split.aggregate for s in suites if s.split is not None}
        old_suites = _baseline_suites(baseline, aggregates, comparison)
        used = {(c.suite, c.metric) for a in areas for c in a.contributing}
        old_areas = {a.area: a for a in build_areas(old_suites, mapping, only=used)}
        compared = []
        for a in areas:
            with_old = AreaFigure(a.area, a.title, a.value, a.interval95, a.contributing,
                                  _same_figures(a, old_areas.get(a.area)), a.interval_method, a.left_out)
            compared.append(AreaFigure(with_old.area, with_old.title, with_old.value, with_old.interval95,
                                       with_old.contributing, with_old.baseline, with_old.interval_method,
                                       with_old.left_out, area_change(with_old)))
        areas = tuple(compared)
        baseline_tl = tl_tallies(old_suites)[0]
    return Profile(areas, tl, tl_by_suite, baseline_tl, samples)
