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

Nothing here imports ray or vllm at import time; ray is imported when replicas start. The options are
``options.py``'s, one ``generate`` call's dispatch ``dispatch.py``, the actor ``ray_actor.py``.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from typing import Any, Callable, Sequence

from pytest_toolbench.backends.common import ChunkCallback, GenerationStats, ProgressCallback
from pytest_toolbench.backends.vllm.dispatch import DEAD, READY, STARTING, WAIT_LINE_SECONDS, RayExecutor, Replica, \
    reason
from pytest_toolbench.backends.vllm.executor import generate_with
from pytest_toolbench.backends.vllm.ray_actor import EngineReplica
from pytest_toolbench.contract.engine import ListeningBackend, StartableBackend, StatsBackend
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation, Task

#: Restarts of one replica after it died; a second death is final.
RESTARTS_PER_REPLICA = 1
#: Environment passed on to the replicas: vLLM's own settings (``VLLM_BATCH_INVARIANT`` is in the fingerprint) and
#: whether the Hub may be reached.
FORWARDED_ENVIRONMENT = ("VLLM_", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


class ReplicatedVllmBackend(ListeningBackend, StartableBackend, StatsBackend):
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
        self._ids = itertools.count()  # the request ids sent to replicas
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

    def next_request_id(self) -> int:
        """A new id for a request sent to a replica (unique over the run)."""
        return next(self._ids)

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
                                         f"{self._where}: {reason(error)}") from None
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
        return generate_with(RayExecutor(self), self._stats, tasks, on_chunk or self.engine.on_chunk,
                             on_progress or self.engine.on_progress)

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
            raise ToolbenchError(f"cannot start or reach {where}: {reason(error)}") from None
        self._owns_ray = True
        return ray

    def _plan_resources(self, ray: Any) -> None:
        """GPUs per replica: tensor x pipeline parallel where the cluster has GPUs (none for vLLM's own Ray
        executor, which places its workers itself), else CPU engines of one CPU each. A run that cannot fit is one
        error now rather than actors that wait forever."""
        args = self.engine.engine_args
        per_engine = self.engine.settings.tensor_parallel_size * int(args.get("pipeline_parallel_size", 1) or 1)
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
        local = self.engine.local_model_dir
        if local is not None:
            kwargs["model"] = str(local)
        elif kwargs.get("revision") is None and self.fingerprint().get("commit"):
            kwargs["revision"] = self.fingerprint()["commit"]
        tokenizer = kwargs.get("tokenizer")
        if isinstance(tokenizer, str) and os.path.isdir(tokenizer):
            kwargs["tokenizer"] = os.path.abspath(tokenizer)
        return kwargs

    def _launch_actor(self, ray: Any, replica: Replica) -> None:
        environment = {key: value for key, value in os.environ.items() if key.startswith(FORWARDED_ENVIRONMENT)}
        actor = ray.remote(EngineReplica).options(
            # named for `ray list actors` (the controller's pid keeps two runs on one cluster apart)
            name=f"toolbench-{os.getpid()}-replica-{replica.slot + 1}"
                 + (f"-restart-{replica.restarts}" if replica.restarts else ""),
            num_cpus=1, num_gpus=self._gpus_per_replica)
        replica.handle = actor.remote(self._engine_kwargs(), environment, self.engine.local_model_dir is not None)
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

    def lost(self, ray: Any, replica: Replica, error: BaseException, requeue: Callable[[list[int]], None]) -> None:
        """A replica died: its requests go back to the queue, it is restarted once, and the run says so."""
        moved = list(replica.outstanding) + replica.pending
        replica.outstanding, replica.pending, replica.load = {}, [], 0
        replica.step_ref, replica.state = None, DEAD
        requeue(moved)
        others = any(r.state == READY for r in self.replicas)
        line = (f"engine replica {replica.slot + 1} of {self.count} died ({reason(error)}); its {len(moved)} "
                f"unfinished request{'' if len(moved) == 1 else 's'} "
                + ("moved to the other replicas" if others else "wait for a replica"))
        if replica.restarts < RESTARTS_PER_REPLICA:
            replica.restarts += 1
            self._launch_actor(ray, replica)
            line += "; restarting it"
        else:
            line += f"; not restarted again (restarted {replica.restarts} time{'s' if replica.restarts > 1 else ''})"
        self._note(line)

    def restarted(self, ray: Any, replica: Replica) -> None:
        try:
            self._started(replica, ray.get(replica.start_ref))
            self._note(f"engine replica {replica.slot + 1} of {self.count} restarted on {replica.facts['host']} "
                       f"in {replica.facts['start_seconds']:.1f}s")
        except Exception as error:  # noqa: BLE001 - the others go on without it
            replica.state, replica.start_ref = DEAD, None
            self._note(f"engine replica {replica.slot + 1} of {self.count} could not be restarted "
                       f"({reason(error)}); the others go on without it")


