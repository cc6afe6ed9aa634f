"""A minimal benchmark: the model must call ``echo(text=...)`` with the text the user gave."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Metric, Request, Verdict

CASE_SCHEMA = {
    "type": "object",
    "required": ["id", "text"],
    "properties": {"id": {"type": "string"}, "text": {"type": "string"}, "kind": {"enum": ["short", "long"]}},
}
SYSTEM = 'Answer with one JSON object {"name": "echo", "arguments": {"text": ...}} and nothing else.'


def load_cases(data_dir: Path, definition: dict) -> list[Case]:
    return [Case(row["id"], row.get("kind", "short"), row, suite="echo")
            for row in load_jsonl(data_dir / "cases.jsonl", CASE_SCHEMA)]


def build_request(case: Case) -> Request:
    return Request(messages=[{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Echo this: {case.payload['text']}"}])


def gold_output(case: Case) -> str:
    return json.dumps({"name": "echo", "arguments": {"text": case.payload["text"]}})


def score(case: Case, generation) -> Verdict:
    try:
        call = json.loads(generation.text)
        text = call["arguments"]["text"]
    except (ValueError, KeyError, TypeError):
        return Verdict(False, FORMAT_ERROR, "output is not an echo call")
    expected = case.payload["text"]
    if text != expected:
        return Verdict(False, "wrong_text", f"expected {expected!r}, got {text!r}", decoded=call, expected=expected)
    return Verdict(True, decoded=call, expected=expected)


def aggregate(results) -> list[Metric]:
    rows = []
    for category in sorted({r.category for r in results}):
        picked = [r for r in results if r.category == category]
        rows.append(Metric(category, sum(r.passed for r in picked) / len(picked), sum(r.passed for r in picked),
                           len(picked), group="category"))
    passed = sum(r.passed for r in results)
    rows.append(Metric("overall", passed / len(results), passed, len(results), group="aggregate",
                       formula="correct / total"))
    return rows


def replay_outputs(path: Path) -> dict[str, str]:
    return {row["id"]: row["result"] for row in load_jsonl(path)}
