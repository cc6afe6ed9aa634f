"""The run context: what a run is set up with (options, catalog, backend, generation cache) and what it learns
on the way that the run header reports (cache notes, pre-generation figures, the selection facts a backend
reports). One per process, held by the plugin's session (``plugin/session.py``); the records live in its
:class:`Ledger`, and the scoring of one case is :func:`pytest_toolbench.run.scoring.score_case`.

It knows no pytest: the plugin hands it plain values (the role, the worker input, the paths to check) and callables
(the hooks that build the backend and name a suite's data folder).

Everywhere in the plugin this object is called ``toolbench`` (``session`` is pytest's).
"""

from __future__ import annotations

import functools

import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .. import __version__ as plugin_version
from .. import backends as backends_module
from ..backends.kind import BackendKind
from ..prompting import rows
from ..prompting.suite_prompts import SuitePrompts
from ..backends.user_simulator import with_user_simulator
from ..contract import aggregates
from ..contract.errors import ToolbenchError
from ..contract.suite import Backend, Case, CaseRecord
from .role import Role
from .sampling import SampleSpec
from .cache import GenerationCache
from .cache_layout import CacheLayout
from .case_request import RequestKeeper
from .catalog import Catalog, Registry
from .requests import Answerer
from .ledger import Ledger
from .scoring import score_case
from .summary import RunSummary, SuiteInput, summarize

if TYPE_CHECKING:
    from .options import RunOptions


class RunContext:
    def __init__(self, options: "RunOptions", kind: type[BackendKind], role: Role, registry: Registry, *,
                 make_backend: Callable[["RunOptions", Catalog, type[BackendKind]], Backend | None], data_dir_hook: Callable[[str], Any] | None = None,
                 check_first: Sequence[Path] = (), worker_input: Mapping[str, Any] | None = None,
                 pytest_version: str = ""):
        """``make_backend(options, catalog, kind)``: builds the run's backend (``pytest_toolbench_make_backend``); ``data_dir_hook``:
        a suite's data folder a conftest names (``pytest_toolbench_data_dir``); ``check_first``: the paths whose local
        data are verified now (the run's paths; none on a worker); ``worker_input``: what the xdist controller handed
        this worker; ``pytest_version``: for the run header."""
        self.options = options
        self.kind = kind  # the backend kind: what the core asks instead of testing the backend's name
        self.role = role
        self.registry = registry
        data, layout = options.data, CacheLayout.at(options.cache.cache_dir)
        self.catalog = Catalog(
            self.registry, data.data_dir, data.data_dir_origin,
            downloads=layout.downloads, allow_download=data.download, limit=data.limit,
            data_dir_hook=data_dir_hook,
            data_unverified=data.data_unverified,
            hash_cache=layout.data_hashes,
            suite_cache_dir=layout.suites,
            suite_options=data.suite_options,
            sample=SampleSpec(**data.sample) if data.sample else None,
            # Check the run's local data before collection (a difference: one usage error); workers need not.
            check_first=check_first)
        self.make_backend = make_backend
        self.worker_input = dict(worker_input or {})
        self.pytest_version = pytest_version
        self.ledger = Ledger()
        #: what the run header reports besides the options: filled as the run goes
        self.selection_facts: dict[str, Any] | None = None  # a backend's report on the selection (replay coverage)
        self.cache_notes: list[str] = []  # what happened to the generation cache (moved aside, not writable, ...)
        self.pregeneration: dict[str, Any] | None = None
        self.interrupted: str | None = None  # Ctrl-C stopped the run: when ("during generation, ...")
        self.model_note: str | None = None  # how the model was found, when worth saying (plugin.check_model)
        self.started = time.time()
        self._backend: Backend | None = None
        #: the BFCL row the closed backend prompted as (an xdist controller closes its engine before the run
        #: header is written, so the header reads it from here)
        self._closed_row: Any = None
        self._cache: GenerationCache | None = None
        self._fingerprint: dict[str, Any] | None = None
        self._answerer: Answerer | None = None

    # -- backend and cache -------------------------------------------------------------------------------------
    @property
    def uses_engine(self) -> bool:
        """Answers are pre-generated once, by the process that owns the backend, into the generation cache."""
        return self.kind.pregenerates

    def backend(self) -> Backend:
        if self._backend is None:
            name = self.options.backend
            built = self.make_backend(self.options, self.catalog, self.kind)
            if built is None:
                raise ToolbenchError(f"no implementation of pytest_toolbench_make_backend built backend {name!r}")
            self._backend = with_user_simulator(backends_module.checked(built, name), self.options)
        return self._backend

    def fingerprint(self) -> dict[str, Any]:
        if self._fingerprint is None:
            if self.role == "worker" and self.uses_engine:
                self._fingerprint = self.worker_input["fingerprint"]
            else:
                fingerprint = dict(self.backend().fingerprint())
                fingerprint.setdefault("mode", self.options.generation.mode)
                fingerprint.setdefault("sampling", self.options.sampling())
                self._fingerprint = fingerprint
        return self._fingerprint

    def cache(self) -> GenerationCache:
        """Workers and offline runs only read. A corrupt file is moved aside (one note) where generation can
        replace it; offline it is one ``CacheError``; a worker ignores it (its controller reported it)."""
        if self._cache is None:
            worker, cache_options = self.role == "worker", self.options.cache
            on_corrupt = "raise" if cache_options.offline else "ignore" if worker else "move"
            self._cache = GenerationCache(cache_options.cache_dir, readonly=worker or cache_options.offline,
                                          on_corrupt=on_corrupt)
            if worker and self.uses_engine:
                # what the controller generated but could not write to the cache file (see pregenerate)
                folder = self.worker_input.get("manifest_dir")
                if folder:
                    self._cache.add_overlay(CacheLayout.unsaved(folder))
            # the user-facing lines about the cache; kept here (and across a reopening), as the cache itself is
            # closed after generation on an xdist controller
            self._cache.notes[:0] = self.cache_notes
            self.cache_notes = self._cache.notes
        return self._cache

    def answerer(self) -> Answerer:
        if self._answerer is None:
            if self.uses_engine:
                offline = self.options.cache.offline
                owns_engine = self.role != "worker" and not offline
                self._answerer = Answerer(self.backend() if owns_engine else None, self.cache(),
                                          self.fingerprint(), offline=offline)
            else:
                self._answerer = Answerer(self.backend(), None, self.fingerprint())
        return self._answerer

    def _prompts_as_row(self) -> bool:
        """Whether a selected suite is prompted with an official handler (its suite.yaml's generation.prompt), so
        the run header names the leaderboard row (under the handler library's key)."""
        return bool(SuitePrompts.of_run(self.catalog).handler_suites & set(self.ledger.selected_suites))

    def _row_choice(self) -> Any:
        """Which leaderboard row the model was prompted as (or the files decoded as), and how: the backend's own answer,
        else the kind's from the options (gold and replay: no backend on an xdist controller); None when none."""
        row_choice = getattr(self._backend, "row_choice", None)
        if not callable(row_choice):
            row_choice = functools.partial(self.kind.row_choice, self.options)
        try:
            return row_choice()
        except ToolbenchError:
            return None

    def close(self) -> None:
        if self._backend is not None:
            if self._prompts_as_row():
                self._closed_row = self._row_choice()
            self._backend.close()
            self._backend = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    # -- scoring -----------------------------------------------------------------------------------------------
    def score(self, case: Case, nodeid: str | None = None, sample: int | None = None) -> CaseRecord:
        """The case's record (see :func:`~pytest_toolbench.run.scoring.score_case`)."""
        return score_case(self.catalog.by_name(case.suite), case, self.answerer(), self.options.generation.max_tokens,
                          nodeid, sample)

    def score_keeping_request(self, case: Case, nodeid: str | None = None,
                              sample: int | None = None) -> tuple[CaseRecord, dict[str, Any] | None]:
        """The case's record, and the request it was asked with as plain data (for the HTML report's row; see
        ``run/case_request.py``)."""
        suite = self.catalog.by_name(case.suite)
        keeper = RequestKeeper(self.answerer())
        record = score_case(suite, case, keeper, self.options.generation.max_tokens, nodeid, sample)
        return record, keeper.view(suite.benchmark, case)

    # -- the summary ---------------------------------------------------------------------------------------------
    def summary(self) -> RunSummary:
        """The run's summary from the ledger's records, each suite aggregated by its own benchmark (once, at the end
        of the session)."""
        benchmarks: dict[str, Any] = {}
        for record in self.ledger.records:
            if record.suite not in benchmarks:
                facts = self.ledger.suite_facts(record.suite)
                benchmark = self.registry.benchmark(facts.scorer, Path(facts.definition))
                design = aggregates.load_or_problem(Path(facts.definition).parent / aggregates.DECLARATION)
                benchmarks[record.suite] = SuiteInput(benchmark, facts.title, facts.data_source, facts.available,
                                                      design)
        return summarize(self.ledger.records, benchmarks, self.header())

    # -- the backend's report on the selection -----------------------------------------------------------------
    def report_selection(self, write_line) -> None:
        """Once the selection is known, a backend that reports on it (``kind.reports_selection``: replay's problems
        and coverage) prints its lines; the facts are kept for the run header."""
        if not self.kind.reports_selection or not self.ledger.expected:
            return
        backend = self.backend()
        for facts in self.ledger.selected_suites.values():
            self.catalog.load(Path(facts.definition))
        self.selection_facts = self.kind.report_selection(backend, self.ledger.selected_cases(), write_line)

    # -- header ------------------------------------------------------------------------------------------------
    def sampling_section(self) -> dict[str, Any]:
        """The options as asked (``temperature`` None: each suite's own; ``max_tokens`` None: each suite's own) and,
        under ``sent``, what the backend's requests of this run actually carried, per suite (see
        ``prompting/sampling_record.py``); absent when nothing was sent (every answer came from the cache)."""
        section = dict(self.options.sampling())
        backend_stats = (self.pregeneration or {}).get("backend")
        sent = backend_stats.get("sampling_sent") if isinstance(backend_stats, dict) else None
        if sent:
            section["sent"] = sent
        return section

    def header(self) -> dict[str, Any]:
        options, data, generation = self.options, self.options.data, self.options.generation
        header: dict[str, Any] = {
            "backend": options.backend, "model": options.model, "mode": generation.mode,
            "replay": self.kind.replayed_path(options), "data_dir": data.data_dir,
            "limit": data.limit, **({"sample": data.sample} if data.sample else {}),
            "sampling": self.sampling_section(),
            **({"repeat": generation.repeat} if generation.repeat > 1 else {}),
            "python": platform.python_version(), "pytest": self.pytest_version,
            "plugin": plugin_version, "started": self.started, "finished": time.time(),
        }
        if self.ledger.expected:
            # what each suite was scored against: the data's hash, and any files that differ from suite.yaml
            header["data"] = {name: {key: facts.data_source.get(key) for key in
                                     ("kind", "path", "data_sha256", "unverified", "unlisted")}
                              for name, facts in sorted(self.ledger.selected_suites.items())}
            header["data_unverified_allowed"] = data.data_unverified
        header.update(self.kind.header_fields(options))
        if data.suite_options:
            header["suite_options"] = data.suite_options
        if self.cache_notes:
            header["cache_notes"] = list(self.cache_notes)
        if self.selection_facts:
            header.update(self.selection_facts)
        wall = header["finished"] - self.started
        generation_seconds = (self.pregeneration or {}).get("seconds") or 0.0
        header["timing"] = {"wall_s": round(wall, 3), "generation_s": round(generation_seconds, 3),
                            "collection_and_scoring_s": round(wall - generation_seconds, 3)}
        if self.model_note:
            header["model_source"] = self.model_note
        if self._prompts_as_row():
            choice = self._row_choice() or self._closed_row
            key = rows.header_key(SuitePrompts.of_run(self.catalog))
            if choice is not None and key:
                header[key] = choice.to_json()
        if self.interrupted:
            header["interrupted"] = self.interrupted
        if self.uses_engine:
            try:
                header["fingerprint"] = self.fingerprint()
            except ToolbenchError as error:  # already reported once, where the run stopped; no second traceback
                header["fingerprint"] = None
                header["fingerprint_error"] = str(error)
            header["generation"] = self.pregeneration
            if any("needs_user_model" in record.keywords for record in self.ledger.records):
                header["user_simulator"] = (
                    f"{generation.user_model} at {generation.user_base_url}" if generation.user_model else
                    "the run's own model: NOT comparable with published numbers (upstream uses GPT-4o)")
        return header
