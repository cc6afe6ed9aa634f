"""Reading ACEBench's data files (``data_<lang>/data_<category>.json`` + ``possible_answer/``) into cases."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext


LANGUAGES = ("en", "zh")

NORMAL_CATEGORIES = (
    "normal_atom_bool",
    "normal_atom_enum",
    "normal_atom_number",
    "normal_atom_list",
    "normal_atom_object_short",
    "normal_atom_object_deep",
    "normal_single_turn_single_function",
    "normal_single_turn_parallel_function",
    "normal_multi_turn_user_switch",
    "normal_multi_turn_user_adjust",
    "normal_similar_api",
    "normal_preference",
)
SPECIAL_CATEGORIES = ("special_incomplete", "special_error_param", "special_irrelevant")
AGENT_CATEGORIES = ("agent_multi_turn", "agent_multi_step")
ALL_CATEGORIES = NORMAL_CATEGORIES + SPECIAL_CATEGORIES + AGENT_CATEGORIES

#: Keyword that marks cases needing a simulated user (an external LLM in upstream).
NEEDS_USER_MODEL = "needs_user_model"

_PROMPT_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "function"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "question": {"type": "string"},
        "function": {"type": ["array", "object", "string"]},
        "time": {"type": "string"},
        "profile": {},
    },
}
_AGENT_PROMPT_SCHEMA = {
    "type": "object",
    "required": ["id", "question", "function", "initial_config", "involved_classes"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "question": {"type": "string"},
        "function": {"type": ["array", "string"]},
        "initial_config": {"type": ["object", "string"]},
        "involved_classes": {"type": ["array", "string"]},
        "path": {},
    },
}
_ANSWER_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth"],
    "properties": {"id": {"type": "string", "minLength": 1}, "ground_truth": {}},
}
_AGENT_ANSWER_SCHEMA = {
    "type": "object",
    "required": ["id", "ground_truth", "mile_stone"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "ground_truth": {"type": ["array", "object", "string"]},
        "mile_stone": {"type": ["array", "string"]},
    },
}

#: The ``_<digits>`` suffix that ground-truth dicts append to a function name (``{"f_1": ..., "f_2": ...}`` for two
#: calls of ``f``); the checker strips it to get the function name.
REPEAT_SUFFIX = re.compile(r"_\d+$")


def family_of(category: str) -> str:
    return category.split("_", 1)[0]


def case_id_for(language: str, upstream_id: str) -> str:
    return f"{language}-{upstream_id}"


def split_case_id(case_id: str) -> tuple[str, str]:
    """(language, upstream id) of a case id such as ``en-normal_atom_bool_3``."""
    language, _, upstream = case_id.partition("-")
    return language, upstream


def is_agent(case: Case) -> bool:
    return case.category in AGENT_CATEGORIES


def find_function_doc(docs: Any, answer_key: str) -> Any:
    """The function document the official checker reads for a ground-truth key (None when there is none)."""
    # Quirk: the first document whose name is a *substring* of the ground-truth key (suffix included) is used.
    if isinstance(docs, list):
        for doc in docs:
            if isinstance(doc, Mapping) and isinstance(doc.get("name"), str) and doc["name"] in answer_key:
                return doc
        return None
    return docs


def _python_literal(value: Any, path: Path, line_id: str, field: str) -> Any:
    """Agent files store several fields as Python literal strings; ``ast.literal_eval`` reads data, never code."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise DataError(path, f"record {line_id}: field is not a Python literal ({exc})", field=field) from None


def _keywords(language: str, category: str) -> tuple[str, ...]:
    keywords = [language, family_of(category), category]
    if category.startswith("normal_multi_turn"):
        keywords.append("multi_turn")
    if category.startswith("normal_atom"):
        keywords.append("atom")
    if category == "agent_multi_turn":
        keywords.append(NEEDS_USER_MODEL)
    return tuple(keywords)


def _load_category(folder: Path, language: str, category: str) -> list[Case]:
    agent = category.startswith("agent")
    prompt_path = folder / f"data_{category}.json"
    answer_path = folder / "possible_answer" / f"data_{category}.json"
    prompts = load_jsonl(prompt_path, _AGENT_PROMPT_SCHEMA if agent else _PROMPT_SCHEMA)
    answers = load_jsonl(answer_path, _AGENT_ANSWER_SCHEMA if agent else _ANSWER_SCHEMA)
    answers_by_id = {}
    for answer in answers:
        if answer["id"] in answers_by_id:
            raise DataError(answer_path, f"duplicate id {answer['id']}", field="id")
        answers_by_id[answer["id"]] = answer
    cases = []
    seen: set[str] = set()
    for item in prompts:
        upstream_id = item["id"]
        if upstream_id in seen:
            raise DataError(prompt_path, f"duplicate id {upstream_id}", field="id")
        seen.add(upstream_id)
        if upstream_id not in answers_by_id:
            raise DataError(answer_path, f"no ground truth for id {upstream_id}", field="id")
        answer = answers_by_id[upstream_id]
        payload: dict[str, Any] = {
            "language": language,
            "upstream_id": upstream_id,
            "question": item["question"],
            "ground_truth": answer["ground_truth"],
        }
        if agent:
            payload["function"] = _python_literal(item["function"], prompt_path, upstream_id, "function")
            payload["initial_config"] = _python_literal(item["initial_config"], prompt_path, upstream_id, "initial_config")
            payload["involved_classes"] = _python_literal(item["involved_classes"], prompt_path, upstream_id, "involved_classes")
            payload["ground_truth"] = _python_literal(answer["ground_truth"], answer_path, upstream_id, "ground_truth")
            payload["mile_stone"] = _python_literal(answer["mile_stone"], answer_path, upstream_id, "mile_stone")
            if not isinstance(payload["involved_classes"], list) or not isinstance(payload["initial_config"], dict):
                raise DataError(prompt_path, f"record {upstream_id}: malformed agent scenario", field="involved_classes")
        else:
            payload["function"] = item["function"]
            if "time" in item:
                payload["time"] = item["time"]
            if "profile" in item:
                payload["profile"] = item["profile"]
        cases.append(
            Case(
                case_id=case_id_for(language, upstream_id),
                category=category,
                payload=payload,
                keywords=_keywords(language, category),
            )
        )
    return cases


def load_cases(context: SuiteContext) -> list[Case]:
    """Every case of the selected languages and categories (``options.languages`` / ``categories`` in suite.yaml).

    A language folder that is absent is skipped (so the samples may carry fewer files); inside a present folder a
    prompt file without its ground truth, or an id without an answer, is a DataError."""
    data_dir, definition = Path(context.data_dir), context.definition
    options = definition.get("options") or {}
    languages: Sequence[str] = options.get("languages") or definition.get("languages") or LANGUAGES
    categories = _selected_categories(definition)
    cases: list[Case] = []
    for language in languages:
        folder = data_dir / f"data_{language}"
        if not folder.is_dir():
            continue
        for category in categories:
            if not (folder / f"data_{category}.json").is_file():
                continue
            cases.extend(_load_category(folder, language, category))
    return context.bind(cases)


def _selected_categories(definition: Mapping[str, Any]) -> list[str]:
    declared = definition.get("categories")
    if not declared:
        return list(ALL_CATEGORIES)
    names: list[str] = []
    for entry in declared:
        name = entry.get("name") if isinstance(entry, Mapping) else entry
        if name in ALL_CATEGORIES:
            names.append(name)
    return names or list(ALL_CATEGORIES)
