"""Reading the prediction files JARVIS's TaskBench inference writes.

``taskbench/inference.py`` (microsoft/JARVIS @ c62e0fa) appends one JSON line per request it could parse to
``<data_dir>/predictions[_use_demos_N][_reformat_by_X]/<llm>.json``, ``data_dir`` being ``data_<domain>``: the
``user_requests.json`` record plus ``result``, the parsed result dict (a request whose output could not be parsed is
not written, and evaluate.py leaves it out). Each line is matched to its case by ``id``; the n-th line of an id goes
to the id's n-th occurrence in data.json (``<domain>-<id>-<n>``), so the ids data.json repeats meet both their cases.
A further repeat matches no case and is reported (evaluate.py would keep the last line of an id).

The ``result`` is handed to the scorer already parsed (``decoding.PARSED_RESULT``): under the upstream protocol it is
read as evaluate.py reads it, under ToLeaP's its JSON text goes through ToLeaP's parser (the same dict).

What can be given: one predictions file (its domain from the ``data_<domain>`` folder it is in), a
``data_<domain>/predictions*`` folder holding one ``.json`` file, or a folder with ``data_<domain>/predictions*/``
folders, one ``.json`` file each. ToLeaP's own result files (``results/taskbench/<model>_<domain>_results.json``, a
JSON array of raw outputs) are not read: they carry no ids, only the position of each row in the unpinned HF
dataset, whose order is not known to match data.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id

from .decoding import PARSED_RESULT
from .loading import DOMAINS, case_id

PREDICTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "result"],
    "properties": {"id": {"type": "string", "minLength": 1}},
}


def _domain_of(path: Path) -> str | None:
    for folder in [path, *path.parents]:
        name = folder.name
        if name.startswith("data_") and name[len("data_"):] in DOMAINS:
            return name[len("data_"):]
    return None


def _prediction_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.is_file())


def _files(path: Path, outputs: ReplayOutputs) -> dict[str, Path]:
    expected = "data_<domain>/predictions*/<llm>.json, as inference.py writes it"
    found: dict[str, Path] = {}
    if path.is_file():
        domain = _domain_of(path.parent)
        if domain is None:
            outputs.error(f"cannot tell the domain of this predictions file: expected {expected}", path)
        else:
            found[domain] = path
        return found
    if not path.is_dir():
        outputs.error("no such predictions file or folder", path)
        return found
    domain = _domain_of(path)
    if domain is not None and path.name.startswith("predictions"):
        folders = {domain: [path]}
    else:
        roots = [path] if domain is not None else [path / f"data_{d}" for d in DOMAINS]
        folders = {}
        for root in roots:
            d = _domain_of(root)
            if d is not None and root.is_dir():
                folders[d] = sorted(p for p in root.glob("predictions*") if p.is_dir())
    for d, candidates in folders.items():
        files = [f for folder in candidates for f in _prediction_files(folder)]
        if len(files) == 1:
            found[d] = files[0]
        elif len(files) > 1:
            outputs.error(f"{len(files)} prediction files for {d} ({', '.join(str(f) for f in files[:4])}): "
                          "give the one to replay", path)
    if not found and not outputs.problems:
        outputs.error(f"no TaskBench predictions here: expected {expected}", path)
    return found


def replay_outputs(path: Path) -> ReplayOutputs:
    """``{case id: PARSED_RESULT + json.dumps(result)}`` from inference.py's predictions files. Tolerant: a bad line
    is one problem naming file and line (its case fails when its id can be read), the other lines still count."""
    outputs = ReplayOutputs(duplicates="the first one counts")
    for domain, file in sorted(_files(Path(path), outputs).items()):
        seen: dict[str, int] = {}

        def case_of(_position: int, text: str, domain: str = domain, seen: dict[str, int] = seen) -> str | None:
            found = leading_id(text)
            if not isinstance(found, str):
                return None
            seen[found] = seen.get(found, 0) + 1
            return case_id(domain, found, seen[found])

        for _, number, record in json_lines(outputs, file, PREDICTION_SCHEMA, what="TaskBench prediction",
                                            case_of=case_of):
            item_id = record["id"]
            seen[item_id] = seen.get(item_id, 0) + 1
            try:
                text = PARSED_RESULT + json.dumps(record["result"], ensure_ascii=False)
            except (ValueError, RecursionError) as error:
                outputs.bad_line(file, number, f"result cannot be turned into text ({type(error).__name__})",
                                 case_id(domain, item_id, seen[item_id]))
                continue
            outputs.add(case_id(domain, item_id, seen[item_id]), text, file, number)
    return outputs
