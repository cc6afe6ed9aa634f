"""The offline check of one task's transcript (upstream ``eval_runner.params_checker``) and the verdict.

Upstream: yupeijei1997/WildToolBench @ 80a5f427fb26c9a14eb419ccb565675671650065, ``wild-tool-bench/wtb/eval_runner.py``.
For the ``step_<t>`` entries in order:

* after a step whose arguments failed, the *next* step entry is deleted and the walk stops (only that one entry:
  later entries stay and still count in AP, upstream's quirk; ``action_name_label`` is also set to "correct",
  which changes nothing else);
* a step whose action was wrong ends the walk (upstream reads ``inference_answer`` before this test and so raises
  KeyError on an action-error step that has none, e.g. an empty output; the evident intent, ending the walk, is
  followed here, as in patched copies of eval_runner);
* a clarification or answer step is skipped; otherwise the predicted calls are sorted by (name, arguments JSON text)
  and the gold calls of the matched group by (name, arguments JSON text), paired by position, and each pair checked
  with :class:`.arguments.ArgumentChecker` (every pair of the step is checked; the step fails if one fails).

Task label: ``correct`` iff the action label and the argument label are both correct. ``is_optimal`` is cleared
when the arguments failed. AP counts the ``step_*`` entries left after the walk (``ap_steps``) against the number
of gold nodes of the task in the *other-language* ``answer_list`` (``ap_total``), as ``calc_accuracy`` does.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .arguments import CORRECT, ArgumentChecker, error_path, value_at
from .arguments import category as failure_category
from .loop import EMPTY_OUTPUT, UPSTREAM_RAISES, WRONG_ACTION

#: error_type values (besides format_error) and what they mean.
ERROR_TYPES = {
    "empty_output": "neither tool calls nor text",
    "wrong_action": "the called names (or a text reply) match no candidate group of the step",
    "extra_step": "tool calls after the gold trajectory ended",
    "upstream_raises": "a case where upstream's code raises (its whole dialogue would be lost)",
    "argument_json": "arguments are not JSON",
    "argument_schema": "arguments break the tool schema (error_schema)",
    "argument_match": "arguments differ from the gold ones (error_match)",
    "checker_error": "upstream's checker raises on this call",
    "path_limit": "the gold DAG has more execution orders than the bound allows",
    "data_defect": "the gold data cannot be turned into a DAG or a history",
    "inference_error": "upstream's runner recorded an inference error for the dialogue",
}


def _step_keys(log: Mapping[str, Any]) -> list[str]:
    return [key for key in log if isinstance(key, str) and key.startswith("step_")]


def params_check(result: dict[str, Any], tools: Any) -> dict[str, Any]:
    """Upstream ``params_checker`` on one task result (modified in place, as upstream); returns what was found:
    the argument label, the first failing (step, pair) and the checker's notes."""
    checker = ArgumentChecker()
    arguments_label = "correct"
    failure: dict[str, Any] | None = None
    log = result.get("inference_log")
    if not isinstance(log, dict):
        raise ValueError("inference_log is not an object")
    for key in list(log.keys()):
        if not isinstance(key, str) or not key.startswith("step_"):
            continue
        if arguments_label == "error":
            result["action_name_label"] = "correct"
            del log[key]
            break
        step = log[key]
        output = step["inference_output"]
        if output.get("current_action_name_label") == "error":
            break
        answer = step["inference_answer"]
        candidate = answer["candidate_0_answer_function_list"]
        predicted_calls = output.get("tool_calls") or []
        gold_actions = candidate["action"]
        if gold_actions[0]["name"] in ("prepare_to_answer", "ask_user_for_required_parameters"):
            continue
        if len(predicted_calls) != len(gold_actions):
            raise ValueError(f"{key}: {len(predicted_calls)} calls against {len(gold_actions)} gold calls "
                             "(upstream asserts they are equal)")
        predicted_calls = sorted(predicted_calls, key=lambda c: (c["function"]["name"], c["function"]["arguments"]))
        output["tool_calls"] = predicted_calls
        gold_actions = sorted(gold_actions, key=lambda a: (a["name"], a["arguments"]))
        candidate["action"] = gold_actions
        step_label = "correct"
        results = []
        for index, (call, gold) in enumerate(zip(predicted_calls, gold_actions)):
            name = call["function"]["name"]
            if name != gold["name"]:
                raise ValueError(f"{key}: call {name!r} paired with gold {gold['name']!r} (upstream asserts equal)")
            check = checker.check(tools, name, call["function"]["arguments"], gold["arguments"])
            results.append(check)
            if check != CORRECT:
                step_label = "error"
                arguments_label = "error"
                if failure is None:
                    failure = {"step": key, "name": name, "result": check, "predicted": call["function"]["arguments"],
                               "gold": gold["arguments"], "pair": index}
        output["current_action_arguments_label"] = step_label
        if step_label == "error":
            output["current_action_arguments_check_result"] = results
    if result.get("action_name_label") == "correct":
        result["action_arguments_label"] = arguments_label
        if arguments_label == "error" and result.get("is_optimal") is True:
            result["is_optimal"] = False
    return {"arguments_label": arguments_label, "failure": failure, "notes": sorted(set(checker.approximations))}


# ---------------------------------------------------------------------------------------------------------------
# Verdict


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def _names(calls: Any) -> list[str]:
    try:
        return [c["function"]["name"] for c in calls or []]
    except (TypeError, KeyError):
        return []


def _action_failure(log: Mapping[str, Any]) -> tuple[str, str]:
    """(error_type, explanation) of the step whose action failed."""
    for key in _step_keys(log):
        output = log[key].get("inference_output") or {}
        if output.get("current_action_name_label") != "error":
            continue
        reason = str(output.get("error_reason", "action error"))
        candidates = log[key].get("inference_answer") or {}
        expected = " | ".join(
            "[" + ", ".join(a.get("name", "?") for a in c.get("action", [])) + "]"
            for c in candidates.values() if isinstance(c, dict)) or "none"
        got = _names(output.get("tool_calls"))
        shown = f"called {got}" if got else f"replied {_short(output.get('content'), 120)!r}"
        if reason.startswith("parse tool_calls failed"):
            kind = FORMAT_ERROR
        elif reason == EMPTY_OUTPUT:
            kind = "empty_output"
        elif reason == WRONG_ACTION:
            kind = "wrong_action"
        elif "idx_list is None" in reason:
            kind = "extra_step"
        elif reason.startswith(UPSTREAM_RAISES):
            kind = "upstream_raises"
        elif reason.startswith("PathLimitExceeded"):
            kind = "path_limit"
        else:
            kind = "wrong_action"
        return kind, f"{key}: {reason}; {shown}; expected one of {expected}"
    return "wrong_action", "the task did not reach its answer"


def _argument_explanation(failure: Mapping[str, Any]) -> str:
    result = failure["result"]
    path = error_path(result)
    detail = ""
    if path is not None:
        detail = (f"; argument {path!r}: expected {_short(value_at(failure['gold'], path))}, got "
                  f"{_short(value_at(failure['predicted'], path))}")
    return (f"{failure['step']}, call {failure['name']}: {result}{detail} (predicted {_short(failure['predicted'])}; "
            f"gold {_short(failure['gold'])})")


def _base_counts(payload: Mapping[str, Any]) -> dict[str, float]:
    return {"correct": 0.0, "optimal": 0.0, "ap_steps": 0.0, "ap_total": float(payload["ap_total"]),
            "model_turns": 0.0, "dialogue_tasks": float(payload["dialogue_tasks"])}


def _labels(payload: Mapping[str, Any]) -> dict[str, str]:
    return {"task_type": payload["task_type"], "turn_subtype": payload["turn_subtype"],
            "layer": str(payload["task_idx"])}


def verdict_from_result(case: Case, result: dict[str, Any]) -> Verdict:
    """Score one upstream-format task result (this suite's transcript or a replayed one)."""
    payload = case.payload
    counts, labels = _base_counts(payload), _labels(payload)
    if isinstance(result, dict) and isinstance(result.get("inference_error"), str):
        return Verdict(False, "inference_error", f"upstream's runner recorded: {_short(result['inference_error'])}",
                       counts=counts, labels=labels)
    extra = result.get("wildtoolbench") if isinstance(result.get("wildtoolbench"), dict) else {}
    if extra.get("not_run"):
        why = str(extra["not_run"])
        kind = "path_limit" if why.startswith("PathLimitExceeded") else "data_defect"
        return Verdict(False, kind, f"not run: {why}", counts=counts, labels=labels)
    original = copy.deepcopy(result)
    counts["model_turns"] = float(len(_step_keys(original.get("inference_log") or {})))
    try:
        found = params_check(result, payload["tools"])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        return Verdict(False, FORMAT_ERROR, f"the task result cannot be checked: {type(error).__name__}: {error}",
                       counts=counts, labels=labels, decoded=_short(original, 2000))
    log = result["inference_log"]
    action_ok = result.get("action_name_label") == "correct" and \
        original.get("action_name_label") == "correct"
    arguments_ok = found["arguments_label"] == "correct"
    passed = action_ok and arguments_ok
    counts["correct"] = 1.0 if passed else 0.0
    counts["optimal"] = 1.0 if result.get("is_optimal") is True else 0.0
    counts["ap_steps"] = float(len(_step_keys(log)))
    details: dict[str, Any] = {"action_name_label": original.get("action_name_label"),
                               "action_arguments_label": found["arguments_label"],
                               "is_optimal": bool(result.get("is_optimal")), "min_length": payload.get("min_length")}
    if found["notes"]:
        details["notes"] = found["notes"]
    if passed:
        return Verdict(True, counts=counts, labels=labels, details=details)
    if found["failure"] is not None:
        failure = found["failure"]
        kind = failure_category(failure["result"])
        return Verdict(False, kind, _argument_explanation(failure), counts=counts, labels=labels, details=details,
                       decoded=_short(failure["predicted"], 2000), expected=_short(failure["gold"], 2000))
    kind, explanation = _action_failure(original.get("inference_log") or {})
    return Verdict(False, kind, explanation, counts=counts, labels=labels, details=details)


def score(case: Case, generation: Generation) -> Verdict:
    text = generation.text if isinstance(generation.text, str) else ""
    try:
        result = json.loads(text)
    except (ValueError, RecursionError):
        result = None
    payload = case.payload
    if not isinstance(result, dict) or not isinstance(result.get("inference_log", {}), dict):
        counts, labels = _base_counts(payload), _labels(payload)
        return Verdict(False, FORMAT_ERROR, f"not a task result record: {_short(text)!r}", counts=counts,
                       labels=labels)
    return verdict_from_result(case, result)
