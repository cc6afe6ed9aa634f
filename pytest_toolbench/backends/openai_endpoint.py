"""A backend that asks an OpenAI-compatible ``/chat/completions`` endpoint (``--backend openai --base-url URL``).

Standard library only (urllib + a thread pool): bounded concurrency, exponential backoff on 429/5xx and on network
errors (honouring ``Retry-After``), native tool calls (``tools=`` in the request, ``tool_calls`` in the response) or
prompt mode (messages only). For local models the in-process vLLM backend is faster and more reproducible; this one
exists for API models and already-running servers.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Mapping, Sequence

from pytest_toolbench.backends.common import (
    ChunkCallback,
    ModelBackend,
    ProgressCallback,
    Stopwatch,
    make_generation,
    progress_reporter,
)
from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.contract.suite import Generation, Request, Task

MODES = ("native", "prompt")
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class EndpointError(ToolbenchError):
    """The endpoint refused a request for good (a 4xx other than rate limiting) or kept failing after every retry."""


def openai_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool docs in the OpenAI ``{"type": "function", "function": {...}}`` shape; bare function docs (BFCL-style
    ``{"name", "description", "parameters"}``) are wrapped, already-wrapped entries pass through."""
    wrapped = []
    for tool in tools:
        if "type" in tool and "function" in tool:
            wrapped.append(dict(tool))
        else:
            wrapped.append({"type": "function", "function": dict(tool)})
    return wrapped


def decode_tool_calls(message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """``message.tool_calls`` to ``[{"name", "arguments"}]``; returns the calls and a parse-error message (or None)."""
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return [], f"tool_calls[{index}]: no function name"
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError) as exc:
                return [], f"tool_calls[{index}] ({function['name']}): arguments are not JSON ({exc})"
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return [], f"tool_calls[{index}] ({function['name']}): arguments are not an object"
        calls.append({"name": function["name"], "arguments": arguments})
    return calls, None


class OpenAIEndpointBackend(ModelBackend):
    """Chat completions over HTTP for every task, ``concurrency`` requests in flight at a time."""

    name = "openai"
    MODES = MODES

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
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if concurrency < 1 or chunk_size < 1 or max_retries < 0 or not commit_seconds > 0:
            raise ValueError("concurrency and chunk_size must be >= 1, max_retries >= 0, commit_seconds > 0")
        super().__init__(model, mode=mode, temperature=temperature, max_tokens=max_tokens, seed=seed,
                         chunk_size=chunk_size, commit_seconds=commit_seconds, on_progress=on_progress,
                         on_chunk=on_chunk)
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

    # -- Backend protocol ---------------------------------------------------------------------------------------------

    def fingerprint(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "mode": self.mode,
            "sampling": self._sampling(),
            "extra_body": self.extra_body,
        }

    @classmethod
    def from_options(cls, options: Any) -> "OpenAIEndpointBackend":
        """From the plugin's resolved ``RunOptions``: the shared model settings (``--model``, ``--toolbench-mode``,
        sampling, commit rhythm) and the endpoint (``backend_options``, an ``OpenAIOptions``)."""
        settings = cls.settings_from(options)
        settings["chunk_size"] = settings["chunk_size"] or 64
        return cls(options.backend_options.base_url, options.model, api_key_env=options.generation.api_key_env,
                   **settings)

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
                    futures[pool.submit(self._complete, task.request)] = index
                    return

            for _ in range(self.concurrency):
                submit_next()
            try:
                while futures:
                    # wake up when the oldest uncommitted answer is commit_seconds old, even if nothing finishes
                    timeout = (max(0.0, self.commit_seconds - (time.perf_counter() - last_commit))
                               if on_chunk and pending_chunk else None)
                    finished, _ = wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
                    for future in finished:
                        index = futures.pop(future)
                        results[index] = future.result()
                        pending_chunk.append((index, results[index]))
                        done += 1
                        prompt_tokens += results[index].prompt_tokens or 0
                        output_tokens += results[index].output_tokens or 0
                        submit_next()
                        if on_chunk and len(pending_chunk) >= self.chunk_size:  # exactly chunk_size a commit
                            on_chunk(pending_chunk)
                            pending_chunk, last_commit = [], time.perf_counter()
                    if on_chunk and pending_chunk and time.perf_counter() - last_commit >= self.commit_seconds:
                        on_chunk(pending_chunk)
                        pending_chunk, last_commit = [], time.perf_counter()
                    if report and finished:
                        report(done, len(tasks), prompt_tokens, output_tokens)
            except BaseException:
                for future in futures:
                    future.cancel()
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
        sampling: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            sampling["top_p"] = self.top_p
        if self.seed is not None:
            sampling["seed"] = self.seed + sample  # --toolbench-repeat: sample k draws with seed + k
        return sampling

    def request_body(self, request: Request) -> dict[str, Any]:
        messages = request.messages_for(self.mode == "native")
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        body.update(self._sampling(request.sample))
        body["temperature"] = self.temperature_for(request)  # --toolbench-temperature, else the suite's, else greedy
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if self.mode == "native" and request.tools:
            body["tools"] = openai_tools(request.tools)
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, body: Mapping[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                http_request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
                with urllib.request.urlopen(http_request, timeout=self.timeout_s) as response:
                    return json.loads(_decode_body(response.read()))
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:500].decode("utf-8", "replace")
                if exc.code not in _RETRYABLE_STATUS:
                    raise EndpointError(f"{url}: HTTP {exc.code}: {detail}") from None
                failure = f"HTTP {exc.code}: {detail}"
                retry_after = _retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError) as exc:
                # ValueError: a truncated or non-JSON body from an overloaded proxy; worth another try.
                failure = f"{type(exc).__name__}: {exc}"
            if attempt == self.max_retries:
                raise EndpointError(f"{url}: giving up after {attempt + 1} attempts; last error {failure}")
            self._stats.extra["retries"] += 1
            delay = min(self.backoff_max_s, self.backoff_initial_s * 2**attempt)
            delay = delay * (0.5 + random.random() / 2)  # jitter, so concurrent retries do not stampede
            self._sleep(max(delay, min(retry_after or 0.0, self.backoff_max_s)))
        raise AssertionError("unreachable")

    def _complete(self, request: Request) -> Generation:
        response = self._post(self.request_body(request))
        try:
            choice = response["choices"][0]
            message = choice.get("message") or {}
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"{self.base_url}: response without choices: {str(response)[:300]}") from None
        usage = response.get("usage") or {}
        text = message.get("content") or ""
        tool_calls: list[dict[str, Any]] | None = None
        parse_error = None
        if self.mode == "native":
            tool_calls, parse_error = decode_tool_calls(message)
            if parse_error is not None:
                tool_calls = None
        return make_generation(
            text=text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            tool_calls=tool_calls,
            parse_error=parse_error,
        )


def _decode_body(data: bytes) -> str:
    """The response text, whatever bytes a model's output put in it: a surrogate some servers send as raw
    (CESU-8) bytes is kept as that surrogate, any other invalid byte as an escape; none is a reason to retry (the
    answer would be the same) or to lose the answer. The cache stores such text losslessly."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; the exponential delay applies
