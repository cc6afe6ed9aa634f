"""Does the drop gate cry wolf, and does it still catch a real regression? Measured on real BFCL outputs.

Input: two ``--toolbench-json`` results files of the same checkpoint's BFCL single-turn outputs (two rounds:
e.g. gpt-oss-120b generated twice, under two vLLM versions, from github.com/bbrowning/bfcl-vllm-results, replayed
with ``--toolbench-replay``). For each draw, a fair coin per case decides which round's outcome goes to the
baseline and which to the candidate: the two runs are then exchangeable case by case, so every figure's true change
is zero and any missed gate is a false alarm (the null). This is a null whatever the two rounds are; two rounds of
one checkpoint make it the realistic one (their case-level disagreement is run-to-run noise, not a model change).

- **null**: the share of draws where ``--toolbench-max-drop=POINTS --toolbench-significance=ALPHA`` misses (any
  figure), with the default Holm correction and with ``--toolbench-multiple=none``;
- **power**: the same draws with a regression planted in the candidate: ``--plant`` points of one category
  (default simple_python, 400 cases) taken from cases that pass (they fail instead); the share of draws whose gate
  misses naming that category (and any figure).

Everything goes through the plugin's own code (``summarize``, ``compare``, ``evaluate_gates``), as a run would.

    python benchmarks/bench_gate_null.py ROUND_A.json ROUND_B.json [--draws 40] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_toolbench.contract.aggregates import load as load_design  # noqa: E402
from pytest_toolbench.report.compare import compare, evaluate_gates  # noqa: E402
from pytest_toolbench.report.json_results import document  # noqa: E402
from pytest_toolbench.report.run_report import build  # noqa: E402
from pytest_toolbench.report.settings import ReportSettings  # noqa: E402
from pytest_toolbench.run.records import CaseRecord  # noqa: E402
from pytest_toolbench.run.summary import summarize  # noqa: E402
from suites.bfcl.scorer.aggregation import aggregate  # noqa: E402


_ALONE: dict = {}


def _aggregate(results):
    """BFCL's aggregation; a case aggregated alone (the paired tests' per-case split) is remembered: it is the same
    whichever run the coin puts the case in, and the split is what costs (the figures are unchanged)."""
    if len(results) != 1:
        return aggregate(results)
    r = results[0]
    key = (r.case_id, r.category, r.passed, r.error_type, tuple(sorted(r.labels.items())),
           json.dumps(dict(r.counts), sort_keys=True))
    if key not in _ALONE:
        _ALONE[key] = aggregate(results)
    return _ALONE[key]


class Bfcl:
    aggregate = staticmethod(_aggregate)


def rounds(path: Path) -> dict[str, CaseRecord]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {c["case_id"]: CaseRecord.from_json(c) for c in data["cases"] if c.get("suite") == "bfcl"}


def run_of(records: list[CaseRecord], design):
    summary = summarize([r.to_json() for r in records], {"bfcl": (Bfcl, "BFCL", {}, None, design)},
                        header={"backend": "replay"})
    return summary


def gate(candidate: list[CaseRecord], baseline_doc: dict, design, points: float, alpha: float, multiple: str):
    summary = run_of(candidate, design)
    comparison = compare(summary, candidate, baseline_doc, "baseline.json", multiple, alpha)
    settings = ReportSettings(max_drop=points, significance=alpha, multiple=multiple)
    return [g for g in evaluate_gates(summary, comparison, settings) if not g.passed], comparison


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("round_a", type=Path)
    parser.add_argument("round_b", type=Path)
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--points", type=float, default=2.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--plant", type=float, default=5.0, help="points of the planted regression")
    parser.add_argument("--category", default="simple_python")
    parser.add_argument("--multiple", default="holm", help="the correction measured (the uncorrected gate too)")
    args = parser.parse_args()
    design = load_design(ROOT / "suites" / "bfcl" / "aggregates.yaml")
    a, b = rounds(args.round_a), rounds(args.round_b)
    ids = sorted(set(a) & set(b))
    disagree = sum(a[i].passed != b[i].passed for i in ids)
    print(f"rounds: {args.round_a.name} ({sum(a[i].passed for i in ids)}/{len(ids)} pass) and {args.round_b.name} "
          f"({sum(b[i].passed for i in ids)}/{len(ids)}); they disagree on {disagree} cases "
          f"({100 * disagree / len(ids):.1f}%)")
    by_category: dict[str, list[str]] = {}
    for i in ids:
        by_category.setdefault(a[i].category, []).append(i)
    for category, members in sorted(by_category.items()):
        flips = sum(a[i].passed != b[i].passed for i in members)
        print(f"  {category:<24} {len(members):>5} cases, {flips:>4} disagree ({100 * flips / len(members):.1f}%)")
    target = by_category[args.category]
    planted = round(args.plant / 100 * len(target))
    rng = random.Random(args.seed)
    counts = {"holm": 0, "none": 0, "planted_any": 0, "planted_named": 0}
    families = []
    started = time.time()
    for draw in range(args.draws):
        coin = {i: rng.random() < 0.5 for i in ids}
        baseline = [a[i] if coin[i] else b[i] for i in ids]
        candidate = [b[i] if coin[i] else a[i] for i in ids]
        baseline_doc = json.loads(json.dumps(document(build(run_of(baseline, design), baseline))))
        missed, comparison = gate(candidate, baseline_doc, design, args.points, args.alpha, args.multiple)
        families.append(comparison.family)
        counts["holm"] += bool(missed)
        missed_none, _ = gate(candidate, baseline_doc, design, args.points, args.alpha, "none")
        counts["none"] += bool(missed_none)
        candidate_map = {r.case_id: r for r in candidate}
        passing = [i for i in target if candidate_map[i].passed]
        chosen = set(rng.sample(passing, planted))
        worse = [CaseRecord.from_json({**r.to_json(), "passed": False, "error_type": "planted"})
                 if r.case_id in chosen else r for r in candidate]
        missed_planted, planted_comparison = gate(worse, baseline_doc, design, args.points, args.alpha,
                                                  args.multiple)
        hit = next(d for k, d in planted_comparison.suites["bfcl"].metrics.items() if k[1] == args.category).paired
        counts["planted_any"] += bool(missed_planted)
        counts["planted_named"] += any(f"bfcl.{args.category} " in g.message for g in missed_planted)
        print(f"draw {draw + 1}/{args.draws}: null {args.multiple} {'MISSED' if missed else 'passed'}, null uncorrected "
              f"{'MISSED' if missed_none else 'passed'}, planted {'caught' if missed_planted else 'NOT caught'} "
              f"({args.category}: {hit.flipped_to_fail} worse / {hit.flipped_to_pass} better, one-sided p "
              f"{hit.p_worse:.2g}, {args.multiple} {hit.p_adjusted if hit.p_adjusted is None else round(hit.p_adjusted, 4)}, "
              f"family {planted_comparison.family}) ({time.time() - started:.0f} s)", flush=True)
    n = args.draws

    def share(k: int) -> str:
        p = counts[k] / n
        return f"{counts[k]}/{n} = {100 * p:.1f}% (MC s.e. {100 * math.sqrt(max(p * (1 - p), 1 / n) / n):.1f})"

    print(f"\ngate --toolbench-max-drop={args.points:g} --toolbench-significance={args.alpha:g}, {n} coin-swapped "
          f"draws, family of {min(families)}-{max(families)} gated figures with a paired test")
    print(f"null, --toolbench-multiple={args.multiple}: missed in {share('holm')}")
    print(f"null, --toolbench-multiple=none: missed in {share('none')}")
    print(f"planted {planted} cases ({args.plant:g} points) of {args.category}: gate missed in "
          f"{share('planted_any')}, naming {args.category} in {share('planted_named')}")


if __name__ == "__main__":
    main()
