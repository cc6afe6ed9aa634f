"""Reading ACEBench's own result files: ``result_<lang>/data_<category>_result.json`` (JSON lines ``{"id",
"result"}``, agent files also carry ``process``), as written by its generation script."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...data import load_jsonl
from ...errors import DataError
from .loading import ALL_CATEGORIES, LANGUAGES, case_id_for

_RESULT_SCHEMA = {
    "type": "object",
    "required": ["id", "result"],
    "properties": {"id": {"type": "string", "minLength": 1}, "result": {}, "process": {"type": "array"}},
}
_FILE_PATTERN = re.compile(r"^data_(?P<category>[a-z_]+)_result\.json$")


def _language_of(path: Path) -> str | None:
    for part in reversed(path.parts):
        for language in LANGUAGES:
            if part == f"result_{language}" or part == f"data_{language}" or part == language:
                return language
    return None


def _result_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise DataError(root, "no such result file or folder")
    return sorted(p for p in root.rglob("data_*_result.json") if p.is_file())


def replay_outputs(path: Path) -> dict[str, str]:
    """{case id: raw output}. The language comes from the enclosing ``result_<lang>`` folder. Agent results (the
    final class states plus the executed call strings) become the JSON transcript the agent scorer reads."""
    outputs: dict[str, str] = {}
    for file in _result_files(Path(path)):
        match = _FILE_PATTERN.match(file.name)
        if not match or match.group("category") not in ALL_CATEGORIES:
            continue
        language = _language_of(file.parent)
        if language is None:
            raise DataError(file, "cannot tell the language: expected the file under a result_en/ or result_zh/ folder")
        for record in load_jsonl(file, _RESULT_SCHEMA):
            case_id = case_id_for(language, record["id"])
            result = record["result"]
            if match.group("category").startswith("agent"):
                transcript = {"final_state": result, "process": record.get("process", [])}
                outputs[case_id] = json.dumps(transcript, ensure_ascii=False)
            else:
                outputs[case_id] = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        # Normal/special results that are not strings (the FC path stores a list) are kept as JSON text.
    return outputs
