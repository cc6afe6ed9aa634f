"""What an official-handler library is: the renderers a leaderboard's harness writes its prompts with, the rows of
its board a checkpoint is prompted as, and the one option that names a row. A suite whose official harness writes
the prompt text itself (suite.yaml ``generation.prompt: official_handler``) names its library
(``generation.handlers: <module of pytest_toolbench.scorer_lib>``); the core reaches the library only through that
declaration (:func:`load_library`), never by name.

A library module exposes ``LIBRARY``, a :class:`HandlerLibrary`. Pure; standard library only.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

#: The package a suite.yaml's ``generation.handlers`` names a module of.
LIBRARY_PACKAGE = "pytest_toolbench.scorer_lib"


class PromptFormatError(ValueError):
    """A renderer that cannot be had: ``--toolbench-prompt-format=handler`` for a model whose family has no official
    renderer, or a handler that needs the checkpoint's tokenizer where there is none."""


class RowError(ValueError):
    """A named row that is not one of the board's, or a row that cannot be reproduced here."""


class LibraryError(ValueError):
    """A suite.yaml's ``generation.handlers`` that names no handler library."""


@dataclass(frozen=True)
class HandlerFormat:
    """One official renderer: what it reproduces and the function doing it."""

    family: str
    handler: str  # upstream class
    upstream_file: str  # relative to the wheel
    render: Callable[..., str]
    helpers: tuple[Callable[..., Any], ...] = ()  # the assembly functions it calls
    #: the handler's own post-processing of a reply, or None: it keeps the text as the model wrote it
    recorded_answer: Callable[[str], str] | None = None
    #: the renderer writes its own tools block from ``Request.functions`` and is given ``Request.native_messages``
    #: (the question without a prompting system prompt)
    own_tools_block: bool = False
    #: request settings the handler adds (``stop_token_ids``, ``skip_special_tokens``), sent with each request
    extras: Mapping[str, Any] | None = None
    #: the handler's prompt is the checkpoint's own chat template given ``tools=`` the raw docs: the backend hands
    #: ``render`` an ``apply_template(messages, tools)`` of its tokenizer
    renders_with_template: bool = False
    #: the renderer's name is ``<label>:<handler>`` (what ``Generation.renderer`` records)
    label: str = "handler"
    #: ``render`` takes ``step=`` (the requests before this one for the same case), not only ``first_step=``
    takes_step: bool = True

    @property
    def name(self) -> str:
        return f"{self.label}:{self.handler}"

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


@dataclass(frozen=True)
class RowChoice:
    """The row (or family) a run prompts a suite as, for the renderer choice and the run header."""

    row: str | None  #: the board's name of the row, None when no row was named or matched
    handler: str | None  #: the upstream handler class, None: the chat template
    mode: str | None  #: the row's mode (e.g. "FC" or "prompting"), None without a row
    family: str | None  #: the renderer family (:meth:`HandlerLibrary.handler_format`), None: the chat template
    matched: str  #: how: "named", "checkpoint id", "family", "none"
    note: str  #: one sentence for the header

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "handler": self.handler, "mode": self.mode, "matched": self.matched,
                "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RowChoice":
        """The choice of :meth:`to_json` (the renderer family is not part of it: None)."""
        return cls(data.get("row"), data.get("handler"), data.get("mode"), None,
                   data.get("matched", "none"), data.get("note", ""))


NO_ROW = RowChoice(None, None, None, None, "none", "")


@dataclass(frozen=True)
class RowOption:
    """The command-line option that names a row (registered in the generation group, before
    ``--toolbench-check-prompts``)."""

    flag: str
    dest: str
    metavar: str
    help: str


@dataclass(frozen=True)
class HandlerLibrary:
    """An official-handler library: what the core asks of it, each as a plain value or function."""

    name: str  #: its module under ``pytest_toolbench.scorer_lib``
    upstream: str  #: the harness version the renderers reproduce, for the fingerprint
    header_key: str  #: the run header's (and fingerprints') key for the row choice
    row_label: str  #: what a row is called in messages ("BFCL row")
    #: the renderers in words, for ``--toolbench-prompt-format``'s help ("BFCL's handlers for Qwen, ...")
    renderers_words: str
    option: RowOption
    #: the renderer families a checkpoint's family maps to (for messages: "known: ...")
    families: Mapping[str, HandlerFormat]
    #: ``family -> HandlerFormat | None``: a detected family's renderer or a row's
    handler_format: Callable[[str | None], HandlerFormat | None]
    #: ``(named, model, family, renders) -> RowChoice``; raises :class:`RowError`
    choose_row: Callable[..., RowChoice]
    #: ``(named, mode, prompt_format, renders) -> None``: the option checked against the run's other options;
    #: raises :class:`RowError` with the one line to show
    check_option: Callable[..., None]
    #: ``(named, model, family, mode) -> RowChoice``: the row replayed files are decoded as; raises :class:`RowError`
    replay_row: Callable[..., RowChoice]
    #: the choice the gold backend reports, and its refusal of a named row (``name -> line``)
    gold_choice: RowChoice
    gold_refusal: Callable[[str], str]
    #: ``RowChoice.to_json() -> words`` for a replay's one-line description
    replay_words: Callable[[Mapping[str, Any]], str]
    #: ``--toolbench-replay-mode``'s help: how the library's result files come in the two modes (fc, prompting)
    replay_mode_help: str


def load_library(name: str) -> HandlerLibrary:
    """The handler library a suite.yaml's ``generation.handlers`` names (a module of ``pytest_toolbench.scorer_lib``
    exposing ``LIBRARY``); :class:`LibraryError` otherwise."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise LibraryError(f"generation.handlers: {name!r} is not a module name")
    try:
        module = importlib.import_module(f"{LIBRARY_PACKAGE}.{name}")
    except ImportError as error:
        raise LibraryError(f"generation.handlers: no handler library {name!r} in {LIBRARY_PACKAGE} ({error})") \
            from None
    library = getattr(module, "LIBRARY", None)
    if not isinstance(library, HandlerLibrary):
        raise LibraryError(f"generation.handlers: {LIBRARY_PACKAGE}.{name} has no LIBRARY (a HandlerLibrary)")
    return library
