"""Reading ``tau2 run`` results files: a JSON document with ``info.environment_info.domain_name`` and
``simulations`` (each with ``task_id``, ``trial``, ``messages`` and ``termination_reason``). Each simulation is
mapped to its task (the case ``<domain>_<task_id>``) and its trial: trial 0 is the case's output, trial K its
``--toolbench-repeat`` sample K (``sample_key``), so ``--toolbench-repeat=K`` scores the first K trials of every
task, one item each. Both of upstream's storage formats are read: one JSON document holding the ``simulations``, and
the ``dir`` format (``results.json`` without them, and one file per simulation in the ``simulations/`` folder beside
it). The output keeps ``task_id`` and ``trial``, and the NL-assertion judgments the file recorded
(``reward_info.nl_assertions``: upstream's judge's, gpt-4.1 by default) for the tasks graded on them. Read
tolerantly: a file or simulation that cannot be used is a problem of the run, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, sample_key

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


def _recorded_judgments(simulation: dict) -> list[dict] | None:
    """The NL-assertion checks of the simulation's ``reward_info`` (None when it recorded none)."""
    checks = (simulation.get("reward_info") or {}).get("nl_assertions")
    if not isinstance(checks, list):
        return None
    return [{"nl_assertion": c.get("nl_assertion"), "met": c.get("met"), "justification": c.get("justification")}
            for c in checks if isinstance(c, dict)]


def _trajectory(simulation: dict) -> str:
    trajectory = {"task_id": simulation["task_id"], "trial": simulation.get("trial") or 0,
                  "termination_reason": simulation.get("termination_reason"),
                  "messages": [_message(m) for m in simulation.get("messages") or []]}
    judgments = _recorded_judgments(simulation)
    if judgments is not None:
        trajectory["nl_judgments"] = {"judge": "recorded in the tau2 results file", "checks": judgments}
    return json.dumps(trajectory)


SIMULATIONS_DIR = "simulations"


def _is_simulation_file(file: Path) -> bool:
    """A file of a ``dir``-format run's ``simulations/`` folder (read with its ``results.json``)."""
    return file.parent.name == SIMULATIONS_DIR and any(file.parent.parent.glob("*.json"))


def _simulations(document: dict, file: Path, outputs: ReplayOutputs) -> list:
    simulations = document.get("simulations") or []
    folder = file.parent / SIMULATIONS_DIR
    if simulations or not folder.is_dir():
        return simulations
    for sim_file in sorted(folder.glob("*.json")):
        try:
            simulations.append(json.loads(sim_file.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            outputs.error(f"not a simulation file ({type(error).__name__}: {error})", sim_file)
    return simulations


def replay_outputs(path: Path) -> ReplayOutputs:
    root = Path(path)
    outputs = ReplayOutputs()
    files = [root] if root.is_file() else sorted(f for f in root.rglob("*.json") if not _is_simulation_file(f)) \
        if root.is_dir() else []
    if not files:
        outputs.error("no tau2 results file here", root)
        return outputs
    for file in files:
        try:
            document = json.loads(file.read_text(encoding="utf-8"))
            domain = document["info"]["environment_info"]["domain_name"]
            simulations = _simulations(document, file, outputs)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            outputs.error(f"not a tau2 results file ({type(error).__name__}: {error})", file)
            continue
        for index, simulation in enumerate(simulations):
            try:
                trial = simulation.get("trial") or 0
                if not isinstance(trial, int) or trial < 0:
                    raise TypeError(f"trial {trial!r} is not a whole number")
                case_id = case_id_for(domain, str(simulation["task_id"]))
                outputs.add(sample_key(case_id, trial), _trajectory(simulation), file, None)
            except (KeyError, TypeError, AttributeError) as error:
                outputs.error(f"simulation {index}: unusable ({type(error).__name__}: {error})", file)
        outputs.finish_file(file)
    return outputs
