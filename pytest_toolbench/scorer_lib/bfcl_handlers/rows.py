"""Which BFCL leaderboard row a checkpoint is prompted and decoded as, and how that was decided.

A leaderboard figure belongs to a row (``bfcl generate --model <registry name>``), and a row is a handler: the prompt
text it writes and how it decodes the reply. A local checkpoint is matched to a row in this order:

1. ``--toolbench-bfcl-model=<registry name>`` names it (a fine-tune at ``/ckpt/step-1200`` prompted as
   ``Qwen/Qwen3-8B-FC``); the row's mode (FC or prompting) follows;
2. the checkpoint's id is a row's Hugging Face id (``Qwen/Qwen3-8B`` is the prompting row ``Qwen/Qwen3-8B``; both
   modes exist for some ids, and the prompting one is taken, as ``--toolbench-mode prompt`` asks);
3. the checkpoint's family (``prompting.prompt_format.detect_family``: config.json's model type, else the name)
   gives the family's prompting handler (QwenHandler, LlamaHandler, GemmaHandler), i.e. the prompting rows of that
   family, without naming one;
4. none: the checkpoint's chat template is used, and the figures are not comparable with the board.

The rows come from :mod:`.registry` (bfcl-eval 2026.3.23 ``model_config.py``). Every row whose
local handler is reproduced, FC rows included (Falcon3FCHandler renders with the checkpoint's own chat template and
``tools=``: the vllm backend's tokenizer does that; the endpoint backend cannot, one clear error).

Pure; nothing heavy is imported. Also here: the row replayed files are decoded as (:func:`replay_row`), what the
gold backend reports (:data:`GOLD_CHOICE`), and ``--toolbench-bfcl-model`` checked against the run's other options
(:func:`check_option`).
"""

from __future__ import annotations

from typing import Any

import pytest_toolbench.scorer_lib.bfcl_handlers.handlers as handlers
import pytest_toolbench.scorer_lib.bfcl_handlers.registry as registry
from pytest_toolbench.scorer_lib.handler_library import RowChoice, RowError

import pytest_toolbench.scorer_lib.bfcl_handlers.row_formats as row_formats

#: upstream handler class -> the renderer family of ``family_formats.HANDLER_FORMATS`` that reproduces it
#: (LlamaHandler writes Llama 3's or Llama 4's header tokens by the model name: see :func:`_family_of`)
RENDERED_HANDLERS = {"QwenHandler": "qwen", "LlamaHandler": "llama3", "GemmaHandler": "gemma3"}

#: the handler a detected family's prompting rows use
FAMILY_HANDLERS = {"qwen": "QwenHandler", "llama3": "LlamaHandler", "llama4": "LlamaHandler", "gemma3": "GemmaHandler"}


def _family_of(handler: str, model_name: str) -> str | None:
    """The renderer family of a row's handler: the detected-family renderers for QwenHandler, LlamaHandler and
    GemmaHandler (as before), else the row's own handler renderer (``row_formats.row_family``: every other local
    handler, prompting or FC, Falcon3FCHandler's chat-template rendering included)."""
    family = RENDERED_HANDLERS.get(handler)
    if family == "llama3" and any(key in model_name.lower() for key in ("llama-4", "llama4")):
        return "llama4"
    if family is None:
        if row_formats.format_for_handler(handler, model_name) is not None:
            return row_formats.row_family(handler, model_name)
    return family


def check_row(name: str, renders: bool = True) -> Any:
    """The row of ``--toolbench-bfcl-model``, or :class:`RowError` naming the closest rows, or saying that the row's
    handler is not reproduced here; ``renders`` False (a replay, which decodes and renders nothing) skips the check
    that the row's renderer can run here (MiniCPMFCHandler's datamodel-code-generator)."""
    try:
        row = registry.bfcl_row(name)
    except registry.UnknownBfclRow as error:
        raise RowError(f"--toolbench-bfcl-model={name}: {error}") from None
    if not row.local:
        raise RowError(f"--toolbench-bfcl-model={name}: the row is answered by an API ({row.handler}), not a "
                       "local checkpoint")
    if _family_of(row.handler, row.model_name) is None:
        raise RowError(f"--toolbench-bfcl-model={name}: its handler {row.handler} has no renderer here; use "
                       "--toolbench-prompt-format=chat-template (not comparable with the board)")
    if renders:
        _probe(row)
    return row


def _probe(row: Any) -> None:
    """A row whose handler needs something not installed (MiniCPMFCHandler: datamodel-code-generator) is one clear
    error before any generation, not a failure on every request."""
    renderer = row_formats.format_for_handler(row.handler, row.model_name)
    if renderer is None or not renderer.own_tools_block or renderer.renders_with_template:
        return
    doc = {"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {}, "required": []}}
    try:
        renderer.render([{"role": "user", "content": "q"}], functions=[doc])
    except handlers.UnknownHandler as error:
        raise RowError(f"--toolbench-bfcl-model={row.name}: {error}") from None


def choose_row(named: str | None, model: str, family: str | None, renders: bool = True) -> RowChoice:
    """The row for a run: see the module docstring for the order (``renders``: see :func:`check_row`)."""
    if named:
        row = check_row(named, renders)
        return RowChoice(row.name, row.handler, row.mode, _family_of(row.handler, row.model_name), "named",
                         f"prompted and decoded as BFCL row {row.name} ({row.handler}, {row.mode}), named by "
                         "--toolbench-bfcl-model")
    for row in sorted(registry.rows_for_checkpoint(model), key=lambda r: r.is_fc_model):
        rendered = _family_of(row.handler, row.model_name)
        if rendered is not None:
            return RowChoice(row.name, row.handler, row.mode, rendered, "checkpoint id",
                             f"the checkpoint id is BFCL row {row.name}'s model ({row.handler}, {row.mode})")
    if family in FAMILY_HANDLERS:
        handler = FAMILY_HANDLERS[family]
        return RowChoice(None, handler, "prompting", family, "family",
                         f"no BFCL row named or matched by id; family {family} gives {handler}, the handler of "
                         "that family's prompting rows (name the row with --toolbench-bfcl-model to be exact)")
    return RowChoice(None, None, None, None, "none",
                     "no BFCL row matched: the checkpoint's chat template was used, so the figures are not "
                     "comparable with the leaderboard (name a row with --toolbench-bfcl-model)")


def check_option(name: str, mode: str, prompt_format: str, renders: bool = True) -> None:
    """``--toolbench-bfcl-model``: a row of BFCL's registry whose handler is reproduced, with a mode and prompt
    format that do not contradict it; one :class:`RowError` line otherwise (``renders``: see :func:`check_row`)."""
    check_row(name, renders)
    if mode == "native":
        raise RowError(f"--toolbench-bfcl-model={name} prompts as the row's handler does (its own text, "
                       "its own decoder); --toolbench-mode=native (the chat template with tools=) "
                       "contradicts it: leave the mode out")
    if prompt_format == "chat-template":
        raise RowError(f"--toolbench-bfcl-model={name} and --toolbench-prompt-format=chat-template "
                       "contradict each other: the row is its handler's text")


def replay_row(named: str | None, model: str | None, family: Any, mode: str | None) -> RowChoice:
    """The BFCL row replayed files are decoded as: named, else matched by ``--model`` (its id, else its family, as
    the generation path matches), else none (the per-file rule); one :class:`RowError` for a named row that is not
    one or that contradicts ``--toolbench-replay-mode``. ``family``: ``() -> str | None``, the model's family (read
    only when needed)."""
    if named and mode:
        raise RowError(f"--toolbench-replay-mode={mode} and --toolbench-bfcl-model={named} exclude each "
                       "other: the row's handler decodes every replayed BFCL file; leave the mode out")
    if named:
        return choose_row(named, "", None, renders=False)
    if model and not mode:
        return choose_row(None, model, family(), renders=False)
    why = (f"--toolbench-replay-mode={mode} states how the files were made" if mode else
           "no --toolbench-bfcl-model and no --model")
    return RowChoice(None, None, None, None, "none",
                     f"no BFCL row ({why}): each replayed file is decoded by the per-file rule, so the figures are "
                     "comparable with the board only when that rule is the row's decoder (name the row with "
                     "--toolbench-bfcl-model)")


def replay_words(row: Any) -> str:
    """A replay's decoding, in the words of its one-line description."""
    return f"decoded as BFCL row {row['row'] or row['handler']} ({row['handler']})"


GOLD_CHOICE = RowChoice(None, None, None, None, "none", "gold: the reference answers, written as BFCL's prompting "
                                                        "decoder reads them; no row")


def gold_refusal(row: str) -> str:
    return (f"--toolbench-bfcl-model={row}: the gold backend writes the reference answers, "
            "which no row's handler made; a row applies to --model, --toolbench-backend "
            "openai and --toolbench-replay")
