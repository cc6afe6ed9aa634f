"""ACEBench's Normal and Special checkers, re-implemented rule for rule from the official evaluation
(chenchen0103/ACEBench @ 56dd66cf, ``model_eval/checker.py``, ``model_eval/utils.py``, ``eval_main.py``).

The official checker is lenient and surprising in many places; every such place is kept and marked "Quirk".
Each check returns a :class:`CheckResult` with the official ``error_type`` label; the rules for one call against one
ground-truth call (``simple_function_checker``) are ``call_check.py``. Where the official code would
raise on a malformed ground truth or function document (it then aborts the whole run), this port fails the item
with ``checker_exception`` instead of raising.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.tl_failures import CORRECT, REWARDS
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .agent import score_transcript
from .call_check import (CHECKER_EXCEPTION, ERROR_CORRECTION, ERROR_DETECTION, FUNCTION_MISMATCH, UNCLEAR_FUNCTION,
                         WRONG_FUNCTIONS_NUMBER, WRONG_OUTPUT_FORMAT, CheckerCrash, CheckResult, simple_function_check)
from .decoding import DecodeError, decode_calls, prepare_multi_turn, prepare_single_turn
from .loading import REPEAT_SUFFIX, find_function_doc, is_agent
from .tl import single_call_alternatives, tl_category


def normal_check(docs: Any, calls: Sequence[Mapping[str, Any]], answer: Mapping[str, Any], agent: bool = False) -> CheckResult:
    """Upstream ``normal_checker`` for one ground-truth alternative."""
    if len(calls) != len(answer):
        return CheckResult(False, WRONG_FUNCTIONS_NUMBER, "The number of functions does not match the answer.")
    answer_keys = list(answer)
    # Quirk: a trailing _<digits> is stripped from every ground-truth name, also from a real name ending so.
    answer_calls = [{REPEAT_SUFFIX.sub("", key): value} for key, value in answer.items()]
    output_names = Counter(name for call in calls for name in call)
    answer_names = Counter(name for call in answer_calls for name in call)
    for name in output_names:
        if name not in answer_names:
            return CheckResult(False, FUNCTION_MISMATCH, f"extra function detected: {name} is not in the ground truth")
    for name in answer_names:
        if name not in output_names:
            return CheckResult(False, FUNCTION_MISMATCH, f"function {name} of the ground truth is missing")
    for name, count in output_names.items():
        if count != answer_names[name]:
            return CheckResult(
                False, FUNCTION_MISMATCH, f"incorrect count for function {name}: [expected: {answer_names[name]}, actual: {count}]"
            )
    result = CheckResult(True)
    for index, answer_call in enumerate(answer_calls):
        doc = find_function_doc(docs, answer_keys[index])
        answer_name = list(answer_call)[0]
        for call in calls:
            if list(call)[0] == answer_name:
                if doc is None:
                    raise CheckerCrash(f"no function document for {answer_keys[index]}")
                result = simple_function_check(doc, call, answer_call, agent)
                if result.valid:
                    break
            else:
                # Quirk: a later call with another name overwrites the real error with this unclear label.
                # Matched output calls are not consumed: one call may satisfy two identical ground-truth calls.
                result = CheckResult(False, UNCLEAR_FUNCTION, "wrong_function")
        if not result.valid:
            return result
    return result


@dataclass
class NormalVerdict:
    valid: bool
    error_type: str
    error: str
    decoded: Any
    prepared: str


def check_normal_output(text: str, docs: Any, ground_truth: Any, multi_turn: bool) -> NormalVerdict:
    """Decode one raw output and check it against the ground truth (a dict, or a list of alternative dicts)."""
    prepared = prepare_multi_turn(text) if multi_turn else prepare_single_turn(text)
    try:
        calls = decode_calls(prepared)
    except DecodeError as exc:
        return NormalVerdict(False, WRONG_OUTPUT_FORMAT, str(exc), None, prepared)
    alternatives = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    first_error: CheckResult | None = None
    for alternative in alternatives:
        try:
            if not isinstance(alternative, Mapping):
                raise CheckerCrash("ground truth alternative is not a dict")
            result = normal_check(docs, calls, alternative)
        except CheckerCrash as exc:
            result = CheckResult(False, CHECKER_EXCEPTION, f"the official checker raises here: {exc}")
        except Exception as exc:  # model values the official code would also choke on (e.g. unorderable keys)
            result = CheckResult(False, CHECKER_EXCEPTION, f"the official checker raises here: {type(exc).__name__}: {exc}")
        if result.valid:
            return NormalVerdict(True, "", "", calls, prepared)
        if first_error is None:
            first_error = result
    assert first_error is not None or not alternatives
    if first_error is None:
        return NormalVerdict(False, CHECKER_EXCEPTION, "empty ground truth", calls, prepared)
    return NormalVerdict(False, first_error.error_type, first_error.error, calls, prepared)


# The marker phrases are English in both languages (the Chinese prompt asks for the same English sentences).
INCOMPLETE_PHRASE = "Missing necessary parameters"
ERROR_PARAM_PHRASE = "There is incorrect value"
IRRELEVANT_PHRASE = "the limitations of the function"


def check_special_output(text: str, category: str, ground_truth: Any) -> CheckResult:
    """Upstream ``special_eval``: case-sensitive substring tests on the raw output."""
    if not isinstance(text, str):
        text = str(text)
    if "incomplete" in category:
        result = CheckResult(True)
        if not isinstance(ground_truth, Mapping):
            return CheckResult(False, CHECKER_EXCEPTION, "incomplete ground truth is not a dict")
        for api_name, missing in ground_truth.items():
            if INCOMPLETE_PHRASE not in text:
                result = CheckResult(False, ERROR_DETECTION, f"missing parameters {missing} of {api_name} not pointed out")
            elif api_name not in text:
                result = CheckResult(False, ERROR_CORRECTION, f"api name {api_name} not named")
            else:
                for parameter in missing:
                    if parameter not in text:
                        result = CheckResult(False, ERROR_CORRECTION, f"missing parameter {parameter} of {api_name} not named")
        return result
    if "error" in category:
        result = CheckResult(True)
        if not isinstance(ground_truth, Mapping):
            return CheckResult(False, CHECKER_EXCEPTION, "error_param ground truth is not a dict")
        # Quirk: only the wrong values are looked for; the parameter name is never checked.
        for parameter, values in ground_truth.items():
            if ERROR_PARAM_PHRASE not in text:
                result = CheckResult(False, ERROR_DETECTION, f"incorrect values {values} of {parameter} not pointed out")
            else:
                for value in values:
                    if value not in text:
                        result = CheckResult(False, ERROR_CORRECTION, f"incorrect value {value} of {parameter} not named")
        return result
    if IRRELEVANT_PHRASE not in text:
        return CheckResult(False, ERROR_DETECTION, "the model did not decline the out-of-scope request")
    return CheckResult(True)


# ----------------------------------------------------------------------------------------------------------------
# The verdict of one case (agent cases: ``agent.py``)


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, (str, int, float, bool)) or k is None else k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    return repr(value)


def score(case: Case, generation: Generation) -> Verdict:
    if is_agent(case):
        return score_transcript(case, generation.text)
    text = generation.text if isinstance(generation.text, str) else ""
    ground_truth = case.payload["ground_truth"]
    if case.category.startswith("special"):
        result = check_special_output(text, case.category, ground_truth)
        return Verdict(
            passed=result.valid,
            error_type=None if result.valid else result.error_type,
            explanation="phrase check passed" if result.valid else f"{result.error_type}: {result.error}",
            decoded=text,
            expected=_json_safe(ground_truth),
            counts={"correct": 1.0 if result.valid else 0.0},
        )
    multi_turn = case.category.startswith("normal_multi_turn")
    verdict = check_normal_output(text, case.payload["function"], ground_truth, multi_turn)
    error_type = None
    if not verdict.valid:
        error_type = FORMAT_ERROR if verdict.error_type == WRONG_OUTPUT_FORMAT else verdict.error_type
    how = "whitespace removed, whole text decoded" if multi_turn else "first balanced [...] decoded"
    explanation = (
        f"valid ({how})"
        if verdict.valid
        else f"{verdict.error_type} ({how}): {verdict.error}\ndecoded: {verdict.decoded!r}\nexpected: {ground_truth!r}"
    )
    counts = {"correct": 1.0 if verdict.valid else 0.0}
    labels = {}
    alternatives = single_call_alternatives(ground_truth) if tl_failures.enabled(case) else None
    if alternatives is not None:
        # TL-Training's categories (opted into by suite.yaml: libraries: [tl_failures]) on single-call cases (tl.py);
        # passed ones carry the +1 reward so that the mean reward is taken over exactly the cases in scope.
        if verdict.valid:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            decoded = None if verdict.error_type == WRONG_OUTPUT_FORMAT else verdict.decoded
            labels["tl_category"], counts["tl_reward"] = tl_category(case.payload["function"], decoded, alternatives)
    return Verdict(
        passed=verdict.valid,
        error_type=error_type,
        explanation=explanation,
        decoded=_json_safe(verdict.decoded),
        expected=_json_safe(ground_truth),
        counts=counts,
        labels=labels,
        details={"official_error_type": verdict.error_type} if not verdict.valid else {},
    )
