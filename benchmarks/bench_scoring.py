"""Scoring throughput: pytest-toolbench over a replayed run vs. a plain loop calling the scorer.

Replays the gold outputs of a suite (BFCL single-turn by default, 3,641 cases) as the benchmark's own result files,
then measures in the same run:
  1. a plain Python loop: load cases, score each saved output with the suite's scorer (no pytest);
  2. ``pytest -k <suite> --toolbench-replay <files>`` in a subprocess (collection, scoring, summary);
  3. the same with ``-n 2`` (xdist).
Prints cases per second for each and the ratios against the plain loop (the pytest overhead).

    python benchmarks/bench_scoring.py [--suite bfcl] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_bfcl_results(cases, folder: Path, gold_output) -> None:
    by_category: dict[str, list[dict]] = {}
    for case in cases:
        by_category.setdefault(case.category, []).append({"id": case.case_id, "result": gold_output(case)})
    for category, rows in by_category.items():
        path = folder / f"BFCL_v4_{category}_result.json"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def plain_loop(suite_yaml: Path, data_dir: Path, replay: Path) -> tuple[int, float]:
    from pytest_toolbench.catalog import Catalog, Registry
    from pytest_toolbench.suite import Generation

    started = time.perf_counter()
    catalog = Catalog(Registry(), str(data_dir), "bench", Path(tempfile.mkdtemp()), False, None)
    suite = catalog.load(suite_yaml)
    outputs = suite.benchmark.replay_outputs(replay)
    passed = 0
    for case in suite.cases:
        passed += suite.benchmark.score(case, Generation(text=outputs[case.case_id])).passed
    return len(suite.cases), time.perf_counter() - started


def pytest_run(suite: str, data_dir: Path, replay: Path, extra: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "suites" / suite),
                    f"--toolbench-data={data_dir}", f"--toolbench-replay={replay}", "--no-header",
                    *extra], cwd=REPO, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="bfcl")
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    args = parser.parse_args()
    data_dir = Path(args.data).resolve()
    suite_yaml = REPO / "suites" / args.suite / "suite.yaml"

    from pytest_toolbench.catalog import Catalog, Registry

    catalog = Catalog(Registry(), str(data_dir), "bench", Path(tempfile.mkdtemp()), False, None)
    suite = catalog.load(suite_yaml)
    with tempfile.TemporaryDirectory() as tmp:
        replay = Path(tmp)
        write_bfcl_results(suite.cases, replay, suite.benchmark.gold_output)
        count, loop_s = plain_loop(suite_yaml, data_dir, replay)
        serial_s = pytest_run(args.suite, data_dir, replay, [])
        xdist_s = pytest_run(args.suite, data_dir, replay, ["-n", "2"])
    print(f"suite {args.suite}: {count} cases scored from replay")
    print(f"  plain loop (load + score, no pytest): {count / loop_s:9.1f} cases/s  ({loop_s:.2f} s)")
    print(f"  pytest, serial:                       {count / serial_s:9.1f} cases/s  ({serial_s:.2f} s)"
          f"  ratio vs loop {loop_s / serial_s:.3f}x")
    print(f"  pytest -n 2:                          {count / xdist_s:9.1f} cases/s  ({xdist_s:.2f} s)"
          f"  ratio vs loop {loop_s / xdist_s:.3f}x")


if __name__ == "__main__":
    main()
