"""Replay of hostile outputs from broken result files: is the run's time linear in the number of cases?

Writes BFCL result files for the first N cases of every category, whose outputs carry the values that once
crashed workers or dropped cases (20- and 5,000-digit ints, 1e308/nan/inf, 10,000-deep nesting, lone surrogates,
NUL bytes, a 5 MB string), each file with a non-UTF-8 line and a truncated last line; then times
``pytest -k bfcl --toolbench-replay`` serially and with ``-n 2`` for growing N in the same run. Prints the marginal time per added case
between consecutive sizes and its ratio to the first (about 1.0 throughout: linear).

    python benchmarks/bench_replay_scaling.py [--data ../shared/data] [--sizes 25 50 100 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_nothing_lost import _jsonl_with_broken_lines, _python_output  # noqa: E402  (the hostile outputs)


def write_results(data_dir: Path, limit: int, folder: Path) -> int:
    from pytest_toolbench.run.catalog import Catalog, Registry
    from pytest_toolbench.run.cache_layout import CacheLayout

    catalog = Catalog(Registry(), str(data_dir), "bench", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit)
    cases = catalog.load(REPO / "suites" / "bfcl" / "suite.yaml").cases
    by_category: dict[str, list[dict]] = {}
    for index, case in enumerate(cases):
        by_category.setdefault(case.category, []).append({"id": case.case_id, "result": _python_output(index)})
    for category, rows in by_category.items():
        (folder / f"BFCL_v4_{category}_result.json").write_bytes(_jsonl_with_broken_lines(rows))
    return len(cases)


def timed_run(data_dir: Path, replay: Path, limit: int, extra: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "suites"),
                           "-k", "bfcl", f"--toolbench-data={data_dir}", f"--toolbench-replay={replay}",
                           f"--toolbench-limit={limit}", "--toolbench-data-unverified", *extra],
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if done.returncode != 0 or "INTERNALERROR" in done.stdout:
        raise SystemExit(f"run failed (exit {done.returncode}):\n{done.stdout[-3000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200])
    args = parser.parse_args()
    data_dir = Path(args.data).resolve()
    rows = []
    for limit in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            count = write_results(data_dir, limit, Path(tmp))
            serial = timed_run(data_dir, Path(tmp), limit, [])
            parallel = timed_run(data_dir, Path(tmp), limit, ["-n", "2"])
        rows.append((limit, count, serial, parallel))
    # A fixed start-up cost (collecting every suite) comes with every run: linear time means a constant cost per
    # added case, so the figure is the marginal time per case between consecutive sizes, and its ratio to the first.
    print("hostile BFCL replay, every case with a verdict; marginal time per added case between consecutive sizes")
    print(f"{'N/category':>10} {'cases':>6} {'serial s':>9} {'ms/case+':>9} {'ratio':>6} {'-n 2 s':>8} "
          f"{'ms/case+':>9} {'ratio':>6}")
    first: tuple[float, float] | None = None
    for index, (limit, count, serial, parallel) in enumerate(rows):
        if index == 0:
            print(f"{limit:>10} {count:>6} {serial:>9.2f} {'':>9} {'':>6} {parallel:>8.2f}")
            continue
        _, previous_count, previous_serial, previous_parallel = rows[index - 1]
        added = count - previous_count
        slope = ((serial - previous_serial) / added, (parallel - previous_parallel) / added)
        first = first or slope
        print(f"{limit:>10} {count:>6} {serial:>9.2f} {1000 * slope[0]:>9.2f} {slope[0] / first[0]:>6.2f} "
              f"{parallel:>8.2f} {1000 * slope[1]:>9.2f} {slope[1] / first[1]:>6.2f}")

if __name__ == "__main__":
    main()
