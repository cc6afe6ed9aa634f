"""One vLLM engine replica, run as a Ray actor by :mod:`pytest_toolbench.backends.vllm.replicas`.

The actor owns a ``vllm.LLM`` and nothing else: the controller (the pytest process) renders and tokenizes every
prompt, decides each request's sampling, parses the answers and keeps the cache, so a replica's answer to a request is
exactly the one engine's. The actor only adds token ids to its engine and steps it, handing finished completions back
as plain tuples.

Why one synchronous ``step`` call rather than a thread that runs the engine: vLLM's ``LLM`` is not thread-safe, and
the controller calls ``step`` again as soon as one returns (with the next requests), so the engine idles only for a
round trip (about a millisecond) every ``seconds``, while its batch stays full between calls.

This module is plain Python: ``ray.remote`` is applied by ``replicas.py`` when a run asks for replicas, and vllm is
imported inside methods, in the actor's process only.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_toolbench.backends.model_source import hash_local_checkpoint
from pytest_toolbench.backends.vllm.shims import abort, apply_cpu_environment, can_enqueue, completion_fields, \
    engine_versions, enqueue, is_cpu_build

#: A finished request as it travels back: (the controller's request id, text, finish reason, prompt tokens,
#: output tokens).
Finished = tuple[int, str, Any, int, int]


class EngineReplica:
    """A ``vllm.LLM`` built from the controller's engine arguments; started by :meth:`start`, fed by :meth:`step`."""

    def __init__(self, engine_kwargs: Mapping[str, Any], environment: Mapping[str, str], local_model: bool):
        self.engine_kwargs = dict(engine_kwargs)
        self.environment = dict(environment)
        self.local_model = local_model
        self.llm: Any = None
        self._ids: dict[str, int] = {}  # the engine's request ids (external and internal) -> the controller's
        self._live: dict[int, str] = {}  # the controller's ids of unfinished requests -> the id enqueue returned

    def start(self) -> dict[str, Any]:
        """Build the engine; returns what the controller checks and reports (where it runs, its context length,
        batch size, installed versions and the checkpoint's identity on this node)."""
        os.environ.update(self.environment)
        if is_cpu_build():
            apply_cpu_environment()
        host = socket.gethostname()
        model = self.engine_kwargs["model"]
        files = None
        if self.local_model:
            if not Path(model).is_dir():
                raise RuntimeError(f"the model folder {model} is not on node {host}: every node of the Ray cluster "
                                   "needs the checkpoint at the same path (a shared file system, or a copy)")
            files = hash_local_checkpoint(Path(model))["files_sha256"]
        from vllm import LLM

        started = time.perf_counter()
        self.llm = LLM(**self.engine_kwargs)
        seconds = time.perf_counter() - started
        if not can_enqueue(self.llm):
            raise RuntimeError("this vLLM cannot enqueue requests and step its engine (LLM.llm_engine.step)")
        engine = self.llm.llm_engine
        scheduler = getattr(getattr(engine, "vllm_config", None), "scheduler_config", None)
        try:
            import ray

            gpus = [str(g) for g in ray.get_runtime_context().get_accelerator_ids().get("GPU", [])]
        except Exception:  # noqa: BLE001 - where it runs is for the report only
            gpus = []
        return {"host": host, "pid": os.getpid(), "gpus": gpus, "start_seconds": round(seconds, 3),
                "max_model_len": int(engine.model_config.max_model_len),
                "max_num_seqs": int(getattr(scheduler, "max_num_seqs", 0) or 256),
                "versions": engine_versions(), "model_files_sha256": files}

    def step(self, requests: Sequence[tuple[int, list[int], dict[str, Any]]], seconds: float) -> list[Finished]:
        """Add ``requests`` (id, prompt token ids, ``SamplingParams`` keywords), then step the engine for about
        ``seconds`` or until it has nothing left; returns the requests that finished meanwhile."""
        from vllm import SamplingParams

        if requests:
            engine_ids = enqueue(self.llm, [{"prompt_token_ids": list(ids)} for _, ids, _ in requests],
                                 [SamplingParams(**params) for _, _, params in requests])
            for engine_id, (request_id, _, _) in zip(engine_ids, requests):
                # outputs carry either id ("<external>-<8 random chars>" inside vLLM >= 0.11): accept both
                self._ids[engine_id] = request_id
                self._ids.setdefault(engine_id.rsplit("-", 1)[0], request_id)
                self._live[request_id] = engine_id
        engine = self.llm.llm_engine
        finished: list[Finished] = []
        deadline = time.perf_counter() + seconds
        while engine.has_unfinished_requests():
            for output in engine.step():
                if not getattr(output, "finished", False):
                    continue
                request_id = self._ids.pop(str(output.request_id), None)
                if request_id is None or self._live.pop(request_id, None) is None:
                    continue
                finished.append((request_id, *completion_fields(output)))
            if time.perf_counter() >= deadline:
                break
        if not engine.has_unfinished_requests():
            self._ids.clear()  # the other spelling of each finished id
        return finished

    def abort(self) -> int:
        """Drop every unfinished request (the controller's call that sent them ended in an error); returns how
        many."""
        live, self._live = list(self._live.values()), {}
        self._ids.clear()
        if live:
            abort(self.llm.llm_engine, live)
        return len(live)
