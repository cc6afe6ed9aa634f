"""NesTools' data files (``test_data.jsonl``, ``test_api_ids.jsonl``, the optional ``test_prompt.jsonl``) read into
cases: one case per ``test_id``, its category the upstream depth view."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext
from .gold import gold_calls, max_depth, structure_key

UPSTREAM_REPO = "hhan1018/NesTools"
UPSTREAM_COMMIT = "fb617f396d61ead9f857a48f9ea7cf12fa522450"

#: ``prompt_source`` values: the official pre-built prompt file, or the offline rebuild (a different variant).
PROMPT_SOURCE_OFFICIAL = "official"
PROMPT_SOURCE_REBUILT = "rebuilt"
OFFICIAL_PROMPT_FILE = "test_prompt.jsonl"

_PARAM_SPEC = {
    "type": "object",
    "additionalProperties": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
}
_API_SCHEMA = {
    "type": "object",
    "required": ["api_name", "api_description", "parameters", "required", "responses"],
    "properties": {
        "api_name": {"type": "string", "minLength": 1},
        "api_description": {"type": "string"},
        "parameters": _PARAM_SPEC,
        "required": {"type": "array", "items": {"type": "string"}},
        "responses": _PARAM_SPEC,
    },
}
TEST_DATA_SCHEMA = {
    "type": "object",
    "required": ["test_id", "api", "task", "call", "field"],
    "properties": {
        "test_id": {"type": "integer", "minimum": 1},
        "api": {"type": "array", "minItems": 1, "items": _API_SCHEMA},
        "task": {"type": "string"},
        "field": {"type": "string"},
        "call": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["api_name", "parameters", "responses"],
                "properties": {
                    "api_name": {"type": "string"},
                    "parameters": {"type": "object"},
                    "responses": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
API_IDS_SCHEMA = {
    "type": "object",
    "required": ["test_id", "api_ids"],
    "properties": {
        "test_id": {"type": "integer", "minimum": 1},
        "api_ids": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
    },
}
PROMPT_SCHEMA = {
    "type": "object",
    "required": ["test_id", "prompt"],
    "properties": {"test_id": {"type": "integer"}, "prompt": {"type": "string"}},
}


def prompt_source(data_dir: Path | str) -> str:
    """Which prompts a run uses: ``official`` when ``test_prompt.jsonl`` sits in the data folder, else ``rebuilt``."""
    return PROMPT_SOURCE_OFFICIAL if (Path(data_dir) / OFFICIAL_PROMPT_FILE).is_file() else PROMPT_SOURCE_REBUILT


def run_info(context: SuiteContext) -> dict[str, str]:
    """Shown in the run header and results: which prompt variant this run's numbers rest on."""
    source = prompt_source(context.data_dir)
    note = ("official inference/test_prompt.jsonl" if source == PROMPT_SOURCE_OFFICIAL else
            "rebuilt offline (test_prompt.jsonl absent): candidate lists differ from the paper's")
    return {"prompts": note}


@lru_cache(maxsize=4)
def load_test_data(data_dir: str) -> tuple[list[dict[str, Any]], dict[int, list[int]]]:
    folder = Path(data_dir)
    records = load_jsonl(folder / "test_data.jsonl", TEST_DATA_SCHEMA)
    id_rows = load_jsonl(folder / "test_api_ids.jsonl", API_IDS_SCHEMA)
    api_ids = {row["test_id"]: row["api_ids"] for row in id_rows}
    for number, record in enumerate(records, start=1):
        ids = api_ids.get(record["test_id"])
        if ids is None:
            raise DataError(folder / "test_api_ids.jsonl", f"no api_ids for test_id {record['test_id']}")
        if len(ids) != len(record["api"]):
            raise DataError(
                folder / "test_api_ids.jsonl",
                f"test_id {record['test_id']}: {len(ids)} api_ids for {len(record['api'])} tools",
                field="api_ids",
            )
        names = {api["api_name"] for api in record["api"]}
        for call in record["call"]:
            if call["api_name"] not in names:
                raise DataError(folder / "test_data.jsonl", f"call to unknown tool {call['api_name']!r}",
                                line=number, field="call")
    return records, api_ids


def _identifier(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return cleaned if cleaned and not cleaned[0].isdigit() else f"d_{cleaned}"


def depth_bucket(depth: int) -> str:
    """Category of a case: the upstream depth views 1, 2 and 3-5."""
    return "depth1" if depth <= 1 else "depth2" if depth == 2 else "depth3plus"


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir = Path(context.data_dir)
    records, api_ids = load_test_data(str(data_dir))
    source = prompt_source(data_dir)
    official: dict[int, str] = {}
    if source == PROMPT_SOURCE_OFFICIAL:
        official = {row["test_id"]: row["prompt"] for row in load_jsonl(data_dir / OFFICIAL_PROMPT_FILE, PROMPT_SCHEMA)}
    cases: list[Case] = []
    seen: set[int] = set()
    for record in records:
        test_id = record["test_id"]
        if test_id in seen:
            raise DataError(data_dir / "test_data.jsonl", f"duplicate test_id {test_id}", field="test_id")
        seen.add(test_id)
        payload: dict[str, Any] = {
            "test_id": test_id,
            "task": record["task"],
            "api": record["api"],
            "api_ids": api_ids[test_id],
            "call": record["call"],
            "field": record["field"],
            "prompt_source": source,
        }
        if source == PROMPT_SOURCE_OFFICIAL:
            if test_id not in official:
                raise DataError(data_dir / OFFICIAL_PROMPT_FILE, f"no prompt for test_id {test_id}")
            payload["prompt"] = official[test_id]
        chain = gold_calls(payload)
        depth = max_depth(chain)
        structure = structure_key(chain)
        payload["depth"] = depth
        payload["structure_key"] = structure
        nested = depth > 1
        domain = _identifier(record["field"].split("/")[0])
        keywords = (
            f"depth{min(depth, 3)}",
            "nested" if nested else "flat",
            f"structure{structure}" if structure is not None else "structure_other",
            domain,
            f"prompt_{source}",
        )
        cases.append(Case(case_id=str(test_id), category=depth_bucket(depth), payload=payload,
                          keywords=keywords))
    return context.bind(cases)
