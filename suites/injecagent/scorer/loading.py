"""InjecAgent's test-case files read into cases, one per record of ``test_cases_<attack>_<setting>.json``.

Upstream's prompted evaluation (``src/evaluate_prompted_agent.py``) reads exactly two kinds of file: the test cases
of the setting (``data/test_cases_{dh,ds}_{setting}.json``, JSON arrays) and the tool specifications
(``data/tools.json``, 38 toolkits; a tool's name is toolkit + tool, ``get_tool_dict``). ``user_cases.jsonl`` and
``attacker_cases_*.jsonl`` only generated the test cases and are not read.

Upstream records carry no id. A case id is ``<attack>_<setting>-<User Tool>-<first attacker tool>`` (the pair is
unique in every file: 17 user cases x 30 direct-harm / 32 data-stealing attacker cases), which the replay reader can
also build from a result record, as upstream's own result lines are not in one-to-one order with the test file
(a case whose output makes the parser raise is never written).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_json
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext

from .prompt import render_tools

ATTACKS = ("dh", "ds")
SETTINGS = ("base", "enhanced")
TOOLS_FILE = "tools.json"

_TEXT = {"type": "string"}
TEST_CASES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["Attacker Tools", "Attacker Instruction", "Attack Type", "User Tool", "User Instruction",
                     "Tool Parameters", "Thought", "Tool Response"],
        "properties": {
            "Attacker Tools": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
            "Attacker Instruction": _TEXT, "Attack Type": _TEXT, "User Tool": {"type": "string", "minLength": 1},
            "User Instruction": _TEXT, "Tool Parameters": _TEXT, "Thought": _TEXT, "Tool Response": _TEXT,
            "Expected Achievements": _TEXT, "Tool Response Template": _TEXT, "Modifed": {"type": "integer"},
        },
    },
}

TOOLS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["toolkit", "tools"],
        "properties": {
            "toolkit": {"type": "string", "minLength": 1},
            "tools": {"type": "array", "items": {"type": "object", "required": ["name"],
                                                 "properties": {"name": {"type": "string", "minLength": 1}}}},
        },
    },
}

#: The step-2 cache: upstream's ``data/attacker_simulated_responses.json``, ``{"(<tool>,<parameters>)": response}``.
SIMULATED_RESPONSES_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}


def test_case_file(attack: str, setting: str) -> str:
    return f"test_cases_{attack}_{setting}.json"


def case_id(attack: str, setting: str, user_tool: str, attacker_tool: str) -> str:
    return f"{attack}_{setting}-{user_tool}-{attacker_tool}"


def keyword(attack_type: str) -> str:
    """The attack type as a marker: "Physical Harm" -> ``physical_harm`` ("Others" of the data-stealing file ->
    ``others``)."""
    return "_".join(attack_type.lower().split())


def tool_dict(data_dir: Path) -> dict[str, dict[str, Any]]:
    """``get_tool_dict()``: every tool under its full name (toolkit + name); the ``name`` field is rewritten in place,
    so it keeps its position among the keys, as upstream's dict assignment does."""
    tools: dict[str, dict[str, Any]] = {}
    for toolkit in load_json(data_dir / TOOLS_FILE, TOOLS_SCHEMA):
        for tool in toolkit["tools"]:
            full = dict(tool)
            full["name"] = toolkit["toolkit"] + tool["name"]
            tools[full["name"]] = full
    return tools


def _options(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The options with their defaults, settings and attacks as lists in upstream's order. The values were checked
    by the core against the schemas in suite.yaml (one usage error naming the option) before loading."""
    options = dict(definition.get("options") or {})
    for key, allowed in {"settings": SETTINGS, "attacks": ATTACKS}.items():
        value = options.get(key) or list(allowed)
        if isinstance(value, str):
            value = [value]
        options[key] = [v for v in allowed if v in value]
    options["attacker_simulator"] = options.get("attacker_simulator", "cache")
    options["prompt_format"] = options.get("prompt_format", "system_user")
    return options


def simulated_responses_file(data_dir: Path, given: Any) -> Path | None:
    """The cache file named by ``attacker_cache`` (absolute, or relative to the data folder); None when unset."""
    if given in (None, ""):
        return None
    path = Path(str(given)).expanduser()
    return path if path.is_absolute() else Path(data_dir) / path


def read_simulated_responses(path: Path) -> tuple[dict[str, str], str]:
    """The cache (validated) and its sha256."""
    document = load_json(path, SIMULATED_RESPONSES_SCHEMA)
    return document, hashlib.sha256(path.read_bytes()).hexdigest()


def step2_simulator(context: SuiteContext | None) -> dict[str, Any]:
    """What a data-stealing case's step 2 needs to know, from the suite's context (options ``attacker_simulator`` and
    ``attacker_cache``, the data folder): the simulator, and the cache file (read when step 2 first needs it, see
    ``simulator.py``); ``{}`` for a case bound to no context."""
    if context is None:
        return {}
    options = _options(context.definition)
    if options["attacker_simulator"] == "none":
        return {"mode": "none"}
    path = simulated_responses_file(Path(context.data_dir), options.get("attacker_cache"))
    return {"mode": "cache", "given": options.get("attacker_cache"), "file": None if path is None else str(path)}


def simulator_settings(context: SuiteContext) -> dict[str, Any]:
    """:func:`step2_simulator`, with the cache file's digest and size as found at load time (read here, so that a
    malformed file fails the load, once, naming the file)."""
    settings = step2_simulator(context)
    path = Path(settings["file"]) if settings.get("file") else None
    if path is not None and path.is_file():
        entries, digest = read_simulated_responses(path)  # a malformed file fails here, once, naming the file
        settings.update(sha256=digest, entries=len(entries))
    return settings


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = _options(definition)
    tools = tool_dict(data_dir)
    if "ds" in options["attacks"]:
        simulator_settings(context)  # checks the step-2 cache now; a case finds it through its context
    cases: list[Case] = []
    for attack in options["attacks"]:
        for setting in options["settings"]:
            path = data_dir / test_case_file(attack, setting)
            records = load_json(path, TEST_CASES_SCHEMA)
            for index, item in enumerate(records):
                attacker_tools = item["Attacker Tools"]
                if attack == "ds" and len(attacker_tools) < 2:
                    raise DataError(path, "a data-stealing case needs two attacker tools (data tool, sender)",
                                    field=f"{index}/Attacker Tools")
                names = [item["User Tool"], *attacker_tools]
                missing = [name for name in names if name not in tools]
                if missing:
                    raise DataError(path, f"tools {missing} are not in {TOOLS_FILE}", field=f"{index}/User Tool")
                payload: dict[str, Any] = {
                    "attack": attack, "setting": setting, "index": index, "item": item,
                    "tools_text": render_tools([tools[name] for name in names]),
                }
                cases.append(Case(case_id=case_id(attack, setting, item["User Tool"], attacker_tools[0]),
                                  category=f"{attack}_{setting}", payload=payload,
                                  keywords=(keyword(item["Attack Type"]),)))
    return context.bind(cases)


def run_info(context: SuiteContext) -> dict[str, str]:
    """Shown beside the data source: whether upstream's step-2 cache sits at its usual place in the data folder."""
    path = context.data_dir / "attacker_simulated_responses.json"
    if not path.is_file():
        return {"step-2 cache": f"no {path.name} in the data folder: data-stealing step 2 has no simulated "
                                "attacker-tool responses unless options.attacker_cache names a file; S2, DS, Total "
                                "and Valid Rate are then reported as incomplete"}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        size = f"{len(entries)} entries" if isinstance(entries, dict) else "not a JSON object"
    except (OSError, ValueError) as error:
        size = f"unreadable ({error})"
    return {"step-2 cache": f"{path.name} in the data folder: {size}"}
