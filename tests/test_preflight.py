"""Gates checked before generation (``report/preflight.py``): what cannot pass is said before any answer is made."""

from __future__ import annotations

import json

from pytest_toolbench.plugin.report_options import parse_threshold
from pytest_toolbench.report import results_file
from pytest_toolbench.report.preflight import PlannedCase, PlannedSuite, baseline_problem, problems, \
    threshold_problem
from pytest_toolbench.report.settings import ReportSettings
from shipped import scorer

CATEGORIES = scorer("bfcl", "categories")
AGGREGATION = scorer("bfcl", "aggregation")
NO_KEY = "web search generation calls the live SerpAPI: set SERPAPI_API_KEY"


def bfcl(categories=CATEGORIES.ALL_CATEGORIES, blocked=CATEGORIES.WEB_SEARCH) -> PlannedSuite:
    cases = [PlannedCase(f"{category}_{n}", category, NO_KEY if category in blocked else None)
             for category in categories for n in range(3)]
    return PlannedSuite("bfcl", cases, aggregate=AGGREGATION.aggregate,
                        available_by_category={c: 3 for c in CATEGORIES.ALL_CATEGORIES})


def test_the_official_overall_without_a_key_is_refused_with_what_to_gate_on():
    why = threshold_problem(parse_threshold("bfcl.overall_official=80%"), {"bfcl": bfcl()})
    assert why.startswith("--toolbench-fail-under bfcl.overall_official=80%: bfcl.overall_official will be "
                          "incomplete (INCOMPLETE: 2 of 22 categories")
    assert f"web_search_base, web_search_no_snippet cannot run here (6 cases: {NO_KEY})" in why
    assert "gate on a figure this run computes in full instead, e.g. bfcl.overall_without_web_search, " in why
    # the figure made for it can pass, and so can a category that runs
    assert threshold_problem(parse_threshold("bfcl.overall_without_web_search=80%"), {"bfcl": bfcl()}) is None
    assert threshold_problem(parse_threshold("bfcl.simple_python=80%"), {"bfcl": bfcl()}) is None
    # with the key every category runs and the official Overall can pass
    assert threshold_problem(parse_threshold("bfcl.overall_official=80%"), {"bfcl": bfcl(blocked=())}) is None


def test_a_selection_that_leaves_categories_out_says_so():
    planned = {"bfcl": bfcl(categories=("simple_python", "multiple"))}
    why = threshold_problem(parse_threshold("bfcl.overall_without_web_search=80%"), planned)
    assert "the selection (-k/-m/paths) leaves out 20 categories" in why
    # no headline figure is complete: the categories that are
    assert "e.g. bfcl.simple_python, bfcl.multiple" in why
    assert threshold_problem(parse_threshold("bfcl.multiple=0.5"), planned) is None


def test_a_category_that_cannot_run_has_no_value_and_its_gate_is_refused():
    why = threshold_problem(parse_threshold("bfcl.web_search_base=10"), {"bfcl": bfcl()})
    assert "bfcl.web_search_base will have no value (none of its cases can run)" in why


def test_suites_outside_the_selection_or_on_samples_are_refused():
    assert "suite 'acebench' is not in this run's selection (selected: bfcl)" in threshold_problem(
        parse_threshold("acebench.en/overall=0.9"), {"bfcl": bfcl()})
    samples = PlannedSuite("taskbench", [PlannedCase("t1", "huggingface")], is_sample=True,
                           description="shipped samples")
    assert "taskbench runs on its shipped samples" in threshold_problem(
        parse_threshold("taskbench.x=0"), {"taskbench": samples})


def test_an_aggregation_that_needs_real_counts_is_left_to_the_end_of_the_run():
    def fragile(records):
        raise KeyError("counts")

    planned = {"s": PlannedSuite("s", [PlannedCase("1", "a")], aggregate=fragile)}
    assert threshold_problem(parse_threshold("s.overall=50%"), planned) is None


def baseline(cases) -> results_file.ResultsFile:
    return results_file.read(json.loads(json.dumps({
        "suites": {suite: {"metrics": []} for suite, _, _ in cases},
        "cases": [{"suite": suite, "case_id": case_id, "category": category, "passed": True}
                  for suite, case_id, category in cases]})))


def test_a_baseline_sharing_no_case_is_refused_naming_both_selections():
    planned = {"bfcl": bfcl(categories=("simple_python",))}
    other = baseline([("nestools", f"n{i}", "nestools") for i in range(4)])
    why = baseline_problem("base.json", other, planned)
    assert why == ("--toolbench-baseline base.json: shares no case with this run, so it could compare nothing and "
                   "every gate on it would pass: this run selects bfcl: 3 cases (simple_python); the baseline holds "
                   "nestools: 4 cases (nestools). Point it at a results file of the same suites and categories, or "
                   "select what it holds")
    same_suite_other_cases = baseline([("bfcl", "multiple_0", "multiple")])
    assert "the baseline holds bfcl: 1 case (multiple)" in baseline_problem("b.json", same_suite_other_cases, planned)
    overlapping = baseline([("bfcl", "simple_python_0", "simple_python"), ("bfcl", "multiple_0", "multiple")])
    assert baseline_problem("b.json", overlapping, planned) is None
    settings = ReportSettings(baseline_path="b.json", baseline=other, max_drop=2.0)
    assert problems(settings, planned, {}) == [baseline_problem("b.json", other, planned)]
