"""The gold trajectory of a task: its gold actions run in order through a fresh environment (after the task's
initial state), each call followed by its tool message (the result text, or ``Error: ...`` for a gold action that
fails), then one assistant message saying the task's ``communicate_info`` strings, ended by the agent
(``agent_stop``). Upstream has no such file; the gold backend hands this to the scorer as a replay would."""

from __future__ import annotations

import json
from typing import Any, Mapping

from pytest_toolbench.contract.suite import Case

from .domains.registry import environment_factory
from .loading import domain_dir
from .solo import is_solo


def make_env_for(case: Case):
    domain = case.payload["domain"]
    return environment_factory(domain, domain_dir(case.context.data_dir, domain), task=case.payload["task"],
                               retrieval=case.context.options.get("retrieval"))


def gold_messages(task: Mapping[str, Any], make_env, solo_mode: bool = False) -> list[dict[str, Any]]:
    """Solo mode (``agent: llm_agent_solo``): every gold action is the agent's (``requestor: assistant``, a user
    tool running on the user's side, as in the telecom oracle's ``solo`` variant) and the agent ends with the
    solo agent's only text, ``###STOP###``."""
    env = make_env(solo_mode=solo_mode)
    state = task.get("initial_state") or {}
    env.set_state(state.get("initialization_data"), state.get("initialization_actions"),
                  state.get("message_history") or [])
    # upstream's simulation begins with the task's message history (the orchestrator continues it)
    messages: list[dict[str, Any]] = [dict(m) for m in state.get("message_history") or []]
    for index, action in enumerate((task.get("evaluation_criteria") or {}).get("actions") or []):
        requestor = "assistant" if solo_mode else action.get("requestor", "assistant")
        call = {"id": f"gold_{index}", "name": action["name"], "arguments": action.get("arguments") or {},
                "requestor": requestor}
        content, error = env.get_response(call["name"], call["arguments"], requestor)
        messages.append({"role": requestor, "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "id": call["id"], "content": content, "requestor": requestor,
                         "error": error})
    if solo_mode:
        messages.append({"role": "assistant", "content": "###STOP###"})
        return messages
    infos = (task.get("evaluation_criteria") or {}).get("communicate_info") or []
    messages.append({"role": "assistant", "content": " ".join(infos) if infos else "Done."})
    return messages


def gold_output(case: Case) -> str:
    task = case.payload["task"]
    return json.dumps({"task_id": task["id"], "termination_reason": "agent_stop",
                       "messages": gold_messages(task, make_env_for(case), is_solo(case))})
