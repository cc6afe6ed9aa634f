"""A task's simulation, as upstream tau2-bench 1.0.1's half-duplex ``Orchestrator`` runs it with its ``LLMAgent``
and ``UserSimulator`` (``orchestrator/orchestrator.py``, ``agent/llm_agent.py``, ``user/user_simulator.py``; read,
never imported), as a conversation generator: each agent or user turn is a :class:`Request` the run's backend
answers (the agent: the model under test; the user: ``simulates="user"``, the same engine unless
``--toolbench-user-model`` routes it elsewhere), tool calls run on this suite's environment.

- **Start** (``initialize``): the environment gets the task's initial data, actions and message history. Without a
  history the agent's greeting (``Hi! How can I help you today?``) opens and the user answers it; with one, the
  next turn follows from its last message (as upstream: to the user, the agent or the environment), and a history
  already ending in the user's stop token ends the simulation (``user_stop``) before any request.
- **Steps** (``step``): the user answers the agent's text (or its own tool results); the agent answers the user's
  text or its own tool results; tool calls of either go to the environment, one tool message per call (an error
  result counts one error). The agent's messages carry the domain's tool schemas; the user's its own tools' schemas
  (mock: the task's ``user_tools``, or all), none for airline and retail. A request with tools holds both modes:
  ``native_messages`` with ``tools=`` (upstream's protocol, native mode) and ``messages`` with the tools, calls and
  results written as text (prompt mode, :mod:`.conversation_text`); the reply is read by :func:`read_reply` in
  either (native: the backend's parsed calls; prompt: Hermes ``<tool_call>`` blocks of the text).
- **Stops**: the user's text holding ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends with
  ``user_stop`` (the agent's ``transfer_to_human_agents`` is a tool like any other: upstream's ``LLMAgent`` never
  stops by itself, so it is the user's ``###TRANSFER###`` that ends a transferred call). After every step not
  waiting on the environment: ``max_steps`` once the steps reach the limit (upstream's CLI default 200; the suite
  option ``max_steps``), then ``too_many_errors`` once the tool errors reach ``max_errors`` (10), each overriding an
  earlier reason of the same step, as upstream's checks do.
- **A reply upstream raises on** (tool-call arguments that are not JSON, a message with neither text nor calls;
  tool calls the parser cannot read are text, as vLLM's OpenAI server returns them): upstream
  retries the simulation (3 times) and then records it as ``infrastructure_error``; a greedy engine would answer the
  same, so it ends here at once with that reason (reward 0), keeping the messages so far (upstream's record then
  has none).

- **The judge** (:mod:`.judge`): a simulation that ended ``user_stop`` (or ``agent_stop``) for a task graded on NL
  assertions (NL_ASSERTION in its reward basis, assertions not empty: the 40 retail tasks) gets one more request, the
  judge's (upstream's prompt over the whole trajectory; ``simulates="judge"``, routed as the user's turns), as
  upstream's ``evaluate_simulation`` calls it at the simulation's end; its reply goes into the transcript as
  ``nl_judgments`` and the scorer reads it (met, not met, or not scored when it cannot be read). Other terminations
  get no judge: upstream rewards them 0 without evaluating.

The transcript is the trajectory the grading reads (``{"task_id", "termination_reason", "messages"}``) with
``conversation``: the cost (requests and tokens per role, the steps, the errors; no clock time, so the same answers
give the same transcript byte for byte, serial or ``-n 2``, fresh or from the cache). Tool-call ids are
``call_<step>_<n>`` (deterministic, so a conversation's requests hit the cache).
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from pytest_toolbench.contract.suite import Case, Generation, Request

from .conversation_messages import (ReplyError, agent_view, has_content, is_agent_history, is_user_history, read_reply,
                                    trajectory_message, user_view)
from .conversation_prompts import GREETING, USER_STOP_TOKENS, agent_system_prompt, user_system_prompt
from .conversation_text import text_messages
from .environment import Environment
from .evaluation import GRADED_TERMINATIONS, needs_judge
from .gold import make_env_for
from .judge import judge_step

AGENT, USER, ENV = "agent", "user", "env"
#: upstream's ``tau2 run`` defaults (``config.py``): ``DEFAULT_MAX_STEPS``, ``DEFAULT_MAX_ERRORS``
MAX_STEPS = 200
MAX_ERRORS = 10
#: upstream's default sampling of both roles (``DEFAULT_LLM_TEMPERATURE_AGENT`` / ``_USER``)
USER_TEMPERATURE = 0.0


def limits(case: Case) -> tuple[int, int]:
    options = case.context.options if case.context is not None else {}
    return int(options.get("max_steps", MAX_STEPS)), int(options.get("max_errors", MAX_ERRORS))


def is_user_stop(message: Mapping[str, Any]) -> bool:
    """``UserSimulator.is_stop``: text (no tool call) holding one of the three tokens."""
    if message.get("tool_calls"):
        return False
    content = message.get("content")
    return isinstance(content, str) and any(token in content for token in USER_STOP_TOKENS)


class Simulation:
    """The orchestrator's state: the trajectory, each role's own history, who speaks to whom, the counters."""

    def __init__(self, case: Case, env: Environment | None = None):
        task = case.payload["task"]
        data_dir = case.context.data_dir
        self.task = task
        self.env = env if env is not None else make_env_for(case)()
        self.max_steps, self.max_errors = limits(case)
        self.agent_tools = [tool.openai_schema() for tool in self.env.tools.tools().values()]
        self.user_tools = self._user_tools()
        self.agent_system = agent_system_prompt(data_dir, case.payload["domain"], task,
                                                case.context.options.get("retrieval"))
        self.user_system = user_system_prompt(data_dir, task, has_tools=self.user_tools is not None)
        self.trajectory: list[dict[str, Any]] = []
        self.agent_state: list[dict[str, Any]] = []
        self.user_state: list[dict[str, Any]] = []
        self.from_role = self.to_role = None
        self.message: Any = None  # a message, or the list of a step's tool results
        self.steps = self.errors = 0
        self.done = False
        self.termination: str | None = None
        self.error: str | None = None
        self.cost = {AGENT: {"requests": 0, "prompt_tokens": 0, "output_tokens": 0, "truncated": 0},
                     USER: {"requests": 0, "prompt_tokens": 0, "output_tokens": 0, "truncated": 0}}

    def _user_tools(self) -> list[dict[str, Any]] | None:
        kit = self.env.user_tools
        if kit is None:
            return None
        include = self.task.get("user_tools")
        tools = [tool.openai_schema() for name, tool in kit.tools().items() if include is None or name in include]
        return tools or None

    # -- initialize
    def initialize(self) -> None:
        state = self.task.get("initial_state") or {}
        history = [dict(m) for m in state.get("message_history") or []]
        self.env.set_state(state.get("initialization_data"), state.get("initialization_actions"), history)
        if not history:
            greeting = {"role": "assistant", "content": GREETING}
            self.trajectory, self.agent_state, self.user_state = [greeting], [greeting], []
            self.message, self.from_role, self.to_role = greeting, AGENT, USER
            return
        last = history[-1]
        role = last.get("role")
        agent_all = [m for m in history if is_agent_history(m)]
        agent_but_last = [m for m in history[:-1] if is_agent_history(m)]
        user_all = [m for m in history if is_user_history(m)]
        user_but_last = [m for m in history[:-1] if is_user_history(m)]
        if role == "assistant":
            self.from_role, self.to_role = AGENT, (ENV if last.get("tool_calls") else USER)
            self.agent_state, self.user_state = agent_all, user_but_last
        elif role == "user":
            self.from_role, self.to_role = USER, (ENV if last.get("tool_calls") else AGENT)
            self.user_state, self.agent_state = user_all, agent_but_last
            if is_user_stop(last):
                self.done, self.termination = True, "user_stop"
        elif role == "tool":
            self.from_role = ENV
            if last.get("requestor", "assistant") == "assistant":
                self.to_role, self.agent_state, self.user_state = AGENT, agent_but_last, user_all
            else:
                self.to_role, self.agent_state, self.user_state = USER, agent_all, user_but_last
        else:
            raise ValueError(f"Last message should be an assistant, user or tool message, got {role!r}")
        self.message, self.trajectory = last, history

    def start(self) -> Iterator[Request]:
        """``initialize`` as a step generator (upstream's ``LLMAgent`` asks for nothing there)."""
        self.initialize()
        yield from ()

    # -- requests
    def agent_request(self) -> Request:
        messages = [{"role": "system", "content": self.agent_system}] + agent_view(self.agent_state)
        return Request(messages=text_messages(messages, self.agent_tools), tools=self.agent_tools,
                       native_messages=messages)

    def user_request(self) -> Request:
        """A user without tools (airline, retail) sends the same messages in both modes."""
        messages = [{"role": "system", "content": self.user_system}] + user_view(self.user_state)
        if self.user_tools is None:
            return Request(messages=messages, simulates="user", temperature=USER_TEMPERATURE)
        return Request(messages=text_messages(messages, self.user_tools), tools=self.user_tools,
                       native_messages=messages, simulates="user", temperature=USER_TEMPERATURE)

    def _count(self, role: str, generation: Generation) -> None:
        cost = self.cost[role]
        cost["requests"] += 1
        cost["prompt_tokens"] += generation.prompt_tokens or 0
        cost["output_tokens"] += generation.output_tokens or 0
        cost["truncated"] += 1 if generation.truncated else 0

    def _reply(self, role: str, generation: Generation, tools_offered: bool) -> dict[str, Any]:
        self._count(role, generation)
        reply = read_reply(generation, tools_offered)
        if not reply.has_content() and not reply.calls:
            full = " (the prompt fills the model's context)" if generation.truncated and not generation.output_tokens \
                else ""
            raise ReplyError(f"{'AssistantMessage' if role == AGENT else 'UserMessage'} must have either "
                             f"content or tool_calls{full}")
        ids = [f"call_{self.steps}_{index}" for index in range(len(reply.calls))]
        return trajectory_message("assistant" if role == AGENT else "user", reply, ids)

    # -- one step
    def step(self) -> Iterator[Request]:
        """One orchestrator step (a sub-generator: yields the step's request, if it needs a model)."""
        if self.to_role == USER and self.from_role in (AGENT, ENV):
            self._deliver(self.user_state, self.message, USER)
            generation = yield self.user_request()
            message = self._reply(USER, generation, self.user_tools is not None)
            if is_user_stop(message):
                self.done, self.termination = True, "user_stop"
            self.user_state.append(message)
            self._send(message, USER)
        elif self.to_role == AGENT and self.from_role in (USER, ENV):
            self._deliver(self.agent_state, self.message, AGENT)
            generation = yield self.agent_request()
            message = self._reply(AGENT, generation, True)
            self.agent_state.append(message)
            self._send(message, AGENT)
        elif self.to_role == ENV and self.from_role in (AGENT, USER):
            results = []
            for call in self.message.get("tool_calls") or ():
                content, error = self.env.get_response(call["name"], call.get("arguments") or {},
                                                       call.get("requestor", "assistant"))
                self.errors += 1 if error else 0
                results.append({"role": "tool", "id": call["id"], "content": content,
                                "requestor": call.get("requestor", "assistant"), "error": error})
            self.trajectory.extend(results)
            self.message = results if len(results) > 1 else results[0]  # upstream's MultiToolMessage or one
            self.to_role, self.from_role = self.from_role, ENV
        else:
            raise ValueError(f"Invalid role combination. From role: {self.from_role}, To role: {self.to_role}")
        self.steps += 1

    @staticmethod
    def _deliver(state: list, message: Any, role: str) -> None:
        """The message handed to a role joins its history (several tool results: each; the user skips a message
        with neither text nor calls, which the agent never sends it)."""
        if isinstance(message, list):
            state.extend(message)
        elif message is not None and (role == AGENT or message.get("role") == "tool" or has_content(message)
                                      or message.get("tool_calls")):
            state.append(message)

    def _send(self, message: dict[str, Any], role: str) -> None:
        self.trajectory.append(message)
        self.message, self.from_role = message, role
        self.to_role = ENV if message.get("tool_calls") else (AGENT if role == USER else USER)

    def check_termination(self) -> None:
        if self.to_role == ENV:
            return
        if self.steps >= self.max_steps:
            self.done, self.termination = True, "max_steps"
        if self.errors >= self.max_errors:
            self.done, self.termination = True, "too_many_errors"

    def transcript(self) -> dict[str, Any]:
        conversation = {"agent": self.cost[AGENT], "user": self.cost[USER], "steps": self.steps,
                        "tool_errors": self.errors,
                        "max_steps": self.max_steps, "max_errors": self.max_errors}
        if self.error:
            conversation["error"] = self.error
        return {"task_id": self.task["id"], "termination_reason": self.termination, "messages": self.trajectory,
                "conversation": conversation}


def simulate(case: Case, env: Environment | None = None) -> Iterator[Request]:
    """The conversation generator of one task: yields each turn's request, returns the transcript."""
    return (yield from drive(Simulation(case, env)))


def drive(simulation: Simulation) -> Iterator[Request]:
    """Upstream's ``run``: initialize, then step until done, checking the limits after each step; then the judge.
    (``start`` may itself ask for a request: the solo agent's first message, :mod:`.conversation_solo`.)"""
    try:
        yield from simulation.start()
        while not simulation.done:
            yield from simulation.step()
            simulation.check_termination()
    except ReplyError as error:
        simulation.done, simulation.termination = True, "infrastructure_error"
        simulation.error = str(error)
    transcript = simulation.transcript()
    judgments = yield from judge_step(simulation.task, simulation.trajectory,
                                      needs_judge(simulation.task) and simulation.termination in GRADED_TERMINATIONS)
    if judgments is not None:
        transcript["nl_judgments"] = judgments
    return transcript
