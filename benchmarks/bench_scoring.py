"""Scoring speed: pytest-toolbench replaying BFCL single-turn outputs, against the official ``bfcl evaluate`` and
against a plain loop over the scorer, all on the same result files in one run.

The replayed outputs are the 3,641 gold answers, two in five of them broken (a wrong value, or not call syntax),
so failures and their reporting are part of the measurement. Measured, each as the median of ``--rounds``
interleaved rounds:

1. a plain Python loop: score every saved output with the suite's scorer (the cases already loaded; no pytest);
2. ``pytest -k bfcl --toolbench-replay ...`` serially, and with ``-n 2``;
3. the same serial run on the first 50 cases of each category, so the marginal cost of a case is known:
   (full - small) / (cases full - cases small), minus the plain loop's time per case, is what pytest and the plugin
   add to each case beyond its scorer;
4. ``bfcl evaluate`` of bfcl-eval (the official scorer) on the same files, when its ``bfcl`` command is available
   (``--bfcl PATH``; install bfcl-eval in a separate environment, never beside the plugin); else that column is
   skipped.

    python benchmarks/bench_scoring.py [--data ../shared/data] [--bfcl /tmp/oracle/bin/bfcl] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: A prompting-mode model known to bfcl-eval: its handler decodes the saved text like ours does.
BFCL_MODEL = "Qwen/Qwen3-8B"
SMALL_LIMIT = 50


def replay_outputs(cases, gold_output) -> dict[str, str]:
    outputs = {}
    for index, case in enumerate(cases):
        text = gold_output(case)
        if index % 5 == 1:
            text = text.replace("=", "= 1 +", 1) if "=" in text else "[]"  # a wrong value (or no call)
        elif index % 5 == 3:
            text = "I would call " + text  # not call syntax: a decoding failure
        outputs[case.case_id] = text
    return outputs


def write_results(cases, outputs: dict[str, str], folder: Path, grouping) -> None:
    by_category: dict[str, list[dict]] = {}
    for case in cases:
        by_category.setdefault(case.category, []).append({"id": case.case_id, "result": outputs[case.case_id]})
    for category, rows in by_category.items():
        target = folder / grouping(category) / f"BFCL_v4_{category}_result.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def plain_loop(suite, outputs: dict[str, str]) -> float:
    from pytest_toolbench.contract.suite import Generation

    started = time.perf_counter()
    for case in suite.cases:
        suite.benchmark.score(case, Generation(text=outputs[case.case_id], finish_reason="stop"))
    return time.perf_counter() - started


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path = REPO) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stdout[-3000:]}")
    return seconds


def pytest_command(data_dir: Path, replay: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "suites"), "-k", "bfcl",
            f"--toolbench-data={data_dir}", f"--toolbench-replay={replay}", *extra]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--bfcl", default=shutil.which("bfcl") or "/tmp/oracle/bin/bfcl")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(args.data).resolve()

    from pytest_toolbench.run.cache_layout import CacheLayout
    from pytest_toolbench.run.catalog import Catalog, Registry

    catalog = Catalog(Registry(), str(data_dir), "bench", CacheLayout.at(tempfile.mkdtemp()).downloads, False, None)
    suite = catalog.load(REPO / "suites" / "bfcl" / "suite.yaml")
    small = {c.case_id for c in Catalog(Registry(), str(data_dir), "bench", CacheLayout.at(tempfile.mkdtemp()).downloads,
                                        False, SMALL_LIMIT).load(REPO / "suites" / "bfcl" / "suite.yaml").cases}
    outputs = replay_outputs(suite.cases, suite.benchmark.gold_output)
    bfcl = Path(args.bfcl) if args.bfcl and Path(args.bfcl).is_file() else None
    with tempfile.TemporaryDirectory() as tmp:
        replay = Path(tmp) / "replay"
        write_results(suite.cases, outputs, replay, lambda category: "")
        official_root = Path(tmp) / "bfcl"
        if bfcl is not None:
            grouping = (lambda c: "live" if c.startswith("live") else "non_live")
            write_results(suite.cases, outputs, official_root / "result" / BFCL_MODEL.replace("/", "_"), grouping)
        categories = sorted({c.category for c in suite.cases})
        rounds: dict[str, list[float]] = {k: [] for k in ("loop", "serial", "xdist", "small", "official")}
        for _ in range(args.rounds):
            rounds["loop"].append(plain_loop(suite, outputs))
            rounds["serial"].append(timed(pytest_command(data_dir, replay, [])))
            rounds["xdist"].append(timed(pytest_command(data_dir, replay, ["-n", "2"])))
            rounds["small"].append(timed(pytest_command(data_dir, replay, [f"--toolbench-limit={SMALL_LIMIT}"])))
            if bfcl is not None:
                shutil.rmtree(official_root / "score", ignore_errors=True)
                env = {**os.environ, "BFCL_PROJECT_ROOT": str(official_root)}
                rounds["official"].append(timed([str(bfcl), "evaluate", "--model", BFCL_MODEL, "--test-category",
                                                 ",".join(categories)], env=env, cwd=official_root))
    median = {k: statistics.median(v) for k, v in rounds.items() if v}
    count = len(suite.cases)
    marginal = (median["serial"] - median["small"]) / (count - len(small))
    scorer_per_case = median["loop"] / count
    print(f"BFCL single-turn replay, {count} cases ({sum(1 for i in range(count) if i % 5 in (1, 3))} outputs "
          f"broken), medians of {args.rounds} interleaved rounds")
    print(f"  scorer alone (plain loop):     {median['loop']:7.2f} s  {1000 * scorer_per_case:6.3f} ms/case")
    print(f"  pytest -k bfcl, serial:        {median['serial']:7.2f} s")
    print(f"  pytest -k bfcl, -n 2:          {median['xdist']:7.2f} s  ratio to serial "
          f"{median['xdist'] / median['serial']:.2f}x")
    print(f"  marginal cost of a case through pytest: {1000 * marginal:6.3f} ms; beyond the scorer: "
          f"{1000 * (marginal - scorer_per_case):6.3f} ms/case")
    if "official" in median:
        print(f"  bfcl evaluate (official):      {median['official']:7.2f} s  pytest serial / official "
              f"{median['serial'] / median['official']:.2f}x, -n 2 / official "
              f"{median['xdist'] / median['official']:.2f}x")
    else:
        print("  bfcl evaluate: not measured (no bfcl command; pass --bfcl PATH from a separate bfcl-eval venv)")


if __name__ == "__main__":
    main()
