"""The leaderboard row a checkpoint is prompted (or replayed files are decoded) as: asked of the handler library the
run's official-handler suites declare (suite.yaml ``generation.handlers``; the rows, their order of matching and the
option that names one are the library's). Without a declared library there is no row.

Pure; nothing heavy is imported.
"""

from __future__ import annotations

from typing import Any, Callable

from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.scorer_lib.handler_library import HandlerLibrary, RowChoice, RowError, RowOption

__all__ = ["RowChoice", "RowError", "RowOption", "choose_row", "row_option", "header_key", "NO_LIBRARY"]

#: the choice where no suite declares a handler library
NO_LIBRARY = RowChoice(None, None, None, None, "none", "no suite declares a handler library: no row")


def _library(suites: SuitePrompts | None) -> HandlerLibrary | None:
    return (suites if suites is not None else SuitePrompts.shipped()).library()


def choose_row(suites: SuitePrompts | None, named: str | None, model: str, family: str | None,
               renders: bool = True) -> RowChoice:
    """The row for a run (named, else by the checkpoint's id, else by its family: the library's order);
    :class:`RowError` for a named row the library refuses."""
    library = _library(suites)
    return library.choose_row(named, model, family, renders) if library is not None else NO_LIBRARY


def replay_row(suites: SuitePrompts | None, named: str | None, model: str | None, family: Callable[[], Any],
               mode: str | None) -> RowChoice:
    """The row replayed files are decoded as (the library's rule); :class:`RowError` for a refused one."""
    library = _library(suites)
    return library.replay_row(named, model, family, mode) if library is not None else NO_LIBRARY


def row_option(suites: SuitePrompts | None = None) -> RowOption | None:
    """The option that names a row (the declared library's), or None."""
    library = _library(suites)
    return library.option if library is not None else None


def header_key(suites: SuitePrompts | None = None) -> str | None:
    """The run header's key for the row choice (the declared library's), or None."""
    library = _library(suites)
    return library.header_key if library is not None else None
