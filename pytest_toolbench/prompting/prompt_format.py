"""How a request's messages become the prompt text: the official harness's own renderer where one exists
(``handler_formats``: BFCL's handlers), else the checkpoint's chat template; which renderer each suite's requests get
(:class:`PromptFormats`, from ``--toolbench-prompt-format``, the checkpoint's family and the suites' declarations,
suite.yaml ``generation.prompt``), and the checkpoint's family (:func:`detect_family`).

Pure functions; nothing here imports transformers or vllm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.scorer_lib.handler_library import HandlerFormat, PromptFormatError

#: ``--toolbench-prompt-format`` values. ``auto``: the official harness's renderer where the suite has one and the
#: model's family is recognised, else the chat template; ``handler``: the harness's renderer, an error when the family
#: is not recognised; ``chat-template``: always the checkpoint's chat template.
PROMPT_FORMATS = ("auto", "handler", "chat-template")

CHAT_TEMPLATE = "chat-template"


# -- family detection -------------------------------------------------------------------------------------------------

_MODEL_TYPES = {
    "qwen2": "qwen", "qwen2_moe": "qwen", "qwen3": "qwen", "qwen3_moe": "qwen",
    "llama4": "llama4", "llama4_text": "llama4",
    "gemma3": "gemma3", "gemma3_text": "gemma3",
}


_ARCHITECTURES = {
    "Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "LlamaForCausalLM": "llama", "Llama4ForConditionalGeneration": "llama4",
    "Llama4ForCausalLM": "llama4", "Gemma3ForConditionalGeneration": "gemma3", "Gemma3ForCausalLM": "gemma3_text",
}


def detect_family(model: str, config: Mapping[str, Any] | None = None, chat_template: str | None = None) -> str | None:
    """The handler family of a checkpoint, or None.

    From ``config.json``'s ``model_type`` (or its first ``architectures`` entry) first (a fine-tune keeps its
    base's), else from the model's name. A
    ``llama`` model type covers Llama 1, 2 and 3 and many others; it is Llama 3 when its chat template writes Llama
    3's header tokens (or, without a template at hand, when the name says Llama 3). A config that names another
    model type is not guessed from the name. When the chat template is at hand, it must use the family's turn tokens
    (a fine-tune may keep its base's architecture but change the format, e.g. DeepSeek-R1-Distill-Qwen, which BFCL
    gives another handler).
    """
    family = _family_from_config_or_name(model, config, chat_template)
    if family is not None and chat_template and _FAMILY_MARKERS[family] not in chat_template:
        return None  # e.g. a DeepSeek-R1 distill keeps Qwen2's model type but not its turn tokens
    return family


#: The turn token each handler writes; a checkpoint whose chat template lacks it speaks another format.
_FAMILY_MARKERS = {"qwen": "<|im_start|>", "llama3": "<|start_header_id|>", "llama4": "<|header_start|>",
                   "gemma3": "<start_of_turn>"}


def _family_from_config_or_name(model: str, config: Mapping[str, Any] | None,
                                chat_template: str | None) -> str | None:
    config = config or {}
    model_type = str(config.get("model_type") or "").lower()
    architectures = config.get("architectures")
    if not model_type and isinstance(architectures, list) and architectures:
        model_type = _ARCHITECTURES.get(str(architectures[0]), str(architectures[0]).lower())
    template = chat_template or ""
    name = Path(model).name.lower() if model else ""
    if model_type:
        if model_type in _MODEL_TYPES:
            return _MODEL_TYPES[model_type]
        if model_type == "llama":
            if "<|start_header_id|>" in template:
                return "llama3"
            if not template and any(key in name for key in ("llama-3", "llama3")):
                return "llama3"
        return None
    if any(key in name for key in ("qwen2", "qwen3")):
        return "qwen"
    if any(key in name for key in ("llama-4", "llama4")):
        return "llama4"
    if any(key in name for key in ("llama-3", "llama3")):
        return "llama3"
    if any(key in name for key in ("gemma-3", "gemma3")):
        return "gemma3"
    return None


def read_model_config(model: str, revision: str | None = None) -> dict[str, Any] | None:
    """``config.json`` of a local checkpoint folder, or of a Hub id already in the local Hugging Face cache."""
    path = Path(model).expanduser()
    candidate: Path | None = path / "config.json" if path.is_dir() else None
    if candidate is None:
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return None
        found = try_to_load_from_cache(model, "config.json", revision=revision)
        candidate = Path(found) if isinstance(found, str) else None
    if candidate is None or not candidate.is_file():
        return None
    try:
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# -- the choice per request -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PromptFormats:
    """Which renderer each request gets, for one model and mode; :meth:`describe` goes into the fingerprint (so a
    change of renderer regenerates) and with it into the JSON header. ``suites``: which suites declare an official
    handler or a text prompt (suite.yaml ``generation.prompt``; default: the shipped suites')."""

    option: str
    family: str | None
    native: bool
    chat_template_sha256: str
    suites: SuitePrompts = field(default_factory=SuitePrompts.shipped)

    def __post_init__(self) -> None:
        if self.option not in PROMPT_FORMATS:
            raise PromptFormatError(f"--toolbench-prompt-format must be one of {', '.join(PROMPT_FORMATS)}, "
                                    f"got {self.option!r}")
        if self.option == "handler" and self._handler() is None:
            library = self.suites.library()
            raise PromptFormatError(
                "--toolbench-prompt-format=handler: no official handler renderer for this model (family not "
                f"recognised; known: {', '.join(sorted(library.families if library else ()))}); use auto or "
                "chat-template")

    def _handler(self) -> HandlerFormat | None:
        """The declared handler library's renderer of this model's family, or None."""
        library = self.suites.library()
        return library.handler_format(self.family) if library is not None else None

    def handler_for(self, suite: str) -> HandlerFormat | None:
        """The official renderer for a request of ``suite``, or None (chat template). Native mode always uses the
        chat template with ``tools=`` (a leaderboard's ``-FC`` API handlers are another protocol, not reproduced
        here)."""
        if self.option == CHAT_TEMPLATE or self.native or suite not in self.suites.handler_suites:
            return None
        return self._handler()

    def adds_special_tokens(self, suite: str) -> bool:
        """Whether the rendered text is tokenized *with* the tokenizer's special tokens, as upstream's inference
        does: BFCL's handlers send their text to vLLM's completions endpoint (``add_special_tokens`` defaults to
        true there), ACEBench passes the chat template's text to ``LLM.generate`` (which tokenizes a text prompt the
        same way). A tokenizer that adds a BOS (Llama 3, Gemma) then puts a second one before the one the text
        already starts with; Qwen's adds nothing. A chat API call (every other suite) renders and tokenizes without
        them."""
        if self.native:
            return False
        if suite in self.suites.text_prompt_suites:
            return True
        return self.handler_for(suite) is not None

    def describe(self) -> dict[str, Any]:
        chat = {"renderer": CHAT_TEMPLATE, "sha256": self.chat_template_sha256}
        handler = None if self.native or self.option == CHAT_TEMPLATE else self._handler()
        library = self.suites.library()
        suites: dict[str, Any] = {}
        for suite in sorted(self.suites.handler_suites):
            if handler is not None:
                suites[suite] = {"renderer": handler.name, "sha256": handler.sha256,
                                 "upstream": f"{library.upstream if library else ''} {handler.upstream_file}"}
            else:
                why = ("chat template asked for" if self.option == CHAT_TEMPLATE else
                       "native mode: chat template with tools=" if self.native else
                       "model family not recognised: the chat template is a deviation from the official handler")
                suites[suite] = {**chat, "note": why}
        for suite in sorted(self.suites.handler_suites | self.suites.text_prompt_suites):
            suites.setdefault(suite, dict(chat))["special_tokens_added"] = self.adds_special_tokens(suite)
        return {"option": self.option, "family": self.family, "default": chat, "suites": suites}


