"""Statistics in one room (``pytest_toolbench/stats/``): docs/statistics.md's table names, for every method, the one
function that implements it, and that function exists; no function of ``stats/`` is defined a second time elsewhere
in the package; the helpers the methods now share (quantiles, binomial and hypergeometric tails, pass^k) agree with
scipy."""

from __future__ import annotations

import ast
import importlib
import math
import re
from pathlib import Path

import pytest

from pytest_toolbench.stats import distributions, intervals, pass_k

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_toolbench"
STATS = PACKAGE / "stats"


def _table_code_cells() -> list[tuple[str, str]]:
    """(method, code cell) of each row of docs/statistics.md's table of methods."""
    page = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    table = page.split("\n| method | used for | code | reference |\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[1:] if line.startswith("|")]
    return [(cells[0].strip(), cells[2]) for cells in (row.strip("|").split(" | ") for row in rows)]


def test_every_method_of_the_table_points_at_one_function_that_exists():
    rows = _table_code_cells()
    assert len(rows) >= 20
    missing = []
    for method, cell in rows:
        named = re.findall(r"`([\w.]+):(\w+)`", cell)
        assert named, f"{method}: the code cell names no module:function ({cell})"
        assert named[0][0].startswith("stats."), f"{method}: its implementation lives in stats/ ({cell})"
        for module, function in named:
            found = getattr(importlib.import_module(f"pytest_toolbench.{module}"), function, None)
            if not callable(found) or getattr(found, "__module__", "") != f"pytest_toolbench.{module}":
                missing.append(f"{method}: {module}:{function}")
    assert not missing, "the table names functions that are not defined there:\n" + "\n".join(missing)


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")}


def test_no_function_of_stats_is_defined_again_outside_it():
    """Each method once: a public function or class of ``stats/`` has no namesake elsewhere in the package (a
    second Wilson interval, a second binomial tail, a second t quantile would be one)."""
    in_stats = {name: path.name for path in sorted(STATS.glob("*.py")) for name in _defined(path)}
    twice = [f"{path.relative_to(PACKAGE)}: {name} (stats/{in_stats[name]})"
             for path in sorted(PACKAGE.rglob("*.py")) if STATS not in path.parents
             for name in sorted(_defined(path) & set(in_stats))]
    assert not twice, "defined in stats/ and again elsewhere:\n" + "\n".join(twice)


def test_the_stats_modules_are_pure_of_the_report_and_the_run():
    """stats/ imports nothing of the package but the contract (tests/test_layout.py holds the rule; this names the
    modules a new statistic may lean on)."""
    for path in sorted(STATS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                assert (node.module or "").split(".")[0] == "contract", f"{path.name} imports ..{node.module}"


# -- the shared helpers against scipy ---------------------------------------------------------------------------
def test_quantiles_agree_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    for probability in (0.5, 0.8, 0.95, 0.975, 0.99, 0.999, 0.9999):
        assert distributions.normal_quantile(probability) == pytest.approx(stats.norm.ppf(probability), abs=1e-12)
        for df in (1, 2, 3.5, 7, 29, 120, 1e5):
            assert distributions.t_quantile(probability, df) == pytest.approx(stats.t.ppf(probability, df),
                                                                              rel=1e-9, abs=1e-9)
    assert distributions.Z95 == pytest.approx(stats.norm.ppf(0.975), abs=1e-15)


def test_binomial_and_hypergeometric_tails_agree_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    for trials in (1, 7, 40, 333):
        for successes in sorted({0, 1, trials // 3, trials // 2, trials}):
            assert distributions.binomial_upper_half(successes, trials) == pytest.approx(
                stats.binom.sf(successes - 1, trials, 0.5), rel=1e-10, abs=1e-300)
            assert distributions.binomial_two_sided_half(successes, trials) == pytest.approx(
                stats.binomtest(successes, trials, 0.5).pvalue, rel=1e-9)
        for p in (0.01, 0.3, 0.5, 0.97):
            first, cdf = distributions.binomial_cdf_table(trials, p)
            for offset, value in enumerate(cdf):
                assert value == pytest.approx(stats.binom.cdf(first + offset, trials, p), abs=1e-12)
    for population, successes, draws in ((20, 7, 5), (300, 120, 40), (1000, 3, 200)):
        for k in range(0, min(successes, draws) + 1, max(1, min(successes, draws) // 6)):
            assert distributions.hypergeometric_cdf(k, population, successes, draws) == pytest.approx(
                stats.hypergeom.cdf(k, population, successes, draws), rel=1e-9, abs=1e-12)


def test_log_choose_and_pass_hat_agree_with_scipy():
    special = pytest.importorskip("scipy.special")
    for n, k in ((5, 2), (60, 17), (1000, 500)):
        assert distributions.log_choose(n, k) == pytest.approx(math.log(special.comb(n, k, exact=True)), rel=1e-12)
    for passes, samples, k in ((3, 5, 2), (5, 5, 5), (0, 4, 1), (7, 10, 4)):
        assert pass_k.pass_hat(passes, samples, k) == pytest.approx(special.comb(passes, k) / special.comb(samples, k))


def test_wilson_at_an_effective_size_is_wilson():
    """One Wilson interval: at the effective sample size p(1-p)/v, ``wilson_effective`` is ``wilson_interval`` of
    the same share over that many cases."""
    for rate, cases in ((0.8, 50), (0.33, 300), (0.05, 1000)):
        variance = rate * (1 - rate) / cases
        assert intervals.wilson_effective(rate, variance, cases) == pytest.approx(
            intervals.wilson_interval(rate * cases, cases), abs=1e-12)
