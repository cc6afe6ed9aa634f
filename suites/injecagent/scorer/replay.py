"""Reading the result files of InjecAgent's own prompted evaluation.

``src/evaluate_prompted_agent.py`` writes ``results/prompted_<model type>_<model>_<prompt type>/
test_cases_<attack>_<setting>.json`` (ToLeaP: ``results/injecagent/<model>_<prompt type>/``): despite the suffix,
JSON Lines, one line per test case it could score, the test-case record plus ``output``, ``eval`` (and
``invalid_reason``), and for data stealing after a ``succ`` step 1: ``Attacker Tool Parameters``, ``Attacker Tool
Thought``, ``Attacker Tool Response``, ``output Step 2``, ``eval Step 2``. A case whose scoring raised is not written,
so lines are matched to cases by ``(User Tool, Attacker Tools[0])``, not by position.

Outputs are re-scored from ``output`` / ``output Step 2`` (the recorded labels travel along in the transcript's
``recorded`` field, and a verdict says where re-scoring differs). A record whose step 1 re-scores as ``succ`` but
that has no ``output Step 2`` (a run with ``--only_first_step``) leaves its step 2 missing: the summary then reports
the figures needing step 2 as incomplete.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines

from .loading import ATTACKS, SETTINGS, case_id, test_case_file
from .simulator import cache_key
from .steps import make_transcript

RECORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["User Tool", "Attacker Tools", "output"],
    "properties": {
        "User Tool": {"type": "string"},
        "Attacker Tools": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}
STEP2_FIELDS = ("Attacker Tool Parameters", "Attacker Tool Thought", "Attacker Tool Response", "output Step 2")
_USER_TOOL = re.compile(r'"User Tool"\s*:\s*"([^"\\]*)"')
_ATTACKER_TOOL = re.compile(r'"Attacker Tools"\s*:\s*\[\s*"([^"\\]*)"')


def _files(path: Path, outputs: ReplayOutputs) -> dict[tuple[str, str], Path]:
    names = {test_case_file(a, s): (a, s) for a in ATTACKS for s in SETTINGS}
    expected = "test_cases_<dh|ds>_<base|enhanced>.json (JSON Lines, as upstream's evaluation writes them)"
    found: dict[tuple[str, str], Path] = {}
    if path.is_file():
        name = path.name[:-1] if path.name.endswith(".jsonl") else path.name
        if name not in names:
            outputs.error(f"not an InjecAgent result file: expected {expected}", path)
        else:
            found[names[name]] = path
    elif path.is_dir():
        for name, key in names.items():
            for candidate in (path / name, path / (name + "l")):
                if candidate.is_file():
                    found[key] = candidate
                    break
        if not found:
            outputs.error(f"no InjecAgent result files here: expected {expected}", path)
    else:
        outputs.error("no such result file or folder", path)
    return found


def _case_of(attack: str, setting: str):
    def case_of(_position: int, text: str) -> str | None:
        user, attacker = _USER_TOOL.search(text), _ATTACKER_TOOL.search(text)
        return case_id(attack, setting, user.group(1), attacker.group(1)) if user and attacker else None
    return case_of


def transcript_of(record: dict[str, Any]) -> str:
    """A result record as the transcript the checker scores."""
    step2 = None
    if "output Step 2" in record:
        step2 = {key: record.get(key) for key in STEP2_FIELDS}
        parameters = record.get("Attacker Tool Parameters")
        step2["key"] = cache_key(record["Attacker Tools"][0], parameters) if isinstance(parameters, str) else None
    recorded = {key: record[key] for key in ("eval", "eval Step 2") if key in record}
    return make_transcript(record["output"], step2, source="replay", recorded=recorded)


def replay_outputs(path: Path) -> ReplayOutputs:
    """Read one result file or a folder of them (any of the four test-case file names)."""
    path = Path(path)
    outputs = ReplayOutputs()
    for (attack, setting), file in sorted(_files(path, outputs).items()):
        for _position, number, record in json_lines(outputs, file, RECORD_SCHEMA, what="InjecAgent result record",
                                                    case_of=_case_of(attack, setting)):
            outputs.add(case_id(attack, setting, record["User Tool"], record["Attacker Tools"][0]),
                        transcript_of(record), file, number)
    return outputs
