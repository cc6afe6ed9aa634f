"""``--toolbench-json``: the run header, the summary and one record per case (the reporting tools' input, and the
file ``--toolbench-baseline`` reads back)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..contract.suite import CaseRecord
from ..run.records import dump_document, safe_value
from .stats import count_interval

if TYPE_CHECKING:
    from .run_report import RunReport

FORMAT_VERSION = 1
CASE_FIELDS = ("suite", "case_id", "category", "keywords", "passed", "error_type", "output", "finish_reason",
               "labels", "counts", "nodeid", "known_defect")


def _case(record: CaseRecord) -> dict[str, Any]:
    """A case's JSON: its fields and, when it did not pass, ``message``, the text its test failed with."""
    case = {key: getattr(record, key) for key in CASE_FIELDS}
    if record.sample is not None:  # --toolbench-repeat: which of the case's samples
        case["sample"] = record.sample
    if not record.passed:
        case["message"] = record.message or record.explanation or ""
    if record.prompts is not None:  # --toolbench-keep-prompts: what the model was sent, one entry per request
        case["prompts"] = record.prompts
    return case


def document(report: "RunReport") -> dict[str, Any]:
    run = report.outcome
    cases = [_case(record) for record in sorted(report.records, key=lambda r: (r.suite, r.order, r.sample or 0))]
    body = report.summary.to_json()
    for suite, written in zip(report.summary.suites, body["suites"].values()):
        for metric, figure in zip(suite.metrics, written["metrics"]):
            interval = count_interval(metric)
            figure["interval95"] = list(interval) if interval else None
    # Cases are safe records already; the header and figures pass through the same policy (paths, NaN figures).
    for name, ranks in report.leaderboards.items():
        body["suites"][name]["leaderboard"] = ranks.to_json()
    body = safe_value(body, max_depth=12, max_nodes=10_000_000)
    result: dict[str, Any] = {"format_version": FORMAT_VERSION, **body, "cases": cases}
    if run is not None:
        result["report"] = run.to_json()
    if report.history is not None:
        result["history"] = safe_value(report.history.to_json(), max_depth=12, max_nodes=10_000_000)
    return result


class JsonWriter:
    """The built-in writer of ``--toolbench-json`` (``report/writers.py``): ``extend`` is the
    ``pytest_toolbench_results_document`` hook, called with the document before it is written."""

    name = "json"
    what = "results"

    def __init__(self, path: Path, extend: Callable[[dict[str, Any]], None] | None = None):
        self.path = path
        self.extend = extend

    def write(self, report: "RunReport") -> Path:
        write(self.path, report, self.extend or (lambda document: None))
        return self.path


def write(path: Path, report: "RunReport", extend: Callable[[dict[str, Any]], None] | None = None) -> None:
    """``extend(document)`` may add to the document before it is written (the ``pytest_toolbench_results_document``
    hook); what it adds goes through the same serialisation policy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    built = document(report)
    if extend is not None:
        extend(built)
        built = {key: value if key == "cases" else safe_value(value, max_depth=12, max_nodes=10_000_000)
                 for key, value in built.items()}
    text = dump_document(built)  # built before the file is opened: nothing half-written
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
