"""Does the drop gate cry wolf, and does it still catch a real regression? Measured on two rounds of one suite.

Input: two ``--toolbench-json`` results files of the same suite (two rounds: e.g. one checkpoint's BFCL outputs
generated twice, or a gold run and a replayed one), or one file and ``--synthetic-flips RATE`` (the second round is
the first with a seeded share RATE of each category's cases flipped between pass and fail: for a suite whose figures
read each case's pass/fail, as BFCL's do). For each draw, a fair coin per case (per declared cluster) decides which
round's record goes to the baseline and which to the candidate: the two runs are then exchangeable unit by unit, so
every figure's true change is zero and any missed gate is a false alarm (the null). This is a null whatever the two
rounds are; two rounds of one checkpoint make it the realistic one.

- **null**: the share of draws where ``--toolbench-max-drop=POINTS --toolbench-significance=ALPHA`` misses (any
  figure), under each correction of ``--multiple`` (default: holm, westfall-young and none, read off one comparison
  per draw);
- **power**: the same draws with a regression planted in the candidate: ``--plant`` points of one category's cases
  that pass in the candidate made to fail (marked failed, its per-case credit counts zeroed); the share of draws whose gate misses naming that figure, and the power each figure states
  for a 5-point drop at the draw's observed flip rate (mean over draws), to compare with it.

Everything goes through the plugin's own code (``summarize``, ``compare``, ``evaluate_gates``), as a run would.

    python benchmarks/bench_gate_null.py ROUND_A.json ROUND_B.json --suite rotbench --category ... [--draws 20]
    python benchmarks/bench_gate_null.py GOLD.json --synthetic-flips 0.05 --suite bfcl [--draws 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_toolbench.contract.aggregates import load as load_design  # noqa: E402
from pytest_toolbench.report.compare import adjust_family, compare, evaluate_gates  # noqa: E402
from pytest_toolbench.report.json_results import document  # noqa: E402
from pytest_toolbench.report.results_file import read  # noqa: E402
from pytest_toolbench.report.run_report import build  # noqa: E402
from pytest_toolbench.report.settings import ReportSettings  # noqa: E402
from pytest_toolbench.run.records import CaseRecord  # noqa: E402
from pytest_toolbench.run.summary import SuiteInput, summarize  # noqa: E402


class Suite:
    """The suite's own aggregation; a case (or cluster) aggregated alone is remembered: it is the same whichever
    run the coin puts it in, and the per-case split is what costs (the figures are unchanged)."""

    def __init__(self, name: str) -> None:
        self._aggregate = importlib.import_module(f"suites.{name}.scorer.aggregation").aggregate
        self._alone: dict = {}

    def aggregate(self, results):
        if len(results) > 8:
            return self._aggregate(results)
        key = tuple(json.dumps(r.to_json(), sort_keys=True) for r in results)
        if key not in self._alone:
            self._alone[key] = self._aggregate(results)
        return self._alone[key]


def rounds(path: Path, suite: str) -> dict[str, CaseRecord]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {c["case_id"]: CaseRecord.from_json(c) for c in data["cases"] if c.get("suite") == suite}


def flipped(record: CaseRecord, passed: bool) -> CaseRecord:
    """The record made to pass or fail, its per-case credit counts (RoTBench's ts/pi/cf) all 1 or all 0 with it."""
    body = record.to_json()
    counts = body.get("counts") or {}
    return CaseRecord.from_json({**body, "passed": passed, "error_type": None if passed else "planted",
                                 "counts": {k: 1.0 if passed else 0.0 for k in counts}})


def synthetic_round(a: dict[str, CaseRecord], rate: float, seed: int) -> dict[str, CaseRecord]:
    """Round A with a seeded share ``rate`` of each category's cases flipped between pass and fail."""
    rng = random.Random(seed * 7919 + 17)
    by_category: dict[str, list[str]] = {}
    for case_id, record in sorted(a.items()):
        by_category.setdefault(record.category, []).append(case_id)
    b = dict(a)
    for members in by_category.values():
        for case_id in rng.sample(members, round(rate * len(members))):
            b[case_id] = flipped(a[case_id], not a[case_id].passed)
    return b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("round_a", type=Path)
    parser.add_argument("round_b", type=Path, nargs="?")
    parser.add_argument("--suite", default="bfcl")
    parser.add_argument("--synthetic-flips", type=float, default=None,
                        help="make round B from round A with this share of each category's cases flipped")
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--points", type=float, default=2.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--plant", type=float, default=5.0, help="points of the planted regression")
    parser.add_argument("--category", default="simple_python", help="the records' category to plant it in")
    parser.add_argument("--figure", default=None, help="the figure that category is (default: its name)")
    parser.add_argument("--multiple", default="holm,westfall-young,none", help="the corrections measured")
    args = parser.parse_args()
    suite_dir = ROOT / "suites" / args.suite
    design = load_design(suite_dir / "aggregates.yaml")
    benchmark = Suite(args.suite)
    a = rounds(args.round_a, args.suite)
    if args.synthetic_flips is not None:
        b, name_b = synthetic_round(a, args.synthetic_flips, args.seed), f"A with {args.synthetic_flips:g} flipped"
    else:
        b, name_b = rounds(args.round_b, args.suite), args.round_b.name
    ids = sorted(set(a) & set(b))
    disagree = sum(a[i].passed != b[i].passed for i in ids)
    print(f"{args.suite}: rounds {args.round_a.name} ({sum(a[i].passed for i in ids)}/{len(ids)} pass) and {name_b} "
          f"({sum(b[i].passed for i in ids)}/{len(ids)}); they disagree on {disagree} cases "
          f"({100 * disagree / len(ids):.1f}%)")
    figure = args.figure or args.category
    target = [i for i in ids if a[i].category == args.category]
    planted = round(args.plant / 100 * len(target))
    methods = args.multiple.split(",")
    units: dict[str, list[str]] = {}
    for i in ids:
        units.setdefault(design.cluster_of(i), []).append(i)
    rng = random.Random(args.seed)
    null = {m: 0 for m in methods}
    caught = {m: 0 for m in methods}
    named = {m: 0 for m in methods}
    stated: dict[str, list[float]] = {m: [] for m in methods}
    families: dict[str, list[int]] = {m: [] for m in methods}
    refused = 0
    started = time.time()

    def run_of(records):
        return summarize(records, {args.suite: SuiteInput(benchmark, args.suite, {}, None, design)},
                         header={"backend": "replay"})

    def gates(comparison, summary, method):
        adjusted = copy.deepcopy(comparison)
        adjust_family(adjusted, method, args.alpha)
        settings = ReportSettings(max_drop=args.points, significance=args.alpha, multiple=method)
        return [g for g in evaluate_gates(summary, adjusted, settings) if not g.passed], adjusted

    for draw in range(args.draws):
        coin = {unit: rng.random() < 0.5 for unit in units}
        baseline = [a[i] if coin[design.cluster_of(i)] else b[i] for i in ids]
        candidate = [b[i] if coin[design.cluster_of(i)] else a[i] for i in ids]
        baseline_file = read(json.loads(json.dumps(document(build(run_of(baseline), baseline)))))
        summary = run_of(candidate)
        comparison = compare(summary, candidate, baseline_file, "baseline.json", "none", args.alpha)
        line = [f"draw {draw + 1}/{args.draws}: null"]
        for method in methods:
            missed, adjusted = gates(comparison, summary, method)
            null[method] += bool(missed)
            families[method].append(adjusted.family)
            refused += bool(method == "westfall-young" and adjusted.multiple_refused)
            line.append(f"{method} {'MISSED' if missed else 'passed'} (family {adjusted.family})")
        now = dict(zip(ids, candidate))
        passing = [i for i in target if now[i].passed]
        chosen = set(rng.sample(passing, min(planted, len(passing))))
        worse = [flipped(r, False) if r.case_id in chosen else r for r in candidate]
        planted_summary = run_of(worse)
        planted_comparison = compare(planted_summary, worse, baseline_file, "baseline.json", "none", args.alpha)
        line.append("; planted")
        for method in methods:
            missed, adjusted = gates(planted_comparison, planted_summary, method)
            caught[method] += bool(missed)
            named[method] += any(f"{args.suite}.{figure} " in g.message for g in missed)
            hit = next((d.paired for k, d in adjusted.suites[args.suite].metrics.items() if k[1] == figure), None)
            if hit is not None and hit.power is not None:
                stated[method].append(hit.power)
            line.append(f"{method} {'caught' if missed else 'NOT caught'}"
                        + (f" (p adj {hit.p_adjusted:.3g}, stated power {100 * hit.power:.0f}% at "
                           f"{100 * (hit.flip_rate or 0):.1f}% flips)" if hit is not None and hit.power is not None
                           and hit.p_adjusted is not None else ""))
        print(" ".join(line) + f" ({time.time() - started:.0f} s)", flush=True)
    n = args.draws

    def share(k: int) -> str:
        p = k / n
        return f"{k}/{n} = {100 * p:.1f}% (MC s.e. {100 * math.sqrt(max(p * (1 - p), 1 / n) / n):.1f})"

    print(f"\n{args.suite}: gate --toolbench-max-drop={args.points:g} --toolbench-significance={args.alpha:g}, {n} "
          f"coin-swapped draws (seed {args.seed}), planted {len(chosen)} cases ({args.plant:g} points) of "
          f"{args.category}; {time.time() - started:.0f} s")
    for method in methods:
        power = (f"; stated power against 5 points, mean {100 * sum(stated[method]) / len(stated[method]):.0f}%"
                 if stated[method] else "")
        print(f"  --toolbench-multiple={method}: family {min(families[method])}-{max(families[method])}; null missed "
              f"in {share(null[method])}; planted caught in {share(caught[method])}, naming {figure} in "
              f"{share(named[method])}{power}")
    if "westfall-young" in methods:
        print(f"  westfall-young refused (a swap-tested member) in {refused} of {n} null draws")


if __name__ == "__main__":
    main()
