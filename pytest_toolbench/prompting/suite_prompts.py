"""Which suites' prompts the official harness writes itself, and which are sent as a plain text prompt: declared by
each suite in its ``suite.yaml`` (``generation.prompt``: ``chat``, ``text`` or ``official_handler``), never named
here. The model backends read them to pick a request's renderer (``prompt_format.PromptFormats``) and how its text
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
