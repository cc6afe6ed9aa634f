"""API-Bank's dialogue files (``lv1-lv2-samples/<level>/*.jsonl``) read into cases, one per evaluator sample.

Upstream's unit of evaluation is the *sample* of ``Sample.from_chat_history`` (DAMO-ConvAI @ 483554e
``api-bank/evaluator.py``; the same class in ToLeaP @ b950713 ``scripts/apibank_eval.py``): for each API row *i* of a
dialogue, in file order, it appends the sample (rows ``[:i]`` → row *i*) and the sample (rows ``[:i+1]`` → row
*i+1*). A sample is scored by the role of its target row:

* ``AI`` → the dialogue test (ROUGE-L of the reply): ToLeaP's Table 9 protocol (``api_test_enabled = False``);
* ``API`` → the API-call test (upstream with ``api_test_enabled = True``);
* ``User`` → neither (4 such samples in level 1); they are not collected.

So the items are the samples themselves, with upstream's identity: the dialogue file name (unique across the two
levels) and the sample's index in that list, ``<file>#<index>`` (what ``evaluator_by_json.py`` keys predictions by:
``pred['file']``, ``pred['id']``). QUIRK kept: an API row followed by another API row yields the same
(history → target) pair twice, from both rows, and upstream scores both (level 1: 10 such pairs, level 2: 16).
Counts on the pinned data: level 1 375 dialogue + 399 API samples, level 2 103 + 135.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext

SAMPLES_FOLDER = "lv1-lv2-samples"
#: level folder -> category (categories must be identifiers).
LEVELS = {"level-1-given-desc": "level_1", "level-2-toolsearcher": "level_2"}
#: Sample kinds (``options.samples``): ``dialog`` (target role AI) and ``api_call`` (target role API).
DIALOG = "dialog"
API_CALL = "api_call"
KINDS = {"AI": DIALOG, "API": API_CALL}

DEFAULT_OPTIONS: dict[str, Any] = {
    "levels": list(LEVELS),
    "samples": [DIALOG],
    "prompt": "toleap",
    "description_order": "sorted",
    "dialog_pass_threshold": 0.2,
}

ROW_SCHEMA = {
    "type": "object",
    "required": ["role"],
    "properties": {"role": {"enum": ["User", "AI", "API"]}},
    "allOf": [
        {"if": {"properties": {"role": {"const": "API"}}},
         "then": {"required": ["api_name", "param_dict", "result"],
                  "properties": {"api_name": {"type": "string", "minLength": 1},
                                 "param_dict": {"type": "object"},
                                 "result": {"type": "object", "required": ["input", "output", "exception"]}}},
         "else": {"required": ["text"], "properties": {"text": {"type": "string"}}}},
    ],
}


def options_of(definition: Mapping[str, Any] | None) -> dict[str, Any]:
    """The suite options with their defaults. Their values are checked by the core against the schemas declared in
    suite.yaml before anything loads (a wrong value is one usage error naming the option)."""
    given = dict((definition or {}).get("options") or {})
    return {**DEFAULT_OPTIONS, **given}


def settings(case: Case) -> dict[str, Any]:
    """The suite options a case is asked and scored with: its suite's (``case.context``), with their defaults; the
    defaults alone for a case bound to no context."""
    return options_of(case.context.definition if case.context is not None else None)


def read_dialogue(path: Path) -> list[dict[str, Any]]:
    rows = load_jsonl(path, ROW_SCHEMA)
    if rows and rows[-1]["role"] == "API":
        # Sample.from_chat_history reads row i+1 after every API row: upstream raises IndexError here.
        raise DataError(path, "the last row is an API row (upstream's Sample.from_chat_history needs a row after it)",
                        line=len(rows))
    return rows


def samples_of(rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """``Sample.from_chat_history``: (history length, target row index) per sample, in upstream's order."""
    samples: list[tuple[int, int]] = []
    for i, row in enumerate(rows):
        if row["role"] == "API":
            samples.append((i, i))
            samples.append((i + 1, i + 1))
    return samples


def dialogue_apis(rows: list[dict[str, Any]]) -> list[str]:
    """The API names of a dialogue, each once, in order of first call (upstream keeps them in a ``set``)."""
    names: list[str] = []
    for row in rows:
        if row["role"] == "API" and row["api_name"] not in names:
            names.append(row["api_name"])
    return names


def _keyword(name: str) -> str:
    return re.sub(r"\W", "_", name)


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = options_of(definition)
    cases: list[Case] = []
    for folder in options["levels"]:
        level_dir = data_dir / SAMPLES_FOLDER / folder
        if not level_dir.is_dir():
            raise DataError(level_dir, "level folder not found")
        # Upstream iterates os.listdir (file-system order); sorted here, which changes nothing but the item order.
        files = sorted(p for p in level_dir.iterdir() if p.name.endswith(".jsonl"))
        if not files:
            raise DataError(level_dir, "no .jsonl dialogue file")
        for path in files:
            rows = read_dialogue(path)
            apis = dialogue_apis(rows)
            for sample_id, (history_len, target_index) in enumerate(samples_of(rows)):
                target = rows[target_index]
                kind = KINDS.get(target["role"])
                if kind is None or kind not in options["samples"]:
                    continue
                payload = {
                    "level": folder,
                    "file": path.name,
                    "sample_id": sample_id,
                    "kind": kind,
                    "history": rows[:history_len],
                    "target": target,
                    "apis": apis,
                    "level_files": len(files),
                }
                cases.append(Case(case_id=f"{path.name}#{sample_id}", category=LEVELS[folder],
                                  payload=payload, keywords=(kind,)))
    return context.bind(cases)
