"""One BFCL local handler as a row of the table (:class:`HandlerSpec`): its renderer, what it records of a reply
and its two decoders, with ``OSSHandler``'s defaults (``base_oss_handler.py``: the reply recorded as written, BFCL's
prompting decoders). Each handler's module declares its rows (``SPECS``); :mod:`.handlers` gathers them.

Reference: bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .common import AstDecoder, ExecuteDecoder, Messages


def _record_raw(text: str) -> Any:
    return text


def _default_ast(recorded: Any, language: str, prompting_ast: AstDecoder) -> Any:
    return prompting_ast(recorded, language)


def _default_execute(recorded: Any, prompting_execute: ExecuteDecoder, prompting_ast: AstDecoder | None) -> list:
    return prompting_execute(recorded)


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
