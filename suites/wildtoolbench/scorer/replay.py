"""Replay of the result files upstream's runner writes (``wtb/_llm_response_generation.py`` -> ``BaseHandler.write``).

Layout: ``result/<model>/Wild-Tool-Bench_result.jsonl``, one line per dialogue:
``{"id": "wild_tool_bench_<k>", "model_name": ..., "result": [<task result> x 4]}``, each task result as
``inference_and_eval_multi_step`` returns it (``action_name_label``, ``is_optimal``, ``inference_log`` with
``step_<t>`` entries, ``latency``, token counts). A dialogue whose inference raised is written as
``{"id": ..., "result": "Error during inference: ..."}``: its four tasks fail with ``inference_error``.

``--toolbench-replay`` may name the file, or a folder holding exactly one ``*_result.jsonl`` (searched
recursively, e.g. upstream's ``result/`` with one model). Score files (``*_score.jsonl``, already checked and
trimmed by ``eval_runner``) are refused: checking them again would drop one more step.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id
from .loading import case_id

RESULT_SCHEMA = {
    "type": "object",
    "required": ["id", "result"],
    "properties": {"id": {"type": "string", "pattern": r"_[0-9]+$"},
                   "result": {"type": ["array", "string"], "items": {"type": "object",
                                                                     "required": ["inference_log"]}}},
}
#: Tasks per dialogue in the benchmark (for dialogues whose result is an inference error).
TASKS_PER_DIALOGUE = 4


def _result_file(path: Path, outputs: ReplayOutputs) -> Path | None:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*_result.jsonl") if p.is_file())
        if len(found) == 1:
            return found[0]
        if not found:
            outputs.error("no WildToolBench result file here: expected <model>/Wild-Tool-Bench_result.jsonl as "
                          "upstream's runner writes it", path)
        else:
            outputs.error(f"{len(found)} result files here ({', '.join(str(p) for p in found[:4])}...): name one",
                          path)
        return None
    if not path.exists():
        outputs.error("no such result file or folder", path)
        return None
    if path.name.endswith("_score.jsonl"):
        outputs.error("this is eval_runner's score file (already checked); replay the *_result.jsonl it was made "
                      "from", path)
        return None
    return path


def _strip(task_result: dict) -> dict:
    """The task result without the per-step ``inference_input`` (messages and tools: large, not needed)."""
    log = task_result.get("inference_log")
    if isinstance(log, dict):
        log = {key: ({k: v for k, v in value.items() if k != "inference_input"} if isinstance(value, dict) else value)
               for key, value in log.items()}
        task_result = {**task_result, "inference_log": log}
    return task_result


def replay_outputs(path: Path | str) -> ReplayOutputs:
    outputs = ReplayOutputs()
    source = _result_file(Path(path), outputs)
    if source is None:
        return outputs

    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text)
        return case_id(found, 0) if isinstance(found, str) else None

    for _, number, record in json_lines(outputs, source, RESULT_SCHEMA, what="WildToolBench result",
                                        case_of=case_of):
        dialogue = record["id"]
        result = record["result"]
        if isinstance(result, str):
            for task_idx in range(TASKS_PER_DIALOGUE):
                outputs.add(case_id(dialogue, task_idx), json.dumps({"inference_error": result}, ensure_ascii=False),
                            source, number)
            continue
        for task_idx, task_result in enumerate(result):
            outputs.add(case_id(dialogue, task_idx), json.dumps(_strip(task_result), ensure_ascii=False), source,
                        number)
    return outputs
