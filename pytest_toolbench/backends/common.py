"""Pieces shared by the model backends: the modes, run statistics, callbacks, Generation building.

Nothing here imports vllm, torch or transformers.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Mapping, Sequence

from pytest_toolbench.prompting.sampling_record import SamplingRecord
from pytest_toolbench.contract.engine import CommitRhythm, StatsBackend
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation

#: ``on_progress(done, total)``: called as requests finish (done counts requests of this ``generate`` call). The
#: core's callback also takes ``prompt_tokens=`` and ``output_tokens=`` (of the finished requests so far) for its
#: tokens-per-second figures; :func:`progress_reporter` passes them only to a callback that accepts them.
ProgressCallback = Callable[..., None]
#: ``on_chunk([(index, generation), ...])``: a finished group of results, indices into the ``tasks`` argument, so the
#: caller can commit them to its cache before the rest of the run finishes.
ChunkCallback = Callable[[list[tuple[int, Generation]]], None]

_GENERATION_FIELDS = {f.name for f in dataclasses.fields(Generation)}

#: ``--toolbench-mode`` values: ``prompt`` (the tools described in the prompt, calls parsed from the text) or ``native``
#: (the tools passed to the chat template or API as ``tools=``, calls parsed by the tool parser or the API)
MODES = ("prompt", "native")


def progress_reporter(on_progress: ProgressCallback | None) -> Callable[[int, int, int, int], None] | None:
    """``report(done, total, prompt_tokens, output_tokens)`` for a backend: the token counts go to an
    ``on_progress`` that takes them as keywords; a two-argument callback gets the two counts only."""
    if on_progress is None:
        return None
    import inspect

    try:
        inspect.signature(on_progress).bind(0, 0, prompt_tokens=0, output_tokens=0)
        with_tokens = True
    except (TypeError, ValueError):
        with_tokens = False
    if with_tokens:
        return lambda done, total, prompt, output: on_progress(done, total, prompt_tokens=prompt,
                                                               output_tokens=output)
    return lambda done, total, prompt, output: on_progress(done, total)


def make_generation(
    text: str,
    finish_reason: str | None,
    prompt_tokens: int | None,
    output_tokens: int | None,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
    parse_error: str | None = None,
) -> Generation:
    """Build a Generation; a native-mode parse failure leaves ``tool_calls`` as None and, where the contract has a
    ``parse_error`` field, records the parser's message there (scorers report it as ``format_error``)."""
    values: dict[str, Any] = {
        "text": text,
        "finish_reason": finish_reason,
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "tool_calls": None if tool_calls is None else [dict(call) for call in tool_calls],
    }
    if parse_error is not None and "parse_error" in _GENERATION_FIELDS:
        values["parse_error"] = parse_error
    return Generation(**values)


@dataclass
class GenerationStats:
    """Accumulated over every ``generate`` call of one backend."""

    requests: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    generation_seconds: float = 0.0  # wall time inside generate calls
    engine_start_seconds: float | None = None  # in-process engines only
    truncated: int = 0
    calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, generations: Sequence[Generation], seconds: float) -> None:
        self.calls += 1
        self.requests += len(generations)
        self.prompt_tokens += sum(g.prompt_tokens or 0 for g in generations)
        self.output_tokens += sum(g.output_tokens or 0 for g in generations)
        self.truncated += sum(1 for g in generations if g.truncated)
        self.generation_seconds += seconds

    def add_first_request_wait(self, seconds: float) -> None:
        """How long an engine waited in one call for the host to prepare its first request (the preparation it
        could not overlap), summed over calls as ``extra["first_request_seconds"]``."""
        self.extra["first_request_seconds"] = round(self.extra.get("first_request_seconds", 0.0) + seconds, 6)

    def as_dict(self) -> dict[str, Any]:
        seconds = self.generation_seconds
        data = dataclasses.asdict(self)
        data["output_tokens_per_second"] = self.output_tokens / seconds if seconds > 0 else None
        data["total_tokens_per_second"] = (self.prompt_tokens + self.output_tokens) / seconds if seconds > 0 else None
        return data


class Stopwatch:
    def __enter__(self) -> "Stopwatch":
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def package_version(*distributions: str) -> str | None:
    """Installed version of the first distribution found, read from metadata (the package is not imported)."""
    for name in distributions:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


class ModelBackend(StatsBackend, CommitRhythm):
    """What the model backends (the in-process vLLM engine, an OpenAI-compatible endpoint) share by design: the model
    they ask, the mode, the sampling settings, the commit rhythm (``chunk_size`` results or ``commit_seconds``,
    whichever first: :class:`~pytest_toolbench.contract.engine.CommitRhythm`), the callbacks and the run statistics
    (:class:`~pytest_toolbench.contract.engine.StatsBackend`). Subclasses validate their own arguments and add theirs.
    """

    capabilities = MODEL_BACKEND
    MODES = MODES

    def __init__(self, model: str, *, mode: str, temperature: float | None, max_tokens: int, seed: int | None,
                 chunk_size: int | None, commit_seconds: float, on_progress: ProgressCallback | None,
                 on_chunk: ChunkCallback | None, keep_prompts: bool = False):
        if mode not in self.MODES:
            raise ValueError(f"mode must be one of {self.MODES}, got {mode!r}")
        self.model = model
        self.mode = mode
        #: ``--toolbench-temperature``; None: each request's (its suite's) own, else greedy
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.chunk_size = chunk_size
        self.commit_seconds = commit_seconds
        self.on_progress = on_progress
        self.on_chunk = on_chunk
        #: ``--toolbench-keep-prompts``: each Generation carries what was sent (``Generation.prompts``)
        self.keep_prompts = keep_prompts
        self._stats = GenerationStats()
        #: what each suite's requests carried (``sampling_record``), for the run header's ``sampling.sent``
        self._sent = SamplingRecord()

    @staticmethod
    def settings_from(options: Any) -> dict[str, Any]:
        """The shared keyword arguments from the plugin's ``RunOptions`` (model, mode, sampling, commit rhythm);
        ``max_tokens`` defaults to 512 and ``chunk_size`` is None (the backend's own default) when not given."""
        generation, cache = options.generation, options.cache
        return {"mode": generation.mode, "temperature": generation.temperature, "seed": generation.seed,
                "max_tokens": generation.max_tokens or 512, "chunk_size": cache.commit_every,
                "commit_seconds": cache.commit_seconds,
                "keep_prompts": bool(getattr(generation, "keep_prompts", False))}

    def temperature_for(self, request: Any) -> float:
        """``--toolbench-temperature`` when given, else the suite's (its official harness's), else greedy."""
        if self.temperature is not None:
            return self.temperature
        return request.temperature if request.temperature is not None else 0.0

    @property
    def generation_stats(self) -> GenerationStats:
        """The statistics ``generate`` calls add to (an engine's conversation stream adds its own calls)."""
        return self._stats

    def stats(self) -> dict[str, Any]:
        data = self._stats.as_dict()
        if self._sent:
            data["sampling_sent"] = self._sent.to_json()
        return data
