"""RoTBench: tool use under five levels of noise, scored exactly as the official evaluation.

Upstream: Junjie-Ye/RoTBench @ 637e43ae9a978036774c92bb2ab11a83609e304b, ``Data/`` (the cases) and
``Code/Evaluation/evaluate.py --version 0`` (the scorer). Every case of both turns (First_Turn: 840, Third_Turn: 560)
and all five environments (clean, slight, medium, heavy, union) is one item. Upstream ids repeat across files (and
even within one), so a case id is ``<turn>-<level>-<position in the file>``, e.g. ``first_turn-clean-17``; the
category is ``<turn>_<level>`` and the scenario (TG, RS, DU, PL, AM, IR, FT) is a keyword.

The official scorer computes three nested per-case stages, TS (tool selection) ⊇ PI (parameter identification) ⊇
CF (content filling); an item passes when CF holds. Its parsing and matching rules, quirks included, are reproduced
in :func:`parse_react` and :func:`official_stages`; each quirk is commented where it is implemented.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..data import load_json
from ..errors import DataError
from ..replay_files import ReplayOutputs, json_array, json_lines
from ..suite import FORMAT_ERROR, Case, CaseResult, Generation, Metric, Request, Verdict
from ..tl_failures import ANY_VALUE, classify_call, tl_metrics, tool_signatures

SUITE = "rotbench"
TURNS: dict[str, str] = {"First_Turn": "first_turn", "Third_Turn": "third_turn"}
LEVELS: tuple[str, ...] = ("clean", "slight", "medium", "heavy", "union")
#: Scenario codes in the order the official ``show_stats`` prints them.
SCENARIOS: dict[str, str] = {
    "TG": "Text Generation", "RS": "Real-Time Search", "DU": "Data Understanding", "PL": "Personal Life",
    "AM": "Application Manipulation", "IR": "Information Retrieval", "FT": "Financial Transactions",
}

# Error types, in the order of the official stages (toleap.md §2.5); parse failures use the shared FORMAT_ERROR.
NO_OUTPUT = "no_output"
WRONG_TOOL = "wrong_tool"
WRONG_PARAM_NAMES = "wrong_param_names"
WRONG_VALUES = "wrong_values"

# The tool list is the system prompt from its first "[" up to the trailing "\n\nLet's Begin!" (13 characters),
# which is exactly how the official ``get_config`` cuts it.
_TOOLS_SUFFIX_LENGTH = 13

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

# What RoTBench's inference writes (one record per case, in the order of the data file); the official evaluation
# reads the model's answer from the last message of each record.
REPLAY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["conversations"],
    "properties": {"conversations": {"type": "array", "minItems": 1,
                                     "items": {"type": "object", "required": ["value"]}}},
}


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


# ----------------------------------------------------------------------------------------------------------------
# The three stages (official ``ts_eval``, ``pi_eval``, ``cf_eval``)


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


# ----------------------------------------------------------------------------------------------------------------
# Benchmark protocol


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    data_dir = Path(data_dir)
    options = definition.get("options") or {}
    turns = options.get("turns") or list(TURNS)
    levels = options.get("levels") or list(LEVELS)
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
        suite=SUITE,
        case_id=f"{turn_key}-{level}-{index}",
        category=f"{turn_key}_{level}",
        payload={
            "turn": turn, "level": level, "index": index, "id": record["id"], "scenario": record["scenario"],
            "history": [dict(m) for m in conversations[:-1]], "tools": tools, "gold": list(gold),
        },
        keywords=(turn_key, level, record["scenario"].lower()),
    )


def build_request(case: Case) -> Request:
    """System prompt, user query and (Third_Turn) the earlier attempts with their feedback, in chat form.

    Mirrors the ``chat`` mode of RoTBench's ``ChatGPT.parse`` (Code/Inference/inference_new/models.py @ 637e43ae):
    ``from`` becomes ``role``, and a ``function`` message carries the name of the action in the assistant message
    before it. The texts are the data file's own, verbatim. Tools stay in the system prompt (a prompting benchmark),
    so no native tool list is sent.
    """
    messages: list[dict[str, Any]] = []
    history = case.payload["history"]
    for position, message in enumerate(history):
        if message["from"] == "function":
            previous = history[position - 1]["value"] if position else ""
            action, _, _ = parse_react(previous) if isinstance(previous, str) else (None, None, None)
            messages.append({"role": "function", "name": (action or "").strip(), "content": message["value"]})
        else:
            messages.append({"role": message["from"], "content": message["value"]})
    return Request(messages=messages)


def gold_alternatives(case: Case) -> list[tuple[str, Any]]:
    return [parse_gold(answer) for answer in case.payload["gold"]]


def gold_output(case: Case) -> str:
    """The first gold alternative that the official scorer accepts (the first one if none is accepted)."""
    for answer in case.payload["gold"]:
        if score(case, Generation(text=answer)).passed:
            return answer
    return case.payload["gold"][0]


def score(case: Case, generation: Generation) -> Verdict:
    text = generation.text if isinstance(generation.text, str) else ""
    alternatives = gold_alternatives(case)
    tool_names = [tool["name"] for tool in case.payload["tools"]]
    expected = [{"name": name, "arguments": arguments} for name, arguments in alternatives]
    if not text.strip():
        return _failed(case, NO_OUTPUT, "empty output", None, expected, (False, False, False), None)
    action, arguments, failure = parse_react(text)
    decoded = {"name": action, "arguments": arguments}
    if failure is not None:
        return _failed(case, FORMAT_ERROR, failure, decoded, expected, (False, False, False), None)
    stages = official_stages(action, arguments, alternatives, tool_names)
    ts, pi, cf = stages
    if cf:
        return Verdict(passed=True, decoded=decoded, expected=expected, counts=_stage_counts(stages),
                       explanation=f"TS, PI and CF hold for {action}({json.dumps(arguments, ensure_ascii=False)})")
    if not ts:
        error, why = WRONG_TOOL, f"tool {action!r} is none of the gold tools {[a for a, _ in alternatives]}"
    elif not pi:
        error, why = WRONG_PARAM_NAMES, (f"parameter names {sorted(arguments)} differ from every gold key set "
                                         f"{[sorted(g) for a, g in alternatives if a == action]}")
    else:
        error, why = WRONG_VALUES, "parameter values differ from every gold answer (gold \"None\" values unchecked)"
    return _failed(case, error, why, decoded, expected, stages, (action, arguments))


def _stage_counts(stages: tuple[bool, bool, bool]) -> dict[str, float]:
    return {"ts": float(stages[0]), "pi": float(stages[1]), "cf": float(stages[2])}


def _failed(case: Case, error: str, why: str, decoded: Any, expected: Any, stages: tuple[bool, bool, bool],
            call: tuple[str, dict[str, Any]] | None) -> Verdict:
    category, reward = tl_category(case, call)
    counts = _stage_counts(stages)
    counts["tl_reward"] = reward
    return Verdict(passed=False, error_type=error, decoded=decoded, expected=expected, counts=counts,
                   labels={"tl_category": category},
                   explanation=f"{why}; TS={int(stages[0])} PI={int(stages[1])} CF={int(stages[2])}")


def tl_category(case: Case, call: tuple[str, Mapping[str, Any]] | None) -> tuple[str, float]:
    """TL-Training's error category and reward for a failed answer, against the closest gold alternative.

    RoTBench's own conventions carry over: a predicted literal ``finish`` stands for the last tool, gold values
    ``"None"`` accept any value, and finish/ask_to_user take any values. An answer the official parser rejects
    (including the empty ``{}``) is ``unparseable``.
    """
    tools = case.payload["tools"]
    names = [tool["name"] for tool in tools]
    signatures = tool_signatures(tools)
    best = None
    for gold_action, gold_input in gold_alternatives(case):
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


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """Official per-environment TS/PI/CF, per-scenario accuracies, the robustness curve and TL-Training tallies."""
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    metrics: list[Metric] = []
    curves: dict[str, dict[str, float]] = defaultdict(dict)
    ordered = [f"{TURNS[t]}_{lv}" for t in TURNS for lv in LEVELS]
    for category in ordered + sorted(set(by_category) - set(ordered)):
        rows = by_category.get(category, [])
        if not rows:
            continue
        total = len(rows)
        for stage in ("ts", "pi", "cf"):
            correct = sum(r.counts.get(stage, 0.0) for r in rows)
            metrics.append(Metric(name=f"{category} {stage.upper()}", value=correct / total, correct=correct,
                                  total=total, group="category",
                                  formula=f"cases with {stage.upper()} / all cases of the environment file"))
        turn_key, _, level = category.rpartition("_")
        curves[turn_key][level] = sum(r.counts.get("cf", 0.0) for r in rows) / total
        # Upstream divides by N/7 (it assumes seven equal scenario groups), not by the scenario's own count.
        share = total / len(SCENARIOS)
        for code in SCENARIOS:
            chosen = [r for r in rows if code.lower() in r.keywords]
            if not chosen:
                continue
            for stage in ("ts", "pi", "cf"):
                correct = sum(r.counts.get(stage, 0.0) for r in chosen)
                metrics.append(Metric(name=f"{category} {code} {stage.upper()}", value=min(correct / share, 1.0),
                                      correct=correct, total=share, group="scenario",
                                      formula=f"{stage.upper()} count in scenario / (environment cases / 7)"))
    for turn_key, curve in curves.items():
        for level in LEVELS:
            if level in curve:
                metrics.append(Metric(name=f"{turn_key} CF @ {level}", value=curve[level], group="robustness",
                                      formula="CF of the environment, in order of increasing noise"))
    for turn_key, curve in curves.items():
        metrics.append(Metric(name=f"{turn_key} mean CF over environments", value=sum(curve.values()) / len(curve),
                              total=len(curve), group="aggregate",
                              formula="mean of the per-environment CF (ToLeaP's representative metric)"))
    if results:
        passed = sum(1 for r in results if r.passed)
        metrics.append(Metric(name="CF (all items)", value=passed / len(results), correct=passed,
                              total=len(results), group="aggregate", formula="items with CF / all items"))
    metrics.extend(tl_metrics(results))
    return metrics


def replay_outputs(path: Path) -> dict[str, str]:
    """Read RoTBench inference output files: a folder of ``<Turn>/<level>.json`` (the JSON array the evaluation
    reads) or ``<Turn>/<level>.jsonl`` (what the inference appends), or one such file.

    Records are matched to cases by position, as the official evaluation does (a bad record keeps its position, so
    the ones after it still meet their cases). Tolerant: the result is a
    :class:`~pytest_toolbench.replay_files.ReplayOutputs` whose ``problems`` name each unusable record (file and
    line); the rest of the file and the other files still count.
    """
    path = Path(path)
    outputs = ReplayOutputs()
    files: dict[tuple[str, str], Path] = {}
    expected = "<First_Turn|Third_Turn>/<level>.json or .jsonl, level one of " + ", ".join(LEVELS)
    if path.is_file():
        turn, level = path.parent.name, path.stem
        if turn not in TURNS or level not in LEVELS or path.suffix not in (".json", ".jsonl"):
            outputs.error(f"not a RoTBench output file: expected {expected}", path)
            return outputs
        files[(turn, level)] = path
    elif path.is_dir():
        roots = [path] if path.name in TURNS else [path / t for t in TURNS]
        for root in roots:
            for level in LEVELS:
                # Prefer the JSON array: it is the form the official evaluation reads.
                for suffix in (".json", ".jsonl"):
                    candidate = root / f"{level}{suffix}"
                    if candidate.is_file():
                        files[(root.name, level)] = candidate
                        break
        if not files:
            outputs.error(f"no RoTBench output files here: expected {expected}, as RoTBench's inference writes them",
                          path)
    else:
        outputs.error("no such output file or folder", path)
    for (turn, level), file in sorted(files.items()):
        prefix = f"{TURNS[turn]}-{level}"
        read = json_lines if file.suffix == ".jsonl" else json_array
        for index, number, record in read(outputs, file, REPLAY_SCHEMA, what="RoTBench output record",
                                          case_of=lambda position, _text, prefix=prefix: f"{prefix}-{position}"):
            value = record["conversations"][-1].get("value")
            outputs.add(f"{prefix}-{index}", value if isinstance(value, str) else "", file, number)
    return outputs
