"""The official harness's own renderers: how BFCL's handlers write a request's prompt text, reproduced.

A score is comparable with a published one only if the model saw the same text. BFCL's leaderboard prompts a local
model in prompting mode through the family's handler in ``bfcl_eval/model_handler/local_inference/``, whose
``_format_prompt`` writes the prompt itself (it does not call the tokenizer's chat template), and whose message
assembly (``_pre_query_processing_prompting``, ``_add_assistant_message_prompting``,
``_add_execution_results_prompting``) differs per family. The chat template agrees with it on a first request but not
later: Qwen2.5's template adds a default system line to a conversation without one, Qwen3's drops a ``<think>`` block
from an assistant reply before the last user turn and keeps it after, Gemma 3's refuses a ``tool`` turn, Llama's
writes a tool result as an ``ipython`` turn only when asked. So for BFCL in prompting mode, with a recognised family,
the prompt is rendered as that handler renders it (re-implemented here; the oracle test compares byte for byte with
the handler's own output on every step shape).

Reference: bfcl-eval 2026.3.23 (``bfcl_eval-2026.3.23-py3-none-any.whl``, sha256 3bb6dfa5...853d3a0a = gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8), files ``bfcl_eval/model_handler/local_inference/qwen.py`` (QwenHandler),
``llama.py`` (LlamaHandler), ``gemma.py`` (GemmaHandler), ``base_oss_handler.py`` (OSSHandler: the shared assembly)
and ``bfcl_eval/constants/model_config.py`` (which handler a prompting model gets: Qwen2.5/Qwen3 -> QwenHandler, every
Llama 3.x and 4 prompting entry -> LlamaHandler, Gemma 3 -> GemmaHandler; ``LlamaHandler_3_1`` is for the ``-FC``
entries only).

The messages handed in are the ones the BFCL suite builds (``suites/bfcl/scorer/multi_turn/conversation.py``), i.e.
what the generic ``OSSHandler`` would hold: the question turns (system prompt included), each reply as it was
generated (raw text, a ``<think>`` block included), each execution result as
``{"role": "tool", "name": <call>, "content": <result>}``.
Each family's renderer first applies its handler's own assembly differences, then its ``_format_prompt``.

Every other local handler of BFCL (the leaderboard rows' handlers, ``--toolbench-bfcl-model``) is rendered through
:mod:`pytest_toolbench.scorer_lib.bfcl_handlers` (:func:`format_for_handler`). Which renderer a request gets is
``prompt_format.PromptFormats``'s choice.

Pure functions; nothing here imports transformers or vllm.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bfcl

UPSTREAM = "bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8)"

Messages = Sequence[Mapping[str, Any]]


class PromptFormatError(ValueError):
    """A renderer that cannot be had: ``--toolbench-prompt-format=handler`` for a model whose family has no official
    renderer, or a handler that needs the checkpoint's tokenizer where there is none."""


# -- the handlers' renderers ------------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    """An f-string's view of a message field (the handlers interpolate ``content`` with f-strings)."""
    return f"{value}"


def render_qwen(messages: Messages, *, first_step: bool = True) -> str:
    """``QwenHandler._format_prompt`` (qwen.py), on the messages QwenHandler holds.

    Assembly: QwenHandler stores a reply as its text after the last ``</think>`` (``lstrip("\\n")``) plus a
    ``reasoning_content`` field with the text between ``<think>`` and ``</think>``. Rendering re-derives exactly that
    split from the raw reply when the field is absent, so the raw reply renders the same.

    Rendering quirks reproduced: only a *first* system message gets the system block (a later one is written as a
    turn of its own); no default system line when there is none; the last query is the last ``user`` message whose
    content is text not wrapped in ``<tool_response>``; an assistant reply after it is written with its reasoning in
    a ``<think>`` block when it has reasoning or is the very last message, one before it loses the reasoning; a run of
    ``tool`` messages is one ``user`` turn of ``<tool_response>`` blocks; roles other than system/user/assistant/tool
    are dropped; the prompt ends with the assistant header and nothing after it.
    """
    del first_step  # QwenHandler renames nothing in the question
    out: list[str] = []
    if messages and messages[0]["role"] == "system":
        out.append("<|im_start|>system\n" + _text(messages[0]["content"]) + "<|im_end|>\n")
    last = len(messages) - 1
    last_query = last
    for index in range(last, -1, -1):
        message = messages[index]
        content = message["content"]
        if message["role"] == "user" and type(content) is str and not (
                content.startswith("<tool_response>") and content.endswith("</tool_response>")):
            last_query = index
            break
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role == "user" or (role == "system" and index != 0):
            out.append("<|im_start|>" + role + "\n" + _text(content) + "<|im_end|>\n")
        elif role == "assistant":
            reasoning = message.get("reasoning_content") or ""
            if not reasoning and "</think>" in content:
                pieces = content.split("</think>")
                reasoning = pieces[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                content = pieces[-1].lstrip("\n")
            if index > last_query and (index == last or reasoning):
                out.append("<|im_start|>" + role + "\n<think>\n" + reasoning.strip("\n") + "\n</think>\n\n"
                           + content.lstrip("\n"))
            else:
                out.append("<|im_start|>" + role + "\n" + _text(content))
            out.append("<|im_end|>\n")
        elif role == "tool":
            previous = messages[index - 1]["role"] if index > 0 else None
            following = messages[index + 1]["role"] if index < last else None
            if index == 0 or previous != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + _text(content) + "\n</tool_response>")
            if index == last or following != "tool":
                out.append("<|im_end|>\n")
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def _llama_messages(messages: Messages) -> list[dict[str, Any]]:
    """LlamaHandler's assembly: an execution result is an ``ipython`` message (no name), not a ``tool`` one."""
    return [{"role": "ipython", "content": m["content"]} if m["role"] == "tool" else dict(m) for m in messages]


def render_llama3(messages: Messages, *, first_step: bool = True) -> str:
    """``LlamaHandler._format_prompt`` (llama.py), Llama 3 branch: ``<|begin_of_text|>``, then every message as a
    header with its role and its content ``strip()``-ed, ``<|eot_id|>``; no default system block, no date lines
    (those are the chat template's), tool results under the ``ipython`` role."""
    del first_step
    out = ["<|begin_of_text|>"]
    for message in _llama_messages(messages):
        out.append("<|start_header_id|>" + message["role"] + "<|end_header_id|>\n\n" + message["content"].strip()
                   + "<|eot_id|>")
    out.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
    return "".join(out)


def render_llama4(messages: Messages, *, first_step: bool = True) -> str:
    """``LlamaHandler._format_prompt`` (llama.py), Llama 4 branch: the same layout with Llama 4's header tokens."""
    del first_step
    out = ["<|begin_of_text|>"]
    for message in _llama_messages(messages):
        out.append("<|header_start|>" + message["role"] + "<|header_end|>\n\n" + message["content"].strip() + "<|eot|>")
    out.append("<|header_start|>assistant<|header_end|>\n\n")
    return "".join(out)


def _gemma_messages(messages: Messages, first_step: bool) -> list[dict[str, Any]]:
    """GemmaHandler's assembly (``_pre_query_processing_prompting``): in the question's turns, consecutive user
    messages are joined with a blank line (``combine_consecutive_user_prompts``) and an ``assistant`` message is
    renamed ``model``; replies the handler appends later keep the ``assistant`` role, tool results the ``tool`` role.

    Consecutive user messages only occur inside one question turn (every step ends with a reply), so joining every
    such run is the same. Question and reply ``assistant`` messages cannot be told apart in a later step's history;
    ``first_step`` (no reply yet) marks them as the question's. In BFCL v4 only single-turn ``live_irrelevance``
    questions hold assistant messages (11), and a single-turn case is always a first step, so this is exact on the
    data; a multi-turn question holding an ``assistant`` message would render it as ``assistant`` after step 0.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        if message["role"] == "user" and out and out[-1]["role"] == "user":
            out[-1]["content"] = out[-1]["content"] + "\n\n" + message["content"]
            continue
        if first_step and message["role"] == "assistant":
            message["role"] = "model"
        out.append(message)
    return out


def render_gemma3(messages: Messages, *, first_step: bool = True) -> str:
    """``GemmaHandler._format_prompt`` (gemma.py): ``<bos>``, a first system message's ``strip()``-ed text plus a blank
    line put in front of the first remaining turn, every message as ``<start_of_turn>{role}`` with its content
    ``strip()``-ed (roles as assembled: ``model`` for the question's, ``assistant`` for replies, ``tool`` for results;
    no alternation check), then ``<start_of_turn>model``."""
    messages = _gemma_messages(messages, first_step)
    prefix = ""
    if messages and messages[0]["role"] == "system":
        prefix = messages[0]["content"].strip() + "\n\n"
        messages = messages[1:]
    out = ["<bos>"]
    for position, message in enumerate(messages):
        out.append("<start_of_turn>" + message["role"] + "\n" + (prefix if position == 0 else "")
                   + message["content"].strip() + "<end_of_turn>\n")
    out.append("<start_of_turn>model\n")
    return "".join(out)


@dataclass(frozen=True)
class HandlerFormat:
    """One family's official renderer: what it reproduces and the function doing it."""

    family: str
    handler: str  # upstream class
    upstream_file: str  # relative to the wheel
    render: Callable[..., str]
    helpers: tuple[Callable[..., Any], ...] = ()  # the assembly functions it calls
    #: the handler's own post-processing of a reply (``_parse_query_response_prompting``), or None: it keeps the
    #: text as the model wrote it (``base_oss_handler.py``)
    recorded_answer: Callable[[str], str] | None = None
    #: the renderer writes its own tools block from ``Request.functions`` and is given ``Request.native_messages``
    #: (the question without a prompting system prompt): BFCL's FC handlers
    own_tools_block: bool = False
    #: request settings the handler adds (``stop_token_ids``, ``skip_special_tokens``), sent with each request
    extras: Mapping[str, Any] | None = None
    #: the handler's ``_format_prompt`` is the checkpoint's own chat template given ``tools=`` the raw docs
    #: (Falcon3FCHandler): the backend hands ``render`` an ``apply_template(messages, tools)`` of its tokenizer
    renders_with_template: bool = False

    @property
    def name(self) -> str:
        return f"bfcl-handler:{self.handler}"

    @property
    def sha256(self) -> str:
        """Identity of the renderer as run: the source of its functions (a change to them regenerates)."""
        digest = hashlib.sha256()
        for function in (self.render, *self.helpers, *([self.recorded_answer] if self.recorded_answer else [])):
            try:
                digest.update(inspect.getsource(function).encode())
            except (OSError, TypeError):  # installed without sources: the compiled code stands in
                digest.update(function.__code__.co_code + repr(function.__code__.co_consts).encode())
        return digest.hexdigest()


def qwen_recorded_answer(text: str) -> str:
    """QwenHandler's ``_parse_query_response_prompting`` (qwen.py): a reply holding ``</think>`` is recorded as what
    follows its last ``</think>``, leading newlines dropped; that is what the result file holds and the checker
    decodes (the reasoning goes to ``reasoning_content``). A reply without ``</think>`` is kept as it is."""
    if "</think>" not in text:
        return text
    return text.split("</think>")[-1].lstrip("\n")


HANDLER_FORMATS: dict[str, HandlerFormat] = {
    "qwen": HandlerFormat("qwen", "QwenHandler", "bfcl_eval/model_handler/local_inference/qwen.py", render_qwen,
                          recorded_answer=qwen_recorded_answer),
    "llama3": HandlerFormat("llama3", "LlamaHandler", "bfcl_eval/model_handler/local_inference/llama.py",
                            render_llama3, (_llama_messages,)),
    "llama4": HandlerFormat("llama4", "LlamaHandler", "bfcl_eval/model_handler/local_inference/llama.py",
                            render_llama4, (_llama_messages,)),
    "gemma3": HandlerFormat("gemma3", "GemmaHandler", "bfcl_eval/model_handler/local_inference/gemma.py",
                            render_gemma3, (_gemma_messages,)),
}


def render_with_handler(handler: HandlerFormat, messages: Messages, *, first_step: bool) -> str:
    return handler.render([dict(m) for m in messages], first_step=first_step)


def render_request(handler: HandlerFormat, request: Any, *, step: int,
                   apply_template: Callable[[list, list], str] | None = None) -> str:
    """The prompt text of one request under ``handler``: a renderer with its own tools block (BFCL's FC handlers)
    gets the request's ``native_messages`` (no prompting system prompt) and its ``functions``; any other the
    prompting ``messages``. ``step``: the requests made before this one for the same case. ``apply_template``:
    ``(messages, tools) -> text`` with the checkpoint's tokenizer, for a handler that renders with its chat template
    (:attr:`HandlerFormat.renders_with_template`)."""
    if handler.own_tools_block:
        extra = {"apply_template": apply_template} if handler.renders_with_template else {}
        return handler.render([dict(m) for m in request.messages_for(True)], first_step=step == 0, step=step,
                              functions=[dict(f) for f in (request.functions or ())], **extra)
    if handler.family in HANDLER_FORMATS:
        return handler.render([dict(m) for m in request.messages], first_step=step == 0)
    return handler.render([dict(m) for m in request.messages], first_step=step == 0, step=step)


#: A renderer family that names a BFCL row's handler and model (``bfcl_rows``): ``bfcl-row:<handler>|<model>``.
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
                         own_tools_block=not spec.bfcl_system_prompt, extras=extras or None)


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
                         render=render, helpers=(spec.record,), own_tools_block=True, renders_with_template=True)
