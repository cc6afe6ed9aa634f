"""The run report: one plain value every writer renders; writers never call back into the run."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

from pytest_toolbench.contract.suite import Metric, Request, Task
from pytest_toolbench.report import html, markdown, run_report, terminal
from pytest_toolbench.report.compare import Comparison, GateResult, SuiteComparison
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.run import case_request
from pytest_toolbench.run.requests import UNRENDERED
from pytest_toolbench.run.records import CaseRecord
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

REPORT = Path(run_report.__file__).parent
WRITERS = ("terminal.py", "markdown.py", "json_results.py", "html.py", "html_rows.py", "eee.py", "notes.py", "header.py",
           "writers.py")


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
        assert not {m for m in modules if m.split(".")[0] in ("pytest", "_pytest", "pytest_html")}, name
        assert "build_request" not in (REPORT / name).read_text(), name


def test_each_rows_request_is_the_one_scoring_built():
    request = Request(messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "Q" * 5000}],
                      tools=[{"type": "function", "function": {"name": "f"}}])
    built = []
    benchmark = SimpleNamespace(build_request=lambda case: built.append(case) or request)
    answered = []
    keeper = case_request.RequestKeeper(lambda task: answered.append(task) or "answer")
    assert keeper(Task("b", request, 0)) == "answer" and len(answered) == 1  # handed on to the answerer
    view = keeper.view(benchmark, "b")
    assert view == {"messages": list(request.messages), "tools": list(request.tools)}
    assert built == []  # the request scoring built, not built again for the report
    record = CaseRecord("demo", "b", "c", False, "wrong")
    details = html.case_details(record, view)
    assert "Request (2 messages, 1 tools)" in details and "[1,200 of 5,000 characters shown]" in details
    # from an xdist worker: ASCII JSON text that decodes to the very same view
    text = case_request.transport(view)
    assert text.isascii() and case_request.decode(text) == view
    # gold and replay answer by case (no rendered request), a conversation's turns are not the case's request:
    # the suite builds it for the row, in the process that scored the case
    for task in (Task("b", UNRENDERED, 0), Task("b", request, 1, in_conversation=True)):
        keeper = case_request.RequestKeeper(lambda task: "answer")
        keeper(task)
        assert keeper.view(benchmark, "b") == view and built[-1] == "b"
    # a suite that cannot build it: the row shows no request, and the run goes on
    broken = SimpleNamespace(build_request=lambda case: (_ for _ in ()).throw(OSError("gone")))
    assert case_request.RequestKeeper(lambda task: None).view(broken, "b") is None
