"""Replies written under a BFCL leaderboard row's own handler: recorded and decoded as that handler does.

When the backend renders a BFCL request with a local handler of bfcl-eval 2026.3.23 (a row named by
``--toolbench-bfcl-model``, matched by checkpoint id, or a detected family), the generation names it
(``Generation.renderer`` = ``bfcl-handler:<class>``). ``bfcl generate`` then stores what the handler's
``_parse_query_response_prompting`` records of the reply (text, or a list of ``{name: arguments}`` for PhiFC,
Granite 3, Arch, Mistral), and ``bfcl evaluate`` decodes that with the handler's ``decode_ast`` (single turn, with
the row's ``underscore_to_dot``) or ``decode_execute`` (each multi-turn step). The recorded answer is recomputed here
from the reply text (it need not be a string, so ``Generation.answer`` cannot hold it); the handlers themselves are
:mod:`pytest_toolbench.scorer_lib.bfcl_handlers` (checked against the official ones). Handlers that keep
``OSSHandler``'s decoders get this suite's prompting decoders (:mod:`.decoding`, :mod:`.multi_turn.executor`).

A replayed result file read with a row (``--toolbench-bfcl-model``, or the row matched by ``--model``) holds what
the row's handler recorded, not the reply: ``bfcl generate`` writes ``model_responses`` as ``result`` (the text for
every handler that records the reply, QwenFCHandler's after the last ``</think>``; a list of ``{name: arguments}``
for PhiFC, Granite 3, Arch, Mistral). The replay reader marks such a generation ``bfcl-recorded:<class>`` (the text
is the recorded string) or ``bfcl-recorded-json:<class>`` (the text is the JSON of a recorded value that is not a
string), and it is decoded with the handler's ``decode_ast`` as it stands, never recorded a second time
(:func:`replayed_record`, :func:`decode_recorded`).

Model output is data: nothing here evaluates it (the handlers read Python literals where upstream calls ``eval``).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_toolbench.contract.suite import Generation
from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bfcl_handlers
from pytest_toolbench.scorer_lib.bfcl_handlers import registry
from .decoders.common import DecodeError
from .decoding import decode
from .multi_turn.executor import StepDecodeError, decode_prompting_step

#: ``prompt_format.HandlerFormat.name`` of a BFCL handler renderer
RENDERER_PREFIX = "bfcl-handler:"
#: a replayed record of the handler (``Generation.renderer``): the text is the recorded string
RECORDED_PREFIX = "bfcl-recorded:"
#: a replayed record of the handler whose recorded value is not a string: the text is its JSON
RECORDED_JSON_PREFIX = "bfcl-recorded-json:"


def replayed_generation(handler: str, result: Any) -> Generation:
    """A replayed single-turn ``result`` of a file made by ``handler`` (a row's), as the scorer reads it; may raise
    what ``json.dumps`` raises on (RecursionError on absurd nesting), for the reader to report."""
    if isinstance(result, str):
        return Generation(text=result, finish_reason="stop", renderer=RECORDED_PREFIX + handler)
    return Generation(text=json.dumps(result, ensure_ascii=False), finish_reason="stop",
                      renderer=RECORDED_JSON_PREFIX + handler)


def replayed_record(generation: Generation | None) -> tuple[str, Any] | None:
    """(handler, recorded value) of a replayed record read with a row, else None; a JSON text that cannot be read
    back (it was written by :func:`replayed_generation`, so only absurd nesting) is kept as its text, which the
    handler then fails to decode."""
    renderer = getattr(generation, "renderer", None)
    if not isinstance(renderer, str):
        return None
    for prefix in (RECORDED_PREFIX, RECORDED_JSON_PREFIX):
        if renderer.startswith(prefix) and renderer[len(prefix):] in bfcl_handlers.HANDLERS:
            text = generation.text or ""
            if prefix == RECORDED_JSON_PREFIX:
                try:
                    return renderer[len(prefix):], json.loads(text)
                except (ValueError, RecursionError):
                    return renderer[len(prefix):], text
            return renderer[len(prefix):], text
    return None


def handler_of(generation: Generation | None) -> str | None:
    """The handler class that rendered the request this generation answers, or that made the replayed record, or
    None (chat template, native replies, replays without a row)."""
    replayed = replayed_record(generation)
    if replayed is not None:
        return replayed[0]
    renderer = getattr(generation, "renderer", None)
    if not isinstance(renderer, str) or not renderer.startswith(RENDERER_PREFIX):
        return None
    handler = renderer[len(RENDERER_PREFIX):]
    return handler if handler in bfcl_handlers.HANDLERS else None


def sends_bfcl_system_prompt(handler: str) -> bool:
    """Whether the handler's prompt holds BFCL's prompting system prompt (else its own tools block)."""
    return bfcl_handlers.handler_spec(handler).bfcl_system_prompt


def underscore_to_dot(handler: str) -> bool:
    """The rows' ``underscore_to_dot`` (the same for every row of one handler in ``model_config.py``)."""
    return any(row.underscore_to_dot for row in registry.bfcl_rows() if row.handler == handler)


def recorded(handler: str, text: str) -> Any:
    """What the handler records of a reply (its ``model_responses``); raises :class:`DecodeError` where upstream's
    recording raises."""
    try:
        return bfcl_handlers.recorded_answer(handler, text or "")
    except bfcl_handlers.HandlerDecodeError as error:
        raise DecodeError(str(error)) from None


def decode_single(handler: str, text: str, language: str, prompting_ast: Any = None) -> Any:
    """The handler's ``decode_ast`` on what it records of ``text``; every failure is a :class:`DecodeError`.
    ``prompting_ast``: the prompting decoder the handler falls back on (default: this suite's, by language; format
    sensitivity: its case's return format and tag, ``language`` then naming the return format)."""
    return decode_recorded(handler, recorded(handler, text), language, prompting_ast)


def decode_recorded(handler: str, value: Any, language: str, prompting_ast: Any = None) -> Any:
    """The handler's ``decode_ast`` on a recorded answer (a replayed ``result``); every failure is a
    :class:`DecodeError`. ``prompting_ast``: as for :func:`decode_single`."""
    try:
        return bfcl_handlers.decode_ast(handler, value, language, prompting_ast or decode)
    except (bfcl_handlers.HandlerDecodeError, DecodeError) as error:
        raise DecodeError(str(error)) from None


def step_decoder(handler: str):
    """``decode_execute`` of the handler on a recorded multi-turn step -> call strings (raises on failure)."""
    def decode_step(step: Any) -> list[str]:
        try:
            return bfcl_handlers.decode_execute(handler, step, decode_prompting_step, decode)
        except bfcl_handlers.HandlerDecodeError as error:
            raise StepDecodeError(str(error)) from None

    return decode_step
