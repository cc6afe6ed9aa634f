"""A stand-in for vLLM's offline engine (``vllm.LLM`` and its ``llm_engine``) for measuring the plugin's host work
without a GPU: ``benchmarks/bench_host_work.py`` puts it on the path of a real pytest run as the module ``vllm``, so
the plugin's own backend (``backends/vllm/``) drives it exactly as it drives the real engine: ``LLM(...)``,
``SamplingParams(...)``, ``LLM.enqueue``, ``llm_engine.step`` / ``has_unfinished_requests`` / ``abort_request`` and
``LLM.generate``. Everything the plugin does (collection, cache keys, rendering, tokenizing, commits, conversations,
tools, scoring) is the real code; only the engine is replaced.

Two modes (``TOOLBENCH_STUB_ENGINE``):

* ``instant``: every request is answered at its next ``step()``; what remains of the wall time is host work.
* ``latency``: the engine schedules the requests as vLLM V1's scheduler does (running requests first, one token
  each; then waiting ones, their prompts chunked into a token budget of ``max_num_batched_tokens``; at most
  ``max_num_seqs`` at once; prefix caching on 16-token blocks) and each step takes the modelled time
  ``ALPHA + BETA * scheduled tokens``, on a virtual clock shared with the host (see :class:`LLMEngine`): the host's
  time is the CPU time of the thread that drives the engine, so host work done while the engine has requests costs
  nothing, as on a GPU machine whose engine core runs in a process of its own, and every moment the engine has
  nothing queued between its start and the run's last answer is time it waited for the host. Being virtual, the
  figures hold on a busy shared machine too. Threads other than the driving one (the tokenizer loading during
  the engine's start) are not on that clock.

Answers: ``max_tokens`` token ids drawn from a generator seeded by the prompt's ids (identical prompts, identical
answers, as under greedy decoding; a random-weight model never stops early, so every answer ends on "length"),
decoded with the model's tokenizer in the front end as vLLM's output processor does. The figures (steps, tokens,
busy and idle seconds, host CPU) go to the JSON file named by ``TOOLBENCH_STUB_RECORD`` when the process exits.

Hostile answers (``benchmarks/bench_hostile_rows.py``): with ``TOOLBENCH_STUB_ANSWERS`` naming a corpus written by
``benchmarks/hostile_corpus.py``, each request is answered with one of its texts instead (chosen by the same
prompt-seeded draw, finish reason "stop"), as they are: lone surrogates, NUL bytes, 1 MB, the characters standing
for bytes that are not UTF-8.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

BLOCK = 16  # vLLM's KV block size: prefix caching reuses whole blocks

#: The latency model fitted to the H100 run of 2026-11-26 (``bench_host_work.py --fit`` derives it; docs/benchmarks.md
#: "Host work"): seconds per engine step and per token scheduled in it.
ALPHA = float(os.environ.get("TOOLBENCH_STUB_ALPHA", "0.00139"))
BETA = float(os.environ.get("TOOLBENCH_STUB_BETA", "1.311e-5"))


def _mode() -> str:
    return os.environ.get("TOOLBENCH_STUB_ENGINE", "instant")


class SamplingParams:
    """The keyword arguments the backend passes; only ``max_tokens`` changes what the stub does."""

    def __init__(self, **kwargs: Any):
        self.max_tokens = 16
        self.__dict__.update(kwargs)


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    finish_reason: str = "length"


@dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool = True


@dataclass
class _Request:
    request_id: str
    prompt: list[int]
    max_tokens: int
    computed: int = 0  # prompt tokens in the KV cache (cached or prefilled)
    generated: int = 0
    hit: bool = False  # prefix cache looked up


@dataclass
class Record:
    """What the engine saw: its start, every step's size and time, and its idle gaps."""

    mode: str
    started_at: float = 0.0  # monotonic, when LLM() returned
    first_request_at: float | None = None
    last_answer_at: float | None = None
    steps: int = 0
    scheduled_tokens: int = 0
    prefill_tokens: int = 0
    cached_tokens: int = 0
    decode_tokens: int = 0
    requests: int = 0
    busy_s: float = 0.0
    idle_gaps: list[tuple[float, float]] = field(default_factory=list)  # (from, to) while nothing was queued
    cpu_at_start: float = 0.0
    cpu_at_last_answer: float = 0.0
    core_cpu_s: float = 0.0
    engine_start_s: float = 0.0


class _Core:
    """The scheduler and its modelled step time (see the module's docstring)."""

    def __init__(self, record: Record, max_num_seqs: int, max_num_batched_tokens: int, prefix_caching: bool):
        self.record = record
        self.max_num_seqs = max_num_seqs
        self.budget = max_num_batched_tokens
        self.prefix_caching = prefix_caching
        self.waiting: deque[_Request] = deque()
        self.running: list[_Request] = []
        self.blocks: set[int] = set()

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    @staticmethod
    def _block_hashes(prompt: list[int]) -> list[int]:
        """A chain of hashes, one per full block: a block is shared only with the same prefix before it."""
        hashes, chained = [], 0
        for start in range(0, len(prompt) - BLOCK + 1, BLOCK):
            chained = hash((chained, tuple(prompt[start:start + BLOCK])))
            hashes.append(chained)
        return hashes

    def schedule(self) -> tuple[int, list[_Request]]:
        """One step: (tokens computed, requests that finished)."""
        budget, tokens = self.budget, 0
        finished: list[_Request] = []
        for request in list(self.running):  # running first: decode one token, or the next prefill chunk
            if budget <= 0:
                break
            left = len(request.prompt) - request.computed
            if left > 0:
                chunk = min(left, budget)
                request.computed += chunk
                self.record.prefill_tokens += chunk
            else:
                chunk = 1
                request.generated += 1
                self.record.decode_tokens += 1
            budget -= chunk
            tokens += chunk
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            request = self.waiting.popleft()
            if self.prefix_caching and not request.hit:
                request.hit = True
                hashes = self._block_hashes(request.prompt)
                cached = 0
                for block in hashes:
                    if block not in self.blocks:
                        break
                    cached += BLOCK
                cached = min(cached, len(request.prompt) - 1)  # vLLM recomputes at least the last prompt token
                request.computed = cached
                self.record.cached_tokens += cached
                self.blocks.update(hashes)  # computed in this or the next steps; later requests share them
            chunk = min(len(request.prompt) - request.computed, budget)
            request.computed += chunk
            self.record.prefill_tokens += chunk
            budget -= chunk
            tokens += chunk
            self.running.append(request)
        for request in list(self.running):
            if request.computed >= len(request.prompt) and request.generated == 0:
                request.generated = 1  # the step that completes a prompt also samples its first token
                self.record.decode_tokens += 1
            if request.generated >= request.max_tokens:
                self.running.remove(request)
                finished.append(request)
        self.record.steps += 1
        self.record.scheduled_tokens += tokens
        return tokens, finished


class LLMEngine:
    """``LLM.llm_engine``: requests in, outputs of finished requests out of ``step()``.

    Latency mode runs on a virtual clock: the host's time is the CPU time of the thread driving the engine (plus the
    time it spent blocked in ``step()`` waiting for the engine), the engine's time is the sum of its modelled steps.
    At every call from the host the engine is advanced to the host's time: the steps that end by then are done,
    a step starts as soon as the engine is free and has requests (requests that arrive during a step join the
    next), and time with no request queued is idle. ``step()`` hands over what finished by the host's time, or waits
    (on the virtual clock) for the step under way. So the figures do not depend on how busy the machine is: a host
    thread that gets a tenth of a core still counts its own CPU time, as it would on a GPU machine's idle host."""

    def __init__(self, llm: "LLM", max_model_len: int, max_num_seqs: int, max_num_batched_tokens: int,
                 prefix_caching: bool):
        self.llm = llm
        self.model_config = type("ModelConfig", (), {"max_model_len": max_model_len})()
        self.record = llm.record
        self.core = _Core(self.record, max_num_seqs, max_num_batched_tokens, prefix_caching)
        self.finished: deque[_Request] = deque()
        self.unfinished = 0
        self.blocked = 0.0  # virtual seconds the host waited in step()
        self.engine_time = 0.0  # when the engine is free (virtual)
        self.current: tuple[float, list[_Request]] | None = None  # the step under way: (its end, what it finishes)
        self.cpu_start = time.thread_time()

    def host_time(self) -> float:
        return time.thread_time() - self.cpu_start + self.blocked

    def _advance(self, now: float) -> None:
        """Run the engine up to the host's time ``now``."""
        while True:
            if self.current is not None:
                end, finished = self.current
                if end > now:
                    return
                self.finished.extend(finished)
                self.engine_time, self.current = end, None
            if not self.core.has_work():
                if self.engine_time < now:
                    self.record.idle_gaps.append((self.engine_time, now))
                    self.engine_time = now
                return
            tokens, finished = self.core.schedule()
            seconds = ALPHA + BETA * tokens
            self.record.busy_s += seconds
            self.current = (self.engine_time + seconds, finished)

    # -- the front end -----------------------------------------------------------------------------------------------

    def add_request(self, request_id: str, prompt: Any, params: SamplingParams) -> str:
        ids = list(prompt["prompt_token_ids"] if isinstance(prompt, dict) else prompt)
        if self.record.mode == "latency":
            now = self.host_time()
            self._advance(now)
            if self.record.first_request_at is None:
                self.record.first_request_at = now
        elif self.record.first_request_at is None:
            self.record.first_request_at = time.monotonic()
        self.core.waiting.append(_Request(request_id, ids, max(1, int(params.max_tokens))))
        self.unfinished += 1
        return request_id

    def abort_request(self, request_ids: Any, internal: bool = False) -> None:
        wanted = set(request_ids)
        before = len(self.core.waiting) + len(self.core.running)
        self.core.waiting = deque(r for r in self.core.waiting if r.request_id not in wanted)
        self.core.running = [r for r in self.core.running if r.request_id not in wanted]
        self.unfinished -= before - len(self.core.waiting) - len(self.core.running)

    def has_unfinished_requests(self) -> bool:
        return self.unfinished > 0

    def step(self) -> list[RequestOutput]:
        """Latency mode: what finished by the host's time, else the step under way's outputs once it ends (the host
        waits for it, as vLLM's front end waits for its core's next outputs). Instant mode: everything queued is
        answered now."""
        if self.record.mode == "latency":
            now = self.host_time()
            self._advance(now)
            if not self.finished and self.current is not None:
                end = self.current[0]
                self.blocked += end - now
                self._advance(end)
                now = end
            done = list(self.finished)
            self.finished.clear()
        else:
            done = list(self.core.waiting)
            self.core.waiting.clear()
        self.unfinished -= len(done)
        outputs = [self.llm.answer(request) for request in done]
        if outputs:
            self.record.requests += len(outputs)
            if self.record.mode == "latency":
                self.record.last_answer_at = now
                self.record.cpu_at_last_answer = time.thread_time() - self.cpu_start
            else:
                self.record.last_answer_at = time.monotonic()
                self.record.cpu_at_last_answer = time.process_time()
        return outputs

    def stop(self) -> None:
        pass


def _answers() -> list[str]:
    """The hostile corpus's texts (``TOOLBENCH_STUB_ANSWERS``), bytes that are not UTF-8 read as ``surrogateescape``
    characters as the corpus writes them; none without the variable."""
    path = os.environ.get("TOOLBENCH_STUB_ANSWERS")
    if not path:
        return []
    with open(path, "rb") as handle:
        lines = handle.read().decode("utf-8", "surrogateescape").splitlines()
    return [json.loads(line)["text"] for line in lines if line]


class LLM:
    """``vllm.LLM``'s surface the plugin uses. Its start-up sleeps ``TOOLBENCH_STUB_START_S`` seconds (latency mode;
    the real engine's start-up is a while of GPU work during which the host is free) after loading the tokenizer."""

    def __init__(self, model: str, max_model_len: int | None = None, enable_prefix_caching: bool = True,
                 max_num_seqs: int | None = None, max_num_batched_tokens: int | None = None, **_: Any):
        started = time.monotonic()
        self.record = Record(_mode())
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model)
        specials = set(self.tokenizer.all_special_ids)
        self.vocabulary = [i for i in range(self.tokenizer.vocab_size) if i not in specials]
        if self.record.mode == "latency":
            time.sleep(float(os.environ.get("TOOLBENCH_STUB_START_S", "3")))
        self.llm_engine = LLMEngine(self, max_model_len or 32768, max_num_seqs or 1024,
                                    max_num_batched_tokens or 16384, enable_prefix_caching)
        self.record.engine_start_s = time.monotonic() - started
        latency = self.record.mode == "latency"
        self.record.started_at = 0.0 if latency else time.monotonic()  # latency mode: the virtual clock's zero
        self.record.cpu_at_start = 0.0 if latency else time.process_time()
        self._counter = 0
        self.answers = _answers()
        atexit.register(self._write_record)

    def answer(self, request: _Request) -> RequestOutput:
        draw = random.Random(hash(tuple(request.prompt)))  # ints hash the same in every process
        if self.answers:
            text = self.answers[draw.randrange(len(self.answers))]
            ids = [self.vocabulary[draw.randrange(len(self.vocabulary))] for _ in range(min(8, request.max_tokens))]
            return RequestOutput(request.request_id, request.prompt, [CompletionOutput(text, ids, "stop")])
        ids = [self.vocabulary[draw.randrange(len(self.vocabulary))] for _ in range(request.max_tokens)]
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        return RequestOutput(request.request_id, request.prompt, [CompletionOutput(text, ids, "length")])

    def enqueue(self, prompts: list[Any], params: list[SamplingParams], use_tqdm: Any = False) -> list[str]:
        ids = []
        for prompt, param in zip(prompts, params):
            self._counter += 1
            ids.append(self.llm_engine.add_request(str(self._counter), prompt, param))
        return ids

    def generate(self, prompts: list[Any], params: list[SamplingParams], use_tqdm: Any = False) -> list[RequestOutput]:
        ids = self.enqueue(prompts, params)
        found: dict[str, RequestOutput] = {}
        while self.llm_engine.has_unfinished_requests():
            for output in self.llm_engine.step():
                found[output.request_id] = output
        return [found[i] for i in ids]

    def reset_prefix_cache(self) -> bool:
        self.llm_engine.core.blocks.clear()
        return True

    def _write_record(self) -> None:
        self.llm_engine.stop()
        path = os.environ.get("TOOLBENCH_STUB_RECORD")
        if path:
            data = dict(self.record.__dict__)
            data["alpha"], data["beta"] = ALPHA, BETA
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
