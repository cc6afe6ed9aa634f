"""Solo mode's simulation: upstream tau2-bench 1.0.1's ``Orchestrator(solo_mode=True)`` with its ``LLMSoloAgent``
and ``DummyUser`` (``tau2 run --agent llm_agent_solo --user dummy_user``; ``agent/llm_agent.py``,
``orchestrator/orchestrator.py``, ``runner/build.py``, ``user/user_simulator.py``; read, never imported), selected by
the suite option ``agent: llm_agent_solo`` (:mod:`.solo`: telecom and mock, the tasks upstream's filter accepts).

- **The environment** is built in solo mode: the agent's calls to the user's tools run on the user's side (a call
  the user requests is refused), and the policy is the solo one (telecom ``main_policy_solo.md`` with the manual;
  mock ``policy_solo.md``).
- **The agent** is shown the domain's tools, then every user tool (``get_user_tools()``, not the task's
  ``user_tools``), then ``done`` (``Call this function when you are done with the task.``); its system prompt is
  ``SYSTEM_PROMPT_SOLO``: ``<instructions>`` (``AGENT_SOLO_INSTRUCTION``), ``<policy>``, ``<ticket>`` (the task's
  ticket). Upstream asks its LLM with ``tool_choice="required"``; a backend here gets no such constraint (the
  request has no field for it), and a reply without tool calls is what upstream raises on: ``LLMSoloAgent only
  supports tool calls.``, the simulation ends ``infrastructure_error`` (upstream retries, then records that).
- **Start**: without a message history the agent speaks first, in ``initialize`` (not a step: upstream's step
  counter starts after it, and no limit is checked before the first step); with one, the orchestrator continues it
  as in :mod:`.conversation`, a last assistant message holding ``###STOP###`` ending it (``agent_stop``).
- **Stop**: a reply calling ``done`` (alone or beside other calls) becomes the text ``###STOP###`` without calls
  (upstream's ``_check_if_stop_toolcall``: the other calls are dropped, never run) and ends with ``agent_stop``;
  other calls go to the environment and their results back to the agent. ``max_steps`` and ``too_many_errors`` as
  in :mod:`.conversation`. There is no user: it makes no request (``DummyUser``), and a turn handed to it (a
  history ending in the user's tool result) raises as upstream's does (``infrastructure_error``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping

from pytest_toolbench.contract.suite import Case, Request

from .conversation import AGENT, ENV, USER, Simulation, drive
from .conversation_messages import ReplyError
from .conversation_prompts import STOP
from .domains.policies import domain_policy
from .environment import Environment
from .gold import make_env_for
from .toolkit import Tool, is_tool

AGENT_SOLO_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
You will be provided with a ticket that contains the user's request.
You will need to plan and call the appropriate tools to solve the ticket.

You cannot communicate with the user, only make tool calls.
Stop when you consider that you have solved the ticket.
To do so, send a message containing a single tool call to the `{stop_function_name}` tool. Do not include any other tool calls in this last message.

Always follow the policy. Always make sure you generate valid JSON only.
""".strip()  # noqa: E501 - upstream's text, line for line

SYSTEM_PROMPT_SOLO = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
<ticket>
{ticket}
</ticket>
""".strip()

STOP_FUNCTION_NAME = "done"


@is_tool("generic")
def done() -> str:
    """Call this function when you are done with the task."""
    return STOP


DONE_TOOL = Tool(STOP_FUNCTION_NAME, done)


def solo_system_prompt(data_dir: Path, domain: str, task: Mapping[str, Any]) -> str:
    policy = domain_policy(domain, Path(data_dir) / "domains" / domain, solo_mode=True)
    instruction = AGENT_SOLO_INSTRUCTION.format(stop_function_name=STOP_FUNCTION_NAME)
    return SYSTEM_PROMPT_SOLO.format(agent_instruction=instruction, domain_policy=policy, ticket=task.get("ticket"))


def is_agent_stop(message: Mapping[str, Any]) -> bool:
    """``LLMSoloAgent.is_stop``: the content holds ``###STOP###``."""
    content = message.get("content")
    return isinstance(content, str) and STOP in content


class SoloSimulation(Simulation):
    """The orchestrator in solo mode: the agent alone with the environment."""

    def __init__(self, case: Case, env: Environment | None = None):
        super().__init__(case, env if env is not None else make_env_for(case)(solo_mode=True))
        kit = self.env.user_tools
        user_tools = [tool.openai_schema() for tool in kit.tools().values()] if kit is not None else []
        self.agent_tools = self.agent_tools + user_tools + [DONE_TOOL.openai_schema()]
        self.user_tools = None
        self.agent_system = solo_system_prompt(case.context.data_dir, case.payload["domain"], self.task)

    def start(self) -> Iterator[Request]:
        state = self.task.get("initial_state") or {}
        if state.get("message_history"):
            self.initialize()
            last = self.trajectory[-1]
            if last.get("role") == "assistant" and is_agent_stop(last):
                self.done, self.termination = True, "agent_stop"
            return
        self.env.set_state(state.get("initialization_data"), state.get("initialization_actions"), [])
        self.agent_state, self.user_state = [], []
        generation = yield self.agent_request()
        message = self._solo_reply(generation)
        self.agent_state.append(message)
        self.trajectory = [message]
        self.message, self.from_role = message, AGENT
        if message.get("tool_calls"):
            self.to_role = ENV
        else:  # the only text a solo reply can be: the stop
            self.to_role, self.done, self.termination = USER, True, "agent_stop"

    def _solo_reply(self, generation) -> dict[str, Any]:
        message = self._reply(AGENT, generation, True)
        if not message.get("tool_calls"):
            raise ReplyError("LLMSoloAgent only supports tool calls.")
        if any(call["name"] == STOP_FUNCTION_NAME for call in message["tool_calls"]):
            return {"role": "assistant", "content": STOP}
        return message

    def step(self) -> Iterator[Request]:
        if self.to_role == AGENT and self.from_role in (USER, ENV):
            self._deliver(self.agent_state, self.message, AGENT)
            generation = yield self.agent_request()
            message = self._solo_reply(generation)
            if is_agent_stop(message):
                self.done, self.termination = True, "agent_stop"
            self.agent_state.append(message)
            self._send(message, AGENT)
            self.steps += 1
        elif self.to_role == USER:
            raise ReplyError("DummyUser does not support generate_next_message")
        else:
            yield from super().step()


def simulate_solo(case: Case, env: Environment | None = None) -> Iterator[Request]:
    """The solo conversation generator of one task: yields each of the agent's requests, returns the transcript."""
    return (yield from drive(SoloSimulation(case, env)))
