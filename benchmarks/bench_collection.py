"""Collection and gold-run speed: ``-k <suite>`` against a suite's folder, collecting every item, and the gold run of
every suite with ``-n 2`` against a baseline checkout, all in one run so the figures are ratios on the same machine.

Measured, each as the median of ``--rounds`` interleaved rounds (after one warm-up round, so the plugin's
loaded-suite cache under ``.pytest_cache/d/toolbench/suites`` and the ``.pyc`` files are warm):

1. ``pytest --collect-only -q -p no:cacheprovider -k <suite>`` against ``... suites/<suite>``, for every suite
   folder under ``suites/``, and their ratio (target: -k no more than 1.5x the folder);
2. ``pytest --collect-only -q -p no:cacheprovider suites`` (every item; target: at most 3 s) with a warm cache, and
   once per round with a cold one (``--toolbench-cache`` pointing to a fresh empty folder);
3. the gold run of every suite, ``pytest suites -q -p no:cacheprovider -n 2``, in items per second, for this
   checkout and for ``--baseline-ref`` (default 565c127, the commit before the collection rework), which is checked
   out with ``git worktree add`` into a temporary folder and run with this interpreter, from that folder and with
   ``PYTHONPATH`` naming it, so its own ``pytest_toolbench`` shadows the editable install (checked and printed).

Every run gets ``--toolbench-data=<data>`` and runs with ``PYTHONDONTWRITEBYTECODE`` unset (an environment setting it
would have every run recompile the plugin's modules). No figure is asserted: they are printed, with their targets.

    python benchmarks/bench_collection.py [--data ../shared/data] [--baseline-ref 565c127] [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE_REF = "565c127"
K_TARGET = 1.5
COLLECT_ALL_TARGET = 3.0
COLLECTED = re.compile(r"^(\d+)(?:/(\d+))? tests? collected", re.MULTILINE)
OUTCOME = re.compile(r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?)\b")


class RunFailed(Exception):
    pass


def run_env(checkout: Path) -> dict[str, str]:
    """This environment without PYTHONDONTWRITEBYTECODE, and with ``checkout`` first on the import path so its own
    ``pytest_toolbench`` is imported rather than whatever the editable install points to."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(checkout), os.environ.get("PYTHONPATH", "")) if p)
    return env


def timed(command: list[str], checkout: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, env=run_env(checkout), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        raise RunFailed(f"{' '.join(command[2:])} (in {checkout}): exit {done.returncode}\n{done.stdout[-3000:]}")
    return seconds, done.stdout


def cache_state(checkout: Path) -> dict[str, int]:
    """The loaded-suite cache's entries and their modification times: a warm run that changes them missed."""
    folder = checkout / ".pytest_cache" / "d" / "toolbench" / "suites"
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.pickle")} if folder.is_dir() else {}


def collected(output: str) -> int:
    match = COLLECTED.search(output)
    if match is None:
        raise RunFailed(f"no 'tests collected' line in:\n{output[-2000:]}")
    return int(match.group(1))


def outcomes(output: str) -> tuple[int, str]:
    """Items run and the summary line of a (quiet) test run."""
    lines = [line for line in output.splitlines() if OUTCOME.search(line) and " in " in line]
    if not lines:
        raise RunFailed(f"no summary line in:\n{output[-2000:]}")
    last = lines[-1].strip("= ")
    return sum(int(n) for n, _ in OUTCOME.findall(last)), last


def imported_from(checkout: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", "import pytest_toolbench.plugin as p; print(p.__file__)"],
                          cwd=checkout, env=run_env(checkout), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode != 0:
        raise RunFailed(f"cannot import pytest_toolbench in {checkout}:\n{done.stdout[-2000:]}")
    path = Path(done.stdout.strip().splitlines()[-1]).resolve()
    if checkout.resolve() not in path.parents:
        raise RunFailed(f"pytest_toolbench in {checkout} is imported from {path}, not from that checkout")
    return path


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--baseline-ref", default=BASELINE_REF,
                        help="commit to compare the gold run with (default: %(default)s); '' to skip it")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(args.data).resolve()
    if not data_dir.is_dir():
        raise SystemExit(f"--data {args.data}: no such folder")
    data = f"--toolbench-data={data_dir}"
    pytest = [sys.executable, "-m", "pytest"]
    collect = [*pytest, "--collect-only", "-q", "-p", "no:cacheprovider", data]
    gold = [*pytest, "suites", "-q", "-p", "no:cacheprovider", "-n", "2", data]
    suites = sorted(p.parent.name for p in (REPO / "suites").glob("*/suite.yaml"))

    import pytest as pytest_module
    try:
        import xdist
        xdist_version = xdist.__version__
    except ImportError:
        xdist_version = "absent"
    head = git("rev-parse", "--short", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "pytest_toolbench", "suites"))
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    print(f"pytest-toolbench collection benchmark, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
    print(f"  machine: {platform.machine()} ({platform.system()} {platform.release()}), {cpus} CPUs "
          f"({usable} usable), load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"  Python {platform.python_version()} ({sys.executable}), pytest {pytest_module.__version__}, "
          f"pytest-xdist {xdist_version}")
    print(f"  checkout: {REPO} at {head}{' with uncommitted changes to the plugin or suites' if dirty else ''}")
    print(f"  data: {data_dir}")
    print(f"  PYTHONDONTWRITEBYTECODE is {'set' if os.environ.get('PYTHONDONTWRITEBYTECODE') else 'not set'} "
          f"in this environment; every run below has it unset, so .pyc files are written once and then used")
    print(f"  pytest_toolbench (this checkout): {imported_from(REPO)}")

    worktree_root = Path(tempfile.mkdtemp(prefix="bench-collection-"))
    baseline: Path | None = None
    baseline_problem = ""
    baseline_commit = ""
    try:
        if args.baseline_ref:
            try:
                baseline_commit = git("rev-parse", "--short", f"{args.baseline_ref}^{{commit}}")
                baseline = worktree_root / "baseline"
                git("worktree", "add", "--detach", str(baseline), baseline_commit)
                modules = sorted(str(p.relative_to(baseline)) for p in (baseline / "suites").glob("*/test_*.py"))
                print(f"  baseline: {args.baseline_ref} ({baseline_commit}) checked out in {baseline}; "
                      f"its test modules: {', '.join(modules) or 'none'}")
                print(f"  pytest_toolbench (baseline): {imported_from(baseline)}")
            except (subprocess.CalledProcessError, RunFailed) as error:
                baseline_problem = getattr(error, "stdout", None) or str(error)
                print(f"  baseline {args.baseline_ref}: cannot be used: {baseline_problem.strip()}")
                baseline = None

        # Warm-up: fills the loaded-suite cache and writes the .pyc files of both checkouts.
        timed([*collect, "suites"], REPO)
        timed(gold, REPO, ok=(0, 1))
        if baseline is not None:
            try:
                timed(gold, baseline, ok=(0, 1))
            except RunFailed as error:
                baseline_problem = str(error)
                print(f"  baseline gold run failed; no baseline figure:\n{baseline_problem}")
                baseline = None

        times: dict[str, list[float]] = {}
        counts: dict[str, int] = {}
        summaries: dict[str, str] = {}
        misses: dict[str, int] = {}

        def record(key: str, seconds: float) -> None:
            times.setdefault(key, []).append(seconds)

        def warm(key: str, command: list[str], checkout: Path = REPO, ok: tuple[int, ...] = (0,)) -> str:
            """Times a run that should find the cache warm, and counts it as a miss if it rewrote an entry."""
            before = cache_state(checkout)
            seconds, output = timed(command, checkout, ok)
            record(key, seconds)
            if cache_state(checkout) != before:
                misses[key] = misses.get(key, 0) + 1
            return output

        for _ in range(args.rounds):
            for name in suites:
                counts[f"k:{name}"] = collected(warm(f"k:{name}", [*collect, "-k", name]))
                counts[f"path:{name}"] = collected(warm(f"path:{name}", [*collect, f"suites/{name}"]))
            counts["all"] = collected(warm("all", [*collect, "suites"]))
            with tempfile.TemporaryDirectory(prefix="bench-collection-cold-") as cold:
                seconds, output = timed([*collect, f"--toolbench-cache={cold}", "suites"], REPO)
            record("all-cold", seconds)
            counts["all-cold"] = collected(output)
            counts["gold"], summaries["gold"] = outcomes(warm("gold", gold, ok=(0, 1)))
            if baseline is not None:
                seconds, output = timed(gold, baseline, ok=(0, 1))
                record("gold-base", seconds)
                counts["gold-base"], summaries["gold-base"] = outcomes(output)
    finally:
        if baseline is not None or (worktree_root / "baseline").exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree_root / "baseline")], cwd=REPO,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["git", "worktree", "prune"], cwd=REPO, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        shutil.rmtree(worktree_root, ignore_errors=True)

    median = {k: statistics.median(v) for k, v in times.items()}
    print()
    print(f"Medians of {args.rounds} interleaved rounds, after a warm-up run; warm cache (the loaded-suite cache under "
          f".pytest_cache/d/toolbench/suites filled) unless marked cold; wall time of the whole pytest process")
    print(f"1. pytest --collect-only -q -p no:cacheprovider: -k <suite> against suites/<suite> "
          f"(target: <= {K_TARGET}x)")
    print(f"   {'suite':<12} {'items':>6} {'-k suite':>9} {'suites/x':>9} {'ratio':>7}")
    for name in suites:
        k, path = median[f"k:{name}"], median[f"path:{name}"]
        mismatch = "" if counts[f"k:{name}"] == counts[f"path:{name}"] else \
            f"  (-k selects {counts[f'k:{name}']} items, the folder {counts[f'path:{name}']})"
        print(f"   {name:<12} {counts[f'path:{name}']:>6} {k:>7.2f} s {path:>7.2f} s {k / path:>6.2f}x"
              f"{'' if k / path <= K_TARGET else '  over target'}{mismatch}")
    print(f"2. pytest --collect-only -q -p no:cacheprovider suites, {counts['all']} items (target: <= "
          f"{COLLECT_ALL_TARGET:.0f} s warm):")
    print(f"   warm cache: {median['all']:6.2f} s{'' if median['all'] <= COLLECT_ALL_TARGET else '  over target'}")
    print(f"   cold cache: {median['all-cold']:6.2f} s  (--toolbench-cache=<fresh empty folder>: suites loaded from "
          f"the data and the data's checksums recomputed; {median['all-cold'] / median['all']:.2f}x warm)")
    rate = counts["gold"] / median["gold"]
    print(f"3. gold run, pytest suites -q -p no:cacheprovider -n 2 ({summaries['gold']}):")
    print(f"   this checkout ({head}): {median['gold']:6.2f} s  {rate:7.1f} items/s")
    if "gold-base" in median:
        base_rate = counts["gold-base"] / median["gold-base"]
        print(f"   baseline ({baseline_commit}):      {median['gold-base']:6.2f} s  {base_rate:7.1f} items/s  "
              f"({summaries['gold-base']})")
        print(f"   items/s after / before: {rate / base_rate:.2f}x")
    else:
        print(f"   baseline: not measured{': ' + baseline_problem.splitlines()[0] if baseline_problem else ''}")
    if misses:
        print(f"WARNING: {sum(misses.values())} of the runs timed as warm rewrote the loaded-suite cache (a miss: "
              f"the plugin's files, a suite.yaml or the data changed during the benchmark), so those figures are "
              f"partly cold: {', '.join(f'{k} x{n}' for k, n in sorted(misses.items()))}")
    else:
        print("Every run timed as warm found the loaded-suite cache warm (no entry rewritten).")


if __name__ == "__main__":
    main()
