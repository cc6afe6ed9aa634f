"""Interactive cases in pre-generation: every live conversation (one per case and sample) driven by the engine's
answers, either without rounds on a backend that takes requests while it runs (:func:`converse`, a
:class:`~pytest_toolbench.contract.engine.StreamingBackend`), or in step-synchronous rounds (:func:`run_rounds`: step
*k* of every live conversation generated in one batch, tool calls executed on CPU, then the next round). Both make the
same requests."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..contract.engine import CommitRhythm, GenerationStream, StreamingBackend, offers
from ..contract.errors import MissingOutput
from ..contract.suite import Case, Generation, Request, Task
from .batches import generate_missing, start_backend
from .cache import ConversationKeys, GenerationCache, decode_generation, encode_generation, request_key
from .progress import STOP_REQUESTED, PregenerationStats, ProgressMeter
from .requests import finalize_request, suite_generation


def run_rounds(entries: Sequence[tuple[Any, Case, int]], backend: Any, cache: GenerationCache,
               fingerprint: dict[str, Any], max_tokens: int | None, stats: PregenerationStats,
               progress: Callable[[str], None], status: Callable[[str], None] | None = None) -> None:
    """Step-synchronous rounds across all live conversations (one per case and sample); every round is committed
    before the next."""
    live: list[list[Any]] = []  # [suite, case, generator, pending request, step, sample]
    failed: list[str] = []
    for suite, case, sample in entries:
        try:
            conversation = suite.benchmark.conversation(case)
            live.append([suite, case, conversation, next(conversation), 0, sample])
        except StopIteration:
            continue
        except Exception as error:  # noqa: BLE001 - that case fails when it is scored (it re-runs the same code)
            failed.append(f"{case.case_id} ({type(error).__name__}: {error})")
    while live:
        stats.rounds += 1
        tasks = [Task(case, finalize_request(req, suite_generation(suite), max_tokens, sample), step,
                      in_conversation=True)
                 for suite, case, _, req, step, sample in live]
        before = stats.generated
        keys = [request_key(fingerprint, task.request) for task in tasks]
        meter = generate_missing(tasks, backend, cache, fingerprint, stats, progress, status, f"round {stats.rounds}",
                                 final_line=False, keys=keys)
        still_live = []
        for entry, task, key in zip(live, tasks, keys):
            generation = cache.get(key)
            if generation is None:
                raise MissingOutput(f"generation for {task.case.case_id} step {task.step} was not stored")
            try:
                entry[3] = entry[2].send(generation)
                entry[4] += 1
                still_live.append(entry)
            except StopIteration:
                pass
            except Exception as error:  # noqa: BLE001 - as above: one conversation stops, the round goes on
                failed.append(f"{task.case.case_id} ({type(error).__name__}: {error})")
        progress(f"round {stats.rounds}: {len(tasks)} requests from {len(live)} conversations "
                 f"({stats.generated - before} generated, {len(tasks) - (stats.generated - before)} from cache or "
                 f"shared); {len(still_live)} conversations still running"
                 + (f"; {meter.rates()}" if meter is not None else ""))
        live = still_live
    if failed:
        progress(f"{len(failed)} conversations stopped on an error and will fail when scored: "
                 + "; ".join(failed[:3]) + (" ..." if len(failed) > 3 else ""))


class BatchStream(GenerationStream):
    """A stream over a backend's plain ``generate``: everything added since the last step is generated in one call
    (an engine that cannot take requests while it runs)."""

    def __init__(self, backend: Any):
        self.backend = backend
        self.tasks: list[Task] = []
        self.tags: list[Any] = []

    def add(self, tasks: Sequence[Task], tags: Sequence[Any]) -> None:
        self.tasks += tasks
        self.tags += tags

    def pending(self) -> int:
        return len(self.tasks)

    def step(self) -> list[tuple[Any, Generation]]:
        tasks, tags, self.tasks, self.tags = self.tasks, self.tags, [], []
        return list(zip(tags, self.backend.generate(tasks))) if tasks else []

    def close(self) -> None:
        pass


@dataclass
class _Conversation:
    suite: Any
    case: Case
    steps: Any  # the benchmark's conversation generator
    sample: int
    step: int = 0


def converse(entries: Sequence[tuple[Any, Case, int]], backend: Any, cache: GenerationCache,
             fingerprint: dict[str, Any], max_tokens: int | None, stats: PregenerationStats,
             progress: Callable[[str], None], status: Callable[[str], None] | None = None) -> None:
    """Every live conversation (one per case and sample) driven by the engine's answers, without rounds: a
    conversation's next request goes to the engine as soon as its previous answer has arrived and its tools have run,
    while the others' requests are being generated (a :class:`StreamingBackend`'s ``open_stream()``: requests added at any time, answers
    handed back as they finish). The requests are the ones step-synchronous rounds make (each conversation sees the
    same answers: the same cache keys; identical requests of several conversations generated once), so transcripts
    and verdicts are the same; answers are committed every ``chunk_size`` answers or ``commit_seconds`` (its
    :class:`CommitRhythm`), whichever
    first, and a rerun after a kill replays every committed step from the cache. Cache keys are hashed incrementally
    (``ConversationKeys``) and prompts tokenized incrementally (the backend's ``prompt_segments``). ``stats.rounds``:
    the longest conversation's steps (the rounds the step-synchronous way takes)."""
    keys = ConversationKeys(fingerprint)
    live: dict[int, _Conversation] = {}
    failed: list[str] = []
    waiting: dict[str, list[int]] = {}  # a request's key -> the conversations waiting for its answer
    ready: deque[tuple[int, Generation]] = deque()  # answers to hand to their conversations
    outbox: list[tuple[str, Task]] = []  # requests to add to the engine
    unsaved: dict[str, Generation] = {}  # answered, not yet committed
    rhythm = backend if offers(backend, CommitRhythm) else None
    every = (rhythm.chunk_size if rhythm is not None else None) or 256
    commit_seconds = (rhythm.commit_seconds if rhythm is not None else None) or 30.0
    meter = ProgressMeter("conversations", len(entries), progress, status)
    longest = [0]
    counts = {"requested": 0, "generated": 0}

    def ask(number: int, request: Request) -> None:
        talk = live[number]
        task = Task(talk.case, finalize_request(request, suite_generation(talk.suite), max_tokens, talk.sample),
                    talk.step, in_conversation=True)
        key = keys.key(number, task.request)
        stats.requested += 1
        counts["requested"] += 1
        if key in waiting:  # the same request of another conversation is being generated: shared
            waiting[key].append(number)
            stats.cached += 1
            return
        answer = unsaved.get(key) or cache.get(key)
        if answer is not None:
            stats.cached += 1
            ready.append((number, answer))
            return
        waiting[key] = [number]
        outbox.append((key, task))

    def end(number: int) -> None:
        talk = live.pop(number)
        keys.forget(number)
        longest[0] = max(longest[0], talk.step)
        meter.update(len(entries) - len(live))

    def advance(number: int, answer: Generation) -> None:
        talk = live[number]
        talk.step += 1
        try:
            request = talk.steps.send(answer)  # the conversation's tools run here
        except StopIteration:
            end(number)
            return
        except Exception as error:  # noqa: BLE001 - that case fails when it is scored (it re-runs the same code)
            failed.append(f"{talk.case.case_id} ({type(error).__name__}: {error})")
            end(number)
            return
        ask(number, request)

    def commit() -> None:
        if unsaved:
            cache.put_many(list(unsaved.items()))
            unsaved.clear()

    for number, (suite, case, sample) in enumerate(entries):
        try:
            steps = suite.benchmark.conversation(case)
            first = next(steps)
        except StopIteration:
            continue
        except Exception as error:  # noqa: BLE001 - as above
            failed.append(f"{case.case_id} ({type(error).__name__}: {error})")
            continue
        live[number] = _Conversation(suite, case, steps, sample)
        ask(number, first)
    stream = None
    last_commit = time.perf_counter()
    try:
        while live:
            while ready:
                advance(*ready.popleft())
            if outbox:
                if stream is None:
                    start_backend(backend, stats, progress)
                    stream = (backend.open_stream() if offers(backend, StreamingBackend) else None) or BatchStream(backend)
                stream.add([task for _, task in outbox], [key for key, _ in outbox])
                outbox.clear()
            if not live:
                break
            if stream is None or not stream.pending():
                raise MissingOutput(f"{len(live)} conversations wait for answers that were never asked for")
            for key, answer in stream.step():
                unsaved[key] = answer
                # what a conversation reads back from the cache after a kill, so a resumed run sees the same
                shared = decode_generation(encode_generation(answer))
                counts["generated"] += 1
                stats.generated += 1
                stats.prompt_tokens += answer.prompt_tokens or 0
                stats.output_tokens += answer.output_tokens or 0
                meter.add_tokens(answer.prompt_tokens or 0, answer.output_tokens or 0)
                ready.extend((number, shared) for number in waiting.pop(key))
            now = time.perf_counter()
            if len(unsaved) >= every or (unsaved and now - last_commit >= commit_seconds):
                commit()
                last_commit = now
            meter.tick()
            if STOP_REQUESTED.is_set():  # Ctrl-C that an engine swallowed: stop within one step
                raise KeyboardInterrupt
    finally:
        commit()
        if stream is not None:
            stream.close()
    stats.rounds = max(stats.rounds, longest[0])
    progress(f"conversations: {len(entries)} ran without rounds, the longest in {longest[0]} steps; "
             f"{counts['requested']} requests ({counts['generated']} generated, "
             f"{counts['requested'] - counts['generated']} from cache or shared); {meter.rates()}")
    if failed:
        progress(f"{len(failed)} conversations stopped on an error and will fail when scored: "
                 + "; ".join(failed[:3]) + (" ..." if len(failed) > 3 else ""))
