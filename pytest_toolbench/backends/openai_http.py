"""The endpoint backend's HTTP: JSON over ``urllib`` with retries, exponential backoff with jitter on 429/5xx and on
network errors (honouring ``Retry-After``), and the one error of a server that stops answering mid-run (it had
answered, then refuses twice in a row), naming the last HTTP error it returned. Standard library only."""

from __future__ import annotations

import json
import os
import random
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Mapping

from pytest_toolbench.backends.common import GenerationStats
from pytest_toolbench.backends.openai_wire import GONE, RETRYABLE_STATUS, EndpointError, ServerGone, decode_body, \
    retry_after_seconds


class HttpTransport:
    """GET and POST of JSON for :class:`~pytest_toolbench.backends.openai_endpoint.OpenAIEndpointBackend`, which
    sets the attributes below in its constructor (one backend, one server, requests from several threads)."""

    base_url: str
    api_key_env: str | None
    timeout_s: float
    max_retries: int
    backoff_initial_s: float
    backoff_max_s: float
    _sleep: Callable[[float], None]
    _lock: threading.Lock
    #: successful responses in the backend's life: a refusal after one means the server died
    _answered: int
    #: "HTTP 500 on <request>: <body>"
    _last_http_error: str | None
    #: set once the server is found gone: every request stops at once
    _gone: ServerGone | None
    #: another request failed the run: no more retries
    _stopping: bool
    #: the backend's statistics (``extra["retries"]`` counts the retries)
    _stats: GenerationStats

    def _get(self, url: str) -> Any:
        request = urllib.request.Request(url, headers=self._headers(), method="GET")
        try:
            with urllib.request.urlopen(request, timeout=min(self.timeout_s, 30.0)) as response:
                return json.loads(decode_body(response.read()))
        except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError) as exc:
            raise EndpointError(f"GET {url}: {exc}") from None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, body: Mapping[str, Any], url: str | None = None, label: str = "a request",
              quiet: bool = False) -> dict[str, Any]:
        """POST with retries; ``label`` names the request in errors; ``quiet``: a refusal of this route (a server
        without it) is not remembered as the server's last error."""
        data = json.dumps(body).encode()
        url = url or f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            if self._gone is not None:  # another request found the server dead: stop at once, not after retries
                raise self._gone
            if self._stopping and attempt:  # another request failed the run: no more retries
                raise EndpointError(f"{url}: not retried on {label}: the run stopped on another request's error")
            retry_after: float | None = None
            try:
                http_request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
                with urllib.request.urlopen(http_request, timeout=self.timeout_s) as response:
                    answer = json.loads(decode_body(response.read()))
                with self._lock:
                    self._answered += 1
                return answer
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:500].decode("utf-8", "replace")
                if not (quiet and exc.code not in RETRYABLE_STATUS):
                    with self._lock:
                        self._last_http_error = f"HTTP {exc.code} on {label}: {detail}"
                if exc.code not in RETRYABLE_STATUS:
                    raise EndpointError(f"{url}: HTTP {exc.code} on {label}: {detail}") from None
                failure = f"HTTP {exc.code}: {detail}"
                retry_after = retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError) as exc:
                # ValueError: a truncated or non-JSON body from an overloaded proxy; worth another try.
                failure = f"{type(exc).__name__}: {exc}"
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, GONE) and (self._answered or self._last_http_error) and attempt >= 1:
                    # It answered before and refuses twice in a row: it is gone, not busy.
                    raise self._server_gone(url, reason, label) from None
            if attempt == self.max_retries:
                last = self._last_http_error
                last = f"; the server's last HTTP error: {last}" if last and not failure.startswith("HTTP") else ""
                raise EndpointError(f"{url}: giving up after {attempt + 1} attempts on {label}; last error "
                                    f"{failure}{last}")
            self._stats.extra["retries"] += 1
            delay = min(self.backoff_max_s, self.backoff_initial_s * 2**attempt)
            delay = delay * (0.5 + random.random() / 2)  # jitter, so concurrent retries do not stampede
            self._sleep(max(delay, min(retry_after or 0.0, self.backoff_max_s)))
        raise AssertionError("unreachable")

    def _server_gone(self, url: str, reason: BaseException, label: str) -> ServerGone:
        with self._lock:
            if self._gone is None:
                last = (f"its last HTTP error: {self._last_http_error}" if self._last_http_error else
                        "it returned no HTTP error before")
                self._gone = ServerGone(
                    f"the server at {self.base_url} stopped answering mid-run ({type(reason).__name__}: {reason} on "
                    f"{label}, after {self._answered} answers); {last}. Every answer that finished is kept in the "
                    f"cache; restart the server and rerun to generate the rest")
            return self._gone
