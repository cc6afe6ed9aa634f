"""BFCL v4 multi-turn: the step loop of one entry, in the prompting and the FC protocol (:class:`Dialogue`, also used
by ``..agentic``), following bfcl-eval 2026.3.23's ``model_handler/base_handler.py`` (``inference_multi_turn_prompting``
and ``inference_multi_turn_FC``): the reply is recorded as the handler records it; a reply that does not decode, or
decodes to no call, ends the turn; the calls run in order, one tool message each; after the 21st executing step
(``MAXIMUM_STEP_LIMIT = 20``) the entry is force-quit. The conversation around it (turns, holdouts, the transcript)
is ``conversation.py``."""

from __future__ import annotations

import json
from typing import Any, Iterator

from pytest_toolbench.contract.suite import Generation, Request
from ..handler_path import handler_of, recorded, step_decoder
from ..prompt import native_tools
from .executor import decode_fc_step, decode_prompting_step, is_empty_step

#: ``constants/default_prompts.py``: ``MAXIMUM_STEP_LIMIT``; the loop force-quits once a turn has run more steps.
MAXIMUM_STEP_LIMIT = 20


def is_native(generation: Generation) -> bool:
    """A native backend sets ``tool_calls`` (``[]`` for a plain answer) or ``parse_error`` on every reply."""
    return generation.tool_calls is not None or generation.parse_error is not None


def fc_step(generation: Generation) -> Any:
    """A native reply as an FC handler records it: ``[{name: "<arguments JSON>"}]``, or the text without calls."""
    if not generation.tool_calls:
        return generation.text or ""
    step = []
    for call in generation.tool_calls:
        arguments = call.get("arguments", {})
        step.append({str(call.get("name", "")): arguments if isinstance(arguments, str)
                     else json.dumps(arguments, ensure_ascii=False)})
    return step


def _fc_messages(step: Any, calls: list[str], results: list[str], step_index: int) -> list[dict]:
    """The assistant message of an FC step and one tool message per executed call, OpenAI-style."""
    if not isinstance(step, list):
        return [{"role": "assistant", "content": step}]
    tool_calls = []
    for position, item in enumerate(step):
        (name, arguments), = item.items()
        tool_calls.append({"id": f"call_{step_index}_{position}", "type": "function",
                           "function": {"name": name, "arguments": arguments}})
    messages: list[dict] = [{"role": "assistant", "content": "", "tool_calls": tool_calls}]
    for call, result, tool_call in zip(calls, results, tool_calls):
        messages.append({"role": "tool", "tool_call_id": tool_call["id"], "name": tool_call["function"]["name"],
                         "content": result})
    return messages


def holdout_tools(docs: list[dict]) -> list[dict]:
    """FC tools for held-out docs: ``convert_to_tool`` on the docs as they are (held-out docs carry no language
    hint, which :func:`native_tools` adds: the description is put back)."""
    return [dict(tool, function={**tool["function"], "description": doc["description"]})
            for tool, doc in zip(native_tools(docs, "multi_turn"), docs)]


class Dialogue:
    """One entry's message history through the step loop (§6.4), in the prompting and the FC protocol.

    Until the first reply tells which protocol the backend answers in (``native`` is None), both histories are kept
    and each request carries both (``messages`` and ``native_messages``); then only the one in use. ``native``
    may be given up front (a later entry of a chain whose mode is known)."""

    def __init__(self, first_turn: list[dict], system: str, tools: list[dict], native: bool | None = None,
                 functions: list[dict] | None = None):
        self.prompting = [dict(m) for m in first_turn]
        self.fc = [dict(m) for m in first_turn]
        # What a BFCL handler with its own tools block is given (``Request.functions`` and ``native_messages``):
        # the offered docs with the language hint, never extended at a holdout turn (the local handlers' prompting
        # path, ``inference_multi_turn_prompting``, does not recompile them), and the question without BFCL's
        # system prompt, with the prompting holdout message, raw replies and ``tool`` results.
        self.plain = [dict(m) for m in first_turn]
        self.functions = functions
        #: the BFCL handler that renders this conversation (learnt from the first reply's ``renderer``), or None
        self.handler: str | None = None
        if self.prompting and self.prompting[0]["role"] == "system":
            self.prompting[0]["content"] = system + "\n\n" + self.prompting[0]["content"]
        else:
            self.prompting.insert(0, {"role": "system", "content": system})
        self.tools = tools
        self.native = native
        self.executed_steps = 0

    @property
    def mode(self) -> str:
        return "fc" if self.native else "prompting"

    def add_user(self, prompting_message: dict, fc_message: dict | None = None) -> None:
        self.prompting.append(dict(prompting_message))
        self.plain.append(dict(prompting_message))
        self.fc.append(dict(fc_message or prompting_message))

    def request(self) -> Request:
        if self.native:
            return Request(messages=list(self.fc), tools=self.tools)
        # Prompting, or not known yet: the prompting messages, and what a native backend (before the first reply the
        # FC history is the question, as ``plain``) or a handler with its own tools block reads.
        return Request(messages=list(self.prompting), tools=self.tools, native_messages=list(self.plain),
                       functions=self.functions)

    def _record(self, generation: Generation) -> tuple[Any, Any]:
        """(the step as recorded in the transcript, the call strings or None when the step ends the turn)."""
        if self.native:
            step = fc_step(generation)
            decode = decode_fc_step
        elif self.handler is not None:
            # the row's handler: what its _parse_query_response_prompting records, its decode_execute
            try:
                step = recorded(self.handler, generation.text or "")
            except Exception:  # noqa: BLE001 - upstream: the entry's recording fails; here the turn ends
                return generation.text or "", None
            decode = step_decoder(self.handler)
        else:
            # The transcript holds what the handler recorded (QwenHandler: the text after </think>)
            step = generation.recorded()
            decode = decode_prompting_step
        try:
            calls = decode(step)
        except Exception:  # noqa: BLE001 - upstream: any decoding error ends the turn
            calls = None
        return step, calls

    def turn(self, execute: Any) -> Iterator[Request]:
        """The step loop of one turn; ``execute(calls) -> results``. Returns ``(steps, force_quit)``."""
        steps: list[Any] = []
        count = 0
        while True:
            generation: Generation = yield self.request()
            if self.native is None:
                self.native = is_native(generation)
            if self.handler is None and not self.native:
                self.handler = handler_of(generation)
            # Prompting: both ``prompting`` and ``plain`` grow (a handler with its own tools block reads ``plain``).
            histories = [self.fc] if self.native else [self.prompting, self.plain]
            # The history keeps the reply as written, from which the handler's renderer re-derives what it stores
            # (the reasoning it keeps, the calls it parsed); the transcript holds what the handler recorded.
            step, calls = self._record(generation)
            written = step if self.native else (generation.text or "")
            steps.append(step)
            if calls is None or is_empty_step(calls):
                for history in histories:
                    history.append({"role": "assistant", "content": written if isinstance(written, str) else ""})
                return steps, False
            results = execute(calls)
            for history in histories:
                if self.native:
                    history.extend(_fc_messages(step, calls, results, self.executed_steps))
                else:
                    history.append({"role": "assistant", "content": written})
                    history.extend({"role": "tool", "name": call, "content": output}
                                   for call, output in zip(calls, results))
            self.executed_steps += 1
            count += 1
            if count > MAXIMUM_STEP_LIMIT:
                return steps, True
