"""Rolling per-case records up into per-suite summaries, with each benchmark's own aggregation."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..contract.suite import NOT_RUN, NOT_SCORED, CaseRecord, Metric
from .ledger import Available
from ..stats.estimate import NO_INTERVAL
from ..stats.estimation import estimate_figures
from ..stats.pass_k import reliability
from ..stats.sampling import Design


@dataclass
class SuiteSummary:
    name: str
    title: str
    data_source: Mapping[str, str]
    total: int
    passed: int
    metrics: list[Metric]
    error_types: dict[str, int]
    error_types_by_category: dict[str, dict[str, int]]
    labels: dict[str, dict[str, int]]
    known_defects: int = 0  # failing cases that are documented upstream defects (their reference is wrong)
    #: How many cases the suite has in this run's data (after ``--toolbench-limit``), when known; ``total`` below
    #: it means the selection (``-k``, ``--lf``, node ids) left cases out.
    available: int | None = None
    #: The suite's own ``aggregate(results)`` (never serialised): the paired tests against a baseline aggregate each
    #: case alone with it to learn which figures are counts or means of cases (report/significance.py).
    aggregate: Any = field(default=None, repr=False, compare=False)
    #: How the suite's aggregates combine its figures (``aggregates.yaml``: a
    #: :class:`~pytest_toolbench.contract.aggregates.AggregatesDeclaration`; never serialised), for the paired tests.
    design: Any = field(default=None, repr=False, compare=False)
    #: ``--toolbench-repeat``'s figures (:func:`repeat_figures`); None in a run without repeats. ``total`` and
    #: ``passed`` then count samples, and every metric is the mean of its per-sample values (pass@1).
    repeat: dict[str, Any] | None = None
    #: ``--toolbench-sample``: what was drawn (``stats.sampling.Design``); every metric then carries its estimate
    sampling_design: Any = None
    #: What the suite's own per-case labels mean (its scorer's ``LABEL_NOTES``; never serialised), for the reports
    label_notes: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: (label, text) lines the suite adds to the run facts when it ran (its scorer's ``header_facts(header)``, e.g.
    #: the leaderboard row the run stands for; never serialised)
    header_facts: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    @property
    def is_sample(self) -> bool:
        """The suite ran on its shipped samples (its real data could not be had): its figures are not the
        benchmark's, and a gate on them is missed."""
        return self.data_source.get("kind") == "samples"

    @property
    def partial_selection(self) -> bool:
        samples = self.repeat["samples"] if self.repeat else 1
        return self.available is not None and self.total < self.available * samples

    def selection_text(self) -> str:
        """"N of M cases" for a partial selection; with ``--toolbench-repeat`` cases are counted as cases, not
        samples (and "S of T samples" when every case ran but not every sample)."""
        if not self.repeat:
            return f"{self.total} of {self.available} cases"
        cases, samples = self.repeat["cases"], self.repeat["samples"]
        if self.available is not None and cases < self.available:
            return f"{cases} of {self.available} cases"
        return f"{self.total} of {(self.available or cases) * samples} samples ({samples} per case)"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "data_source": dict(self.data_source),
            "samples": self.is_sample,
            "total": self.total, "passed": self.passed, "available": self.available,
            "metrics": [_metric_json(m) for m in self.metrics],
            "error_types": self.error_types, "error_types_by_category": self.error_types_by_category,
            "labels": self.labels, "known_defects": self.known_defects,
            **({"repeat": self.repeat} if self.repeat is not None else {}),
            **({"sample": self.sampling_design.to_json()} if self.sampling_design is not None else {}),
        }


def _metric_json(metric: Metric) -> dict[str, Any]:
    data = dict(metric.__dict__)
    if data.get("estimate") is None:
        data.pop("estimate", None)
    else:
        data["estimate"] = dict(data["estimate"])
    return data


@dataclass
class RunSummary:
    header: dict[str, Any]
    suites: list[SuiteSummary] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "suites": {s.name: s.to_json() for s in self.suites}}


def no_value_without_cases(metric: Metric) -> Metric:
    """A figure over no cases (``0/0``) has no value: N/A everywhere, never a 0% beside its N/A twin."""
    if metric.value is not None and metric.total is not None and metric.total == 0 and not metric.correct:
        return dataclasses.replace(metric, value=None)
    return metric


def with_scope(metrics: list[Metric], results: list[CaseRecord], available: int | None,
               available_by_category: Mapping[str, int] | None) -> list[Metric]:
    """Say "over N of M cases (selection)" on every figure the run's selection covers only in part: a category's
    own figure when that category lost cases, every other figure when the suite did."""
    if available is None or len(results) >= available:
        return metrics
    selected = Counter(r.category for r in results)
    suite_note = f"over {len(results)} of {available} cases (selection)"
    scoped = []
    for metric in metrics:
        note = suite_note
        if metric.group == "category" and available_by_category and metric.name in available_by_category:
            have, of = selected.get(metric.name, 0), available_by_category[metric.name]
            note = f"over {have} of {of} cases (selection)" if have < of else ""
        scoped.append(dataclasses.replace(metric, scope=note) if note else metric)
    return scoped


#: characters of a skip reason quoted beside an N/A figure (the whole reason is in the JSON record)
SKIP_REASON_LIMIT = 160


def with_not_scored_reason(metrics: list[Metric], results: list[CaseRecord]) -> list[Metric]:
    """An N/A category whose cases were skipped (not scored: a missing dependency, an API key, a model) says why
    beside the figure, so the reason shows without ``-rs``: "N/A: 3 cases not scored: <the first reason>"."""
    reasons: dict[str, Counter] = defaultdict(Counter)
    for record in results:
        if record.error_type == NOT_SCORED:
            reasons[record.category][(record.explanation or "no reason given").strip()] += 1
    if not reasons:
        return metrics
    marked = []
    for metric in metrics:
        tally = reasons.get(metric.name) if metric.group == "category" and metric.value is None else None
        if not tally:
            marked.append(metric)
            continue
        reason, _ = tally.most_common(1)[0]
        reason = " ".join(reason.split())
        if len(reason) > SKIP_REASON_LIMIT:
            reason = reason[:SKIP_REASON_LIMIT - 1] + "…"
        others = f" (and {len(tally) - 1} other reasons)" if len(tally) > 1 else ""
        why = f"N/A: {sum(tally.values())} cases not scored: {reason}{others}"
        marked.append(dataclasses.replace(metric, scope=f"{why}; {metric.scope}" if metric.scope else why))
    return marked


def with_not_run(metrics: list[Metric], results: list[CaseRecord]) -> list[Metric]:
    """Cases without a verdict (``not_run``) make a suite's figures incomplete. A suite whose aggregation marks
    that itself (BFCL, per category) is left alone; for the others, every figure is marked except the category
    figures of categories where every case reached its verdict."""
    stopped = Counter(r.category for r in results if r.error_type == NOT_RUN)
    if not stopped or any(m.incomplete for m in metrics):
        return metrics
    selected = Counter(r.category for r in results)
    marked = []
    for metric in metrics:
        if metric.group == "category" and metric.name in selected:
            if not stopped.get(metric.name):
                marked.append(metric)
                continue
            why = f"{stopped[metric.name]} of {selected[metric.name]} cases"
        else:
            why = f"{sum(stopped.values())} of {len(results)} cases"
        marked.append(dataclasses.replace(
            metric, incomplete=f"INCOMPLETE: {why} have no verdict (not_run, counted as failed)"))
    return marked


def mean_over_samples(per_sample: list[list[Metric]]) -> list[Metric]:
    """One list of figures from the same figures of each sample (``--toolbench-repeat``): each value the mean of the
    samples' values (pass@1 for a pass rate; None when a sample has none), ``correct`` and ``total`` the means of
    theirs (so a count reads "2.33/3" over 3 cases), the first sample's notes. The order and the rows are the first
    sample's; a figure some sample lacks is left out of the others' means, never invented."""
    def mean(values: list[Any]) -> float | None:
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return sum(numbers) / len(numbers) if numbers and len(numbers) == len(values) else None

    keyed = [{(m.group, m.name): m for m in metrics} for metrics in per_sample]
    merged = []
    for metric in per_sample[0]:
        same = [figures[(metric.group, metric.name)] for figures in keyed if (metric.group, metric.name) in figures]
        merged.append(dataclasses.replace(
            metric, value=mean([m.value for m in same]),
            correct=None if metric.correct is None else mean([m.correct for m in same]),
            total=None if metric.total is None else mean([m.total for m in same]),
            incomplete=next((m.incomplete for m in same if m.incomplete), ""),
            scope=next((m.scope for m in same if m.scope), "")))
    return merged


def ran_design(design: Design, results: list[CaseRecord]) -> Design | None:
    """The design over the strata (categories) that ran: a ``-k`` that leaves whole categories out keeps the sample
    of the others intact. None when a category ran only part of its sampled cases (``-k``/``--lf`` on case ids):
    what ran is no longer the random sample, and the "(selection)" scope says so instead."""
    ran: dict[str, set[str]] = defaultdict(set)
    for record in results:
        ran[record.category].add(record.case_id)
    strata = {name: row for name, row in design.strata.items() if ran.get(name)}
    if any(len(ran[name]) != int(row[3]) for name, row in strata.items()) or set(ran) - set(strata):
        return None
    return dataclasses.replace(design, strata=strata)


def with_estimates(metrics: list[Metric], results: list[CaseRecord], design: Design, aggregate: Any,
                   repeated: bool) -> list[Metric]:
    """``--toolbench-sample``: every figure as the estimate of the full benchmark's (``stats.estimation``), its value
    the estimate's, its scope "estimated from n of N cases (seed s)". With ``--toolbench-repeat`` the estimate is
    made for each sample index and the values averaged; the interval is then not given."""
    if repeated:
        by_sample: dict[int, list[CaseRecord]] = defaultdict(list)
        for record in results:
            by_sample[record.sample or 0].append(record)
        per_sample = [estimate_figures(part, design, aggregate) for _, part in sorted(by_sample.items())]
        estimates = {}
        for key, first in per_sample[0].items():
            values = [e[key].value for e in per_sample if key in e and e[key].value is not None]
            estimates[key] = dataclasses.replace(
                first, value=sum(values) / len(values) if values and len(values) == len(per_sample) else None,
                interval95=None, method=NO_INTERVAL, coefficients=None,
                note="no interval with --toolbench-repeat: the mean over the samples of each sample's estimate")
    else:
        estimates = estimate_figures(results, design, aggregate)
    note = design.note()
    out = []
    for metric in metrics:
        found = estimates.get((metric.group or "", metric.name))
        if found is None:
            out.append(metric)
            continue
        out.append(dataclasses.replace(metric, value=found.value, scope=note, estimate=found.to_json()))
    return out


def repeat_figures(results: list[CaseRecord], samples: int) -> dict[str, Any]:
    """The reliability figures of ``--toolbench-repeat=K`` over one suite's records (each carrying ``sample``):
    ``pass_at_1``, the mean over cases of each case's pass rate c/n; ``pass_hat`` (tau-bench's pass^k curve), for
    every k = 1..K the mean over cases of C(c, k) / C(n, k) (``stats.pass_k.pass_hat``), each point with the cases it is over
    and how many cases were left out of it for having fewer than k samples (``--lf`` or ``-k`` may run only some of
    a case's samples: such a case counts, with its own n, at every k it has samples for, and is left out and counted
    above); ``pass_hat_k``, the curve's last point (k = K); ``flaky``, the share of cases whose samples disagree, and
    their ids (``flaky_cases``, in the suite's order)."""
    outcomes: dict[str, list[bool]] = {}
    for record in sorted(results, key=lambda r: (r.order, r.sample or 0)):
        outcomes.setdefault(record.case_id, []).append(record.passed)
    return reliability(outcomes, samples)


@dataclass(frozen=True)
class SuiteInput:
    """What :func:`summarize` needs of one suite besides its records."""

    #: the suite's benchmark object: its ``aggregate(results)`` makes the figures
    benchmark: Any
    title: str
    #: the data source's facts (``DataSource.to_json()``)
    data_source: Mapping[str, Any] | None
    #: what the suite has in this run's data (``run.ledger.Available``); None when unknown
    available: Available | None = None
    #: the suite's aggregates declaration (``contract.aggregates``), for the paired tests; None without one
    design: Any = None


def summarize(records: Iterable[CaseRecord], suites: Mapping[str, SuiteInput], header: dict[str, Any]) -> RunSummary:
    """Each suite's summary from its records, with ``suites[name]``'s ``aggregate``. Records that carry a
    ``sample`` (``--toolbench-repeat``; ``header["repeat"]`` samples per case) are aggregated per sample index and
    the figures averaged (:func:`mean_over_samples`), with :func:`repeat_figures` beside them."""
    by_suite: dict[str, list[CaseRecord]] = defaultdict(list)
    for record in records:
        by_suite[record.suite].append(record)
    summary = RunSummary(header=header)
    for name in sorted(by_suite):
        results = sorted(by_suite[name], key=lambda r: r.order)
        given = suites[name]
        benchmark, available = given.benchmark, given.available
        available_cases = available.cases if available is not None else None
        available_by_category = available.by_category if available is not None else None
        errors = Counter(r.error_type for r in results if not r.passed and r.error_type)
        per_category: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            if not r.passed and r.error_type:
                per_category[r.category][r.error_type] += 1
        labels: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            for key, value in r.labels.items():
                labels[key][value] += 1
        def figures(results: list[CaseRecord]) -> list[Metric]:
            return with_not_scored_reason(
                with_scope(with_not_run([no_value_without_cases(m) for m in benchmark.aggregate(results)], results),
                           results, available_cases, available_by_category), results)

        by_sample: dict[int, list[CaseRecord]] = defaultdict(list)
        for r in results:
            if r.sample is not None:
                by_sample[r.sample].append(r)
        repeat = None
        extra: list[Metric] = []  # the suite's figures over all samples at once, never per-sample estimates
        if by_sample:
            metrics = mean_over_samples([figures(by_sample[k]) for k in sorted(by_sample)])
            over_samples = getattr(benchmark, "aggregate_samples", None)  # figures over all samples (τ²'s pass^k)
            if callable(over_samples):
                first = by_sample[min(by_sample)]  # the scope counts cases, not samples
                extra = with_not_scored_reason(with_scope(with_not_run(
                    [no_value_without_cases(m) for m in over_samples(results)], results),
                    first, available_cases, available_by_category), results)
            repeat = repeat_figures(results, int(header.get("repeat") or max(by_sample) + 1))
        else:
            metrics = figures(results)
        design = ran_design(available.design, results) if available is not None and available.design else None
        if design is not None:
            metrics = with_estimates(metrics, results, design, benchmark.aggregate, bool(by_sample))
            extra = [dataclasses.replace(m, scope=f"over the {design.note().replace('estimated from ', '')}: "
                                                  "not an estimate of the full benchmark") for m in extra]
        metrics = metrics + extra
        if header.get("limit"):  # --toolbench-limit: say on every figure that it estimates nothing
            note = (f"first {header['limit']} per category (--toolbench-limit): does NOT estimate the full "
                    "benchmark")
            metrics = [dataclasses.replace(m, scope=f"{m.scope}; {note}" if m.scope else note) for m in metrics]
        summary.suites.append(SuiteSummary(
            name=name, title=given.title, data_source=given.data_source or {},
            total=len(results), passed=sum(r.passed for r in results),
            metrics=metrics,
            available=available_cases, repeat=repeat,
            error_types=dict(errors.most_common()),
            error_types_by_category={c: dict(v.most_common()) for c, v in sorted(per_category.items())},
            labels={k: dict(v.most_common()) for k, v in sorted(labels.items())},
            known_defects=sum(1 for r in results if r.known_defect and not r.passed),
            aggregate=benchmark.aggregate, sampling_design=design,
            design=given.design, label_notes=dict(getattr(benchmark, "LABEL_NOTES", None) or {}),
            header_facts=tuple(getattr(benchmark, "header_facts", lambda header: ())(header)),
        ))
    return summary
