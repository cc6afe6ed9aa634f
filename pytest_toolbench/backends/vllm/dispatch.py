"""One ``generate`` call across the engine replicas on Ray (:class:`RayExecutor`, over
``executor.generate_with``): how requests are spread, answered and committed (see ``replicas.py`` for why and how).

ray is imported inside methods only (when replicas run).
"""

from __future__ import annotations

import heapq
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from pytest_toolbench.backends.common import ChunkCallback, ProgressCallback, progress_reporter
from pytest_toolbench.backends.vllm.batch import completion_generation, kept_prompt, with_recorded_answer
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Task

#: Seconds an engine replica steps before handing back what finished (the engine idles a round trip after each).
STEP_SECONDS = 0.5
#: Seconds between the lines that say replicas are still starting (waiting for the cluster's resources, say), and
#: the longest wait for a replica's answer before looking again.
WAIT_LINE_SECONDS = 60.0

STARTING, READY, DEAD = "starting", "ready", "dead"


@dataclass
class Replica:
    """One engine replica as the controller sees it (its actor handle changes when it is restarted)."""

    slot: int
    handle: Any = None
    state: str = STARTING
    start_ref: Any = None
    step_ref: Any = None
    facts: dict[str, Any] = field(default_factory=dict)
    restarts: int = 0
    window: int = 512
    outstanding: dict[int, int] = field(default_factory=dict)  # request id -> its cost, in the replica's engine
    pending: list[int] = field(default_factory=list)  # request ids to send with the next step call
    load: int = 0  # cost of outstanding and pending requests
    requests: int = 0  # answers it handed back over the run
    output_tokens: int = 0


class RayExecutor:
    """The replicas of a ``ReplicatedVllmBackend`` (``owner``) as a ``generate`` executor: the call is prepared here
    part by part by the one engine's backend (the same prompts, order and sampling as one engine) and dispatched as
    the parts come."""

    answered_by = "the engine replicas"

    def __init__(self, owner: Any):
        self.owner = owner

    def ready(self) -> None:
        self.owner.start()
        assert self.owner.context is not None

    def execute(self, tasks: Sequence[Task], on_chunk: ChunkCallback | None,
                on_progress: ProgressCallback | None) -> tuple[list[Generation | None], float | None]:
        owner = self.owner
        batch = owner.engine.start_batch(tasks)
        dispatch = Dispatch(owner, batch, len(tasks), on_chunk, on_progress,
                            parts=owner.engine.prepared_parts(batch, tasks, owner.context))
        dispatch.run()
        return batch.results, dispatch.first_sent_at


class Dispatch:
    """One ``generate`` call across the replicas (see the module docstring)."""

    def __init__(self, owner: Any, batch: Any, total: int, on_chunk: ChunkCallback | None,
                 on_progress: ProgressCallback | None, parts: Iterator[tuple[list[int], list[Any]]] | None = None):
        """``parts``: the call's tasks as they are prepared (runnable indices, over-long answers), dispatched as
        they come; None: ``batch`` is prepared whole."""
        self.owner = owner
        self.batch = batch
        self.total = total
        self.on_chunk = on_chunk
        self.report = progress_reporter(on_progress)
        self.every = owner.engine.chunk_size or 256
        self.commit_seconds = owner.engine.commit_seconds
        self.step_seconds = min(STEP_SECONDS, self.commit_seconds)
        self.parts = parts if parts is not None else iter([(list(batch.runnable), list(batch.early))])
        self.feeding = True  # parts may still come
        # identical requests (same token ids, same sampling) are generated once and answered to each task
        self.groups: dict[str, int] = {}  # request content -> first task index of its group
        self.wire: dict[int, int] = {}  # request id sent to a replica -> first task index of its group
        self.wire_of: dict[int, int] = {}
        self.members: dict[int, list[int]] = {}  # first task index -> every task index of the group
        self.rank: dict[int, int] = {}  # first task index -> place in the longest-first order
        self.cost: dict[int, int] = {}
        self.completions: dict[int, Generation] = {}  # first task index -> its finished completion
        self.queue: list[tuple[int, int]] = []
        self.remaining = 0  # groups not answered yet
        self.pending_rows: list[tuple[int, Generation]] = []
        self.done = self.prompt_tokens = self.output_tokens = 0
        self.last_flush = time.perf_counter()
        self.first_sent_at: float | None = None  # when the first request went to a replica
        if parts is None:
            self._next_part()  # the whole batch, queued at once

    def _next_part(self) -> None:
        """Take the next prepared part, if any: merge identical requests, queue the rest longest first."""
        part = next(self.parts, None)
        if part is None:
            self.feeding = False
            return
        order, early = part
        batch = self.batch
        for index, generation in early:
            self._answer(index, generation)
        for index in order:
            key = json.dumps([batch.token_ids[index], batch.sampling[index]], sort_keys=True)
            first = self.groups.setdefault(key, index)
            if first != index:
                self.members[first].append(index)
                if first in self.completions:  # its twin in an earlier part is answered already
                    self._answer(index, with_recorded_answer(self.completions[first], batch.recorded_answers[index],
                                                             kept_prompt(batch, index)))
                continue
            self.members[index], self.rank[index] = [index], len(self.rank)
            self.cost[index] = len(batch.token_ids[index]) + int(batch.sampling[index]["max_tokens"])
            wire = self.owner.next_request_id()
            self.wire[wire], self.wire_of[index] = index, wire
            heapq.heappush(self.queue, (self.rank[index], index))
            self.remaining += 1

    def _answer(self, index: int, generation: Generation) -> None:
        self.batch.results[index] = generation
        self.pending_rows.append((index, generation))
        self.done += 1
        self.prompt_tokens += generation.prompt_tokens or 0
        self.output_tokens += generation.output_tokens or 0

    def requeue(self, firsts: list[int]) -> None:
        for first in firsts:
            heapq.heappush(self.queue, (self.rank[first], first))

    def run(self) -> None:
        import ray
        from ray.exceptions import RayActorError

        owner = self.owner
        for replica in owner.replicas:  # a call that ended in an error may have left these behind
            replica.outstanding, replica.pending, replica.load, replica.step_ref = {}, [], 0, None
        try:
            while True:
                if self.feeding:
                    self._next_part()
                self._assign()
                self._send(ray)
                self._flush(force=self.remaining == 0 and not self.feeding)
                if self.remaining == 0:
                    if self.feeding:
                        continue
                    return
                calls = {r.step_ref: (r, "step") for r in owner.replicas if r.step_ref is not None}
                calls.update({r.start_ref: (r, "start") for r in owner.replicas if r.state == STARTING})
                if not calls:
                    raise ToolbenchError(
                        f"every engine replica died ({'; '.join(owner.notes[-owner.count:])}); the answers "
                        "committed so far are kept: run again to resume")
                # while parts are still being prepared, only collect what is ready; then wait
                ready, _ = ray.wait(list(calls), num_returns=1, timeout=0 if self.feeding else WAIT_LINE_SECONDS)
                for ref in ready:
                    replica, kind = calls[ref]
                    if kind == "start":
                        owner.restarted(ray, replica)
                        continue
                    replica.step_ref = None
                    try:
                        finished = ray.get(ref)
                    except RayActorError as error:
                        owner.lost(ray, replica, error, self.requeue)
                        continue
                    except Exception as error:  # noqa: BLE001 - the engine raised: as one engine's error would
                        raise ToolbenchError(f"engine replica {replica.slot + 1} of {owner.count} failed: "
                                             f"{reason(error)}") from None
                    self._receive(replica, finished)
        except BaseException:
            for replica in owner.replicas:  # leave no stale requests in an engine for the next call
                if replica.state == READY and (replica.outstanding or replica.step_ref is not None):
                    replica.handle.abort.remote()  # runs after the step call in flight, if any
            raise

    def _assign(self) -> None:
        """Longest request first, to the ready replica with the least outstanding work that has room."""
        while self.queue:
            open_replicas = [r for r in self.owner.replicas
                             if r.state == READY and len(r.outstanding) + len(r.pending) < r.window]
            if not open_replicas:
                return
            replica = min(open_replicas, key=lambda r: (r.load, r.slot))
            _, first = heapq.heappop(self.queue)
            replica.pending.append(first)
            replica.load += self.cost[first]

    def _send(self, ray: Any) -> None:
        for replica in self.owner.replicas:
            if replica.state != READY or replica.step_ref is not None or not (replica.pending or replica.outstanding):
                continue
            requests = [(self.wire_of[first], self.batch.token_ids[first], self.batch.sampling[first])
                        for first in replica.pending]
            for first in replica.pending:
                replica.outstanding[first] = self.cost[first]
            replica.pending = []
            replica.step_ref = replica.handle.step.remote(requests, self.step_seconds)
            if self.first_sent_at is None and requests:
                self.first_sent_at = time.perf_counter()

    def _receive(self, replica: Replica, finished: list[Any]) -> None:
        batch = self.batch
        for wire, text, finish_reason, prompt_tokens, output_tokens in finished:
            first = self.wire.get(wire)
            if first is None or first not in replica.outstanding:
                continue  # not this call's request (an earlier call's, cut short) or already answered
            replica.load -= replica.outstanding.pop(first)
            replica.requests += 1
            replica.output_tokens += output_tokens
            self.remaining -= 1
            generation = completion_generation(text, finish_reason, prompt_tokens, output_tokens, batch.parser)
            self.completions[first] = generation
            for index in self.members[first]:
                self._answer(index, with_recorded_answer(generation, batch.recorded_answers[index],
                                                         kept_prompt(batch, index)))
        if self.report is not None and finished:
            self.report(self.done, self.total, self.prompt_tokens, self.output_tokens)

    def _flush(self, force: bool = False) -> None:
        """Hand finished answers to the cache: every ``chunk_size`` of them or ``commit_seconds``, as one engine."""
        if self.on_chunk is None or not self.pending_rows:
            return
        now = time.perf_counter()
        if force or len(self.pending_rows) >= self.every or now - self.last_flush >= self.commit_seconds:
            rows, self.pending_rows = self.pending_rows, []
            self.last_flush = now
            self.on_chunk(rows)


def reason(error: BaseException) -> str:
    """One line for a Ray error: the exception raised inside the actor where there is one, else Ray's own (for a
    dead actor, Ray's sentence saying why, without its ids)."""
    cause = getattr(error, "cause", None)
    shown = cause if isinstance(cause, BaseException) else error
    text = " ".join(str(shown).split())
    if isinstance(shown, ToolbenchError):
        return text[:500]
    why = re.search(r"The actor (?:is dead|died) because.*?\.(?=\s|$)", text)
    return f"{type(shown).__name__}: {why.group(0) if why else text}"[:500]
