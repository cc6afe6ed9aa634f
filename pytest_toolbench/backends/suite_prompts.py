"""Which suites' prompts the official harness writes itself, and which are sent as a plain text prompt: declared by
each suite in its ``suite.yaml`` (``generation.prompt``: ``chat``, ``text`` or ``official_handler``), never named
here. The model backends read them to pick a request's renderer (``prompt_format.PromptFormats``) and how its text
is tokenized, and list them in their fingerprint.

The fingerprint is part of every cache key, so it must not depend on which suites a run selects: the declarations are
those of every suite the run can see, the shipped ones (``pytest_toolbench.suites``) and those under the run's paths,
whichever are selected.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

import pytest_toolbench.suites as shipped_suites
from pytest_toolbench.contract.definition import SuiteDefinition, find_definitions, load_definition
from pytest_toolbench.contract.errors import ToolbenchError


class DefinitionLookup(Protocol):
    """What :meth:`SuitePrompts.of_run` reads of the run's catalog: the paths it was given, and the definitions under
    paths (``run.catalog.Catalog``)."""

    paths: tuple[str, ...]

    def definitions_under(self, paths: Iterable[Path | str]) -> list[SuiteDefinition]: ...


@dataclass(frozen=True)
class SuitePrompts:
    """The suites declaring ``generation.prompt: official_handler`` and ``generation.prompt: text``."""

    handler_suites: frozenset[str] = frozenset()
    text_prompt_suites: frozenset[str] = frozenset()

    @classmethod
    def declared_by(cls, definitions: Iterable[SuiteDefinition]) -> "SuitePrompts":
        """From suite definitions; a later definition of the same suite name wins."""
        styles = {definition.name: definition.prompt_style for definition in definitions}
        return cls(frozenset(name for name, style in styles.items() if style == "official_handler"),
                   frozenset(name for name, style in styles.items() if style == "text"))

    @classmethod
    def shipped(cls) -> "SuitePrompts":
        """The shipped suites' declarations (what a backend built outside a run, in a test or a benchmark, uses)."""
        return cls.declared_by(_shipped_definitions())

    @classmethod
    def of_run(cls, catalog: DefinitionLookup) -> "SuitePrompts":
        """The shipped suites' declarations, and those of the suites under the run's paths (which win by name)."""
        return cls.declared_by([*_shipped_definitions(), *catalog.definitions_under(catalog.paths)])


@functools.lru_cache(maxsize=1)
def _shipped_definitions() -> tuple[SuiteDefinition, ...]:
    found = []
    for path in find_definitions([Path(shipped_suites.__file__).resolve().parent]):
        try:
            found.append(load_definition(path))
        except (ToolbenchError, OSError):
            continue  # a broken definition is reported by the run that collects it
    return tuple(found)
