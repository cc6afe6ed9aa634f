"""Replay of API-Bank prediction files.

ToLeaP's ``scripts/apibank_eval.py`` writes no per-sample file (it prints outputs and logs low scores; only the
aggregate reaches ``<name>_results.json``), so the per-sample format is upstream's: ``api-bank/evaluator_by_json.py``
(DAMO-ConvAI @ 483554e) reads a JSON Lines file whose lines are ``{"file": <dialogue file name>, "id": <sample index
in Sample.from_chat_history>, "pred": <model output>, ...}`` (other keys such as ``instruction``, ``input``,
``expected_output`` are ignored), one file per level. The case id is ``<file>#<id>``. A ``pred`` of ``null`` is an
empty output (scored 0, as ``if model_output:`` upstream). ``path`` is such a file or a folder of ``*.jsonl`` /
``*.json`` files (one per level). A repeated (file, id) keeps its first line (upstream's ``pred_map`` would keep the
last one), with a warning.
"""

from __future__ import annotations

from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines

PREDICTION_SCHEMA = {
    "type": "object",
    "required": ["file", "id", "pred"],
    "properties": {
        "file": {"type": "string", "minLength": 1},
        "id": {"type": "integer", "minimum": 0},
        "pred": {"type": ["string", "null"]},
    },
}


def replay_outputs(path: Path) -> ReplayOutputs:
    outputs = ReplayOutputs(duplicates="the first one counts (upstream's pred_map keeps the last)")
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".jsonl", ".json"))
        if not files:
            outputs.error("no prediction file here: expected *.jsonl lines {\"file\", \"id\", \"pred\"} as "
                          "evaluator_by_json.py reads them", path)
    elif path.is_file():
        files = [path]
    else:
        outputs.error("no such prediction file or folder", path)
        files = []
    for source in files:
        for _, number, row in json_lines(outputs, source, PREDICTION_SCHEMA, what="API-Bank prediction line"):
            outputs.add(f"{row['file']}#{row['id']}", row["pred"] or "", source, number)
    return outputs
