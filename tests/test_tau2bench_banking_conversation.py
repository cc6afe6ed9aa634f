"""banking_knowledge conversations against upstream tau2-bench 1.0.1's own ``Orchestrator``, ``LLMAgent`` and
``UserSimulator`` on the same scripted replies (``scripts/make_tau2_banking_conversation_oracle.py``, frozen in
``tests/data/tau2_banking_conversation_oracle.json.gz``), under the retrieval configuration ``bm25_grep``: every
request each role sends (the agent's system prompt, the configuration's policy, and the tool lists by sha256; tool
results by sha256), the trajectory and the termination reason, for three scripts: the KB search and grep tools then
the user's own tool; a discoverable user tool given by the agent and called by the user; a discoverable agent tool
called before and after unlocking, then a transfer. Tool-call ids are compared by order of appearance; both
modes (native, prompt) are played."""

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
FROZEN = Path(__file__).resolve().parent / "data" / "tau2_banking_conversation_oracle.json.gz"
with gzip.open(FROZEN, "rt", encoding="utf-8") as _handle:
    SCENARIOS = json.load(_handle)["scenarios"]


def digest(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _case(scenario):
    shared = shared_data_dir()
    if shared is None:
        pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")
    options = {"domains": [scenario["domain"]], "split": "base", "max_steps": scenario["max_steps"],
               "max_errors": scenario["max_errors"], "retrieval": "bm25_grep"}
    context = SuiteContext(shared / "tau2bench" / "upstream", {"options": options, "name": "tau2bench"}, "folder")
    cases = {case.case_id: case for case in scorer("tau2bench").load_cases(context)}
    return cases[f"{scenario['domain']}_{scenario['task_id']}"]


def _reply(entry, mode) -> Generation:
    calls = [dict(call) for call in entry.get("calls") or ()]
    if mode == "native":
        return Generation(text=entry.get("content") or "", finish_reason="stop", tool_calls=calls)
    blocks = "".join(call_text(call["name"], call["arguments"]) for call in calls)
    return Generation(text=(entry.get("content") or "") + blocks, finish_reason="stop")


def _play(scenario, mode):
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
    if message["role"] == "tool":
        out = {"role": "tool", "content_sha256": message.get("content_sha256") or digest(message["content"]),
               "id": rename.get(message["id"], message["id"]), "requestor": message.get("requestor", "assistant"),
               "error": bool(message.get("error", False))}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"id": rename.get(c["id"], c["id"]), "name": c["name"], "arguments": c["arguments"],
                              "requestor": c.get("requestor", "assistant")} for c in message["tool_calls"]]
    return out


def _sent(message, rename) -> dict:
    if message["role"] == "system":
        return {"role": "system", "sha256": message.get("sha256") or digest(message["content"])}
    out = dict(message)
    if out["role"] == "assistant":
        calls = out.get("tool_calls")
        out["tool_calls"] = None if not calls else [dict(call, id=rename.get(call["id"], call["id"])) for call in calls]
    if out["role"] == "tool":
        out["tool_call_id"] = rename.get(out["tool_call_id"], out["tool_call_id"])
        if "content" in out:
            out["content_sha256"] = digest(out.pop("content"))
    return out


@pytest.mark.parametrize("mode", ["native", "prompt"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario["name"])
def test_the_banking_conversation_is_upstreams_simulation(scenario, mode):
    requests, transcript = _play(scenario, mode)
    ours = _ids(transcript["messages"])
    rename = dict(zip(ours, _ids(scenario["trajectory"])))
    assert len(ours) == len(rename)
    assert transcript["termination_reason"] == scenario["termination_reason"]
    assert [_message(m, rename) for m in transcript["messages"]] == [_message(m, {}) for m in scenario["trajectory"]]
    assert [r["role"] for r in requests] == [r["role"] for r in scenario["requests"]]
    for index, (mine, theirs) in enumerate(zip(requests, scenario["requests"])):
        assert (None if mine["tools"] is None else digest(mine["tools"])) == theirs["tools"], index
        assert [_sent(m, rename) for m in mine["messages"]] == [_sent(m, {}) for m in theirs["messages"]], index
