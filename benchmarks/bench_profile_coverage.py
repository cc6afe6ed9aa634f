"""Coverage of the capability profile's 95% intervals and the type-I error of its area test, by simulation with a
fixed seed (docs/statistics.md "What can it do? The capability profile").

Each scenario draws a synthetic area from a population of queries with a difficulty each (a query's noise levels,
or variants, are answered by the same model on the same query: their outcomes share the query's difficulty z ~ N(0,
1), the success chance of a case being Phi(a_figure + sigma * z)); the true area value is the population mean of
the figures' chances (numerical integration). Per draw it computes

1. the interval the profile ships: the stratified cluster bootstrap over shared units (stats/bootstrap.py);
2. the interval it replaced: MOVER over the figures' Wilson intervals, figures taken as independent;

and counts how often each covers the true value. For the area test, two runs answer the same queries with the same
chances (no change), and the cluster sign-flip test's rejection rate at 0.05 is counted (it should be at most 0.05
plus Monte Carlo error; a test that ignored the shared queries would reject far more often).

Scenarios: RoTBench's robustness area (105 queries; slight, medium and heavy hold two versions of each query, union
one), BFCL-like independent figures (tool selection: 200, 1053, 240 and 884 distinct cases), and a small area (two
figures of 30 distinct cases near 90%).

    python benchmarks/bench_profile_coverage.py [--draws 400] [--test-draws 200] [--seed 20261127]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_toolbench.report.profile import Contribution, interval_of  # noqa: E402
from pytest_toolbench.stats.bootstrap import AreaFigures, paired_area_test  # noqa: E402
from pytest_toolbench.stats.intervals import mover_mean_interval  # noqa: E402

#: (name, sigma: how much a query's difficulty moves its cases together, figures: (intercept a, versions per
#: query, queries or None for distinct cases of this count))
SCENARIOS = [
    ("RoTBench robustness: 4 noise levels over the same 105 queries", 1.2,
     [(1.4, 2, 105), (1.2, 2, 105), (0.9, 2, 105), (1.0, 1, 105)]),
    ("BFCL tool selection: 4 figures over distinct cases (200, 1053, 240, 884)", 1.0,
     [(1.0, 1, 200), (0.4, 1, 1053), (1.6, 1, 240), (0.7, 1, 884)]),
    ("small area: 2 figures over 30 distinct cases each, near 90%", 1.0, [(1.7, 1, 30), (1.7, 1, 30)]),
]


def true_value(sigma: float, figures) -> float:
    def chance(a: float) -> float:
        return integrate.quad(lambda z: stats.norm.cdf(a + sigma * z) * stats.norm.pdf(z), -10, 10)[0]
    return float(np.mean([chance(a) for a, _, _ in figures]))


def draw_area(rng: np.random.Generator, sigma: float, figures, shared: bool, difficulty=None):
    """One run's contributions: per figure, unit -> (passes, cases). ``shared``: the figures' cases are versions
    of the same queries (one difficulty per query); else each figure has distinct cases."""
    contributions = []
    queries = max(n for _, _, n in figures)
    if difficulty is None and shared:
        difficulty = rng.standard_normal(queries)
    for index, (a, versions, n) in enumerate(figures):
        z = difficulty[:n] if shared else rng.standard_normal(n)
        chance = stats.norm.cdf(a + sigma * np.repeat(z, versions))
        outcomes = rng.random(chance.size) < chance
        units = np.repeat(np.arange(n), versions)
        parts: dict[str, list[float]] = {}
        for unit, passed in zip(units, outcomes):
            key = f"q{unit}" if shared else f"f{index}-{unit}"
            sums = parts.setdefault(key, [0.0, 0.0])
            sums[0] += float(passed)
            sums[1] += 1.0
        value = outcomes.mean()
        contributions.append(Contribution("s", f"f{index}", "category", float(value), float(outcomes.size),
                                          parts={k: (v[0], v[1]) for k, v in parts.items()}))
    return contributions


def coverage(rng: np.random.Generator, name: str, sigma: float, figures, draws: int) -> dict:
    shared = name.startswith("RoTBench")  # its figures are noise levels of the same queries
    truth = true_value(sigma, figures)
    hits = {"cluster bootstrap": 0, "MOVER (independent)": 0}
    widths = {key: [] for key in hits}
    started = time.perf_counter()
    for _ in range(draws):
        parts = draw_area(rng, sigma, figures, shared)
        for method, interval in (("cluster bootstrap", interval_of(parts)[0]),
                                 ("MOVER (independent)", mover_mean_interval([(c.value, c.total) for c in parts]))):
            hits[method] += interval[0] <= truth <= interval[1]
            widths[method].append(interval[1] - interval[0])
    return {"name": name, "truth": truth, "draws": draws, "seconds": time.perf_counter() - started,
            **{f"coverage {k}": v / draws for k, v in hits.items()},
            **{f"mean width {k}": float(np.mean(v)) for k, v in widths.items()}}


def type_one_error(rng: np.random.Generator, sigma: float, figures, draws: int, alpha: float = 0.05) -> dict:
    """Two runs over the same queries, same chances: how often the cluster sign-flip test rejects."""
    rejected = 0
    naive = 0
    queries = max(n for _, _, n in figures)
    started = time.perf_counter()
    for _ in range(draws):
        difficulty = rng.standard_normal(queries)
        now = draw_area(rng, sigma, figures, True, difficulty)
        before = draw_area(rng, sigma, figures, True, difficulty)
        as_area = [AreaFigures(("s",) * len(run), tuple(c.parts for c in run), (False,) * len(run))
                   for run in (now, before)]
        result = paired_area_test(*as_area, resamples=1000)
        rejected += result.p_value < alpha
        # the same test with the figures taken as independent (no unit shared across figures)
        split = [AreaFigures(("s",) * len(run), tuple({f"{k}-{i}": v for i, (k, v) in enumerate(c.parts.items())}
                                                       for c in run), (False,) * len(run)) for run in (now, before)]
        naive += paired_area_test(*split, resamples=1000).p_value < alpha
    return {"draws": draws, "rejection rate (cluster sign-flip)": rejected / draws,
            "rejection rate (figures taken as independent)": naive / draws, "seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--test-draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"# {datetime.date.today()} {platform.node()} {platform.processor() or platform.machine()} "
          f"commit {commit}, seed {args.seed}")
    rng = np.random.default_rng(args.seed)
    for name, sigma, figures in SCENARIOS:
        result = coverage(rng, name, sigma, figures, args.draws)
        mc = 1.96 * (0.95 * 0.05 / args.draws) ** 0.5
        print(f"{result['name']}: true area {100 * result['truth']:.2f}%, {args.draws} draws "
              f"(95% coverage +- {100 * mc:.1f} points of Monte Carlo error), {result['seconds']:.0f} s")
        for method in ("cluster bootstrap", "MOVER (independent)"):
            print(f"  {method:<22} coverage {100 * result[f'coverage {method}']:.1f}%, "
                  f"mean width {100 * result[f'mean width {method}']:.2f} points")
    name, sigma, figures = SCENARIOS[0]
    result = type_one_error(rng, sigma, figures, args.test_draws)
    print(f"area test, no change ({name}), {result['draws']} draws, {result['seconds']:.0f} s: rejection rate at "
          f"0.05 {100 * result['rejection rate (cluster sign-flip)']:.1f}% (cluster sign-flip); "
          f"{100 * result['rejection rate (figures taken as independent)']:.1f}% with the figures taken as "
          "independent")


if __name__ == "__main__":
    main()
