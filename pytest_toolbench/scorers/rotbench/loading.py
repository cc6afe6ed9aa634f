"""RoTBench's data files (``<Turn>/<level>.json``) read into cases: one per record, ids by position in the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...data import load_json
from ...errors import DataError
from ...suite import Case
from .decoding import parse_gold, tools_from_system_prompt

SUITE = "rotbench"
TURNS: dict[str, str] = {"First_Turn": "first_turn", "Third_Turn": "third_turn"}
LEVELS: tuple[str, ...] = ("clean", "slight", "medium", "heavy", "union")
#: Scenario codes in the order the official ``show_stats`` prints them.
SCENARIOS: dict[str, str] = {
    "TG": "Text Generation", "RS": "Real-Time Search", "DU": "Data Understanding", "PL": "Personal Life",
    "AM": "Application Manipulation", "IR": "Information Retrieval", "FT": "Financial Transactions",
}

_MESSAGE = {
    "type": "object",
    "required": ["from", "value"],
    "properties": {"from": {"enum": ["system", "user", "assistant", "function"]}, "value": {"type": "string"}},
}
DATA_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "scenario", "conversations"],
        "properties": {
            "id": {"type": "string"},
            "scenario": {"enum": list(SCENARIOS)},
            "conversations": {
                "type": "array",
                "minItems": 3,
                "prefixItems": [
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "system"}, "value": {"type": "string", "pattern": r"\["}}},
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "user"}, "value": {"type": "string"}}},
                ],
                # The last message holds the list of acceptable gold answers; the ones between are history.
                "items": {"anyOf": [
                    _MESSAGE,
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "assistant"},
                                    "value": {"type": "array", "minItems": 1, "items": {"type": "string"}}}},
                ]},
            },
        },
    },
}


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    data_dir = Path(data_dir)
    options = definition.get("options") or {}
    turns = options.get("turns") or list(TURNS)
    levels = options.get("levels") or list(LEVELS)
    cases: list[Case] = []
    found = False
    for turn in turns:
        for level in levels:
            path = data_dir / turn / f"{level}.json"
            if not path.is_file():
                continue
            found = True
            for index, record in enumerate(load_json(path, DATA_SCHEMA)):
                cases.append(_case(path, turn, level, index, record))
    if not found:
        raise DataError(data_dir, "no RoTBench data files (<Turn>/<level>.json) found")
    return cases


def _case(path: Path, turn: str, level: str, index: int, record: Mapping[str, Any]) -> Case:
    conversations = record["conversations"]
    try:
        tools = tools_from_system_prompt(conversations[0]["value"])
    except ValueError as exc:
        raise DataError(path, f"tool list in the system prompt is not JSON ({exc})", field=f"{index}/conversations/0")
    if not isinstance(tools, list) or len(tools) < 2 or not all(isinstance(t, dict) and "name" in t for t in tools):
        raise DataError(path, "tool list must hold at least two tools with names", field=f"{index}/conversations/0")
    gold = conversations[-1]["value"]
    if not isinstance(gold, list):
        raise DataError(path, "the last message must hold the list of gold answers", field=f"{index}/conversations")
    for number, answer in enumerate(gold):
        try:
            _, gold_input = parse_gold(answer)
        except ValueError:
            gold_input = None
        if not isinstance(gold_input, dict):
            raise DataError(path, "gold Action Input is not a JSON object",
                            field=f"{index}/conversations/{len(conversations) - 1}/value/{number}")
    turn_key = TURNS[turn]
    return Case(
        suite=SUITE,
        case_id=f"{turn_key}-{level}-{index}",
        category=f"{turn_key}_{level}",
        payload={
            "turn": turn, "level": level, "index": index, "id": record["id"], "scenario": record["scenario"],
            "history": [dict(m) for m in conversations[:-1]], "tools": tools, "gold": list(gold),
        },
        keywords=(turn_key, level, record["scenario"].lower()),
    )
