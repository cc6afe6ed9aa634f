"""Saved result files for ``--toolbench-replay``: JSON Lines ``{"id": <case id>, "result": <the model's text>}``.

Read with the tolerant reader of :mod:`pytest_toolbench.contract.replay_files`, never with ``load_jsonl`` (which
stops at the first bad line): a line that is not JSON, not UTF-8 or not such a record is reported with its file and
line and costs only its own case (when its id can still be read), and every other line still counts.
"""

from __future__ import annotations

from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id

RESULT_SCHEMA = {"type": "object", "required": ["id", "result"],
                 "properties": {"id": {"type": "string"}, "result": {"type": "string"}}}


def replay_outputs(path: Path) -> ReplayOutputs:
    """``{case id: saved text}`` of a result file (or of every ``*.jsonl`` file in a folder), with the problems found."""
    path = Path(path)
    outputs = ReplayOutputs()
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        outputs.error("no echo result file (*.jsonl) here", path)
    for file in files:
        for _, line, record in json_lines(outputs, file, RESULT_SCHEMA, what="echo result",
                                          case_of=lambda _position, text: _id(text)):
            outputs.add(record["id"], record["result"], file, line)
    return outputs


def _id(text: str) -> str | None:
    found = leading_id(text)
    return found if isinstance(found, str) else None
