"""Freeze upstream tau2-bench 1.0.1's own simulation of scripted conversations as test data
(tests/data/tau2_conversation_oracle.json.gz): the requests its agent and user simulator send, the trajectory and the
termination reason, for scripts that reach every stop condition, and telecom's user tools over the phone; and solo
mode (``LLMSoloAgent`` with ``DummyUser``, ``Orchestrator(solo_mode=True)``, as ``tau2 run --agent llm_agent_solo
--user dummy_user`` builds them: the environment in solo mode, the agent given the user's tools) on telecom and mock.

Run in the oracle venv (Python 3.12, the tau2 1.0.1 source on the path; never a dependency of this project):

    PYTHONPATH=<tau2-bench 1.0.1>/src /work/oracle-venvs/tau2-101/bin/python \\
        scripts/make_tau2_conversation_oracle.py ../shared/data/tau2bench/upstream

Upstream's ``Orchestrator`` runs its ``LLMAgent`` and ``UserSimulator`` as ``tau2 run`` builds them
(``runner/build.py``: the agent gets the environment's tools and policy; the user ``str(task.user_scenario)`` and
the user tools the task names, or none), with one change: the LLM call (``generate`` in the agent's and the user's
modules) is a scripted model that answers each role's n-th request with the script's n-th reply and records what it
was sent (``to_litellm_messages`` of the messages, ``openai_schema`` of the tools). ``tests/test_tau2bench_
conversation_oracle.py`` plays the same scripts through the suite's conversation and compares requests, trajectory
and termination (tool-call ids compared by order of appearance).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_conversation_oracle.json.gz"


def digest(value) -> str:
    """The sha256 of a system prompt's text, or of a tool list's ``json.dumps(..., sort_keys=True)``: stored in
    place of the long texts (the test hashes its own the same way)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def compact(request: dict) -> dict:
    messages = [dict(m) for m in request["messages"]]
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "sha256": digest(messages[0]["content"])}
    out = {"role": request["role"], "messages": messages,
           "tools": None if request["tools"] is None else digest(request["tools"])}
    if "tool_choice" in request:
        out["tool_choice"] = request["tool_choice"]
    return out


def text(content):
    return {"content": content}


def call(name, **arguments):
    return {"calls": [{"name": name, "arguments": arguments}]}


TELECOM_TASK = "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]"
#: (name, domain, task id, max_steps, max_errors, agent replies, user replies)
SCENARIOS = [
    ("stop", "mock", "create_task_1", 200, 10,
     [call("create_task", user_id="user_1", title="Important Meeting"), text("Created task_2.")],
     [text("Please create 'Important Meeting' for user_1."), text("Thanks! ###STOP###")]),
    ("transfer", "mock", "create_task_1", 200, 10,
     [call("transfer_to_human_agents", summary="wants a task"), text("You are being transferred.")],
     [text("I need a human."), text("###TRANSFER###")]),
    ("out_of_scope", "mock", "create_task_1", 200, 10,
     [text("What is your user id?")], [text("Hello"), text("I do not know. ###OUT-OF-SCOPE###")]),
    ("max_steps", "mock", "create_task_1", 5, 10,
     [call("get_users"), text("Here they are."), text("More?")], [text("hi"), text("go on"), text("and?")]),
    ("stop_on_the_last_step", "mock", "create_task_1", 2, 10,
     [text("How can I help?")], [text("hi"), text("###STOP###")]),
    ("too_many_errors", "mock", "create_task_1", 200, 2,
     [call("no_such_tool"), call("create_task", user_id="nobody", title="x"), text("Sorry.")],
     [text("hi"), text("hmm")]),
    ("two_calls_in_one_message", "mock", "create_task_1", 200, 10,
     [{"calls": [{"name": "get_users", "arguments": {}},
                 {"name": "create_task", "arguments": {"user_id": "user_1", "title": "Important Meeting"}}]},
      text("Done.")],
     [text("Create it."), text("###STOP###")]),
    ("user_tools", "mock", "update_task_with_user_tools", 200, 10,
     [call("update_task_status", task_id="task_1", status="completed"), text("Done.")],
     [call("check_notifications"), text("Please mark task_1 completed."),
      call("dismiss_notification", notification_id="notif_1"), text("###STOP###")]),
    ("message_history", "mock", "update_task_with_message_history", 200, 10,
     [call("update_task_status", task_id="task_2", status="completed"), text("Completed.")],
     [text("Mark it completed please."), text("###STOP###")]),
    ("text_beside_a_call", "mock", "create_task_1", 200, 10,
     [{"content": "Let me check.", "calls": [{"name": "get_users", "arguments": {}}]}, text("Found them.")],
     [text("Who are the users?"), text("###STOP###")]),
    ("airline", "airline", "0", 200, 10,
     [call("get_user_details", user_id="raj_sanchez_7340"), text("I see your profile.")],
     [text("Hi, I'm raj_sanchez_7340."), text("###STOP###")]),
    ("retail", "retail", "0", 200, 10,
     [call("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi", zip="19122"), text("Found you.")],
     [text("I'm Yusuf Rossi, zip 19122."), text("Bye ###STOP###")]),
    # telecom: the user's tools over the phone (results back to the user, the device synced after each call), the
    # agent's tools over the customer database, initialization actions on both sides, the manual policy
    ("telecom_user_and_agent_tools", "telecom", TELECOM_TASK, 200, 10,
     [call("get_customer_by_phone", phone_number="555-123-2002"), text("Please turn roaming on on your phone."),
      text("Anything else?")],
     [call("check_status_bar"), text("My mobile data does not work. I am John Smith, 555-123-2002."),
      call("toggle_roaming"), call("run_speed_test"), text("It works now, thanks. ###STOP###")]),
    ("telecom_two_user_calls_and_an_error", "telecom", TELECOM_TASK, 200, 10,
     [call("enable_roaming", customer_id="C9999", line_id="L1002"), text("Could you check your SIM?")],
     [text("No data abroad."), {"calls": [{"name": "check_sim_status", "arguments": {}},
                                          {"name": "set_network_mode_preference", "arguments": {"mode": "bad"}}]},
      text("Bye ###STOP###")]),
    ("telecom_transfer", "telecom", TELECOM_TASK, 200, 10,
     [call("transfer_to_human_agents", summary="roaming issue abroad"), text("YOU ARE BEING TRANSFERRED.")],
     [text("Help me with data abroad."), text("###TRANSFER###")]),
]
#: solo mode (``tau2 run --agent llm_agent_solo --user dummy_user``): the agent alone on the ticket, with the user's
#: tools and ``done``; no user script. The last one's text reply is what upstream's solo agent raises on.
SOLO_SCENARIOS = [
    ("solo_tools_then_done", "telecom", TELECOM_TASK, 200, 10,
     [call("get_customer_by_phone", phone_number="555-123-2002"),
      {"calls": [{"name": "toggle_airplane_mode", "arguments": {}}, {"name": "toggle_roaming", "arguments": {}}]},
      call("run_speed_test"), call("done")], []),
    ("solo_tool_errors_and_done_beside_a_call", "telecom", TELECOM_TASK, 200, 10,
     [call("enable_roaming", customer_id="C9999", line_id="L1002"), call("set_network_mode_preference", mode="bad"),
      {"calls": [{"name": "check_sim_status", "arguments": {}}, {"name": "done", "arguments": {}}]}], []),
    ("solo_max_steps", "mock", "create_task_1", 4, 10,
     [call("get_users"), call("create_task", user_id="user_1", title="Important Meeting"), call("get_users")], []),
    ("solo_text_reply", "mock", "create_task_1", 200, 10, [call("get_users"), text("All done.")], []),
]


def run(scenario, solo: bool = False) -> dict:
    from tau2.agent import llm_agent
    from tau2.agent.llm_agent import LLMAgent, LLMSoloAgent
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.orchestrator.orchestrator import Orchestrator
    from tau2.registry import registry
    from tau2.user import user_simulator
    from tau2.user.user_simulator import DummyUser, UserSimulator
    from tau2.utils.llm_utils import to_litellm_messages

    name, domain, task_id, max_steps, max_errors, agent_script, user_script = scenario
    task = {t.id: t for t in registry.get_tasks_loader(domain)(None)}[task_id]
    environment = registry.get_env_constructor(domain)(**({"solo_mode": True} if solo else {}))
    requests, counters, next_id = [], {"agent": 0, "user": 0}, [0]

    def scripted(role, script):
        def generate(model, messages, tools=None, tool_choice=None, call_name=None, **kwargs):
            requests.append({"role": role, "messages": to_litellm_messages(messages),
                             "tools": [tool.openai_schema for tool in tools] if tools else None})
            if tool_choice is not None:  # the solo agent's "required" (LLMAgent sends none)
                requests[-1]["tool_choice"] = tool_choice
            index = counters[role]
            counters[role] += 1
            reply = script[index] if index < len(script) else (
                {"content": "###STOP###"} if role == "user" else {"content": "(script ended)"})
            calls = []
            for entry in reply.get("calls") or ():
                calls.append(ToolCall(id=f"id_{next_id[0]}", name=entry["name"], arguments=entry["arguments"]))
                next_id[0] += 1
            return AssistantMessage(role="assistant", content=reply.get("content"), tool_calls=calls or None,
                                    cost=0.0, usage={"completion_tokens": 1, "prompt_tokens": 1})
        return generate

    llm_agent.generate = scripted("agent", agent_script)
    user_simulator.generate = scripted("user", user_script)
    try:
        user_tools = environment.get_user_tools(include=task.user_tools) or None
    except Exception:  # noqa: BLE001 - runner/build.py: a domain without user tools
        user_tools = None
    if solo:  # runner/build.py for llm_agent_solo: every user tool beside the agent's; the dummy user
        try:
            tools = environment.get_tools() + (environment.get_user_tools() or [])
        except Exception:  # noqa: BLE001 - runner/build.py: a domain without user tools
            tools = environment.get_tools()
        agent = LLMSoloAgent(tools=tools, domain_policy=environment.get_policy(), task=task, llm="scripted")
        user = DummyUser()
    else:
        agent = LLMAgent(tools=environment.get_tools(), domain_policy=environment.get_policy(), llm="scripted")
        user = UserSimulator(llm="scripted", instructions=str(task.user_scenario), tools=user_tools)
    orchestrator = Orchestrator(domain=domain, agent=agent, user=user, environment=environment, task=task,
                                max_steps=max_steps, max_errors=max_errors, **({"solo_mode": True} if solo else {}))
    try:
        simulation = orchestrator.run()
    except Exception as error:  # noqa: BLE001 - solo: a reply upstream raises on (tau2 run retries, then records
        # infrastructure_error without messages)
        if not solo:
            raise
        return {"name": name, "domain": domain, "task_id": task_id, "max_steps": max_steps,
                "max_errors": max_errors, "agent": "llm_agent_solo", "agent_script": agent_script,
                "user_script": user_script, "requests": [compact(r) for r in requests], "trajectory": None,
                "raised": f"{type(error).__name__}: {error}", "termination_reason": "infrastructure_error"}
    trajectory = []
    for message in simulation.messages:
        entry = {"role": message.role, "content": message.content}
        if getattr(message, "tool_calls", None):
            entry["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments, "requestor": c.requestor}
                                   for c in message.tool_calls]
        if message.role == "tool":
            entry.update(id=message.id, requestor=message.requestor, error=message.error)
        trajectory.append(entry)
    result = {"name": name, "domain": domain, "task_id": task_id, "max_steps": max_steps, "max_errors": max_errors}
    if solo:
        result["agent"] = "llm_agent_solo"
    result.update({"agent_script": agent_script, "user_script": user_script,
                   "requests": [compact(r) for r in requests], "trajectory": trajectory,
                   "termination_reason": simulation.termination_reason.value})
    return result


def main(data: Path, out: Path = OUT) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    (scratch / "tau2").symlink_to(Path(data).resolve(), target_is_directory=True)
    os.environ["TAU2_DATA_DIR"] = str(scratch)
    results = [run(scenario) for scenario in SCENARIOS] + [run(scenario, solo=True) for scenario in SOLO_SCENARIOS]
    for result in results:
        raised = f" (raised {result['raised']})" if "raised" in result else ""
        print(f"{result['name']}: {result['termination_reason']}, {len(result['requests'])} requests, "
              f"{len(result['trajectory'] or ())} messages{raised}")
    document = {"about": "upstream tau2-bench 1.0.1's Orchestrator + LLMAgent + UserSimulator on scripted replies "
                         "(scripts/make_tau2_conversation_oracle.py); system prompts and tool lists as sha256",
                "scenarios": results}
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"-> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else OUT)
