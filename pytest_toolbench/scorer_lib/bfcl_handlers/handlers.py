"""BFCL's local handlers (bfcl-eval 2026.3.23, ``bfcl_eval/model_handler/local_inference/``) as pure functions.

Every local handler derives from ``OSSHandler`` (``base_oss_handler.py``) and is queried the same way whatever its
``is_fc_model`` flag: ``_pre_query_processing_prompting`` prepares the question, the handler's ``_format_prompt``
writes the whole prompt text (one completions request), ``_parse_query_response_prompting`` records the reply,
``_add_assistant_message_prompting`` / ``_add_execution_results_prompting`` grow the history, and ``decode_ast`` /
``decode_execute`` turn the recorded reply into calls. Each :class:`HandlerSpec` below reproduces one class.

This module holds the table (:data:`HANDLERS`) and the public entry points. Each handler lives whole in one module,
as upstream keeps it in one class in one file: its renderer, what it records of a reply and its decoders, declared as
its row of the table (``SPECS``; :class:`.spec.HandlerSpec`). The modules, by family: :mod:`.qwen` (QwenHandler,
QwenFCHandler, NanbeigeFCHandler, PelicanVLFCHandler), :mod:`.llama` (LlamaHandler, LlamaHandler_3_1),
:mod:`.salesforce` (SalesforceLlamaHandler, SalesforceQwenHandler, BitAgentHandler), :mod:`.think_agent`,
:mod:`.gemma`, :mod:`.phi` (PhiHandler, PhiFCHandler), :mod:`.minicpm`, :mod:`.bielik`, :mod:`.deepseek_reasoning`,
:mod:`.hammer`, :mod:`.glm`, :mod:`.granite` (GraniteFunctionCallingHandler, Granite3FCHandler, Granite4FCHandler),
:mod:`.mistral_fc`, :mod:`.arch`, :mod:`.minicpm_fc`, :mod:`.function_gemma`, :mod:`.falcon_fc`,
:mod:`.quick_testing_oss`; what several share is in :mod:`.common` (the types, :class:`HandlerDecodeError`,
:class:`UnknownHandler`, call text, ``<tool_call>`` JSON, the reasoning split, :func:`convert_to_function_call`) and
:mod:`.function_docs` (``convert_to_tool``).

**What a renderer is given** (:func:`render`): the conversation as the generic ``OSSHandler`` would hold it after the
*default* pre-processing, the form the BFCL suite already builds:

- the question turns; for a handler that sends BFCL's prompting system prompt (``HandlerSpec.bfcl_system_prompt``)
  with that prompt merged into (or inserted as) the first system message, for the others (the FC handlers, whose
  ``_pre_query_processing_prompting`` adds nothing) without it;
- every reply as the model wrote it: ``{"role": "assistant", "content": <raw text>}``;
- every execution result as ``{"role": "tool", "name": <call>, "content": <result>}``, one per executed call.

The renderer then applies what the handler does differently (its own pre-processing of the question, what it stores
of a reply, how it stores results) and its ``_format_prompt``. ``step`` is the number of requests made before this
one for the same entry (HammerHandler's renderer mutates the function docs on every call; see DEFECTS in
:mod:`.hammer`).

**What a decoder is given**: :func:`recorded_answer` is the handler's ``model_responses`` (what the result file
holds and ``decode_execute`` reads; a list of ``{name: arguments}`` for the handlers that parse calls while
recording); :func:`decode_ast` / :func:`decode_execute` are ``decode_ast`` / ``decode_execute`` on it. Handlers that
keep ``OSSHandler``'s defaults decode with BFCL's prompting decoder, which lives in the suite's scorer: it is passed
in (``prompting_ast``: ``(text, language) -> calls``; ``prompting_execute``: ``text -> list[str]``). Every failure
is raised (the caller turns it into BFCL's decoder failure). Where upstream calls ``eval`` on reply text, the
text is read as a Python literal instead (:func:`.common._python_value`).

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, one file per handler (named in
each spec). Standard library only.

DEFECTS of the official handlers, reproduced (the board was made with them; each is visible in the oracle fixture
``tests/data/bfcl_handler_oracle.json.gz``), each listed under DEFECTS in the module that reproduces it:

- :mod:`.hammer` (its docs edited on every request), :mod:`.granite` (Granite3FCHandler: no assistant turn opener;
  Granite4FCHandler: no newline before a later call equal to the first; GraniteFunctionCallingHandler: plain text
  executed as a call), :mod:`.mistral_fc` (unescaped tool docs, the system text placement, random call ids);
- :mod:`.think_agent` (one message in the prompt, ``decode_execute`` raising);
- :mod:`.qwen`: QwenFCHandler, NanbeigeFCHandler (no newline before a later call equal to the first:
  :func:`.common._tool_calls_block`);
- :mod:`.deepseek_reasoning` (results as the ``str`` of a list);
- :mod:`.glm` (a one-line reply), :mod:`.llama` (LlamaHandler_3_1: ``eval`` of a reply without ``;``);
- :mod:`.minicpm_fc` (the functions block growing on every request);

and one of the routing, here:

- Routing (``model_config.py``): the Llama 3.2, 3.3 and 4 ``-FC`` rows use the prompting ``LlamaHandler``;
  ``Ministral-8B-Instruct-2410`` (flagged prompting) uses ``MistralFCHandler``.
"""


from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .common import AstDecoder, ExecuteDecoder, HandlerDecodeError, Messages, UnknownHandler, convert_to_function_call
from .qwen import SPECS as _QWEN
from .llama import SPECS as _LLAMA
from .salesforce import SPECS as _SALESFORCE
from .think_agent import SPECS as _THINK_AGENT
from .gemma import SPECS as _GEMMA
from .phi import SPECS as _PHI
from .minicpm import SPECS as _MINICPM
from .bielik import SPECS as _BIELIK
from .deepseek_reasoning import SPECS as _DEEPSEEK_REASONING
from .hammer import SPECS as _HAMMER
from .glm import SPECS as _GLM
from .granite import SPECS as _GRANITE
from .mistral_fc import SPECS as _MISTRAL_FC
from .arch import SPECS as _ARCH
from .minicpm_fc import SPECS as _MINICPM_FC
from .function_gemma import SPECS as _FUNCTION_GEMMA
from .falcon_fc import SPECS as _FALCON_FC
from .quick_testing_oss import SPECS as _QUICK_TESTING_OSS
from .minicpm_fc import minicpm_tool_code, render_minicpm_fc
from .mistral_fc import mistral_call_ids
from .spec import HandlerSpec

__all__ = ["HANDLERS", "NOT_REPRODUCED", "HandlerDecodeError", "HandlerSpec", "UnknownHandler",
           "convert_to_function_call", "decode_ast", "decode_execute", "handler_spec", "minicpm_tool_code", "mistral_call_ids", "recorded_answer",
           "render"]


# -- the table ------------------------------------------------------------------------------------------------------

#: every reproduced handler, by upstream class name, in the order of the modules above
HANDLERS: dict[str, HandlerSpec] = {spec.name: spec for specs in (
    _QWEN, _LLAMA, _SALESFORCE, _THINK_AGENT, _GEMMA, _PHI,
    _MINICPM, _BIELIK, _DEEPSEEK_REASONING, _HAMMER, _GLM, _GRANITE,
    _MISTRAL_FC, _ARCH, _MINICPM_FC, _FUNCTION_GEMMA, _FALCON_FC, _QUICK_TESTING_OSS) for spec in specs}

#: Handlers of ``local_inference/`` not reproduced (yet): their rows fall back to the chat template, reported so.
NOT_REPRODUCED: dict[str, str] = {}


def handler_spec(name: str) -> HandlerSpec:
    """The spec of an upstream handler class (e.g. ``BfclRow.handler``)."""
    try:
        return HANDLERS[name]
    except KeyError:
        why = NOT_REPRODUCED.get(name, "not a local handler of bfcl-eval 2026.3.23")
        raise UnknownHandler(f"BFCL handler {name!r}: {why}") from None


def render(handler: str, messages: Messages, functions: Sequence[Any], *, model_name: str, step: int = 0,
           tool_code: Callable[[Mapping[str, Any]], str] | None = None) -> str:
    """The handler's prompt text for one request (see the module docstring for what ``messages`` holds).
    ``tool_code`` replaces :func:`minicpm_tool_code` for MiniCPMFCHandler (the generator it needs)."""
    spec = handler_spec(handler)
    if spec.render is None:
        raise UnknownHandler(f"BFCL handler {handler!r} renders with the checkpoint's chat template (tokenizer)")
    if tool_code is not None and spec.render is render_minicpm_fc:
        return render_minicpm_fc([dict(m) for m in messages], functions, model_name, step, tool_code)
    return spec.render([dict(m) for m in messages], functions, model_name, step)


def recorded_answer(handler: str, text: str) -> Any:
    """What the handler records of a reply (``model_responses``): text, or a list of ``{name: arguments}``. Where
    upstream's ``_parse_query_response_prompting`` itself raises (MistralFCHandler on a JSON reply that is not a list
    of calls, ArchHandler on a ``<tool_call>`` body that is neither JSON nor a literal), the entry fails upstream:
    :class:`HandlerDecodeError` here."""
    spec = handler_spec(handler)
    try:
        return spec.record(text)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001 - the handler's own failure while recording
        raise HandlerDecodeError(f"{handler} cannot record this reply ({type(error).__name__}: {error})") from None


def decode_ast(handler: str, recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    """The handler's ``decode_ast`` on a recorded answer; raises on what upstream raises on."""
    try:
        return handler_spec(handler).decode_ast(recorded, language, prompting_ast)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001 - the handler's own failure modes, each one a decoder failure
        raise HandlerDecodeError(f"{type(error).__name__}: {error}") from None


def decode_execute(handler: str, recorded: Any, prompting_execute: ExecuteDecoder,
                   prompting_ast: AstDecoder | None = None) -> list:
    """The handler's ``decode_execute`` on a recorded answer (multi-turn); raises on what upstream raises on.
    ``prompting_ast`` is needed by MiniCPMFCHandler only (its call block is Python call syntax)."""
    try:
        return handler_spec(handler).decode_execute(recorded, prompting_execute, prompting_ast)
    except HandlerDecodeError:
        raise
    except Exception as error:  # noqa: BLE001
        raise HandlerDecodeError(f"{type(error).__name__}: {error}") from None
