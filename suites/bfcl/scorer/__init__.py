"""BFCL v4 (single-turn, multi-turn): faithful scorer of the prompting and FC (native tool-calling) paths.

Reference: bfcl-eval 2026.3.23 = gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8
(``berkeley-function-call-leaderboard/bfcl_eval``). Spec: shared/specs/bfcl.md.

- :func:`load_cases`: one case per entry; prompts and ground truth are paired by line index, as upstream does.
- :func:`build_request`: prompting-mode messages (system prompt + language hint), native tools for FC mode.
- :func:`conversation` (multi-turn only, :func:`is_interactive`): the step loop against the simulator classes.
- :func:`score`: single-turn: decode like ``default_decode_ast_prompting`` and check like ``ast_checker`` / the
  relevance runner. The text decoded is ``Generation.recorded()``: what the model's handler records. The generic OSS
  prompting handler does not strip ``<think>`` blocks (``base_oss_handler.py`` returns ``choices[0].text``
  untouched), so reasoning text makes the output fail to decode, as in an official run of a model without a
  dedicated handler; QwenHandler records the text after the last ``</think>``, which the engine stores as
  ``Generation.answer`` when it renders with that handler. Multi-turn: the official
  multi-turn checker on the transcript.
- :func:`gold_output`, :func:`gold_reply`, :func:`aggregate`, :func:`replay_outputs`.

Modules (suites/bfcl/README.md describes each): the contract's ``loading``, ``prompt``, ``decoding``, ``checker``,
``gold``, ``aggregation``, ``replay``, ``tl``, with ``categories`` (the category names, imported by all of them),
``handler_path`` (a reply written under a leaderboard row's handler, recorded and decoded as that handler does);
``decoders/`` (Python, Java and JavaScript call syntax), ``single_turn/`` (the AST checker's rules, the Java/JS
literal converters, the FC path), ``multi_turn/`` (the conversation, the simulator classes, the executor, the
multi-turn checker) and ``agentic/`` (memory and web search: the conversation, the memory backends, the checker).
"""

from pytest_toolbench.contract.suite import Case, Generation, Request, Verdict
from . import checker, format_sensitivity, gold, prompt, unpassable
from .agentic import conversation as agentic_conversation
from .aggregation import aggregate
from .categories import AGENTIC, FORMAT_SENSITIVITY, MULTI_TURN
from .loading import load_cases
from .multi_turn import conversation as multi_turn_conversation
from .multi_turn.simulators import wheel_problem
from .replay import replay_outputs
from .report_notes import LABEL_NOTES, header_facts


def is_interactive(case: Case) -> bool:
    return case.category in MULTI_TURN or case.category in AGENTIC


def sampling_unit(case_id: str, category: str) -> str:
    """What ``--toolbench-sample`` draws as one: a memory question with every question of its scenario (ids
    ``memory_<backend>_<n>-<scenario>-<k>``: they run the same prerequisite conversations, answered once), any
    other case alone."""
    if category.startswith("memory_") and case_id.count("-") >= 2:
        return f"{category}:{case_id.split('-')[1]}"
    return case_id


def unavailable(case: Case) -> str | None:
    """Multi-turn and agentic conversations need BFCL's own tool classes (the pinned wheel), and agentic ones a key
    or an optional extra (:func:`.agentic.conversation.unavailable`)."""
    if not is_interactive(case):
        return None
    problem = wheel_problem(multi_turn_conversation.data_dirs(case))
    if problem is None and case.category in AGENTIC:
        problem = agentic_conversation.unavailable(case)
    return problem


def build_request(case: Case) -> Request:
    if is_interactive(case):
        return next(conversation(case))
    if case.category == FORMAT_SENSITIVITY:
        return format_sensitivity.build_request(case)
    return prompt.build_request(case)


def conversation(case: Case):
    if case.category in AGENTIC:
        return agentic_conversation.conversation(case)
    return multi_turn_conversation.conversation(case)


def gold_output(case: Case) -> str:
    if case.category in MULTI_TURN:
        return multi_turn_conversation.gold_transcript(case)
    if case.category in AGENTIC:
        return agentic_conversation.gold_transcript(case)
    if case.category == FORMAT_SENSITIVITY:
        return format_sensitivity.gold_output(case)
    return gold.gold_output(case)


def gold_reply(case: Case, step: int, request: Request) -> str:
    if case.category in AGENTIC:
        return agentic_conversation.gold_reply(case, step, request)
    return multi_turn_conversation.gold_reply(case, step, request)


def score(case: Case, generation: Generation) -> Verdict:
    if case.category in MULTI_TURN:
        verdict = multi_turn_conversation.score(case, generation)
    elif case.category in AGENTIC:
        verdict = agentic_conversation.score(case, generation)
    else:
        verdict = checker.score(case, generation)
    return unpassable.mark(case.case_id, verdict)  # items no model can pass (unpassable.yaml) say so


__all__ = [
    "load_cases",
    "build_request",
    "is_interactive",
    "unavailable",
    "conversation",
    "gold_output",
    "gold_reply",
    "score",
    "aggregate",
    "replay_outputs",
    "LABEL_NOTES",
    "header_facts",
]
