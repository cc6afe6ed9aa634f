"""BFCL v4 data files (``BFCL_v4_<category>.json`` + ``possible_answer/``) read into cases, one per entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext
from .agentic.conversation import load_agentic_cases
from .categories import (AGENTIC, CATEGORIES, FORMAT_SENSITIVITY, MULTI_TURN, RELEVANCE_CATEGORIES,
                         RUN_CATEGORIES, language_of)
from .format_sensitivity import load_format_cases
from .multi_turn.conversation import load_multi_turn_cases


_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {"role": {"type": "string"}, "content": {"type": "string"}},
}
PROMPT_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "function"],
    "properties": {
        "id": {"type": "string"},
        "question": {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1, "items": _MESSAGE}},
        "function": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "description", "parameters"],
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "parameters": {
                        "type": "object",
                        "required": ["properties"],
                        "properties": {"properties": {"type": "object"}, "required": {"type": "array"}},
                    },
                },
            },
        },
    },
}
ANSWER_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth"],
    "properties": {
        "id": {"type": "string"},
        "ground_truth": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": {"type": "object", "additionalProperties": {"type": "array"}},
            },
        },
    },
}


def _selected_categories(definition: Mapping[str, Any]) -> list[str]:
    listed = definition.get("categories") if definition else None
    if not listed:
        return list(RUN_CATEGORIES)
    names = [item["name"] if isinstance(item, Mapping) else str(item) for item in listed]
    return [name for name in names if name in RUN_CATEGORIES]


def load_cases(context: SuiteContext) -> list[Case]:
    """Single-turn cases (here), then the multi-turn (:mod:`.multi_turn.conversation`) and agentic
    (:mod:`.agentic.conversation`) ones."""
    data_dir, definition = Path(context.data_dir), context.definition
    selected = _selected_categories(definition)
    cases = _load_single_turn(data_dir, [c for c in selected if c in CATEGORIES], definition)
    cases += load_multi_turn_cases(data_dir, [c for c in selected if c in MULTI_TURN])
    cases += load_agentic_cases(data_dir, [c for c in selected if c in AGENTIC])
    if FORMAT_SENSITIVITY in selected:
        cases += load_format_cases(data_dir, ANSWER_SCHEMA, PROMPT_SCHEMA)
    return context.bind(cases)


def _load_single_turn(data_dir: Path, categories: list[str], definition: Mapping[str, Any]) -> list[Case]:
    cases: list[Case] = []
    for category in categories:
        prompt_file = data_dir / f"BFCL_v4_{category}.json"
        if not prompt_file.is_file():
            continue
        prompts = load_jsonl(prompt_file, PROMPT_SCHEMA)
        answers: list[dict | None]
        if category in RELEVANCE_CATEGORIES:
            answers = [None] * len(prompts)
        else:
            answer_file = data_dir / "possible_answer" / prompt_file.name
            answers = load_jsonl(answer_file, ANSWER_SCHEMA)
            if len(answers) != len(prompts):
                raise DataError(answer_file, f"{len(answers)} answers for {len(prompts)} prompts")
        live = "live" if category.startswith("live_") else "non_live"
        kind = "relevance" if category in RELEVANCE_CATEGORIES else "ast"
        for index, (prompt, answer) in enumerate(zip(prompts, answers)):
            # Paired by line index (some GT ids differ from the prompt ids upstream).
            cases.append(Case(
                case_id=prompt["id"],
                category=category,
                payload={
                    "id": prompt["id"],
                    "index": index,
                    "question": prompt["question"],
                    "function": prompt["function"],
                    "ground_truth": answer["ground_truth"] if answer is not None else None,
                },
                keywords=(live, kind, language_of(category)),
            ))
    return cases
