"""Reading saved outputs for the replay backend: TL-Training ships no output files of its own (its repository has
no evaluation code), so the outputs read are those the harnesses of the test sets it reuses write.

- ``rot_clean``: RoTBench's inference output for ``First_Turn/clean``: ``First_Turn/clean.json`` (the JSON array the
  official evaluation reads) or ``First_Turn/clean.jsonl`` (what the inference appends), one record per case in the
  order of the data file, the answer in the last message (``conversations[-1].value``), matched by position as
  RoTBench's evaluation matches them (case ``rot-clean-<position>``). Other turns and levels are not this suite's.
- ``exec_*``: ``bfcl generate`` result files of the retired executable categories, ``BFCL_v3_exec_<category>_result.json``
  or ``BFCL_v4_exec_<category>_result.json``, JSON lines ``{"id": "exec_simple_0", "result": "<text>"}``. A ``result``
  that is not text (an FC handler's list of calls) is that case's unusable output: TL-Training scores the text a
  model wrote, decoded by this suite's parser registry.
- ``toolalpaca_real``: ToolAlpaca's evaluation writes no per-case output file that names the eval_real instance, so
  these cases have no reader (the backend reports them as without output).

The reading is tolerant (:mod:`pytest_toolbench.contract.replay_files`): a bad line costs its own case, never the
file; a path holding none of these files is one error naming what was expected.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_array, json_lines, leading_id

#: RoTBench's inference record: the model's answer is the value of the last message.
ROTBENCH_RECORD: dict[str, Any] = {
    "type": "object",
    "required": ["conversations"],
    "properties": {"conversations": {"type": "array", "minItems": 1,
                                     "items": {"type": "object", "required": ["value"]}}},
}
BFCL_RECORD: dict[str, Any] = {"type": "object", "required": ["id", "result"], "properties": {"id": {"type": "string"}}}
BFCL_EXEC_FILE = re.compile(r"^BFCL_v[34]_exec_(simple|multiple|parallel|parallel_multiple)_result\.json$")
EXPECTED = ("First_Turn/clean.json or .jsonl (RoTBench's inference output), or "
            "BFCL_v3|v4_exec_<category>_result.json (bfcl generate)")


def replay_outputs(path: Path) -> ReplayOutputs:
    """The saved outputs under ``path`` (a folder, searched recursively, or one such file), by case id."""
    path = Path(path)
    outputs = ReplayOutputs()
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        outputs.error("no such output file or folder", path)
        return outputs
    rotbench = _rotbench_file(files)
    bfcl = [file for file in files if BFCL_EXEC_FILE.match(file.name)]
    if rotbench is None and not bfcl:
        outputs.error(f"no TL-Training test-set output files here: expected {EXPECTED}", path)
        return outputs
    if rotbench is not None:
        read = json_lines if rotbench.suffix == ".jsonl" else json_array
        for position, number, record in read(outputs, rotbench, ROTBENCH_RECORD, what="RoTBench output record",
                                             case_of=lambda at, _text: f"rot-clean-{at}"):
            value = record["conversations"][-1].get("value")
            outputs.add(f"rot-clean-{position}", value if isinstance(value, str) else "", rotbench, number)
    for file in bfcl:
        for _, number, record in json_lines(outputs, file, BFCL_RECORD, what="BFCL result",
                                            case_of=lambda _at, text: _id_of(text)):
            if isinstance(record["result"], str):
                outputs.add(record["id"], record["result"], file, number)
            else:
                outputs.bad_line(file, number, "result is not text (an FC handler's calls): TL-Training scores the "
                                               "text the model wrote", record["id"])
    return outputs


def _rotbench_file(files: list[Path]) -> Path | None:
    """RoTBench's First_Turn/clean output, the JSON array first (the form the official evaluation reads)."""
    for suffix in (".json", ".jsonl"):
        for file in files:
            if file.name == f"clean{suffix}" and file.parent.name == "First_Turn":
                return file
    return None


def _id_of(text: str) -> str | None:
    found = leading_id(text)
    return found if isinstance(found, str) else None
