"""The plugin's host work, measured without a GPU: real pytest runs of BFCL with only the engine replaced.

    TOOLBENCH_DATA=../shared/data python benchmarks/bench_host_work.py --model=/work/models/qwen-coder-0.5b
    python benchmarks/bench_host_work.py --model=... --parts=multi --modes=latency --mt-limit=50
    python benchmarks/bench_host_work.py --fit --model=...      # derive the latency model from the H100 figures
    python benchmarks/bench_host_work.py --model=... --parts=tau2 --modes=latency   # τ²-bench conversations

Each run is ``pytest suites/bfcl --model=<folder> ...`` in a subprocess whose ``vllm`` module is
``benchmarks/stub_engine.py`` (a stand-in for ``vllm.LLM`` and its engine, driven by the plugin's own backend as it
drives vLLM): the plugin's collection, cache keys, rendering, tokenizing with the model's real tokenizer, commits,
conversations and their tools all run as they do on a GPU machine. Two modes:

* ``instant``: the engine answers at once, so what is left is host work: **host CPU per 1,000 requests** (the
  process's CPU from the engine's start to its last answer).
* ``latency``: the engine core runs on a thread of its own, vLLM V1's scheduling with a modelled step time
  (``stub_engine.ALPHA + BETA * tokens``, fitted with ``--fit`` to the H100 run in
  ``results/gpu-h100-2026-11-26.json``), so host work that overlaps the engine costs nothing and host work it waits
  for shows as the **engine's wait with work pending**: idle time between the engine's start and the run's last
  answer (per run, and per round of conversations), and the **engine's busy fraction** over that span. Targets
  (issue 33): wait <= 3% of busy time for single-turn, <= 5% for multi-turn and for τ²-bench (issue 39).

The parts: ``single`` (BFCL single-turn), ``multi`` (BFCL multi-turn conversations) and ``tau2`` (τ²-bench airline
and retail conversations, ``--tau2-limit`` tasks per domain: the agent and its simulated user on the one engine, in
native mode, each conversation's tool calls run on the suite's environment; the stub's answers are random text, so a
conversation goes on until the suite's ``max_steps``, set by ``--tau2-max-steps``).

The fit: on the H100 (one GPU, a 0.5B Qwen2.5 with random weights, max_tokens 128) raw ``LLM.generate`` took 20.83 s
for the 3,641 single-turn requests and the engine calls of the 200 multi-turn conversations (in rounds) 5.33 s. The
engine's schedule (steps and tokens per step) hardly depends on the step time for a given arrival order, so a
latency-mode run of each workload as the H100 ran it (conversations in rounds) gives its steps and scheduled tokens,
and ``time = alpha * steps + beta * tokens`` for both workloads is two equations in two unknowns. It is a model of
the engine's pace, not of a GPU: attention's growth with context length is folded into the two constants.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
SINGLE_TURN_K = "bfcl and not multi_turn and not agentic"
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
H100 = REPO / "benchmarks" / "results" / "gpu-h100-2026-11-26.json"
TARGET_WAIT = {"single": 0.03, "multi": 0.05, "tau2": 0.05}

SHIM = "import sys\nsys.path.insert(0, {here!r})\nfrom stub_engine import *  # noqa: F401,F403\n" \
       "from stub_engine import LLM, SamplingParams  # noqa: F401\n__version__ = 'stub'\n"


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_once(args, part: str, mode: str, work: Path, alpha: float | None = None, beta: float | None = None,
             extra: tuple[str, ...] = ()) -> dict:
    """One pytest run with the stub engine; the engine's record and the run's generation header."""
    label = f"{part}-{mode}"
    shim = work / "shim" / "vllm"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "__init__.py").write_text(SHIM.format(here=str(HERE)))
    record, report, cache = work / f"{label}-engine.json", work / f"{label}.json", work / f"{label}-cache"
    env = dict(os.environ)
    env.update(TOOLBENCH_STUB_ENGINE=mode, TOOLBENCH_STUB_RECORD=str(record),
               TOOLBENCH_STUB_START_S=str(args.start_s),
               PYTHONPATH=os.pathsep.join([str(shim.parent), str(REPO), *filter(None, [env.get("PYTHONPATH")])]))
    if alpha is not None:
        env["TOOLBENCH_STUB_ALPHA"], env["TOOLBENCH_STUB_BETA"] = repr(alpha), repr(beta)
    suite = "bfcl"
    if part == "single":
        select, limit = SINGLE_TURN_K, args.limit
    elif part == "tau2":
        suite, select, limit = "tau2bench", "tau2bench", args.tau2_limit
        extra = ("--toolbench-mode=native", "--toolbench-suite-option=tau2bench.domains=[airline,retail]",
                 f"--toolbench-suite-option=tau2bench.max_steps={args.tau2_max_steps}", *extra)
    else:
        select, limit = "bfcl and (" + " or ".join(args.mt_categories) + ")", args.mt_limit
    command = [sys.executable, "-m", "pytest", str(REPO / "suites" / suite), "-p", "no:cacheprovider", "-q",
               "--no-header", "-rN", "-k", select, f"--model={args.model}", f"--toolbench-data={args.data}",
               f"--toolbench-json={report}", f"--toolbench-cache={cache}", f"--toolbench-max-tokens={args.max_tokens}",
               "--toolbench-temperature=0", "--toolbench-seed=0", f"--toolbench-max-model-len={args.max_model_len}",
               *args.extra, *extra]
    if limit:
        command.append(f"--toolbench-limit={limit}")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1) or not record.is_file() or not report.is_file():
        raise SystemExit(f"[{label}] pytest exited with {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    engine = json.loads(record.read_text())
    generation = json.loads(report.read_text())["header"]["generation"]
    return figures(part, mode, engine, generation, wall)


def figures(part: str, mode: str, engine: dict, generation: dict, wall: float) -> dict:
    """The printed figures of one run (see the module's docstring)."""
    span = max((engine["last_answer_at"] or engine["started_at"]) - engine["started_at"], 1e-9)
    answered = engine["requests"]
    host_cpu = engine["cpu_at_last_answer"] - engine["cpu_at_start"] - engine["core_cpu_s"]
    first_wait = (engine["first_request_at"] or engine["started_at"]) - engine["started_at"]
    rounds = generation.get("rounds") or 0
    out = {
        "part": part, "mode": mode, "requests_answered": answered, "requested": generation.get("requested"),
        "generated": generation.get("generated"), "rounds": rounds, "pytest_wall_s": round(wall, 2),
        "pregeneration_s": generation.get("generation_s"), "span_s": round(span, 3),
        "host_cpu_s": round(host_cpu, 3),
        "host_cpu_per_1000_requests_s": round(1000 * host_cpu / answered, 3) if answered else None,
        "engine_steps": engine["steps"], "scheduled_tokens": engine["scheduled_tokens"],
        "prefill_tokens": engine["prefill_tokens"], "cached_tokens": engine["cached_tokens"],
        "core_cpu_s": round(engine["core_cpu_s"], 3), "alpha": engine["alpha"], "beta": engine["beta"],
    }
    if mode == "latency":
        busy = engine["busy_s"]
        # idle with nothing queued, between the engine's start and the run's last answer; the rest of the span
        # not spent in modelled steps is the stub's own lag between steps (its thread waiting for the interpreter)
        wait = sum(max(0.0, min(to, engine["last_answer_at"]) - max(since, engine["started_at"]))
                   for since, to in engine["idle_gaps"])
        out["stub_lag_s"] = round(max(span - busy - wait, 0.0), 3)
        out.update(busy_s=round(busy, 3), wait_with_work_pending_s=round(wait, 3),
                   first_request_wait_s=round(first_wait, 3), wait_over_busy=round(wait / busy, 4) if busy else None,
                   busy_fraction=round(busy / span, 4),
                   wait_per_round_s=round(wait / rounds, 3) if rounds else None,
                   largest_gaps=[(round(since, 3), round(to - since, 4)) for since, to in
                                 sorted(engine["idle_gaps"], key=lambda gap: gap[0] - gap[1])[:5]],
                   target_wait_over_busy=TARGET_WAIT[part])
    return out


def fit(args, work: Path) -> dict:
    """``alpha`` (s per step) and ``beta`` (s per scheduled token) from the H100 run (see the docstring)."""
    stored = json.loads(H100.read_text())
    single_s = stored["single_turn"]["raw"]["generation_s"]
    multi_s = stored["multi_turn"]["plugin"]["backend"]["generation_seconds"]
    one = run_once(args, "single", "latency", work / "fit-single")
    # the H100 run drove the conversations in rounds: its engine saw each round's requests at once
    two = run_once(args, "multi", "latency", work / "fit-multi", extra=("--toolbench-conversations=rounds",))
    (s1, t1), (s2, t2) = (one["engine_steps"], one["scheduled_tokens"]), (two["engine_steps"], two["scheduled_tokens"])
    det = s1 * t2 - s2 * t1
    alpha = (single_s * t2 - multi_s * t1) / det
    beta = (s1 * multi_s - s2 * single_s) / det
    result = {"single_turn": {"engine_s": single_s, "steps": s1, "tokens": t1, "requests": one["requests_answered"]},
              "multi_turn": {"engine_s": multi_s, "steps": s2, "tokens": t2, "requests": two["requests_answered"]},
              "alpha": alpha, "beta": beta}
    print(json.dumps(result, indent=2))
    return result


def line(row: dict) -> str:
    text = (f"{row['part']:6} {row['mode']:7} {row['requests_answered']:6d} req  host CPU "
            f"{row['host_cpu_per_1000_requests_s']:.2f} s/1k req  span {row['span_s']:.2f} s")
    if row["mode"] == "latency":
        text += (f"  busy {row['busy_s']:.2f} s  wait {row['wait_with_work_pending_s']:.3f} s "
                 f"({100 * row['wait_over_busy']:.1f}% of busy; target <= {100 * row['target_wait_over_busy']:.0f}%)"
                 f"  first-request wait {row['first_request_wait_s']:.3f} s  busy fraction {row['busy_fraction']:.3f}")
        if row["rounds"]:
            text += f"  rounds {row['rounds']}, wait per round {row['wait_per_round_s']:.3f} s"
    return text


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a model folder with its tokenizer (weights not read)")
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA"), help="the toolbench data root")
    parser.add_argument("--parts", default="single,multi")
    parser.add_argument("--modes", default="instant,latency")
    parser.add_argument("--limit", type=int, default=None, help="single-turn cases per category (default: all)")
    parser.add_argument("--mt-limit", type=int, default=50, help="conversations per multi-turn category")
    parser.add_argument("--mt-categories", default=",".join(MULTI_TURN))
    parser.add_argument("--tau2-limit", type=int, default=25, help="τ²-bench tasks per domain (airline, retail)")
    parser.add_argument("--tau2-max-steps", type=int, default=20, help="τ²-bench's max_steps for the stub's runs")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--max-model-len", type=int, default=32768)
    parser.add_argument("--start-s", type=float, default=3.0, help="the stub engine's start-up (latency mode)")
    parser.add_argument("--extra", action="append", default=[], help="more pytest arguments")
    parser.add_argument("--fit", action="store_true", help="derive the latency model from the H100 figures")
    parser.add_argument("--out", default=None, help="also write the figures here as JSON")
    parser.add_argument("--work", default=None, help="keep the runs' caches, reports and engine records here")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("--data (or TOOLBENCH_DATA) is required: the folder holding bfcl/ (and tau2bench/)")
    args.model = str(Path(args.model).resolve())
    args.data = str(Path(args.data).resolve())
    args.mt_categories = [c for c in args.mt_categories.split(",") if c]
    with tempfile.TemporaryDirectory(prefix="toolbench-host-work-") as scratch:
        work = Path(args.work or scratch)
        if args.fit:
            return fit(args, work)
        rows = []
        for part in [p for p in args.parts.split(",") if p]:
            for mode in [m for m in args.modes.split(",") if m]:
                row = run_once(args, part, mode, work / f"{part}-{mode}")
                rows.append(row)
                print(line(row), flush=True)
    result = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "commit": commit(),
              "model": Path(args.model).name, "max_tokens": args.max_tokens, "mt_limit": args.mt_limit,
              "limit": args.limit, "tau2_limit": args.tau2_limit, "tau2_max_steps": args.tau2_max_steps, "runs": rows}
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
