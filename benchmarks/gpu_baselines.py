"""The GPU benchmark's baselines (``bench_gpu.py`` (a), (b)): raw ``vllm.LLM.generate`` over the plugin's own prompts,
the multi-turn rounds replayed on one engine (the engine's own limit), and the official harness's way (``bfcl
generate``'s thread pool against a local ``vllm serve``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpu_machine import REPO, compile_cache_state, environment, wait_for_free_gpu


def bfcl_tasks(args, categories: list[str], limit: int | None) -> tuple[Any, dict, list]:
    """The suite module and its first ``limit`` cases of each category, as the plugin selects them."""
    from pytest_toolbench.contract.definition import load_definition
    from pytest_toolbench.contract.suite import SuiteContext
    from pytest_toolbench.run.catalog import _first_per_category, import_scorer

    benchmark = import_scorer(REPO / "suites" / "bfcl")
    cases = benchmark.load_cases(SuiteContext(Path(args.data) / "bfcl", {"categories": categories}))
    cases = _first_per_category(cases, limit)
    return benchmark, load_definition(REPO / "suites" / "bfcl" / "suite.yaml").generation, cases


def tokenizer_backend(args):
    """The plugin's vLLM backend without its engine: renders and tokenizes exactly as the plugin's runs do."""
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.options import VllmOptions

    return VllmBackend(args.model, mode="prompt", temperature=0.0, seed=0, max_tokens=args.max_tokens,
                       settings=VllmOptions(dtype=args.dtype, max_model_len=args.max_model_len,
                                            engine_args=args.engine_args))


def request_sampling(backend, task, prompt_tokens: int, context: int, args) -> dict:
    """The ``SamplingParams`` keyword arguments the plugin's backend gives this request (the same on both sides)."""
    if hasattr(backend, "request_sampling"):
        return backend.request_sampling(task, prompt_tokens, context)
    from pytest_toolbench.backends.vllm.batch import answer_budget

    return {"temperature": 0.0, "top_p": 1.0, "seed": 0, "skip_special_tokens": False,
            "spaces_between_special_tokens": False,
            "max_tokens": answer_budget(task.request, args.max_tokens, context, prompt_tokens)}


def raw_phase(args) -> dict:
    """(a)'s baseline and (b)'s engine-only limit, in one process on one engine (started before any clock, then
    warmed up with one short request): raw ``LLM.generate`` over every single-turn prompt, in dataset order and
    longest prompt first, ``--repeats`` times each, interleaved, the prefix cache reset before each run; its clock
    starts where the plugin's pre-generation clock does, before the prompts are rendered and tokenized (with the
    plugin's own renderer: ``VllmBackend.render``/``encode``, so both sides send the same tokens). Then the multi-turn
    replay (:func:`replay_rounds`) when the plugin's multi-turn cache is given."""
    from pytest_toolbench.contract.suite import Task
    from pytest_toolbench.run.generation import finalize_request

    benchmark, settings, cases = bfcl_tasks(args, single_turn_categories(), args.limit)
    tasks = [Task(case, finalize_request(benchmark.build_request(case), settings, args.max_tokens), 0)
             for case in cases]
    backend = tokenizer_backend(args)
    cache_state = compile_cache_state()
    started = time.perf_counter()
    llm = backend.engine()  # the same LLM(...) arguments as the plugin's runs
    engine_start = time.perf_counter() - started
    from vllm import SamplingParams

    context = llm.llm_engine.model_config.max_model_len
    llm.generate([{"prompt_token_ids": [1, 2, 3, 4]}], SamplingParams(max_tokens=4), use_tqdm=False)  # warm-up
    runs: dict[str, list[dict]] = {"dataset order": [], "longest first": []}
    for _ in range(max(1, args.repeats)):
        for order in runs:
            llm.reset_prefix_cache()
            t0 = time.perf_counter()
            token_ids = backend.encode(tasks, [backend.render(task) for task in tasks])
            prepared = time.perf_counter() - t0
            chosen = list(range(len(tasks)))
            if order == "longest first":
                chosen.sort(key=lambda i: -len(token_ids[i]))
            params = [SamplingParams(**request_sampling(backend, tasks[i], len(token_ids[i]), context, args))
                      for i in chosen]
            t1 = time.perf_counter()
            outputs = llm.generate([{"prompt_token_ids": token_ids[i]} for i in chosen], params, use_tqdm=False)
            done = time.perf_counter()
            runs[order].append({"generation_s": done - t0, "generate_call_s": done - t1, "prepare_s": prepared,
                                "output_tokens": sum(len(o.outputs[0].token_ids) for o in outputs)})
    distinct = len({(tuple(ids), task.request.max_tokens) for ids, task in zip(token_ids, tasks)})
    best = {order: sorted(figures, key=lambda f: f["generation_s"])[len(figures) // 2] for order, figures in
            runs.items()}  # the median run of each order
    result = {"requests": len(tasks), "distinct_requests": distinct,
              "prompt_tokens": sum(len(ids) for ids in token_ids), "output_tokens": best["dataset order"]["output_tokens"],
              "generation_s": best["dataset order"]["generation_s"], "runs": runs, "median": best,
              "engine_startup_s": engine_start, "compile_cache_before_start": cache_state}
    if args.replay_cache:
        result["replay"] = replay_rounds(args, backend, llm, SamplingParams)
    return result


def replay_rounds(args, backend, llm, sampling_params) -> dict:
    """(b)'s engine-only limit: the plugin's multi-turn conversations driven again from its cache (the same
    answers, so the same requests), grouped by step (round k: the k-th request of every conversation), each
    request once (as the plugin generates identical requests once), and each round sent to the engine as one
    ``LLM.generate`` right after the one before: the engine's time for that work with no host work between rounds."""
    from pytest_toolbench.contract.suite import Task
    from pytest_toolbench.run.cache import GenerationCache, request_key
    from pytest_toolbench.run.generation import finalize_request

    benchmark, settings, cases = bfcl_tasks(args, args.mt_categories, args.mt_limit)
    fingerprint = backend.fingerprint()
    cache = GenerationCache(args.replay_cache, readonly=True)
    rounds: list[list[Task]] = []
    seen: set[str] = set()
    try:
        for case in cases:
            conversation, step = benchmark.conversation(case), 0
            try:
                request = next(conversation)
                while True:
                    task = Task(case, finalize_request(request, settings, args.max_tokens), step, in_conversation=True)
                    key = request_key(fingerprint, task.request)
                    answer = cache.get(key)
                    if answer is None:
                        return {"skipped": f"{case.case_id} step {step} is not in the plugin's cache (a different "
                                           "fingerprint?)"}
                    if key not in seen:
                        seen.add(key)
                        while len(rounds) <= step:
                            rounds.append([])
                        rounds[step].append(task)
                    step += 1
                    request = conversation.send(answer)
            except StopIteration:
                pass
    finally:
        cache.close()
    context = llm.llm_engine.model_config.max_model_len
    llm.reset_prefix_cache()
    seconds, requests, output_tokens = [], 0, 0
    for tasks in rounds:
        ids = backend.encode(tasks, [backend.render(task) for task in tasks])
        chosen = [i for i in range(len(tasks)) if len(ids[i]) < context]
        params = [sampling_params(**request_sampling(backend, tasks[i], len(ids[i]), context, args)) for i in chosen]
        t0 = time.perf_counter()
        outputs = llm.generate([{"prompt_token_ids": ids[i]} for i in chosen], params, use_tqdm=False)
        seconds.append(time.perf_counter() - t0)
        requests += len(chosen)
        output_tokens += sum(len(o.outputs[0].token_ids) for o in outputs)
    return {"rounds": len(rounds), "requests": requests, "output_tokens": output_tokens,
            "seconds": sum(seconds), "per_round_s": seconds}


def single_turn_categories() -> list[str]:
    from pytest_toolbench.contract.definition import load_definition

    listed = [c["name"] for c in load_definition(REPO / "suites" / "bfcl" / "suite.yaml").raw["categories"]]
    return [c for c in listed if not c.startswith(("multi_turn", "web_search", "memory"))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(args, port: int, work: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", args.model, "--port",
               str(port), "--host", "127.0.0.1", "--dtype", args.dtype, "--max-model-len", str(args.max_model_len),
               "--seed", "0", "--enable-prefix-caching"]
    for key, value in args.engine_args.items():
        flag = "--" + key.replace("_", "-")
        command += [flag] if value is True else [flag, json.dumps(value) if isinstance(value, (dict, list))
                                                 else str(value)]
    log = open(work / "vllm-serve.log", "w")
    print(f"[harness] {' '.join(command[1:])}", flush=True)
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment(),
                              start_new_session=True)
    deadline = time.monotonic() + args.server_timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"vllm serve exited with {server.returncode}:\n"
                             + (work / "vllm-serve.log").read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit(f"vllm serve did not become healthy in {args.server_timeout}s")


_CONNECTIONS = threading.local()


def complete(port: int, model: str, prompt: str, max_tokens: int) -> dict:
    """One completion over this thread's kept-alive connection (as the OpenAI client bfcl generate uses keeps its
    connections), opened again once if the server closed it."""
    import http.client

    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0, "top_p": 1.0,
                       "seed": 0, "skip_special_tokens": False, "spaces_between_special_tokens": False}).encode()
    for attempt in (0, 1):
        connection = getattr(_CONNECTIONS, "connection", None)
        if connection is None:
            connection = _CONNECTIONS.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        try:
            connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
            reply = connection.getresponse()
            data = reply.read()
            if reply.status != 200:
                raise SystemExit(f"vllm serve answered {reply.status}: {data[:500]!r}")
            return json.loads(data)
        except (http.client.HTTPException, ConnectionError):
            connection.close()
            _CONNECTIONS.connection = None
            if attempt:
                raise
    raise AssertionError("unreachable")


def harness_phase(args, work: Path) -> dict:
    """(b)'s baseline: ``vllm serve`` and a thread pool, one conversation per thread, one request at a time."""
    import dataclasses

    from pytest_toolbench.backends.common import make_generation
    from pytest_toolbench.backends.vllm.batch import answer_budget
    from pytest_toolbench.contract.suite import Task
    from pytest_toolbench.run.generation import finalize_request

    benchmark, settings, cases = bfcl_tasks(args, args.mt_categories, args.mt_limit)
    backend = tokenizer_backend(args)
    formats = backend.prompt_formats()
    tokenizer, lock = backend.tokenizer(), threading.Lock()
    port = free_port()
    wait_for_free_gpu(args.device)
    cache_state = compile_cache_state()
    started = time.perf_counter()
    server = start_server(args, port, work)
    server_start = time.perf_counter() - started
    totals = {"requests": 0, "prompt_tokens": 0, "output_tokens": 0}

    def drive(case) -> None:
        """One conversation to its end, as a harness thread does: format, count, ask, record, next step."""
        conversation = benchmark.conversation(case)
        step, request = 0, next(conversation)
        try:
            while True:
                task = Task(case, finalize_request(request, settings, args.max_tokens), step, in_conversation=True)
                text = backend.render(task)
                with lock:  # one tokenizer shared by the threads (the Rust tokenizer is not re-entrant)
                    prompt_tokens = len(tokenizer(text, add_special_tokens=formats.adds_special_tokens(
                        case.suite))["input_ids"])
                if prompt_tokens >= args.max_model_len:  # as the plugin's backend: answered "truncated", not sent
                    choice, usage = {"text": "", "finish_reason": "length"}, {"prompt_tokens": prompt_tokens}
                else:
                    reply = complete(port, args.model, text, answer_budget(task.request, args.max_tokens,
                                                                           args.max_model_len, prompt_tokens))
                    choice, usage = reply["choices"][0], reply.get("usage") or {}
                generation = make_generation(choice["text"], choice.get("finish_reason"),
                                             usage.get("prompt_tokens"), usage.get("completion_tokens") or 0, None)
                recorded = getattr(formats.handler_for(case.suite), "recorded_answer", None)
                if recorded is not None:
                    generation = dataclasses.replace(generation, answer=recorded(generation.text))
                with lock:
                    totals["requests"] += 1
                    totals["prompt_tokens"] += usage.get("prompt_tokens") or 0
                    totals["output_tokens"] += usage.get("completion_tokens") or 0
                step += 1
                request = conversation.send(generation)
        except StopIteration:
            return

    try:
        complete(port, args.model, "hello", 4)  # warm-up, not timed: the plugin's engine is warm after its start too
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            list(pool.map(drive, cases))
        seconds = time.perf_counter() - t0
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
    return {"conversations": len(cases), "threads": args.threads, "seconds": seconds, "server_startup_s": server_start,
            "compile_cache_before_start": cache_state, **totals}
