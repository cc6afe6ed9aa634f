"""``pytest --collect-only -k <suite>`` against ``pytest --collect-only suites/<suite>``: the ratio (target: at most
1.5x), each the median of ``--rounds`` interleaved runs after one warm-up of each (warm loaded-suite cache and
``.pyc`` files), in the same run on the same machine. A ``-k`` run collects from every suite folder and rules the
others out; what that costs per ruled-out suite is the difference over their number, also printed.

Runs without ``PYTHONDONTWRITEBYTECODE`` (it would recompile the plugin's modules on every run) and with
``-p no:cacheprovider``. No figure is asserted.

    python benchmarks/bench_keyword_collection.py [--suite rotbench] [--rounds 7] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.5


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process: user + system). The CPU time is the steadier figure on a shared
    machine; both ratios are printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode not in (0, 5):
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{output.decode()[-3000:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="rotbench")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    args = parser.parse_args()
    base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            f"--toolbench-data={args.data}"]
    keyword = [*base, "-k", args.suite]
    folder = [*base, f"suites/{args.suite}"]
    timed(keyword), timed(folder)  # warm-up
    by_keyword, by_folder = [], []
    for _ in range(args.rounds):
        by_keyword.append(timed(keyword))
        by_folder.append(timed(folder))
    others = len([p for p in (REPO / "suites").glob("*/suite.yaml")]) - 1
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    for what, column in (("wall", 0), ("CPU", 1)):
        k = statistics.median(t[column] for t in by_keyword)
        f = statistics.median(t[column] for t in by_folder)
        print(f"{what}: -k {args.suite} median {k:.3f} s, suites/{args.suite} median {f:.3f} s over {args.rounds} "
              f"rounds: ratio {k / f:.2f}x (target <= {TARGET}x); {1000 * (k - f) / max(others, 1):.0f} ms per "
              f"ruled-out suite ({others} of them)")

if __name__ == "__main__":
    main()
