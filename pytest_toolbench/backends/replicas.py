"""``--toolbench-replicas=N``: N copies of the vLLM engine as Ray actors, fed by one controller (the pytest process).

Why Ray Core actors and not Ray Data's vLLM batch inference (``ray.data.llm``): pre-generation is not one static
dataset. Interactive suites (BFCL multi-turn, agentic, ACEBench agents) run in rounds whose requests exist only after
the previous round's answers went through the tools on the controller, so the engines must outlive a round; the
content-addressed cache must be written by one process as answers arrive (a killed run resumes from it); and the
prompts are rendered and tokenized here, exactly as for one engine, so a Ray Data pipeline's own templating and
tokenizing stages would be work to switch off. Long-lived actors that take token ids and hand back finished
completions give all of that with a few dozen lines of dispatch; Ray Data would add a dataset per round and a second
place where answers are stored.

How requests are spread: each ``generate`` call (the whole single-turn set, or one round of conversations) is prepared
here part by part (:meth:`VllmBackend.prepared_parts`: the same prompts, order and sampling as one engine; the
replicas start on the first part while the next are tokenized), identical requests are merged (across parts too),
and the rest go out longest first, each to the replica with the least outstanding work (prompt plus answer
budget), keeping at most twice the engine's ``max_num_seqs`` outstanding per replica so that a replica that runs
ahead takes the next requests and the replicas finish together. Every replica is stepped in short calls
(``STEP_SECONDS``); answers are committed through ``on_chunk`` every ``chunk_size`` answers or ``commit_seconds``,
as with one engine, so a killed run resumes exactly as today.

A replica that dies (its process or node lost, ``ray.kill``) is reported on the terminal and in the run's JSON header;
its unfinished requests go back to the queue for the others, and it is restarted once in the background (a second
death of the same replica is final). Nothing is lost (only finished answers are committed) and nothing is generated
twice (a request is in exactly one replica's hands). An exception inside a replica's engine is an engine failure and
ends the generation with its message, as it would with one in-process engine.

Greedy results equal one engine's request for request (tests/test_engine_replicas.py), to the extent vLLM's own
results do not depend on which requests share a batch (``VLLM_BATCH_INVARIANT=1`` makes that exact on GPUs).

Nothing here imports ray or vllm at import time; ray is imported when replicas start.
"""

from __future__ import annotations

import heapq
import importlib.util
import itertools
import json
import logging
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from pytest_toolbench.backends.common import ChunkCallback, GenerationStats, ProgressCallback, Stopwatch, \
    progress_reporter
from pytest_toolbench.backends.vllm_engine import completion_generation, with_recorded_answer
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation, Task

#: The optional extra that installs Ray.
EXTRA = "pytest-toolbench[ray]"
#: Seconds an engine replica steps before handing back what finished (the engine idles a round trip after each).
STEP_SECONDS = 0.5
#: Restarts of one replica after it died; a second death is final.
RESTARTS_PER_REPLICA = 1
#: Seconds between the lines that say replicas are still starting (waiting for the cluster's resources, say).
WAIT_LINE_SECONDS = 60.0
#: Environment passed on to the replicas: vLLM's own settings (``VLLM_BATCH_INVARIANT`` is in the fingerprint) and
#: whether the Hub may be reached.
FORWARDED_ENVIRONMENT = ("VLLM_", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


# -- options ----------------------------------------------------------------------------------------------------------

def add_options(group: Any) -> None:
    """``--toolbench-replicas`` and ``--toolbench-ray-address`` (the vllm backend's; added to its option group)."""
    group.addoption("--toolbench-replicas", dest="toolbench_replicas", type=int, default=1, metavar="N",
                    help="Run N vLLM engine replicas (each with --toolbench-tp GPUs) as Ray actors and spread the "
                         f"requests across them (needs {EXTRA}); default 1: one engine in this process, no Ray.")
    group.addoption("--toolbench-ray-address", dest="toolbench_ray_address", default=None, metavar="ADDR",
                    help="Ray cluster for the engine replicas (also RAY_ADDRESS); default: a local Ray started for "
                         "the run. Given with one replica, that engine runs on the cluster.")


def resolve_options(replicas: int | None, ray_address: str | None, backend: str | None,
                    environ: Any = os.environ) -> tuple[int, str | None]:
    """``(replicas, ray_address)`` of a run, or ``ValueError`` with the one-line usage error. The address is the
    option's, else ``RAY_ADDRESS`` when replicas are asked for, else None (a local Ray, or no Ray for one replica)."""
    replicas = 1 if replicas is None else replicas
    if replicas < 1:
        raise ValueError(f"--toolbench-replicas={replicas}: must be a positive number of engine replicas")
    given = ray_address.strip() if ray_address and ray_address.strip() else None
    wanted = replicas > 1 or given is not None
    if not wanted:
        return 1, None
    what = f"--toolbench-replicas={replicas}" if replicas > 1 else f"--toolbench-ray-address={given}"
    if backend is None:  # asked by the vllm kind when another backend serves the run (it does not know which)
        raise ValueError(f"{what} runs copies of the vLLM engine (--model with the vllm backend); this run's backend "
                         "has none (an openai endpoint: scale its server instead)")
    if backend != "vllm":
        raise ValueError(f"{what} runs copies of the vLLM engine (--model with --toolbench-backend vllm); backend "
                         f"{backend!r} has none" + ("; scale its server instead" if backend == "openai" else ""))
    if not ray_installed():
        raise ValueError(f"{what} needs Ray, an optional extra: pip install '{EXTRA}'")
    return replicas, given or (environ.get("RAY_ADDRESS") or None)


def ray_installed() -> bool:
    """Whether ``import ray`` would find it, without importing it (plugin import and configure stay light)."""
    if "ray" in sys.modules:
        return sys.modules["ray"] is not None  # None: blocked on purpose
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def uses_ray(options: Any) -> bool:
    """Whether the run's engine runs as Ray actors (N > 1 replicas, or one on a given cluster)."""
    engine = options.backend_options
    return getattr(engine, "replicas", 1) > 1 or getattr(engine, "ray_address", None) is not None


# -- the controller -----------------------------------------------------------------------------------------------

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


class ReplicatedVllmBackend:
    """The vllm backend with ``--toolbench-replicas`` engines on Ray. ``engine``: the run's :class:`VllmBackend`,
    which renders, tokenizes, fingerprints and parses here but never starts an engine in this process."""

    capabilities = MODEL_BACKEND

    def __init__(self, engine: Any, replicas: int, ray_address: str | None = None):
        self.engine = engine
        self.name = engine.name
        self.count = replicas
        self.ray_address = ray_address
        self.replicas: list[Replica] = []
        self.notes: list[str] = []  # what happened to replicas (deaths, restarts): terminal lines, JSON header
        self.context: int | None = None
        self._write: Callable[[str], None] | None = None
        self._where = ""
        self._owns_ray = False
        self._ids = itertools.count()
        self._stats = GenerationStats()
        self._gpus_per_replica = 0

    @classmethod
    def from_options(cls, options: Any, engine: Any) -> "ReplicatedVllmBackend":
        return cls(engine, options.backend_options.replicas, options.backend_options.ray_address)

    # -- what pre-generation calls --------------------------------------------------------------------------------
    def fingerprint(self) -> dict[str, Any]:
        """The one engine's: replicas change where answers are made, not what they are, so a cache filled by N
        replicas serves a run with one and the reverse."""
        return self.engine.fingerprint()

    def listen(self, write: Callable[[str], None]) -> None:
        """Where to say what happens to replicas as it happens (the run's progress lines)."""
        self._write = write

    def _say(self, line: str) -> None:
        if self._write is not None:
            self._write(line)

    def _note(self, line: str) -> None:
        self.notes.append(line)
        self._say(line)

    def start(self) -> None:
        """Connect to Ray (or start it), start every replica and wait until all have built their engine."""
        if self.replicas:
            return
        ray = self._connect()
        self._plan_resources(ray)
        self.replicas = [Replica(slot) for slot in range(self.count)]
        for replica in self.replicas:
            self._launch_actor(ray, replica)
        # meanwhile, what rendering needs here (importing transformers and loading the tokenizer take seconds that
        # would otherwise be counted as generation)
        self.engine.tokenizer()
        self.engine.prompt_formats()
        waiting = {replica.start_ref: replica for replica in self.replicas}
        last_line = time.perf_counter()
        while waiting:
            # one at a time: a replica that cannot start stops the run at once, not when the others are up
            ready, _ = ray.wait(list(waiting), num_returns=1, timeout=WAIT_LINE_SECONDS)
            for ref in ready:
                replica = waiting.pop(ref)
                try:
                    self._started(replica, ray.get(ref))
                except Exception as error:  # noqa: BLE001 - one line naming the replica, not a Ray traceback
                    raise ToolbenchError(f"engine replica {replica.slot + 1} of {self.count} could not start on "
                                         f"{self._where}: {_reason(error)}") from None
            if waiting and time.perf_counter() - last_line >= WAIT_LINE_SECONDS:
                last_line = time.perf_counter()
                self._say(f"still starting {len(waiting)} of {self.count} engine replicas on {self._where} (each "
                          f"needs {self._resources_text()}; Ray waits for free ones)")
        first = self.replicas[0].facts
        self._say(f"{self.count} engine replica{'s' if self.count > 1 else ''} on {self._where}, "
                  f"{self._resources_text()} each, context {first['max_model_len']}")

    def generate(self, tasks: Sequence[Task], *, on_chunk: ChunkCallback | None = None,
                 on_progress: ProgressCallback | None = None) -> list[Generation]:
        """Answer every task, in order; see the module's docstring for how the replicas share them."""
        on_chunk = on_chunk or self.engine.on_chunk
        on_progress = on_progress or self.engine.on_progress
        if not tasks:
            return []
        self.start()
        assert self.context is not None
        with Stopwatch() as watch:
            batch = self.engine.start_batch(tasks)
            dispatch = _Dispatch(self, batch, len(tasks), on_chunk, on_progress,
                                 parts=self.engine.prepared_parts(batch, tasks, self.context))
            dispatch.run()
        generations = [g for g in batch.results if g is not None]
        if len(generations) != len(tasks):
            raise ToolbenchError(f"the engine replicas returned {len(generations)} of {len(tasks)} generations")
        self._stats.add(generations, watch.seconds)
        self._stats.add_first_request_wait((dispatch.first_sent_at or watch.start + watch.seconds) - watch.start)
        return generations

    def row_choice(self) -> Any:
        """The BFCL row the engines prompt as (the one backend that prepares every request decides)."""
        return self.engine.row_choice()

    def stats(self) -> dict[str, Any]:
        data = self._stats.as_dict()
        data["replicas"] = {
            "count": self.count, "ray": self._where, "gpus_per_replica": self._gpus_per_replica,
            "replicas": [{"replica": r.slot + 1, "state": r.state, "host": r.facts.get("host"),
                          "gpus": r.facts.get("gpus"), "requests": r.requests, "output_tokens": r.output_tokens,
                          "restarts": r.restarts} for r in self.replicas],
            "events": list(self.notes),
        }
        sent = self.engine.stats().get("sampling_sent")  # the requests are prepared by this engine's backend
        if sent:
            data["sampling_sent"] = sent
        return data

    def close(self) -> None:
        """Stop the replicas; leave Ray as it was found (a cluster keeps running, a local Ray of this run stops)."""
        replicas, self.replicas = self.replicas, []
        if replicas or self._owns_ray:
            import ray

            for replica in replicas:
                if replica.handle is not None:
                    try:
                        ray.kill(replica.handle)
                    except Exception:  # noqa: BLE001 - already gone
                        pass
            if self._owns_ray:
                self._owns_ray = False
                ray.shutdown()
        self.engine.close()

    # -- Ray ------------------------------------------------------------------------------------------------------
    def _connect(self) -> Any:
        import ray

        if ray.is_initialized():
            self._where = "the Ray this process is connected to"
            return ray
        quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
        try:
            if self.ray_address:
                ray.init(address=self.ray_address, **quiet)
                self._where = f"the Ray cluster at {self.ray_address}"
            else:
                ray.init(address="local", include_dashboard=False, **quiet)
                self._where = "a local Ray started for this run"
        except Exception as error:  # noqa: BLE001 - a wrong address is one line
            where = f"the Ray cluster at {self.ray_address}" if self.ray_address else "a local Ray"
            raise ToolbenchError(f"cannot start or reach {where}: {_reason(error)}") from None
        self._owns_ray = True
        return ray

    def _plan_resources(self, ray: Any) -> None:
        """GPUs per replica: tensor x pipeline parallel where the cluster has GPUs (none for vLLM's own Ray
        executor, which places its workers itself), else CPU engines of one CPU each. A run that cannot fit is one
        error now rather than actors that wait forever."""
        args = self.engine.engine_args
        per_engine = self.engine.tensor_parallel_size * int(args.get("pipeline_parallel_size", 1) or 1)
        total = ray.cluster_resources()
        gpus, cpus = float(total.get("GPU", 0)), float(total.get("CPU", 0))
        if gpus > 0:
            if self.count * per_engine > gpus:
                raise ToolbenchError(
                    f"--toolbench-replicas={self.count} of {per_engine} GPU{'s' if per_engine > 1 else ''} each "
                    f"(tensor x pipeline parallel) needs {self.count * per_engine} GPUs; {self._where} has {gpus:g}")
            self._gpus_per_replica = 0 if args.get("distributed_executor_backend") == "ray" else per_engine
        elif self.count > cpus:
            raise ToolbenchError(f"--toolbench-replicas={self.count} CPU engines need {self.count} CPUs; "
                                 f"{self._where} has {cpus:g} (and no GPUs)")

    def _resources_text(self) -> str:
        if self._gpus_per_replica:
            return f"{self._gpus_per_replica} GPU{'s' if self._gpus_per_replica > 1 else ''}"
        if self.engine.engine_args.get("distributed_executor_backend") == "ray":
            return "GPUs placed by vLLM's Ray executor"
        return "1 CPU (no GPUs in the cluster)"

    def _engine_kwargs(self) -> dict[str, Any]:
        """The one engine's arguments, with paths made absolute (a replica's working folder is not ours) and a Hub
        model pinned to the commit the fingerprint names (every replica loads the same files)."""
        kwargs = self.engine.engine_kwargs()
        local = self.engine._local_model_dir
        if local is not None:
            kwargs["model"] = str(local)
        elif kwargs.get("revision") is None and self.fingerprint().get("commit"):
            kwargs["revision"] = self.fingerprint()["commit"]
        tokenizer = kwargs.get("tokenizer")
        if isinstance(tokenizer, str) and os.path.isdir(tokenizer):
            kwargs["tokenizer"] = os.path.abspath(tokenizer)
        return kwargs

    def _launch_actor(self, ray: Any, replica: Replica) -> None:
        from pytest_toolbench.backends.ray_actors import EngineReplica

        environment = {key: value for key, value in os.environ.items() if key.startswith(FORWARDED_ENVIRONMENT)}
        actor = ray.remote(EngineReplica).options(
            # named for `ray list actors` (the controller's pid keeps two runs on one cluster apart)
            name=f"toolbench-{os.getpid()}-replica-{replica.slot + 1}"
                 + (f"-restart-{replica.restarts}" if replica.restarts else ""),
            num_cpus=1, num_gpus=self._gpus_per_replica)
        replica.handle = actor.remote(self._engine_kwargs(), environment, self.engine._local_model_dir is not None)
        replica.start_ref = replica.handle.start.remote()
        replica.state = STARTING

    def _started(self, replica: Replica, facts: dict[str, Any]) -> None:
        """Check a started replica against the run: the fingerprint names the packages and the checkpoint of this
        process, so a replica with others would put answers under the wrong key."""
        fingerprint = self.fingerprint()
        if facts["versions"] != fingerprint.get("versions"):
            raise ToolbenchError(f"it runs {facts['versions']} on {facts['host']}, this process "
                                 f"{fingerprint.get('versions')}: install the same versions on every node")
        if facts["model_files_sha256"] not in (None, fingerprint.get("files_sha256")):
            raise ToolbenchError(f"the checkpoint at {self.engine.model} on {facts['host']} differs from this "
                                 "process's (a different copy at the same path)")
        if self.context is not None and facts["max_model_len"] != self.context:
            raise ToolbenchError(f"its context is {facts['max_model_len']}, the other replicas' {self.context}")
        self.context = facts["max_model_len"]
        replica.facts = facts
        replica.window = 2 * max(1, facts["max_num_seqs"])
        replica.state, replica.start_ref = READY, None

    def _lost(self, ray: Any, replica: Replica, error: BaseException, requeue: Callable[[list[int]], None]) -> None:
        """A replica died: its requests go back to the queue, it is restarted once, and the run says so."""
        moved = list(replica.outstanding) + replica.pending
        replica.outstanding, replica.pending, replica.load = {}, [], 0
        replica.step_ref, replica.state = None, DEAD
        requeue(moved)
        others = any(r.state == READY for r in self.replicas)
        line = (f"engine replica {replica.slot + 1} of {self.count} died ({_reason(error)}); its {len(moved)} "
                f"unfinished request{'' if len(moved) == 1 else 's'} "
                + ("moved to the other replicas" if others else "wait for a replica"))
        if replica.restarts < RESTARTS_PER_REPLICA:
            replica.restarts += 1
            self._launch_actor(ray, replica)
            line += "; restarting it"
        else:
            line += f"; not restarted again (restarted {replica.restarts} time{'s' if replica.restarts > 1 else ''})"
        self._note(line)

    def _restarted(self, ray: Any, replica: Replica) -> None:
        try:
            self._started(replica, ray.get(replica.start_ref))
            self._note(f"engine replica {replica.slot + 1} of {self.count} restarted on {replica.facts['host']} "
                       f"in {replica.facts['start_seconds']:.1f}s")
        except Exception as error:  # noqa: BLE001 - the others go on without it
            replica.state, replica.start_ref = DEAD, None
            self._note(f"engine replica {replica.slot + 1} of {self.count} could not be restarted "
                       f"({_reason(error)}); the others go on without it")


class _Dispatch:
    """One ``generate`` call across the replicas (see the module docstring)."""

    def __init__(self, owner: ReplicatedVllmBackend, batch: Any, total: int, on_chunk: ChunkCallback | None,
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
                    self._answer(index, with_recorded_answer(self.completions[first], batch.recorded_answers[index]))
                continue
            self.members[index], self.rank[index] = [index], len(self.rank)
            self.cost[index] = len(batch.token_ids[index]) + int(batch.sampling[index]["max_tokens"])
            wire = next(self.owner._ids)
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
                        owner._restarted(ray, replica)
                        continue
                    replica.step_ref = None
                    try:
                        finished = ray.get(ref)
                    except RayActorError as error:
                        owner._lost(ray, replica, error, self.requeue)
                        continue
                    except Exception as error:  # noqa: BLE001 - the engine raised: as one engine's error would
                        raise ToolbenchError(f"engine replica {replica.slot + 1} of {owner.count} failed: "
                                             f"{_reason(error)}") from None
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
                self._answer(index, with_recorded_answer(generation, batch.recorded_answers[index]))
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


def _reason(error: BaseException) -> str:
    """One line for a Ray error: the exception raised inside the actor where there is one, else Ray's own (for a
    dead actor, Ray's sentence saying why, without its ids)."""
    cause = getattr(error, "cause", None)
    shown = cause if isinstance(cause, BaseException) else error
    text = " ".join(str(shown).split())
    if isinstance(shown, ToolbenchError):
        return text[:500]
    why = re.search(r"The actor (?:is dead|died) because.*?\.(?=\s|$)", text)
    return f"{type(shown).__name__}: {why.group(0) if why else text}"[:500]
