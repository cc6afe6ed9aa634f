"""Suite definitions: each suite folder's ``suite.yaml``, validated with JSON Schema (the schema:
:mod:`.suite_schema`; its words and the misplaced-field error: :mod:`.schema_words`; options: :mod:`.suite_options`;
YAML reading: :mod:`.yaml_files`)."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import DataError
from .schema_words import field_locations, misplaced_field_error, schema_table, where_words
from .suite_options import OptionError, _shown, accepts, option_problem
from .suite_schema import (HANDLER_LIBRARY, IDENTIFIER, KNOWN_DEFECTS_SCHEMA, LIBRARIES, PROMPT_STYLES,
                           SUITE_MARKER_PREFIX, SUITE_SCHEMA, suite_marker)
from .yaml_files import _line_of, load_yaml

__all__ = ["DEFINITION_NAME", "HANDLER_LIBRARY", "IDENTIFIER", "KNOWN_DEFECTS_SCHEMA", "LIBRARIES", "OptionError",
           "PROMPT_STYLES", "SUITE_MARKER_PREFIX", "SUITE_SCHEMA", "SuiteDefinition", "accepts", "field_locations",
           "find_definitions", "load_definition", "load_yaml", "misplaced_field_error", "option_problem",
           "schema_table", "suite_marker", "where_words", "with_options"]


@dataclass(frozen=True)
class SuiteDefinition:
    """A parsed and validated ``suite.yaml``. ``raw`` is what the scorer reads: the document with ``options`` as
    ``{key: value}`` (the declared default, or the run's override); ``option_specs`` keeps each option's declaration
    (``default``, ``schema``, ``description``)."""

    path: Path
    raw: Mapping[str, Any]
    option_specs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.raw["name"]

    @property
    def title(self) -> str:
        return self.raw["title"]

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def scorer(self) -> str:
        return self.raw["scorer"]

    @property
    def categories(self) -> list[str]:
        return [c["name"] for c in self.raw["categories"]]

    @property
    def data_folder(self) -> str:
        return self.raw["data"]["folder"]

    @property
    def samples_dir(self) -> Path:
        return self.folder / self.raw["data"].get("samples", "samples")

    @property
    def upstream(self) -> Mapping[str, str]:
        return self.raw["data"].get("upstream", {})

    @property
    def data_files(self) -> dict[str, tuple[str, str]]:
        """Local relative path -> (sha256, upstream path relative to ``base_url``) of the files expected in the data
        folder; ``download: true`` entries are not among them (``data.entries.download_entries`` reads those)."""
        files = {}
        for local, entry in self.raw["data"].get("files", {}).items():
            if isinstance(entry, dict) and entry.get("download") is True:
                continue
            if isinstance(entry, str):
                files[local] = (entry, local)
            else:
                files[local] = (entry["sha256"], entry["source"])
        return files

    def marker_descriptions(self) -> dict[str, str]:
        """Every marker this suite declares, with its description: the suite's name, each category, each keyword
        named under ``markers:``, and each family of data-derived keywords under its label (``structure<N>``)."""
        described = {self.name: f"every case of the suite {self.title}",
                     suite_marker(self.name): f"every case of the suite {self.title}, and no other suite's"}
        for category in self.raw["categories"]:
            described.setdefault(category["name"], category.get("description")
                                 or f"{self.name}: the cases of the category {category['name']}")
        for entry in self.raw.get("markers") or ():
            for name in entry.get("names") or (entry["label"],):
                described.setdefault(name, f"{self.name}: {entry['description']}")
        return described

    def keyword_description(self, name: str) -> str | None:
        """The description of a marker name the suite's cases carry: declared by name, or matched by a family's
        pattern; None when the suite does not declare it."""
        import re

        declared = self.marker_descriptions()
        if name in declared:
            return declared[name]
        for entry in self.raw.get("markers") or ():
            if "pattern" in entry and re.fullmatch(entry["pattern"], name):
                return f"{self.name}: {entry['description']} ({entry['label']})"
        return None

    @property
    def max_tokens(self) -> int:
        return int(self.raw["generation"]["max_tokens"])

    @property
    def generation(self) -> dict[str, Any]:
        """suite.yaml ``generation:`` (``max_tokens``, optional ``temperature``, ``context_reserve`` and ``prompt``)."""
        return dict(self.raw["generation"])

    @property
    def prompt_style(self) -> str:
        """suite.yaml ``generation.prompt``: one of :data:`PROMPT_STYLES` (default ``chat``)."""
        return str(self.raw["generation"].get("prompt", "chat"))

    @property
    def handler_library(self) -> str | None:
        """suite.yaml ``generation.handlers``: the handler library of an ``official_handler`` suite, or None."""
        value = self.raw["generation"].get("handlers")
        return str(value) if value else None

    def known_defects(self) -> dict[str, str]:
        path = self.folder / self.raw.get("known_defects", "known_defects.yaml")
        if not path.is_file():
            return {}
        return dict(load_yaml(path, KNOWN_DEFECTS_SCHEMA) or {})


#: libyaml's safe loader when PyYAML has it (about 10x faster on the long ``files:`` lists), else the Python one.
def load_definition(path: Path) -> SuiteDefinition:
    """Parse and validate a ``suite.yaml``; each option's default must match its schema (an ``OptionError``
    naming the file, the line and the option otherwise)."""
    try:
        document = load_yaml(path, SUITE_SCHEMA)
    except DataError as error:
        raise misplaced_field_error(path) or error from None
    _check_marker_names(path, document)
    specs = dict(document.get("options") or {})
    for key, spec in specs.items():
        problem = option_problem(spec, spec["default"])
        if problem is not None:
            where = f"options/{key}/default" if problem[0] == "value" else f"options/{key}/schema"
            text = path.read_text(encoding="utf-8")
            what = (f"the default {_shown(spec['default'])} of {document['name']}.{key} is not accepted: it must be "
                    f"{accepts(spec['schema'])}") if problem[0] == "value" else f"not a JSON Schema: {problem[1]}"
            raise OptionError(path, what, line=_line_of(text, where), field=where)
    raw = {**document, "options": {key: spec["default"] for key, spec in specs.items()}} if specs else document
    return SuiteDefinition(path=path, raw=raw, option_specs=specs)


def _check_marker_names(path: Path, document: Mapping[str, Any]) -> None:
    """No marker name the suite declares (its name, a category, a keyword) may look like another suite's
    ``suite_<name>`` marker; the error names the file, the line and the field."""
    named = [("name", document["name"])]
    named += [(f"categories/{i}/name", c["name"]) for i, c in enumerate(document["categories"])]
    for i, entry in enumerate(document.get("markers") or ()):
        named += [(f"markers/{i}/names/{j}", n) for j, n in enumerate(entry.get("names") or ())]
    for where, name in named:
        if name.startswith(SUITE_MARKER_PREFIX):
            raise DataError(path, f"{name!r} starts with {SUITE_MARKER_PREFIX!r}, the prefix of the marker each suite's "
                                  f"items carry (-m {suite_marker('<name>')} selects one suite): choose another name",
                            line=_line_of(path.read_text(encoding="utf-8"), where), field=where)


def with_options(definition: SuiteDefinition, overrides: Mapping[str, Any]) -> SuiteDefinition:
    """The definition with a run's ``--toolbench-suite-option`` values. Only declared keys may change (a misspelt
    key is an error, not a silently ignored setting), and each value must match the option's schema: an
    ``OptionError`` naming ``SUITE.KEY``, the value and what the option accepts."""
    specs = definition.option_specs
    unknown = sorted(set(overrides) - set(specs))
    if unknown:
        raise OptionError(definition.path, f"--toolbench-suite-option={definition.name}.{unknown[0]}=…: suite "
                                           f"{definition.name!r} has no option {unknown[0]!r} (its options: "
                                           f"{', '.join(sorted(specs)) or 'none'})")
    for key, value in overrides.items():
        if option_problem(specs[key], value) is not None:
            raise OptionError(definition.path, f"--toolbench-suite-option={definition.name}.{key}={_shown(value)}: "
                                               f"not accepted: {definition.name}.{key} must be "
                                               f"{accepts(specs[key]['schema'])}")
    values = {**definition.raw.get("options", {}), **overrides}
    return SuiteDefinition(definition.path, {**definition.raw, "options": values}, specs)


_SKIPPED_FOLDERS = ("*.egg", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}", "__pycache__")
DEFINITION_NAME = "suite.yaml"


def find_definitions(paths: Iterable[Path | str]) -> list[Path]:
    """The ``suite.yaml`` files a run over ``paths`` (pytest's arguments, ``::`` node parts allowed) can collect:
    beside a given file, or anywhere below a given folder, skipping hidden folders, virtual environments and
    pytest's default ``norecursedirs``. Paths that do not exist (``--pyargs`` names) are ignored."""
    found: dict[Path, None] = {}
    for given in paths:
        path = Path(str(given).split("::", 1)[0])
        if path.is_file():
            candidate = path if path.name == DEFINITION_NAME else path.parent / DEFINITION_NAME
            if candidate.is_file():
                found[candidate.resolve()] = None
        elif path.is_dir():
            for root, folders, files in os.walk(path):
                folders[:] = sorted(f for f in folders if not _skipped(Path(root) / f))
                if DEFINITION_NAME in files:
                    found[(Path(root) / DEFINITION_NAME).resolve()] = None
    return list(found)


def _skipped(folder: Path) -> bool:
    name = folder.name
    return (name.startswith(".") or any(fnmatch.fnmatch(name, pattern) for pattern in _SKIPPED_FOLDERS)
            or (folder / "pyvenv.cfg").is_file())
