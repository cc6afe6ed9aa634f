"""Getting answers: batched pre-generation on the engine's owner, and per-case answering in the tests.

Pre-generation takes every selected case, drops those already cached, sorts the rest longest-first (OOMs surface
early, ETAs are upper bounds) and hands them to the backend in one call; the backend reports finished chunks, and each
chunk is committed to the cache at once. Interactive suites run without rounds on a backend that takes requests
while it runs (``open_stream``: each conversation's next request is sent as soon as its previous answer has arrived
and its tools have run; :func:`converse`), else in step-synchronous rounds: step *k* of every live conversation is
generated in one batch, tool calls execute on CPU, then the next round starts. Both make the same requests.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..contract.errors import MissingOutput
from ..contract.suite import Case, Generation, Request, Task
from .cache import CacheError, ConversationKeys, GenerationCache, decode_generation, encode_generation, request_key


#: Set when the user asked the run to stop (Ctrl-C; ``plugin.lifecycle`` sets it): the next progress report raises
#: KeyboardInterrupt again, should an engine have swallowed the first one, so generation stops within one engine step.
STOP_REQUESTED = threading.Event()
#: Set while answers are written to the cache: a Ctrl-C then waits for the write to finish (the flag above raises it
#: right after), so that an interrupt never rolls back a chunk of finished answers.
COMMITTING = threading.Event()


def finalize_request(request: Request, settings: Mapping[str, Any] | int,
                     max_tokens_option: int | None, sample: int = 0) -> Request:
    """``--toolbench-max-tokens`` wins, then a limit the request itself carries (only a simulated user's turn sets
    one: it is another model's setting), then suite.yaml's ``generation.max_tokens``: no hidden defaults. The suite's
    ``temperature`` and ``context_reserve`` go with the request too (``--toolbench-temperature``, applied by the
    backend, wins over the former); a simulated user's turn keeps its own settings. ``sample``: which of the
    case's ``--toolbench-repeat`` samples the request is for (a simulated user's turns too: each sample is its own
    conversation)."""
    if not isinstance(settings, Mapping):
        settings = {"max_tokens": settings}
    max_tokens = max_tokens_option or request.max_tokens or int(settings["max_tokens"])
    if request.simulates:
        return dataclasses.replace(request, max_tokens=max_tokens, sample=sample)
    temperature = request.temperature if request.temperature is not None else settings.get("temperature")
    reserve = request.context_reserve or int(settings.get("context_reserve", 0))
    return dataclasses.replace(request, max_tokens=max_tokens, temperature=temperature, context_reserve=reserve,
                               sample=sample)


def suite_generation(suite: Any) -> Mapping[str, Any] | int:
    """suite.yaml's ``generation:`` settings of a loaded suite (a definition without them: its ``max_tokens``)."""
    definition = suite.definition
    generation = getattr(definition, "generation", None)
    return generation if isinstance(generation, Mapping) else definition.max_tokens


#: The request handed to backends that answer by case and never read the prompt.
UNRENDERED = Request(messages=())


@dataclass
class Answerer:
    """Answers one task at a time: from the cache for engine backends, from the backend itself otherwise.

    ``backend`` is None on xdist workers running an engine backend: they only read what the controller generated.
    """

    backend: Any
    cache: GenerationCache | None
    fingerprint: dict[str, Any]
    offline: bool = False

    def __call__(self, task: Task) -> Generation:
        cacheable = self.cache is not None and (self.backend is None or self.backend.capabilities.cacheable)
        if cacheable:
            key = request_key(self.fingerprint, task.request)
            try:
                cached = self.cache.get(key)
            except CacheError as error:  # this case's failure, one line; not a traceback per case
                raise MissingOutput(f"{task.case.suite} case {task.case.case_id!r} (step {task.step}): {error}") \
                    from None
            if cached is not None:
                return cached
            if self.offline or self.backend is None:
                why = "--toolbench-offline" if self.offline else "this process does not own the engine"
                raise MissingOutput(f"no cached generation for {task.case.suite} case {task.case.case_id!r} "
                                    f"(step {task.step}); {why}")
            generation = self.backend.generate([task])[0]
            self.cache.put_many([(key, generation)])  # kept in memory when the file cannot be written
            return generation
        return self.backend.generate([task])[0]


def converses(suite: Any, case: Case, backend: Any = None) -> bool:
    """Whether a case runs as a conversation: its suite is interactive, the benchmark's optional
    ``is_interactive(case)`` agrees (a suite may mix single-shot and agent cases), and the backend does not hand out
    finished outputs (``final_outputs``, e.g. replayed transcripts)."""
    if not suite.interactive or (backend is not None and backend.capabilities.final_outputs):
        return False
    decide = getattr(suite.benchmark, "is_interactive", None)
    return bool(decide(case)) if callable(decide) else True


class Unavailable(Exception):
    """A conversation that cannot run here (see ``InteractiveBenchmark.unavailable``); the message says why."""


def unavailable(suite: Any, case: Case, backend: Any = None) -> str | None:
    """Why the case's conversation cannot run on this machine, or None (also None when it does not converse).

    A benchmark's ``unavailable(case, backend)`` (two parameters) is also told the run's backend: None on an xdist
    worker of an engine run (the engine is the controller's), else the backend object (``name``, ``capabilities``)
    -- for a suite whose conversations only the gold backend can hold yet (τ²-bench)."""
    decide = getattr(suite.benchmark, "unavailable", None)
    if not callable(decide) or not converses(suite, case, backend):
        return None
    return decide(case, backend) if _takes_backend(decide) else decide(case)


def _takes_backend(function: Callable) -> bool:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def run_case(case: Case, suite: Any, answer: Callable[[Task], Generation], max_tokens: int | None,
             sample: int = 0) -> Generation:
    """The model's final output for a case (its ``sample``-th, with ``--toolbench-repeat``): one answer, or the
    transcript of an interactive conversation. Raises :class:`Unavailable` for a conversation that cannot run here."""
    benchmark = suite.benchmark
    limit = suite_generation(suite)
    backend = getattr(answer, "backend", None)
    reason = unavailable(suite, case, backend)
    if reason:
        raise Unavailable(reason)
    if not converses(suite, case, backend):
        if backend is not None and not backend.capabilities.reads_requests:
            # gold and replay answer by case; rendering the prompt for them would be wasted work (it is most of
            # the time of a replay run)
            return answer(Task(case, dataclasses.replace(UNRENDERED, sample=sample) if sample else UNRENDERED, 0))
        request = finalize_request(benchmark.build_request(case), limit, max_tokens, sample)
        return answer(Task(case, request, 0))
    conversation = benchmark.conversation(case)
    step = 0
    stats = _Tally()
    try:
        request = next(conversation)
        while True:
            generation = answer(Task(case, finalize_request(request, limit, max_tokens, sample), step,
                                     in_conversation=True))
            stats.add(generation)
            step += 1
            request = conversation.send(generation)
    except StopIteration as done:
        return Generation(text=json.dumps(done.value, ensure_ascii=False, default=str),
                          finish_reason="length" if stats.truncated else "stop",
                          prompt_tokens=stats.prompt_tokens, output_tokens=stats.output_tokens,
                          prompts=stats.prompts or None)


@dataclass
class _Tally:
    prompt_tokens: int = 0
    output_tokens: int = 0
    truncated: bool = False
    #: every step's prompts, in order (``--toolbench-keep-prompts``; empty when none was kept)
    prompts: list = field(default_factory=list)

    def add(self, generation: Generation) -> None:
        self.prompt_tokens += generation.prompt_tokens or 0
        self.output_tokens += generation.output_tokens or 0
        self.truncated = self.truncated or generation.truncated
        self.prompts.extend(generation.prompts or ())


@dataclass
class PregenerationStats:
    requested: int = 0
    cached: int = 0
    generated: int = 0
    rounds: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0  # the whole pre-generation, engine start-up included
    engine_startup_s: float | None = None  # building the engine (None: a backend without one)
    backend: dict[str, Any] = field(default_factory=dict)
    started_backend: bool = False  # start_backend ran (it runs once, before the first request)

    @property
    def generation_s(self) -> float:
        """Wall seconds of generation: pre-generation less the engine's start-up."""
        return max(0.0, self.seconds - (self.engine_startup_s or 0.0))

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("started_backend")
        seconds = self.generation_s
        data.update(
            requests=self.generated,
            generation_s=round(seconds, 3),
            engine_startup_s=None if self.engine_startup_s is None else round(self.engine_startup_s, 3),
            prompt_tokens_per_s=round(self.prompt_tokens / seconds, 1) if seconds and self.generated else None,
            output_tokens_per_s=round(self.output_tokens / seconds, 1) if seconds and self.generated else None,
        )
        return data


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m") + f"{rest % 60:02d}s"


class ProgressMeter:
    """Requests done/total, prompt and generation tokens per second, elapsed and ETA, the way vLLM's and pytest's
    users expect them: ``status`` (one updating line on a terminal) gets every change, else ``line`` gets a plain
    line at every tenth of the requests and at least every ``interval`` seconds (CI logs).

    The ETA is the remaining work over the work done so far per second, work counted in tokens (prompt plus
    output), not in requests: prompts run longest first, so the first requests are the slowest and a per-request
    rate would overstate the rest many times over. ``sizes`` (each request's prompt size in characters, in the
    order the engine gets them) gives the remaining prompts' tokens, at the characters-per-token ratio of those
    done; the remaining outputs are counted at the mean output length so far. Without ``sizes``, requests weigh
    alike. Requests still in flight are not counted as done, so with a full batch the ETA errs long early on."""

    def __init__(self, label: str, total: int, line: Callable[[str], None],
                 status: Callable[[str], None] | None = None, interval: float = 30.0,
                 clock: Callable[[], float] = time.perf_counter, sizes: Sequence[int] | None = None):
        self.label, self.total, self._line, self._status, self.interval = label, total, line, status, interval
        self._clock = clock
        self.started = clock()
        self.done = self.prompt_tokens = self.output_tokens = 0
        self._tenth = 0
        self._last_line = self.started
        # prefix sums of the prompt sizes, longest first: the first ``done`` are (about) those finished
        self._size_sums = list(itertools.accumulate(sizes, initial=0)) if sizes and len(sizes) == total else None

    def rates(self) -> str:
        """Prompt and generation tokens per second and the elapsed time."""
        elapsed = self._clock() - self.started
        rates = (f"prompt {self.prompt_tokens / elapsed:,.0f} tok/s, generation {self.output_tokens / elapsed:,.1f} "
                 "tok/s, " if elapsed > 0 else "")
        return f"{rates}elapsed {_duration(elapsed)}"

    def eta_seconds(self) -> float | None:
        """Seconds left, from the tokens left (see the class); None before any request is done or after the last."""
        done, total = self.done, self.total
        if not 0 < done < total:
            return None
        elapsed = self._clock() - self.started
        work_done = self.prompt_tokens + self.output_tokens
        if work_done <= 0:  # no token counts: the prompt sizes alone, else requests
            sums = self._size_sums
            if sums is None or sums[done] <= 0:
                return elapsed / done * (total - done)
            return elapsed * (sums[total] - sums[done]) / sums[done]
        sums = self._size_sums
        if sums is not None and sums[done] > 0:
            prompts_left = self.prompt_tokens * (sums[total] - sums[done]) / sums[done]
        else:
            prompts_left = self.prompt_tokens / done * (total - done)
        outputs_left = self.output_tokens / done * (total - done)
        return elapsed * (prompts_left + outputs_left) / work_done

    def text(self, compact: bool = False) -> str:
        """The progress line; ``compact``: the shorter form of the terminal's status line (it must fit 80
        columns, or its redraw leaves wrapped lines behind)."""
        eta = self.eta_seconds()
        percent = 100 * self.done // max(self.total, 1)
        if compact:
            elapsed = self._clock() - self.started
            rates = (f", {self.prompt_tokens / elapsed:,.0f}+{self.output_tokens / elapsed:,.1f} tok/s"
                     if elapsed > 0 else "")
            return (f"{self.label} {self.done}/{self.total} ({percent}%){rates}, {_duration(elapsed)}"
                    + (f", ETA {_duration(eta)}" if eta is not None else ""))
        text = f"{self.label}: {self.done}/{self.total} requests ({percent}%), " + self.rates()
        if eta is not None:
            text += f", ETA {_duration(eta)}"
        return text

    def update(self, done: int, prompt_tokens: int | None = None, output_tokens: int | None = None) -> None:
        self.done = done
        if prompt_tokens is not None:
            self.prompt_tokens = prompt_tokens
        if output_tokens is not None:
            self.output_tokens = output_tokens
        if self._status is not None:
            now = self._clock()
            if done >= self.total or now - self._last_line >= 0.1:  # a terminal line, redrawn at most 10 times a second
                self._last_line = now
                self._status(self.text(compact=True))
            return
        tenth = (10 * done) // max(self.total, 1)
        now = self._clock()
        if done >= self.total:
            return  # the final line, with the final figures, follows
        if tenth > self._tenth or now - self._last_line >= self.interval:
            self._tenth = max(tenth, self._tenth)
            self._last_line = now
            self._line(self.text())

    def add_tokens(self, prompt_tokens: int, output_tokens: int) -> None:
        """Tokens of committed answers, for a backend whose progress reports carry none."""
        self.prompt_tokens += prompt_tokens
        self.output_tokens += output_tokens

    def tick(self) -> None:
        """A plain line when ``interval`` passed without one (a stall shows in a CI log as the same counts)."""
        if self._status is None and self._clock() - self._last_line >= self.interval:
            self._last_line = self._clock()
            self._line(self.text())


def _prompt_size(request: Request) -> int:
    return len(json.dumps(list(request.messages), ensure_ascii=False)) + len(json.dumps(request.tools or []))


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
    _generate_missing(tasks, backend, cache, fingerprint, stats, progress, status, "generating", keys=keys)

    if interactive:
        if callable(getattr(backend, "open_stream", None)) and getattr(backend, "continuous", False):
            converse(interactive, backend, cache, fingerprint, max_tokens, stats, progress, status)
        else:
            _run_rounds(interactive, backend, cache, fingerprint, max_tokens, stats, progress, status)
    stats.seconds = time.perf_counter() - started
    if hasattr(backend, "stats"):
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
    startable = callable(getattr(backend, "start", None)) and not stats.started_backend
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


def start_backend(backend: Any, stats: PregenerationStats, progress: Callable[[str], None]) -> None:
    """Start an engine before the first request (an optional ``start()`` of the backend), so its start-up is not
    counted as generation time in the throughput and ETA."""
    if stats.started_backend:
        return
    stats.started_backend = True
    listen = getattr(backend, "listen", None)
    if callable(listen):  # a backend with news of its own to tell as it happens (engine replicas that die)
        listen(progress)
    start = getattr(backend, "start", None)
    if callable(start):
        started = time.perf_counter()
        start()
        # the whole start as the user waits for it (importing the engine's packages included), so the header's
        # start-up and generation seconds add up to the pre-generation time
        stats.engine_startup_s = time.perf_counter() - started
        progress(f"engine started in {stats.engine_startup_s:.1f}s")


def _generate_missing(tasks: list[Task], backend: Any, cache: GenerationCache, fingerprint: dict[str, Any],
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
    size = {key: _prompt_size(task.request) for key, task in todo.items()}
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


def _run_rounds(entries: Sequence[tuple[Any, Case, int]], backend: Any, cache: GenerationCache,
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
        meter = _generate_missing(tasks, backend, cache, fingerprint, stats, progress, status, f"round {stats.rounds}",
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


class _BatchStream:
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
    while the others' requests are being generated (``backend.open_stream()``: requests added at any time, answers
    handed back as they finish). The requests are the ones step-synchronous rounds make (each conversation sees the
    same answers: the same cache keys; identical requests of several conversations generated once), so transcripts
    and verdicts are the same; answers are committed every ``chunk_size`` answers or ``commit_seconds``, whichever
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
    every = getattr(backend, "chunk_size", None) or 256
    commit_seconds = getattr(backend, "commit_seconds", None) or 30.0
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
                    stream = backend.open_stream() or _BatchStream(backend)
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


#: runs remembered per fingerprint in the cache folder's generation-runs file (the latest kept)
REMEMBERED_RUNS = 10
_RUN_FIGURES = ("generated", "prompt_tokens", "output_tokens", "generation_s", "engine_startup_s",
                "prompt_tokens_per_s", "output_tokens_per_s", "rounds")


def _fingerprint_key(fingerprint: Mapping[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True, default=str).encode()).hexdigest()


def earlier_generation_runs(path: Any, fingerprint: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The figures of the earlier runs that generated answers for ``fingerprint`` into this cache (oldest first);
    [] when there are none or the file is unreadable (it only informs the report)."""
    try:
        runs = json.loads(open(path, encoding="utf-8").read()).get(_fingerprint_key(fingerprint), [])
    except (OSError, ValueError, AttributeError):
        return []
    return [run for run in runs if isinstance(run, dict)] if isinstance(runs, list) else []


def remember_generation_run(path: Any, fingerprint: Mapping[str, Any], figures: Mapping[str, Any],
                            finished: float | None = None) -> None:
    """Add this run's generation figures to the cache folder's record (best effort: a read-only cache folder keeps
    none), so that a report made later from these cached answers can say how they were produced."""
    import os
    from datetime import datetime, timezone

    key = _fingerprint_key(fingerprint)
    try:
        with open(path, encoding="utf-8") as handle:
            runs = json.load(handle)
        if not isinstance(runs, dict):
            runs = {}
    except (OSError, ValueError):
        runs = {}
    entry = {name: figures.get(name) for name in _RUN_FIGURES if figures.get(name) is not None}
    entry["finished"] = datetime.fromtimestamp(finished or time.time(), timezone.utc).isoformat(timespec="seconds")
    runs[key] = ([run for run in runs.get(key, []) if isinstance(run, dict)] + [entry])[-REMEMBERED_RUNS:]
    try:
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
        temporary = f"{os.fspath(path)}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(runs, handle, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        pass
