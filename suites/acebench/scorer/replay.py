"""Reading ACEBench's own result files: ``result_<lang>/data_<category>_result.json`` (JSON lines ``{"id",
"result"}``, agent files also carry ``process``), as written by its generation script."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id
from .loading import ALL_CATEGORIES, LANGUAGES, case_id_for

_RESULT_SCHEMA = {
    "type": "object",
    "required": ["id", "result"],
    "properties": {"result": {}, "process": {"type": "array"}},
}
_FILE_PATTERN = re.compile(r"^data_(?P<category>[a-z_]+)_result\.json$")


def _language_of(path: Path) -> str | None:
    for part in reversed(path.parts):
        for language in LANGUAGES:
            if part == f"result_{language}" or part == f"data_{language}" or part == language:
                return language
    return None


def replay_outputs(path: Path) -> dict[str, str]:
    """{case id: raw output}. The language comes from the enclosing ``result_<lang>`` folder. Agent results (the
    final class states plus the executed call strings) become the JSON transcript the agent scorer reads; normal and
    special results that are not strings (the FC path stores a list) are kept as JSON text.

    Tolerant: the result is a :class:`~pytest_toolbench.contract.replay_files.ReplayOutputs` whose ``problems`` name each
    unusable line (file and line; ids must be non-empty strings, as ACEBench writes them), each file that is not an
    ACEBench result file and each duplicate id (the first one counts; upstream would stop on the length mismatch).
    """
    root = Path(path)
    outputs = ReplayOutputs()
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("data_*_result.json") if p.is_file())
    else:
        outputs.error("no such result file or folder", root)
        return outputs
    read_any = False
    for file in files:
        match = _FILE_PATTERN.match(file.name)
        if not match or match.group("category") not in ALL_CATEGORIES:
            outputs.warning("not an ACEBench result file (data_<category>_result.json with an ACEBench category); "
                            "skipped", file)
            continue
        language = _language_of(file.parent)
        if language is None:
            outputs.error("cannot tell the language: expected the file under a result_en/ or result_zh/ folder; "
                          "skipped", file)
            continue
        read_any = True
        _read_file(outputs, file, language, agent=match.group("category").startswith("agent"))
    if not read_any and not any(p.level == "error" for p in outputs.problems):
        outputs.error("no ACEBench result files here: expected result_<en|zh>/data_<category>_result.json, as "
                      "ACEBench's generation script writes them", root)
    return outputs


def _read_file(outputs: ReplayOutputs, file: Path, language: str, agent: bool) -> None:
    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text)
        return case_id_for(language, found) if isinstance(found, str) and found else None

    for _, number, record in json_lines(outputs, file, _RESULT_SCHEMA, what="ACEBench result record",
                                        case_of=case_of):
        upstream_id = record["id"]
        if not isinstance(upstream_id, str) or not upstream_id:
            outputs.bad_line(file, number, f"id {upstream_id!r} is not an ACEBench id (a non-empty string such as "
                                           "'normal_atom_bool_0'); line skipped")
            continue
        case_id = case_id_for(language, upstream_id)
        result = record["result"]
        try:
            if agent:
                transcript = {"final_state": result, "process": record.get("process", [])}
                text = json.dumps(transcript, ensure_ascii=False)
            else:
                text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        except (RecursionError, ValueError) as exc:
            outputs.bad_line(file, number, f"the result of {upstream_id} cannot be turned into text "
                                           f"({type(exc).__name__})", case_id)
            continue
        outputs.add(case_id, text, file, number)
