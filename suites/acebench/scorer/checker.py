"""ACEBench's Normal and Special checkers, re-implemented rule for rule from the official evaluation
(chenchen0103/ACEBench @ 56dd66cf, ``model_eval/checker.py``, ``model_eval/utils.py``, ``eval_main.py``).

The official checker is lenient and surprising in many places; every such place is kept and marked "Quirk".
Each check returns a :class:`CheckResult` with the official ``error_type`` label. Where the official code would
raise on a malformed ground truth or function document (it then aborts the whole run), this port fails the item
with ``checker_exception`` instead of raising.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.tl_failures import CORRECT, REWARDS
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .agent import score_transcript
from .decoding import DecodeError, decode_calls, prepare_multi_turn, prepare_single_turn
from .loading import REPEAT_SUFFIX, find_function_doc, is_agent
from .tl import single_call_alternatives, tl_category

#: The labels of the official checker (``error_type`` of its score files).
WRONG_OUTPUT_FORMAT = "wrong_output_format"
WRONG_FUNCTIONS_NUMBER = "wrong functions number"
FUNCTION_MISMATCH = "function_mismatch"
WRONG_FUNCTION_NAME = "wrong_function_name"
LACK_ARGS = "lack_args"
ADDITION_ARGS = "addition_args"
TYPE_ERROR = "type_error"
WRONG_PARAM = "wrong_param"
VALUE_ERROR = "value_error"
VALUE_ERROR_STRING = "value_error:string"
VALUE_ERROR_LIST = "value_error:list/tuple"
VALUE_ERROR_LIST_DICT_COUNT = "value_error:list_dict_count"
UNCLEAR_FUNCTION = "simple_function_checker:unclear"
ERROR_DETECTION = "error_detection"
ERROR_CORRECTION = "error_correction"
CHECKER_EXCEPTION = "checker_exception"

# Upstream's type table, including its oddities: "number" means int, "enum" maps to ``enumerate`` (so a value is
# never of that type and enum-typed parameters are never value-checked), "any" means str.
TYPE_MAP: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
    "list": list,
    "object": dict,
    "objectArray": list,
    "list(string)": list,
    "list(enum)": list,
    "int": int,
    "enum": enumerate,
    "number": int,
}
NESTED_TYPES = ("array", "tuple", "list(string)", "list(enum)", "object", "objectArray")

_STANDARDIZE_PATTERN = re.compile(r"[ \,\.\/\-\_\*\^]")


class _CheckerCrash(Exception):
    """Where the official checker raises (malformed documentation or ground truth)."""


@dataclass
class CheckResult:
    valid: bool
    error_type: str = ""
    error: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def standardize_string(text: str) -> str:
    """Upstream normalisation: drop spaces and , . / - _ * ^ (only the ASCII space: tabs and no-break spaces stay),
    lowercase, and turn ' into "."""
    return _STANDARDIZE_PATTERN.sub("", text).lower().replace("'", '"')


def _bool_from_word(value: Any) -> Any:
    # Upstream compares with ``==``, so only the exact lowercase words convert.
    if isinstance(value, str):
        if value == "true":
            return True
        if value == "false":
            return False
    return value


def _possible_answer_type(answer: Any) -> type | None:
    # An empty-string ground truth means "optional, any value": no type is inferred from it.
    if isinstance(answer, str) and answer == "":
        return None
    return type(answer)


def _equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except Exception:
        return False


def _type_check(param: str, value: Any, answer: Any, expected: type, nested: type | None, func_name: str) -> dict:
    """Upstream ``type_checker``. Returns {"valid", "error", "is_variable"}.

    ``is_variable`` (value checks skipped) is set when the ground truth's Python type differs from the documented
    type (e.g. a float answer for a "number" = int parameter) and whenever the value's type differs from the
    documented type but equals the answer's type. Quirk: with a nested type, a failed nested check is still
    returned as invalid even though it then takes the answer-type branch."""
    result = {"valid": True, "error": "", "is_variable": False}
    answer_type = _possible_answer_type(answer)
    is_variable = answer_type is not None and answer_type is not expected
    value = _bool_from_word(value)
    if type(value) is expected:
        if nested is None:
            result["is_variable"] = is_variable
            return result
        try:
            items = iter(answer)
        except TypeError:
            raise _CheckerCrash(f"'{type(answer).__name__}' object is not iterable") from None
        for answer_item in items:
            item_ok = True
            if type(answer_item) is list:
                for value_item in value:
                    inner = _type_check(param, value_item, answer_item, nested, None, func_name)
                    if not inner["valid"]:
                        item_ok = False
                        break
            if item_ok:
                return {"valid": True, "error": "", "is_variable": is_variable}
        result["valid"] = False
        result["error"] = (
            f"Nested type checking failed for parameter {param!r}. Expected outer type {expected.__name__} with inner "
            f"type {nested.__name__}. Parameter value: {value!r}."
        )
    if answer_type is not None and (type(value) is answer_type or _equal(answer, value)):
        result["is_variable"] = True
        return result
    result["valid"] = False
    result["error"] = (
        f"wrong type for parameter ({param}) of api ({func_name}):[excepted: {expected}, real: {type(value)}]"
    )
    return result


def _string_check(param: str, value: str, answer: str, func_name: str, exact: bool) -> CheckResult:
    output = standardize_string(value)
    expected = standardize_string(answer)
    # Quirk: outside the agent categories the standardized answer only has to be a substring of the output.
    ok = output == expected if exact else expected in output
    if ok:
        return CheckResult(True)
    return CheckResult(
        False,
        VALUE_ERROR_STRING,
        f"wrong value for parameter ({param}) of api ({func_name}): [excepted: {answer}, real: [{value}]]",
    )


def _list_check(param: str, value: Sequence, answer: Sequence, func_name: str) -> CheckResult:
    # Order-sensitive, element-wise; only top-level string elements are standardized.
    output = [standardize_string(item) if type(item) is str else item for item in list(value)]
    expected = [standardize_string(item) if type(item) is str else item for item in answer]
    if _equal(output, expected):
        return CheckResult(True)
    return CheckResult(
        False,
        VALUE_ERROR_LIST,
        f"wrong value for parameter ({param!r}) of api ({func_name}): [expected {answer}, real: [{value!r}]]",
    )


def _flatten_single_lists(mapping: Mapping) -> dict:
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in mapping.items()}


def _dict_check(param: str, value: Any, answer: Any, func_name: str) -> CheckResult:
    """Upstream ``dict_checker``: same key count, every output key in the answer, nested dicts recursively, and
    leaves compared as ``str(answer) in str(output)`` (Quirk: substring on the string forms, so 1 matches 10 and a
    list leaf passes when its repr contains the answer's repr; strings are standardized first)."""
    failure = CheckResult(
        False, VALUE_ERROR, f"wrong value for parameter ({param}) of api ({func_name}): [excepted: {answer}, real: [{value}]]"
    )
    if not isinstance(value, dict):
        return failure
    if not isinstance(answer, dict):
        raise _CheckerCrash("ground truth for an object parameter is not a dict")
    if len(value) != len(answer):
        return failure
    result = CheckResult(True)
    for key, item in value.items():
        item = _bool_from_word(item)
        try:
            present = key in answer
        except TypeError:
            present = False
        if not present:
            return failure
        expected = answer[key]
        if isinstance(expected, dict):
            result = _dict_check(param, item, expected, func_name)
            if not result.valid:
                return result
            continue
        output_form = standardize_string(item) if type(item) is str else item
        if type(expected) is str:
            expected_form: Any = standardize_string(expected)
        else:
            expected_form = expected
        if str(expected_form) not in str(output_form):
            return failure
    return result


def _list_of_dicts_check(param: str, value: Sequence, answer: Any, func_name: str) -> CheckResult:
    try:
        answer_length = len(answer)
    except TypeError:
        raise _CheckerCrash("ground truth has no length") from None
    if len(value) != answer_length:
        return CheckResult(
            False,
            VALUE_ERROR_LIST_DICT_COUNT,
            f"wrong value for parameter ({param}) of api ({func_name}): [excepted: {answer}, real: [{value}]]",
        )
    result = CheckResult(True)
    for index in range(len(value)):
        result = _dict_check(param, value[index], answer[index], func_name)
        if not result.valid:
            return result
    return result


def simple_function_check(
    doc: Mapping[str, Any], call: Mapping[str, Any], answer_call: Mapping[str, Any], agent: bool
) -> CheckResult:
    """Upstream ``simple_function_checker`` for one output call against one ground-truth call."""
    answer = list(answer_call.values())[0]
    arguments = list(call.values())[0]
    if not isinstance(doc, Mapping) or "parameters" not in doc:
        raise _CheckerCrash("function document without 'parameters'")
    parameters = doc["parameters"]
    if _equal(arguments, {}) and _equal(parameters, {}):
        return CheckResult(True)
    if _equal(arguments, {}) or _equal(parameters, {}):
        # Quirk: an argument-less call against a documented function (or the reverse) fails as "wrong_param",
        # even when the ground truth has no arguments either.
        return CheckResult(False, WRONG_PARAM, "empty parameters on one side only")
    if not isinstance(parameters, Mapping) or "properties" not in parameters:
        raise _CheckerCrash("function document without 'properties'")
    properties = parameters["properties"]
    if _equal(answer, properties):
        return CheckResult(True)
    if _equal(answer, {}):
        return CheckResult(False, WRONG_PARAM, "ground truth has no parameters but the call has")
    name = doc.get("name")
    if name not in call:
        return CheckResult(False, WRONG_FUNCTION_NAME, f"expected function {name}, got {list(call)[0]}")
    if "required" not in parameters:
        raise _CheckerCrash("function document without 'required'")
    for required in parameters["required"]:
        if required not in arguments:
            return CheckResult(False, LACK_ARGS, f"lack required_params: {required}")
    for param, value in arguments.items():
        # Quirk: parameters the ground truth leaves out count as extra, even optional ones; ground-truth
        # parameters missing from the output are not checked unless they are required.
        if param not in properties or param not in answer:
            return CheckResult(False, ADDITION_ARGS, f"addition params: {param}")
        details = properties[param]
        if not isinstance(details, Mapping) or details.get("type") not in TYPE_MAP:
            raise _CheckerCrash(f"undocumented or unknown type for parameter {param}")
        type_name = details["type"]
        expected = TYPE_MAP[type_name]
        nested: type | None = None
        if type_name in NESTED_TYPES:
            items = details.get("items")
            if isinstance(items, Mapping) and "type" in items:
                nested_name = items["type"]
            elif "string" in type_name:
                nested_name = "string"
            elif "enum" in type_name:
                nested_name = "enum"
            else:
                nested_name = "dict"
            if nested_name not in TYPE_MAP:
                raise _CheckerCrash(f"unknown item type {nested_name!r}")
            nested = TYPE_MAP[nested_name]
        if type_name == "tuple" and type(value) is tuple:
            value = list(value)
        if type_name == "float" and type(value) is int:
            value = float(value)
        typed = _type_check(param, value, answer[param], expected, nested, name)
        if not typed["valid"]:
            return CheckResult(False, TYPE_ERROR, typed["error"])
        if typed["is_variable"]:
            continue
        # Quirk: only dicts, lists and strings are value-checked. Top-level int/float/bool values (and enum-typed
        # parameters) pass whatever their value once the type matches.
        if expected is dict:
            result = _dict_check(param, value, answer[param], name)
        elif expected is list and nested is dict:
            if type_name == "objectArray":
                # Upstream calls dict_checker with a missing argument here and crashes.
                raise _CheckerCrash("objectArray parameters crash the official checker")
            result = _list_of_dicts_check(param, value, answer[param], name)
        elif expected is str:
            result = _string_check(param, value, answer[param], name, exact=agent)
        elif expected is list:
            result = _list_check(param, value, answer[param], name)
        else:
            continue
        if not result.valid:
            return result
    return CheckResult(True)


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
                    raise _CheckerCrash(f"no function document for {answer_keys[index]}")
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
                raise _CheckerCrash("ground truth alternative is not a dict")
            result = normal_check(docs, calls, alternative)
        except _CheckerCrash as exc:
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
