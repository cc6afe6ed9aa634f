"""Before any answer is generated: the gates this run cannot pass, and a baseline that shares nothing with it.

Once the selection is known (after collection, before pre-generation), the run knows which cases it will score and
which of them cannot run here (a conversation whose key or extra is missing: BFCL's web search without
``SERPAPI_API_KEY``). Which figures will be complete depends only on that, never on the answers, so the suite's own
aggregation over a *planned* run (every selected case as a placeholder record, those that cannot run marked
``not_scored`` as the run will mark them) tells which figures will be incomplete or have no value. A
``--toolbench-fail-under`` gate on such a figure, on a suite outside the selection or over shipped samples, is missed
whatever the model does: the plugin stops with a usage error (exit 4) that says why and what this run can gate on instead, rather than spend the generation to fail at the end.

A ``--toolbench-baseline`` that holds no case of the selection (a results file of other suites, or of other
categories) would compare nothing and pass every change: it is a usage error too, naming both selections.

Pure functions over plain values; the plugin hands in the planned suites (``plugin/lifecycle.py``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..contract.suite import NOT_SCORED, CaseRecord
from .estimates import limit_refusal
from .results_file import ResultsFile
from .settings import ReportSettings, Threshold

#: how many names a line lists before "and N more"
LISTED = 6


@dataclass(frozen=True)
class PlannedCase:
    case_id: str
    category: str
    #: why the case cannot run on this machine (it will be skipped, ``not_scored``), None when it can
    unavailable: str | None = None


@dataclass(frozen=True)
class PlannedSuite:
    """One suite of the selection as the run will score it."""

    name: str
    cases: Sequence[PlannedCase]
    #: the suite's ``aggregate(results)``; None when unknown (no completeness check then)
    aggregate: Callable[[Sequence[Any]], Sequence[Any]] | None = None
    #: the suite runs on its shipped samples
    is_sample: bool = False
    description: str = ""
    #: category -> cases the suite has in this run's data (the categories a ``-k`` may have left out)
    available_by_category: Mapping[str, int] = field(default_factory=dict)


def _listed(names: Sequence[str]) -> str:
    names = list(names)
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")


def planned_figures(suite: PlannedSuite) -> dict[str, Any] | None:
    """The suite's figures over placeholder records of its selected cases (name -> Metric; the "aggregate" row wins
    a name several groups share): their values mean nothing, their completeness is the run's. None when the suite's
    aggregation cannot take placeholders (then nothing is said before the run)."""
    if suite.aggregate is None or not suite.cases:
        return None
    records = [CaseRecord(suite.name, case.case_id, case.category, True,
                          NOT_SCORED if case.unavailable else None, explanation=case.unavailable or "", order=n)
               for n, case in enumerate(suite.cases)]
    try:
        metrics = list(suite.aggregate(records))
    except Exception:  # noqa: BLE001 - an aggregation that needs real counts: the end of the run judges the gate
        return None
    figures: dict[str, Any] = {}
    for metric in metrics:
        if metric.name not in figures or getattr(metric, "group", None) == "aggregate":
            figures[metric.name] = metric
    return figures


def _why_incomplete(suite: PlannedSuite) -> list[str]:
    """What keeps figures of ``suite`` from being complete in this run: categories that cannot run here (with the
    reason) and categories the selection left out."""
    reasons: list[str] = []
    blocked: dict[str, Counter] = {}
    for case in suite.cases:
        if case.unavailable:
            blocked.setdefault(" ".join(case.unavailable.split()), Counter())[case.category] += 1
    for reason, categories in blocked.items():
        reasons.append(f"{_listed(sorted(categories))} cannot run here ({sum(categories.values())} cases: {reason})")
    selected = {case.category for case in suite.cases}
    left_out = [c for c in suite.available_by_category if c not in selected]
    if left_out:
        reasons.append(f"the selection (-k/-m/paths) leaves out {len(left_out)} categories ({_listed(left_out)})")
    return reasons


def _alternatives(suite: PlannedSuite, figures: Mapping[str, Any], instead_of: str) -> list[str]:
    """Headline figures of ``suite`` this run computes in full, the Overall-like ones first."""
    complete = [name for name, m in figures.items()
                if name != instead_of and getattr(m, "group", None) == "aggregate" and m.value is not None
                and not getattr(m, "incomplete", "")]
    # an Overall renormalised over whatever ran (overall_over_categories_ran) changes its formula with the run:
    # nothing to gate on
    complete = [name for name in complete if not name.startswith("overall_over")]
    complete.sort(key=lambda name: not name.startswith("overall"))
    if not complete:  # no headline figure in full: the categories that ran in full
        complete = [name for name, m in figures.items() if getattr(m, "group", None) == "category"
                    and m.value is not None and not getattr(m, "incomplete", "")]
    return [f"{suite.name}.{name}" for name in complete]


def threshold_problem(threshold: Threshold, suites: Mapping[str, PlannedSuite]) -> str | None:
    """Why ``threshold`` is missed whatever this run's answers are, with what to gate on instead; None when it can
    pass."""
    gate = f"--toolbench-fail-under {threshold.given}"
    suite = suites.get(threshold.suite)
    if suite is None:
        return (f"{gate}: suite {threshold.suite!r} is not in this run's selection (selected: "
                f"{_listed(sorted(suites)) or 'none'}), so the gate cannot pass; select it (-k, paths) or drop the "
                "gate")
    if suite.is_sample:
        return (f"{gate}: {suite.name} runs on its shipped samples, not the benchmark's data "
                f"({suite.description or '?'}), and no gate passes on them; give the data folder "
                "(--toolbench-data or TOOLBENCH_DATA) or drop the gate")
    figures = planned_figures(suite)
    if figures is None or threshold.metric not in figures:
        return None  # unknown here: the end of the run judges it (and lists the names it has)
    metric = figures[threshold.metric]
    incomplete = getattr(metric, "incomplete", "") or ""
    if metric.value is not None and not incomplete:
        return None
    why = _why_incomplete(suite)
    state = f"will be incomplete ({incomplete})" if incomplete else "will have no value (none of its cases can run)"
    instead = _alternatives(suite, figures, threshold.metric)
    hint = (f"; gate on a figure this run computes in full instead, e.g. {_listed(instead)}" if instead
            else "; select every category it covers, or drop the gate")
    return (f"{gate}: {threshold.label} {state} in this run, and no gate passes on an incomplete figure"
            + (f": {'; '.join(why)}" if why else "") + hint)


def selection_text(counts: Mapping[str, Counter]) -> str:
    """"bfcl: 400 cases (simple_python); nestools: 1,000 cases (4 categories)"."""
    parts = []
    for suite, categories in sorted(counts.items()):
        total = sum(categories.values())
        what = _listed(sorted(categories)) if len(categories) <= 3 else f"{len(categories)} categories"
        parts.append(f"{suite}: {total:,} case{'s' if total != 1 else ''} ({what})" if categories
                     else f"{suite}: no per-case records")
    return "; ".join(parts) or "nothing"


def baseline_problem(path: Path | None, baseline: ResultsFile | None, suites: Mapping[str, PlannedSuite]) -> str | None:
    """A baseline that shares no case (or, without per-case records, no suite) with the selection: the usage
    error's line naming both selections; None when they overlap."""
    if baseline is None or not suites:
        return None
    selected = {(suite.name, case.case_id) for suite in suites.values() for case in suite.cases}
    held = {(case.suite, case.case_id) for case in baseline.cases}
    if held and selected & held:
        return None
    if not held and set(baseline.suites) & set(suites):
        return None  # an older file without per-case records: it compares by suite
    ran = {suite.name: Counter(case.category for case in suite.cases) for suite in suites.values()}
    had: dict[str, Counter] = {name: Counter() for name in baseline.suites}
    for case in baseline.cases:
        had.setdefault(case.suite, Counter())[case.category] += 1
    return (f"--toolbench-baseline {path}: shares no case with this run, so it could compare nothing and every gate "
            f"on it would pass: this run selects {selection_text(ran)}; the baseline holds {selection_text(had)}. "
            "Point it at a results file of the same suites and categories, or select what it holds")


def problems(settings: ReportSettings, suites: Mapping[str, PlannedSuite], header: Mapping[str, Any]) -> list[str]:
    """Every reason this run's gates cannot do their job (empty: go ahead), each one line. A ``--toolbench-limit``
    run is left to the end of the run, which refuses every gate on it (report/estimates.py)."""
    found: list[str] = []
    problem = baseline_problem(settings.baseline_path, settings.baseline, suites)
    if problem:
        found.append(problem)
    if not limit_refusal(header):
        found += [p for p in (threshold_problem(t, suites) for t in settings.thresholds) if p]
    return found
