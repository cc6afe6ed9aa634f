"""A results file read back as typed values (report/results_file.py): the baseline and history path."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.suite import CaseRecord, Metric
from pytest_toolbench.report import results_file
from pytest_toolbench.report.compare import compare
from pytest_toolbench.report.json_results import CASE_FIELDS
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

#: ``--toolbench-json`` of the T-Eval fixture replay, written by the code before issue 32 (CaseRecord a Mapping,
#: baselines raw dicts): a file written then must still load as a baseline.
OLD_FILE = Path(__file__).parent / "data" / "results_written_before_issue32.json"


def test_a_results_file_written_before_loads_as_typed_values():
    document = json.loads(OLD_FILE.read_text(encoding="utf-8"))
    loaded = results_file.read(document)
    assert loaded.header == document["header"]
    suite = loaded.suites["teval"]
    assert all(isinstance(m, Metric) for m in suite.metrics) and suite.samples is document["suites"]["teval"]["samples"]
    written = document["suites"]["teval"]["metrics"]
    assert [{k: v for k, v in m.__dict__.items() if k != "estimate"} for m in suite.metrics] == \
        [{k: v for k, v in m.items() if k != "interval95"} for m in written]
    assert suite.labels == document["suites"]["teval"]["labels"]
    assert len(loaded.cases) == len(document["cases"]) == 20
    for record, case in zip(loaded.cases, document["cases"]):
        assert isinstance(record, CaseRecord)
        assert {key: getattr(record, key) for key in CASE_FIELDS} == {**{k: case[k] for k in CASE_FIELDS},
                                                                      "keywords": tuple(case["keywords"])}
        assert record.message == case.get("message")
    assert loaded.suite_cases("teval") == list(loaded.cases) and loaded.suite_cases("other") == []


def test_the_old_file_is_a_baseline_the_comparison_reads():
    loaded = results_file.read(json.loads(OLD_FILE.read_text(encoding="utf-8")))
    suite = loaded.suites["teval"]
    again = RunSummary(header={"backend": "replay"}, suites=[SuiteSummary(
        "teval", "T-Eval", {}, len(loaded.cases), sum(c.passed for c in loaded.cases), list(suite.metrics), {}, {},
        {})])
    comparison = compare(again, loaded.cases, loaded, OLD_FILE)
    teval = comparison.suites["teval"]
    assert teval.in_baseline and teval.compared_cases == 20
    assert teval.newly_failing == teval.newly_passing == []
    assert teval.metrics and all(d.delta in (0, None) for d in teval.metrics.values())


def test_malformed_entries_are_left_out_and_unknown_keys_ignored():
    loaded = results_file.read({
        "suites": {"s": {"metrics": [{"name": "acc", "value": 0.5, "better": "sideways", "new_key": 1}, "junk"],
                         "samples": 1},
                   "broken": None},
        "cases": [{"suite": "s", "case_id": "1", "category": "a", "passed": True, "from_the_future": 1},
                  {"suite": "s"}, ["not", "a", "case"], {"suite": 3, "case_id": "x"}]})
    assert list(loaded.suites) == ["s"] and loaded.header == {}
    (metric,) = loaded.suites["s"].metrics
    assert metric == Metric("acc", 0.5) and metric.better == "higher"  # an unknown direction reads as higher
    assert loaded.suites["s"].samples is True
    assert loaded.cases == (CaseRecord("s", "1", "a", True),)
