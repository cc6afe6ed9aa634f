"""``wild-tool-bench/data/Wild-Tool-Bench.jsonl`` read into cases: one case per task (4 per dialogue line).

Upstream: yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065. The file is not redistributable
(the repository has no license): suite.yaml declares it as a download (git blob e91dd1c5...), the user may point
``--toolbench-data`` at a folder holding ``wildtoolbench/Wild-Tool-Bench.jsonl``, and without either the suite runs
on the hand-written samples in ``samples/`` (same format).

One line is one dialogue (``id`` ``wild_tool_bench_<k>``) with ``english_env_info``, ``english_tools``,
``english_tasks`` (the user messages), ``english_answer_list`` (per task, the gold nodes: ``action`` {``name``,
``arguments``}, ``observation``, ``user_input`` for a clarification, ``dependency_list``), ``english_task_types``,
``english_turn_subtypes`` (tasks 2..), and ``answer_list`` (the other-language answers; upstream's AP denominator
reads *its* lengths, a quirk kept here: ``ap_total``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext
from .graph import DEFAULT_MAX_COMBINATIONS, GraphError, PathLimitExceeded, ToolCallGraph
from .prompt import HistoryError, convert_tools, opening_messages, task_trajectory

DATA_FILE = "Wild-Tool-Bench.jsonl"

TASK_TYPES = {
    "Single-Tool": "single_tool",
    "Parallel Multi-Tool": "parallel_multi_tool",
    "Sequential Multi-Tool": "sequential_multi_tool",
    "Mixed Multi-Tool": "mixed_multi_tool",
    "Clarify": "clarify",
    "Chat": "chat",
}
TURN_SUBTYPES = {
    "First Turn": "first_turn",
    "Coreferential Reference": "coreferential_reference",
    "Partial Information": "partial_information",
    "Long-Range Dependency": "long_range_dependency",
}
FIRST_TURN = "First Turn"
LANGUAGES = ("en",)

_NODE = {
    "type": "object",
    "required": ["action", "observation", "dependency_list"],
    "properties": {
        "action": {"type": "object", "required": ["name", "arguments"], "properties": {"name": {"type": "string"}}},
        "dependency_list": {"type": "array", "items": {"type": "integer"}},
    },
}
RECORD_SCHEMA = {
    "type": "object",
    "required": ["id", "english_env_info", "english_tools", "english_tasks", "english_answer_list",
                 "english_task_types", "english_turn_subtypes"],
    "properties": {
        "id": {"type": "string", "pattern": r"^.*_[0-9]+$"},
        "english_tools": {"type": "array", "items": {
            "type": "object", "required": ["function"],
            "properties": {"function": {"type": "object", "required": ["name"],
                                        "properties": {"name": {"type": "string"}}}}}},
        "english_tasks": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "english_answer_list": {"type": "array", "items": {"type": "array", "items": _NODE}},
        "english_task_types": {"type": "array", "items": {"enum": list(TASK_TYPES)}},
        "english_turn_subtypes": {"type": "array", "items": {"enum": [t for t in TURN_SUBTYPES if t != FIRST_TURN]}},
        "answer_list": {"type": "array", "items": {"type": "array"}},
    },
}


def case_id(dialogue_id: str, task_idx: int) -> str:
    """``wild_tool_bench_<k>-task<j>``: the dialogue's own id and upstream's 0-based ``task_idx``."""
    return f"{dialogue_id}-task{task_idx}"


def dialogue_of(case_id_: str) -> str:
    return case_id_.rsplit("-task", 1)[0]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _options(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The options with their defaults; their values were checked by the core against the schemas in suite.yaml (one
    usage error naming the option) before loading."""
    options = dict(definition.get("options") or {})
    return {"language": options.get("language", "en"),
            "max_graph_combinations": options.get("max_graph_combinations", DEFAULT_MAX_COMBINATIONS)}


def settings(case: Case) -> dict[str, Any]:
    """The suite options a case runs with: its suite's (``case.context``), with their defaults; the defaults alone
    for a case bound to no context."""
    return _options(case.context.definition if case.context is not None else {})


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = _options(definition)
    path = Path(data_dir) / DATA_FILE
    records = load_jsonl(path, RECORD_SCHEMA)
    cases: list[Case] = []
    for line, record in enumerate(records, start=1):
        cases.extend(dialogue_cases(record, options, path, line))
    return context.bind(cases)


def dialogue_cases(record: Mapping[str, Any], options: Mapping[str, Any], path: Path | str = DATA_FILE,
                   line: int | None = None) -> list[Case]:
    """The cases of one dialogue line (one per task), with every earlier task's gold trajectory prepared."""
    dialogue = record["id"]
    tasks = record["english_tasks"]
    answers = record["english_answer_list"]
    types = record["english_task_types"]
    subtypes = record["english_turn_subtypes"]
    if len(answers) != len(tasks) or len(types) < len(tasks) or len(subtypes) < len(tasks) - 1:
        raise DataError(path, f"{dialogue}: {len(tasks)} tasks but {len(answers)} answer lists, {len(types)} task "
                              f"types and {len(subtypes)} turn subtypes", line=line)
    other_answers = record.get("answer_list")
    tools = convert_tools(record["english_tools"])
    budget = options["max_graph_combinations"]
    cases = []
    earlier: list[list[dict[str, Any]]] = []
    history_error: str | None = None
    for task_idx, (task, nodes) in enumerate(zip(tasks, answers)):
        graph_error, min_length, path_steps = None, None, None
        try:
            graph = ToolCallGraph(nodes, budget)
            min_length = graph.min_length
            path_steps = [list(group) for group in graph.first_optimal_path()]
        except (GraphError, PathLimitExceeded) as error:
            graph_error = f"{type(error).__name__}: {error}"
        opening = None
        if history_error is None:
            try:
                opening = opening_messages(record["english_env_info"], earlier, task, f"{dialogue}/{task_idx}")
            except (HistoryError, KeyError, TypeError) as error:
                history_error = f"history: {error}"
        task_type = types[task_idx]
        turn_subtype = FIRST_TURN if task_idx == 0 else subtypes[task_idx - 1]
        if isinstance(other_answers, list) and task_idx < len(other_answers):
            ap_total = len(other_answers[task_idx])
        else:
            ap_total = len(nodes)  # no other-language list: the English one (upstream would raise)
        payload = {
            "dialogue": dialogue,
            "task_idx": task_idx,
            "tools": tools,
            "task": task,
            "nodes": nodes,
            "opening": opening,
            "opening_error": history_error,
            "graph_error": graph_error,
            "min_length": min_length,
            "gold_path": path_steps,
            "task_type": task_type,
            "turn_subtype": turn_subtype,
            "ap_total": ap_total,
            "dialogue_tasks": len(tasks),
        }
        keywords = [f"layer{task_idx}", TURN_SUBTYPES[turn_subtype]]
        if "Multi-Tool" in task_type:
            keywords.insert(0, "multi_tool")
        cases.append(Case(case_id=case_id(dialogue, task_idx), category=TASK_TYPES[task_type],
                          payload=payload, keywords=tuple(keywords)))
        # the next task's history: this task's gold trajectory along its first optimal path
        if history_error is None:
            if path_steps is None:
                history_error = f"history: task {task_idx} has no gold execution order ({graph_error})"
            else:
                try:
                    earlier.append(task_trajectory(task, nodes, path_steps))
                except (HistoryError, KeyError, TypeError) as error:
                    history_error = f"history: task {task_idx}: {error}"
    return cases
