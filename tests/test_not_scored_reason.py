"""An N/A figure whose cases were skipped says why in the summary itself (no ``-rs`` needed)."""

from __future__ import annotations

from pytest_toolbench.contract.suite import NOT_SCORED, CaseRecord, Metric
from pytest_toolbench.run.summary import with_not_scored_reason


def test_an_na_category_of_skipped_cases_names_the_skip_reason():
    reason = "web search generation calls the live SerpAPI: set SERPAPI_API_KEY"
    records = [CaseRecord("bfcl", f"w{i}", "web_search_base", False, NOT_SCORED, explanation=reason) for i in range(3)]
    records.append(CaseRecord("bfcl", "s0", "simple_python", True))
    metrics = [Metric("web_search_base", None, 0, 0, group="category", scope="over 0 of 3 cases (selection)"),
               Metric("simple_python", 1.0, 1, 1, group="category"),
               Metric("web_search", 0.0, group="aggregate")]
    marked = {metric.name: metric for metric in with_not_scored_reason(metrics, records)}
    assert marked["web_search_base"].scope == f"N/A: 3 cases not scored: {reason}; over 0 of 3 cases (selection)"
    assert marked["simple_python"].scope == "" and marked["web_search"].scope == ""
