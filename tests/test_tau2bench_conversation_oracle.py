"""The suite's conversation against upstream tau2-bench 1.0.1's own ``Orchestrator``, ``LLMAgent`` and
``UserSimulator`` on the same scripted replies (``scripts/make_tau2_conversation_oracle.py``, frozen in
``tests/data/tau2_conversation_oracle.json.gz``): every request each role sends (messages; system prompts and tool
lists by sha256), the trajectory and the termination reason, for scripts reaching each stop condition (the user's
three tokens, max steps, a stop on the last step, too many errors), two calls in one message, the user's own tools,
a message history, text beside a call, airline's and retail's prompts, and telecom (the user's tools over the
phone with their results back to the user and the device synced after each call, the agent's tools, an error, two
user calls in one message, a transfer; the agent's policy is the main policy and the tech-support manual).
Tool-call ids are compared by order of appearance (upstream keeps the model's ids; the suite numbers them). Each
script is played in both modes: native (the replies' calls parsed by the backend) and prompt (the replies as text,
Hermes ``<tool_call>`` blocks read by the suite); the requests compared are the ones a native-mode backend sends
(upstream's)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import Generation, SuiteContext
from conftest import shared_data_dir
from shipped import scorer

call_text = scorer("tau2bench", "conversation_text").call_text

SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
FROZEN = Path(__file__).resolve().parent / "data" / "tau2_conversation_oracle.json.gz"
with gzip.open(FROZEN, "rt", encoding="utf-8") as _handle:
    SCENARIOS = json.load(_handle)["scenarios"]


def digest(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _case(scenario):
    if scenario["domain"] == "mock" and "agent" not in scenario:  # the samples hold mock's policy, not its solo one
        data, kind = SUITE / "samples", "samples"
    else:
        shared = shared_data_dir()
        if shared is None:
            pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")
        data, kind = shared / "tau2bench" / "upstream", "folder"
    options = {"domains": [scenario["domain"]], "split": "base", "max_steps": scenario["max_steps"],
               "max_errors": scenario["max_errors"], "agent": scenario.get("agent", "llm_agent")}
    context = SuiteContext(data, {"options": options, "name": "tau2bench"}, kind)
    cases = {case.case_id: case for case in scorer("tau2bench").load_cases(context)}
    return cases[f"{scenario['domain']}_{scenario['task_id']}"]


def _reply(entry, mode) -> Generation:
    calls = [dict(call) for call in entry.get("calls") or ()]
    if mode == "native":
        return Generation(text=entry.get("content") or "", finish_reason="stop", tool_calls=calls)
    blocks = "".join(call_text(call["name"], call["arguments"]) for call in calls)
    return Generation(text=(entry.get("content") or "") + blocks, finish_reason="stop")


def _play(scenario, mode="native"):
    """The suite's conversation on the scenario's scripts: its requests (upstream's shape) and transcript."""
    conversation = scorer("tau2bench").conversation(_case(scenario))
    scripts = {"agent": list(scenario["agent_script"]), "user": list(scenario["user_script"])}
    requests = []
    try:
        request = next(conversation)
        while True:
            role = "user" if request.simulates == "user" else "agent"
            requests.append({"role": role, "messages": [dict(m) for m in request.messages_for(True)],
                             "tools": None if request.tools is None else list(request.tools)})
            script = scripts[role]
            reply = script.pop(0) if script else (
                {"content": "###STOP###"} if role == "user" else {"content": "(script ended)"})
            request = conversation.send(_reply(reply, mode))
    except StopIteration as done:
        return requests, done.value


def _ids(trajectory) -> list[str]:
    return [call["id"] for message in trajectory for call in message.get("tool_calls") or ()]


def _message(message, rename) -> dict:
    out = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"id": rename.get(c["id"], c["id"]), "name": c["name"], "arguments": c["arguments"],
                              "requestor": c.get("requestor", "assistant")} for c in message["tool_calls"]]
    if message["role"] == "tool":
        out.update(id=rename.get(message["id"], message["id"]), requestor=message.get("requestor", "assistant"),
                   error=bool(message.get("error", False)))
    return out


def _sent(message, rename) -> dict:
    """A request's message as upstream's ``to_litellm_messages`` writes it (an assistant without calls has
    ``tool_calls: None``; the suite leaves the key out), the system prompt by its sha256."""
    if message["role"] == "system":
        return {"role": "system", "sha256": message.get("sha256") or digest(message["content"])}
    out = dict(message)
    if out["role"] == "assistant":
        calls = out.get("tool_calls")
        out["tool_calls"] = None if not calls else [
            dict(call, id=rename.get(call["id"], call["id"])) for call in calls]
    if out["role"] == "tool":
        out["tool_call_id"] = rename.get(out["tool_call_id"], out["tool_call_id"])
    return out


@pytest.mark.parametrize("mode", ["native", "prompt"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario["name"])
def test_the_conversation_is_upstreams_simulation(scenario, mode):
    requests, transcript = _play(scenario, mode)
    ours = _ids(transcript["messages"])
    assert transcript["termination_reason"] == scenario["termination_reason"]
    if scenario.get("raised"):
        # upstream raised (tau2 run retries, then records infrastructure_error without messages; the suite ends at
        # once and keeps the messages so far): the same error, after the same requests
        assert "ValueError: " + transcript["conversation"]["error"] == scenario["raised"]
        theirs = [call["id"] for message in scenario["requests"][-1]["messages"]
                  for call in message.get("tool_calls") or ()]
        rename = dict(zip(ours, theirs))
    else:
        rename = dict(zip(ours, _ids(scenario["trajectory"])))
        assert len(ours) == len(rename)
        assert [_message(m, rename) for m in transcript["messages"]] == \
            [_message(m, {}) for m in scenario["trajectory"]]
    assert [r["role"] for r in requests] == [r["role"] for r in scenario["requests"]]
    for index, (mine, theirs) in enumerate(zip(requests, scenario["requests"])):
        assert (None if mine["tools"] is None else digest(mine["tools"])) == theirs["tools"], index
        assert [_sent(m, rename) for m in mine["messages"]] == [_sent(m, {}) for m in theirs["messages"]], index
