"""BFCL's multi-turn checker, rule for rule (bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8:
``bfcl_eval/eval_checker/eval_runner.py::_evaluate_single_multi_turn_entry`` and
``eval_checker/multi_turn_eval/multi_turn_checker.py::multi_turn_checker``).

1. A ``result`` that is not a list: ``multi_turn:inference_error``.
2. A turn count other than the ground truth's (the loop force-quit): ``multi_turn:force_terminated``.
3. Every step is decoded again (prompting text or FC calls); steps that do not decode or decode to no call are
   dropped.
4. Turn by turn, on fresh model and ground-truth instances kept across turns: the model's steps run (their results
   accumulate over all turns so far), the ground-truth calls run; a turn with ground truth but no model step is
   ``multi_turn:empty_turn_model_response``; a turn without ground truth is not checked (the model's calls still
   change the state later turns see); the state check compares every public attribute of each ground-truth instance
   with ``!=`` (``multi_turn:instance_state_mismatch``); the response check needs every ground-truth result of the
   turn in the accumulated model results, as a multiset (``multi_turn:execution_response_mismatch``).
5. All or nothing: the entry passes only if every turn does. Per-turn results are not official credit (gorilla
   #920); they are kept in ``details["turns"]`` for diagnosis only.

Where upstream would crash instead of answering (a turn that is not a list, an absurd step), the entry fails with
``checker_crash``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from pytest_toolbench.contract.suite import FORMAT_ERROR, Verdict
from .executor import MODEL_NAME, execute_calls, is_empty_step
from .simulators import new_instances

CHECKER_CRASH = "checker_crash"


def _short(value: Any, limit: int = 300) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - repr of a huge int, a broken object
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _fail(error_type: str, message: str, outcome: str, details: dict | None = None, expected: Any = None,
          decoded: Any = None) -> Verdict:
    return Verdict(passed=False, error_type=error_type, explanation=message, decoded=decoded, expected=expected,
                   counts={"correct": 0.0}, labels={"outcome": outcome}, details=details or {})


def decode_steps(result: list, decode_step: Callable[[Any], list[str]]) -> list[list[list[str]]]:
    """Every turn's steps that decode to at least one call (upstream skips the others silently)."""
    decoded = []
    for turn in result:
        steps = []
        for step in turn:
            try:
                calls = decode_step(step)
            except Exception:  # noqa: BLE001 - upstream ignores any decoding failure
                continue
            if not is_empty_step(calls):
                steps.append(calls)
        decoded.append(steps)
    return decoded


def check_multi_turn(payload: Mapping[str, Any], result: Any, *, decode_step: Callable[[Any], list[str]],
                     category: str, wheel_near: list[str]) -> Verdict:
    """The official multi-turn check of one entry (``payload``) against the model's ``result``; ``wheel_near``: the
    folders beside which the simulator wheel is looked for first (the suite's data folder)."""
    ground_truth: list[list[str]] = payload["ground_truth"]
    if type(result) is not list:
        return _fail("multi_turn:inference_error",
                     "Error during inference phase. Model did not output a list of model responses. "
                     f"Got: {_short(result)}", FORMAT_ERROR, expected=ground_truth)
    if len(result) != len(ground_truth):
        return _fail("multi_turn:force_terminated",
                     f"Model was force-terminated during inference phase. The length of the model result turns "
                     f"({len(result)}) does not match the length of the ground truth turns ({len(ground_truth)}).",
                     "wrong", expected=ground_truth)
    try:
        decoded = decode_steps(result, decode_step)
    except TypeError as error:  # a turn that is not iterable: upstream raises here
        return _fail(CHECKER_CRASH, f"the official checker raises here ({error})", FORMAT_ERROR)
    outcome = "wrong" if any(decoded) else FORMAT_ERROR
    model = new_instances(payload["involved_classes"], payload["initial_config"], category, wheel_near)
    reference = new_instances(payload["involved_classes"], payload["initial_config"], category, wheel_near)
    entry_id = payload["id"]
    model_results: list[str] = []
    turns: list[dict[str, Any]] = []
    for index, (steps, expected_calls) in enumerate(zip(decoded, ground_truth)):
        turn_results = []
        for calls in steps:
            step_results = execute_calls(calls, model, entry_id=entry_id, model_name=MODEL_NAME + "_eval")
            turn_results.append(step_results)
            model_results.extend(step_results)
        expected_results = execute_calls(expected_calls, reference, entry_id=entry_id,
                                         model_name=MODEL_NAME + "_ground_truth_eval")
        record: dict[str, Any] = {"turn": index, "model_calls": steps, "ground_truth_calls": expected_calls}
        turns.append(record)
        details = {"turns": turns, "failed_turn": {"model_results": [[_short(r) for r in step] for step in turn_results],
                                                   "ground_truth_results": [_short(r) for r in expected_results]}}
        if expected_calls and not steps:
            return _fail("multi_turn:empty_turn_model_response", f"Model response list is empty for turn {index}",
                         outcome, details, ground_truth, decoded)
        if not expected_calls:
            record["checked"] = False
            continue
        for class_name, expected_instance in reference.items():
            differences = {}
            for attribute in vars(expected_instance):
                if attribute.startswith("_"):
                    continue
                got, wanted = getattr(model[class_name], attribute), getattr(expected_instance, attribute)
                if got != wanted:
                    differences[attribute] = {"model": _short(got), "ground_truth": _short(wanted)}
            if differences:
                lines = "\n".join(f"  {name}: expected {diff['ground_truth']}, got {diff['model']}"
                                  for name, diff in differences.items())
                return _fail("multi_turn:instance_state_mismatch",
                             f"Model instance for {class_name} does not match the state with ground truth instance.\n"
                             f"turn {index}, {class_name}:\n{lines}", outcome,
                             dict(details, differences={class_name: differences}), ground_truth, decoded)
        remaining = list(model_results)
        missing = []
        for item in expected_results:
            try:
                remaining.remove(item)
            except ValueError:
                missing.append(item)
        if missing:
            return _fail("multi_turn:execution_response_mismatch",
                         f"Model response execution results so far does not contain all the ground truth response "
                         f"execution results for turn {index}.\nmissing: {_short(missing, 600)}", outcome,
                         dict(details, missing_items=missing), ground_truth, decoded)
        record["checked"] = True
    return Verdict(passed=True, explanation=f"all {len(ground_truth)} turns match", decoded=decoded,
                   expected=ground_truth, counts={"correct": 1.0}, labels={"outcome": "pass"},
                   details={"turns": turns})
