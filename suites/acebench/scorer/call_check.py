"""ACEBench's ``simple_function_checker`` (chenchen0103/ACEBench @ 56dd66cf, ``model_eval/checker.py``), rule for
rule: one output call against one ground-truth call, parameter by parameter (the official labels, upstream's type
table, the string, list, dict and list-of-dict value rules, each quirk kept and marked "Quirk"). The checkers built
on it (Normal, Special) and the item's verdict are ``checker.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

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


class CheckerCrash(Exception):
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
            raise CheckerCrash(f"'{type(answer).__name__}' object is not iterable") from None
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
        raise CheckerCrash("ground truth for an object parameter is not a dict")
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
        raise CheckerCrash("ground truth has no length") from None
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
        raise CheckerCrash("function document without 'parameters'")
    parameters = doc["parameters"]
    if _equal(arguments, {}) and _equal(parameters, {}):
        return CheckResult(True)
    if _equal(arguments, {}) or _equal(parameters, {}):
        # Quirk: an argument-less call against a documented function (or the reverse) fails as "wrong_param",
        # even when the ground truth has no arguments either.
        return CheckResult(False, WRONG_PARAM, "empty parameters on one side only")
    if not isinstance(parameters, Mapping) or "properties" not in parameters:
        raise CheckerCrash("function document without 'properties'")
    properties = parameters["properties"]
    if _equal(answer, properties):
        return CheckResult(True)
    if _equal(answer, {}):
        return CheckResult(False, WRONG_PARAM, "ground truth has no parameters but the call has")
    name = doc.get("name")
    if name not in call:
        return CheckResult(False, WRONG_FUNCTION_NAME, f"expected function {name}, got {list(call)[0]}")
    if "required" not in parameters:
        raise CheckerCrash("function document without 'required'")
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
            raise CheckerCrash(f"undocumented or unknown type for parameter {param}")
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
                raise CheckerCrash(f"unknown item type {nested_name!r}")
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
                raise CheckerCrash("objectArray parameters crash the official checker")
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
