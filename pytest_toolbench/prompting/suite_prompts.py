"""Which suites' prompts the official harness writes itself, and which are sent as a plain text prompt: declared by
each suite in its ``suite.yaml`` (``generation.prompt``: ``chat``, ``text`` or ``official_handler``, and with the last
the handler library, ``generation.handlers``), never named here. The model backends read them to pick a request's
renderer (``prompt_format.PromptFormats``) and how its text
is tokenized, and list them in their fingerprint.

The fingerprint is part of every cache key, so it must not depend on which suites a run selects: the declarations are
those of every suite the run can see, the shipped ones (the folder ``pytest_toolbench.suites`` ships from, found
without importing it: the core never imports the suites) and those under the run's paths, whichever are selected.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

from pytest_toolbench.contract.definition import SuiteDefinition, find_definitions, load_definition
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.scorer_lib.handler_library import HandlerLibrary, LibraryError, load_library


class DefinitionLookup(Protocol):
    """What :meth:`SuitePrompts.of_run` reads of the run's catalog: the paths it was given, and the definitions under
    paths (``run.catalog.Catalog``)."""

    paths: tuple[str, ...]

    def definitions_under(self, paths: Iterable[Path | str]) -> list[SuiteDefinition]: ...


@dataclass(frozen=True)
class SuitePrompts:
    """The suites declaring ``generation.prompt: official_handler`` and ``generation.prompt: text``, and the handler
    library the official-handler suites name (``generation.handlers``; one per run)."""

    handler_suites: frozenset[str] = frozenset()
    text_prompt_suites: frozenset[str] = frozenset()
    handlers: str | None = None

    @classmethod
    def declared_by(cls, definitions: Iterable[SuiteDefinition]) -> "SuitePrompts":
        """From suite definitions; a later definition of the same suite name wins. Official-handler suites that name
        different handler libraries are one error (a run prompts as one leaderboard's row)."""
        latest = {definition.name: definition for definition in definitions}
        styles = {name: definition.prompt_style for name, definition in latest.items()}
        libraries = sorted({definition.handler_library for definition in latest.values()
                            if definition.prompt_style == "official_handler" and definition.handler_library})
        if len(libraries) > 1:
            raise ToolbenchError(f"suites with generation.prompt official_handler name different handler libraries "
                                 f"(generation.handlers: {', '.join(libraries)}); a run prompts with one")
        return cls(frozenset(name for name, style in styles.items() if style == "official_handler"),
                   frozenset(name for name, style in styles.items() if style == "text"),
                   libraries[0] if libraries else None)

    @classmethod
    def shipped(cls) -> "SuitePrompts":
        """The shipped suites' declarations (what a backend built outside a run, in a test or a benchmark, uses)."""
        return cls.declared_by(_shipped_definitions())

    @classmethod
    def of_run(cls, catalog: DefinitionLookup) -> "SuitePrompts":
        """The shipped suites' declarations, and those of the suites under the run's paths (which win by name)."""
        return cls.declared_by([*_shipped_definitions(), *catalog.definitions_under(catalog.paths)])

    def library(self) -> HandlerLibrary | None:
        """The declared handler library, or None when no suite declares one."""
        return _library(self.handlers) if self.handlers else None


@functools.lru_cache(maxsize=None)
def _library(name: str) -> HandlerLibrary:
    try:
        return load_library(name)
    except LibraryError as error:
        raise ToolbenchError(str(error)) from None


#: The package the shipped suites are installed as (``suites/`` in a checkout: pyproject.toml's ``package-dir``).
SHIPPED_PACKAGE = "pytest_toolbench.suites"


def shipped_folder() -> Path | None:
    """The folder of the shipped suites, located by the import system without importing (executing) the package, or
    None when it is not installed."""
    spec = importlib.util.find_spec(SHIPPED_PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(locations[0]).resolve() if locations else None


@functools.lru_cache(maxsize=1)
def _shipped_definitions() -> tuple[SuiteDefinition, ...]:
    found: list[SuiteDefinition] = []
    folder = shipped_folder()
    for path in find_definitions([folder] if folder is not None else []):
        try:
            found.append(load_definition(path))
        except (ToolbenchError, OSError):
            continue  # a broken definition is reported by the run that collects it
    return tuple(found)
