"""The texts of upstream's half-duplex simulation (tau2-bench 1.0.1), read there and written here: the agent's system
prompt (``agent/llm_agent.py``: ``LLMAgent``'s ``AGENT_INSTRUCTION`` inside ``SYSTEM_PROMPT`` with the domain's
``policy.md``), the user simulator's (``user/user_simulator.py``: ``simulation_guidelines.md``, or
``simulation_guidelines_tools.md`` when the user has tools, then the task's user scenario as
``str(UserScenario)``), the agent's greeting (``orchestrator.py``: ``DEFAULT_FIRST_AGENT_MESSAGE``) and the user's
stop tokens (``user/user_simulator_base.py``)."""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path
from typing import Any, Mapping

from .upstream_texts import read_upstream_text

from .domains.policies import domain_policy

AGENT_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.
""".strip()

AGENT_SYSTEM_PROMPT = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
""".strip()

USER_SYSTEM_PROMPT = """
{global_user_sim_guidelines_with_persona}

<scenario>
{instructions}
</scenario>
""".strip()

#: ``DEFAULT_FIRST_AGENT_MESSAGE``: the agent's first message of a task without a message history.
GREETING = "Hi! How can I help you today?"

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
USER_STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)

#: The files this module reads, relative to the data folder (suite.yaml pins their sha256).
GUIDELINES = "user_simulator/simulation_guidelines.md"
GUIDELINES_TOOLS = "user_simulator/simulation_guidelines_tools.md"


@functools.lru_cache(maxsize=32)
def _guidelines(data_dir: str, relative: str) -> str:
    return read_upstream_text(Path(data_dir), relative)


def agent_system_prompt(data_dir: Path, domain: str, task: Mapping[str, Any] | None = None,
                        retrieval: str | None = None) -> str:
    """The policy is the environment's (``get_policy()``: telecom's main policy and tech-support manual, in tags;
    banking_knowledge the retrieval configuration's prompt, for the task; no solo mode: the conversation is
    upstream's ``LLMAgent`` with a user)."""
    policy = domain_policy(domain, Path(data_dir) / "domains" / domain, task=task, retrieval=retrieval)
    return AGENT_SYSTEM_PROMPT.format(domain_policy=policy, agent_instruction=AGENT_INSTRUCTION)


def user_instructions(task: Mapping[str, Any]) -> str:
    """``str(task.user_scenario)``: the persona (when given) and the instructions, structured or plain."""
    scenario = task.get("user_scenario") or {}
    lines = []
    if scenario.get("persona") is not None:
        lines.append("Persona:")
        lines.append(textwrap.indent(scenario["persona"], "\t"))
    lines.append("Instructions:")
    lines.append(textwrap.indent(_instructions_text(scenario.get("instructions")), "\t"))
    return "\n".join(lines)


def _instructions_text(instructions: Any) -> str:
    """``str(StructuredUserInstructions)``, or the plain string."""
    if not isinstance(instructions, Mapping):
        return str(instructions)
    tab = "\t"
    lines = [f"Domain: {instructions.get('domain')}",
             f"Reason for call:\n{textwrap.indent(str(instructions.get('reason_for_call')), tab)}"]
    if instructions.get("known_info") is not None:
        lines.append(f"Known info:\n{textwrap.indent(instructions['known_info'], tab)}")
    if instructions.get("unknown_info") is not None:
        lines.append(f"Unknown info:\n{textwrap.indent(instructions['unknown_info'], tab)}")
    lines.append(f"Task instructions:\n{textwrap.indent(str(instructions.get('task_instructions')), tab)}")
    return "\n".join(lines)


def user_system_prompt(data_dir: Path, task: Mapping[str, Any], has_tools: bool) -> str:
    """The guidelines (the tools variant when the user has tools) with the default persona config, which adds no
    guidelines (``<PERSONA_GUIDELINES>`` replaced by nothing), then the scenario."""
    guidelines = _guidelines(str(data_dir), GUIDELINES_TOOLS if has_tools else GUIDELINES)
    guidelines = guidelines.replace("<PERSONA_GUIDELINES>", "")
    return USER_SYSTEM_PROMPT.format(global_user_sim_guidelines_with_persona=guidelines,
                                     instructions=user_instructions(task))
