"""``suites/profile.yaml``: which figures of which suites feed each capability area, and which cases share a unit
(a query, a conversation). Read beside the shipped suites (:func:`pytest_toolbench.contract.shipped.shipped_suites_folder`:
found, never imported) unless a path is given."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..contract.shipped import shipped_suites_folder

#: The file name of the mapping, beside the shipped suites.
PROFILE_FILE = "profile.yaml"


@dataclass(frozen=True)
class UnitRule:
    """Cases whose id matches ``match`` belong to the unit ``unit.format(**groups)``, each group named in ``modulo``
    taken modulo its number first (RoTBench's noisy files repeat the clean file's queries in order)."""

    match: re.Pattern
    unit: str
    modulo: Mapping[str, int] = field(default_factory=dict)

    def unit_of(self, case_id: str) -> str | None:
        found = self.match.fullmatch(case_id)
        if found is None:
            return None
        groups = {name: (str(int(value) % self.modulo[name]) if name in self.modulo and value is not None
                         and value.isdigit() else value) for name, value in found.groupdict().items()}
        return self.unit.format(**groups)


@dataclass(frozen=True)
class ProfileMapping:
    """``areas``: area id -> title, in order; ``suites``: suite name -> area id -> figure names; ``units``: suite
    name -> the rules that put cases sharing a query or conversation into one unit (first match wins; a case no
    rule matches is a unit of its own)."""

    areas: Mapping[str, str]
    suites: Mapping[str, Mapping[str, tuple[str, ...]]]
    units: Mapping[str, tuple[UnitRule, ...]] = field(default_factory=dict)

    def unit_of(self, suite: str, case_id: str) -> str:
        for rule in self.units.get(suite, ()):
            unit = rule.unit_of(case_id)
            if unit is not None:
                return unit
        return case_id


def default_mapping_path() -> Path:
    return shipped_suites_folder() / PROFILE_FILE


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
    units: dict[str, tuple[UnitRule, ...]] = {}
    for suite, rules in (document.get("units") or {}).items():
        where = f"{source}: units.{suite}"
        if not isinstance(rules, list):
            raise ValueError(f"{where}: expected a list of {{match, unit[, modulo]}} rules")
        parsed = []
        for rule in rules:
            if not isinstance(rule, Mapping) or not isinstance(rule.get("match"), str) \
                    or not isinstance(rule.get("unit"), str):
                raise ValueError(f"{where}: expected a list of {{match, unit[, modulo]}} rules")
            try:
                pattern = re.compile(rule["match"])
            except re.error as error:
                raise ValueError(f"{where}: match {rule['match']!r} is not a regular expression ({error})") from None
            modulo = rule.get("modulo") or {}
            if not isinstance(modulo, Mapping) or not all(isinstance(v, int) and v > 0 for v in modulo.values()):
                raise ValueError(f"{where}: modulo: expected group: positive whole number")
            missing = set(re.findall(r"{(\w+)}", rule["unit"])) - set(pattern.groupindex)
            if missing:
                raise ValueError(f"{where}: unit {rule['unit']!r} names {', '.join(sorted(missing))}, not a named "
                                 f"group of {rule['match']!r}")
            parsed.append(UnitRule(pattern, rule["unit"], dict(modulo)))
        units[str(suite)] = tuple(parsed)
    return ProfileMapping(areas, suites, units)


def load_mapping(path: Path | None = None) -> ProfileMapping:
    path = path or default_mapping_path()
    return parse_mapping(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))
