"""Freeze upstream τ²-bench 1.0.1's own banking_knowledge environment and evaluator outputs as test data
(tests/data/tau2_oracle_banking_knowledge.json.gz); the retrieval oracle is scripts/make_tau2_banking_oracle.py.

Run it as that script is run (upstream's source on the path, its dependencies' venv, ``TAU2_DATA_DIR``):

    TAU2_DATA_DIR=/tmp/tau2data PYTHONPATH=/work/oracle-venvs/tau2-101-src/src \\
        /work/oracle-venvs/tau2-101/bin/python scripts/make_tau2_banking_env_oracle.py

For each of the 97 tasks (upstream's ``get_tasks``: ``tasks/task_*.json``), in a fresh official environment
(``get_environment`` with the ``no_knowledge`` retrieval configuration, whose banking tools are every
configuration's, and the read-log allowlist ``tau2 run`` derives from the task) after the task's initial state:
the variants ``gold`` (the gold actions by their requestors), ``drop_write`` (the first state-mutating call left
out), ``changed_argument`` (the first write whose arguments hold a string, that string altered; for a
discoverable call, inside its JSON), ``extra_write`` (the last write made twice), ``failing_call`` (a lookup of a
user that does not exist, then the gold actions) and ``max_steps`` (gold, ended by max steps), and three probes
(see :func:`probes`): every discoverable tool unlocked and called with no arguments, the gold discoverable calls
with each argument spoilt, and the base and user tools' error paths. Of each: the calls, the sha256 of every
official result text (its first 16 hex digits) and its error flag, the final database hash, and the official ``evaluate_simulation``
(type ``all``) reward and breakdown (task_102, graded on DB and an NL assertion, with its basis cut to DB: the
judge is an LLM). Also the agent's and the user's tool schemas and the initial hash. Only calls, hashes and rewards
are stored, never upstream data.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
from pathlib import Path

from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.domains.banking_knowledge.environment import get_environment, get_tasks
from tau2.domains.banking_knowledge.tools import KnowledgeTools, KnowledgeUserTools
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
from tau2.runner.build import _derive_read_log_allowlist

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle_banking_knowledge.json.gz"
FAILING = {"name": "get_user_information_by_id", "arguments": {"user_id": "nobody_0000"}, "requestor": "assistant"}
VARIANT = "no_knowledge"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def env_for(task, allowlist):
    env = get_environment(retrieval_variant=VARIANT, task=task, read_log_allowlist=allowlist)
    state = task.initial_state
    if state is not None:
        env.set_state(initialization_data=state.initialization_data,
                      initialization_actions=state.initialization_actions,
                      message_history=state.message_history or [])
    return env


def _agent(tool: str, /, **arguments) -> dict:
    return {"name": tool, "arguments": arguments, "requestor": "assistant"}


def _user(tool: str, /, **arguments) -> dict:
    return {"name": tool, "arguments": arguments, "requestor": "user"}


def discoverable(kit: type) -> list[str]:
    return sorted(name for name in dir(kit) if getattr(getattr(kit, name), "__discoverable__", False))


def _spoilt(arguments: dict) -> list[dict]:
    """Each argument of a discoverable call spoilt in turn: a string altered, emptied; a number 0, negative, a
    fraction, a string; a boolean None; and one unknown argument."""
    out = []
    for key, value in arguments.items():
        if isinstance(value, bool):
            choices = [None, not value]
        elif isinstance(value, (int, float)):
            choices = [0, -5, 2.5, "12", None]
        elif isinstance(value, str):
            choices = [value + "X", "", value.upper(), 'a"b']
        else:
            choices = [None]
        out += [dict(arguments, **{key: choice}) for choice in choices]
    out.append(dict(arguments, unexpected_argument=1))
    return out


def probes(raw: dict) -> dict[str, dict]:
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor", "assistant")}
               for a in raw["evaluation_criteria"].get("actions") or []]
    agent_tools, user_tools = discoverable(KnowledgeTools), discoverable(KnowledgeUserTools)
    unlock = [_agent("list_discoverable_agent_tools"), _agent("call_discoverable_agent_tool",
                                                              agent_tool_name=agent_tools[0], arguments="{}")]
    unlock += [_agent("unlock_discoverable_agent_tool", agent_tool_name=name) for name in agent_tools]
    unlock += [_agent("call_discoverable_agent_tool", agent_tool_name=name, arguments="{}") for name in agent_tools]
    unlock += [_agent("unlock_discoverable_agent_tool", agent_tool_name="no_such_tool_1"),
               _agent("call_discoverable_agent_tool", agent_tool_name="no_such_tool_1"),
               _agent("call_discoverable_agent_tool", agent_tool_name=agent_tools[1], arguments="{bad json"),
               _agent("call_discoverable_agent_tool", agent_tool_name=agent_tools[1], arguments="[1, 2]"),
               _agent("list_discoverable_agent_tools"), _agent("freeze_debit_card_3892", card_id="dbc_none")]
    unlock += [_agent("give_discoverable_user_tool", discoverable_tool_name=name) for name in user_tools]
    unlock += [_agent("give_discoverable_user_tool", discoverable_tool_name="apply_for_credit_card"),
               _agent("give_discoverable_user_tool", discoverable_tool_name=user_tools[0], arguments='{"zzz": 1}'),
               _agent("give_discoverable_user_tool", discoverable_tool_name=user_tools[0], arguments="{bad"),
               _agent("give_discoverable_user_tool", discoverable_tool_name="nope")]
    unlock += [_user("call_discoverable_user_tool", discoverable_tool_name=name) for name in user_tools]
    unlock += [_user("list_discoverable_user_tools"), _user("call_discoverable_user_tool",
                                                            discoverable_tool_name="nope"),
               _user("call_discoverable_user_tool", discoverable_tool_name=user_tools[0], arguments="{bad"),
               _user("call_discoverable_user_tool", discoverable_tool_name=user_tools[0],
                     arguments='{"user_id": "u", "transaction_id": "t", "extra": 1}')]
    spoilt = [_agent("unlock_discoverable_agent_tool", agent_tool_name=name) for name in agent_tools]
    seen = set()
    for action in actions:
        key = json.dumps(action, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        if action["name"] == "call_discoverable_agent_tool":
            inner = json.loads(action["arguments"].get("arguments") or "{}")
            for arguments in _spoilt(inner):
                spoilt.append(_agent("call_discoverable_agent_tool", agent_tool_name=action["arguments"]
                                     ["agent_tool_name"], arguments=json.dumps(arguments)))
            spoilt += [action, action]
        elif action["name"] == "call_discoverable_user_tool":
            inner = json.loads(action["arguments"].get("arguments") or "{}")
            spoilt.append(_agent("give_discoverable_user_tool", discoverable_tool_name=action["arguments"]
                                 ["discoverable_tool_name"]))
            for arguments in _spoilt(inner):
                spoilt.append(dict(action, arguments=dict(action["arguments"], arguments=json.dumps(arguments))))
            spoilt += [action, action]
        elif action["name"] not in ("unlock_discoverable_agent_tool", "give_discoverable_user_tool"):
            for arguments in _spoilt(action["arguments"]):
                spoilt.append(dict(action, arguments=arguments))
            spoilt += [action, action]
    users = [a["arguments"].get("user_id") for a in actions if a["name"] == "log_verification"] or ["nobody"]
    user = users[0]
    base = [_agent("get_current_time"), _agent("get_user_information_by_id", user_id=user),
            _agent("get_user_information_by_name", customer_name='O"Brien'),
            _agent("get_user_information_by_email", email="nobody@example.com"),
            _agent("get_referrals_by_user", user_id=user), _agent("get_credit_card_transactions_by_user",
                                                                 user_id=user),
            _agent("get_credit_card_accounts_by_user", user_id=user),
            _agent("change_user_email", user_id="nobody", new_email="x@y.z"),
            _agent("change_user_email", user_id=user, new_email="probe@example.com"),
            _agent("transfer_to_human_agents", summary="probe", reason="bogus"),
            _agent("transfer_to_human_agents", summary="probe"),
            _agent("log_verification", name="N", user_id=user, address="A", email="E", phone_number="P",
                   date_of_birth="01/01/1990", time_verified="2025-11-14 03:40:00 EST"),
            _agent("log_verification", name="N", user_id=user, address="A", email="E", phone_number="P",
                   date_of_birth="01/01/1990", time_verified="2025-11-14 03:40:00 EST"),
            _agent("get_user_information_by_id"), _agent("no_such_tool"), _user("no_such_tool"),
            _user("request_human_agent_transfer"), _user("request_human_agent_transfer"),
            _user("apply_for_credit_card", card_type="Nope Card", customer_name="N", annual_income=1),
            _user("apply_for_credit_card", card_type="Gold Rewards Card", customer_name="N", annual_income="lots"),
            _user("apply_for_credit_card", card_type="Gold Rewards Card", customer_name="N", annual_income=50000),
            _user("apply_for_credit_card", card_type="Gold Rewards Card", customer_name="N", annual_income=50000.0),
            _user("submit_referral", user_id=user, account_type="Blue Account"),
            _user("submit_referral", user_id=user, account_type="Blue Account"),
            _user("submit_transaction", user_id=user, credit_card_type="Nope", merchant_name="M", amount=1.0,
                  category="Travel"),
            _user("submit_transaction", user_id=user, credit_card_type="Silver Rewards Card", merchant_name="M",
                  amount=127.43, category="Travel"),
            _user("submit_transaction", user_id=user, credit_card_type="EcoCard", merchant_name="M", amount=10,
                  category="Other"),
            _user("list_discoverable_user_tools")]
    return {"probe_unlock": {"calls": unlock, "say": "Done.", "termination": "agent_stop"},
            "probe_spoilt": {"calls": spoilt, "say": "Done.", "termination": "agent_stop"},
            "probe_base": {"calls": base, "say": "Done.", "termination": "user_stop"}}


def variants(raw: dict, is_write) -> dict[str, dict]:
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor", "assistant")}
               for a in raw["evaluation_criteria"].get("actions") or []]
    out = {"gold": {"calls": actions, "say": "Done.", "termination": "agent_stop"},
           "max_steps": {"calls": actions, "say": "Done.", "termination": "max_steps"},
           "failing_call": {"calls": [FAILING] + actions, "say": "Done.", "termination": "agent_stop"}}
    writes = [i for i, a in enumerate(actions) if is_write(a["name"])]
    if writes:
        first, last = writes[0], writes[-1]
        out["drop_write"] = {"calls": actions[:first] + actions[first + 1:], "say": "Done.",
                             "termination": "agent_stop"}
        out["extra_write"] = {"calls": actions[:last + 1] + [actions[last]] + actions[last + 1:], "say": "Done.",
                              "termination": "agent_stop"}
        for index in writes:
            changed = copy.deepcopy(actions)
            arguments = changed[index]["arguments"]
            inner = json.loads(arguments["arguments"]) if isinstance(arguments.get("arguments"), str) else None
            target = inner if isinstance(inner, dict) else arguments
            keys = [k for k, v in target.items() if isinstance(v, str)]
            if keys:
                target[keys[0]] += "X"
                if target is inner:
                    arguments["arguments"] = json.dumps(inner)
                out["changed_argument"] = {"calls": changed, "say": "Done.", "termination": "agent_stop"}
                break
    return out


def run_variant(task, raw: dict, variant: dict, allowlist) -> dict:
    env = env_for(task, allowlist)
    messages = list(task.initial_state.message_history or []) if task.initial_state else []
    results = []
    for index, call in enumerate(variant["calls"]):
        tool_call = ToolCall(id=f"call_{index}", name=call["name"], arguments=call["arguments"],
                             requestor=call["requestor"])
        response = env.get_response(tool_call)
        results.append({"sha256": sha(response.content), "error": response.error})
        message_type = UserMessage if call["requestor"] == "user" else AssistantMessage
        messages.append(message_type(role=call["requestor"], content=None, tool_calls=[tool_call]))
        messages.append(ToolMessage(id=tool_call.id, role="tool", content=response.content,
                                    requestor=call["requestor"], error=response.error))
    messages.append(AssistantMessage(role="assistant", content=variant["say"]))
    simulation = SimulationRun(id="oracle", task_id=task.id, start_time="", end_time="", duration=0.0,
                               termination_reason=TerminationReason(variant["termination"]), messages=messages,
                               timestamp="")
    info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain="banking_knowledge",
                               env_kwargs={"retrieval_variant": VARIANT, "read_log_allowlist": allowlist})
    breakdown = {str(k.value if hasattr(k, "value") else k): v for k, v in (info.reward_breakdown or {}).items()}
    return {**variant, "results": results, "db_hash": env.get_db_hash(), "reward": info.reward,
            "reward_breakdown": breakdown if info.reward_breakdown is not None else None}


def main() -> None:
    env = get_environment(retrieval_variant=VARIANT)
    document = {"oracle": "upstream tau2-bench 1.0.1 (source, its own environment and evaluator)",
                "domain": "banking_knowledge", "retrieval": VARIANT, "initial_db_hash": env.get_db_hash(),
                "tool_schemas": [json.dumps(tool.openai_schema) for tool in env.get_tools()],
                "user_tool_schemas": [json.dumps(tool.openai_schema) for tool in env.get_user_tools()],
                "tasks": {}}
    for task in get_tasks():
        raw = json.loads(task.model_dump_json())
        basis = [b.value if hasattr(b, "value") else b for b in task.evaluation_criteria.reward_basis]
        if "NL_ASSERTION" in basis:  # the judge is an LLM: the environment part only
            task = task.model_copy(deep=True)
            task.evaluation_criteria.reward_basis = [b for b in task.evaluation_criteria.reward_basis
                                                     if (b.value if hasattr(b, "value") else b) != "NL_ASSERTION"]
        allowlist = _derive_read_log_allowlist(task)
        runs = {**variants(raw, env._is_mutating_tool), **probes(raw)}
        document["tasks"][task.id] = {name: run_variant(task, raw, variant, allowlist)
                                      for name, variant in runs.items()}
    # calls and result hashes repeat across tasks (the probes): each distinct one stored once, referred to by index
    calls: dict[str, int] = {}
    hashes: dict[str, int] = {}
    for runs in document["tasks"].values():
        for run in runs.values():
            run["calls"] = [calls.setdefault(json.dumps(call, sort_keys=True), len(calls)) for call in run["calls"]]
            run["results"] = [[hashes.setdefault(r["sha256"][:16], len(hashes)), r["error"]] for r in run["results"]]
    document["calls"], document["sha256_16"] = list(calls), list(hashes)
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, sort_keys=True).encode())
    count = sum(len(v) for v in document["tasks"].values())
    total = sum(len(r["calls"]) for v in document["tasks"].values() for r in v.values())
    print(f"{OUT}: {len(document['tasks'])} tasks, {count} trajectories, {total} calls")


if __name__ == "__main__":
    main()
