"""Error rate of the paired permutation (swap) test (stats/swap.py) under the null, by simulation.

Each draw makes a NesTools-like run pair over ``--cases`` cases: per case a gold call count and two independent
answers from the same per-case distribution (so the runs are exchangeable case by case: H0 holds), then tests
NesTools' Avg of micro F1s with the swap test (``--resamples`` random patterns). Prints the share of draws with a
two-sided p <= alpha and with a one-sided p_worse <= alpha; both should be at most alpha (up to simulation error).

    python benchmarks/bench_swap_null.py [--draws 300] [--cases 30] [--resamples 199] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_toolbench.contract.aggregates import NO_DECLARATION  # noqa: E402
from pytest_toolbench.report.significance import PairedResult  # noqa: E402
from pytest_toolbench.stats.swap import swap_tests  # noqa: E402
from pytest_toolbench.run.records import CaseRecord  # noqa: E402
from suites.nestools.scorer.aggregation import aggregate  # noqa: E402

AVG = ("aggregate", "Avg")


def _case(index: int, gold: int, correct: int, predicted: int) -> CaseRecord:
    counts = {"all_num": 1, "correct_format_num": 1, "tree_acc": int(correct == gold == predicted)}
    for family in ("api", "order", "param", "nest"):
        counts.update({f"gold_{family}_num": gold, f"correct_{family}_num": correct,
                       f"predict_{family}_num": predicted})
    return CaseRecord(suite="s", case_id=f"c{index}", category="depth1", passed=correct == gold == predicted,
                      order=index, counts=counts)


def _answer(rng: random.Random, index: int, gold: int, skill: float) -> CaseRecord:
    correct = sum(rng.random() < skill for _ in range(gold))
    return _case(index, gold, correct, correct + rng.randint(0, 2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--resamples", type=int, default=199)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    two = worse = 0
    started = time.perf_counter()
    for draw in range(args.draws):
        golds = [rng.randint(1, 5) for _ in range(args.cases)]
        skills = [rng.uniform(0.2, 0.9) for _ in range(args.cases)]  # a case's difficulty, shared by both runs
        before = [_answer(rng, i, g, s) for i, (g, s) in enumerate(zip(golds, skills))]
        now = [_answer(rng, i, g, s) for i, (g, s) in enumerate(zip(golds, skills))]
        result = swap_tests(aggregate, now, before, {AVG: False}, NO_DECLARATION, PairedResult,
                            max_records=math.inf, resamples=args.resamples, seed=args.seed * 100_003 + draw)[AVG]
        two += result.p_value <= args.alpha
        worse += result.p_worse <= args.alpha
        if (draw + 1) % 50 == 0:
            print(f"  {draw + 1}/{args.draws} draws, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    se = math.sqrt(args.alpha * (1 - args.alpha) / args.draws)
    print(f"swap test null, {args.draws} draws of {args.cases} cases, {args.resamples} resamples, seed {args.seed}: "
          f"two-sided rejection {two / args.draws:.3f}, one-sided (worse) {worse / args.draws:.3f} "
          f"at alpha {args.alpha} (simulation s.e. {se:.3f})")


if __name__ == "__main__":
    main()
