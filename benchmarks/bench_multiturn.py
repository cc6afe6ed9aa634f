"""BFCL multi-turn generation: batched rounds against one conversation at a time and against a thread pool of
per-conversation requests to a local ``vllm serve``, on the same model and the same conversations, in one run.

    TOOLBENCH_DATA=../shared/data python benchmarks/bench_multiturn.py                 # tiny random model, CPU
    TOOLBENCH_DATA=../shared/data python benchmarks/bench_multiturn.py --model Qwen/Qwen2.5-1.5B-Instruct \\
        --conversations 200 --max-tokens 256

Runs (each on a fresh generation cache and a reset prefix cache; greedy decoding, so every run drives the same
conversations through the same simulator states):

* batched rounds: ``pytest_toolbench.run.generation.pregenerate``, what ``pytest --model`` runs: every live
  conversation's next request in one engine call per round, tool calls executed between rounds, each round committed
  to the cache;
* one at a time: each conversation driven to its end before the next starts, one engine call per request (an
  HTTP-driven harness without concurrency);
* thread pool + vllm serve: ``vllm serve`` on the same model, ``--threads`` conversations in flight, each thread
  driving its conversation with one chat-completions request per step (BFCL's own way: ``bfcl generate
  --num-threads``, 100 by default, against a local server).

The figure is wall time; the ratios are against batched rounds measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from pytest_toolbench.backends.vllm.options import parse_engine_args  # noqa: E402
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions
from pytest_toolbench.backends.vllm.shims import apply_cpu_environment  # noqa: E402
from pytest_toolbench.run.cache import GenerationCache  # noqa: E402
from pytest_toolbench.run.catalog import import_scorer  # noqa: E402
from pytest_toolbench.run.generation import pregenerate  # noqa: E402
from pytest_toolbench.run.requests import finalize_request  # noqa: E402
from pytest_toolbench.contract.suite import Request, SuiteContext, Task  # noqa: E402


class MultiTurnSuite:
    """Stands for the loaded BFCL suite in pre-generation (its benchmark and generation settings)."""

    interactive = True

    def __init__(self, benchmark, max_tokens: int) -> None:
        self.benchmark = benchmark
        self.definition = SimpleNamespace(name="bfcl", max_tokens=max_tokens)


def drive(case, suite, answer) -> int:
    """Drive one conversation to its end with ``answer(task) -> Generation``; returns the requests made."""
    conversation = suite.benchmark.conversation(case)
    requests = 0
    try:
        request = next(conversation)
        while True:
            task = Task(case, finalize_request(request, suite.definition.max_tokens, None), requests,
                        in_conversation=True)
            generation = answer(task)
            requests += 1
            request = conversation.send(generation)
    except StopIteration:
        return requests


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(model: str, port: int, args, engine_args: dict) -> subprocess.Popen:
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port),
               "--host", "127.0.0.1", "--dtype", args.dtype, "--max-model-len", str(args.max_model_len),
               "--seed", "0"]
    for key, value in engine_args.items():
        flag = "--" + key.replace("_", "-")
        command += [flag] if value is True else [flag, str(value)]
    log = open(Path(tempfile.gettempdir()) / f"bench-multiturn-vllm-serve-{port}.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    deadline = time.monotonic() + args.server_timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"vllm serve exited with {server.returncode}; see {log.name}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"vllm serve did not become healthy in {args.server_timeout}s; see {log.name}")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="HF id or local path (default: build a tiny random model)")
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA"), help="the shared data root")
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--categories", default="multi_turn_base,multi_turn_miss_func,multi_turn_miss_param")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=100, help="thread-pool size (bfcl generate's default)")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--max-model-len", type=int, default=32768)
    parser.add_argument("--vllm-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--skip-server", action="store_true", help="leave out the vllm serve run")
    parser.add_argument("--server-timeout", type=float, default=600.0)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not args.data:
        raise SystemExit("set TOOLBENCH_DATA or pass --data=<shared data root>")

    apply_cpu_environment()
    import vllm
    from vllm import LLM

    engine_args = parse_engine_args(args.vllm_arg)
    model = args.model
    if model is None:
        from tiny_model import build_tiny_model

        scratch = tempfile.TemporaryDirectory(prefix="toolbench-bench-")
        model = str(build_tiny_model(Path(scratch.name) / "tiny-qwen2", max_position_embeddings=args.max_model_len))
        engine_args.setdefault("enforce_eager", True)
        engine_args.setdefault("kv_cache_memory_bytes", 1 << 30)
        if args.dtype == "auto":
            args.dtype = "float32"

    benchmark = import_scorer(REPO / "suites" / "bfcl")
    categories = [c for c in args.categories.split(",") if c]
    every = benchmark.load_cases(SuiteContext(Path(args.data) / "bfcl", {"categories": categories}))
    per_category = -(-args.conversations // len(categories))
    cases = [c for category in categories for c in [c for c in every if c.category == category][:per_category]]
    cases = cases[: args.conversations]
    suite = MultiTurnSuite(benchmark, args.max_tokens)

    started = time.perf_counter()
    llm = LLM(model=model, dtype=args.dtype, max_model_len=args.max_model_len, enable_prefix_caching=True, seed=0,
              **engine_args)
    engine_start = time.perf_counter() - started
    backend = VllmBackend(model, mode="prompt", max_tokens=args.max_tokens,
                          settings=VllmOptions(dtype=args.dtype, max_model_len=args.max_model_len), llm=llm)
    runs: dict[str, dict] = {}

    with tempfile.TemporaryDirectory(prefix="toolbench-bench-cache-") as folder:
        llm.reset_prefix_cache()
        cache = GenerationCache(folder)
        lines: list[str] = []
        t0 = time.perf_counter()
        stats = pregenerate([(suite, case) for case in cases], backend, cache, backend.fingerprint(), None,
                            progress=lines.append)
        runs["batched rounds"] = {"seconds": time.perf_counter() - t0, "requests": stats.generated + stats.cached,
                                  "rounds": stats.rounds, "engine calls": stats.rounds}
        print(f"batched rounds: {runs['batched rounds']}", flush=True)
        cache.close()
        per_round = [line for line in lines if line.startswith("round ") and " conversations" in line]  # not the progress lines

    llm.reset_prefix_cache()
    t0 = time.perf_counter()
    calls = [0]

    def one_request(task):
        calls[0] += 1
        return backend.generate([task])[0]

    requests = sum(drive(case, suite, one_request) for case in cases)
    runs["one conversation at a time"] = {"seconds": time.perf_counter() - t0, "requests": requests,
                                          "engine calls": calls[0]}
    print(f"one conversation at a time: {runs['one conversation at a time']}", flush=True)
    del backend, llm
    import gc

    gc.collect()

    if not args.skip_server:
        from pytest_toolbench.backends.openai_endpoint import OpenAIEndpointBackend

        port = free_port()
        server = start_server(model, port, args, engine_args)
        try:
            endpoint = OpenAIEndpointBackend(f"http://127.0.0.1:{port}/v1", model, mode="prompt", api_key_env=None,
                                             max_tokens=args.max_tokens, seed=0, concurrency=1)
            # warm-up, not timed: one short unrelated request (a conversation's prompt would fill the server's
            # prefix cache with the BFCL system prompt the timed conversations share; the other runs start empty)
            warm = Task(cases[0], Request(messages=[{"role": "user", "content": "hello"}], max_tokens=4), 0)
            endpoint.generate([warm])
            t0 = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.threads) as pool:
                counts = list(pool.map(lambda case: drive(case, suite, lambda task: endpoint.generate([task])[0]),
                                       cases))
            runs[f"thread pool ({args.threads}) + vllm serve"] = {"seconds": time.perf_counter() - t0,
                                                                  "requests": sum(counts)}
        finally:
            server.terminate()
            server.wait(timeout=60)

    base = runs["batched rounds"]["seconds"]
    shown = model if args.model else "tiny random Qwen2 (tests/tiny_model.py)"
    print(f"vllm {vllm.__version__}; model {shown}; {len(cases)} BFCL conversations ({', '.join(categories)}); "
          f"max_tokens {args.max_tokens}; greedy; engine start {engine_start:.1f}s")
    print(f"batched rounds: {runs['batched rounds']['rounds']} rounds; requests per round: "
          + ", ".join(line.split(" requests")[0].split(": ")[1] for line in per_round))
    print(f"{'run':38} {'seconds':>9} {'requests':>9} {'vs batched rounds':>18}")
    for name, figures in runs.items():
        figures["ratio_vs_batched"] = figures["seconds"] / base
        print(f"{name:38} {figures['seconds']:9.2f} {figures['requests']:9d} {figures['ratio_vs_batched']:17.2f}x")
    result = {"model": shown, "conversations": len(cases), "categories": categories, "max_tokens": args.max_tokens,
              "engine_start_s": engine_start, "vllm": vllm.__version__, "runs": runs}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
