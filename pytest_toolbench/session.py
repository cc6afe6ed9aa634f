"""The run's state: options, catalog, backend, cache and the per-case records (one object, on ``config.stash``)."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

import pytest

from . import backends as backends_module
from .backends import ENGINE_BACKENDS, MissingOutput
from .cache import GenerationCache
from .catalog import Catalog, LoadedSuite, Registry
from .errors import ToolbenchError
from .generation import Answerer, pregenerate, run_case
from .options import RunOptions
from .suite import Case, Verdict

EXPLANATION_LIMIT = 20_000


class ToolbenchSession:
    def __init__(self, config: pytest.Config, options: RunOptions, role: str, registry: Registry):
        self.config = config
        self.options = options
        self.role = role  # "single", "controller" or "worker"
        self.registry = registry
        self.catalog = Catalog(
            self.registry, options.data_dir, options.data_dir_origin,
            download_root=Path(options.cache_dir) / "data", allow_download=options.download, limit=options.limit,
            data_dir_hook=lambda name: config.hook.pytest_toolbench_data_dir(config=config, suite=name))
        self.records: list[dict[str, Any]] = []
        self.pregeneration: dict[str, Any] | None = None
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
            self._backend = backends_module.make_backend(self.options, self.catalog, self.registry.backends)
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
        if self._cache is None:
            readonly = self.role == "worker"
            self._cache = GenerationCache(self.options.cache_dir, readonly=readonly)
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
    def pregenerate(self, entries: list[tuple[LoadedSuite, Case]], write_line) -> None:
        """Generate every missing answer once, before any test runs (engine backends only)."""
        if not self.uses_engine or not entries:
            return
        suites = sorted({suite.name for suite, _ in entries})
        if self.options.offline:
            write_line(f"toolbench: --toolbench-offline: {len(entries)} cases of {', '.join(suites)} "
                       "will be scored from the cache only")
            return
        write_line(f"toolbench: pre-generating answers for {len(entries)} cases of {', '.join(suites)} "
                   f"with {self.options.backend} ({self.options.model})")
        stats = pregenerate(entries, self.backend(), self.cache(), self.fingerprint(), self.options.max_tokens,
                            progress=lambda line: write_line(f"toolbench: {line}"))
        self.pregeneration = stats.to_json()
        write_line(f"toolbench: {stats.generated} generated, {stats.cached} from cache, "
                   f"{stats.seconds:.1f}s")

    # -- scoring -----------------------------------------------------------------------------------------------
    def score(self, case: Case) -> tuple[Verdict, dict[str, Any]]:
        suite = self.catalog.by_name(case.suite)
        try:
            generation = run_case(case, suite, self.answerer(), self.options.max_tokens)
        except MissingOutput as missing:
            verdict = Verdict(passed=False, error_type="missing_output", explanation=str(missing))
            return verdict, self._record(suite, case, verdict, output="", finish_reason=None)
        verdict = suite.benchmark.score(case, generation)
        if generation.truncated:
            verdict.labels.setdefault("truncated", "yes")
        return verdict, self._record(suite, case, verdict, generation.text, generation.finish_reason)

    def _record(self, suite: LoadedSuite, case: Case, verdict: Verdict, output: str,
                finish_reason: str | None) -> dict[str, Any]:
        record = {
            "suite": case.suite, "case_id": case.case_id, "category": case.category,
            "keywords": list(case.keywords), "order": _order(suite, case), "passed": verdict.passed, "error_type": None if verdict.passed else
            verdict.error_type, "explanation": verdict.explanation[:EXPLANATION_LIMIT],
            "decoded": verdict.decoded, "expected": verdict.expected, "counts": verdict.counts,
            "labels": verdict.labels, "output": output, "finish_reason": finish_reason,
            "data_source": suite.source.to_json(), "scorer": suite.definition.scorer,
            "definition": str(suite.definition.path), "title": suite.definition.title,
        }
        # Round-trip through JSON now, so what a worker sends is exactly what a single process keeps.
        return json.loads(json.dumps(record, ensure_ascii=False, default=repr))

    # -- header ------------------------------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        header: dict[str, Any] = {
            "backend": self.options.backend, "model": self.options.model, "mode": self.options.mode,
            "replay": self.options.replay, "data_dir": self.options.data_dir,
            "limit": self.options.limit, "sampling": self.options.sampling(),
            "python": platform.python_version(), "pytest": pytest.__version__,
            "plugin": _plugin_version(), "started": self.started, "finished": time.time(),
        }
        wall = header["finished"] - self.started
        generation_seconds = (self.pregeneration or {}).get("seconds") or 0.0
        header["timing"] = {"wall_s": round(wall, 3), "generation_s": round(generation_seconds, 3),
                            "collection_and_scoring_s": round(wall - generation_seconds, 3)}
        if self.uses_engine:
            header["fingerprint"] = self.fingerprint()
            header["generation"] = self.pregeneration
            if any("needs_user_model" in record.get("keywords", ()) for record in self.records):
                header["user_simulator"] = (
                    f"{self.options.user_model} at {self.options.user_base_url}" if self.options.user_model else
                    "the run's own model: NOT comparable with published numbers (upstream uses GPT-4o)")
        return header


def _order(suite: LoadedSuite, case: Case) -> int:
    index = getattr(suite, "_order_index", None)
    if index is None:
        index = {c.case_id: i for i, c in enumerate(suite.cases)}
        suite._order_index = index  # type: ignore[attr-defined]
    return index[case.case_id]


def _plugin_version() -> str:
    from . import __version__

    return __version__


def fail_message(verdict: Verdict, output: str) -> str:
    shown = output if len(output) <= 2000 else output[:2000] + f"... [{len(output)} characters]"
    lines = [f"{verdict.error_type or 'failed'}: {verdict.explanation}".rstrip(), "", f"model output: {shown!r}"]
    return "\n".join(lines)


def load_error(error: ToolbenchError) -> str:
    return f"pytest-toolbench: {error}"
