"""Which agent plays a task (the suite option ``agent``, upstream's registry names): ``llm_agent`` (upstream's
``LLMAgent`` talking with the user simulator, the default) or ``llm_agent_solo`` (``tau2 run --agent
llm_agent_solo --user dummy_user``: ``LLMSoloAgent`` works alone on the task's ticket, :mod:`.conversation_solo`).

Upstream builds a solo environment only for the domains whose environment constructor takes ``solo_mode`` (1.0.1:
telecom and mock; airline's and retail's refuse the argument), and runs only the tasks its
``LLMSoloAgent.check_valid_task`` accepts (the registry's ``task_filter``): a task with an initial state whose
message history holds no user message and no assistant text, or else a task with a ``ticket``, evaluation criteria
and at least one gold action. A solo run grades in solo mode (``evaluate_simulation(solo_mode=True)``: the
agent's calls to the user's tools replay on the user's side)."""

from __future__ import annotations

from typing import Any, Mapping

from pytest_toolbench.contract.suite import Case

AGENTS = ("llm_agent", "llm_agent_solo")
SOLO_AGENT = "llm_agent_solo"
#: the domains whose environment has a solo mode in upstream 1.0.1 (``get_environment(solo_mode=...)``)
SOLO_DOMAINS = ("telecom", "mock")


def agent_name(options: Mapping[str, Any]) -> str:
    return str(options.get("agent") or "llm_agent")


def is_solo(case: Case) -> bool:
    return case.context is not None and agent_name(case.context.options) == SOLO_AGENT


def solo_refusal(options: Mapping[str, Any]) -> str | None:
    """One line when the run asks for solo mode on a domain upstream has no solo mode for; else None."""
    if agent_name(options) != SOLO_AGENT:
        return None
    others = [d for d in options.get("domains") or () if d not in SOLO_DOMAINS]
    if not others:
        return None
    return (f"tau2bench: agent {SOLO_AGENT} (solo mode) is upstream's only for {', '.join(SOLO_DOMAINS)}; "
            f"domain(s) {', '.join(others)} have no solo mode: select domains=[{', '.join(SOLO_DOMAINS)}]")


def valid_solo_task(task: Mapping[str, Any]) -> bool:
    """``LLMSoloAgent.check_valid_task``."""
    state = task.get("initial_state")
    if state is not None:
        for message in state.get("message_history") or ():
            if message.get("role") == "user":
                return False
            if message.get("role") == "assistant" and not message.get("tool_calls"):
                return False
        return True
    criteria = task.get("evaluation_criteria")
    return task.get("ticket") is not None and criteria is not None and bool(criteria.get("actions"))
