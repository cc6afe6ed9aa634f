"""Suite definitions: each suite folder's ``suite.yaml``, validated with JSON Schema."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from .data import validate
from .errors import DataError
from .scorer_lib import LIBRARIES

IDENTIFIER = "^[A-Za-z_][A-Za-z0-9_]*$"

SUITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "title", "scorer", "data", "categories", "generation"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": IDENTIFIER},
        "title": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "scorer": {"type": "string", "minLength": 1,
                   "description": "dotted module path, or a name registered through pytest_toolbench_register"},
        "data": {
            "type": "object",
            "required": ["folder"],
            "additionalProperties": False,
            "properties": {
                "folder": {"type": "string", "minLength": 1},
                "samples": {"type": "string"},
                "reuses": {
                    "type": "array",
                    "description": "other suites' data this suite reads (with a shared format library from "
                                   "pytest_toolbench.scorer_lib, never through the other suite's scorer): the suite "
                                   "and its data folder, relative to this suite's data folder",
                    "items": {
                        "type": "object",
                        "required": ["suite", "folder"],
                        "additionalProperties": False,
                        "properties": {"suite": {"type": "string", "pattern": IDENTIFIER},
                                       "folder": {"type": "string", "minLength": 1}},
                    },
                },
                "license": {"type": "string"},
                "upstream": {
                    "type": "object",
                    "required": ["repository", "commit"],
                    "additionalProperties": False,
                    "properties": {
                        "repository": {"type": "string"},
                        "commit": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"},
                        "path": {"type": "string"},
                        "base_url": {"type": "string", "pattern": "^https?://"},
                        "package": {"type": "string", "description": "the official scorer's package, for the record"},
                    },
                },
                "files": {
                    "type": "object",
                    "description": "local relative path -> sha256, or {sha256, source} when the upstream path "
                                   "(relative to base_url) differs from the local one, or {git_blob and/or sha256, "
                                   "source, download: true} for a file not expected in the data folder, fetched at "
                                   "run time from source (an http(s) URL or a path relative to base_url), checked "
                                   "(git_blob: what `git hash-object` prints; a Git LFS pointer is followed) and "
                                   "cached (see pytest_toolbench.datasource)",
                    "additionalProperties": {
                        "oneOf": [
                            {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                            {"type": "object", "required": ["sha256", "source"], "additionalProperties": False,
                             "properties": {"sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                                            "source": {"type": "string", "minLength": 1}}},
                            {"type": "object", "required": ["source", "download"], "additionalProperties": False,
                             "anyOf": [{"required": ["git_blob"]}, {"required": ["sha256"]}],
                             "properties": {"git_blob": {"type": "string", "pattern": "^[0-9a-f]{40}$"},
                                            "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                                            "source": {"type": "string", "minLength": 1},
                                            "download": {"const": True}}},
                        ],
                    },
                },
            },
        },
        "categories": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": IDENTIFIER}},
            },
        },
        "generation": {
            "type": "object",
            "required": ["max_tokens"],
            "additionalProperties": False,
            "properties": {
                "max_tokens": {"type": "integer", "minimum": 512,
                               "description": "the model's output limit for this suite's requests (the run's "
                                              "--toolbench-max-tokens overrides it)"},
                "temperature": {"type": "number", "minimum": 0,
                                "description": "the sampling temperature of the suite's official harness (the "
                                               "run's --toolbench-temperature overrides it); absent: greedy"},
                "context_reserve": {"type": "integer", "minimum": 0,
                                    "description": "tokens left free of the context: an answer gets at most "
                                                   "context - prompt - context_reserve tokens (default 0)"},
            },
        },
        "libraries": {
            "type": "array",
            "uniqueItems": True,
            "description": "scorer libraries (pytest_toolbench.scorer_lib) the suite opts into, e.g. tl_failures: "
                           "TL-Training's failure category and reward on failed cases, and their tallies",
            "items": {"enum": list(LIBRARIES)},
        },
        "known_defects": {"type": "string"},
        "options": {"type": "object"},
    },
}

KNOWN_DEFECTS_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "additionalProperties": {"type": "string", "minLength": 1},
}


@dataclass(frozen=True)
class SuiteDefinition:
    """A parsed and validated ``suite.yaml``."""

    path: Path
    raw: Mapping[str, Any]

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
        folder; ``download: true`` entries are not among them (``datasource.download_entries`` reads those)."""
        files = {}
        for local, entry in self.raw["data"].get("files", {}).items():
            if isinstance(entry, dict) and entry.get("download") is True:
                continue
            if isinstance(entry, str):
                files[local] = (entry, local)
            else:
                files[local] = (entry["sha256"], entry["source"])
        return files

    @property
    def max_tokens(self) -> int:
        return int(self.raw["generation"]["max_tokens"])

    @property
    def generation(self) -> dict[str, Any]:
        """suite.yaml ``generation:`` (``max_tokens``, optional ``temperature`` and ``context_reserve``)."""
        return dict(self.raw["generation"])

    def known_defects(self) -> dict[str, str]:
        path = self.folder / self.raw.get("known_defects", "known_defects.yaml")
        if not path.is_file():
            return {}
        return dict(load_yaml(path, KNOWN_DEFECTS_SCHEMA) or {})


#: libyaml's safe loader when PyYAML has it (about 10x faster on the long ``files:`` lists), else the Python one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path, schema: Mapping[str, Any]) -> Any:
    """Parse a YAML file and validate it; errors name the file, the line of the offending field and the field."""
    text = path.read_text(encoding="utf-8")
    try:
        document = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(path, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                        line=mark.line + 1 if mark else None) from None
    try:
        validate(document, schema, path)
    except DataError as error:
        raise DataError(path, error.message, line=_line_of(text, error.field), field=error.field) from None
    return document


def _line_of(text: str, field_path: str | None) -> int | None:
    """Find the line of a JSON-path field in YAML source, walking composed nodes (they keep their marks)."""
    node = yaml.compose(text)
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in (field_path or "").split("/"):
        if part in ("", "<root>"):
            continue
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


def load_definition(path: Path) -> SuiteDefinition:
    return SuiteDefinition(path=path, raw=load_yaml(path, SUITE_SCHEMA))


#: Folders never searched for suite definitions: pytest's default ``norecursedirs`` (and hidden folders).
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
