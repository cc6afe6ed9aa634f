"""One batch of pre-generation: the engine started before its first request, then the requests the cache lacks,
longest first (OOMs surface early, ETAs are upper bounds), handed to the backend in one call; each chunk of answers
the backend hands back is committed to the cache at once."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable

from ..contract.engine import ListeningBackend, StartableBackend, offers
from ..contract.suite import Generation, Request, Task
from .cache import GenerationCache, request_key
from .progress import COMMITTING, STOP_REQUESTED, PregenerationStats, ProgressMeter


def prompt_size(request: Request) -> int:
    return len(json.dumps(list(request.messages), ensure_ascii=False)) + len(json.dumps(request.tools or []))


def start_backend(backend: Any, stats: PregenerationStats, progress: Callable[[str], None]) -> None:
    """Start an engine before the first request (a :class:`StartableBackend`'s ``start()``; a
    :class:`ListeningBackend` is handed ``progress`` first), so its start-up is not counted as generation time in the
    throughput and ETA."""
    if stats.started_backend:
        return
    stats.started_backend = True
    if offers(backend, ListeningBackend):  # news of its own to tell as it happens (engine replicas that die)
        backend.listen(progress)
    if offers(backend, StartableBackend):
        started = time.perf_counter()
        backend.start()
        # the whole start as the user waits for it (importing the engine's packages included), so the header's
        # start-up and generation seconds add up to the pre-generation time
        stats.engine_startup_s = time.perf_counter() - started
        progress(f"engine started in {stats.engine_startup_s:.1f}s")


def generate_missing(tasks: list[Task], backend: Any, cache: GenerationCache, fingerprint: dict[str, Any],
                     stats: PregenerationStats, progress: Callable[[str], None],
                     status: Callable[[str], None] | None = None, label: str = "generating",
                     final_line: bool = True, keys: list[str] | None = None) -> ProgressMeter | None:
    """Generate the tasks not in the cache, committing as the backend hands answers over; returns the progress
    meter with the final figures (None when everything was cached). ``keys``: the tasks' cache keys, when the
    caller has them already."""
    keys = keys if keys is not None else [request_key(fingerprint, t.request) for t in tasks]
    missing = cache.missing(keys)
    stats.requested += len(tasks)
    todo: dict[str, Task] = {}
    for key, task in zip(keys, tasks):
        if key in missing and key not in todo:
            todo[key] = task
    stats.cached += len(tasks) - len(todo)
    if not todo:
        return None
    size = {key: prompt_size(task.request) for key, task in todo.items()}
    order = sorted(todo, key=size.__getitem__, reverse=True)
    ordered_tasks = [todo[k] for k in order]
    done: dict[str, Generation] = {}
    start_backend(backend, stats, progress)
    meter = ProgressMeter(label, len(ordered_tasks), progress, status,
                          sizes=[size[key] for key in order])
    counted_by_backend = [False]

    def commit(chunk: Iterable[tuple[int, Generation]]) -> None:
        rows = [(order[i], g) for i, g in chunk if order[i] not in done]
        COMMITTING.set()
        try:
            cache.put_many(rows)  # first: an interrupted run keeps every answer handed over
        finally:
            COMMITTING.clear()
        done.update(rows)
        if not counted_by_backend[0]:
            meter.add_tokens(sum(g.prompt_tokens or 0 for _, g in rows), sum(g.output_tokens or 0 for _, g in rows))
        meter.tick()
        if STOP_REQUESTED.is_set():
            raise KeyboardInterrupt

    def report_progress(finished: int, total: int, prompt_tokens: int | None = None,
                        output_tokens: int | None = None) -> None:
        if STOP_REQUESTED.is_set():
            raise KeyboardInterrupt
        if prompt_tokens is not None or output_tokens is not None:
            counted_by_backend[0] = True
        meter.update(finished, prompt_tokens, output_tokens)

    generations = backend.generate(ordered_tasks, on_chunk=commit, on_progress=report_progress)
    commit(enumerate(generations))
    for generation in generations:
        stats.generated += 1
        stats.prompt_tokens += generation.prompt_tokens or 0
        stats.output_tokens += generation.output_tokens or 0
    meter.done = len(generations)
    meter.prompt_tokens = sum(g.prompt_tokens or 0 for g in generations)
    meter.output_tokens = sum(g.output_tokens or 0 for g in generations)
    if final_line:
        progress(meter.text())  # the final figures, kept (on a terminal it replaces the updating line)
    return meter
