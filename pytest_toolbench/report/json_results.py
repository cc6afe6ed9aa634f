"""``--toolbench-json``: the run header, the summary and one record per case (the reporting tools' input, and the
file ``--toolbench-baseline`` reads back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..summary import RunSummary
from .stats import count_interval

if TYPE_CHECKING:
    from .run import ReportRun

FORMAT_VERSION = 1
CASE_FIELDS = ("suite", "case_id", "category", "keywords", "passed", "error_type", "output", "finish_reason",
               "labels", "counts", "nodeid")


def document(summary: RunSummary, records: Iterable[Mapping[str, Any]], run: "ReportRun | None" = None
             ) -> dict[str, Any]:
    cases = [{key: record.get(key) for key in CASE_FIELDS}
             for record in sorted(records, key=lambda r: (r["suite"], r.get("order", 0)))]
    body = summary.to_json()
    for suite in body["suites"].values():
        for metric in suite["metrics"]:
            interval = count_interval(metric)
            metric["interval95"] = list(interval) if interval else None
    result: dict[str, Any] = {"format_version": FORMAT_VERSION, **body, "cases": cases}
    if run is not None:
        result["report"] = run.to_json()
    return result


def write(path: Path, summary: RunSummary, records: Iterable[Mapping[str, Any]], run: "ReportRun | None" = None
          ) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(document(summary, records, run), ensure_ascii=False, indent=1, default=str),
                   encoding="utf-8")
    tmp.replace(path)
