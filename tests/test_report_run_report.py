"""The run report: one plain value every writer renders; writers never call back into the run."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

from pytest_toolbench.contract.suite import Metric, Request
from pytest_toolbench.report import html, markdown, run_report, terminal
from pytest_toolbench.report.compare import Comparison, GateResult, SuiteComparison
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

REPORT = Path(run_report.__file__).parent
WRITERS = ("terminal.py", "markdown.py", "json_results.py", "html.py")


def sample_report() -> run_report.RunReport:
    suite = SuiteSummary("demo", "Demo", {"kind": "local", "description": "demo data"}, 2, 1,
                         [Metric("overall", 0.5, 1, 2, group="aggregate")], {"wrong": 1}, {"c": {"wrong": 1}}, {})
    summary = RunSummary(header={"backend": "gold", "mode": "prompt"}, suites=[suite])
    records = [CaseRecord("demo", "a", "c", True, nodeid="suites/demo/suite.yaml::a"),
               CaseRecord("demo", "b", "c", False, "wrong", explanation="no", nodeid="suites/demo/suite.yaml::b", message="no"),
               CaseRecord("demo", "z", "c", False, "not_run", nodeid="suites/demo/suite.yaml::z")]
    comparison = Comparison("old.json", {"backend": "gold"}, {"demo": SuiteComparison("demo", True, newly_failing=["b"])})
    outcome = RunOutcome(comparison=comparison, gates=(GateResult("g", True, "fine"),), exit_status=0)
    return run_report.build(summary, records, outcome, tool_parser="hermes")


def test_the_run_report_is_plain_json_safe_data():
    report = sample_report()
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["title"] == "pytest-toolbench: none (gold reference answers)"
    assert ["Tool parser", "hermes"] in data["facts"]
    assert [r["case_id"] for r in data["records"]] == ["a", "b", "z"]
    assert data["outcome"]["baseline"]["path"] == "old.json" and data["outcome"]["gates"][0]["message"] == "fine"
    # a not_run case has no row in the page to link to
    assert report.case_anchors() == {("demo", "a"): "suites/demo/suite.yaml::a",
                                     ("demo", "b"): "suites/demo/suite.yaml::b"}


def test_every_writer_takes_only_the_run_report():
    report = sample_report()
    assert "demo: Demo  (1/2 cases passed)" in terminal.render(report)
    assert markdown.render(report).startswith("## pytest-toolbench: none (gold reference answers)\n")
    assert document(report)["report"]["gates"][0]["passed"] is True
    page = html.summary_html(report)
    assert "<th>Tool parser</th><td>hermes</td>" in page and 'href="#suites/demo/suite.yaml::b"' in page


def test_no_writer_reaches_into_the_run():
    """Writers import neither the session, the catalog, the options nor the pytest glue, and never build a
    request: the run hands them data."""
    for name in WRITERS:
        tree = ast.parse((REPORT / name).read_text())
        modules = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert not {m for m in modules if m.endswith(("session", "catalog", "options", "plugin"))}, name
        assert "build_request" not in (REPORT / name).read_text(), name
    assert html.HtmlReport("t").report is None  # made from a title; the run report arrives at session finish


def test_each_rows_request_is_rendered_by_the_run_from_the_catalog():
    request = Request(messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "Q" * 5000}],
                      tools=[{"type": "function", "function": {"name": "f"}}])
    benchmark = SimpleNamespace(build_request=lambda case: request)
    loaded = SimpleNamespace(benchmark=benchmark, case=lambda case_id: case_id)
    catalog = SimpleNamespace(load=lambda path: loaded)
    requests = run_report.CaseRequests(catalog, lambda suite: SimpleNamespace(definition="suites/demo/suite.yaml"))
    report = SimpleNamespace(when="call", toolbench=CaseRecord("demo", "b", "c", False, "wrong"))
    requests.pytest_runtest_logreport(report)
    assert report.toolbench_request == {"messages": list(request.messages), "tools": list(request.tools)}
    details = html.case_details(report.toolbench, report.toolbench_request)
    assert "Request (2 messages, 1 tools)" in details and "[1,200 of 5,000 characters shown]" in details
    # a suite whose requests cannot be rebuilt shows no request, and the run goes on
    broken = SimpleNamespace(load=lambda path: (_ for _ in ()).throw(OSError("gone")))
    assert run_report.case_request(broken, "x/suite.yaml", "b") is None
