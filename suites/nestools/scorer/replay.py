"""Replay of NesTools' own prediction files."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id, plural

RAW_RESPONSE_SCHEMA = {
    "type": "object",
    "required": ["test_id", "response"],
    "properties": {"test_id": {"type": "integer"}, "response": {"type": ["string", "integer"]}},
}
NEW_RESPONSE_SCHEMA = {
    "type": "object",
    "required": ["test_id", "lst_response"],
    "properties": {"test_id": {"type": "integer"}},
}


REPLAY_FILES = ("raw_response.jsonl", "new_response.jsonl")


def _replay_file(path: Path, outputs: ReplayOutputs) -> Path | None:
    """The prediction file to read: ``path`` itself, or the first of :data:`REPLAY_FILES` in that folder."""
    if path.is_dir():
        for name in REPLAY_FILES:
            if (path / name).is_file():
                return path / name
        outputs.error("no NesTools prediction file here: expected raw_response.jsonl or new_response.jsonl, as "
                      "inference.py writes them", path)
        return None
    if not path.exists():
        outputs.error("no such prediction file or folder", path)
        return None
    return path


def _replay_read(path: Path) -> tuple[ReplayOutputs, list[str]]:
    """The outputs and the test_ids of API failures (``"response": -1``), read once."""
    outputs = ReplayOutputs(duplicates="the first one counts (upstream eval.py would score every line)")
    dropped: list[str] = []
    source = _replay_file(Path(path), outputs)
    if source is None:
        return outputs, dropped
    parsed_only = source.name.startswith("new_response")
    schema, what = (NEW_RESPONSE_SCHEMA, "new_response.jsonl line") if parsed_only else \
        (RAW_RESPONSE_SCHEMA, "raw_response.jsonl line")

    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text, "test_id")
        return str(found) if isinstance(found, int) else None

    for _, number, row in json_lines(outputs, source, schema, what=what, case_of=case_of):
        case_id = str(row["test_id"])
        if parsed_only:
            parsed = row["lst_response"]
            try:
                text = "" if parsed == -1 else json.dumps(parsed, ensure_ascii=False)
            except (RecursionError, ValueError) as exc:
                outputs.bad_line(source, number, f"lst_response cannot be turned into text ({type(exc).__name__})",
                                 case_id)
                continue
            outputs.add(case_id, text, source, number)
        elif isinstance(row["response"], str):
            outputs.add(case_id, row["response"], source, number)
        elif case_id not in dropped:
            dropped.append(case_id)
            outputs.left_out[case_id] = (f'{source}:{number}: an API failure ("response": -1), left out of every '
                                         "denominator as eval.py does")
    if dropped:
        shown = ", ".join(dropped[:10]) + (f" and {len(dropped) - 10} more" if len(dropped) > 10 else "")
        verb = "is an API failure" if len(dropped) == 1 else "are API failures"
        outputs.warning(f'{plural(len(dropped), "line")} {verb} ("response": -1), left out as eval.py leaves them '
                        f"out of every denominator: test_id {shown}", source)
    return outputs, dropped


def replay_outputs(path: Path) -> dict[str, str]:
    """{test_id: raw output} from ``inference.py``'s files (a file, or a folder holding them).

    ``raw_response.jsonl`` (what ``eval.py`` reads) is preferred. Lines with ``"response": -1`` (API failures) are
    left out, as ``eval.py`` drops them from every denominator; :func:`replay_dropped` lists them. From
    ``new_response.jsonl`` alone the parsed list is re-serialised as JSON, and ``-1`` (a parse failure there, as an
    API failure cannot be told apart) becomes an empty output, i.e. a format failure. test_ids are integers, as
    upstream writes and reads them. A repeated test_id keeps its first line, with a warning (upstream would score
    every line). Tolerant: the result is a :class:`~pytest_toolbench.contract.replay_files.ReplayOutputs` whose ``problems``
    name each unusable line (file and line) while the other lines still count.
    """
    return _replay_read(Path(path))[0]


def replay_dropped(path: Path) -> list[str]:
    """The test_ids whose ``raw_response.jsonl`` line is an API failure (``"response": -1``), to report them."""
    return _replay_read(Path(path))[1]
