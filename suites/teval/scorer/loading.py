"""T-Eval's data files read into cases: one case per entry of each file, keyed by the dataset's own ids.

The files are the v2 files of the Hugging Face dataset ``lovesnowbest/T-Eval`` (``data/<name>.json``, each one JSON
object ``{id: entry}``), the files ToLeaP's ``scripts/teval_eval.sh`` and upstream's ``test_all_en.sh`` run. Which
evaluator reads a file, and with which ``--prompt_type``, is fixed by those scripts (``FILES`` below); an entry's own
``meta_data.response_format`` / ``meta.prompt_type`` then decides how its output is parsed, as in the evaluators.

Case ids are ``<file key>/<entry id>`` (ids repeat across files), e.g. ``plan_json/12``; the category is dimension + format
(``instruct_json``, ``instruct_str``, ``plan_json``, ``plan_str``, ``reason_str``, ``retrieve_str``,
``understand_str``, ``rru_json`` (one entry scored for reason, retrieve and understand at once), ``review_str``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_json, validate
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext

DATA_FOLDER = "data"

#: file stem (without ``_v2``) -> (key used in case ids, evaluator ``--eval``, evaluator ``--prompt_type``), as in
#: ToLeaP's scripts/teval_eval.sh @ b9507131 and T-Eval's test_all_en.sh @ 58f2240.
FILES: dict[str, tuple[str, str, str]] = {
    "instruct": ("instruct", "instruct", "json"),
    "plan_json": ("plan_json", "plan", "json"),
    "plan_str": ("plan_str", "plan", "str"),
    "reason_str": ("reason_str", "reason", "str"),
    "retrieve_str": ("retrieve_str", "retrieve", "str"),
    "understand_str": ("understand_str", "understand", "str"),
    "reason_retrieve_understand_json": ("rru_json", "rru", "json"),
    "review_str": ("review_str", "review", "str"),
}
DEFAULT_FILES = [f"{stem}_v2.json" for stem in FILES]
CATEGORIES = ("instruct_json", "instruct_str", "plan_json", "plan_str", "reason_str", "retrieve_str",
              "understand_str", "rru_json", "review_str")
#: Each dimension's markers (so ``-m reason`` selects reason_str and the rru_json entries).
DIMENSIONS = {"instruct": ("instruct",), "plan": ("plan",), "reason": ("reason",), "retrieve": ("retrieve",),
              "understand": ("understand",), "rru": ("reason", "retrieve", "understand"), "review": ("review",)}
_FILE_NAME = re.compile(r"^(?P<stem>[a-z_]+?)_v2(?P<subset>_subset)?(?P<zh>_zh)?\.json$")

DEFAULT_OPTIONS: dict[str, Any] = {
    "files": DEFAULT_FILES,
    "postprocess": "none",
    "function_role": "function",
    "embedding_model": "sentence-transformers/all-mpnet-base-v2",
}

# --------------------------------------------------------------------------------------------------------------
# Schemas (what the evaluators read from an entry; anything else an entry carries is kept but not required)

_MESSAGE = {"type": "object", "required": ["role", "content"],
            "properties": {"role": {"type": "string", "minLength": 1}, "content": {"type": "string"}}}
MESSAGES_SCHEMA = {"type": "array", "minItems": 1, "items": _MESSAGE}
_PROMPT = {"oneOf": [MESSAGES_SCHEMA, {"type": "string"}]}  # opencompass also reads a JSON-encoded message list
_STR_KEYS = ("thought_start", "thought_end", "action_start", "action_end", "args_start", "args_end")

INSTRUCT_SCHEMA = {
    "type": "object",
    "required": ["origin_prompt", "ground_truth", "template", "meta_data"],
    "properties": {
        "origin_prompt": _PROMPT,
        "ground_truth": {"type": "object", "required": ["action", "args"], "properties": {"args": {"type": "object"}}},
        "meta_data": {"type": "object", "required": ["response_format"],
                      "properties": {"response_format": {"enum": ["json", "string"]}}},
        "template": {"type": "object"},
    },
    "if": {"properties": {"meta_data": {"properties": {"response_format": {"const": "json"}}}}},
    "then": {"properties": {"template": {"required": ["thought", "action", "args"],
                                         "properties": {k: {"type": "string"} for k in ("thought", "action", "args")}}}},
    "else": {"properties": {"template": {"required": list(_STR_KEYS),
                                         "properties": {k: {"type": "string"} for k in _STR_KEYS}}}},
}
_PLAN_STEP = {"type": "object", "required": ["id", "name", "args"]}
PLAN_SCHEMA = {
    "type": "object",
    "required": ["origin_prompt", "ground_truth"],
    "properties": {
        "origin_prompt": _PROMPT,
        "ground_truth": {"oneOf": [{"type": "array", "minItems": 1, "items": _PLAN_STEP}, {"type": "string"}]},
        # The deprecated ReWOO prompt type (which ``eval``s the ground truth) is not supported.
        "meta": {"type": "object", "properties": {"prompt_type": {"enum": ["json", "str"]},
                                                  "API_list": {"type": "array", "items": {"type": "string"}}}},
    },
}
RRU_SCHEMA = {
    "type": "object",
    "required": ["origin_prompt", "ground_truth"],
    "properties": {
        "origin_prompt": _PROMPT,
        "ground_truth": {"type": ["object", "string"]},
        "meta_data": {"type": "object", "properties": {"response_format": {"enum": ["json", "str"]}}},
    },
}
REVIEW_SCHEMA = {
    "type": "object",
    "required": ["origin_prompt", "ground_truth", "meta_data"],
    "properties": {
        "origin_prompt": _PROMPT,
        "ground_truth": {"type": "object", "required": ["answer"]},
        "meta_data": {"type": "object", "required": ["response_format"],
                      "properties": {"response_format": {"type": "string"}}},
    },
}
ENTRY_SCHEMAS = {"instruct": INSTRUCT_SCHEMA, "plan": PLAN_SCHEMA, "reason": RRU_SCHEMA, "retrieve": RRU_SCHEMA,
                 "understand": RRU_SCHEMA, "rru": RRU_SCHEMA, "review": REVIEW_SCHEMA}
FILE_SCHEMA = {"type": "object", "minProperties": 1, "additionalProperties": {"type": "object"}}


def options_of(definition: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options with their defaults; their values were checked by the core against the schemas in suite.yaml (one
    usage error naming the option) before loading."""
    options = dict(DEFAULT_OPTIONS)
    options.update((definition or {}).get("options") or {})
    return options


def settings(case: Case) -> dict[str, Any]:
    """The suite options a case is scored with: its suite's (``case.context``), with their defaults; the defaults
    alone for a case bound to no context."""
    return options_of(case.context.definition if case.context is not None else None)


def file_kind(name: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(case-id key, evaluator, evaluator prompt type, extra keywords) of a data file name like ``plan_str_v2.json``.

    The ``_subset`` and ``_zh`` variants have the same key (their ids are the same kind, and upstream's output file
    names do not tell the variants apart, so replays match either) and add a keyword."""
    match = _FILE_NAME.match(name)
    if match is None or match["stem"] not in FILES:
        raise DataError(name, "not a T-Eval v2 data file: expected <kind>_v2[_subset][_zh].json with kind one of "
                              + ", ".join(FILES), field="options/files")
    key, evaluator, prompt_type = FILES[match["stem"]]
    extra = tuple(k for k in ("subset", "zh") if match[k])
    return key, evaluator, prompt_type, extra


def messages_of(origin_prompt: Any, path: Path, entry_id: str) -> list[dict[str, Any]]:
    """The entry's chat messages (a JSON-encoded list is decoded, as opencompass's loader does)."""
    if isinstance(origin_prompt, str):
        try:
            origin_prompt = json.loads(origin_prompt)
        except ValueError as exc:
            raise DataError(path, f"entry {entry_id!r}: origin_prompt is a string but not a JSON message list "
                                  f"({exc})", field=f"{entry_id}/origin_prompt") from None
        validate(origin_prompt, MESSAGES_SCHEMA, path)
    return [dict(message) for message in origin_prompt]


def category_of(evaluator: str, prompt_type: str, entry: Mapping[str, Any]) -> str:
    if evaluator == "instruct":
        return "instruct_json" if entry["meta_data"]["response_format"] == "json" else "instruct_str"
    if evaluator == "plan":
        return f"plan_{prompt_type}"
    if evaluator == "rru":
        return "rru_json"
    return f"{evaluator}_{prompt_type}"


def item_format(evaluator: str, default_prompt_type: str, entry: Mapping[str, Any]) -> str:
    """How the evaluator parses this entry's output (its own format field, else the file's ``--prompt_type``)."""
    if evaluator == "instruct":
        return entry["meta_data"]["response_format"]
    if evaluator == "plan":
        meta = entry.get("meta")
        return meta.get("prompt_type", default_prompt_type) if isinstance(meta, dict) else default_prompt_type
    if evaluator == "review":
        return entry["meta_data"]["response_format"]
    meta_data = entry.get("meta_data")
    return meta_data.get("response_format", default_prompt_type) if isinstance(meta_data, dict) else \
        default_prompt_type


def read_file(path: Path, evaluator: str) -> dict[str, dict[str, Any]]:
    document = load_json(path, FILE_SCHEMA)
    schema = ENTRY_SCHEMAS[evaluator]
    for entry_id, entry in document.items():
        try:
            validate(entry, schema, path)
        except DataError as error:
            raise DataError(path, f"entry {entry_id!r}: {error.message}",
                            field=f"{entry_id}/{error.field}" if error.field else entry_id) from None
    return document


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = options_of(definition)
    cases: list[Case] = []
    keys: dict[str, str] = {}
    for name in options["files"]:
        key, evaluator, default_prompt_type, extra = file_kind(name)
        if key in keys:
            raise DataError(name, f"options.files names two variants of the same file ({keys[key]} and {name}); "
                                  "run them in separate sessions", field="options/files")
        keys[key] = name
        path = data_dir / DATA_FOLDER / name
        document = read_file(path, evaluator)
        for entry_id, entry in document.items():
            fmt = item_format(evaluator, default_prompt_type, entry)
            category = category_of(evaluator, default_prompt_type, entry)
            meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
            if evaluator == "plan" and fmt == "str" and not isinstance(meta.get("API_list"), list):
                raise DataError(path, f"entry {entry_id!r}: a str plan needs meta.API_list", field=f"{entry_id}/meta")
            payload = {
                "file": name,
                "id": entry_id,
                "evaluator": evaluator,
                "default_prompt_type": default_prompt_type,
                "format": fmt,
                "messages": messages_of(entry["origin_prompt"], path, entry_id),
                "ground_truth": entry["ground_truth"],
                "template": entry.get("template"),
                "api_list": meta.get("API_list"),
            }
            keywords = (*DIMENSIONS[evaluator], "json" if fmt == "json" else "str", *extra)
            cases.append(Case(case_id=f"{key}/{entry_id}", category=category, payload=payload,
                              keywords=keywords))
    return context.bind(cases)
