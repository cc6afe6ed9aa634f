"""The three datasets (RoTBench Clean, BFCL executable, ToolAlpaca eval_real) read into cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_json, load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.scorer_lib.rotbench import gold_alternatives, read_cases
from pytest_toolbench.scorer_lib.tl_failures import tool_signatures
from pytest_toolbench.contract.suite import Case, SuiteContext
from .decoding import parse_python_calls

BFCL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple")
DATASETS = {"rotbench_clean": "RoTBench Clean", "bfcl_exec": "BFCL-v3 executable", "toolalpaca_real": "ToolAlpaca"}
# Item names must not contain another suite's name: `pytest -k rotbench` / `-k bfcl` select those suites alone, and
# -k matches substrings of ids, categories and keywords. Hence `rot_clean` and `exec_*` here.
CATEGORY_DATASETS = {"rot_clean": "rotbench_clean", "toolalpaca_real": "toolalpaca_real"}

BFCL_QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "question", "function"],
    "properties": {"id": {"type": "string"},
                   "question": {"type": "array", "minItems": 1, "items": {"type": "array", "items": {
                       "type": "object", "required": ["role", "content"]}}},
                   "function": {"type": "array", "items": {"type": "object", "required": ["name"]}}},
}
BFCL_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "ground_truth"],
    "properties": {"id": {"type": "string"}, "ground_truth": {"type": "array", "minItems": 1,
                                                               "items": {"type": "string"}}},
}
TOOLALPACA_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "required": ["Name", "Function_Description", "Instructions", "Golden_Answers"],
              "properties": {
                  "Name": {"type": "string"},
                  "Function_Description": {"type": "object", "additionalProperties": {"type": "string"}},
                  "Instructions": {"type": "array", "items": {"type": "string"}},
                  "Golden_Answers": {"type": "array", "items": {"type": "array", "minItems": 1, "items": {
                      "type": "object", "required": ["Action", "Action_Input"],
                      "properties": {"Action": {"type": "string"}, "Action_Input": {"type": "string"}}}}}}},
}


def reused_folders(definition: Mapping[str, Any]) -> dict[str, str]:
    """Suite name -> folder (relative to this suite's data folder) of the other suites' data that suite.yaml declares
    this suite reuses (``data.reuses``). Undeclared data is not read."""
    return {entry["suite"]: entry["folder"] for entry in (definition.get("data") or {}).get("reuses") or ()}


def settings(case: Case) -> dict[str, Any]:
    """The suite options a case is asked and scored with (``system_prompt``, ``empty_input_fails``): its suite's
    (``case.context``), with their defaults; the defaults alone for a case bound to no context."""
    options = case.context.options if case.context is not None else {}
    return {"system_prompt": options.get("system_prompt", "tl_codellama"),
            "empty_input_fails": bool(options.get("empty_input_fails", True))}


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    reused = reused_folders(definition)
    cases: list[Case] = []
    # RoTBench's data is read and judged with RoTBench's format library (pytest_toolbench.scorer_lib.rotbench),
    # never through the rotbench suite's scorer.
    if "rotbench" in reused and (data_dir / reused["rotbench"] / "First_Turn" / "clean.json").is_file():
        cases += _rotbench_cases(data_dir / reused["rotbench"])
    if "bfcl" in reused:
        question_dir = data_dir / reused["bfcl"] / "unused_datasets" / "question"
        for category in BFCL_CATEGORIES:
            if (question_dir / f"BFCL_v4_exec_{category}.json").is_file():
                cases += _bfcl_cases(data_dir / reused["bfcl"] / "unused_datasets", category)
    if (data_dir / "toolalpaca" / "eval_real.json").is_file():
        cases += _toolalpaca_cases(data_dir / "toolalpaca" / "eval_real.json")
    if not cases:
        expected = [f"{reused['rotbench']}/First_Turn/clean.json"] if "rotbench" in reused else []
        expected += [f"{reused['bfcl']}/unused_datasets/question/BFCL_v4_exec_*.json"] if "bfcl" in reused else []
        raise DataError(data_dir, f"none of {', '.join(expected + ['toolalpaca/eval_real.json'])} found")
    return context.bind(cases)


def _rotbench_cases(folder: Path) -> list[Case]:
    cases = []
    for source in read_cases(folder, ["First_Turn"], ["clean"]):
        payload = source.payload
        query = payload["history"][1]["value"]
        # RoTBench's user message ends with its own ReAct cue "\nBegin!\n"; the TL protocol sends the bare query.
        query = query[:-len("\nBegin!\n")] if query.endswith("\nBegin!\n") else query
        cases.append(Case(
            case_id=f"rot-clean-{payload['index']}", category="rot_clean",
            keywords=("rot", payload["scenario"].lower()),
            payload={"dataset": "rotbench_clean", "messages": [{"role": "user", "content": query}],
                     "tools": payload["tools"], "rotbench_gold": payload["gold"],
                     "gold": [[{"name": n, "arguments": a}] for n, a in gold_alternatives(payload["gold"])]}))
    return cases


def _bfcl_cases(folder: Path, category: str) -> list[Case]:
    questions = load_jsonl(folder / "question" / f"BFCL_v4_exec_{category}.json", BFCL_QUESTION_SCHEMA)
    answer_path = folder / "possible_answer" / f"BFCL_v4_exec_{category}.json"
    answers = {a["id"]: a for a in load_jsonl(answer_path, BFCL_ANSWER_SCHEMA)}
    cases = []
    for question in questions:
        if question["id"] not in answers:
            raise DataError(answer_path, f"no ground truth for {question['id']}")
        try:
            signatures = tool_signatures(question["function"])
            gold = [call for text in answers[question["id"]]["ground_truth"]
                    for call in parse_python_calls(text, signatures)]
        except ValueError as exc:
            raise DataError(answer_path, f"{question['id']}: ground truth is not a call ({exc})") from None
        cases.append(Case(
            case_id=question["id"], category=f"exec_{category}", keywords=("berkeley",),
            payload={"dataset": "bfcl_exec", "messages": [dict(m) for m in question["question"][0]],
                     "tools": question["function"], "gold": [gold]}))
    return cases


_PARAMETERS_LINE = re.compile(r"^Parameters: (\{.*\})$", re.MULTILINE)


def _toolalpaca_tool(name: str, description: str) -> dict[str, Any]:
    """ToolAlpaca's natural-language function doc as a JSON-schema tool (``"Required. type. text"`` per param)."""
    match = _PARAMETERS_LINE.search(description)
    parameters = json.loads(match.group(1)) if match else {}
    properties, required = {}, []
    for param, text in parameters.items():
        parts = str(text).split(". ", 2) if isinstance(text, str) else []
        is_required = bool(parts) and parts[0] == "Required"
        rest = parts[1:] if is_required else parts
        kind = rest[0].rstrip(".") if rest else "string"
        properties[param] = {"type": kind, "description": ". ".join(rest[1:]).strip()}
        if is_required:
            required.append(param)
    return {"name": name, "description": description.split("\n", 1)[0],
            "parameters": {"type": "object", "properties": properties, "required": required}}


def _toolalpaca_cases(path: Path) -> list[Case]:
    cases = []
    for api_index, api in enumerate(load_json(path, TOOLALPACA_SCHEMA)):
        tools = [_toolalpaca_tool(n, d) for n, d in api["Function_Description"].items()]
        if len(api["Instructions"]) != len(api["Golden_Answers"]):
            raise DataError(path, "Instructions and Golden_Answers differ in length", field=f"{api_index}")
        for number, (instruction, steps) in enumerate(zip(api["Instructions"], api["Golden_Answers"])):
            gold, defect = [], ""
            for step in steps:
                try:
                    arguments = json.loads(step["Action_Input"]) if step["Action_Input"].strip() else {}
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    # Upstream annotation defect (e.g. '"symbols": "symbols": [...]' in CurrencyBeacon): the tool is
                    # known, the arguments are not, so such a case can pass TS but never PI or CF.
                    defect = defect or f"gold Action_Input of {step['Action']} is not a JSON object"
                    arguments = {}
                gold.append({"name": step["Action"], "arguments": arguments})
            cases.append(Case(
                case_id=f"toolalpaca-{api_index}-{number}", category="toolalpaca_real",
                keywords=("toolalpaca",),
                payload={"dataset": "toolalpaca_real", "api": api["Name"], "gold_defect": defect,
                         "messages": [{"role": "user", "content": instruction}], "tools": tools, "gold": [gold]}))
    return cases
