"""Every other local handler of BFCL, by name (the leaderboard rows' handlers): a :class:`HandlerFormat` built on
the handlers of this package (:mod:`.handlers`, every local handler of bfcl-eval 2026.3.23, checked byte for byte
against the official ones), and the lookup of a renderer family, a detected family's (:mod:`.family_formats`) or a
row's (``bfcl-row:<handler>|<model>``).

Pure functions; standard library only.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import pytest_toolbench.scorer_lib.bfcl_handlers.handlers as bfcl
from pytest_toolbench.scorer_lib.handler_library import HandlerFormat, PromptFormatError

from .family_formats import HANDLER_FORMATS, LABEL, Messages


#: A renderer family that names a BFCL row's handler and model (``rows``): ``bfcl-row:<handler>|<model>``.
ROW_FAMILY = "bfcl-row:"


def row_family(handler: str, model_name: str) -> str:
    return f"{ROW_FAMILY}{handler}|{model_name}"


def handler_format(family: str | None) -> HandlerFormat | None:
    """The renderer of a family: a detected family's (:data:`HANDLER_FORMATS`) or a row's (:func:`row_family`)."""
    if not family:
        return None
    if family in HANDLER_FORMATS:
        return HANDLER_FORMATS[family]
    if family.startswith(ROW_FAMILY):
        handler, _, model_name = family[len(ROW_FAMILY):].partition("|")
        return _row_format(handler, model_name)
    return None


# -- every local handler of BFCL, by name (the leaderboard rows' handlers) --------------------------------------------

def format_for_handler(handler: str, model_name: str) -> HandlerFormat | None:
    """A renderer for BFCL's handler class ``handler`` (a row's ``BfclRow.handler``, e.g. for
    ``--toolbench-bfcl-model``), built on :mod:`pytest_toolbench.scorer_lib.bfcl_handlers` (every local handler of
    bfcl-eval 2026.3.23, checked byte for byte against the official ones); ``model_name`` is the row's Hugging Face id
    (LlamaHandler and PhiHandler branch on it).

    Prompting handlers (QwenHandler, LlamaHandler, GemmaHandler, PhiHandler, MiniCPMHandler, BielikHandler,
    DeepseekReasoningHandler) render ``Request.messages``, which hold BFCL's prompting system prompt; FC handlers
    (QwenFCHandler, xLAM, Hammer, Phi FC, GLM, Granite, Mistral, Arch, ...) write their own tools block from
    ``Request.functions`` (the raw docs with the language hint) around ``Request.native_messages``
    (``own_tools_block``). None for a handler that renders with the checkpoint's chat template (Falcon3FCHandler)."""
    return _row_format(handler, model_name)


def _row_format(handler: str, model_name: str) -> HandlerFormat | None:
    try:
        spec = bfcl.handler_spec(handler)
    except bfcl.UnknownHandler:
        return None
    if spec.render is None:
        return _template_format(spec, handler, model_name)

    def render(messages: Messages, *, first_step: bool = True, step: int | None = None,
               functions: Sequence[Any] = ()) -> str:
        return bfcl.render(handler, messages, list(functions), model_name=model_name,
                           step=step if step is not None else (0 if first_step else 1))

    def recorded_answer(text: str) -> str:
        # a list of calls (PhiFC, Granite 3, Arch, Mistral) or a reply the handler cannot record stays the text:
        # the scorer records and decodes it again by ``Generation.renderer``
        try:
            recorded = bfcl.recorded_answer(handler, text)
        except bfcl.HandlerDecodeError:
            return text
        return recorded if isinstance(recorded, str) else text

    extras = {key: value for key, value in (("stop_token_ids", list(spec.stop_token_ids or ()) or None),
                                            ("skip_special_tokens", spec.skip_special_tokens)) if value is not None}
    render.__doc__ = f"{handler}._format_prompt ({spec.upstream_file}) for {model_name}"
    return HandlerFormat(family=row_family(handler, model_name), handler=handler,
                         upstream_file=f"bfcl_eval/model_handler/local_inference/{spec.upstream_file}",
                         render=render, helpers=(spec.render, spec.record),
                         recorded_answer=None if spec.records_reply_as_written else recorded_answer,
                         own_tools_block=not spec.bfcl_system_prompt, extras=extras or None, label=LABEL)


def _template_format(spec: Any, handler: str, model_name: str) -> HandlerFormat | None:
    """Falcon3FCHandler (falcon_fc.py): ``tokenizer.apply_chat_template(messages, tools=<raw docs>, tokenize=False,
    add_generation_prompt=True)`` with the checkpoint's own tokenizer, on the messages as OSSHandler holds them (no
    BFCL system prompt, raw replies, ``tool`` results). None for a prompting handler without a renderer
    (QuickTestingOSSHandler, a test fixture upstream)."""
    if spec.bfcl_system_prompt:
        return None

    def render(messages: Messages, *, first_step: bool = True, step: int | None = None, functions: Sequence[Any] = (),
               apply_template: Callable[[list, list], str] | None = None) -> str:
        if apply_template is None:
            raise PromptFormatError(f"{handler} renders with the checkpoint's chat template, which needs its "
                                    "tokenizer here (the vllm backend); the endpoint backend cannot render it")
        return apply_template([dict(m) for m in messages], [dict(f) for f in functions])

    return HandlerFormat(family=row_family(handler, model_name), handler=handler,
                         upstream_file=f"bfcl_eval/model_handler/local_inference/{spec.upstream_file}",
                         render=render, helpers=(spec.record,), own_tools_block=True, renders_with_template=True,
                         label=LABEL)
