"""``--toolbench-check-prompts``: what a model would be sent and how its replies would be read, before any generation.

Per selected suite: the renderer (the official harness's own, e.g. a BFCL handler, or the checkpoint's chat
template), the decoder, the BFCL row the checkpoint matches (``rows``), and for a suite whose harness writes its
own prompt text the differences between the checkpoint's chat template and that text on canonical conversations
(a first request; a later step holding a reply with reasoning, two tool results and a follow-up question; a request
without a system message), plus the known traps found on them:

- a tool call written inside ``<think>`` is dropped by a handler that records only the text after ``</think>``;
- an earlier reply's reasoning is passed back to the model (or dropped) differently by the template and the handler;
- the template writes date lines (Llama's "Cutting Knowledge Date"/"Today Date") the handler does not;
- the template writes a default system line the handler does not;
- the tool docs would be in the prompt twice (the suite's system prompt and the template's own tools block).

The check passes (exit 0) when every selected suite gets its official renderer (a suite whose harness uses the chat
template gets the template; BFCL gets the handler of a matched row or family); otherwise the list says which do not.
Where the handler's text differs from the checkpoint's own chat template on the first request (the format the
checkpoint was trained on: a Qwen2.5 checkpoint asked to be ``Qwen3-0.6B-FC``), the last lines are a WARNING with its
consequence instead of "OK" (still exit 0: the run is faithful to the row, the figures are the row's).

Loads the tokenizer (transformers) only to render the chat template; never starts an engine.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from pytest_toolbench.prompting import handler_formats, prompt_format
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.prompting.chat_template import template_messages
from pytest_toolbench.contract.suite import Request

#: a BFCL-shaped function doc and the conversations every renderer is run on
_FUNCTION = {"name": "get_weather", "description": "Current weather for a city.",
             "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
_SYSTEM = ("You are an expert in composing functions. Here is a list of functions in JSON format that you can "
           "invoke.\n[{\"name\": \"get_weather\", \"description\": \"Current weather for a city.\", \"parameters\": "
           "{\"type\": \"dict\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}]")
_QUESTION = {"role": "user", "content": "What is the weather in Paris and in Rome?"}
_REPLY = {"role": "assistant",
          "content": "<think>\nTwo cities, two calls.\n</think>\n\n[get_weather(city='Paris'), get_weather(city='Rome')]"}
CONVERSATIONS: dict[str, tuple[list[dict[str, Any]], bool]] = {
    "first request": ([{"role": "system", "content": _SYSTEM}, _QUESTION], True),
    "later step (reply with <think>, two tool results, follow-up)": (
        [{"role": "system", "content": _SYSTEM}, _QUESTION, _REPLY,
         {"role": "tool", "name": "get_weather(city='Paris')", "content": "18C, cloudy"},
         {"role": "tool", "name": "get_weather(city='Rome')", "content": "24C, sunny"},
         {"role": "user", "content": "And in Oslo?"}], False),
    "no system message": ([_QUESTION], True),
}
#: a reply whose call is written inside the reasoning block
_CALL_IN_THINK = "<think>\n[get_weather(city='Paris')]\n</think>\n\n"


@dataclass
class SuiteCheck:
    suite: str
    renderer: str
    decoder: str
    official: bool
    why_not: str | None = None
    diffs: dict[str, list[str]] = field(default_factory=dict)  # conversation -> unified diff lines (template vs handler)
    traps: list[str] = field(default_factory=list)
    #: the handler's text differs from the checkpoint's own template on the first request: what that means
    warning: str | None = None


@dataclass
class CheckReport:
    model: str
    row: dict[str, Any] | None
    suites: list[SuiteCheck]
    #: what the handler library calls a row ("BFCL row")
    row_label: str = "row"

    @property
    def missing(self) -> list[SuiteCheck]:
        return [check for check in self.suites if not check.official]

    @property
    def warnings(self) -> list[str]:
        return [check.warning for check in self.suites if check.warning]

    def lines(self, diff_lines: int = 12) -> list[str]:
        out = [f"check-prompts: model {self.model}"]
        if self.row is not None:
            out.append(f"  {self.row_label}: {self.row.get('row') or 'none'} (matched: {self.row.get('matched')}; "
                       f"handler {self.row.get('handler') or 'none'}, mode {self.row.get('mode') or '-'})")
            out.append(f"    {self.row.get('note')}")
        for check in self.suites:
            flag = "official" if check.official else "NOT official"
            out.append(f"  {check.suite}: renderer {check.renderer} [{flag}]; decoder {check.decoder}")
            if check.why_not:
                out.append(f"    why: {check.why_not}")
            for name, diff in check.diffs.items():
                if not diff:
                    out.append(f"    chat template == handler text on '{name}'")
                    continue
                out.append(f"    chat template vs handler text on '{name}' ({len(diff)} diff lines):")
                out.extend("      " + line for line in diff[:diff_lines])
                if len(diff) > diff_lines:
                    out.append(f"      ... {len(diff) - diff_lines} more")
            for trap in check.traps:
                out.append(f"    trap: {trap}")
        if self.missing:
            out.append("check-prompts: FAILED: no official renderer for " + "; ".join(
                f"{check.suite} ({check.why_not})" for check in self.missing))
        out.extend(f"check-prompts: WARNING: {warning}" for warning in self.warnings)
        if not self.missing and not self.warnings:
            out.append(f"check-prompts: OK: every selected suite ({len(self.suites)}) gets its official renderer")
        return out


def _diff(template_text: str, handler_text: str) -> list[str]:
    if template_text == handler_text:
        return []
    return [line for line in difflib.unified_diff(template_text.splitlines(), handler_text.splitlines(),
                                                  "chat template", "handler", n=0, lineterm="")
            if not line.startswith(("---", "+++"))]


def _render_template(backend: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": False,
                              "chat_template": backend.chat_template()}
    if tools:
        kwargs["tools"] = tools
    return backend.tokenizer().apply_chat_template(template_messages(messages), **kwargs)


def handler_traps(handler: handler_formats.HandlerFormat, rendered: dict[str, str],
                  template: dict[str, str]) -> list[str]:
    """Traps found on the canonical conversations: ``rendered`` (handler text) and ``template`` (chat template text)
    by conversation name; ``template`` may be empty (no template at hand)."""
    traps = []
    if handler.recorded_answer is not None and "get_weather" not in handler.recorded_answer(_CALL_IN_THINK):
        traps.append(f"a tool call written inside <think>...</think> is dropped: {handler.handler} records only the "
                     "text after the last </think> (the call is scored as missing)")
    later = next(name for name in CONVERSATIONS if name.startswith("later step"))
    in_handler = "Two cities, two calls." in rendered.get(later, "")
    if later in template:
        in_template = "Two cities, two calls." in template[later]
        if in_handler != in_template:
            traps.append("an earlier reply's reasoning is " + ("passed back by the handler and dropped by the "
                         "template" if in_handler else "dropped by the handler and passed back by the template"))
    traps.append(f"an earlier reply's reasoning is {'passed back to' if in_handler else 'dropped from'} the prompt "
                 f"by {handler.handler}")
    for name, text in template.items():
        if any(marker in text for marker in ("Cutting Knowledge Date", "Today Date")) and \
                "Cutting Knowledge Date" not in rendered.get(name, ""):
            traps.append(f"the chat template writes date lines ('Cutting Knowledge Date'/'Today Date') the handler "
                         f"does not (on '{name}')")
            break
    no_system = "no system message"
    if no_system in template and "system" in template[no_system] and "system" not in rendered.get(no_system, ""):
        traps.append("the chat template adds a default system message when there is none; the handler does not")
    return traps


def _without_system_prompt(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("content") != _SYSTEM]


def _render_handler(handler: handler_formats.HandlerFormat, messages: list[dict[str, Any]], first: bool,
                    apply_template: Any = None) -> str:
    """The handler's text for a canonical conversation: an FC handler (own tools block) gets the question without
    BFCL's prompting system prompt and the function doc, as a BFCL request carries them."""
    if handler.own_tools_block:
        plain = _without_system_prompt(messages)
        return handler_formats.render_request(handler, Request(messages=messages, native_messages=plain,
                                                             functions=[_FUNCTION]), step=0 if first else 1,
                                            apply_template=apply_template)
    return handler_formats.render_with_handler(handler, messages, first_step=first)


def duplicated_tools(backend: Any) -> str | None:
    """Whether the template, given ``tools=``, writes its own tools block beside a system prompt that already
    lists them (a native-mode prompt with BFCL's prompting system prompt would carry the docs twice)."""
    messages, _ = CONVERSATIONS["first request"]
    try:
        text = _render_template(backend, messages, [{"type": "function", "function": _FUNCTION}])
    except Exception:  # noqa: BLE001 - a template without tool support: nothing duplicated
        return None
    count = text.count("Current weather for a city.")
    return (f"with tools= the chat template writes its own tools block: the tool docs appear {count} times when "
            "the system prompt already lists them") if count > 1 else None


FIRST_REQUEST = next(iter(CONVERSATIONS))


def _trained_format_warning(check: SuiteCheck, handler: handler_formats.HandlerFormat, row: Any,
                            row_label: str) -> str | None:
    """The warning when the handler's first request differs from the checkpoint's own chat template's, else None."""
    diff = check.diffs.get(FIRST_REQUEST)
    if not diff:
        return None
    who = (f"{row_label} {row.row} ({handler.handler})" if row is not None and row.row else handler.handler)
    text = (f"{check.suite}: the prompt {who} writes differs from the checkpoint's own chat template, the format it "
            f"was trained on ({len(diff)} diff lines on the {FIRST_REQUEST}, shown above): the model is asked in a "
            f"format it was not trained on, so its {check.suite} figures are those of the row's protocol "
            "(comparable with the board) and may sit well below what it does with its own template")
    if row is not None and row.matched == "checkpoint id":
        return text + "; the board prompted this model with the same text"
    return text + ("; to see the difference, run again with --toolbench-prompt-format=chat-template (not comparable "
                   "with the board)")


def check_prompts(backend: Any, suites: list[str]) -> CheckReport:
    """The pre-flight report for ``suites`` as ``backend`` would answer them (a vllm or openai backend)."""
    formats = backend.prompt_formats() if callable(getattr(backend, "prompt_formats", None)) else \
        getattr(backend, "formats", None)
    row_choice = backend.row_choice() if callable(getattr(backend, "row_choice", None)) else None
    has_template = callable(getattr(backend, "chat_template", None)) and callable(getattr(backend, "tokenizer", None))
    mode = getattr(backend, "mode", "prompt")
    parser = getattr(backend, "tool_parser", None) if mode == "native" else None
    declared = formats.suites if formats is not None else SuitePrompts.shipped()
    handler_suites = declared.handler_suites
    library = declared.library()
    row_label = library.row_label if library is not None else "row"
    checks = []
    for suite in sorted(set(suites)):
        handler = formats.handler_for(suite) if formats is not None else None
        decoder = (f"tool parser {parser}" if mode == "native" else "the suite's prompting decoder")
        if suite not in handler_suites:
            source = "checkpoint's chat template" if has_template else "server's chat template (/chat/completions)"
            checks.append(SuiteCheck(suite, source, decoder, True))
            continue
        if handler is None:
            why = ("native mode renders the chat template with tools=, not the handler's text" if mode == "native"
                   else "--toolbench-prompt-format=chat-template" if formats is not None and
                   formats.option == prompt_format.CHAT_TEMPLATE else
                   (row_choice.note if row_choice is not None else "no handler for this model"))
            check = SuiteCheck(suite, "chat template", decoder, False, why)
        else:
            recorded = f", the reply recorded as {handler.handler} records it" if handler.recorded_answer else ""
            check = SuiteCheck(suite, handler.name, f"{handler.handler}'s decode_ast/decode_execute (" + (
                "its own call format" if handler.own_tools_block else "the suite's prompting decoder") + f"){recorded}",
                True)
        own_tools = handler is not None and handler.own_tools_block
        rendered: dict[str, str] = {}
        try:
            rendered = {name: _render_handler(handler, messages, first, getattr(backend, "handler_template", None))
                        for name, (messages, first) in CONVERSATIONS.items()} if handler is not None else {}
        except Exception as error:  # noqa: BLE001 - e.g. Falcon3FC's template without a tokenizer: a finding
            check.traps.append(f"the handler cannot render here: {type(error).__name__}: {error}")
            handler = None
        template: dict[str, str] = {}
        if has_template:
            for name, (messages, _) in CONVERSATIONS.items():
                try:
                    # an FC handler's own tools block is compared with the template's (tools=, no prompting system prompt)
                    template[name] = (_render_template(backend, _without_system_prompt(messages),
                                                       [{"type": "function", "function": _FUNCTION}])
                                      if own_tools else _render_template(backend, messages, None))
                except Exception as error:  # noqa: BLE001 - a template that refuses a shape is itself a finding
                    check.traps.append(f"the chat template fails on '{name}': {type(error).__name__}: {error}")
        if handler is not None:
            for name, text in template.items():
                check.diffs[name] = _diff(text, rendered[name])
            check.traps.extend(handler_traps(handler, rendered, template))
            check.warning = _trained_format_warning(check, handler, row_choice, row_label)
        if has_template:
            duplicate = duplicated_tools(backend)
            if duplicate:
                check.traps.append(duplicate + (" (this run: native mode)" if mode == "native" else
                                                " (only in native mode; this run does not pass tools=)"))
        checks.append(check)
    prompts_as_row = any(check.suite in handler_suites for check in checks)
    return CheckReport(str(getattr(backend, "model", "?")),
                       row_choice.to_json() if row_choice and prompts_as_row else None, checks, row_label)
