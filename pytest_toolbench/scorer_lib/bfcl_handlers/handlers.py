"""BFCL's local handlers (bfcl-eval 2026.3.23, ``bfcl_eval/model_handler/local_inference/``) as pure functions.

Every local handler derives from ``OSSHandler`` (``base_oss_handler.py``) and is queried the same way whatever its
``is_fc_model`` flag: ``_pre_query_processing_prompting`` prepares the question, the handler's ``_format_prompt``
writes the whole prompt text (one completions request), ``_parse_query_response_prompting`` records the reply,
``_add_assistant_message_prompting`` / ``_add_execution_results_prompting`` grow the history, and ``decode_ast`` /
``decode_execute`` turn the recorded reply into calls. Each :class:`HandlerSpec` below reproduces one class.

This module holds the table (:data:`HANDLERS`) and the public entry points; the handlers live in the package's
modules, named for what they hold:

- :mod:`.common`: what the handlers share (the types, :class:`HandlerDecodeError`, :class:`UnknownHandler`, call
  text, ``<tool_call>`` JSON, the reasoning split, :func:`convert_to_function_call`);
- :mod:`.qwen_llama`: the Qwen-template (Qwen, Qwen FC, Nanbeige FC, Pelican-VL FC) and Llama-template (Llama,
  Llama 3.1, xLAM, BitAgent, ThinkAgent) renderers;
- :mod:`.prompting_families`: Gemma, Phi, MiniCPM, Bielik, DeepSeek reasoning;
- :mod:`.fc_families`: Hammer, GLM, Granite (function calling, 3, 4), Phi FC, Mistral FC (:func:`mistral_call_ids`),
  Arch;
- :mod:`.function_gemma`: FunctionGemma; :mod:`.minicpm_fc`: MiniCPM FC (:func:`minicpm_tool_code`);
- :mod:`.decoders`: what each handler records of a reply, and its ``decode_ast`` / ``decode_execute``.

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
:mod:`.fc_families`).

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

- :mod:`.fc_families`: HammerHandler (its docs edited on every request), Granite3FCHandler (no assistant turn opener),
  MistralFCHandler (unescaped tool docs, the system text placement, random call ids);
- :mod:`.qwen_llama`: ThinkAgentHandler (one message in the prompt, ``decode_execute`` raising);
- :mod:`.common`: QwenFCHandler, Granite4FCHandler, NanbeigeFCHandler (no newline before a later call equal to the
  first);
- :mod:`.prompting_families`: DeepseekReasoningHandler (results as the ``str`` of a list);
- :mod:`.decoders`: ThinkAgentHandler, GraniteFunctionCallingHandler (plain text executed as a call), GLMHandler (a
  one-line reply), LlamaHandler_3_1 (``eval`` of a reply without ``;``);
- :mod:`.minicpm_fc`: MiniCPMFCHandler (the functions block growing on every request);

and one of the routing, here:

- Routing (``model_config.py``): the Llama 3.2, 3.3 and 4 ``-FC`` rows use the prompting ``LlamaHandler``;
  ``Ministral-8B-Instruct-2410`` (flagged prompting) uses ``MistralFCHandler``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .common import (AstDecoder, ExecuteDecoder, HandlerDecodeError, Messages, UnknownHandler, _call_text,
                     _decode_tagged_json, _execute_tagged_json, _require_call_list, _strip_after_think,
                     convert_to_function_call)
from .decoders import (_bitagent_calls, _default_ast, _default_execute, _executed, _falcon_calls, _glm_ast,
                       _glm_execute, _granite_fc_decode, _hammer_calls, _json_list_or_split, _llama31_calls, _named,
                       _record_arch, _record_deepseek, _record_granite_3, _record_mistral, _record_phi_fc,
                       _record_raw, _strip_fence_prefix, _think_agent_execute, _think_agent_json)
from .fc_families import (mistral_call_ids, render_arch, render_glm, render_granite_3, render_granite_4,
                          render_granite_function_calling, render_hammer, render_mistral_fc, render_phi_fc)
from .function_gemma import _function_gemma_calls, render_function_gemma
from .minicpm_fc import _minicpm_ast, _minicpm_execute, minicpm_tool_code, render_minicpm_fc
from .prompting_families import render_bielik, render_deepseek_reasoning, render_gemma, render_minicpm, render_phi
from .qwen_llama import (render_bitagent, render_llama, render_llama_3_1, render_nanbeige_fc, render_pelican_vl_fc,
                         render_qwen, render_qwen_fc, render_salesforce_llama, render_salesforce_qwen,
                         render_think_agent)

# Callers also read HandlerDecodeError, UnknownHandler, convert_to_function_call, mistral_call_ids and
# minicpm_tool_code from here (imported above from the modules that define them).


# -- the table ------------------------------------------------------------------------------------------------------

Renderer = Callable[[Messages, Sequence[Any], str, int], str]


@dataclass(frozen=True)
class HandlerSpec:
    """One upstream handler class: its renderer, what it records of a reply and its two decoders."""

    name: str  #: the upstream class
    upstream_file: str  #: relative to ``bfcl_eval/model_handler/local_inference/``
    render: Renderer | None  #: None: the handler renders with the checkpoint's chat template (``tokenizer``)
    #: whether the handler sends BFCL's prompting system prompt (``OSSHandler._pre_query_processing_prompting``)
    bfcl_system_prompt: bool
    record: Callable[[str], Any] = _record_raw
    #: ``(recorded, language, prompting_ast) -> calls``
    decode_ast: Callable[[Any, str, AstDecoder], Any] = _default_ast
    #: ``(recorded, prompting_execute, prompting_ast) -> list of call strings``
    decode_execute: Callable[[Any, ExecuteDecoder, AstDecoder | None], list] = _default_execute
    #: the handler's ``stop_token_ids`` sent with each request (GLM, MiniCPM FC), else None
    stop_token_ids: tuple[int, ...] | None = None
    #: the handler's ``skip_special_tokens`` sent with each request (MiniCPM FC: False), else None (the server's
    #: default, True on vLLM's completions endpoint)
    skip_special_tokens: bool | None = None

    @property
    def records_reply_as_written(self) -> bool:
        """Whether the recorded answer is the reply itself (``OSSHandler._parse_query_response_prompting``)."""
        return self.record is _record_raw


def _ast(function: Callable[[Any], Any]) -> Callable[[Any, str, AstDecoder], Any]:
    return lambda recorded, language, prompting_ast: function(recorded)


def _exe(function: Callable[[Any], list]) -> Callable[[Any, ExecuteDecoder, AstDecoder | None], list]:
    return lambda recorded, prompting_execute, prompting_ast: function(recorded)


HANDLERS: dict[str, HandlerSpec] = {spec.name: spec for spec in (
    HandlerSpec("QwenHandler", "qwen.py", render_qwen, True, record=_strip_after_think),
    HandlerSpec("QwenFCHandler", "qwen_fc.py", render_qwen_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("NanbeigeFCHandler", "nanbeige_fc.py", render_nanbeige_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("PelicanVLFCHandler", "pelican_vl_fc.py", render_pelican_vl_fc, False, record=_strip_after_think,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("LlamaHandler", "llama.py", render_llama, True),
    HandlerSpec("LlamaHandler_3_1", "llama_3_1.py", render_llama_3_1, False,
                decode_ast=_ast(lambda r: _named(_llama31_calls(r), "parameters")),
                decode_execute=_exe(lambda r: _executed(_llama31_calls(r), "parameters"))),
    HandlerSpec("SalesforceLlamaHandler", "salesforce_llama.py", render_salesforce_llama, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("SalesforceQwenHandler", "salesforce_qwen.py", render_salesforce_qwen, False,
                decode_ast=_ast(lambda r: _named(_json_list_or_split(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_json_list_or_split(r), "arguments"))),
    HandlerSpec("BitAgentHandler", "bitagent.py", render_bitagent, False,
                decode_ast=_ast(lambda r: _named(_bitagent_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_bitagent_calls(r), "arguments"))),
    HandlerSpec("ThinkAgentHandler", "think_agent.py", render_think_agent, False,
                decode_ast=_ast(lambda r: _named(_think_agent_json(r), "arguments")),
                decode_execute=_exe(_think_agent_execute)),
    HandlerSpec("GemmaHandler", "gemma.py", render_gemma, True),
    HandlerSpec("PhiHandler", "phi.py", render_phi, True,
                decode_ast=lambda r, language, d: d(_strip_fence_prefix(r.strip()), language),
                decode_execute=lambda r, d, _: d(_strip_fence_prefix(r))),
    HandlerSpec("PhiFCHandler", "phi_fc.py", render_phi_fc, False, record=_record_phi_fc,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("MiniCPMHandler", "minicpm.py", render_minicpm, True),
    HandlerSpec("BielikHandler", "bielik.py", render_bielik, True),
    HandlerSpec("DeepseekReasoningHandler", "deepseek_reasoning.py", render_deepseek_reasoning, True,
                record=_record_deepseek),
    HandlerSpec("HammerHandler", "hammer.py", render_hammer, False,
                decode_ast=_ast(lambda r: _named(_hammer_calls(r, False), "arguments")),
                decode_execute=_exe(lambda r: [_call_text(c.get("name", ""), c.get("arguments", {}), ", ")
                                               for c in _hammer_calls(r, True) if isinstance(c, dict)])),
    HandlerSpec("GLMHandler", "glm.py", render_glm, False, decode_ast=_ast(_glm_ast),
                decode_execute=_exe(_glm_execute), stop_token_ids=(151329, 151336, 151338)),
    HandlerSpec("GraniteFunctionCallingHandler", "granite.py", render_granite_function_calling, False,
                decode_ast=_ast(lambda r: _granite_fc_decode(r, False)),
                decode_execute=_exe(lambda r: _granite_fc_decode(r, True))),
    HandlerSpec("Granite3FCHandler", "granite_3.py", render_granite_3, False, record=_record_granite_3,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("Granite4FCHandler", "granite_4.py", render_granite_4, False,
                decode_ast=_ast(_decode_tagged_json), decode_execute=_exe(_execute_tagged_json)),
    HandlerSpec("MistralFCHandler", "mistral_fc.py", render_mistral_fc, False, record=_record_mistral,
                decode_ast=_ast(lambda r: _require_call_list(r, dicts=False)),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r, dicts=False)))),
    HandlerSpec("ArchHandler", "arch.py", render_arch, False, record=_record_arch,
                decode_ast=_ast(_require_call_list),
                decode_execute=_exe(lambda r: convert_to_function_call(_require_call_list(r)))),
    HandlerSpec("MiniCPMFCHandler", "minicpm_fc.py", render_minicpm_fc, False, decode_ast=_minicpm_ast,
                decode_execute=lambda recorded, prompting_execute, prompting_ast: _minicpm_execute(recorded,
                                                                                                   prompting_ast),
                stop_token_ids=(2, 73440), skip_special_tokens=False),
    HandlerSpec("FunctionGemmaHandler", "functiongemma.py", render_function_gemma, False,
                decode_ast=_ast(lambda r: [{name: args} for name, args in _function_gemma_calls(r)]),
                decode_execute=_exe(lambda r: [_call_text(name, args, ", ") for name, args in _function_gemma_calls(r)])),
    HandlerSpec("Falcon3FCHandler", "falcon_fc.py", None, False,
                decode_ast=_ast(lambda r: _named(_falcon_calls(r), "arguments")),
                decode_execute=_exe(lambda r: _executed(_falcon_calls(r), "arguments"))),
    HandlerSpec("QuickTestingOSSHandler", "quick_testing_oss.py", None, True),
)}

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
