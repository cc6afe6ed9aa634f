"""How a suite's aggregate figures combine its other figures, for the paired tests against a baseline.

A suite declares it in ``aggregates.yaml`` beside its ``suite.yaml`` (the core names no suite):

```yaml
figures:                      # figure name -> how it combines other figures of the same suite
  simple: {mean: [simple_python, simple_java, simple_javascript]}       # unweighted mean
  overall: {weights: {non_live: 10, live: 10, multi_turn: 30}}         # weighted mean (weights normalised)
  live: {pooled: [live_simple, live_multiple]}                         # sum(correct) / sum(total)
clusters:                     # cases that share a source are resampled together
  - {pattern: '^multi_turn_(base|miss_func)_(\\d+)$', key: 'multi_turn_\\2'}
```

A component is a figure of the suite: a count or a mean of cases (what the paired tests split per case), or another
declared figure. The report checks, in both runs, that the declaration reproduces the figure's value from its
components' values before it tests anything; a declaration that does not is reported as the reason for ``p n/a``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

DECLARATION = "aggregates.yaml"
COMBINATIONS = ("mean", "weights", "pooled", "weights_over_ran", "sum")


class AggregatesError(ValueError):
    """A declaration that cannot be used (the message names the file and why)."""


@dataclass(frozen=True)
class Combination:
    """One declared figure: ``kind`` is "weights" (``weights`` normalised to sum 1; "mean" is equal weights),
    "pooled" (the components' counts added: weights proportional to each component's cases) or "ran"
    (``weights_over_ran``: the weights renormalised over the components that ran in full in this run, e.g. BFCL's
    Overall over the categories that ran) or "sum" (the weights as given, not normalised: ACEBench's Overall,
    whose official weights add up to 1.0001)."""

    kind: str
    weights: Mapping[str, float]


@dataclass(frozen=True)
class Cluster:
    """Cases whose id matches ``pattern`` share the cluster ``key`` (the match's groups expanded into it). With
    ``modulo``, the first group is a number taken modulo it first (RoTBench's noisy copies of query i sit at
    positions i, i + 105, ...)."""

    pattern: re.Pattern[str]
    key: str
    modulo: int | None = None

    def of(self, case_id: str) -> str | None:
        found = self.pattern.fullmatch(case_id)
        if not found:
            return None
        if self.modulo is None:
            return found.expand(self.key)
        groups = list(found.groups())
        groups[0] = str(int(groups[0]) % self.modulo)
        return re.sub(r"\\(\d)", lambda g: groups[int(g.group(1)) - 1] or "", self.key)


@dataclass(frozen=True)
class AggregatesDeclaration:
    figures: Mapping[str, Combination] = field(default_factory=dict)
    clusters: tuple[Cluster, ...] = ()
    #: why the suite's declaration could not be read ("" when it could, or when there is none)
    problem: str = ""

    def cluster_of(self, case_id: str) -> str:
        """The unit a case is resampled with: its declared cluster, else the case alone. A unit's own name is its
        unit (a figure that counts whole clusters is split per cluster, keyed by it)."""
        if case_id.startswith("cluster:"):
            return case_id
        for cluster in self.clusters:
            key = cluster.of(case_id)
            if key is not None:
                return "cluster:" + key
        return "case:" + case_id


NO_DECLARATION = AggregatesDeclaration()


def load(path: Path) -> AggregatesDeclaration:
    """Read ``aggregates.yaml``; a missing file is no declaration, a broken one an :class:`AggregatesError`."""
    if not path.is_file():
        return NO_DECLARATION
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return parse(raw)
    except (OSError, yaml.YAMLError) as error:
        raise AggregatesError(f"{path}: cannot be read ({type(error).__name__}: {error})") from None
    except AggregatesError as error:
        raise AggregatesError(f"{path}: {error}") from None


def load_or_problem(path: Path) -> AggregatesDeclaration:
    """:func:`load`, a broken file becoming a declaration that says why (the run's results are never lost to it:
    the figures it would have tested say ``p n/a`` with this reason)."""
    try:
        return load(path)
    except AggregatesError as error:
        return AggregatesDeclaration(problem=str(error))


def parse(raw: Mapping[str, Any]) -> AggregatesDeclaration:
    if not isinstance(raw, Mapping):
        raise AggregatesError("not a mapping with 'figures' and 'clusters'")
    unknown = set(raw) - {"figures", "clusters"}
    if unknown:
        raise AggregatesError(f"unknown keys {sorted(unknown)} (expected figures, clusters)")
    figures: dict[str, Combination] = {}
    for name, spec in (raw.get("figures") or {}).items():
        if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in COMBINATIONS:
            raise AggregatesError(f"figure {name!r}: expected one of {', '.join(COMBINATIONS)}, got {spec!r}")
        kind, value = next(iter(spec.items()))
        if kind in ("mean", "pooled"):
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise AggregatesError(f"figure {name!r}: {kind} takes a list of figure names")
            weights = {str(v): 1.0 for v in value}
        else:
            if not isinstance(value, Mapping) or not value or not all(
                    isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 for w in value.values()):
                raise AggregatesError(f"figure {name!r}: weights takes figure name -> positive number")
            weights = {str(k): float(w) for k, w in value.items()}
        if str(name) in weights:
            raise AggregatesError(f"figure {name!r} names itself")
        figures[str(name)] = Combination({"pooled": "pooled", "weights_over_ran": "ran", "sum": "sum"}.get(
            kind, "weights"), weights)
    clusters = []
    for entry in raw.get("clusters") or []:
        try:
            modulo = entry.get("modulo")
            if modulo is not None and (not isinstance(modulo, int) or isinstance(modulo, bool) or modulo < 1):
                raise TypeError(f"modulo must be a positive whole number, got {modulo!r}")
            cluster = Cluster(re.compile(str(entry["pattern"])), str(entry["key"]), modulo)
            if modulo is not None and (cluster.pattern.groups < 1):
                raise TypeError("modulo needs a numbered group in the pattern")
            clusters.append(cluster)
        except (KeyError, TypeError, AttributeError, re.error) as error:
            raise AggregatesError(f"cluster {entry!r}: needs a valid 'pattern' and a 'key' ({error})") from None
    _check_acyclic(figures)
    return AggregatesDeclaration(figures, tuple(clusters))


def _check_acyclic(figures: Mapping[str, Combination]) -> None:
    state: dict[str, int] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == 2 or name not in figures:
            return
        if state.get(name) == 1:
            raise AggregatesError(f"figures combine each other in a cycle: {' -> '.join(path + (name,))}")
        state[name] = 1
        for component in figures[name].weights:
            visit(component, path + (name,))
        state[name] = 2

    for name in figures:
        visit(name, ())
