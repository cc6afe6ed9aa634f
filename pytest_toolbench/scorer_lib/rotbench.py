"""RoTBench's data format and official rules, shared by the suites that read RoTBench data.

Upstream: Junjie-Ye/RoTBench @ 637e43ae9a978036774c92bb2ab11a83609e304b, ``Data/<Turn>/<level>.json`` (the cases) and
``Code/Evaluation/evaluate.py --version 0`` (the scorer). Used by the ``rotbench`` suite (every file) and by the
``tltraining`` suite, which reuses RoTBench's clean First_Turn file (its suite.yaml declares ``data.reuses``) and
judges those cases with RoTBench's rules unchanged.

* reading: :func:`read_cases` (one case per record, ids by position in the file), :data:`DATA_SCHEMA`;
* parsing (official ``get_test_value`` with version 0): :func:`parse_react` (a model answer), :func:`parse_gold`
  and :func:`gold_alternatives` (the gold answers), :func:`tools_from_system_prompt` (the tool list);
* judging: :func:`official_stages` (``ts_eval``, ``pi_eval``, ``cf_eval``) and, for suites that opt into
  TL-Training's categories, :func:`tl_category` (RoTBench's conventions mapped onto
  :mod:`pytest_toolbench.scorer_lib.tl_failures`).

Every upstream quirk is commented where it is implemented.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..contract.data_files import load_json
from ..contract.errors import DataError
from ..contract.suite import Case
from .tl_failures import ANY_VALUE, classify_call, tool_signatures

TURNS: dict[str, str] = {"First_Turn": "first_turn", "Third_Turn": "third_turn"}
LEVELS: tuple[str, ...] = ("clean", "slight", "medium", "heavy", "union")
#: Scenario codes in the order the official ``show_stats`` prints them.
SCENARIOS: dict[str, str] = {
    "TG": "Text Generation", "RS": "Real-Time Search", "DU": "Data Understanding", "PL": "Personal Life",
    "AM": "Application Manipulation", "IR": "Information Retrieval", "FT": "Financial Transactions",
}

_MESSAGE = {
    "type": "object",
    "required": ["from", "value"],
    "properties": {"from": {"enum": ["system", "user", "assistant", "function"]}, "value": {"type": "string"}},
}
DATA_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "scenario", "conversations"],
        "properties": {
            "id": {"type": "string"},
            "scenario": {"enum": list(SCENARIOS)},
            "conversations": {
                "type": "array",
                "minItems": 3,
                "prefixItems": [
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "system"}, "value": {"type": "string", "pattern": r"\["}}},
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "user"}, "value": {"type": "string"}}},
                ],
                # The last message holds the list of acceptable gold answers; the ones between are history.
                "items": {"anyOf": [
                    _MESSAGE,
                    {"type": "object", "required": ["from", "value"],
                     "properties": {"from": {"const": "assistant"},
                                    "value": {"type": "array", "minItems": 1, "items": {"type": "string"}}}},
                ]},
            },
        },
    },
}

# The tool list is the system prompt from its first "[" up to the trailing "\n\nLet's Begin!" (13 characters),
# which is exactly how the official ``get_config`` cuts it.
_TOOLS_SUFFIX_LENGTH = 13


# ----------------------------------------------------------------------------------------------------------------
# Reading the data files


def read_cases(data_dir: Path, turns: Iterable[str], levels: Iterable[str]) -> list[Case]:
    """The cases of the ``<Turn>/<level>.json`` files found in ``data_dir`` (ids ``<turn>-<level>-<position>``,
    category ``<turn>_<level>``, the scenario a keyword); DataError when none of them exists."""
    data_dir = Path(data_dir)
    levels = list(levels)
    cases: list[Case] = []
    found = False
    for turn in turns:
        for level in levels:
            path = data_dir / turn / f"{level}.json"
            if not path.is_file():
                continue
            found = True
            for index, record in enumerate(load_json(path, DATA_SCHEMA)):
                cases.append(_case(path, turn, level, index, record))
    if not found:
        raise DataError(data_dir, "no RoTBench data files (<Turn>/<level>.json) found")
    return cases


def _case(path: Path, turn: str, level: str, index: int, record: Mapping[str, Any]) -> Case:
    conversations = record["conversations"]
    try:
        tools = tools_from_system_prompt(conversations[0]["value"])
    except ValueError as exc:
        raise DataError(path, f"tool list in the system prompt is not JSON ({exc})", field=f"{index}/conversations/0")
    if not isinstance(tools, list) or len(tools) < 2 or not all(isinstance(t, dict) and "name" in t for t in tools):
        raise DataError(path, "tool list must hold at least two tools with names", field=f"{index}/conversations/0")
    gold = conversations[-1]["value"]
    if not isinstance(gold, list):
        raise DataError(path, "the last message must hold the list of gold answers", field=f"{index}/conversations")
    for number, answer in enumerate(gold):
        try:
            _, gold_input = parse_gold(answer)
        except ValueError:
            gold_input = None
        if not isinstance(gold_input, dict):
            raise DataError(path, "gold Action Input is not a JSON object",
                            field=f"{index}/conversations/{len(conversations) - 1}/value/{number}")
    turn_key = TURNS[turn]
    return Case(
        case_id=f"{turn_key}-{level}-{index}",
        category=f"{turn_key}_{level}",
        payload={
            "turn": turn, "level": level, "index": index, "id": record["id"], "scenario": record["scenario"],
            "history": [dict(m) for m in conversations[:-1]], "tools": tools, "gold": list(gold),
        },
        keywords=(turn_key, level, record["scenario"].lower()),
    )


# ----------------------------------------------------------------------------------------------------------------
# Parsing (official ``get_test_value`` with version 0)


def parse_react(text: str) -> tuple[str | None, Any, str | None]:
    """Decode ``text`` the way the official scorer does: ``(action, action_input, failure)``.

    ``failure`` is ``None`` when the official scorer goes on to compare the answer, otherwise the reason the case
    counts as wrong on TS, PI and CF at once.
    """
    action_at = text.find("Action:")
    input_at = text.find("Action Input:")
    # Quirk: fixed offsets. The action starts 8 characters after "Action:" (one space assumed, so "Action:foo"
    # loses its "f") and ends at the first "Action Input:"; a missing marker makes ``find`` return -1, so the
    # slices start at 7 and 13 and stop one character before the end, exactly as upstream slices them.
    action = text[action_at + 8:input_at]
    if not action:
        # Upstream indexes action[-1] and dies with IndexError on the whole file; here it is a scored failure.
        return None, None, "no action between 'Action:' and 'Action Input:'"
    # Quirk: only one trailing newline is removed; no other whitespace is stripped.
    if action[-1] == "\n":
        action = action[:-1]
    # Quirk: everything after "Action Input: " must be one JSON document; trailing text breaks decoding.
    try:
        action_input = json.loads(text[input_at + 14:])
    except (ValueError, RecursionError):
        return action, None, "Action Input is not valid JSON (everything after 'Action Input: ' is decoded)"
    # Quirk: a falsy input ({} for a zero-argument tool, [], 0, null) is dropped before any comparison
    # (``if not test_action_input: continue``), so a correct zero-argument call fails all three stages.
    if isinstance(action_input, str) or not action_input:
        return action, action_input, "Action Input is a string or empty (the official scorer skips the case)"
    if not isinstance(action_input, dict):
        # Upstream crashes on ``.keys()`` of a list or number once the tool matches; counted wrong on all stages.
        return action, action_input, "Action Input is not a JSON object"
    return action, action_input, None


def parse_gold(answer: str) -> tuple[str, Any]:
    """Split one gold alternative with the same slicing the official scorer applies to it."""
    action = answer[answer.find("Action:") + 8:answer.find("Action Input:")]
    if action.endswith("\n"):
        action = action[:-1]
    return action, json.loads(answer[answer.find("Action Input:") + 14:])


def tools_from_system_prompt(system: str) -> list[dict[str, Any]]:
    return json.loads(system[system.find("["):len(system) - _TOOLS_SUFFIX_LENGTH])


def gold_alternatives(answers: Sequence[str]) -> list[tuple[str, Any]]:
    """``(action, action_input)`` of every gold answer of a case (its payload's ``gold``)."""
    return [parse_gold(answer) for answer in answers]


# ----------------------------------------------------------------------------------------------------------------
# Judging


def official_stages(action: str, arguments: Mapping[str, Any], alternatives: Sequence[tuple[str, Any]],
                    tool_names: Sequence[str]) -> tuple[bool, bool, bool]:
    """TS, PI and CF of one decoded answer against the gold alternatives, as ``evaluate.py`` computes them.

    Each stage is its own loop over the alternatives (upstream runs three passes over the file), and a stage holds
    when any alternative satisfies it.
    """
    finish_name, ask_name = tool_names[-1], tool_names[-2]

    def remap_finish(predicted: str, gold_action: str) -> str:
        # The finish pseudo-tool is recognised by position: when the gold tool is the last tool of the list (its
        # name may be perturbed by noise, e.g. "fPnish"), a predicted literal "finish" is renamed to it. The rename
        # sticks for the following alternatives, as upstream reassigns its loop variable.
        return gold_action if gold_action == finish_name and predicted == "finish" else predicted

    ts = False
    predicted = action
    for gold_action, _ in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action == predicted:
            ts = True
            break

    pi = False
    predicted = action
    for gold_action, gold_input in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action != predicted:
            continue
        # Exact key sets, keys whose gold value is "None" included.
        if gold_input.keys() == arguments.keys():
            pi = True
            break

    cf = False
    predicted = action
    remaining = dict(arguments)
    for gold_action, gold_input in alternatives:
        predicted = remap_finish(predicted, gold_action)
        if gold_action != predicted:
            continue
        if gold_input.keys() != remaining.keys():
            continue
        # The value check is waived for finish and ask_to_user, which upstream recognises by position (last and
        # second-to-last tool) and, after renaming, also by the literal names "finish" and "ask_to_user".
        exempt = gold_action in (finish_name, ask_name, "finish", "ask_to_user")
        unchecked = [key for key, value in gold_input.items() if value == "None"]
        expected = {key: value for key, value in gold_input.items() if key not in unchecked}
        # Quirk: upstream deletes the "None" keys from the *prediction* in place, so they stay deleted while the
        # later alternatives are tried (their key-set check then sees the smaller dict).
        for key in unchecked:
            del remaining[key]
        # Python equality, as upstream: 1 == 1.0 == True, but "1" != 1, and string comparison is case-sensitive.
        if expected != remaining and not exempt:
            continue
        cf = True
        break
    return ts, pi, cf


def tl_category(tools: Sequence[Mapping[str, Any]], answers: Sequence[str],
                call: tuple[str, Mapping[str, Any]] | None) -> tuple[str, float]:
    """TL-Training's error category and reward for a failed answer, against the closest gold alternative.

    ``tools`` and ``answers`` are the case's tool list and gold answers (payload ``tools`` and ``gold``), ``call``
    the decoded ``(action, arguments)`` or None. RoTBench's own conventions carry over: a predicted literal
    ``finish`` stands for the last tool, gold values ``"None"`` accept any value, and finish/ask_to_user take any
    values. An answer the official parser rejects (including the empty ``{}``) is ``unparseable``.
    """
    names = [tool["name"] for tool in tools]
    signatures = tool_signatures(tools)
    best = None
    for gold_action, gold_input in gold_alternatives(answers):
        exempt = gold_action in (names[-1], names[-2], "finish", "ask_to_user")
        gold_arguments = {k: (ANY_VALUE if exempt or v == "None" else v) for k, v in gold_input.items()}
        predicted = None
        if call is not None:
            name = gold_action if (call[0] == "finish" and gold_action == names[-1]) else call[0]
            predicted = {"name": name, "arguments": call[1]}
        outcome = classify_call(predicted, {"name": gold_action, "arguments": gold_arguments}, signatures)
        if best is None or outcome.reward > best.reward:
            best = outcome
    assert best is not None
    if best.category == "correct":
        # Only reachable through the official CF quirk that deletes "None" keys from the prediction while trying
        # alternatives: the values are what failed, so the closest TL category is a content mismatch.
        return "content_mismatch", -0.25
    return best.category, best.reward
