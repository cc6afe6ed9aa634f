"""The live ACEBench agent loop: ``conversation(case)`` (agent_multi_step and agent_multi_turn); the gold agent's
replies are ``gold_plan.py``.

Follows upstream's inference (``model_inference/common_inference.py`` ``multi_step_inference`` /
``multi_turn_inference`` with ``multi_step/`` and ``multi_turn/`` roles, read in the fork zeppombal/ACEBench @
c9391d09d1ae; the pinned chenchen0103/ACEBench @ 56dd66cf is not in the code index):

agent_multi_step — at most 40 messages (``--max-dialog-turns 40``), agent and executor alternating. The agent sees the
  question and the execution results only ("user:<q>\\n" + "execution result:<results>\\n" ...), never its own
  earlier messages. *Every* agent message goes to the executor: an undecodable one is answered "Please do not ask me
  any questions, use the known conditions to solve the problem". A message is "finish conversation" when the text
  contains it, checked from the third message on (index > 1), so a first-turn "finish conversation" is executed (and
  fails to decode). Every message handed to the executor is a process step (PA), whether it decoded or not.
agent_multi_turn — at most 40 messages after the simulated user's opening line. The agent's message goes to the
  executor when it contains ``[...]`` anywhere and decodes, else to the user; the agent sees "user:", "agent:" and
  "execution:" lines. The simulated user is a chat model whose own turns are kept as role "system" and the agent's
  as role "user" (upstream's layout), with an ``agent:``/``user:`` prefix removed. Here its turns are Requests like
  the agent's, so the core answers them with the same backend: upstream uses gpt-4o (temperature 0.001), so a run
  whose user is the engine's own model is not comparable with published agent_multi_turn numbers.

The final state (each involved class's saved attributes) exists only once something was executed; a run that never
executed a call ends with an empty state (and fails the class-count check), as upstream.

Deviation: upstream keeps scenario instances in module globals keyed by model name, the *number* of the case id and
the class, so within one process agent_multi_turn_3 and agent_multi_step_3 share (and mutate) the same instances.
Each conversation here has its own sandbox.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any, Iterator, Mapping, Sequence

from pytest_toolbench.scorer_lib.python_dialects import ACEBENCH_AGENT, PythonCallDecoder
from pytest_toolbench.contract.suite import Case, Generation, Request
from .agent_prompts import AGENT_SYSTEM, AGENT_USER, USER_OPENING, USER_SYSTEM_BASE, USER_SYSTEM_TRAVEL
from .loop_prompts import BASE_PROMPT, MULTI_TURN_AGENT_SYSTEM, MULTI_TURN_AGENT_USER, TRAVEL_PROMPT
from .sandbox import PreparedCall, Sandbox

#: ``--max-dialog-turns``: messages per run, the simulated user's opening excluded.
MAX_MESSAGES = 40
FINISH = "finish conversation"
#: What the multi-step executor answers to an undecodable agent message (upstream, verbatim).
UNDECODABLE_REPLY = "Please do not ask me any questions, use the known conditions to solve the problem"
# The model under test answers within suite.yaml's generation.max_tokens (upstream local inference: 1024); the
# simulated user is another model, with upstream APIUSER's own limit.
USER_MAX_TOKENS = 1000

# ----------------------------------------------------------------------------------------------------------------
# Decoding an agent message (upstream ``decode_function_list`` of the agent/execution roles), without evaluation.


class AgentDecodeError(ValueError):
    pass


#: ``decode_agent_message(text)``: the calls of an agent message, as upstream's ``decode_function_list`` reads them;
#: raises AgentDecodeError. The shared decoder (:mod:`pytest_toolbench.parsing.python_calls`) in the agent roles'
#: dialect: one leading space is dropped, brackets are added when missing, then ``strip("[]'")`` removes *all*
#: leading/trailing brackets and quotes, so a message with a trailing space or newline after its ``]`` keeps that
#: bracket and fails (``"[f()] "`` becomes ``"f()] "``); a bare call or a tuple/list of calls is accepted, any other
#: expression decodes to no call at all. Unlike the Normal decoder, a nested call without keyword arguments becomes
#: its source text, and one with keywords a ``{name: {arg: value}}`` dict.
AGENT_DECODER = PythonCallDecoder(dataclasses.replace(ACEBENCH_AGENT, error=AgentDecodeError))
decode_agent_message = AGENT_DECODER.decode


def max_messages(case: Case) -> int:
    """The message budget of an agent conversation: the suite option ``agent_max_messages`` (the suite's context;
    upstream's ``--max-dialog-turns``, 40 in its run scripts), else :data:`MAX_MESSAGES`."""
    options = case.context.options if case.context is not None else {}
    return int(options.get("agent_max_messages", MAX_MESSAGES))


def _argument_text(value: Any) -> str:
    """Upstream ``parse_nested_value``: a dict argument is rendered as a call of its first key."""
    if isinstance(value, dict):
        if not value:
            raise AgentDecodeError("empty dict argument")  # upstream: IndexError on list(value.keys())[0]
        name = next(iter(value))
        inner = value[name]
        if not isinstance(inner, dict):
            raise AgentDecodeError("dict argument is not a call")  # upstream: AttributeError on .items()
        return f"{name}(" + ", ".join(f"{k}={_argument_text(v)}" for k, v in inner.items()) + ")"
    try:
        return repr(value)
    except ValueError as exc:  # an int of over 4,300 digits: upstream's repr raises the same on Python 3.11+
        raise AgentDecodeError(str(exc)) from None


def prepare_calls(decoded: Sequence[Mapping[str, Mapping[Any, Any]]]) -> list[PreparedCall]:
    """Upstream renders every call to text (``name(k=repr(v), ...)``) and evaluates that text on each instance.
    This reproduces what evaluating it would do, without evaluating: the argument values are read back with
    ``ast.literal_eval``; text that is not a literal (a nested call, ``inf``) fails as an undefined name would, and
    text that is not valid Python (a ``**`` argument) fails with compile's own syntax error. Raises AgentDecodeError
    where upstream's rendering itself raises (a decoding failure)."""
    prepared: list[PreparedCall] = []
    for call in decoded:
        for name, arguments in call.items():
            rendered = {key: _argument_text(value) for key, value in arguments.items()}
            call_text = f"{name}(" + ", ".join(f"{key}={text}" for key, text in rendered.items()) + ")"
            syntax_error = None
            try:
                compile(call_text, "<string>", "eval")  # compiles only; nothing is executed
            except SyntaxError as exc:
                syntax_error = str(exc)
            except (ValueError, MemoryError, RecursionError) as exc:
                syntax_error = str(exc)
            values: dict[str, Any] = {}
            argument_error = None
            if syntax_error is None:
                for key, text in rendered.items():
                    try:
                        values[key] = ast.literal_eval(text)
                    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                        argument_error = f"name '{_first_name(text)}' is not defined"
                        break
            prepared.append(PreparedCall(name=name, arguments=values, syntax_error=syntax_error,
                                         argument_error=argument_error))
    return prepared


def _first_name(text: str) -> str:
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            return node.id
    return text


def execute_message(sandbox: Sandbox, text: str) -> list[Any]:
    """The execution role's message for an agent message: one parsed result per call. Raises AgentDecodeError."""
    return sandbox.execute(prepare_calls(decode_agent_message(text)))


def _contains_finish(message: Any) -> bool:
    # Upstream: ``"finish conversation" in message`` — a substring test on text, element equality on a result list.
    try:
        return FINISH in message
    except TypeError:
        return False


# ----------------------------------------------------------------------------------------------------------------
# Requests


def _functions(case: Case) -> Any:
    return case.payload["function"]


def opening_history(case: Case) -> str:
    """The multi-step agent's history before its first message: the question as the user's line."""
    return "user:" + str(case.payload["question"]) + "\n"


def multi_step_request(case: Case, history: str) -> Request:
    language = case.payload["language"]
    user = AGENT_USER[language].format(functions=_functions(case), history=history)
    return Request(messages=[{"role": "system", "content": AGENT_SYSTEM[language]}, {"role": "user", "content": user}])


def multi_turn_agent_system(language: str, involved_classes: Sequence[str]) -> str:
    system = MULTI_TURN_AGENT_SYSTEM[language]
    if "Travel" in involved_classes:
        system += TRAVEL_PROMPT[language]
    if "BaseApi" in involved_classes:
        system += BASE_PROMPT[language]
    return system


def multi_turn_agent_request(case: Case, history: str) -> Request:
    language = case.payload["language"]
    system = multi_turn_agent_system(language, case.payload["involved_classes"])
    user = MULTI_TURN_AGENT_USER[language].format(functions=_functions(case), history=history)
    return Request(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])


def user_simulator_system(case: Case) -> str:
    language = case.payload["language"]
    classes = case.payload["involved_classes"]
    # Upstream picks the BaseApi persona rules first, the travel ones otherwise.
    template = USER_SYSTEM_BASE[language] if "BaseApi" in classes else USER_SYSTEM_TRAVEL[language]
    return template.format(instruction=case.payload["question"])


def user_simulator_opening(case: Case) -> list[dict[str, str]]:
    return [{"role": "system", "content": user_simulator_system(case)},
            {"role": "user", "content": USER_OPENING[case.payload["language"]]}]


def user_simulator_request(messages: Sequence[Mapping[str, Any]]) -> Request:
    """A simulated user's turn: its conversation so far, routed to the user model (``simulates="user"``)."""
    return Request(messages=list(messages), max_tokens=USER_MAX_TOKENS, simulates="user")


def first_request(case: Case) -> Request:
    """The first model request of an agent case as upstream builds it (the one its conversation starts with).

    agent_multi_step: the agent prompt with the function list and the history ``user:<question>\\n``.
    agent_multi_turn: the simulated user's opening (its persona prompt and the fixed first line)."""
    if case.category == "agent_multi_turn":
        return user_simulator_request(user_simulator_opening(case))
    return multi_step_request(case, opening_history(case))


def _strip_speaker(text: str) -> str:
    # Upstream ``remove_prefix``: what the simulated user is shown of an agent message.
    if text.startswith("user:"):
        return text[5:]
    if text.startswith("agent:"):
        return text[6:]
    return text


# ----------------------------------------------------------------------------------------------------------------
# Conversations


def new_sandbox(case: Case) -> Sandbox:
    return Sandbox(case.payload["language"], case.payload["involved_classes"], case.payload["initial_config"])


def _transcript(sandbox: Sandbox | None, process: list[str], dialogue: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "final_state": sandbox.final_state() if sandbox is not None else [],
        "process": process,
        "dialogue": dialogue,
        "messages": len(dialogue),
        "stopped_by": stop,
    }


def _text_of(generation: Generation) -> str:
    return generation.text if isinstance(generation.text, str) else ""


def multi_step_conversation(case: Case) -> Iterator[Request]:
    question = case.payload["question"]
    dialogue: list[dict[str, Any]] = [{"sender": "user", "recipient": "agent", "message": question}]
    history = opening_history(case)
    process: list[str] = []
    sandbox: Sandbox | None = None
    stop = "limit"
    for index in range(max_messages(case)):
        last = dialogue[-1]
        if index == 0 or last["sender"] == "execution":
            if index > 0:
                history += "execution result:" + str(last["message"]) + "\n"
            generation = yield multi_step_request(case, history)
            text = _text_of(generation)
            message = {"sender": "agent", "recipient": "execution" if re.match(r"\[.*?\]", text) else "user",
                       "message": text}
        else:
            process.append(last["message"])
            try:
                calls = prepare_calls(decode_agent_message(last["message"]))
            except AgentDecodeError:
                message = {"sender": "execution", "recipient": "agent", "message": UNDECODABLE_REPLY}
            else:
                if sandbox is None:
                    sandbox = new_sandbox(case)
                message = {"sender": "execution", "recipient": "agent", "message": sandbox.execute(calls)}
        dialogue.append(message)
        if index > 1 and _contains_finish(message["message"]):
            stop = "finish"
            break
    return _transcript(sandbox, process, dialogue, stop)


def multi_turn_conversation(case: Case) -> Iterator[Request]:
    user_messages = user_simulator_opening(case)
    generation = yield user_simulator_request(user_messages)
    opening = _text_of(generation)
    user_messages.append({"role": "system", "content": opening})
    dialogue: list[dict[str, Any]] = [{"sender": "user", "recipient": "agent", "message": opening}]
    history = ""
    process: list[str] = []
    sandbox: Sandbox | None = None
    stop = "limit"
    for index in range(max_messages(case)):
        last = dialogue[-1]
        if last["recipient"] == "user":
            history += "agent:" + last["message"] + "\n"
            user_messages.append({"role": "user", "content": _strip_speaker(last["message"])})
            generation = yield user_simulator_request(user_messages)
            reply = _text_of(generation)
            user_messages.append({"role": "system", "content": reply})
            message = {"sender": "user", "recipient": "agent", "message": reply}
        elif last["recipient"] == "agent":
            label = "user:" if last["sender"] == "user" else "execution:"
            history += label + str(last["message"]) + "\n"
            generation = yield multi_turn_agent_request(case, history)
            text = _text_of(generation)
            recipient = "user"
            if re.search(r"\[.*\]", text):
                try:
                    prepare_calls(decode_agent_message(text))
                    recipient = "execution"
                except AgentDecodeError:
                    recipient = "user"
            message = {"sender": "agent", "recipient": recipient, "message": text}
        else:
            history += "agent:" + last["message"] + "\n"
            process.append(last["message"])
            if sandbox is None:
                sandbox = new_sandbox(case)
            # The agent role only forwards decodable messages; the executor decodes them the same way.
            message = {"sender": "execution", "recipient": "agent",
                       "message": sandbox.execute(prepare_calls(decode_agent_message(last["message"])))}
        dialogue.append(message)
        if index > 1 and _contains_finish(message["message"]):
            stop = "finish"
            break
    return _transcript(sandbox, process, dialogue, stop)


def conversation(case: Case) -> Iterator[Request]:
    if case.category == "agent_multi_turn":
        return multi_turn_conversation(case)
    if case.category == "agent_multi_step":
        return multi_step_conversation(case)
    raise ValueError(f"{case.case_id}: not an agent case")
