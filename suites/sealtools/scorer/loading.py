"""SealTools' evaluation files (``dataset_for_finetune/<split>.json``) read into cases: one case per sample.

The evaluation format is the one both harnesses read: Seal-Tools' ``LLM_Eval.ToolLearning_eval`` loads
``./data/ToolLearning_eval/<split>.json`` and ToLeaP's ``sealtools.sh`` copies ``Seal-Tools_Dataset/
dataset_for_finetune/*`` into ``data/sealtools/`` (fairyshine/Seal-Tools @ ce753ecd, thunlp/ToLeaP @ b9507131).
Each sample is ``{"id": "<split>-easy|difficult-<n>", "conversations": [{"from": "human", "value": prompt},
{"from": "gpt", "value": gold}]}``; the gold is a *Python literal* list of ``{"api", "parameters", "responses"}``.
The other two formats of the same samples (``<split>.jsonl`` with ``query``/``calling`` and
``dataset_in_old_format``) are read by neither harness, so they are not read here.

Gold: upstream ``calculate_score_ToolLearning`` turns the text into data with
``json.loads(json.dumps(eval(text)))``. Here the text is read with :func:`ast.literal_eval` (literals only, nothing
is executed) and then round-tripped through JSON the same way (tuples become lists, non-string keys strings). On
the 2,054 evaluation samples ``literal_eval`` and ``eval`` give equal values (checked once; see README).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import load_json, validate
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext

UPSTREAM_REPO = "fairyshine/Seal-Tools"
UPSTREAM_COMMIT = "ce753ecd60ed08dd376984035de531ab8421f1c6"
TOLEAP_REPO = "thunlp/ToLeaP"
TOLEAP_COMMIT = "b95071311ff9a888303f819282e4d0872ce4c3fa"

#: The three evaluation splits, in the order of ToLeaP's Table 4 groups (G1/G2/G3 as the spec reads them).
SPLITS = ("dev", "test_in_domain", "test_out_domain")
DIFFICULTIES = ("easy", "difficult")
FOLDER = "dataset_for_finetune"

#: Scoring protocols (suite option ``protocol``): ToLeaP's port (default) and the Seal-Tools original.
PROTOCOL_TOLEAP = "toleap"
PROTOCOL_UPSTREAM = "upstream"
PROTOCOLS = (PROTOCOL_TOLEAP, PROTOCOL_UPSTREAM)

#: Number of easy samples at the head of each upstream split file (ids number the samples by position, easy ones
#: first). Only the replay of ToLeaP's positional result arrays needs it; it is checked against the data in tests.
UPSTREAM_EASY_COUNTS = {"dev": 200, "test_in_domain": 200, "test_out_domain": 94}
UPSTREAM_SIZES = {"dev": 700, "test_in_domain": 700, "test_out_domain": 654}

ID_PATTERN = re.compile(r"^(dev|test_in_domain|test_out_domain)-(easy|difficult)-(\d+)$")
#: A parameter value that names another call's output (``API_call_3``, ``"API_call_0 response"``): a nested case.
REFERENCE = re.compile(r"API_call_\d+")

SAMPLE_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "conversations"],
        "properties": {
            "id": {"type": "string", "pattern": ID_PATTERN.pattern},
            "conversations": {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "items": {"type": "object", "required": ["from", "value"],
                          "properties": {"from": {"enum": ["human", "gpt"]},
                                         "value": {"type": "string", "minLength": 1}}},
            },
        },
    },
}

GOLD_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["api", "parameters", "responses"],
        "properties": {
            "api": {"type": "string", "minLength": 1},
            "parameters": {"type": "object"},
            "responses": {"type": "array", "items": {"type": "string"}},
        },
    },
}

TOOL_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["api_name", "parameters"],
        "properties": {"api_name": {"type": "string"}, "parameters": {"type": "object"}},
    },
}


def options_of(definition: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """The suite options this loader reads: ``protocol`` and ``splits`` (checked by the core against the schemas in
    suite.yaml before loading, so a typo is one usage error naming the option)."""
    options = (definition or {}).get("options") or {}
    protocol = options.get("protocol", PROTOCOL_TOLEAP)
    splits = options.get("splits", list(SPLITS))
    if isinstance(splits, str):
        splits = [splits]
    return protocol, list(dict.fromkeys(splits))


def protocol_of(case: Case) -> str:
    """The scoring protocol of a case: its suite's option ``protocol`` (``case.context``); the default for a case
    bound to no context."""
    return options_of(case.context.definition if case.context is not None else None)[0]


def parse_gold(text: str) -> Any:
    """Upstream's ``json.loads(json.dumps(eval(text)))`` with a literal-only reader instead of ``eval``."""
    return json.loads(json.dumps(ast.literal_eval(text)))


def tools_from_prompt(prompt: str) -> Any:
    """The ``api_list = [...]`` literal of the prompt (the text up to ``\\ntask_instruction = ``)."""
    _, found, rest = prompt.partition("api_list = ")
    if not found:
        raise ValueError("no 'api_list = ' in the prompt")
    literal, found, _ = rest.rpartition("\ntask_instruction = ")
    if not found:
        raise ValueError("no 'task_instruction = ' after the api_list")
    return json.loads(json.dumps(ast.literal_eval(literal)))


def signatures(tools: list[Mapping[str, Any]], gold: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{api name: parameter names}`` of the offered tools, plus each gold call's own API and parameters (8 gold
    calls of the data name an API that is not in their prompt's api_list; the scorer never looks at the list)."""
    table: dict[str, list[str]] = {tool["api_name"]: list(tool["parameters"]) for tool in tools}
    for call in gold:
        known = table.setdefault(call["api"], [])
        known.extend(name for name in call["parameters"] if name not in known)
    return table


def is_nested(gold: list[Mapping[str, Any]]) -> bool:
    """A gold parameter value refers to another call's output (``API_call_<k>``, as a string)."""
    return any(isinstance(value, str) and REFERENCE.search(value)
               for call in gold for value in call["parameters"].values())


def _case(path: Path, split: str, index: int, record: Mapping[str, Any]) -> Case:
    case_id = record["id"]
    match = ID_PATTERN.match(case_id)
    assert match is not None  # the schema checked the pattern
    if match.group(1) != split:
        raise DataError(path, f"sample {case_id!r} is not of split {split!r}", line=index, field=f"{index}/id")
    difficulty = match.group(2)
    if [turn["from"] for turn in record["conversations"]] != ["human", "gpt"]:
        raise DataError(path, "conversations must be one human turn (the prompt) then one gpt turn (the gold)",
                        line=index, field=f"{index}/conversations")
    prompt, gold_text = record["conversations"][0]["value"], record["conversations"][1]["value"]
    try:
        gold = parse_gold(gold_text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise DataError(path, f"gold is not a Python literal that JSON can hold ({type(exc).__name__}: {exc})",
                        line=index, field=f"{index}/conversations/1/value") from None
    try:
        tools = tools_from_prompt(prompt)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise DataError(path, f"api_list of the prompt is not a Python literal ({type(exc).__name__}: {exc})",
                        line=index, field=f"{index}/conversations/0/value") from None
    validate(gold, GOLD_SCHEMA, path, line=index)
    validate(tools, TOOL_SCHEMA, path, line=index)
    nested = is_nested(gold)
    payload = {
        "split": split,
        "difficulty": difficulty,
        "position": index,
        "prompt": prompt,
        "gold_text": gold_text,
        "gold": gold,
        "signatures": signatures(tools, gold),
        "nested": nested,
    }
    keywords = (split, difficulty) + (("nested",) if nested else ())
    return Case(case_id=case_id, category=f"{split}_{difficulty}", payload=payload, keywords=keywords)


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    protocol, splits = options_of(definition)
    cases: list[Case] = []
    seen: set[str] = set()
    found = False
    for split in splits:
        path = data_dir / FOLDER / f"{split}.json"
        if not path.is_file():
            continue
        found = True
        for index, record in enumerate(load_json(path, SAMPLE_SCHEMA)):
            case = _case(path, split, index, record)
            if case.case_id in seen:
                raise DataError(path, f"duplicate id {case.case_id!r}", line=index, field=f"{index}/id")
            seen.add(case.case_id)
            cases.append(case)
    if not found:
        raise DataError(data_dir, f"no SealTools evaluation file ({FOLDER}/<split>.json) for splits {splits}")
    return context.bind(cases)
