"""The registry of benchmarks and the suites loaded in this run (definition + benchmark + data + cases)."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .. import data
from . import sampling, suite_cache
from ..contract.definition import SuiteDefinition, find_definitions, load_definition, with_options
from ..contract.errors import DataError, ToolbenchError
from ..contract.suite import Case, SuiteContext
from .data_check import check_local_data
from .suite_binding import load_suite_cases, loader_form, run_info_of, shown_signature, suite_context

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

    def scorer_file(self, reference: str, definition_path: Path) -> str | None:
        """The file of a scorer module, found without importing it (None for a registered object)."""
        found = self.benchmarks.get(reference)
        if found is not None:
            return getattr(found, "__file__", None)
        local = _local_scorer(reference, definition_path)
        if local is not None:
            return str(local)
        try:
            spec = importlib.util.find_spec(reference)
        except (ImportError, ValueError):
            return None
        return spec.origin if spec is not None and spec.has_location else None

    def benchmark(self, reference: str, definition_path: Path) -> Any:
        """``scorer:`` of a suite.yaml: a name registered through the hook, a module or package in the suite's own
        folder (``scorer: scorer`` for ``suites/<name>/scorer.py`` or ``suites/<name>/scorer/``), or an importable
        dotted module path."""
        local = _local_scorer(reference, definition_path) if reference not in self.benchmarks else None
        try:
            if reference in self.benchmarks:
                found = self.benchmarks[reference]
            elif local is not None:
                found = _import_local(local, definition_path)
            else:
                found = importlib.import_module(reference)
        except Exception as exc:  # ImportError, or the scorer's own SyntaxError/NameError at import
            raise DataError(definition_path, f"cannot import scorer module {reference!r}: {exc}",
                            field="scorer") from None
        missing = [name for name in REQUIRED_FUNCTIONS if not callable(getattr(found, name, None))]
        if missing:
            raise DataError(definition_path, f"scorer {reference!r} lacks {', '.join(missing)}", field="scorer")
        if loader_form(found.load_cases) is None:
            raise DataError(definition_path, f"scorer {reference!r}: load_cases{shown_signature(found.load_cases)} "
                                             f"must take the suite's context, load_cases(context) (a SuiteContext: "
                                             f"context.data_dir, context.options, context.uses(library)), or the "
                                             f"older two arguments load_cases(data_dir, definition)", field="scorer")
        return found


def _local_scorer(reference: str, definition_path: Path) -> Path | None:
    """The suite folder's own scorer: ``<folder>/<reference>.py`` or the package ``<folder>/<reference>/``."""
    if not all(part.isidentifier() for part in reference.split(".")):
        return None
    base = Path(definition_path).parent.joinpath(*reference.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _import_local(path: Path, definition_path: Path) -> Any:
    """Import a suite folder's scorer under a name of its own (``toolbench_suite_<folder>_<module>``), so two suites
    may both call their scorer ``scorer``; a package keeps its relative imports."""
    import sys

    folder = Path(definition_path).parent
    stem = path.parent.name if path.name == "__init__.py" else path.stem
    name = f"toolbench_suite_{folder.name}_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    package = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=package)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def import_scorer(suite_folder: Path | str, submodule: str = "", reference: str = "scorer") -> Any:
    """A suite folder's own scorer package (or one of its modules), imported the way collection imports it, so unit
    tests read the very module objects the run uses: ``import_scorer("suites/bfcl", "checker")``."""
    folder = Path(suite_folder)
    definition_path = folder / "suite.yaml"
    local = _local_scorer(reference, definition_path)
    if local is None:
        raise ImportError(f"{folder} has no scorer {reference!r} (a {reference}.py or {reference}/ package)")
    package = _import_local(local, definition_path)
    return importlib.import_module(f"{package.__name__}.{submodule}") if submodule else package


@dataclass
class LoadedSuite:
    definition: SuiteDefinition
    benchmark: Any
    source: data.DataSource
    cases: list[Case]
    known_defects: dict[str, str] = field(default_factory=dict)
    #: every case id of the suite, also those ``--toolbench-limit`` left out (a replay tells unknown ids by it)
    all_case_ids: frozenset[str] = frozenset()
    #: ``--toolbench-sample``: what was drawn (``run.sampling.Design``); None for a run of every case
    design: Any = None

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def context(self) -> SuiteContext:
        """The context every case of the suite is bound to (``case.context``)."""
        return suite_context(self.definition, self.source)

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
    """Loads each suite at most once per process; keyed by the path of its ``suite.yaml``.

    A suite's local data folder is checked against the sha256 sums of its ``suite.yaml`` (``data.verify``);
    ``data_unverified`` (``--toolbench-data-unverified``) lets a difference through, recorded on the source.
    ``check_first``: paths of the run (``config.args``) whose suites are checked at once, before collection, so
    that a difference is one usage error (exit 4) even under xdist, where the controller never collects; it also
    fills the digest cache that the workers then read. ``hash_cache``: the JSON file remembering digests
    (``CacheLayout.data_hashes`` in a run; None keeps them in memory only). ``downloads``: where the data package
    keeps what it downloads (``CacheLayout.downloads`` in a run)."""

    def __init__(self, registry: Registry, data_dir: str | None, data_origin: str, downloads: data.DownloadFolders,
                 allow_download: bool, limit: int | None, data_dir_hook: Callable[[str], Any] | None = None,
                 data_unverified: bool = False, check_first: Iterable[Path | str] = (),
                 hash_cache: Path | None = None, suite_cache_dir: Path | None = None,
                 suite_options: Mapping[str, Mapping[str, Any]] | None = None, sample: Any = None):
        self.registry = registry
        self.data_dir = data_dir
        self.data_origin = data_origin
        self.downloads = downloads
        self.allow_download = allow_download
        self.limit = limit
        self.sample = sample  # --toolbench-sample: a run.sampling.SampleSpec, or None
        self.data_dir_hook = data_dir_hook
        self.data_unverified = data_unverified
        self.hashes = data.HashCache(hash_cache)
        self.suites = suite_cache.SuiteCache(suite_cache_dir)
        self._suites: dict[Path, LoadedSuite] = {}
        self._plans: dict[Path, _Plan] = {}
        self._definitions: dict[Path, SuiteDefinition] = {}  # parsed once for check_data and collection
        self._named: dict[str, Path] = {}  # suite name -> the suite.yaml that declared it first
        self.suite_options = {name: dict(values) for name, values in (suite_options or {}).items()}
        #: the run's paths (``check_first``): where a model backend reads the suites' prompt declarations
        check_first = tuple(check_first)
        self.paths = tuple(str(path) for path in check_first)
        if check_first:
            self.check_data(check_first)

    def check_data(self, paths: Iterable[Path | str]) -> None:
        """Verify the local data of every suite defined under ``paths`` now (``run.data_check``); a difference is a
        ``UsageProblem``."""
        check_local_data(self, paths)

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

    def _cached_load(self, plan: "_Plan") -> tuple[data.DataSource, list[Case]]:
        """The suite's cases from the loaded-suite cache when nothing they depend on changed, else from its files
        (validated), and then cached."""
        definition, source = plan.definition, plan.source
        if plan.key is not None:
            hit = self.suites.get(definition.name, plan.key, plan.unlisted_unchanged)
            if hit is not None:
                restored = dataclasses.replace(source, info=hit["info"], data_sha256=hit["data_sha256"],
                                               unlisted=hit["unlisted_files"])
                return restored, hit["cases"]
        benchmark = self.registry.benchmark(definition.scorer, plan.definition_path)
        context = suite_context(definition, source)
        with data.recording_reads(enabled=source.kind == "folder") as read:  # to name unlisted files
            run_info = getattr(benchmark, "run_info", None)
            if callable(run_info):
                source = dataclasses.replace(source, info=tuple(sorted(run_info_of(run_info, context).items())))
            cases = load_suite_cases(benchmark, context)
        source = data.seal(source, definition, plan.digests, read, self.hashes)
        if plan.key is not None:
            unlisted = {rel: self.hashes.sha256(source.path / rel) or "" for rel in source.unlisted}
            index = [(case.case_id, case.category, tuple(case.keywords)) for case in cases]
            # stored unbound: the context is this run's, bound again to the cases of every load (see _load)
            unbound = [dataclasses.replace(case, context=None) for case in cases]
            self.suites.put(definition.name, plan.key, {"info": source.info, "data_sha256": source.data_sha256,
                                                        "unlisted_files": source.unlisted, "cases": unbound},
                            unlisted, index=index)
        return source, cases

    def case_index(self, definition_path: Path) -> list[tuple[str, str, tuple[str, ...]]] | None:
        """(case id, category, keywords) of every case (after ``--toolbench-limit``) from the loaded-suite cache,
        without loading the suite; None when the cache cannot vouch for it (the suite is then loaded)."""
        definition_path = Path(definition_path).resolve()
        if definition_path in self._suites:
            return [(c.case_id, c.category, tuple(c.keywords)) for c in self._suites[definition_path].cases]
        try:
            plan = self._plan(definition_path)
            index = self.suites.get_index(plan.definition.name, plan.key, plan.unlisted_unchanged) \
                if plan.key is not None else None
        except (ToolbenchError, OSError):
            return None
        finally:
            self.hashes.save()
        if index is None:
            return None
        rows = [(case_id, category, tuple(keywords)) for case_id, category, keywords
                in _first_per_category(index, self.limit, category=lambda row: row[1])]
        if self.sample is not None:
            try:
                benchmark = self.registry.benchmark(plan.definition.scorer, definition_path)
            except Exception:  # noqa: BLE001 - the suite is then loaded, and reports its problem
                return None
            rows = self._drawn(rows, plan.definition.name, benchmark, lambda row: row[1], lambda row: row[0])[0]
        return rows

    def definition(self, definition_path: Path) -> SuiteDefinition:
        return self._definition(Path(definition_path).resolve())

    def definitions_under(self, paths: Iterable[Path | str]) -> list[SuiteDefinition]:
        """The definitions of every suite under ``paths`` that loads (a broken one is reported by collection)."""
        found = []
        for definition_path in find_definitions(paths):
            try:
                found.append(self._definition(definition_path))
            except (ToolbenchError, OSError):
                continue
        return found

    def needs_network(self, definition_path: Path) -> bool:
        """Whether resolving the suite's data now would go to the network: downloads are allowed, the suite
        declares something to download, and what it needs is neither in the data folder nor in the download cache
        (resolved here with downloads turned off, which touches only local files)."""
        definition_path = Path(definition_path).resolve()
        if definition_path in self._plans or definition_path in self._suites:
            return False
        definition = self._definition(definition_path)
        entries = data.download_entries(definition)
        if not data.downloads_allowed(self.allow_download) or not (
                entries or (definition.data_files and definition.upstream.get("base_url"))):
            return False
        if self.data_dir_hook and self.data_dir_hook(definition.name) is not None:
            return False
        try:
            local = data.resolve(definition, self.data_dir, self.data_origin, self.downloads, False, self.hashes)
        except ToolbenchError:
            return False  # reported when the suite is resolved for real
        finally:
            self.hashes.save()
        return local.kind == "samples" or bool(local.unsettled)

    def definition_name(self, definition_path: Path) -> str:
        return self._definition(Path(definition_path).resolve()).name

    def known_defects(self, definition_path: Path) -> dict[str, str]:
        plan = self._plan(Path(definition_path).resolve())
        return {} if plan.source.is_sample else plan.definition.known_defects()

    def _plan(self, definition_path: Path) -> "_Plan":
        """Everything about a suite that is known without loading it: definition, data source (verified), and the
        loaded-suite cache key."""
        if definition_path in self._plans:
            return self._plans[definition_path]
        if not definition_path.is_file():
            raise DataError(definition_path, "suite definition not found")
        definition = self._definition(definition_path)
        override = self.data_dir_hook(definition.name) if self.data_dir_hook else None
        if override is not None:
            source = data.DataSource(Path(override), "folder", f"{override} (from a conftest hook)")
        else:
            source = data.resolve(definition, self.data_dir, self.data_origin, self.downloads,
                                  self.allow_download, self.hashes)
        # Before parsing: an edited file is reported as a checksum difference, not as whatever it breaks.
        source, digests = data.verify(source, definition, self.hashes, self.data_unverified)
        code = suite_cache.code_sha256(self.registry.scorer_file(definition.scorer, definition_path))
        key = None
        if code is not None:
            depends_on = _data_key(source, definition, digests, self.hashes)
            if definition.name in self.suite_options:  # the loaded cases depend on the overridden settings too
                depends_on["<suite options>"] = json.dumps(self.suite_options[definition.name], sort_keys=True)
            key = self.suites.key(definition_path, source.kind, source.path, depends_on, code)
        plan = self._plans[definition_path] = _Plan(definition_path, definition, source, digests, key, self.hashes)
        return plan

    def _definition(self, definition_path: Path) -> SuiteDefinition:
        definition_path = Path(definition_path).resolve()
        if definition_path not in self._definitions:
            definition = load_definition(definition_path)
            other = self._named.setdefault(definition.name, definition_path)
            if other != definition_path:
                # by_name, the records, the markers and --toolbench-suite-option all key a suite by its name
                raise DataError(definition_path, f"suite name {definition.name!r} is already the name of {other}: "
                                                 f"each suite of a run needs a name of its own", field="name")
            overrides = self.suite_options.get(definition.name)
            if overrides:
                definition = with_options(definition, overrides)
            self._definitions[definition_path] = definition
        return self._definitions[definition_path]

    def _load(self, definition_path: Path) -> LoadedSuite:
        try:
            plan = self._plan(definition_path)
            benchmark = self.registry.benchmark(plan.definition.scorer, definition_path)
            source, cases = self._cached_load(plan)
        finally:
            self.hashes.save()
        definition = plan.definition
        cases = suite_context(definition, source).bind(cases)
        unknown = sorted({c.category for c in cases} - set(definition.categories))
        if unknown:
            raise DataError(definition_path, f"cases of undeclared categories {unknown}", field="categories")
        all_case_ids = frozenset(case.case_id for case in cases)
        cases = _first_per_category(cases, self.limit)
        design = None
        if self.sample is not None:
            cases, design = self._drawn(cases, definition.name, benchmark, lambda c: c.category, lambda c: c.case_id)
        # Known defects name upstream cases; the shipped samples reuse ids for hand-written cases of their own.
        defects = {} if source.is_sample else definition.known_defects()
        return LoadedSuite(definition, benchmark, source, cases, defects, all_case_ids, design)

    def _drawn(self, items: list, suite: str, benchmark: Any, stratum_of: Callable[[Any], str],
               case_id_of: Callable[[Any], str]) -> tuple[list, Any]:
        """``--toolbench-sample``'s stratified draw of ``items`` (cases or index rows alike: the same ids)."""
        unit = sampling.sampling_unit_function(benchmark)
        unit_of = (lambda item: str(unit(case_id_of(item), stratum_of(item)))) if unit else None
        try:
            return sampling.draw(items, self.sample, suite, stratum_of, case_id_of, unit_of)
        except ValueError as error:  # a sampling_unit that joins categories: the suite's own defect
            raise ToolbenchError(str(error)) from None


@dataclass
class _Plan:
    definition_path: Path
    definition: SuiteDefinition
    source: data.DataSource
    digests: dict[str, str]
    key: str | None
    hashes: data.HashCache

    def unlisted_unchanged(self, unlisted: dict[str, str]) -> bool:
        return all(self.hashes.sha256(self.source.path / rel) == sha for rel, sha in unlisted.items())


def _data_key(source: data.DataSource, definition: SuiteDefinition, digests: dict[str, str],
              hashes: data.HashCache) -> dict[str, str]:
    """What the loaded cases depend on in the data, known before loading (see ``suite_cache``)."""
    if source.kind == "folder":
        return {**digests, "<unverified>": ",".join(source.unverified)}
    if source.kind == "download":
        return {rel: digest for rel, (digest, _) in definition.data_files.items()}
    return {"<samples>": data.seal(source, definition, {}, (), hashes).data_sha256}


def _first_per_category(items: list, limit: int | None, category: Callable[[Any], str] = lambda c: c.category
                        ) -> list:
    """The first ``limit`` items of each category (``--toolbench-limit``), for cases or case-index rows alike."""
    if limit is None:
        return items
    taken: dict[str, int] = defaultdict(int)
    kept = []
    for item in items:
        if taken[category(item)] < limit:
            taken[category(item)] += 1
            kept.append(item)
    return kept