"""The registry of benchmarks and the suites loaded in this run (definition + benchmark + data + cases)."""

from __future__ import annotations

import dataclasses
import importlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import datasource
from .definition import SuiteDefinition, load_definition
from .errors import DataError, ToolbenchError
from .suite import Case

REQUIRED_FUNCTIONS = ("load_cases", "build_request", "gold_output", "score", "aggregate")


class Registry:
    """Benchmarks and backends added by name (through the ``pytest_toolbench_register`` hook)."""

    def __init__(self) -> None:
        self.benchmarks: dict[str, Any] = {}
        self.backends: dict[str, Callable[..., Any]] = {}
        self.engine_backends: set[str] = set()

    def add_benchmark(self, name: str, benchmark: Any) -> None:
        self.benchmarks[name] = benchmark

    def add_backend(self, name: str, factory: Callable[..., Any], engine: bool = True) -> None:
        """``factory(options)`` builds the backend; an ``engine`` backend is pre-generated into the cache once,
        by the process that owns it, while a non-engine one answers on the spot wherever a test runs."""
        self.backends[name] = factory
        if engine:
            self.engine_backends.add(name)

    def benchmark(self, reference: str, definition_path: Path) -> Any:
        if reference in self.benchmarks:
            found = self.benchmarks[reference]
        else:
            try:
                found = importlib.import_module(reference)
            except ImportError as exc:
                raise DataError(definition_path, f"cannot import scorer module {reference!r}: {exc}",
                                field="scorer") from None
        missing = [name for name in REQUIRED_FUNCTIONS if not callable(getattr(found, name, None))]
        if missing:
            raise DataError(definition_path, f"scorer {reference!r} lacks {', '.join(missing)}", field="scorer")
        return found


@dataclass
class LoadedSuite:
    definition: SuiteDefinition
    benchmark: Any
    source: datasource.DataSource
    cases: list[Case]
    known_defects: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def interactive(self) -> bool:
        return callable(getattr(self.benchmark, "conversation", None))

    def case(self, case_id: str) -> Case:
        return self._by_id[case_id]

    def __post_init__(self) -> None:
        self._by_id = {case.case_id: case for case in self.cases}
        if len(self._by_id) != len(self.cases):
            seen: set[str] = set()
            duplicate = next(c.case_id for c in self.cases if c.case_id in seen or seen.add(c.case_id))
            raise ToolbenchError(f"suite {self.name}: duplicate case id {duplicate!r}")


class Catalog:
    """Loads each suite at most once per process; keyed by the path of its ``suite.yaml``."""

    def __init__(self, registry: Registry, data_dir: str | None, data_origin: str, download_root: Path,
                 allow_download: bool, limit: int | None, data_dir_hook: Callable[[str], Any] | None = None):
        self.registry = registry
        self.data_dir = data_dir
        self.data_origin = data_origin
        self.download_root = download_root
        self.allow_download = allow_download
        self.limit = limit
        self.data_dir_hook = data_dir_hook
        self._suites: dict[Path, LoadedSuite] = {}

    @property
    def loaded(self) -> list[LoadedSuite]:
        return list(self._suites.values())

    def by_name(self, name: str) -> LoadedSuite | None:
        return next((s for s in self._suites.values() if s.name == name), None)

    def load(self, definition_path: Path) -> LoadedSuite:
        definition_path = definition_path.resolve()
        if definition_path not in self._suites:
            self._suites[definition_path] = self._load(definition_path)
        return self._suites[definition_path]

    def _load(self, definition_path: Path) -> LoadedSuite:
        if not definition_path.is_file():
            raise DataError(definition_path, "suite definition not found")
        definition = load_definition(definition_path)
        benchmark = self.registry.benchmark(definition.scorer, definition_path)
        override = self.data_dir_hook(definition.name) if self.data_dir_hook else None
        if override is not None:
            source = datasource.DataSource(Path(override), "folder", f"{override} (from a conftest hook)")
        else:
            source = datasource.resolve(definition, self.data_dir, self.data_origin, self.download_root,
                                        self.allow_download)
        run_info = getattr(benchmark, "run_info", None)
        if callable(run_info):
            source = dataclasses.replace(source, info=tuple(sorted(run_info(source.path).items())))
        cases = list(benchmark.load_cases(source.path, dict(definition.raw)))
        unknown = sorted({c.category for c in cases} - set(definition.categories))
        if unknown:
            raise DataError(definition_path, f"cases of undeclared categories {unknown}", field="categories")
        cases = _first_per_category(cases, self.limit)
        # Known defects name upstream cases; the shipped samples reuse ids for hand-written cases of their own.
        defects = {} if source.is_sample else definition.known_defects()
        return LoadedSuite(definition, benchmark, source, cases, defects)


def _first_per_category(cases: list[Case], limit: int | None) -> list[Case]:
    if limit is None:
        return cases
    taken: dict[str, int] = defaultdict(int)
    kept = []
    for case in cases:
        if taken[case.category] < limit:
            taken[case.category] += 1
            kept.append(case)
    return kept
