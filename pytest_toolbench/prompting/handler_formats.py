"""How a request reaches an official handler's renderer: which of the request's fields a renderer is handed
(:func:`render_request`). The renderers themselves are the handler library's (a suite's ``generation.handlers``,
:mod:`pytest_toolbench.scorer_lib.handler_library`); which renderer a request gets is
``prompt_format.PromptFormats``'s choice.

Pure functions; nothing here imports transformers or vllm.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from pytest_toolbench.scorer_lib.handler_library import HandlerFormat, PromptFormatError

__all__ = ["HandlerFormat", "PromptFormatError", "render_request", "render_with_handler"]

Messages = Sequence[Mapping[str, Any]]


def render_with_handler(handler: HandlerFormat, messages: Messages, *, first_step: bool) -> str:
    return handler.render([dict(m) for m in messages], first_step=first_step)


def render_request(handler: HandlerFormat, request: Any, *, step: int,
                   apply_template: Callable[[list, list], str] | None = None) -> str:
    """The prompt text of one request under ``handler``: a renderer with its own tools block (a leaderboard's FC
    handlers) gets the request's ``native_messages`` (no prompting system prompt) and its ``functions``; any other the
    prompting ``messages``. ``step``: the requests made before this one for the same case. ``apply_template``:
    ``(messages, tools) -> text`` with the checkpoint's tokenizer, for a handler that renders with its chat template
    (:attr:`HandlerFormat.renders_with_template`)."""
    if handler.own_tools_block:
        extra = {"apply_template": apply_template} if handler.renders_with_template else {}
        return handler.render([dict(m) for m in request.messages_for(True)], first_step=step == 0, step=step,
                              functions=[dict(f) for f in (request.functions or ())], **extra)
    if not handler.takes_step:
        return handler.render([dict(m) for m in request.messages], first_step=step == 0)
    return handler.render([dict(m) for m in request.messages], first_step=step == 0, step=step)
