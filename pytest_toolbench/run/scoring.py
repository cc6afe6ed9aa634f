"""The scoring of one case: a function from (suite, case, answerer) to the case's record.

Never raises for anything the model or a scorer did: a missing output, an output that cannot be read and a scorer
exception are each this case's failure, counted in the figures. The scorer returns a :class:`Verdict`; the record
(:class:`CaseRecord`) is made here, once, safe for every channel. Imports the contract, ``run.records``,
``run.ledger`` (the case's order) and ``run.requests``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from ..contract.errors import MissingOutput
from ..contract.suite import NOT_SCORED, Case, CaseRecord, Generation, Task, Verdict
from . import records
from .requests import Unavailable, run_case
from .ledger import case_order

#: Error categories the core gives (every other one is the benchmark's own).
MISSING_OUTPUT = "missing_output"
SCORER_ERROR = "scorer_error"


class ScoredSuite(Protocol):
    """What scoring reads of a loaded suite (``run.catalog.LoadedSuite``)."""

    name: str
    benchmark: Any
    cases: list[Case]
    known_defects: Mapping[str, str]


def score_case(suite: ScoredSuite, case: Case, answer: Callable[[Task], Generation], max_tokens: int | None,
               nodeid: str | None = None, sample: int | None = None) -> CaseRecord:
    """The case's record: its answer (through ``answer``) scored by the suite's scorer. A record that did not
    pass carries the text its test fails (or is skipped) with as ``message``. ``sample``: which of the case's
    ``--toolbench-repeat`` samples (None without the option)."""
    verdict, output, finish_reason, prompts = _judge(suite, case, answer, max_tokens, sample or 0)
    return _record(suite, case, verdict, output, finish_reason, nodeid, sample, prompts)


def _judge(suite: ScoredSuite, case: Case, answer: Callable[[Task], Generation], max_tokens: int | None,
           sample: int) -> tuple[Verdict, str, str | None, list | None]:
    """The scorer's verdict on the case's answer, with the output, its finish reason and the prompts kept
    (``--toolbench-keep-prompts``; no output: "", None, None)."""
    try:
        generation = run_case(case, suite, answer, max_tokens, sample)
    except MissingOutput as missing:  # no saved line, a line that cannot be read, an offline cache miss
        verdict = Verdict(passed=False, error_type=MISSING_OUTPUT, explanation=str(missing),
                          counts=no_output_counts(suite, case) if missing.in_denominators else {},
                          labels={"outcome": MISSING_OUTPUT})
        return verdict, "", None, None
    except Unavailable as reason:  # skipped with the reason, counted as not passed (like any not_scored case)
        verdict = Verdict(passed=False, error_type=NOT_SCORED, explanation=str(reason),
                          labels={"outcome": NOT_SCORED})
        return verdict, "", None, None
    except Exception as error:  # reading this case's output failed: its failure, not a lost case
        verdict = scorer_error(error, "reading the output")
        verdict.counts = no_output_counts(suite, case)
        return verdict, "", None, None
    try:
        verdict = suite.benchmark.score(case, generation)
    except Exception as error:  # RecursionError on absurd nesting, a scorer bug, ...
        verdict = scorer_error(error, "scoring")
        verdict.counts = no_output_counts(suite, case)
    if generation.truncated:
        verdict.labels.setdefault("truncated", "yes")
    return verdict, generation.text, generation.finish_reason, generation.prompts


def _record(suite: ScoredSuite, case: Case, verdict: Verdict, output: str, finish_reason: str | None,
            nodeid: str | None, sample: int | None, prompts: list | None = None) -> CaseRecord:
    """The record, built once (``records.build_record``: made safe, then ``nodeid``, ``sample`` and ``message``).
    Made safe now: a safe record is a fixed point of the JSON transport, so what a worker sends is exactly what a
    single process keeps (tests/test_nothing_lost.py compares serial and -n 2 records)."""
    known_defect = suite.known_defects.get(case.case_id)
    try:
        return records.build_record(dict(
            suite=case.suite, case_id=case.case_id, category=case.category, keywords=tuple(case.keywords),
            order=case_order(suite, case), passed=verdict.passed,
            error_type=None if verdict.passed else verdict.error_type, explanation=verdict.explanation,
            decoded=verdict.decoded, expected=verdict.expected, counts=verdict.counts, labels=verdict.labels,
            output=output, finish_reason=finish_reason, known_defect=known_defect,
            comparison=None if verdict.passed else verdict.comparison, prompts=prompts), nodeid, sample)
    except Exception as error:  # the policy is total; this guards the case against a bug in it
        return records.build_record(dict(
            suite=case.suite, case_id=case.case_id, category=case.category, keywords=tuple(case.keywords),
            order=case_order(suite, case), known_defect=known_defect, passed=False, error_type=SCORER_ERROR,
            explanation=f"the record could not be serialised: {type(error).__name__}"), nodeid, sample)


def no_output_counts(suite: ScoredSuite, case: Case) -> dict[str, float]:
    """The per-case counts of a case that has no usable output (``missing_output``, ``scorer_error``): those an
    empty answer gets, so that the case stays in every denominator a suite sums from counts (NesTools' Format and
    Tree, micro P/R over gold items) instead of silently dropping out of it. The case itself fails whatever the
    empty answer would have scored."""
    try:
        return dict(suite.benchmark.score(case, Generation(text="")).counts)
    except Exception:  # noqa: BLE001 - the counts serve the denominators; the verdict stands without them
        return {}


def scorer_error(error: BaseException, stage: str) -> Verdict:
    message = records.safe_text(f"{type(error).__name__}: {error}", 2000)
    return Verdict(passed=False, error_type=SCORER_ERROR, explanation=f"{stage} raised {message}",
                   labels={"outcome": SCORER_ERROR})
