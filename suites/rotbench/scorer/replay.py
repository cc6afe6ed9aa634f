"""Reading RoTBench's inference output files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_array, json_lines
from .loading import LEVELS, TURNS

# What RoTBench's inference writes (one record per case, in the order of the data file); the official evaluation
# reads the model's answer from the last message of each record.
REPLAY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["conversations"],
    "properties": {"conversations": {"type": "array", "minItems": 1,
                                     "items": {"type": "object", "required": ["value"]}}},
}


def replay_outputs(path: Path) -> dict[str, str]:
    """Read RoTBench inference output files: a folder of ``<Turn>/<level>.json`` (the JSON array the evaluation
    reads) or ``<Turn>/<level>.jsonl`` (what the inference appends), or one such file.

    Records are matched to cases by position, as the official evaluation does (a bad record keeps its position, so
    the ones after it still meet their cases). Tolerant: the result is a
    :class:`~pytest_toolbench.contract.replay_files.ReplayOutputs` whose ``problems`` name each unusable record (file and
    line); the rest of the file and the other files still count.
    """
    path = Path(path)
    outputs = ReplayOutputs()
    files: dict[tuple[str, str], Path] = {}
    expected = "<First_Turn|Third_Turn>/<level>.json or .jsonl, level one of " + ", ".join(LEVELS)
    if path.is_file():
        turn, level = path.parent.name, path.stem
        if turn not in TURNS or level not in LEVELS or path.suffix not in (".json", ".jsonl"):
            outputs.error(f"not a RoTBench output file: expected {expected}", path)
            return outputs
        files[(turn, level)] = path
    elif path.is_dir():
        roots = [path] if path.name in TURNS else [path / t for t in TURNS]
        for root in roots:
            for level in LEVELS:
                # Prefer the JSON array: it is the form the official evaluation reads.
                for suffix in (".json", ".jsonl"):
                    candidate = root / f"{level}{suffix}"
                    if candidate.is_file():
                        files[(root.name, level)] = candidate
                        break
        if not files:
            outputs.error(f"no RoTBench output files here: expected {expected}, as RoTBench's inference writes them",
                          path)
    else:
        outputs.error("no such output file or folder", path)
    for (turn, level), file in sorted(files.items()):
        prefix = f"{TURNS[turn]}-{level}"
        read = json_lines if file.suffix == ".jsonl" else json_array
        for index, number, record in read(outputs, file, REPLAY_SCHEMA, what="RoTBench output record",
                                          case_of=lambda position, _text, prefix=prefix: f"{prefix}-{position}"):
            value = record["conversations"][-1].get("value")
            outputs.add(f"{prefix}-{index}", value if isinstance(value, str) else "", file, number)
    return outputs
