"""BFCL's single-turn AST checker, rule for rule: decoded calls against the ground truth's acceptable values.

Follows ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` of bfcl-eval 2026.3.23 (gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) for a prompting-mode model (``underscore_to_dot`` off). The checker's
behaviour rests on Python semantics (``type(x) == T``, ``x in list`` with ``==`` so ``True == 1``, iteration over
strings), so the values handled here are plain Python values and the comparisons are written the same way.
Error type strings are BFCL's own. Where the official checker raises instead of answering (a ground-truth shape it
cannot handle, a 4,300+ digit integer) the case fails with ``checker_crash`` (the official run would abort).
The verdict around these rules (decoding, the relevance rule, labels) is :mod:`..checker`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..categories import language_of
from .converters import JAVA_TYPES, JS_TYPES, ConverterCrash, java_convert, js_convert

PYTHON_TYPES = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict,
    "any": str,
}
_PYTHON_ITEM_CHECKED = ("array", "tuple")
_CONVERTED_COLLECTIONS = ("Array", "ArrayList", "array")
# Java and JavaScript values arrive as source text and go through the literal converters before the type check;
# each language keeps its own type table and error-type name.
_LITERAL_LANGUAGES = {"java": (JAVA_TYPES, java_convert, "type_error:java"),
                      "javascript": (JS_TYPES, js_convert, "type_error:js")}
CHECKER_CRASH = "checker_crash"


@dataclass
class CheckResult:
    valid: bool
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)
    is_variable: bool = False


def _fail(error_type: str, message: str) -> CheckResult:
    return CheckResult(False, error_type, [message])


def show(value: Any, limit: int = 300) -> str:
    """``repr`` that never raises (huge ints) and stays short."""
    try:
        text = repr(value)
    except ValueError:
        text = "<int with more than 4300 digits>"
    return text if len(text) <= limit else text[:limit] + "..."


def standardize_string(text: str) -> str:
    """BFCL: drop spaces and ``, . / - _ * ^``, lowercase, and turn ``'`` into ``"``."""
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def check_calls(functions: list[dict], calls: list[dict], ground_truth: list[dict], category: str,
                underscore_to_dot: bool = False) -> CheckResult:
    """Dispatch on the category name as upstream does; never raises."""
    language = language_of(category)
    try:
        if "parallel" in category:
            return _parallel_no_order(functions, calls, ground_truth, language, underscore_to_dot)
        if "multiple" in category:
            return _multiple(functions, calls, ground_truth, language, underscore_to_dot)
        if len(calls) != 1:
            return _fail("simple_function_checker:wrong_count", "Wrong number of functions.")
        return check_single_call(functions[0], calls[0], ground_truth[0], language, underscore_to_dot)
    except (ConverterCrash, Exception) as exc:  # noqa: BLE001 - the official checker would abort the run here
        return _fail(CHECKER_CRASH, f"the official checker raises here ({type(exc).__name__}: {show(str(exc))})")


def _find_description(functions: Any, name: str) -> Any:
    if type(functions) == list:
        for function in functions:
            if function["name"] == name:
                return function
        return None
    return functions


def _multiple(functions: list[dict], calls: list[dict], ground_truth: list[dict], language: str,
              underscore_to_dot: bool) -> CheckResult:
    if len(calls) != len(ground_truth):
        return _fail("multiple_function_checker:wrong_count", "Wrong number of functions.")
    expected_name = list(ground_truth[0].keys())[0]
    return check_single_call(_find_description(functions, expected_name), calls[0], ground_truth[0], language,
                             underscore_to_dot)


def _parallel_no_order(functions: list[dict], calls: list[dict], ground_truth: list[dict],
                       language: str, underscore_to_dot: bool) -> CheckResult:
    if len(calls) != len(ground_truth):
        return _fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
    matched: list[int] = []
    result = CheckResult(True)  # upstream reuses the last result when every output is already matched
    for gt_index, expected in enumerate(ground_truth):
        # Greedy: the first still-unmatched output that passes wins, in ground-truth order (not optimal matching).
        description = _find_description(functions, list(expected.keys())[0])
        attempts = []
        for index, call in enumerate(calls):
            if index in matched:
                continue
            result = check_single_call(description, call, expected, language, underscore_to_dot)
            if result.valid:
                matched.append(index)
                break
            attempts.append(f"output {index}: {result.error_type}: {'; '.join(result.errors)}")
        if not result.valid:
            remaining = [i for i in range(len(calls)) if i not in matched]
            message = (f"Could not find a matching function among index {remaining} of model output for index "
                       f"{gt_index} of possible answers. " + " | ".join(attempts))
            return _fail("parallel_function_checker_no_order:cannot_find_match", message)
    return CheckResult(True)


def check_single_call(description: dict, call: dict, expected_call: dict, language: str,
                      underscore_to_dot: bool = False) -> CheckResult:
    expected = list(expected_call.values())[0]
    name = description["name"]
    if underscore_to_dot:  # ``convert_func_name``: an FC model's tool names carry "_" for "."
        name = re.sub(r"\.", "_", name)
    properties = description["parameters"]["properties"]
    required = description["parameters"]["required"]

    if name not in call:
        return _fail("simple_function_checker:wrong_func_name", f"Function name {show(name)} not found in model output.")
    arguments = call[name]

    for parameter in required:
        if parameter not in arguments:
            return _fail("simple_function_checker:missing_required", f"Missing required parameter: {show(parameter)}.")

    for parameter, value in arguments.items():
        if parameter not in properties or parameter not in expected:
            return _fail("simple_function_checker:unexpected_param", f"Unexpected parameter: {show(parameter)}.")
        type_name = properties[parameter]["type"]
        item_type = None
        if language in _LITERAL_LANGUAGES:
            types, convert, error_type = _LITERAL_LANGUAGES[language]
            python_type = types[type_name]
            if type(value) != str:
                return _fail(error_type, f"Incorrect type for parameter {show(parameter)}. Expected type "
                             f"String, got {type(value).__name__}. Parameter value: {show(value)}.")
            if type_name in _CONVERTED_COLLECTIONS:
                item_name = properties[parameter]["items"]["type"]
                item_type = types[item_name]
                value = convert(value, type_name, item_name)
            else:
                value = convert(value, type_name)
        else:
            python_type = PYTHON_TYPES[type_name]
            if type_name in _PYTHON_ITEM_CHECKED:
                item_type = PYTHON_TYPES[properties[parameter]["items"]["type"]]

        # A tuple only becomes a list for 'tuple' parameters (GT tuples are JSON lists).
        if type_name == "tuple" and type(value) == tuple:
            value = list(value)
        # Python's int -> float promotion for 'float' parameters (Python only).
        if language == "python" and type_name == "float" and type(value) == int:
            value = float(value)

        typed = _type_check(parameter, value, expected[parameter], type_name, python_type, item_type)
        if not typed.valid:
            return typed

        # Variables (a GT value whose type differs from the declared type) skip the structured comparisons.
        if not typed.is_variable:
            if python_type == dict:
                outcome = _dict_check(parameter, value, expected[parameter])
            elif python_type == list and item_type == dict:
                outcome = _list_of_dicts_check(parameter, value, expected[parameter])
            elif python_type == str:
                outcome = _string_check(parameter, value, expected[parameter])
            elif python_type == list:
                outcome = _list_check(parameter, value, expected[parameter])
            else:
                outcome = None
            if outcome is not None:
                if not outcome.valid:
                    return outcome
                continue

        if value not in expected[parameter]:
            return _fail("value_error:others", f"Invalid value for parameter {show(parameter)}: {show(value)}. "
                         f"Expected one of {show(expected[parameter])}.")

    for parameter in expected:
        if parameter not in arguments and "" not in expected[parameter]:
            return _fail("simple_function_checker:missing_optional",
                         f"Optional parameter {show(parameter)} not provided and not marked as optional.")
    return CheckResult(True)


def _answer_type(acceptable: list) -> type | None:
    for answer in acceptable:
        if answer != "":
            return type(answer)
    return None


def _type_check(parameter: str, value: Any, acceptable: list, type_name: str, python_type: type,
                item_type: type | None) -> CheckResult:
    """Upstream ``type_checker``: one level of item checking and the 'variable' escape hatch."""
    answer_type = _answer_type(acceptable)
    is_variable = answer_type is not None and answer_type != python_type
    failure = None
    if type(value) == python_type:
        if item_type is None:
            return CheckResult(True, is_variable=is_variable)
        for alternative in acceptable:
            items_ok = True
            # Only list-shaped alternatives are inspected; any other alternative (e.g. "") accepts at once.
            if type(alternative) == list:
                for item in value:
                    if not _type_check(parameter, item, alternative, str(item_type), item_type, None).valid:
                        items_ok = False
                        break
            if items_ok:
                return CheckResult(True, is_variable=is_variable)
        failure = _fail("type_error:nested", f"Nested type checking failed for parameter {show(parameter)}. "
                        f"Expected outer type {type_name} with inner type {item_type}. Parameter value: {show(value)}.")
    if answer_type is not None and type(value) == answer_type:
        # Quirk: after a failed item check the failure is returned (flagged as variable), not a pass.
        if failure is not None:
            failure.is_variable = True
            return failure
        return CheckResult(True, is_variable=True)
    return _fail("type_error:simple", f"Incorrect type for parameter {show(parameter)}. Expected type {type_name}, "
                 f"got {type(value).__name__}. Parameter value: {show(value)}.")


def _standardized(sequence: Any) -> list:
    # Indexing over range(len(...)) like upstream: a string alternative is read character by character.
    return [standardize_string(sequence[i]) if type(sequence[i]) == str else sequence[i] for i in range(len(sequence))]


def _string_check(parameter: str, value: str, acceptable: list) -> CheckResult:
    candidates = [standardize_string(answer) for answer in acceptable if type(answer) == str]
    if standardize_string(value) not in candidates:
        return _fail("value_error:string", f"Invalid value for parameter {show(parameter)}: {show(value)}. "
                     f"Expected one of {show(acceptable)}. Case insensitive.")
    return CheckResult(True)


def _list_check(parameter: str, value: list, acceptable: list) -> CheckResult:
    produced = list(value)
    produced = [standardize_string(item) if type(item) == str else item for item in produced]
    candidates = [_standardized(alternative) for alternative in acceptable]
    if produced not in candidates:
        return _fail("value_error:list/tuple", f"Invalid value for parameter {show(parameter)}: {show(value)}. "
                     f"Expected one of {show(acceptable)}.")
    return CheckResult(True)


def _dict_check(parameter: str, value: dict, alternatives: list) -> CheckResult:
    result = CheckResult(False, "dict_checker:unclear")
    for alternative in alternatives:
        if alternative == "":
            continue
        result = CheckResult(False, "dict_checker:unclear")
        matched = True
        for key, item in value.items():
            if key not in alternative:
                result.errors.append(f"Unexpected dict key parameter: {show(key)}.")
                result.error_type = "value_error:dict_key"
                matched = False
                break
            produced = standardize_string(item) if type(item) == str else item
            candidates = _standardized(alternative[key])
            if produced not in candidates:
                result.errors.append(f"Invalid value for parameter {show(key)}: {show(item)}. "
                                     f"Expected one of {show(candidates)}.")
                result.error_type = "value_error:dict_value"
                matched = False
                break
        # Quirk: this pass runs even after a failure above and may overwrite the error type.
        for key, acceptable in alternative.items():
            if key not in value and "" not in acceptable:
                result.errors.append(f"Missing dict key parameter: {show(key)}.")
                result.error_type = "value_error:dict_key"
                matched = False
                break
        if matched:
            return CheckResult(True)
    return result


def _list_of_dicts_check(parameter: str, value: list, alternatives: list) -> CheckResult:
    result = CheckResult(False, "list_dict_checker:unclear")
    for alternative in alternatives:
        matched = True
        if len(value) != len(alternative):
            result = _fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
            continue
        for index in range(len(value)):
            result = _dict_check(parameter, value[index], [alternative[index]])
            if not result.valid:
                matched = False
                break
        if matched:
            return CheckResult(True)
    return result
