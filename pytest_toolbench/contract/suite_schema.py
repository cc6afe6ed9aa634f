"""suite.yaml's JSON Schema (:data:`SUITE_SCHEMA`, the field table of "Adding a suite" is written from it) and the
names it declares: the scorer libraries a suite may opt into (:data:`LIBRARIES`), the prompt styles, the suite
marker prefix."""

from __future__ import annotations

from typing import Any

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
