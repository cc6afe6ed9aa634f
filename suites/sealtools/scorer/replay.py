"""Replay of the result files SealTools' own inference writes (Seal-Tools original and ToLeaP).

Layouts read (a file, or a folder holding them; one file per split):

* Seal-Tools @ ce753ecd ``LLM_Eval.ToolLearning_eval``: ``output/raw_ToolLearning_<split>.jsonl``, one line per
  sample ``{"id", "text": [output text], "raw": [...]}`` (``ToolLearning_eval_ICL`` writes
  ``raw_ToolLearningICL_<split>.jsonl``), and ``output/pred_ToolLearning_<split>.jsonl``, ``{"id", "predict":
  [parsed list or -1], "gold_data"}``;
* ToLeaP @ b9507131 ``scripts/sealtools_eval.py``: ``results/sealtools/raw_pred_data/<model>/<split>.json``, a
  JSON **array of output strings** in sample order (no ids: ToLeaP ``zip``s it with the split file), and
  ``results/sealtools/pred_data/<model>/<split>.json``, JSON Lines despite the name, records as Seal-Tools'
  ``pred_`` files.

Raw text is preferred (it is re-parsed with the run's protocol, exactly as upstream). A ``pred`` record holds the
list upstream already parsed; it is written back as JSON text that the parser reads unchanged (``gold.dump``), and
``-1`` becomes an empty output (a format failure). The gate is applied again to that text, so a pred file written
under one protocol is re-gated under the run's protocol (the gate words are keys, so they survive the
re-serialisation; a word spelt with JSON escapes in the original text is the only way they could differ).

Positions of a ToLeaP array are turned into the dataset's ids with the upstream layout (``<split>-easy-<i>`` for
the first 200 / 200 / 94 samples, ``<split>-difficult-<i>`` after; ids number samples by position). An array
whose length differs from the split's sample count is read with a warning: ToLeaP's ``zip`` scores only the
shorter of the two, and samples without an output carry no counts here either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_array, json_lines, leading_id, read_bytes
from .gold import dump
from .loading import SPLITS, UPSTREAM_EASY_COUNTS, UPSTREAM_SIZES

#: Per split, the file names looked for in a folder, most preferred first.
FILE_NAMES = ("raw_ToolLearning_{split}.jsonl", "raw_ToolLearningICL_{split}.jsonl", "{split}.json",
              "{split}.jsonl", "pred_ToolLearning_{split}.jsonl", "pred_ToolLearningICL_{split}.jsonl")
_SPLIT_OF_NAME = re.compile(r"(?:^|_)(dev|test_in_domain|test_out_domain)$")

RECORD_SCHEMA = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": {"type": "string"},
        "text": {"type": "array", "minItems": 1, "prefixItems": [{"type": "string"}]},
        "predict": {"type": "array", "minItems": 1},
    },
    "anyOf": [{"required": ["text"]}, {"required": ["predict"]}],
}


def position_id(split: str, position: int) -> str:
    """The dataset id of the sample at ``position`` of an upstream split file."""
    kind = "easy" if position < UPSTREAM_EASY_COUNTS[split] else "difficult"
    return f"{split}-{kind}-{position}"


def split_of_name(path: Path) -> str | None:
    match = _SPLIT_OF_NAME.search(path.stem)
    return match.group(1) if match else None


def _folder_files(folder: Path, outputs: ReplayOutputs) -> list[Path]:
    chosen = []
    for split in SPLITS:
        present = [folder / name.format(split=split) for name in FILE_NAMES if (folder / name.format(split=split)).is_file()]
        if not present:
            continue
        chosen.append(present[0])
        for other in present[1:]:
            outputs.warning(f"not read: {present[0].name} is preferred for split {split}", other)
    if not chosen:
        outputs.error("no SealTools result file here: expected raw_ToolLearning_<split>.jsonl / "
                      "pred_ToolLearning_<split>.jsonl (Seal-Tools) or <split>.json (ToLeaP raw_pred_data or "
                      f"pred_data), for a split of {list(SPLITS)}", folder)
    return chosen


def _pred_text(value: Any) -> str:
    return "" if value == -1 and not isinstance(value, bool) else dump(value)


def _read_lines(path: Path, outputs: ReplayOutputs) -> None:
    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text, "id")
        return found if isinstance(found, str) else None

    for _, number, record in json_lines(outputs, path, RECORD_SCHEMA, what="SealTools result record",
                                        case_of=case_of):
        case_id = record["id"]
        if "text" in record:
            outputs.add(case_id, record["text"][0], path, number)
            continue
        try:
            text = _pred_text(record["predict"][0])
        except (RecursionError, ValueError, TypeError) as exc:
            outputs.bad_line(path, number, f"predict[0] cannot be turned into text ({type(exc).__name__})", case_id)
            continue
        outputs.add(case_id, text, path, number)


def _read_array(path: Path, split: str | None, outputs: ReplayOutputs) -> None:
    if split is None:
        outputs.error("a JSON array of outputs (ToLeaP raw_pred_data) has no ids; its split must be the file name "
                      f"(<split>.json with a split of {list(SPLITS)})", path)
        return
    size = UPSTREAM_SIZES[split]
    count = 0
    for position, line, element in json_array(outputs, path, what="output string",
                                              case_of=lambda p, _t: position_id(split, p) if p < size else None):
        count = position + 1
        if position >= size:
            continue
        if not isinstance(element, str):
            outputs.bad_line(path, line, f"position {position}: not an output string ({type(element).__name__})",
                             position_id(split, position))
            continue
        outputs.add(position_id(split, position), element, path, line)
    if count and count != size:
        if count < size:
            outputs.warning(f"{count} outputs for the {size} samples of {split}: ToLeaP zips them by position and "
                            f"scores only the first {count}; the rest have no output", path)
        else:
            outputs.warning(f"{count} outputs for the {size} samples of {split}: positions from {size} on match no "
                            "sample (ToLeaP's zip drops them)", path)


def _is_metrics_file(data: bytes) -> bool:
    """``result_ToolLearning_<split>.json`` / ToLeaP ``eval_result/<model>/<split>.json``: one JSON object."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and ("AMOUNT" in document or "错误类型统计" in document or "P_api" in document)


def replay_outputs(path: Path) -> ReplayOutputs:
    """``{case id: output text}`` from SealTools' result files (see the module docstring). Tolerant: each unusable
    line or file is a problem naming the file and line; the rest still counts."""
    path = Path(path)
    outputs = ReplayOutputs()
    if path.is_dir():
        files = _folder_files(path, outputs)
    elif path.is_file():
        files = [path]
    else:
        outputs.error("no such result file or folder", path)
        return outputs
    for file in files:
        data = read_bytes(outputs, file)
        if data is None:
            continue
        outputs.files.remove(str(file))  # json_lines / json_array read it again and list it themselves
        head = data.lstrip()[:1]
        if head == b"{" and _is_metrics_file(data):
            outputs.error("a SealTools metrics file (AMOUNT, P_api, ...), not model outputs", file)
        elif head == b"[":
            _read_array(file, split_of_name(file), outputs)
        elif head == b"{":
            _read_lines(file, outputs)
        else:
            outputs.error(f"not a SealTools result file (it starts with {data.lstrip()[:20]!r})", file)
    return outputs
