"""Reading ``tau2 run`` results files: a JSON document with ``info.environment_info.domain_name`` and
``simulations`` (each with ``task_id``, ``trial``, ``messages`` and ``termination_reason``). The first trial of each
task is scored (one item per task until trials are supported); read tolerantly."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs

from .loading import case_id_for


def _message(message: dict) -> dict:
    out = {"role": message.get("role"), "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments") or {},
                              "requestor": c.get("requestor", "assistant")} for c in message["tool_calls"]]
    if message.get("role") == "tool":
        out["id"] = message.get("id")
        out["requestor"] = message.get("requestor", "assistant")
    return out


def replay_outputs(path: Path) -> ReplayOutputs:
    root = Path(path)
    outputs = ReplayOutputs()
    files = [root] if root.is_file() else sorted(root.rglob("*.json")) if root.is_dir() else []
    if not files:
        outputs.error("no tau2 results file here", root)
        return outputs
    for file in files:
        try:
            document = json.loads(file.read_text(encoding="utf-8"))
            domain = document["info"]["environment_info"]["domain_name"]
            simulations = document["simulations"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            outputs.error(f"not a tau2 results file ({type(error).__name__}: {error})", file)
            continue
        for simulation in simulations:
            try:
                case_id = case_id_for(domain, str(simulation["task_id"]))
                if simulation.get("trial", 0) not in (0, None) or case_id in outputs:
                    continue
                outputs[case_id] = json.dumps({
                    "task_id": simulation["task_id"], "trial": simulation.get("trial", 0),
                    "termination_reason": simulation.get("termination_reason"),
                    "messages": [_message(m) for m in simulation.get("messages") or []]})
            except (KeyError, TypeError, AttributeError) as error:
                outputs.error(f"unusable simulation ({type(error).__name__}: {error})", file)
    return outputs
