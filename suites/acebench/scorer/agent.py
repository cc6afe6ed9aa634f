"""ACEBench agent categories: end-to-end / process accuracy of a finished run, and the reference run.

A finished run is a JSON transcript ``{"final_state": [{Class: {attr: value}}, ...], "process": [agent call texts]}``
— what ACEBench's generation writes for agent ids (``result`` and ``process``). Scoring follows the official
``agent_eval`` / ``agent_checker`` / ``agent_eval_process`` (chenchen0103/ACEBench @ 56dd66cf, ``eval_main.py``,
``model_eval/checker.py``), quirks included.

Live runs come from ``loop.py`` (the agent loop on the ``sandbox/`` scenario classes), whose transcript adds the
dialogue to these two fields; gold and replayed transcripts are scored the same way.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Verdict

WRONG_NUMBER_OF_CLASS = "wrong number of class"
CLASS_ATTRIBUTES_WRONG = "class attributes wrong"


def _json_roundtrip(value: Any) -> Any:
    # Upstream writes the final state with json.dumps before evaluating it: int keys become strings, tuples lists.
    return json.loads(json.dumps(value, ensure_ascii=False))


def _first_milestone_path(milestones: Any) -> list[str]:
    if isinstance(milestones, list) and milestones and isinstance(milestones[0], list):
        return list(milestones[0])
    return list(milestones) if isinstance(milestones, list) else []


def gold_transcript(case: Case) -> dict[str, Any]:
    """The reference run: the target final state and the (first) milestone path as the executed calls."""
    return {
        "final_state": _json_roundtrip(case.payload["ground_truth"]),
        "process": _first_milestone_path(case.payload["mile_stone"]),
    }


def _class_check(model_entry: Mapping[str, Any], target_entry: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Upstream ``agent_checker``: every model attribute must exist in the target; dict-valued target attributes are
    compared key by key (extra model keys are ignored), others by equality."""
    name = list(target_entry)[0]
    target = list(target_entry.values())[0]
    model = list(model_entry.values())[0]
    errors: list[str] = []
    if not isinstance(model, Mapping) or not isinstance(target, Mapping):
        return False, [f"class({name}) state is not an attribute mapping"]
    for attribute, value in model.items():
        if attribute not in target:
            errors.append(f"class({name}) attributes({attribute}) missing in possible_answer.")
            continue
        expected = target[attribute]
        if isinstance(expected, dict):
            for key, expected_item in expected.items():
                if not isinstance(value, (dict, list, str)) or key not in value:
                    errors.append(f"class({name}) attributes({attribute}) wrong, [expected: {expected}, real: {value}]")
                elif not isinstance(value, dict) or expected_item != value[key]:
                    real = value[key] if isinstance(value, dict) else value
                    errors.append(f"class({name}) attributes({attribute}.{key}) wrong, [expected: {expected_item}, real: {real}]")
        elif expected != value:
            errors.append(f"class({name}) attributes({attribute}) wrong, [expected: {expected}, real: {value}]")
    return not errors, errors


def end_to_end(final_state: Sequence[Any], target: Any) -> tuple[bool, str, list[str]]:
    targets = target if isinstance(target, list) else [target]
    if len(targets) != len(final_state):
        return False, WRONG_NUMBER_OF_CLASS, [f"expected {len(targets)} classes, got {len(final_state)}"]
    valid = True
    errors: list[str] = []
    previous = (True, [])
    for target_entry in targets:
        keys = set(target_entry)
        matched = next((entry for entry in final_state if isinstance(entry, Mapping) and set(entry) == keys), None)
        if matched is not None:
            previous = _class_check(matched, target_entry)
        # Quirk (upstream issue #25): when no model class has the target's key set, the previous comparison's
        # result is silently reused (a first unmatched class therefore counts as correct).
        if not previous[0]:
            valid = False
            errors.extend(previous[1])
    return valid, "" if valid else CLASS_ATTRIBUTES_WRONG, errors


def _subsequence_ratio(process: Sequence[str], milestones: Sequence[str]) -> float:
    # Milestones must appear in order among the executed call texts; exact string equality after strip().
    if not milestones:
        return 1.0
    index = 0
    found = 0
    for stone in milestones:
        while index < len(process):
            hit = process[index].strip() == str(stone).strip()
            index += 1
            if hit:
                found += 1
                break
    return found / len(milestones)


def process_accuracy(process: Sequence[str], milestones: Any) -> float:
    if isinstance(milestones, list) and milestones and isinstance(milestones[0], list):
        # Upstream keeps the best alternative, rounded to 3 decimals.
        return max(round(_subsequence_ratio(process, path), 3) for path in milestones)
    return _subsequence_ratio(process, milestones if isinstance(milestones, list) else [])


def score_transcript(case: Case, text: str) -> Verdict:
    try:
        transcript = json.loads(text)
    except (TypeError, ValueError):
        transcript = None
    if not isinstance(transcript, dict) or not isinstance(transcript.get("final_state"), list):
        return Verdict(
            passed=False,
            error_type=FORMAT_ERROR,
            explanation="agent output is not a run transcript {final_state: [...], process: [...]}",
            counts={"end_to_end": 0.0, "process": 0.0},
        )
    final_state = _json_roundtrip(transcript["final_state"])
    process = [str(step) for step in transcript.get("process") or []]
    target = case.payload["ground_truth"]
    passed, error_type, errors = end_to_end(final_state, target)
    process_score = 1.0 if passed else process_accuracy(process, case.payload["mile_stone"])
    return Verdict(
        passed=passed,
        error_type=None if passed else error_type,
        explanation="final state equals the target" if passed else f"{error_type}: " + "; ".join(errors[:10]),
        decoded={"final_state": final_state, "process": process},
        expected={"final_state": target, "mile_stone": case.payload["mile_stone"]},
        counts={"end_to_end": 1.0 if passed else 0.0, "process": process_score},
    )
