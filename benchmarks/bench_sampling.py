"""How good are ``--toolbench-sample``'s estimates? Coverage of the 95% interval, its mean half-width, and the wall
time of a sampled run against the full run, per headline figure, on real result sets.

Result sets (each a full population of per-case verdicts; the script draws many seeds from it with the plugin's own
``stats.sampling.draw`` and estimates with ``stats.estimation.estimate_figures`` and the suite's own ``aggregate``):

- ``bfcl-st:<model>``: BFCL v4 single-turn (13 categories, 3,641 cases, the real case ids) with each category's
  passes set to the count the published leaderboard gives that model (``<data>/bfcl-leaderboard``; where the
  leaderboard publishes only a mean of categories, Simple = mean of python/java/javascript, Irrelevance = mean of
  irrelevance/live_irrelevance, each category of the mean gets it). Under stratified simple random sampling the
  distribution of every estimate depends on a stratum only through its size and its number of passes, so these
  populations give exactly the coverage a per-case result file of that model would (which cases pass is placed at
  random, seed fixed). Four models spread over the leaderboard.
- ``bfcl-full:<model>``: the same for all 22 categories (multi-turn, web search, memory too), for the official
  Overall; memory questions are drawn by scenario (5 per category), as the plugin does.
- ``bfcl-real:<file>`` (``--results RUN_JSON ...``): the real per-case verdicts of a replayed BFCL run (the plugin's
  ``--toolbench-json`` of a published model's result files), single-turn cases.
- ``rotbench``, ``nestools``, ``acebench``: real per-case records of the plugin replaying ``shared/dev-verdicts``
  (outputs whose official verdicts are known), made by this script with ``pytest --toolbench-replay``.

Run: ``.venv/bin/python benchmarks/bench_sampling.py [--seeds 100] [--quick]`` from the repository root with the data
at ``TOOLBENCH_DATA`` or ``../shared/data``. Prints the tables and writes ``benchmarks/results/sampling-<date>.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_toolbench.contract.suite import CaseRecord  # noqa: E402
from pytest_toolbench.stats import estimation, sampling  # noqa: E402
from pytest_toolbench.run.catalog import import_scorer  # noqa: E402

DATA = Path(os.environ.get("TOOLBENCH_DATA") or ROOT.parent / "shared" / "data").resolve()
DEV_VERDICTS = DATA.parent / "dev-verdicts"
SINGLE_TURN = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
               "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance")
#: leaderboard column per category (a mean column given to each category it averages)
COLUMNS = {"simple_python": "Non-Live Simple AST", "simple_java": "Non-Live Simple AST",
           "simple_javascript": "Non-Live Simple AST", "multiple": "Non-Live Multiple AST",
           "parallel": "Non-Live Parallel AST", "parallel_multiple": "Non-Live Parallel Multiple AST",
           "irrelevance": "Irrelevance Detection", "live_simple": "Live Simple AST",
           "live_multiple": "Live Multiple AST", "live_parallel": "Live Parallel AST",
           "live_parallel_multiple": "Live Parallel Multiple AST", "live_irrelevance": "Irrelevance Detection",
           "live_relevance": "Relevance Detection", "multi_turn_base": "Multi Turn Base",
           "multi_turn_miss_func": "Multi Turn Miss Func", "multi_turn_miss_param": "Multi Turn Miss Param",
           "multi_turn_long_context": "Multi Turn Long Context", "web_search_base": "Web Search Base",
           "web_search_no_snippet": "Web Search No Snippet", "memory_kv": "Memory KV", "memory_vector": "Memory Vector",
           "memory_rec_sum": "Memory Recursive Summarization"}
HEADLINE = {"bfcl": ("non_live_ast", "live_ast", "irrelevance_detection", "relevance_detection",
                     "overall_over_categories_ran", "multi_turn", "agentic", "overall_official")}
MEMORY_SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")


def bfcl_ids() -> dict[str, list[str]]:
    """The real single-turn case ids, per category, from the data."""
    ids = {}
    for category in SINGLE_TURN:
        path = DATA / "bfcl" / f"BFCL_v4_{category}.json"
        ids[category] = [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
    return ids


def leaderboard_rows(full: bool, count: int) -> list[dict[str, str]]:
    path = next((DATA / "bfcl-leaderboard").glob("*.csv"))
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    wanted = [COLUMNS[c] for c in (COLUMNS if full else SINGLE_TURN)]
    usable = [row for row in rows if all(row.get(col, "N/A").endswith("%") for col in wanted)]
    usable.sort(key=lambda row: -float(row["Overall Acc"].rstrip("%")))
    step = max(1, (len(usable) - 1) // max(1, count - 1))
    return [usable[min(i * step, len(usable) - 1)] for i in range(count)]


def population(row: dict[str, str], full: bool, ids: dict[str, list[str]], seed: int) -> list[CaseRecord]:
    bfcl = import_scorer(ROOT / "suites" / "bfcl", "aggregation")
    rng = random.Random(seed)
    records = []
    for category in (COLUMNS if full else SINGLE_TURN):
        n = bfcl.UPSTREAM_COUNTS[category]
        if category in ids:
            names = ids[category]
        elif category.startswith("memory_"):
            per = n // len(MEMORY_SCENARIOS)
            names = [f"{category}_{i}-{MEMORY_SCENARIOS[i // per]}-{i % per}" for i in range(n)]
        else:
            names = [f"{category}_{i}" for i in range(n)]
        passes = round(float(row[COLUMNS[category]].rstrip("%")) / 100 * n)
        flags = [True] * passes + [False] * (n - passes)
        rng.shuffle(flags)
        records += [CaseRecord("bfcl", case_id, category, flag, None if flag else "wrong")
                    for case_id, flag in zip(names, flags)]
    return records


def replay_records(suite: str) -> list[CaseRecord] | None:
    """The plugin's records of replaying dev-verdicts/<suite>/round_0 (None when they are not there)."""
    folder = DEV_VERDICTS / suite / "round_0"
    if not folder.is_dir():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        subprocess.run([sys.executable, "-m", "pytest", f"suites/{suite}", "-q", "-p", "no:cacheprovider",
                        f"--toolbench-data={DATA}", f"--toolbench-replay={folder}", f"--toolbench-json={out}"],
                       cwd=ROOT, capture_output=True, check=False)
        if not out.is_file():
            return None
        return [CaseRecord.from_json(case) for case in json.loads(out.read_text())["cases"]]


_SETS: dict[str, tuple[str, list[CaseRecord]]] = {}


def _one(task: tuple[str, float, int]) -> tuple[str, float, int, dict, float]:
    name, fraction, seed = task
    suite, records = _SETS[name]
    aggregate = import_scorer(ROOT / "suites" / suite).aggregate
    unit = getattr(import_scorer(ROOT / "suites" / suite), "sampling_unit", None)
    started = time.perf_counter()
    drawn, design = sampling.draw(records, sampling.SampleSpec(fraction=fraction, seed=seed), suite,
                                  lambda r: r.category, lambda r: r.case_id,
                                  (lambda r: unit(r.case_id, r.category)) if unit else None)
    estimates = estimation.estimate_figures(drawn, design, aggregate)
    seconds = time.perf_counter() - started
    return name, fraction, seed, {f"{g}|{n}": (e.value, e.interval95, e.method) for (g, n), e in estimates.items()}, \
        seconds


def _init(sets: dict) -> None:
    _SETS.update(sets)


def wall_times(fractions: list[float]) -> dict[str, float]:
    """Wall time of the plugin (gold backend) on BFCL single-turn: the full run and each fraction."""
    selection = "not multi_turn and not memory and not web_search"
    times = {}
    for fraction in [None, *fractions]:
        args = [sys.executable, "-m", "pytest", "suites/bfcl", "-q", "-p", "no:cacheprovider", "-k", selection,
                f"--toolbench-data={DATA}"] + ([f"--toolbench-sample={fraction}"] if fraction else [])
        started = time.perf_counter()
        subprocess.run(args, cwd=ROOT, capture_output=True, check=False)
        times["full" if fraction is None else str(fraction)] = time.perf_counter() - started
    return times


def overall_half_widths(fractions: list[float]) -> dict[str, dict[str, float]]:
    """The official Overall's 95% half-width (points) at each fraction for every published model with all 22
    categories on the leaderboard, from the stratified variance ``sum_h c_h^2 (1 - f_h) S_h^2 / n_h`` with the
    model's per-category accuracies (the Overall's coefficients: 10/10/10/30/40 split over each component's
    categories, Live by category size; memory runs whole: 5 scenarios per category, the minimum)."""
    import math

    counts = import_scorer(ROOT / "suites" / "bfcl", "aggregation").UPSTREAM_COUNTS
    live = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
    weight = {**{c: 0.1 / 12 for c in ("simple_python", "simple_java", "simple_javascript")},
              **{c: 0.1 / 4 for c in ("multiple", "parallel", "parallel_multiple")},
              **{c: 0.1 * counts[c] / sum(counts[x] for x in live) for c in live},
              "irrelevance": 0.05, "live_irrelevance": 0.05,
              **{c: 0.3 / 4 for c in ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                                      "multi_turn_long_context")},
              "web_search_base": 0.1, "web_search_no_snippet": 0.1}
    rows = leaderboard_rows(True, 1000)
    found = {}
    for fraction in fractions:
        units = {c: (5 if c.startswith("memory_") else n) for c, n in counts.items()}
        drawn = sampling.allocate(units, sampling.SampleSpec(fraction=fraction))
        widths = []
        for row in {r["Model"]: r for r in rows}.values():
            variance = 0.0
            for category, c in weight.items():
                p, n, size = float(row[COLUMNS[category]].rstrip("%")) / 100, drawn[category], counts[category]
                variance += c * c * (1 - n / size) * p * (1 - p) * size / (size - 1) / n
            widths.append(100 * 1.959964 * math.sqrt(variance))
        widths.sort()
        found[str(fraction)] = {"models": len(widths), "median": widths[len(widths) // 2], "largest": widths[-1],
                                "cases": sum(drawn[c] * (31 if c.startswith("memory_") else 1) for c in counts)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=100, help="seeds at the 10%% fraction (others: half)")
    parser.add_argument("--quick", action="store_true", help="few seeds and models (a smoke check of the script)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--other-seeds", type=int, default=10, help="seeds at the other fractions and sets")
    parser.add_argument("--draws-log", default=None, help="append every draw's estimates to this JSONL file")
    parser.add_argument("--from-log", action="store_true", help="resume: the draws in --draws-log are not redone")
    parser.add_argument("--no-wall-time", action="store_true", help="skip the timed plugin runs")
    parser.add_argument("--summarize-only", action="store_true", help="with --from-log: only the draws logged")
    parser.add_argument("--acceptance-only", action="store_true", help="only the 10%% single-turn draws")
    parser.add_argument("--results", nargs="*", default=[], metavar="RUN_JSON",
                        help="real per-case result sets: the plugin's --toolbench-json of a replayed BFCL run (e.g. a "
                             "published model's result files); their single-turn cases are drawn at 10%% with --seeds "
                             "seeds each, beside the leaderboard-count populations")
    parser.add_argument("--out", default=None, help="write the JSON here (default benchmarks/results/sampling-<date>.json)")
    parser.add_argument("--replays", action="store_true",
                        help="also the dev-verdicts replays of RoTBench, NesTools, ACEBench (seconds per draw)")
    args = parser.parse_args()
    seeds_main = 5 if args.quick else args.seeds
    models = 2 if args.quick else 4
    if args.quick:
        args.other_seeds = 2
    ids = bfcl_ids()
    sets: dict[str, tuple[str, list[CaseRecord]]] = {}
    tasks = []
    other_fractions = [0.05, 0.2, 0.3, 0.5]
    # the acceptance first: BFCL single-turn at 10%, --seeds seeds on each of several published models
    for index, row in enumerate(leaderboard_rows(False, models)):
        name = f"bfcl-st:{row['Model']}"
        sets[name] = ("bfcl", population(row, False, ids, index))
        tasks += [(name, 0.1, seed) for seed in range(seeds_main)]
    # real per-case result sets (a replayed run's JSON): the cases themselves, not counts placed at random
    for path in args.results:
        cases = json.loads(Path(path).read_text(encoding="utf-8"))["cases"]
        records = [CaseRecord.from_json(case) for case in cases
                   if case.get("suite") == "bfcl" and case.get("category") in SINGLE_TURN]
        name = f"bfcl-real:{Path(path).stem}"
        sets[name] = ("bfcl", records)
        tasks += [(name, 0.1, seed) for seed in range(seeds_main)]
    # the other fractions on the first model, and the full benchmark (official Overall) on one model
    if args.acceptance_only:
        args.other_seeds = 0
    first = next(iter(sets))
    tasks += [(first, fraction, seed) for fraction in other_fractions for seed in range(args.other_seeds)]
    row = leaderboard_rows(True, 1)[0]
    full = f"bfcl-full:{row['Model']}"
    sets[full] = ("bfcl", population(row, True, ids, 100))
    tasks += [(full, fraction, seed) for fraction in [0.05, 0.1] + other_fractions[1:] for seed in
              range(args.other_seeds)]
    if args.replays:
        for suite in ("rotbench", "nestools", "acebench"):
            records = replay_records(suite)
            if records:
                name = f"{suite} (dev-verdicts replay)"
                sets[name] = (suite, records)
                tasks += [(name, 0.1, seed) for seed in range(args.other_seeds)]
    fractions = sorted({task[1] for task in tasks})
    truth = {}
    for name, (suite, records) in sets.items():
        aggregate = import_scorer(ROOT / "suites" / suite).aggregate
        truth[name] = {f"{m.group}|{m.name}": m.value for m in aggregate(records)}
    print(f"{len(sets)} result sets, {len(tasks)} draws on {args.workers} processes", flush=True)
    started = time.perf_counter()
    results = []
    log = Path(args.draws_log) if args.draws_log else None
    if log is not None and args.from_log:
        results = [tuple(json.loads(line)) for line in log.read_text().splitlines() if line.strip()]
        done_tasks = {(r[0], r[1], r[2]) for r in results}
        tasks = [] if args.summarize_only else [task for task in tasks if task not in done_tasks]
        print(f"{len(results)} draws read from {log}; {len(tasks)} to go", flush=True)
    with multiprocessing.get_context("fork").Pool(args.workers, _init, (sets,)) as pool:
        for done, result in enumerate(pool.imap_unordered(_one, tasks, chunksize=2) if tasks else (), 1):
            results.append(result)
            if log is not None:
                with log.open("a") as handle:
                    handle.write(json.dumps(result) + "\n")
            if done % 20 == 0:
                print(f"  {done}/{len(tasks)} draws, {time.perf_counter() - started:.0f} s", flush=True)
    table: dict[tuple[str, float, str], list] = {}
    seconds: dict[tuple[str, float], list[float]] = {}
    for name, fraction, seed, estimates, took in results:
        fraction = float(fraction)
        seconds.setdefault((name, fraction), []).append(took)
        for key, (value, interval, method) in estimates.items():
            true = truth[name].get(key)
            if true is None or value is None:
                continue
            row = table.setdefault((name, fraction, key), [0, 0, 0.0, 0.0, method, 0])
            if interval is None:
                row[5] += 1
                continue
            row[1] += 1
            row[0] += interval[0] - 1e-9 <= true <= interval[1] + 1e-9
            row[2] += (interval[1] - interval[0]) / 2
            row[3] = max(row[3], abs(value - true))
    report = {"machine": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
                          "cpu": f"{platform.machine()}, {os.cpu_count()} cores", "commit": _commit()},
              "seeds_at_10_percent": seeds_main, "sets": {}, "wall_time_s": {}}
    for (name, fraction, key), (hit, total, half, worst, method, without) in sorted(table.items()):
        entry = report["sets"].setdefault(name, {}).setdefault(str(fraction), {})
        entry[key] = {"coverage": hit / total if total else None, "draws": total, "mean_half_width": half / total
                      if total else None, "largest_error": worst, "method": method, "without_interval": without}
    for name in sets:
        print(f"\n== {name}")
        for fraction in fractions:
            entry = report["sets"].get(name, {}).get(str(fraction))
            if not entry:
                continue
            took = seconds[(name, fraction)]
            print(f"  fraction {fraction:g}: {len(took)} seeds, estimate {sum(took) / len(took):.2f} s per draw")
            for key, row in entry.items():
                group, metric = key.split("|", 1)
                if row["draws"] == 0:
                    continue
                headline = metric in HEADLINE.get(sets[name][0], ()) or group in ("category", "aggregate")
                if not headline:
                    continue
                print(f"    {metric:42s} coverage {100 * row['coverage']:5.1f}% of {row['draws']:3d}  "
                      f"half-width {100 * row['mean_half_width']:5.2f} pts  worst error {100 * row['largest_error']:5.2f}"
                      f"  [{row['method'][:28]}]")
    if not args.quick and not args.no_wall_time:
        report["wall_time_s"] = wall_times([0.05, 0.1, 0.2, 0.3])
        print("\nwall time of the plugin (gold backend, BFCL single-turn):",
              ", ".join(f"{k}: {v:.1f} s" for k, v in report["wall_time_s"].items()))
    report["overall_half_width_published_models"] = overall_half_widths([0.05, 0.1, 0.2, 0.3, 0.4, 0.5])
    print("\nofficial Overall, 95% half-width (points) over the published models with every category:")
    for fraction, row in report["overall_half_width_published_models"].items():
        print(f"  {float(fraction):4.0%} ({row['cases']:,} cases): median {row['median']:.2f}, largest "
              f"{row['largest']:.2f} ({row['models']} models)")
    out = Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / f"sampling-{time.strftime('%Y-%m-%d')}{'-quick' if args.quick else ''}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwritten {out}")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
