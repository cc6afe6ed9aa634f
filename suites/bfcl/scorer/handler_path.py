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

Model output is data: nothing here evaluates it (the handlers read Python literals where upstream calls ``eval``).
"""

from __future__ import annotations

from typing import Any

from pytest_toolbench.contract.suite import Generation
from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bfcl_handlers
from pytest_toolbench.scorer_lib.bfcl_handlers import registry
from .decoders.common import DecodeError
from .decoding import decode

#: ``prompt_format.HandlerFormat.name`` of a BFCL handler renderer
RENDERER_PREFIX = "bfcl-handler:"


def handler_of(generation: Generation | None) -> str | None:
    """The handler class that rendered the request this generation answers, or None (chat template, native
    replies, replays)."""
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
    value = recorded(handler, text)
    try:
        return bfcl_handlers.decode_ast(handler, value, language, prompting_ast or decode)
    except (bfcl_handlers.HandlerDecodeError, DecodeError) as error:
        raise DecodeError(str(error)) from None


def step_decoder(handler: str):
    """``decode_execute`` of the handler on a recorded multi-turn step -> call strings (raises on failure)."""
    from .multi_turn import executor

    def decode_step(step: Any) -> list[str]:
        try:
            return bfcl_handlers.decode_execute(handler, step, executor.decode_prompting_step, decode)
        except bfcl_handlers.HandlerDecodeError as error:
            raise executor.StepDecodeError(str(error)) from None

    return decode_step
