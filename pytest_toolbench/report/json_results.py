"""``--toolbench-json``: the run header, the summary and one record per case (the reporting tools' input)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..summary import RunSummary

FORMAT_VERSION = 1


def write(path: Path, summary: RunSummary, records: Iterable[Mapping[str, Any]]) -> None:
    cases = [
        {key: record.get(key) for key in ("suite", "case_id", "category", "keywords", "passed", "error_type",
                                          "output", "finish_reason", "labels", "counts", "nodeid")}
        for record in sorted(records, key=lambda r: (r["suite"], r.get("order", 0)))
    ]
    document = {"format_version": FORMAT_VERSION, **summary.to_json(), "cases": cases}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(document, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)
