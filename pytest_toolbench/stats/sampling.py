"""``--toolbench-sample``: a stratified random sample of a suite's cases, the same on every machine.

The design (Cochran, *Sampling Techniques*, 3rd ed., 1977, ch. 5: stratified random sampling):

- **strata** are the suite's categories; **units** are what is drawn: a case, or a whole conversation group that a
  suite declares with ``sampling_unit(case_id, category) -> str`` (BFCL memory: every question of one scenario,
  which run the same prerequisite conversations), so a unit is never split; a unit lies in one category. (Every
  other interactive case is one conversation already: a BFCL multi-turn entry, an ACEBench agent dialogue, a
  WildToolBench task with its dialogue so far);
- **allocation** is proportional (``n_h = N_h * n / N``, largest remainders, so that they add up to the n asked for),
  with at least :data:`MINIMUM_PER_STRATUM` units in every stratum (all of a smaller one): a stratum always has
  cases to estimate its rate from, and two or more, so its variance can be estimated;
- **selection** within a stratum is simple random sampling without replacement: the units with the smallest keyed
  hash ``sha256(seed, suite, stratum, unit)``. It depends on nothing but the seed and the unit ids (not on the
  order the data are read in, the process, ``PYTHONHASHSEED`` or the xdist worker), so a sampled run, its rerun, a
  run on another machine and a full baseline pair case by case; and for one seed a larger sample contains a smaller
  one.

The figures of a sampled run are estimates of the full benchmark's: see :mod:`.estimation`. The run's side (a
suite's declared ``sampling_unit``) is ``pytest_toolbench.run.sampling``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

#: Units drawn at least from every stratum (all of a stratum with fewer).
MINIMUM_PER_STRATUM = 5
#: ``--toolbench-sample-seed`` when none is given: fixed, so that two sampled runs pair without being told to.
DEFAULT_SEED = 0


@dataclass(frozen=True)
class SampleSpec:
    """``--toolbench-sample``: a number of cases (``count``) or a share of them (``fraction``), and the seed."""

    count: int | None = None
    fraction: float | None = None
    seed: int = DEFAULT_SEED
    minimum: int = MINIMUM_PER_STRATUM

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "fraction": self.fraction, "seed": self.seed, "minimum": self.minimum}

    @property
    def text(self) -> str:
        return f"{self.count}" if self.count is not None else f"{self.fraction:g}"


def parse_sample(given: Any, seed: Any = DEFAULT_SEED) -> SampleSpec:
    """``N`` (a whole number of cases, at least 1) or ``FRACTION`` (0 < f < 1, e.g. ``0.1`` or ``10%``); raises
    ``ValueError`` with the reason."""
    text = str(given).strip()
    try:
        seed_value = int(str(seed).strip())
    except ValueError:
        raise ValueError(f"--toolbench-sample-seed={seed}: expected a whole number") from None
    if text.endswith("%"):
        try:
            share = float(text[:-1]) / 100
        except ValueError:
            share = float("nan")
        if not 0 < share < 1:
            raise ValueError(f"--toolbench-sample={given}: expected a percentage above 0 and below 100")
        return SampleSpec(fraction=share, seed=seed_value)
    if text.isascii() and text.isdigit():
        if int(text) < 1:
            raise ValueError(f"--toolbench-sample={given}: expected at least 1 case")
        return SampleSpec(count=int(text), seed=seed_value)
    try:
        share = float(text)
    except ValueError:
        raise ValueError(f"--toolbench-sample={given}: expected a number of cases (e.g. 400) or a fraction "
                         "(e.g. 0.1 or 10%)") from None
    if not 0 < share < 1 or not math.isfinite(share):
        raise ValueError(f"--toolbench-sample={given}: a fraction must be above 0 and below 1 (a whole number is a "
                         "number of cases)")
    return SampleSpec(fraction=share, seed=seed_value)


def allocate(sizes: Mapping[str, int], spec: SampleSpec) -> dict[str, int]:
    """Units to draw per stratum: proportional to the stratum's size (largest remainders, ties by stratum name),
    at least ``spec.minimum`` (all of a smaller stratum), never more than the stratum has. With a count, ``count``
    is in cases; it is turned into the same share of units."""
    total = sum(sizes.values())
    if total == 0:
        return {name: 0 for name in sizes}
    share = spec.fraction if spec.fraction is not None else min(1.0, (spec.count or 0) / total)
    wanted = share * total
    quotas = {name: size * share for name, size in sizes.items()}
    taken = {name: int(math.floor(quota)) for name, quota in quotas.items()}
    left = int(round(wanted)) - sum(taken.values())
    for name in sorted(quotas, key=lambda n: (-(quotas[n] - taken[n]), n))[:max(0, left)]:
        taken[name] += 1
    return {name: min(size, max(taken[name], min(spec.minimum, size))) for name, size in sizes.items()}


def unit_key(seed: int, suite: str, stratum: str, unit: str) -> bytes:
    """The keyed hash that orders a stratum's units: the sample is the units with the smallest keys."""
    return hashlib.sha256(f"{seed}\x1f{suite}\x1f{stratum}\x1f{unit}".encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class Design:
    """What was drawn from one suite: per stratum its units and cases in the population and in the sample, and
    (for suites whose units group several cases) each sampled case's unit. JSON-safe (``to_json``)."""

    suite: str
    spec: SampleSpec
    #: stratum -> [units in population, cases in population, units sampled, cases sampled]
    strata: Mapping[str, Sequence[int]]
    #: case id -> unit id, only for cases whose unit is not the case itself
    units: Mapping[str, str]

    @property
    def population(self) -> int:
        return sum(row[1] for row in self.strata.values())

    @property
    def sampled(self) -> int:
        return sum(row[3] for row in self.strata.values())

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, **self.spec.to_json(),
                "strata": {name: list(row) for name, row in sorted(self.strata.items())},
                "units": dict(sorted(self.units.items())), "population": self.population, "sampled": self.sampled,
                "note": self.note()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Design":
        spec = SampleSpec(count=data.get("count"), fraction=data.get("fraction"), seed=int(data.get("seed", 0)),
                          minimum=int(data.get("minimum", MINIMUM_PER_STRATUM)))
        return cls(data["suite"], spec, {k: tuple(v) for k, v in data["strata"].items()}, dict(data.get("units") or {}))

    def note(self) -> str:
        """The line every writer gives: "estimated from n of N cases (seed s)"."""
        return f"estimated from {self.sampled:,} of {self.population:,} cases (seed {self.spec.seed})"


def draw(items: Sequence[Any], spec: SampleSpec, suite: str, stratum_of: Callable[[Any], str],
         case_id_of: Callable[[Any], str], unit_of: Callable[[Any], str] | None = None
         ) -> tuple[list[Any], Design]:
    """The sampled ``items`` (cases or case-index rows, in their given order) and the design. A unit lies in one
    stratum (``ValueError`` otherwise: a suite's ``sampling_unit`` must not join cases of different categories)."""
    unit_of = unit_of or case_id_of
    units_of: dict[str, dict[str, list[Any]]] = {}
    stratum_of_unit: dict[str, str] = {}
    for item in items:
        unit = unit_of(item)
        stratum = stratum_of_unit.setdefault(unit, stratum_of(item))
        if stratum != stratum_of(item):
            raise ValueError(f"suite {suite}: sampling unit {unit!r} joins cases of categories {stratum!r} and "
                             f"{stratum_of(item)!r}; a unit must lie in one category (stratum)")
        units_of.setdefault(stratum, {}).setdefault(unit, []).append(item)
    sizes = {stratum: len(units) for stratum, units in units_of.items()}
    wanted = allocate(sizes, _in_units(spec, items, sizes))
    chosen: set[str] = set()
    strata: dict[str, tuple[int, int, int, int]] = {}
    for stratum, units in units_of.items():
        ranked = sorted(units, key=lambda unit: unit_key(spec.seed, suite, stratum, unit))
        kept = ranked[:wanted[stratum]]
        chosen.update(kept)
        strata[stratum] = (len(units), sum(len(v) for v in units.values()), len(kept),
                           sum(len(units[u]) for u in kept))
    kept_items = [item for item in items if unit_of(item) in chosen]
    grouped = {case_id_of(item): unit_of(item) for item in kept_items if unit_of(item) != case_id_of(item)}
    return kept_items, Design(suite, spec, strata, grouped)


def _in_units(spec: SampleSpec, items: Sequence[Any], unit_sizes: Mapping[str, int]) -> SampleSpec:
    """A count of cases as the same share of units (units of several cases hold more than one case each)."""
    if spec.count is None:
        return spec
    cases, units = len(items), sum(unit_sizes.values())
    if cases == 0 or cases == units:
        return spec
    return SampleSpec(count=max(1, round(spec.count * units / cases)), seed=spec.seed, minimum=spec.minimum)

