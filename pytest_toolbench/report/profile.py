"""What can it do? One capability profile per run across suites (pure functions; the mapping is data).

ToLeaP's five capability areas (tool selection and use; parameter identification and filling; task structure and
output; task execution and completeness; robustness), each built from the named figures of the suites that ran, as
``suites/profile.yaml`` declares them, plus TL-Training's failure categories tallied over every suite that labels
them (``libraries: [tl_failures]``).

An area's value is the unweighted mean of its contributing figures (a figure whose improvement is a fall enters as
``1 - value``), so a 100-case suite counts as much as a 5,000-case one. Its 95% interval combines the figures' own
95% Wilson intervals (each figure as its value over its ``total`` of cases, exact for a count and conservative for a
mean of values in [0, 1]) by MOVER, the square-and-add method for a sum of independent estimates (Zou & Donner
2008, *Statistics in Medicine* 27:1693; Newcombe's method 10 is the difference case of it); it assumes the figures of
one area come from different cases, which the mapping ensures. When a contributing figure has no ``total`` (a micro
F1 over pooled counts), the area has no interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from .stats import Z95, wilson_interval

#: The file name of the mapping, beside the shipped suites.
PROFILE_FILE = "profile.yaml"
TL_LABEL = "tl_category"


def _get(metric: Any, name: str, default: Any = None) -> Any:
    if isinstance(metric, Mapping):
        return metric.get(name, default)
    return getattr(metric, name, default)


@dataclass(frozen=True)
class ProfileMapping:
    """``areas``: area id -> title, in order; ``suites``: suite name -> area id -> figure names."""

    areas: Mapping[str, str]
    suites: Mapping[str, Mapping[str, tuple[str, ...]]]


def default_mapping_path() -> Path:
    import pytest_toolbench.suites as shipped  # the suites folder, in a checkout and in the wheel alike

    return Path(shipped.__file__).resolve().parent / PROFILE_FILE


def parse_mapping(document: Any, source: str = PROFILE_FILE) -> ProfileMapping:
    """The mapping from its YAML document; a malformed one is a ``ValueError`` naming the file and the entry."""
    if not isinstance(document, Mapping) or not isinstance(document.get("areas"), Mapping):
        raise ValueError(f"{source}: expected a mapping with 'areas' (id: title) and 'suites'")
    areas = {str(key): str(title) for key, title in document["areas"].items()}
    suites: dict[str, dict[str, tuple[str, ...]]] = {}
    for suite, declared in (document.get("suites") or {}).items():
        if not isinstance(declared, Mapping):
            raise ValueError(f"{source}: suites.{suite}: expected area: [figure names]")
        suites[str(suite)] = {}
        for area, names in declared.items():
            if area not in areas:
                raise ValueError(f"{source}: suites.{suite}.{area}: no such area (areas: {', '.join(areas)})")
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                raise ValueError(f"{source}: suites.{suite}.{area}: expected a list of figure names")
            suites[str(suite)][str(area)] = tuple(names)
    return ProfileMapping(areas, suites)


def load_mapping(path: Path | None = None) -> ProfileMapping:
    path = path or default_mapping_path()
    return parse_mapping(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))


@dataclass(frozen=True)
class Contribution:
    suite: str
    metric: str
    group: str
    value: float  # as it enters the area (1 - value for a lower-is-better figure)
    total: float | None
    inverted: bool = False
    note: str = ""  # incomplete, selection or sample-data warnings of the figure

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "metric": self.metric, "group": self.group, "value": self.value,
                "total": self.total, "inverted": self.inverted, "note": self.note}


@dataclass(frozen=True)
class AreaFigure:
    area: str
    title: str
    value: float | None
    interval95: tuple[float, float] | None
    contributing: tuple[Contribution, ...] = ()
    baseline: "AreaFigure | None" = None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.value is None or self.baseline.value is None:
            return None
        return self.value - self.baseline.value

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "area": self.area, "title": self.title, "value": self.value,
            "interval95": list(self.interval95) if self.interval95 else None,
            "contributing": [c.to_json() for c in self.contributing],
        }
        if self.baseline is not None:
            data["baseline"] = {"value": self.baseline.value,
                                "interval95": list(self.baseline.interval95) if self.baseline.interval95 else None,
                                "contributing": [c.to_json() for c in self.baseline.contributing]}
            data["delta"] = self.delta
        return data


@dataclass(frozen=True)
class Profile:
    areas: tuple[AreaFigure, ...]
    #: TL-Training failure category -> failed cases, over every suite that labels them; and per suite
    tl_failures: Mapping[str, int] = field(default_factory=dict)
    tl_by_suite: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    baseline_tl_failures: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"areas": [area.to_json() for area in self.areas],
                "tl_failures": {"total": sum(self.tl_failures.values()), "categories": dict(self.tl_failures),
                                "by_suite": {s: dict(t) for s, t in self.tl_by_suite.items()},
                                "baseline": dict(self.baseline_tl_failures)
                                if self.baseline_tl_failures is not None else None}}


def _find(metrics: Sequence[Any], name: str) -> Any:
    """The figure named ``name``: the "aggregate" row when several groups share the name, else the first."""
    matches = [m for m in metrics if _get(m, "name") == name]
    if not matches:
        return None
    return next((m for m in matches if _get(m, "group") == "aggregate"), matches[0])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def area_interval(contributions: Sequence[Contribution], z: float = Z95) -> tuple[float, float] | None:
    """MOVER (Zou & Donner 2008) for the mean of independent figures: each figure's own Wilson interval (its value
    over its ``total``), its distances below and above the value squared and added, over the number of figures."""
    if not contributions or any(not c.total or c.total <= 0 for c in contributions):
        return None
    k = len(contributions)
    mean = sum(c.value for c in contributions) / k
    below = above = 0.0
    for c in contributions:
        low, high = wilson_interval(c.value * c.total, c.total, z)
        below += (c.value - low) ** 2
        above += (high - c.value) ** 2
    return max(0.0, mean - math.sqrt(below) / k), min(1.0, mean + math.sqrt(above) / k)


def _suites(summary: Any) -> list[tuple[str, Sequence[Any], Mapping[str, Any], bool]]:
    """(name, metrics, labels, samples) of each suite, from a RunSummary or a results file's ``suites`` object."""
    if isinstance(summary, Mapping):
        return [(name, body.get("metrics") or [], body.get("labels") or {}, bool(body.get("samples")))
                for name, body in summary.items() if isinstance(body, Mapping)]
    return [(s.name, s.metrics, s.labels, s.is_sample) for s in summary.suites]


def build_areas(suites: Iterable[tuple[str, Sequence[Any], Mapping[str, Any], bool]], mapping: ProfileMapping
                ) -> tuple[AreaFigure, ...]:
    contributions: dict[str, list[Contribution]] = {area: [] for area in mapping.areas}
    for name, metrics, _, samples in suites:
        for area, names in mapping.suites.get(name, {}).items():
            for figure in names:
                metric = _find(metrics, figure)
                value = _number(_get(metric, "value")) if metric is not None else None
                if value is None or (_get(metric, "unit", "%") or "%") != "%":
                    continue
                value = min(1.0, max(0.0, value))  # a rounded figure may print 1.0000000108 (API-Bank's x100 / 100)
                inverted = _get(metric, "better", "higher") == "lower"
                notes = [_get(metric, "incomplete", "") or "", _get(metric, "scope", "") or "",
                         "shipped samples" if samples else ""]
                contributions[area].append(Contribution(
                    name, figure, _get(metric, "group", "") or "", 1 - value if inverted else value,
                    _number(_get(metric, "total")), inverted, "; ".join(n for n in notes if n)))
    areas = []
    for area, title in mapping.areas.items():
        parts = contributions[area]
        value = sum(c.value for c in parts) / len(parts) if parts else None
        areas.append(AreaFigure(area, title, value, area_interval(parts), tuple(parts)))
    return tuple(areas)


def tl_tallies(suites: Iterable[tuple[str, Sequence[Any], Mapping[str, Any], bool]]
               ) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    total: dict[str, int] = {}
    by_suite: dict[str, dict[str, int]] = {}
    for name, _, labels, _ in suites:
        tally = labels.get(TL_LABEL) or {}
        if not tally:
            continue
        by_suite[name] = {str(k): int(v) for k, v in tally.items()}
        for category, count in tally.items():
            total[str(category)] = total.get(str(category), 0) + int(count)
    return dict(sorted(total.items(), key=lambda item: (-item[1], item[0]))), by_suite


def _same_figures(area: AreaFigure, old: AreaFigure | None) -> AreaFigure | None:
    """The baseline's figure for ``area`` over exactly the figures that fed it in this run (a baseline that ran more
    suites is compared on the same footing); None when the baseline lacks one of them (not comparable)."""
    if old is None or not area.contributing:
        return None
    wanted = {(c.suite, c.metric) for c in area.contributing}
    parts = tuple(c for c in old.contributing if (c.suite, c.metric) in wanted)
    if {(c.suite, c.metric) for c in parts} != wanted:
        return None
    return AreaFigure(old.area, old.title, sum(c.value for c in parts) / len(parts), area_interval(parts), parts)


def build_profile(summary: Any, baseline: Mapping[str, Any] | None = None, mapping: ProfileMapping | None = None
                  ) -> Profile:
    """The run's profile (``summary``: a RunSummary), compared with ``baseline`` (a results file's document) when
    given: each baseline area is rebuilt from the baseline's suites over the same figures as this run's area, or
    is missing (N/A) when the baseline lacks one of them."""
    mapping = mapping or load_mapping()
    suites = _suites(summary)
    areas = build_areas(suites, mapping)
    tl, tl_by_suite = tl_tallies(suites)
    baseline_tl = None
    if baseline is not None:
        old_suites = _suites(baseline.get("suites") or {})
        old_areas = {a.area: a for a in build_areas(old_suites, mapping)}
        areas = tuple(AreaFigure(a.area, a.title, a.value, a.interval95, a.contributing,
                                 _same_figures(a, old_areas.get(a.area)))
                      for a in areas)
        baseline_tl = tl_tallies(old_suites)[0]
    return Profile(areas, tl, tl_by_suite, baseline_tl)
