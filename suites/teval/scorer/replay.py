"""Reading the prediction files T-Eval's own inference writes.

Upstream ``test.py`` (open-compass/T-Eval @ 58f2240) and ToLeaP's ``scripts/teval_eval.py`` (@ b9507131) write, per
data file, ``<out_dir>/<out_name>`` (one JSON object ``{id: entry + "prediction"}``, what the evaluators read) and a
folder ``<out_dir>/<out_name without .json>/`` holding one ``<id>.json`` per entry (the resume cache). The out names
of ``test_all_en.sh`` / ``teval_eval.sh`` are ``<kind>_<model>.json``, the kind telling which data file (and so which
case-id key) the predictions belong to; :data:`OUT_PREFIXES` lists them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, read_bytes

#: out-name prefix -> case-id key (longest prefixes first, so reason_retrieve_understand_json_ is not reason_).
OUT_PREFIXES = {
    "reason_retrieve_understand_json_": "rru_json",
    "understand_str_": "understand_str",
    "retrieve_str_": "retrieve_str",
    "reason_str_": "reason_str",
    "review_str_": "review_str",
    "plan_json_": "plan_json",
    "plan_str_": "plan_str",
    "instruct_": "instruct",
}
EXPECTED = ("<kind>_<model>.json files (or their <kind>_<model>/ folders of <id>.json), kind one of "
            + ", ".join(p.rstrip("_") for p in OUT_PREFIXES) + ", as T-Eval's test.py / ToLeaP's teval_eval.py "
            "write them")


def key_of(name: str) -> str | None:
    for prefix, key in OUT_PREFIXES.items():
        if name.startswith(prefix):
            return key
    return None


def _prediction(entry: Any) -> tuple[str | None, str | None]:
    """(the saved prediction, None) or (None, why it cannot be used)."""
    if not isinstance(entry, dict):
        return None, "the entry is not a JSON object"
    if "prediction" not in entry:
        return None, "the entry has no 'prediction'"
    prediction = entry["prediction"]
    if not isinstance(prediction, str):
        return None, f"'prediction' is {type(prediction).__name__}, not a string"
    return prediction, None


def _read_merged(outputs: ReplayOutputs, file: Path, key: str) -> None:
    data = read_bytes(outputs, file)
    if data is None:
        return
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        outputs.error(f"not a JSON object of predictions ({type(exc).__name__}: {exc})", file)
        return
    if not isinstance(document, dict):
        outputs.error("not a JSON object {id: entry with 'prediction'}", file)
        return
    for entry_id, entry in document.items():
        prediction, problem = _prediction(entry)
        case_id = f"{key}/{entry_id}"
        if problem is not None:
            outputs.bad_line(file, None, f"entry {entry_id!r}: {problem}", case_id)
        else:
            outputs.add(case_id, prediction, file, None)
    outputs.finish_file(file)


def _read_cache_folder(outputs: ReplayOutputs, folder: Path, key: str) -> None:
    for file in sorted(folder.glob("*.json")):
        # upstream's resume takes the id as the file name up to its first dot
        entry_id = file.name.split(".")[0]
        data = read_bytes(outputs, file)
        if data is None:
            continue
        case_id = f"{key}/{entry_id}"
        try:
            entry = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            outputs.bad_line(file, None, f"not JSON ({type(exc).__name__})", case_id)
            continue
        prediction, problem = _prediction(entry)
        if problem is not None:
            outputs.bad_line(file, None, problem, case_id)
        else:
            outputs.add(case_id, prediction, file, None)


def replay_outputs(path: Path) -> ReplayOutputs:
    """``{<key>/<id>: prediction}`` from one prediction file, one cache folder, or a model's output folder holding
    them (merged files preferred; a kind's cache folder is read only when its merged file is absent). Tolerant: a
    bad entry costs its case (named in ``problems``), the rest still count."""
    path = Path(path)
    outputs = ReplayOutputs()
    if path.is_file():
        key = key_of(path.name)
        if key is None:
            outputs.error(f"not a T-Eval prediction file: expected {EXPECTED}", path)
        else:
            _read_merged(outputs, path, key)
        return outputs
    if not path.is_dir():
        outputs.error("no such prediction file or folder", path)
        return outputs
    own_key = key_of(path.name)
    if own_key is not None and not any(p.is_file() and p.suffix == ".json" and key_of(p.name) for p in path.iterdir()):
        _read_cache_folder(outputs, path, own_key)  # the path is one kind's cache folder
        return outputs
    merged_keys: set[str] = set()
    found = False
    for file in sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".json"):
        key = key_of(file.name)
        if key is not None:
            found = True
            merged_keys.add(key)
            _read_merged(outputs, file, key)
    for folder in sorted(p for p in path.iterdir() if p.is_dir()):
        key = key_of(folder.name)
        if key is not None and key not in merged_keys:
            found = True
            _read_cache_folder(outputs, folder, key)
    if not found:
        outputs.error(f"no T-Eval prediction files here: expected {EXPECTED}", path)
    return outputs
