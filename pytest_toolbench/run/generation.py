"""Pre-generation: batched, on the engine's owner, before the first test.

It takes every selected case, drops those already cached, sorts the rest longest-first (OOMs surface early, ETAs
are upper bounds) and hands them to the backend in one call; the backend reports finished chunks, and each chunk is
committed to the cache at once (``run.batches``). Interactive suites run without rounds on a backend that takes
requests while it runs (a :class:`~pytest_toolbench.contract.engine.StreamingBackend`: each conversation's next
request is sent as soon as its previous answer has arrived and its tools have run), else in step-synchronous rounds
(``run.conversations``). What the backend offers besides ``generate`` is read through the protocols of
``contract.engine``, never by probing names.

The rest of the concern lives beside it: ``run.requests`` (a case's request, the answerer, a case's final output in
the tests), ``run.conversations``, ``run.batches`` and ``run.progress`` (the progress meter, the stop flags, the
pre-generation's figures and the runs remembered in the cache folder).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from ..contract.engine import StartableBackend, StatsBackend, StreamingBackend, offers
from ..contract.suite import Case, Task
from .batches import generate_missing, start_backend
from .cache import GenerationCache, request_key
from .conversations import converse, run_rounds
from .progress import PregenerationStats
from .requests import converses, finalize_request, suite_generation, unavailable


def pregenerate(entries: Sequence[tuple[Any, Case]], backend: Any, cache: GenerationCache,
                fingerprint: dict[str, Any], max_tokens: int | None,
                progress: Callable[[str], None] = lambda line: None,
                status: Callable[[str], None] | None = None) -> PregenerationStats:
    """Generate every missing answer for ``entries`` (loaded suite, case[, sample index]: the sample 0 when not
    given; ``--toolbench-repeat``'s samples of an interactive case are separate conversations) into ``cache``.

    ``progress`` gets lines to keep; ``status`` (a terminal) the one updating progress line, else progress goes to
    ``progress`` as periodic plain lines (see :class:`ProgressMeter`)."""
    stats = PregenerationStats()
    started = time.perf_counter()
    samples = [(entry[0], entry[1], entry[2] if len(entry) > 2 else 0) for entry in entries]
    static = [(s, c, k) for s, c, k in samples if not converses(s, c, backend)]
    interactive = [(s, c, k) for s, c, k in samples if converses(s, c, backend) and not unavailable(s, c, backend)]

    tasks, keys = _static_tasks(static, backend, cache, fingerprint, max_tokens, stats, progress)
    generate_missing(tasks, backend, cache, fingerprint, stats, progress, status, "generating", keys=keys)

    if interactive:
        if offers(backend, StreamingBackend) and backend.continuous:
            converse(interactive, backend, cache, fingerprint, max_tokens, stats, progress, status)
        else:
            run_rounds(interactive, backend, cache, fingerprint, max_tokens, stats, progress, status)
    stats.seconds = time.perf_counter() - started
    if offers(backend, StatsBackend):
        stats.backend = backend.stats()
        startup = stats.backend.get("engine_start_seconds") if isinstance(stats.backend, dict) else None
        if stats.engine_startup_s is None and isinstance(startup, (int, float)):
            stats.engine_startup_s = startup
    return stats


#: Requests (and their cache keys) built per part before the engine is known to be needed.
BUILD_PART = 256


def _static_tasks(static: Sequence[tuple[Any, Case, int]], backend: Any, cache: GenerationCache,
                  fingerprint: dict[str, Any], max_tokens: int | None, stats: PregenerationStats,
                  progress: Callable[[str], None]) -> tuple[list[Task], list[str]]:
    """The single-shot tasks and their cache keys, built part by part: as soon as a part holds a request the cache
    lacks, the engine is started (it will be needed) while the rest are built on a thread, so building them costs
    no time after the engine's start-up; a fully cached rerun starts nothing."""

    def build(chosen: Sequence[tuple[Any, Case, int]]) -> tuple[list[Task], list[str]]:
        built = [Task(case, finalize_request(suite.benchmark.build_request(case), suite_generation(suite),
                                             max_tokens, sample), 0) for suite, case, sample in chosen]
        return built, [request_key(fingerprint, task.request) for task in built]

    tasks: list[Task] = []
    keys: list[str] = []
    startable = offers(backend, StartableBackend) and not stats.started_backend
    for start in range(0, len(static), BUILD_PART):
        part_tasks, part_keys = build(static[start:start + BUILD_PART])
        tasks += part_tasks
        keys += part_keys
        if startable and cache.missing(part_keys):
            rest: dict[str, Any] = {}

            def build_rest(chosen: Sequence[tuple[Any, Case, int]] = static[start + BUILD_PART:]) -> None:
                try:
                    rest["built"] = build(chosen)
                except BaseException as error:  # noqa: BLE001 - raised again on the main thread
                    rest["error"] = error

            builder = threading.Thread(target=build_rest, name="toolbench-requests", daemon=True)
            builder.start()
            try:
                start_backend(backend, stats, progress)
            finally:
                builder.join()
            if "error" in rest:
                raise rest["error"]
            tasks += rest["built"][0]
            keys += rest["built"][1]
            break
    return tasks, keys
