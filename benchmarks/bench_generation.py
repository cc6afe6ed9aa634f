"""Generation throughput: the plugin's vLLM backend against raw ``LLM.generate`` and a per-item loop, same prompts,
same engine, one process.

    python benchmarks/bench_generation.py                      # tiny random model built on the fly (CPU is fine)
    python benchmarks/bench_generation.py --model Qwen/Qwen2.5-7B-Instruct --prompts 2000 --max-tokens 256

Measured (each after clearing the prefix cache, best of ``--repeat``):

* raw: ``LLM.generate`` on pre-tokenized prompts, one call (the ceiling);
* backend: ``VllmBackend.generate`` end to end, chat-template rendering and tokenization included, one call;
* backend+chunks: the same with ``on_chunk`` (enqueue + stepped engine, results handed over every ``--chunk-size``);
* per-item: one ``VllmBackend.generate`` call per prompt (how per-test generation would behave), on a subset.

* plugin pre-generation: ``pytest_toolbench.run.generation.pregenerate`` (cache look-up, longest-first order, one
  backend call, chunks committed to a fresh SQLite cache): what ``pytest --model`` runs before the tests.

Tokens/s count output tokens. The goal is plugin pre-generation >= 0.95x raw. "1st request after": how long the
engine waited, in the backend's calls, for the first prompt to be rendered and tokenized (raw's prompts are
tokenized before its clock starts): every prompt with one call, the first part (``vllm.batch.PART_FIRST``) with
``on_chunk``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from pytest_toolbench.backends.vllm.options import parse_engine_args  # noqa: E402
from pytest_toolbench.backends.vllm.engine import VllmBackend
from pytest_toolbench.backends.vllm.options import VllmOptions
from pytest_toolbench.backends.vllm.shims import apply_cpu_environment  # noqa: E402  # noqa: E402
from pytest_toolbench.contract.suite import Case, Request, Task  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{k}",
            "description": f"Tool number {k}: looks things up about cities, dates and amounts.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["city"],
            },
        },
    }
    for k in range(4)
]


def make_tasks(count: int, seed: int) -> list[Task]:
    """Prompts of varied length (a shared system prompt plus 1-120 repeated clauses), like benchmark cases."""
    import random

    rng = random.Random(seed)
    words = ["weather", "Paris", "convert", "dollars", "book", "table", "Berlin", "area", "triangle", "flight"]
    tasks = []
    for i in range(count):
        question = " ".join(rng.choice(words) for _ in range(rng.randint(4, 400)))
        messages = [
            {"role": "system", "content": "You are a helpful assistant that calls functions when needed."},
            {"role": "user", "content": f"Case {i}: {question}?"},
        ]
        tasks.append(Task(Case(f"case_{i}", "bench", {}, suite="bench"), Request(messages, tools=TOOLS)))
    return tasks


def best_of(repeat: int, run) -> tuple[float, int, float]:
    """(seconds, output tokens, seconds before the engine's first request) of the fastest of ``repeat`` runs;
    every run must produce the same token count."""
    timings, tokens = [], set()
    for _ in range(repeat):
        seconds, produced, lead = run()
        timings.append((seconds, lead))
        tokens.add(produced)
    if len(tokens) != 1:
        raise SystemExit(f"runs produced different token counts: {sorted(tokens)}")
    seconds, lead = min(timings)
    return seconds, tokens.pop(), lead


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="HF id or local path (default: build a tiny random model)")
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--mode", choices=("prompt", "native"), default="native")
    parser.add_argument("--per-item", type=int, default=32, help="prompts in the per-item loop (0: skip)")
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--max-model-len", type=int, default=2048)
    parser.add_argument("--vllm-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    apply_cpu_environment()  # no-op for variables already set; harmless on GPU machines
    import vllm
    from vllm import LLM, SamplingParams

    engine_args = parse_engine_args(args.vllm_arg)
    model = args.model
    if model is None:
        from tiny_model import build_tiny_model

        scratch = tempfile.TemporaryDirectory(prefix="toolbench-bench-")  # removed at exit
        model = str(build_tiny_model(Path(scratch.name) / "tiny-qwen2"))
        engine_args.setdefault("enforce_eager", True)
        engine_args.setdefault("kv_cache_memory_bytes", 512 << 20)
        if args.dtype == "auto":
            args.dtype = "float32"

    started = time.perf_counter()
    llm = LLM(model=model, dtype=args.dtype, max_model_len=args.max_model_len, enable_prefix_caching=True, seed=0,
              **engine_args)
    engine_start = time.perf_counter() - started

    tasks = make_tasks(args.prompts, seed=0)
    backend = VllmBackend(model, mode=args.mode, max_tokens=args.max_tokens,
                          settings=VllmOptions(dtype=args.dtype, max_model_len=args.max_model_len), llm=llm,
                          chunk_size=args.chunk_size)
    token_ids = backend.tokenizer()([backend.render(t) for t in tasks], add_special_tokens=False)["input_ids"]
    raw_prompts = [{"prompt_token_ids": ids} for ids in token_ids]
    raw_params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, seed=0, skip_special_tokens=False,
                                spaces_between_special_tokens=False)

    def fresh() -> None:
        llm.reset_prefix_cache()

    def lead_so_far() -> float:
        """The backend's summed wait of the engine for each call's first request (its stats)."""
        return float(backend.stats()["extra"].get("first_request_seconds", 0.0))

    def raw() -> tuple[float, int, float]:
        fresh()
        t0 = time.perf_counter()
        outputs = llm.generate(raw_prompts, raw_params, use_tqdm=False)
        return time.perf_counter() - t0, sum(len(o.outputs[0].token_ids) for o in outputs), 0.0

    def plugin(**kwargs) -> tuple[float, int, float]:
        fresh()
        before = lead_so_far()
        t0 = time.perf_counter()
        generations = backend.generate(tasks, **kwargs)
        return time.perf_counter() - t0, sum(g.output_tokens or 0 for g in generations), lead_so_far() - before

    from types import SimpleNamespace

    from pytest_toolbench.run.cache import GenerationCache
    from pytest_toolbench.run.generation import pregenerate

    class PrebuiltSuite:
        """Stands for a loaded suite whose requests are these tasks' (what the plugin's pre-generation reads)."""

        interactive = False

        def __init__(self) -> None:
            self.benchmark = self
            self.definition = SimpleNamespace(max_tokens=args.max_tokens)
            self._requests = {task.case.case_id: task.request for task in tasks}

        def build_request(self, case):
            return self._requests[case.case_id]

    suite = PrebuiltSuite()

    def pregeneration() -> tuple[float, int, float]:
        """The plugin's own path: cache look-up, longest-first ordering, one backend call, chunk commits to SQLite."""
        fresh()
        before = lead_so_far()
        with tempfile.TemporaryDirectory(prefix="toolbench-bench-cache-") as folder:
            cache = GenerationCache(folder)
            t0 = time.perf_counter()
            stats = pregenerate([(suite, task.case) for task in tasks], backend, cache, backend.fingerprint(),
                                args.max_tokens)
            elapsed = time.perf_counter() - t0
            cache.close()
        return elapsed, stats.output_tokens, lead_so_far() - before

    subset = tasks[: args.per_item]

    def per_item() -> tuple[float, int, float]:
        fresh()
        before = lead_so_far()
        t0 = time.perf_counter()
        produced = sum(backend.generate([task])[0].output_tokens or 0 for task in subset)
        return time.perf_counter() - t0, produced, lead_so_far() - before

    raw()  # warm-up (allocations, kernels)
    results = {
        "raw LLM.generate": best_of(args.repeat, raw),
        "backend (one call)": best_of(args.repeat, plugin),
        "backend + on_chunk": best_of(args.repeat, lambda: plugin(on_chunk=lambda chunk: None)),
        "plugin pre-generation (cache)": best_of(args.repeat, pregeneration),
    }
    if args.per_item:
        results[f"per-item loop ({len(subset)} prompts)"] = best_of(1, per_item)

    raw_rate = results["raw LLM.generate"][1] / results["raw LLM.generate"][0]
    prompt_tokens = sum(len(ids) for ids in token_ids)
    shown = model if args.model else "tiny random Qwen2 (tests/tiny_model.py)"
    print(f"vllm {vllm.__version__}; model {shown}; {args.prompts} prompts ({prompt_tokens} prompt tokens, "
          f"mean {prompt_tokens / len(token_ids):.0f}), max_tokens {args.max_tokens}, mode {args.mode}; "
          f"engine start {engine_start:.1f}s; best of {args.repeat}")
    print(f"{'run':34} {'seconds':>9} {'out tokens':>11} {'tok/s':>10} {'vs raw':>7} {'1st request after':>18}")
    figures = {"engine_start_s": engine_start, "prompts": args.prompts, "prompt_tokens": prompt_tokens,
               "max_tokens": args.max_tokens, "model": shown, "runs": {}}
    for name, (seconds, produced, lead) in results.items():
        rate = produced / seconds
        figures["runs"][name] = {"seconds": seconds, "output_tokens": produced, "tokens_per_s": rate,
                                 "ratio_to_raw": rate / raw_rate, "first_request_s": lead}
        print(f"{name:34} {seconds:9.3f} {produced:11d} {rate:10.0f} {rate / raw_rate:6.2f}x {lead:17.3f}s")
    ratio = figures["runs"]["plugin pre-generation (cache)"]["ratio_to_raw"]
    print(f"plugin pre-generation / raw = {ratio:.3f} (goal >= 0.95): {'OK' if ratio >= 0.95 else 'BELOW GOAL'}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return figures


if __name__ == "__main__":
    main()
