"""The data file, ``cases.jsonl`` (one JSON object per line), into cases."""

from __future__ import annotations

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.suite import Case, SuiteContext

#: Every line is validated when loaded: a bad one stops the run with one error naming the file, the line and the field.
CASE_SCHEMA = {
    "type": "object",
    "required": ["id", "text"],
    "properties": {"id": {"type": "string"}, "text": {"type": "string"}, "kind": {"enum": ["short", "long"]}},
}


def load_cases(context: SuiteContext) -> list[Case]:
    # No suite name here: the catalog stamps every case with suite.yaml's ``name`` and binds it to ``context``.
    return [Case(case_id=row["id"], category=row.get("kind", "short"), payload=row)
            for row in load_jsonl(context.data_dir / "cases.jsonl", CASE_SCHEMA)]
