"""Suite definitions: each suite folder's ``suite.yaml``, validated with JSON Schema."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import yaml

from .data_files import validate
from .errors import DataError

IDENTIFIER = "^[A-Za-z_][A-Za-z0-9_]*$"
#: Every item of suite X carries the marker ``suite_X`` beside ``X``: ``-m suite_X`` selects that suite and no other,
#: even where another suite uses X as a category or keyword (tltraining's ``toolalpaca``). No suite name, category
#: or keyword may therefore start with this prefix.
SUITE_MARKER_PREFIX = "suite_"


#: The behavioural scorer libraries a suite can name in ``libraries:`` of its suite.yaml. Each is the module of that
#: name in ``pytest_toolbench.scorer_lib``, which declares it as its ``LIBRARY`` (``tests/test_scorer_lib.py`` checks
#: the two agree); the contract names them so the schema needs nothing from the libraries. A suite that names one
#: finds it in its context: ``case.context.uses("tl_failures")``.
LIBRARIES = ("tl_failures",)

#: suite.yaml ``generation.prompt`` values: how the suite's upstream hands a local model its prompt (see the schema)
PROMPT_STYLES = ("chat", "text", "official_handler")

#: suite.yaml ``generation.handlers``: a dotted module path under ``pytest_toolbench.scorer_lib``
HANDLER_LIBRARY = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"


def suite_marker(name: str) -> str:
    """The marker that every item of the suite ``name``, and only those, carries."""
    return f"{SUITE_MARKER_PREFIX}{name}"

SUITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "title", "scorer", "data", "categories", "generation"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": IDENTIFIER,
                 "description": "the suite's identity, the name of its folder: its markers (`-m suite_<name>`), "
                                "records, options (`--toolbench-suite-option=<name>.KEY=VALUE`) and reports; the "
                                "catalog stamps it on every case (`Case.suite`)"},
        "title": {"type": "string", "minLength": 1, "description": "the suite's name in reports and `pytest --markers`"},
        "description": {"type": "string", "description": "what the suite measures, for readers of the YAML"},
        "scorer": {"type": "string", "minLength": 1,
                   "description": "where the scorer is: `scorer` for the package `scorer/` beside the YAML (every "
                                  "shipped suite), a dotted module path, or a name registered through "
                                  "`pytest_toolbench_register`"},
        "data": {
            "type": "object",
            "description": "where the suite's data are and what they must be",
            "required": ["folder"],
            "additionalProperties": False,
            "properties": {
                "folder": {"type": "string", "minLength": 1,
                           "description": "the suite's folder inside the `--toolbench-data` folder (`.`: the data "
                                          "folder itself)"},
                "samples": {"type": "string",
                            "description": "the folder of shipped samples, relative to the YAML (default `samples`)"},
                "reuses": {
                    "type": "array",
                    "description": "other suites' data this suite reads (with a shared format library from "
                                   "pytest_toolbench.scorer_lib, never through the other suite's scorer): the suite "
                                   "and its data folder, relative to this suite's data folder",
                    "items": {
                        "type": "object",
                        "required": ["suite", "folder"],
                        "additionalProperties": False,
                        "properties": {"suite": {"type": "string", "pattern": IDENTIFIER,
                                                 "description": "the other suite's name"},
                                       "folder": {"type": "string", "minLength": 1,
                                                  "description": "its data folder, relative to this suite's"}},
                    },
                },
                "license": {"type": "string", "description": "the data's license, for the record"},
                "selected_by": {
                    "type": "object",
                    "description": "download entries (data.files, download: true) under `folder` are needed only "
                                   "when their name relative to it is listed in the suite option `option` (T-Eval's "
                                   "files): the others are neither fetched, nor checked, nor reported",
                    "required": ["option", "folder"],
                    "additionalProperties": False,
                    "properties": {"option": {"type": "string", "minLength": 1,
                                              "description": "the suite option listing the files"},
                                   "folder": {"type": "string",
                                              "description": "the folder, relative to `data.folder`, of the "
                                                            "download entries it selects"}},
                },
                "upstream": {
                    "type": "object",
                    "description": "the upstream repository the data come from, pinned",
                    "required": ["repository", "commit"],
                    "additionalProperties": False,
                    "properties": {
                        "repository": {"type": "string", "description": "`owner/name` of the upstream repository"},
                        "commit": {"type": "string", "pattern": "^[0-9a-f]{7,40}$",
                                   "description": "the pinned commit"},
                        "path": {"type": "string", "description": "the data's folder inside the repository"},
                        "base_url": {"type": "string", "pattern": "^https?://",
                                     "description": "the URL that `data.files` paths are relative to, for "
                                                    "downloads"},
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
                                   "cached (see pytest_toolbench.data.downloads)",
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
            "description": "every category a case may have (a case of another one is an error); each is a marker",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": IDENTIFIER, "description": "the category"},
                               "description": {"type": "string",
                                               "description": "its marker's description in `pytest --markers`"}},
            },
        },
        "generation": {
            "type": "object",
            "description": "how the model is asked",
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
                "prompt": {"enum": list(PROMPT_STYLES),
                           "description": "how the suite's upstream hands a local model its prompt: `chat` (default): "
                                          "the chat template's text, tokenized as a chat API does (no special tokens "
                                          "added); `text`: the chat template's text sent as a plain text prompt (the "
                                          "tokenizer's special tokens added); `official_handler`: the official "
                                          "harness writes the prompt itself per model family (its handlers, "
                                          "named by `handlers`; `--toolbench-prompt-format`) and sends it as a text "
                                          "prompt"},
                "handlers": {"type": "string", "pattern": HANDLER_LIBRARY,
                             "description": "with `prompt: official_handler`: the handler library (a module of "
                                            "pytest_toolbench.scorer_lib exposing `LIBRARY`) that writes the "
                                            "prompts, chooses the leaderboard row and names the option for it"},
            },
        },
        "libraries": {
            "type": "array",
            "uniqueItems": True,
            "description": "scorer libraries (pytest_toolbench.scorer_lib) the suite opts into, e.g. tl_failures: "
                           "TL-Training's failure category and reward on failed cases, and their tallies",
            "items": {"enum": list(LIBRARIES)},
        },
        "known_defects": {"type": "string",
                          "description": "the file of known upstream defects, relative to the YAML (default "
                                         "`known_defects.yaml`; case id -> why it fails under gold answers)"},
        "markers": {
            "type": "array",
            "description": "the keyword markers the cases carry (besides the suite's name and its categories), each "
                           "with a description: by name, or as a family of data-derived names matched by a pattern "
                           "and shown as its label in `pytest --markers`",
            "items": {
                "type": "object",
                "required": ["description"],
                "additionalProperties": False,
                "oneOf": [{"required": ["names"]}, {"required": ["pattern", "label"]}],
                "properties": {
                    "names": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": IDENTIFIER},
                              "description": "keyword markers, by name"},
                    "pattern": {"type": "string", "format": "regex",
                                "description": "a regular expression matching a family of data-derived keywords"},
                    "label": {"type": "string", "minLength": 1,
                              "description": "the family's name in `pytest --markers` (`layer<N>`)"},
                    "description": {"type": "string", "minLength": 1, "description": "what the markers mean"},
                },
            },
        },
        "options": {
            "type": "object",
            "description": "the settings a run may change (--toolbench-suite-option=SUITE.KEY=VALUE): each key's "
                           "default, the JSON Schema every value must match, and what it means",
            "propertyNames": {"pattern": IDENTIFIER},
            "additionalProperties": {
                "type": "object",
                "description": "one setting, named by its key",
                "required": ["default", "schema"],
                "additionalProperties": False,
                "properties": {
                    "description": {"type": "string", "description": "what the option changes"},
                    "default": {"description": "its value unless the run overrides it (checked against `schema`)"},
                    "schema": {"type": "object", "description": "a JSON Schema (draft 2020-12) for the value"},
                },
            },
        },
    },
}

KNOWN_DEFECTS_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "additionalProperties": {"type": "string", "minLength": 1},
}


class OptionError(DataError):
    """A suite option whose value (a default in ``suite.yaml`` or a run's override) its schema refuses, or an
    override of an option the suite does not declare."""

    def usage_line(self) -> str:
        """The one-line usage error: an override's message names the option itself (and the file declaring it)."""
        if self.message.startswith("--toolbench-suite-option"):
            return f"pytest-toolbench: {self.message} (declared in {self.path})"
        return f"pytest-toolbench: {self}"


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


def field_locations(schema: Mapping[str, Any] = SUITE_SCHEMA, at: tuple[str, ...] = ()
                    ) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every mapping of fixed fields in the schema: ``(where, its schema)``, ``where`` a path of field names in which
    ``-`` stands for each entry of a list and ``<name>`` for each key of a mapping of free keys."""
    if not isinstance(schema, Mapping):
        return
    if "properties" in schema:
        yield at, schema
        for key, sub in schema["properties"].items():
            yield from field_locations(sub, (*at, key))
    if isinstance(schema.get("items"), Mapping):
        yield from field_locations(schema["items"], (*at, "-"))
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from field_locations(schema["additionalProperties"], (*at, "<name>"))
    for branch in (*schema.get("oneOf", ()), *schema.get("anyOf", ())):
        if "properties" in branch:  # the alternatives' fields are those of the mapping they describe
            yield from ((at, sub) for where, sub in field_locations(branch, at) if where == at)


def schema_table(schema: Mapping[str, Any] = SUITE_SCHEMA) -> str:
    """The suite.yaml reference, as the Markdown table docs/adding-a-suite.md shows (a test keeps the two equal):
    one row per field, written as a path (``data.upstream.commit``; ``[]`` for each entry of a list, ``<name>`` for
    each key of a mapping of free keys), whether it is required where its parent is present, what value it takes,
    and what it is."""
    rows = ["| field | required | value | what it is |", "|---|---|---|---|"]

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        required = set(node.get("required", ()))
        forms = [branch["required"] for branch in node.get("oneOf", ()) if set(branch) == {"required"}]
        for key, sub in node.get("properties", {}).items():
            path = f"{prefix}{key}"
            need = "required" if key in required else "optional"
            if any(key in form for form in forms):
                need = " or ".join(" + ".join(f"`{k}`" for k in form) for form in forms) + ": one of these"
            rows.append(f"| `{path}` | {need} | {_value_words(sub)} | {_cell(sub.get('description', ''))} |")
            _descend(sub, path)

    def _descend(sub: Mapping[str, Any], path: str) -> None:
        if "properties" in sub:
            walk(sub, f"{path}.")
        elif isinstance(sub.get("items"), Mapping) and "properties" in sub["items"]:
            walk(sub["items"], f"{path}[].")
        elif isinstance(sub.get("additionalProperties"), Mapping) and "properties" in sub["additionalProperties"]:
            entry = sub["additionalProperties"]
            rows.append(f"| `{path}.<name>` | optional | {_value_words(entry)} | {_cell(entry.get('description', ''))} |")
            walk(entry, f"{path}.<name>.")

    walk(schema, "")
    return "\n".join(rows)


def _value_words(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "object":
        return "a mapping"
    if kind == "array" and isinstance(schema.get("items"), Mapping) and schema["items"].get("type") == "object":
        return "a list of mappings" + (f" (at least {schema['minItems']})" if schema.get("minItems") else "")
    if not schema.get("type") and not schema.get("enum") and "const" not in schema:
        return "any value"
    import re

    words = accepts(schema).replace("a list of a string", "a list of strings")
    return _cell(re.sub(r"matching (\S+)", r"matching `\1`", words))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def where_words(where: tuple[str, ...]) -> str:
    """A schema location in YAML words: ``'data:'``, ``'data: upstream:'``, ``each entry of 'markers:'``."""
    if not where:
        return "the top level"
    if where[-1] == "-":
        return f"each entry of {where_words(where[:-1])}"
    return "'" + ": ".join(where) + ":'"


def misplaced_field_error(path: Path) -> DataError | None:
    """For a suite.yaml holding a field where the schema does not allow it, the error that says where it belongs
    (``'upstream' is not a top-level field; it belongs under 'data:'``) or which allowed name it resembles; None
    when the document has no such field (its first schema error is then reported as it is)."""
    import difflib

    import jsonschema

    text = path.read_text(encoding="utf-8")
    try:
        document = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError:
        return None
    validator = jsonschema.Draft202012Validator(SUITE_SCHEMA)
    unknown = [error for error in validator.iter_errors(document) if error.validator == "additionalProperties"
               and error.validator_value is False and isinstance(error.instance, dict)]
    if not unknown:
        return None
    error = min(unknown, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    allowed = set(error.schema.get("properties", {}))
    key = str(sorted(set(error.instance) - allowed, key=list(error.instance).index)[0])
    at = tuple("-" if isinstance(p, int) else str(p) for p in error.absolute_path)
    here = tuple(str(p) for p in error.absolute_path)
    locations = list(field_locations())
    # the same location in schema words: keys of a mapping of free keys (options: <name>:) read as "<name>"
    schema_at = next((where for where, sub in locations if sub is error.schema), at)
    if not schema_at:
        what = f"'{key}' is not a top-level field"
    elif schema_at[-1] == "-":
        what = f"'{key}' is not a field of an entry of {where_words(schema_at[:-1])}"
    else:
        what = f"'{key}' is not a field of {where_words(schema_at)}"
    belongs = [where for where, sub in locations if key in sub.get("properties", {}) and where != schema_at]
    if belongs:
        places = sorted(dict.fromkeys(belongs), key=len)
        hint = "it belongs under " + " or ".join(where_words(where) for where in places)
    else:
        close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.6)
        anywhere = {name: where for where, sub in locations for name in sub.get("properties", {})}
        elsewhere = difflib.get_close_matches(key, sorted(anywhere), n=1, cutoff=0.75)
        if close:
            hint = f"did you mean '{close[0]}'?"
        elif elsewhere:
            hint = f"did you mean '{elsewhere[0]}' (under {where_words(anywhere[elsewhere[0]])})?"
        else:
            hint = "the fields allowed here are " + ", ".join(sorted(allowed))
    field = "/".join((*here, key))
    found = DataError(path, f"{what}; {hint}", line=_line_of(text, field))
    found.field = field  # for callers; the message itself already names the field and where it belongs
    return found


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


def option_problem(spec: Mapping[str, Any], value: Any) -> tuple[str, str] | None:
    """None when ``value`` matches the option's schema; else ("schema", why) for a schema that is not one, or
    ("value", the validator's message)."""
    import jsonschema

    validator = _option_validator(spec["schema"])
    if isinstance(validator, str):
        return "schema", validator
    if validator.is_valid(value):
        return None
    return "value", jsonschema.exceptions.best_match(validator.iter_errors(value)).message


_OPTION_VALIDATORS: dict[str, Any] = {}


def _option_validator(schema: Mapping[str, Any]) -> Any:
    """The compiled validator of an option's schema, or why it is not a schema; one per distinct schema (every
    process checks each suite's defaults once per run, workers included)."""
    import json

    import jsonschema

    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _OPTION_VALIDATORS:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
            _OPTION_VALIDATORS[key] = cls(schema)
        except jsonschema.SchemaError as error:
            _OPTION_VALIDATORS[key] = error.message
    return _OPTION_VALIDATORS[key]


def _shown(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def accepts(schema: Mapping[str, Any]) -> str:
    """What a JSON Schema accepts, in words, for the one-line error (``a list of any of clean, slight (at least 1,
    no repeats)``); a schema beyond the common forms is shown as JSON."""
    if "enum" in schema:
        return "one of " + ", ".join(_shown(v) if not isinstance(v, str) else v for v in schema["enum"])
    if "const" in schema:
        return _shown(schema["const"])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return " or ".join(accepts(part) for part in schema[combinator])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        inner = accepts(items) if items else "values"
        inner = ("any of " + inner[len("one of "):]) if inner.startswith("one of ") else inner
        notes = []
        if schema.get("minItems"):
            notes.append(f"at least {schema['minItems']}")
        if "maxItems" in schema:
            notes.append(f"at most {schema['maxItems']}")
        if schema.get("uniqueItems"):
            notes.append("no repeats")
        return f"a list of {inner}" + (f" ({', '.join(notes)})" if notes else "")
    if kind in ("integer", "number"):
        words = "an integer" if kind == "integer" else "a number"
        bounds = [f">= {schema['minimum']}" if "minimum" in schema else "",
                  f"> {schema['exclusiveMinimum']}" if "exclusiveMinimum" in schema else "",
                  f"<= {schema['maximum']}" if "maximum" in schema else "",
                  f"< {schema['exclusiveMaximum']}" if "exclusiveMaximum" in schema else ""]
        bounds = [b for b in bounds if b]
        return words + (f" {' and '.join(bounds)}" if bounds else "")
    if kind == "string":
        words = "a non-empty string" if schema.get("minLength") == 1 else "a string"
        return words + (f" matching {schema['pattern']}" if "pattern" in schema else "")
    if kind == "boolean":
        return "true or false"
    if kind == "null":
        return "null"
    if isinstance(kind, list):
        return " or ".join(accepts({**schema, "type": k}) for k in kind)
    return "a value matching the schema " + _shown(schema)


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
