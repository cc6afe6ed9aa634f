"""Requests and answers in the tests: the request a case asks (suite.yaml's limits applied), the answerer that
reads the generation cache (or asks an on-the-spot backend), and one case's final output, a conversation's included
(:func:`run_case`). Pre-generation (``run.generation``) builds the same requests."""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..contract.errors import MissingOutput
from ..contract.suite import Case, Generation, Request, Task
from .cache import CacheError, GenerationCache, request_key


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
