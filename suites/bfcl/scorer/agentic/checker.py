"""BFCL v4's agentic checker: the final answer of a memory or web-search question against the ground truth.

Follows bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8): ``bfcl_eval/eval_checker/
eval_runner.py::_evaluate_single_agentic_entry`` and ``eval_checker/agentic_eval/agentic_checker.py``.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_toolbench.contract.suite import FORMAT_ERROR, Verdict


def standardize(text: str) -> str:
    """``agentic_checker.standardize_string``: drop ``, . / - _ * ^ ( )``, lowercase, ``'`` -> ``"``; whitespace is
    kept (unlike the single-turn checker's)."""
    return re.sub(r"[\,\.\/\-\_\*\^\(\)]", "", text).lower().replace("'", '"')


def check_agentic(result: Any, ground_truth: list[str], *, decode_step: Any) -> Verdict:
    def fail(error_type: str, message: str, outcome: str, answer: Any = None) -> Verdict:
        return Verdict(passed=False, error_type=error_type, explanation=message, decoded=answer,
                       expected=ground_truth, counts={"correct": 0.0}, labels={"outcome": outcome})

    if type(result) is not list or len(result) != 1:
        return fail("agentic:inference_error", "Error during inference phase. Model did not output a list of model "
                                               "responses (one turn).", FORMAT_ERROR)
    answer = None
    try:
        steps = list(result[0])
    except TypeError:
        return fail("checker_crash", "the official checker raises here (the turn is not a list)", FORMAT_ERROR)
    for step in steps:
        try:
            calls = decode_step(step)
        except Exception:  # noqa: BLE001 - a step that does not decode is a message
            answer = step
            continue
        if len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0):
            answer = step
    if not answer:
        return fail("agentic:no_last_message", "Cannot find the last chat message that is not a function call.",
                    FORMAT_ERROR)
    if type(answer) is list:
        answer = answer[0]
    if type(answer) is not str:
        answer = str(answer)
    standardized = standardize(answer)
    for expected in ground_truth:
        if re.search(rf"\b{re.escape(standardize(expected))}\b", standardized):
            return Verdict(passed=True, explanation=f"found {expected!r} in the final answer", decoded=answer,
                           expected=ground_truth, counts={"correct": 1.0}, labels={"outcome": "pass"})
    shown = answer if len(answer) <= 500 else answer[:500] + "..."
    return fail("agentic:answer_not_found", f"None of the expected answers were found in the model response.\n"
                                            f"answer: {shown!r}\nexpected one of: {ground_truth!r}", "wrong", answer)
