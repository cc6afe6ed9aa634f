"""Prompt preparation for the in-process engine: the tokenizer, the chat template, which renderer each suite's
requests get (``prompt_format``), the prompt text and its token ids.

Rendering: the tokenizer's own chat template (``transformers`` ``apply_chat_template``), with ``tools=`` in native
mode, then tokenized without extra special tokens (the template already writes BOS; tokenizing the text again with
``add_special_tokens=True`` would double it), except for a suite that declares its upstream sends the text as a plain
prompt (suite.yaml ``generation.prompt``). A request the official harness's renderer writes (BFCL's handlers) is
rendered as that handler renders it.

transformers and huggingface_hub are imported inside methods only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_toolbench.prompting import handler_formats, prompt_format, rows
from pytest_toolbench.prompting.chat_template import template_argument, template_messages
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.backends.vllm.prompt_segments import SegmentedEncoder
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Task
from pytest_toolbench.contract.safe_values import utf8_text
from pytest_toolbench.parsing.tool_calls import detect_parser


class PromptPreparation:
    """The prompt side of :class:`~pytest_toolbench.backends.vllm.engine.VllmBackend` (a base class of it): needs
    no engine. Reads the backend's ``model``, ``revision``, ``mode``, ``settings`` (its ``VllmOptions``),
    ``engine_args``, ``handler_row`` and ``suite_prompts``."""

    model: str
    revision: str | None
    mode: str
    settings: Any
    engine_args: dict[str, Any]
    handler_row: str | None
    suite_prompts: SuitePrompts

    def _init_prompts(self, tool_parser: str | None) -> None:
        self._requested_parser = tool_parser
        self._row_choice: rows.RowChoice | None = None
        self._prompt_formats: prompt_format.PromptFormats | None = None
        self._tokenizer_obj: Any = None
        self._tokenizer_lock = threading.Lock()
        self._segments: SegmentedEncoder | None = None
        self._chat_template: str | None = None

    @property
    def local_model_dir(self) -> Path | None:
        """The checkpoint's folder, resolved, when ``model`` is a local folder (else a Hub id: None)."""
        path = Path(self.model).expanduser()
        return path.resolve() if path.is_dir() else None

    def tokenizer(self) -> Any:
        """The model's tokenizer, loaded once (a loader thread started by :meth:`start` may be loading it: callers
        wait for that one load)."""
        if self._tokenizer_obj is None:
            with self._tokenizer_lock:
                if self._tokenizer_obj is None:
                    from transformers import AutoTokenizer

                    source = self.engine_args.get("tokenizer", self.model)
                    self._tokenizer_obj = AutoTokenizer.from_pretrained(
                        source,
                        revision=self.engine_args.get("tokenizer_revision", self.revision),
                        trust_remote_code=bool(self.engine_args.get("trust_remote_code", False)),
                    )
        return self._tokenizer_obj

    def _load_tokenizer_in_background(self) -> None:
        """The loader thread's work: a failure here is left for the first caller of :meth:`tokenizer` to raise, with
        its own traceback, on the main thread."""
        try:
            self.tokenizer()
        except BaseException:  # noqa: BLE001 - reported by the next call on the main thread
            pass

    def chat_template(self) -> str:
        """The template used for rendering (and hashed into the fingerprint): ``--toolbench-vllm-arg
        chat_template=...`` (the template, or the path of a file holding it), else the checkpoint's own, read from
        its files when they are at hand (no transformers import, so a fully cached rerun stays cheap), else from the
        loaded tokenizer."""
        if self._chat_template is None:
            template = template_argument(self.engine_args.get("chat_template")) or self._template_from_files()
            if template is None:
                template = getattr(self.tokenizer(), "chat_template", None)
            template = self._pick_named_template(template)
            if not isinstance(template, str) or not template:
                raise ToolbenchError(
                    f"model {self.model!r} has no chat template; pass one with --toolbench-vllm-arg "
                    "chat_template=PATH-TO-TEMPLATE.jinja"
                )
            self._chat_template = template
        return self._chat_template

    def _pick_named_template(self, template: Any) -> Any:
        # Several named templates (a dict, or a list of {name, template} in tokenizer_config.json): prefer
        # "tool_use" in native mode, as transformers does when tools are passed.
        if isinstance(template, list):
            template = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
        if isinstance(template, Mapping):
            template = (template.get("tool_use") if self.mode == "native" else None) or template.get("default")
        return template

    def _template_from_files(self) -> Any:
        if "tokenizer" in self.engine_args:
            return None  # a separate tokenizer: let transformers resolve it
        local = self.local_model_dir
        if local is not None:
            jinja, config = local / "chat_template.jinja", local / "tokenizer_config.json"
        else:
            try:
                from huggingface_hub import try_to_load_from_cache
            except ImportError:
                return None
            found = [try_to_load_from_cache(self.model, name, revision=self.revision)
                     for name in ("chat_template.jinja", "tokenizer_config.json")]
            jinja, config = (Path(f) if isinstance(f, str) else None for f in found)
        if jinja is not None and jinja.is_file():
            return jinja.read_text(encoding="utf-8")
        if config is not None and config.is_file():
            try:
                return json.loads(config.read_text(encoding="utf-8")).get("chat_template")
            except ValueError:
                return None
        return None

    @property
    def tool_parser(self) -> str | None:
        """The native parser in use: the one asked for, or the one the chat template's markers point to."""
        if self.mode != "native":
            return None
        if self._requested_parser is None:
            self._requested_parser = detect_parser(self.chat_template())
        return self._requested_parser

    def prompt_formats(self) -> prompt_format.PromptFormats:
        """Which renderer each suite's requests get (``--toolbench-prompt-format``): the official harness's own where
        there is one for the model's family (BFCL's handlers), else the chat template. See ``prompt_format.py``."""
        if self._prompt_formats is None:
            template = self.chat_template()
            try:
                self._prompt_formats = prompt_format.PromptFormats(
                    self.settings.prompt_format, self.row_choice().family, self.mode == "native",
                    hashlib.sha256(template.encode()).hexdigest(), self.suite_prompts)
            except handler_formats.PromptFormatError as exc:
                raise ToolbenchError(f"model {self.model!r}: {exc}") from None
        return self._prompt_formats

    def row_choice(self) -> rows.RowChoice:
        """The leaderboard row the checkpoint is prompted as (named by the declared handler library's option, else
        by its id or family), for the renderer and the run header (``prompting/rows.py``)."""
        if self._row_choice is None:
            family = prompt_format.detect_family(
                self.model, prompt_format.read_model_config(self.model, self.revision), self.chat_template())
            try:
                self._row_choice = rows.choose_row(self.suite_prompts, self.handler_row, self.model, family)
            except rows.RowError as exc:
                raise ToolbenchError(str(exc)) from None
        return self._row_choice

    def render(self, task: Task) -> str:
        """The prompt text for one task, exactly as the model sees it."""
        request = task.request
        handler = self.prompt_formats().handler_for(task.case.suite)
        if handler is not None:
            try:
                return handler_formats.render_request(handler, request, step=task.step,
                                                    apply_template=self.handler_template)
            except Exception as exc:  # noqa: BLE001 - the checkpoint's template (Falcon3FC) failing: a usage error
                if not handler.renders_with_template:
                    raise
                raise ToolbenchError(
                    f"chat template of {self.model!r} ({handler.handler}) failed on {task.case.suite}::"
                    f"{task.case.case_id} (step {task.step}): {type(exc).__name__}: {exc}") from exc
        kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": False}
        if self.mode == "native" and request.tools:
            kwargs["tools"] = [dict(tool) for tool in request.tools]
        kwargs["chat_template"] = self.chat_template()
        try:
            return self.tokenizer().apply_chat_template(
                template_messages(request.messages_for(self.mode == "native")), **kwargs)
        except Exception as exc:  # noqa: BLE001 - a template error names the case once, as a usage error
            raise ToolbenchError(
                f"chat template of {self.model!r} failed on {task.case.suite}::{task.case.case_id} "
                f"(step {task.step}): {type(exc).__name__}: {exc}"
            ) from exc

    def handler_template(self, messages: list, tools: list) -> str:
        """A BFCL handler that renders with the checkpoint's chat template (Falcon3FCHandler): its tokenizer's own
        template given ``tools=`` the raw docs, as ``bfcl generate`` calls it."""
        return self.tokenizer().apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)

    def encode(self, tasks: Sequence[Task], texts: Sequence[str]) -> list[list[int]]:
        """Token ids of rendered prompts. A chat template writes its own BOS, so the text is tokenized without
        special tokens, except for a suite whose upstream sends the text as a plain prompt (BFCL's handlers, ACEBench:
        ``prompt_format.PromptFormats.adds_special_tokens``), which gets them as it does there. A text the tokenizer
        cannot take (lone surrogates: a hostile reply fed back into a conversation's next prompt) is tokenized with
        them as their escape text (``safe_values.utf8_text``), not a failed run."""
        texts = [utf8_text(text) for text in texts]
        formats = self.prompt_formats()
        flags = [formats.adds_special_tokens(task.case.suite) for task in tasks]
        ids: list[list[int]] = [[] for _ in texts]
        if self._segments is None:
            self._segments = SegmentedEncoder(self.tokenizer())
        for flag in (False, True):
            chosen = [i for i, f in enumerate(flags) if f is flag]
            if chosen:
                # a conversation's step reuses the token ids of its earlier turns (prompt_segments.py)
                conversations = [(tasks[i].case.suite, tasks[i].case.case_id, tasks[i].request.sample)
                                 if tasks[i].in_conversation else None for i in chosen]
                encoded = self._segments.encode([texts[i] for i in chosen], flag, conversations)
                for i, row in zip(chosen, encoded):
                    ids[i] = row
        return ids

    # -- Backend protocol ---------------------------------------------------------------------------------------------
