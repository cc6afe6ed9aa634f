"""The in-process engine at work: one ``generate`` call's requests batched or streamed part by part
(:class:`InProcessExecutor`, over ``executor.generate_with``), and the conversation stream (:class:`EngineStream`)
that takes each conversation's next request whenever it exists.

vllm is imported inside methods only.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

from pytest_toolbench.backends.common import ChunkCallback, ProgressCallback, progress_reporter
from pytest_toolbench.backends.vllm.batch import (
    PART_MAX,
    STREAM_PART_FIRST,
    PreparedPart,
    kept_prompt,
    output_generation,
    part_bounds,
    with_recorded_answer,
)
from pytest_toolbench.backends.vllm.shims import abort, can_enqueue, enqueue, progress_factory
from pytest_toolbench.contract.engine import GenerationStream
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Task
from pytest_toolbench.parsing.tool_calls import get_parser

#: ``backend`` below is the run's ``engine.VllmBackend`` (typed loosely: the engine module builds on this one)


class _GenerationRun:
    """One ``generate`` call's bookkeeping: results by input index, progress and chunk hand-over."""

    def __init__(self, backend: Any, parser: Any, results: list[Generation | None], total: int,
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
        self.kept_prompts: list[Any] | None = None  # per task, with --toolbench-keep-prompts: what was sent
        self.first_request_at: float | None = None  # when the engine got its first request of this call
        self._add_early(early)

    def _add_early(self, early: list[tuple[int, Generation]]) -> None:
        """Over-long prompts, answered without the engine: handed over with the next chunk."""
        self.pending.extend(early)
        self.done += len(early)
        self.prompt_tokens += sum(g.prompt_tokens or 0 for _, g in early)

    def _finish(self, index: int, output: Any) -> None:
        generation = output_generation(output, self.parser)
        recorded_answer = self.recorded_answers[index] if self.recorded_answers else None
        kept = self.kept_prompts[index] if self.kept_prompts else None
        generation = with_recorded_answer(generation, recorded_answer, kept)
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
                use_tqdm = progress_factory(self.on_progress, self.done, self.total)
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


class EngineStream(GenerationStream):
    """Requests added whenever they exist, answers handed back as the engine finishes them: what lets each
    conversation send its next step as soon as its previous answer has arrived and its tools have run, instead of
    waiting for a round of every live conversation (``run/conversations.py``, ``converse``).

    ``add(tasks, tags)`` renders, tokenizes (a conversation's earlier turns reused: ``prompt_segments.py``) and
    enqueues; ``step()`` runs one engine step (or hands back over-long prompts answered without the engine) and
    returns ``(tag, Generation)`` of what finished; ``close()`` aborts what is left and adds the figures to the
    backend's stats (one ``generate`` call)."""

    def __init__(self, backend: Any, llm: Any, sampling_params: Any):
        self.backend, self.llm, self.engine = backend, llm, llm.llm_engine
        self.sampling_params = sampling_params
        self.context = self.engine.model_config.max_model_len
        #: request id -> (tag, the handler's recorded answer, the prompt kept or None)
        self.position: dict[str, tuple[Any, Any, Any]] = {}
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
                self.position[request_id] = (tags[index], batch.recorded_answers[index],
                                               kept_prompt(batch, index))
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
            tag, recorded_answer, kept = self.position.pop(key)
            self.internal.pop(key.rsplit("-", 1)[0], None)
            generation = with_recorded_answer(output_generation(output, self.parser), recorded_answer, kept)
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
        self.backend.generation_stats.add(self.generations, seconds)
        self.backend.generation_stats.add_first_request_wait((self.first_request_at or self.started + seconds) - self.started)


class InProcessExecutor:
    """The in-process engine as a ``generate`` executor. Without ``on_chunk``: every prompt prepared, then one
    ``LLM.generate`` call over all tasks. With it: the tasks are prepared and enqueued part by part
    (``prepare_parts``) while the engine, stepped here, already runs the parts before, and finished results go to
    ``on_chunk`` every ``chunk_size`` results or every ``commit_seconds``, whichever comes first, so the caller
    commits while the batch stays full (no drain at chunk boundaries) and a killed run loses at most
    ``commit_seconds`` of finished work."""

    answered_by = "vLLM"

    def __init__(self, backend: Any):
        self.backend = backend
        self.llm: Any = None

    def ready(self) -> None:
        self.llm = self.backend.engine()

    def execute(self, tasks: Sequence[Task], on_chunk: ChunkCallback | None,
                on_progress: ProgressCallback | None) -> tuple[list[Generation | None], float | None]:
        from vllm import SamplingParams

        backend, llm = self.backend, self.llm
        context = llm.llm_engine.model_config.max_model_len
        streaming = on_chunk is not None and can_enqueue(llm)
        # streaming: an empty batch, filled part by part as the engine runs; else every prompt prepared first
        batch = backend.start_batch(tasks) if streaming else backend.prepare(tasks, context)
        run = _GenerationRun(backend, batch.parser, batch.results, len(tasks), on_chunk, on_progress, batch.early)
        run.recorded_answers = batch.recorded_answers
        run.kept_prompts = batch.kept_prompts
        if streaming:
            run.stream(llm, backend.prepare_parts(batch, tasks, context, SamplingParams))
        else:
            run.batched(llm, batch.runnable, [{"prompt_token_ids": batch.token_ids[i]} for i in batch.runnable],
                        [SamplingParams(**batch.sampling[i]) for i in batch.runnable])
        return batch.results, run.first_request_at
