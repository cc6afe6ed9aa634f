"""The run's state: options, catalog, backend, cache and the per-case records (one object, on ``config.stash``)."""

from __future__ import annotations

import dataclasses
import platform
import time
from pathlib import Path
from typing import Any

import pytest

from .. import backends as backends_module
from . import records
from ..backends import ENGINE_BACKENDS, MissingOutput
from .cache import GenerationCache
from .cache_layout import CacheLayout
from .catalog import Catalog, LoadedSuite, Registry
from ..contract.errors import ToolbenchError
from .generation import Answerer, Unavailable, pregenerate, run_case
from ..plugin.options import RunOptions
from ..contract.suite import NOT_RUN, NOT_SCORED, Case, Generation, Verdict

#: Error categories the core gives (every other one is the benchmark's own).
MISSING_OUTPUT = "missing_output"
SCORER_ERROR = "scorer_error"

REPLAY_LINES_SHOWN = 20


SESSION_KEY = pytest.StashKey["ToolbenchSession"]()


def get_session(config: pytest.Config) -> "ToolbenchSession | None":
    return config.stash.get(SESSION_KEY, None)


class ToolbenchSession:
    def __init__(self, config: pytest.Config, options: RunOptions, role: str, registry: Registry):
        self.config = config
        self.options = options
        self.role = role  # "single", "controller" or "worker"
        self.registry = registry
        layout = CacheLayout.at(options.cache_dir)
        self.catalog = Catalog(
            self.registry, options.data_dir, options.data_dir_origin,
            downloads=layout.downloads, allow_download=options.download, limit=options.limit,
            data_dir_hook=lambda name: config.hook.pytest_toolbench_data_dir(config=config, suite=name),
            data_unverified=options.data_unverified,
            hash_cache=layout.data_hashes,
            suite_cache_dir=layout.suites,
            suite_options=options.suite_options,
            # Check the run's local data before collection (a difference: one usage error); workers need not.
            check_first=() if role == "worker" else run_paths(config))
        self.records: list[records.CaseRecord] = []
        self.skipped: set[str] = set()  # node ids of skipped benchmark items: no verdict expected
        self.expected: dict[str, Any] | None = None  # the selected cases (a manifest), to find those never scored
        self.replay_facts: dict[str, Any] | None = None
        self.cache_notes: list[str] = []  # what happened to the generation cache (moved aside, not writable, ...)
        self.pregeneration: dict[str, Any] | None = None
        self.model_note: str | None = None  # how the model was found, when worth saying (plugin.check_model)
        self.summary: Any = None  # the RunSummary, built once at session finish
        self._backend: Any = None
        self._cache: GenerationCache | None = None
        self._fingerprint: dict[str, Any] | None = None
        self._answerer: Answerer | None = None
        self.started = time.time()

    # -- backend and cache -------------------------------------------------------------------------------------
    @property
    def uses_engine(self) -> bool:
        return self.options.backend in ENGINE_BACKENDS or self.options.backend in self.registry.engine_backends

    def backend(self) -> Any:
        if self._backend is None:
            name = self.options.backend
            built = self.config.hook.pytest_toolbench_make_backend(config=self.config, options=self.options,
                                                                   catalog=self.catalog)
            if built is None:
                raise ToolbenchError(f"no implementation of pytest_toolbench_make_backend built backend {name!r}")
            self._backend = backends_module.with_user_simulator(backends_module.checked(built, name), self.options)
        return self._backend

    def fingerprint(self) -> dict[str, Any]:
        if self._fingerprint is None:
            if self.role == "worker" and self.uses_engine:
                self._fingerprint = self.config.workerinput["toolbench"]["fingerprint"]
            else:
                fingerprint = dict(self.backend().fingerprint())
                fingerprint.setdefault("mode", self.options.mode)
                fingerprint.setdefault("sampling", self.options.sampling())
                self._fingerprint = fingerprint
        return self._fingerprint

    def cache(self) -> GenerationCache:
        """Workers and offline runs only read. A corrupt file is moved aside (one note) where generation can
        replace it; offline it is one ``CacheError``; a worker ignores it (its controller reported it)."""
        if self._cache is None:
            worker = self.role == "worker"
            on_corrupt = "raise" if self.options.offline else "ignore" if worker else "move"
            self._cache = GenerationCache(self.options.cache_dir, readonly=worker or self.options.offline,
                                          on_corrupt=on_corrupt)
            if worker and self.uses_engine:
                # what the controller generated but could not write to the cache file (see pregenerate)
                folder = self.config.workerinput.get("toolbench", {}).get("manifest_dir")
                if folder:
                    self._cache.add_overlay(CacheLayout.unsaved(folder))
            # the user-facing lines about the cache; kept here (and across a reopening), as the cache itself is
            # closed after generation on an xdist controller
            self._cache.notes[:0] = getattr(self, "cache_notes", [])
            self.cache_notes = self._cache.notes
        return self._cache

    def answerer(self) -> Answerer:
        if self._answerer is None:
            if self.uses_engine:
                owns_engine = self.role != "worker" and not self.options.offline
                self._answerer = Answerer(self.backend() if owns_engine else None, self.cache(),
                                          self.fingerprint(), offline=self.options.offline)
            else:
                self._answerer = Answerer(self.backend(), None, self.fingerprint())
        return self._answerer

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    # -- generation --------------------------------------------------------------------------------------------
    def pregenerate(self, entries: list[tuple[LoadedSuite, Case]], write_line, status=None) -> None:
        """Generate every missing answer once, before any test runs (engine backends only)."""
        if not self.uses_engine or not entries:
            return
        suites = sorted({suite.name for suite, _ in entries})
        # Opened first, before any engine starts: a corrupt file is moved aside now, or (offline) is one error.
        cache = self.cache()
        shown = 0

        def show_notes() -> None:
            nonlocal shown
            for note in cache.notes[shown:]:
                write_line(f"toolbench: {note}")
            shown = len(cache.notes)

        show_notes()
        if self.options.offline:
            write_line(f"toolbench: --toolbench-offline: {len(entries)} cases of {', '.join(suites)} "
                       "will be scored from the cache only")
            return
        write_line(f"toolbench: pre-generating answers for {len(entries)} cases of {', '.join(suites)} "
                   f"with {self.options.backend} ({self.options.model})")
        try:
            stats = pregenerate(entries, self.backend(), cache, self.fingerprint(), self.options.max_tokens,
                                progress=lambda line: write_line(f"toolbench: {line}"),
                                status=(lambda line: status(f"toolbench: {line}")) if status else None)
        finally:
            show_notes()
        self.pregeneration = stats.to_json()
        unsaved = len(cache.unsaved)
        if unsaved:
            self.pregeneration["unsaved"] = unsaved
            xdist = self.config.pluginmanager.get_plugin("toolbench-xdist")
            if self.role == "controller" and xdist is not None:
                # The workers score, and cannot see this process's memory: hand them a file of their own.
                cache.save_unsaved(CacheLayout.unsaved(xdist.manifest_dir))
                show_notes()
        rounds = f" in {stats.rounds} rounds" if stats.rounds else ""
        write_line(f"toolbench: {stats.generated} generated, {stats.cached} from cache{rounds}, "
                   f"{stats.seconds:.1f}s" + (f"; {unsaved} kept in memory only, not saved to {cache.path}"
                                              if unsaved else ""))

    # -- scoring -----------------------------------------------------------------------------------------------
    def score(self, case: Case) -> tuple[Verdict, records.CaseRecord]:
        """Score one case. Never raises for anything the model or a scorer did: a missing output, an output that
        cannot be read and a scorer exception are each this case's failure, counted in the figures."""
        suite = self.catalog.by_name(case.suite)
        try:
            generation = run_case(case, suite, self.answerer(), self.options.max_tokens)
        except MissingOutput as missing:  # no saved line, a line that cannot be read, an offline cache miss
            verdict = Verdict(passed=False, error_type=MISSING_OUTPUT, explanation=str(missing),
                              counts=no_output_counts(suite, case) if missing.in_denominators else {},
                              labels={"outcome": MISSING_OUTPUT})
            return verdict, self._record(suite, case, verdict, output="", finish_reason=None)
        except Unavailable as reason:  # skipped with the reason, counted as not passed (like any not_scored case)
            verdict = Verdict(passed=False, error_type=NOT_SCORED, explanation=str(reason),
                              labels={"outcome": NOT_SCORED})
            return verdict, self._record(suite, case, verdict, output="", finish_reason=None)
        except Exception as error:  # reading this case's output failed: its failure, not a lost case
            verdict = scorer_error(error, "reading the output")
            verdict.counts = no_output_counts(suite, case)
            return verdict, self._record(suite, case, verdict, output="", finish_reason=None)
        try:
            verdict = suite.benchmark.score(case, generation)
        except Exception as error:  # RecursionError on absurd nesting, a scorer bug, ...
            verdict = scorer_error(error, "scoring")
            verdict.counts = no_output_counts(suite, case)
        if generation.truncated:
            verdict.labels.setdefault("truncated", "yes")
        return verdict, self._record(suite, case, verdict, generation.text, generation.finish_reason)

    def _record(self, suite: LoadedSuite, case: Case, verdict: Verdict, output: str,
                finish_reason: str | None) -> records.CaseRecord:
        record = {
            "suite": case.suite, "case_id": case.case_id, "category": case.category,
            "keywords": list(case.keywords), "order": _order(suite, case), "passed": verdict.passed,
            "error_type": None if verdict.passed else verdict.error_type,
            "explanation": verdict.explanation,
            "decoded": verdict.decoded, "expected": verdict.expected, "counts": verdict.counts,
            "labels": verdict.labels, "output": output, "finish_reason": finish_reason,
            "known_defect": suite.known_defects.get(case.case_id),
        }
        try:
            # Made safe now: a safe record is a fixed point of the JSON transport, so what a worker sends is exactly
            # what a single process keeps (tests/test_nothing_lost.py compares serial and -n 2 records).
            return records.CaseRecord.from_json(records.safe_record(record))
        except Exception as error:  # the policy is total; this guards the case against a bug in it
            fallback = {key: record[key] for key in ("suite", "case_id", "category", "order", "known_defect")}
            fallback.update(keywords=list(case.keywords), passed=False, error_type=SCORER_ERROR,
                            explanation=f"the record could not be serialised: {type(error).__name__}",
                            decoded=None, expected=None, counts={}, labels={}, output="", finish_reason=None)
            return records.CaseRecord.from_json(records.safe_record(fallback))

    # -- cases without a verdict -------------------------------------------------------------------------------
    def manifest(self, entries) -> dict[str, Any]:
        """The selected cases as plain JSON (it crosses from an xdist worker to the controller): suite facts once,
        then one row per case, enough to count and name a case that never reaches its verdict."""
        suites: dict[str, Any] = {}
        cases = []
        for nodeid, suite, case in entries:
            if suite.name not in suites:
                suites[suite.name] = {"scorer": suite.definition.scorer, "definition": str(suite.definition.path),
                                      "title": suite.definition.title, "data_source": suite.source.to_json(),
                                      "available": _available(suite)}
            cases.append([nodeid, suite.name, case.case_id, case.category, list(case.keywords), _order(suite, case)])
        return {"suites": suites, "cases": cases}

    def expect(self, manifest: dict[str, Any]) -> None:
        self.expected = manifest

    def suite_facts(self, name: str) -> dict[str, Any]:
        """What a suite's records share (scorer, definition, title, data source): kept once per suite, from the
        selection's manifest, instead of on every case record."""
        return (self.expected or {}).get("suites", {}).get(name) or {}

    def not_run_records(self) -> list[records.CaseRecord]:
        """A failed ``not_run`` record for each selected, unskipped case that has no verdict at session end (a
        crashed worker, a setup error, an interrupted run): counted in the figures and named, never left out."""
        if not self.expected:
            return []
        scored = {record.get("nodeid") for record in self.records}
        missing = []
        for nodeid, suite, case_id, category, keywords, order in self.expected["cases"]:
            if nodeid in scored or nodeid in self.skipped:
                continue
            missing.append(records.CaseRecord(
                suite=suite, case_id=case_id, category=category, keywords=tuple(keywords), order=order,
                passed=False, error_type=NOT_RUN,
                explanation="no verdict: the test never reached its scorer (a crashed xdist worker, a setup error "
                            "or an interrupted run)",
                labels={"outcome": NOT_RUN}, nodeid=nodeid))
        return [dataclasses.replace(record, message=fail_message(record)) for record in missing]

    # -- replay diagnostics ------------------------------------------------------------------------------------
    def report_replay(self, write_line) -> None:
        """Once the selection is known: the replay files' problems (bad lines by file and line, unknown and
        duplicate ids, files in no known layout) and, per category, how many selected cases have no saved output.
        Shown at the start of the run and kept for the run header."""
        if self.options.backend != "replay" or not self.expected:
            return
        backend = self.backend()
        for facts in self.expected["suites"].values():
            self.catalog.load(Path(facts["definition"]))
        cases = [Case(case_id, category, {}, suite=suite) for _, suite, case_id, category, *_ in self.expected["cases"]]
        coverage = backend.coverage(cases)
        problems = [records.safe_text(line, 2000) for line in backend.problems()]
        without = {suite: {category: {"selected": selected, "without_output": missing}
                           for category, (selected, missing) in sorted(table.items())}
                   for suite, table in sorted(coverage.items())}
        self.replay_facts = {"problems": problems, "coverage": without}
        for line in problems[:REPLAY_LINES_SHOWN]:
            write_line(f"toolbench: replay: {line}")
        if len(problems) > REPLAY_LINES_SHOWN:
            write_line(f"toolbench: replay: ... and {len(problems) - REPLAY_LINES_SHOWN} more problems "
                       "(all of them in the --toolbench-json header)")
        for suite, table in without.items():
            gaps = [f"{category} {row['without_output']}/{row['selected']}" for category, row in table.items()
                    if row["without_output"]]
            if gaps:
                write_line(f"toolbench: replay: {suite}: selected cases without a saved output (scored "
                           f"missing_output): {', '.join(gaps)}")

    # -- header ------------------------------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        header: dict[str, Any] = {
            "backend": self.options.backend, "model": self.options.model, "mode": self.options.mode,
            "replay": self.options.replay, "data_dir": self.options.data_dir,
            "limit": self.options.limit, "sampling": self.options.sampling(),
            "python": platform.python_version(), "pytest": pytest.__version__,
            "plugin": _plugin_version(), "started": self.started, "finished": time.time(),
        }
        if self.expected:
            # what each suite was scored against: the data's hash, and any files that differ from suite.yaml
            header["data"] = {name: {key: facts["data_source"].get(key) for key in
                                     ("kind", "path", "data_sha256", "unverified", "unlisted")}
                              for name, facts in sorted(self.expected["suites"].items())}
            header["data_unverified_allowed"] = self.options.data_unverified
        if self.options.backend == "replay":
            # --toolbench-replay-mode: how BFCL's reader decodes the files (fc, prompting, or decided per file)
            header["replay_mode"] = getattr(self.options, "replay_mode", None) or "per file"
        if self.options.suite_options:
            header["suite_options"] = self.options.suite_options
        if self.cache_notes:
            header["cache_notes"] = list(self.cache_notes)
        if self.replay_facts is not None:
            header["replay_problems"] = self.replay_facts["problems"]
            header["replay_coverage"] = self.replay_facts["coverage"]
        wall = header["finished"] - self.started
        generation_seconds = (self.pregeneration or {}).get("seconds") or 0.0
        header["timing"] = {"wall_s": round(wall, 3), "generation_s": round(generation_seconds, 3),
                            "collection_and_scoring_s": round(wall - generation_seconds, 3)}
        if self.model_note:
            header["model_source"] = self.model_note
        if self.uses_engine:
            header["fingerprint"] = self.fingerprint()
            header["generation"] = self.pregeneration
            if any("needs_user_model" in record.get("keywords", ()) for record in self.records):
                header["user_simulator"] = (
                    f"{self.options.user_model} at {self.options.user_base_url}" if self.options.user_model else
                    "the run's own model: NOT comparable with published numbers (upstream uses GPT-4o)")
        return header


def _available(suite: LoadedSuite) -> dict[str, Any]:
    """What the suite has in this run's data (after ``--toolbench-limit``): the selection is measured against it."""
    by_category: dict[str, int] = {}
    for case in suite.cases:
        by_category[case.category] = by_category.get(case.category, 0) + 1
    return {"cases": len(suite.cases), "by_category": by_category}


def run_paths(config: pytest.Config) -> list[Path]:
    """The files and folders the run collects from (``config.args``; a ``--pyargs`` package name as its folder)."""
    paths = []
    for arg in config.args:
        given = arg.split("::", 1)[0]
        path = config.invocation_params.dir / given
        if not path.exists() and config.getoption("pyargs", False):
            import importlib.util

            try:
                spec = importlib.util.find_spec(given)
            except (ImportError, ValueError):
                spec = None
            if spec is not None and spec.submodule_search_locations:
                path = Path(list(spec.submodule_search_locations)[0])
            elif spec is not None and spec.origin:
                path = Path(spec.origin)
        paths.append(path)
    return paths


def _order(suite: LoadedSuite, case: Case) -> int:
    index = getattr(suite, "_order_index", None)
    if index is None:
        index = {c.case_id: i for i, c in enumerate(suite.cases)}
        suite._order_index = index  # type: ignore[attr-defined]
    return index[case.case_id]


def _plugin_version() -> str:
    from .. import __version__

    return __version__


def no_output_counts(suite: LoadedSuite, case: Case) -> dict[str, float]:
    """The per-case counts of a case that has no usable output (``missing_output``, ``scorer_error``): those an
    empty answer gets, so that the case stays in every denominator a suite sums from counts (NesTools' Format and
    Tree, micro P/R over gold items) instead of silently dropping out of it. The case itself fails whatever the
    empty answer would have scored."""
    try:
        return dict(suite.benchmark.score(case, Generation(text="")).counts)
    except Exception:  # noqa: BLE001 - the counts serve the denominators; the verdict stands without them
        return {}


def scorer_error(error: BaseException, stage: str) -> Verdict:
    message = records.safe_text(f"{type(error).__name__}: {error}", 2000)
    return Verdict(passed=False, error_type=SCORER_ERROR, explanation=f"{stage} raised {message}",
                   labels={"outcome": SCORER_ERROR})


def fail_message(record: records.CaseRecord) -> str:
    """The assertion text, from the safe record (so it can cross to the xdist controller whatever the output); the
    record's ``message``. A case that is not scored is skipped with ``not scored: <reason>``; a case with no verdict
    (``not_run``) ran no test, and its message is its error type and explanation."""
    if record.get("error_type") == NOT_SCORED:
        return records.safe_text(f"not scored: {record.get('explanation', '')}", records.MESSAGE_LIMIT)
    if record.get("error_type") == NOT_RUN:
        return records.safe_text(f"{NOT_RUN}: {record.get('explanation', '')}", records.MESSAGE_LIMIT)
    output = record.get("output") or ""
    shown = output if len(output) <= 2000 else output[:2000] + f"... [{len(output)} characters]"
    lines = [f"{record.get('error_type') or 'failed'}: {record.get('explanation', '')}".rstrip(), "",
             f"model output: {shown!r}"]
    return records.safe_text("\n".join(lines), records.MESSAGE_LIMIT)


def load_error(error: ToolbenchError) -> str:
    return f"pytest-toolbench: {error}"
