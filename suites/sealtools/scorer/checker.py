"""Per-sample counts of ``calculate_score_ToolLearning`` and the item verdict.

Upstream: Seal-Tools @ ce753ecd ``LLM_Evaluation/src/llm_tools/evaluation/calculate.py``
(``calculate_score_ToolLearning``); ToLeaP @ b9507131 ``src/benchmark/sealtools/vllm_SealTools_eval.py`` (the same
function, extended). The function walks the samples of one split and adds, per sample:

* ``gold_api`` += number of gold calls; ``gold_param`` += number of parameters of each gold call (always, parsed or
  not);
* when the output parsed: ``correct_format`` += 1, then for each element of the predicted list for which
  ``"api" in element`` holds:

  - ``predict_api`` += 1; ``predict_param`` += ``len(element["parameters"])`` when that is a dict (ToLeaP: plus
    ``len(element["arguments"])`` when that is a dict);
  - the element is matched to the **first** gold call whose ``api`` equals it (``==``). QUIRK: gold calls are never
    consumed, so a repeated API name is always compared with its first gold occurrence, and predicting one gold
    call twice counts two correct APIs;
  - on a match ``correct_api`` += 1 and each predicted parameter (ToLeaP: of ``arguments`` and of ``parameters``,
    both counted) is correct iff its name is a gold parameter of the matched call and ``str(pred) == str(gold)``
    (QUIRK: ``5`` and ``"5"`` are equal, ``1`` and ``1.0`` are not, ``true`` equals the string ``"True"``).

Elements without ``"api"`` add nothing (ToLeaP counts them as its "missing API" error). QUIRK, and a deviation:
``"api" in element`` is a key test for a dict, a substring test for a string and a membership test for a list, and
raises ``TypeError`` for a number, ``true``/``false`` or ``null``; a non-dict element that does contain ``"api"``
then raises at ``element["api"]``. Upstream's whole run stops on such an output. Here the sample is scored as a
format failure (nothing but its gold counts added) and marked ``upstream_crash``, which the summary counts.

The same holds for an output upstream cannot *write*: both scorers save the parsed predictions with
``write_jsonl`` (``json.dumps(..., ensure_ascii=False)`` into a UTF-8 file; Seal-Tools ``llm_tools/utils``, ToLeaP
``vllm_SealTools_eval.py``) before ``calculate_score_ToolLearning`` reads them back. A lone surrogate in the parsed
list (``json.loads`` accepts the escape ``"\\ud800"``) makes that write raise ``UnicodeEncodeError`` and the run
stop. Seal-Tools' ``ToolLearning_eval`` also writes the raw output text (``raw_ToolLearning_<split>.jsonl``), so
under the Seal-Tools protocol a surrogate in the text itself stops it too; ToLeaP writes only the predictions.

Item pass (ours; upstream has only pooled counts): the output parsed and the sample adds no error to any count,
``correct_api == predict_api == gold_api`` and ``correct_param == predict_param == gold_param``, i.e. precision and
recall are both 1 for this sample in both families. QUIRK inherited: predicting call A twice where the gold is
A and B (with as many parameters) satisfies all six counts and passes, as the pooled metric cannot tell.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.tl_failures import CORRECT, REWARDS
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .decoding import decode
from .loading import PROTOCOL_TOLEAP, PROTOCOL_UPSTREAM, protocol_of
from .tl import tl_category

#: The pooled counts of ``calculate_score_ToolLearning`` (``all`` is the sample itself, AMOUNT's denominator).
COUNT_KEYS = ("all", "correct_format", "correct_api", "predict_api", "gold_api", "correct_param", "predict_param",
              "gold_param")
#: ToLeaP's ``错误类型统计`` counters (format error, missing API, wrong API, "missing parameter" = a predicted name
#: that is not a gold parameter, wrong parameter value), kept under the ToLeaP protocol only.
TOLEAP_ERROR_KEYS = ("toleap_format_error", "toleap_missing_api", "toleap_wrong_api", "toleap_unknown_parameter",
                     "toleap_wrong_value")
TOLEAP_ERROR_NAMES = {"toleap_format_error": "格式错误 (format error)", "toleap_missing_api": "缺失 API (missing API)",
                      "toleap_wrong_api": "错误的 API (wrong API)",
                      "toleap_unknown_parameter": "缺失参数 (parameter name not in gold)",
                      "toleap_wrong_value": "错误的参数值 (wrong parameter value)"}

UPSTREAM_CRASH = "upstream_crash"
#: Failure kinds of a parsed output, in the order the first one found names the item's error type.
ERROR_ORDER = ("wrong_api", "missing_call", "surplus_call", "unknown_parameter", "wrong_value", "missing_parameter",
               "surplus_parameter")


class _UpstreamCrash(Exception):
    """Upstream's scorer would raise on this output (and stop the whole run)."""


def _has_api(element: Any) -> bool:
    """``"api" in element`` with Python's semantics for JSON values; TypeError where Python raises it."""
    if isinstance(element, dict):
        return "api" in element
    if isinstance(element, str):
        return "api" in element
    if isinstance(element, list):
        return any(item == "api" for item in element)
    raise _UpstreamCrash(f"'\"api\" in element' raises TypeError for the element {_short(element)} "
                         f"({type(element).__name__})")


def has_surrogate(value: Any) -> bool:
    """A string anywhere in ``value`` (keys included) that UTF-8 cannot encode: a surrogate code point, which
    ``json.loads`` makes of an escape such as ``"\\ud800"`` (a paired escape decodes to one character)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and any("\ud800" <= char <= "\udfff" for char in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _text(value: Any) -> str:
    try:
        return str(value)
    except (RecursionError, ValueError) as exc:
        raise _UpstreamCrash(f"str() of a predicted value raises {type(exc).__name__}") from None


def count_sample(gold: Sequence[Mapping[str, Any]], prediction: list[Any] | None, protocol: str) -> dict[str, Any]:
    """The counts one sample adds (see the module docstring), the per-call trace and ToLeaP's error counters.

    ``prediction`` is the decoded list, or None for upstream's ``-1`` (format failure). Never raises: where
    upstream would, the result has ``crash`` set and counts as a format failure.
    """
    toleap = protocol == PROTOCOL_TOLEAP
    result: dict[str, Any] = {key: 0 for key in COUNT_KEYS + TOLEAP_ERROR_KEYS}
    result.update(all=1, gold_api=len(gold), gold_param=sum(len(call["parameters"]) for call in gold), calls=[],
                  ignored=[], crash=None)
    if prediction is None:
        result["toleap_format_error"] = 1
        return result
    try:
        if has_surrogate(prediction):
            raise _UpstreamCrash("the parsed list holds a lone surrogate: write_jsonl raises UnicodeEncodeError "
                                 "before the scorer runs")
        counted = _count_prediction(gold, prediction, toleap)
    except _UpstreamCrash as crash:
        result["crash"] = str(crash)
        result["toleap_format_error"] = 1
        return result
    result.update(counted)
    result["correct_format"] = 1
    return result


def _count_prediction(gold: Sequence[Mapping[str, Any]], prediction: list[Any], toleap: bool) -> dict[str, Any]:
    out: dict[str, Any] = {key: 0 for key in ("correct_api", "predict_api", "correct_param", "predict_param")
                           + TOLEAP_ERROR_KEYS}
    calls: list[dict[str, Any]] = []
    ignored: list[int] = []
    for position, element in enumerate(prediction):
        if not _has_api(element):
            ignored.append(position)
            out["toleap_missing_api"] += 1
            continue
        if not isinstance(element, dict):
            raise _UpstreamCrash(f"element {position + 1} is a {type(element).__name__} containing \"api\": "
                                 "element[\"api\"] raises TypeError")
        out["predict_api"] += 1
        groups = (("arguments", "parameters") if toleap else ("parameters",))
        for key in groups:
            if key in element and isinstance(element[key], dict):
                out["predict_param"] += len(element[key])
        api = element["api"]
        match = next((index for index, call in enumerate(gold) if call["api"] == api), None)
        trace: dict[str, Any] = {"position": position, "api": api, "gold_index": match, "parameters": []}
        calls.append(trace)
        if match is None:
            out["toleap_wrong_api"] += 1
            continue
        out["correct_api"] += 1
        gold_parameters = gold[match]["parameters"]
        for key in groups:
            if not (key in element and isinstance(element[key], dict)):
                continue
            for name, value in element[key].items():
                if name not in gold_parameters:
                    status = "unknown"
                    out["toleap_unknown_parameter"] += 1
                elif _text(value) == _text(gold_parameters[name]):
                    status = "ok"
                    out["correct_param"] += 1
                else:
                    status = "wrong"
                    out["toleap_wrong_value"] += 1
                trace["parameters"].append({"key": key, "name": name, "status": status, "got": _text(value),
                                            "expected": _text(gold_parameters[name]) if status == "wrong" else None})
    out["calls"] = calls
    out["ignored"] = ignored
    return out


def failure_kinds(result: Mapping[str, Any]) -> list[str]:
    """What keeps a parsed sample from passing, in :data:`ERROR_ORDER` (empty when it passes)."""
    kinds = []
    if result["correct_api"] < result["predict_api"]:
        kinds.append("wrong_api")
    if result["correct_api"] < result["gold_api"]:
        kinds.append("missing_call")
    if result["correct_api"] > result["gold_api"]:
        kinds.append("surplus_call")
    statuses = [p["status"] for call in result["calls"] for p in call["parameters"]]
    if "unknown" in statuses:
        kinds.append("unknown_parameter")
    if "wrong" in statuses:
        kinds.append("wrong_value")
    if result["correct_param"] < result["gold_param"]:
        kinds.append("missing_parameter")
    if result["correct_param"] > result["gold_param"]:
        kinds.append("surplus_parameter")
    if not kinds and not (result["correct_param"] == result["predict_param"] == result["gold_param"]):
        kinds.append("missing_parameter")  # unreachable: fewer correct than predicted means unknown/wrong above
    return kinds


def passed_counts(result: Mapping[str, Any]) -> bool:
    return bool(result["correct_format"]) and (
        result["correct_api"] == result["predict_api"] == result["gold_api"]
        and result["correct_param"] == result["predict_param"] == result["gold_param"])


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value))
    return text if len(text) <= limit else text[:limit] + "…"


def _explain(result: Mapping[str, Any], reason: str, gold: Sequence[Mapping[str, Any]], protocol: str,
             kinds: Sequence[str]) -> str:
    lines = [f"protocol: {protocol}"]
    if result["crash"]:
        lines.append(f"format: the official scorer would raise here and stop the run ({result['crash']}); scored "
                     "as a format failure: only the gold counts are added")
    elif not result["correct_format"]:
        lines.append(f"format: not parsed ({reason}); only the gold counts are added")
    else:
        lines.append("format: parsed (AMOUNT +1)")
    lines.append(f"API:   correct {result['correct_api']} / predicted {result['predict_api']} / gold "
                 f"{result['gold_api']}")
    lines.append(f"param: correct {result['correct_param']} / predicted {result['predict_param']} / gold "
                 f"{result['gold_param']}")
    for call in result["calls"]:
        head = f"call {call['position'] + 1}: api {_short(call['api'])} → "
        if call["gold_index"] is None:
            lines.append(head + "no gold call has this api")
            continue
        parts = []
        for p in call["parameters"]:
            label = p["name"] if p["key"] == "parameters" else f"{p['name']} (arguments)"
            if p["status"] == "ok":
                parts.append(f"{label} ok")
            elif p["status"] == "unknown":
                parts.append(f"{label}: not a parameter of the gold call")
            else:
                parts.append(f"{label}: got {_short(p['got'])} expected {_short(p['expected'])} (as str)")
        lines.append(head + f"gold call {call['gold_index'] + 1}" + (f"; {', '.join(parts)}" if parts else ""))
    if result["ignored"]:
        lines.append("elements without \"api\" (not counted): " + ", ".join(str(i + 1) for i in result["ignored"]))
    if kinds:
        lines.append("fails: " + ", ".join(kinds))
    lines.append("expected: " + json.dumps(list(gold), ensure_ascii=False))
    return "\n".join(lines)


def score(case: Case, generation: Generation) -> Verdict:
    payload = case.payload
    protocol = protocol_of(case)
    gold = payload["gold"]
    prediction, reason = decode(generation.text, protocol)
    result = count_sample(gold, prediction, protocol)
    if protocol == PROTOCOL_UPSTREAM and not result["crash"] and has_surrogate(generation.text):
        # Seal-Tools writes the raw text (raw_ToolLearning_<split>.jsonl) before scoring: that write stops the run.
        result = count_sample(gold, None, protocol)
        result["crash"] = "the output text holds a lone surrogate: write_jsonl of the raw outputs raises " \
                          "UnicodeEncodeError"
    passed = passed_counts(result)
    kinds = [] if passed or not result["correct_format"] else failure_kinds(result)
    error_type = None if passed else (FORMAT_ERROR if not result["correct_format"] else kinds[0])
    counts = {key: float(result[key]) for key in COUNT_KEYS}
    if protocol == PROTOCOL_TOLEAP:
        counts.update({key: float(result[key]) for key in TOLEAP_ERROR_KEYS})
        # ToLeaP dumps a sample as a bad case when any of its error counters fired.
        counts["toleap_bad_case"] = float(any(result[key] for key in TOLEAP_ERROR_KEYS))
    if result["crash"]:
        counts[UPSTREAM_CRASH] = 1.0
    labels: dict[str, str] = {}
    if tl_failures.enabled(case) and len(gold) == 1:
        # TL-Training's categories on single-call samples (every easy one): the paper's scope is one call.
        if passed:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            usable = None if not result["correct_format"] else prediction
            labels["tl_category"], counts["tl_reward"] = tl_category(case, usable, protocol)
    details: dict[str, Any] = {"protocol": protocol, "truncated": generation.truncated, "nested": payload["nested"]}
    if result["crash"]:
        details[UPSTREAM_CRASH] = result["crash"]
    if kinds:
        details["fails"] = list(kinds)
    return Verdict(
        passed=passed,
        error_type=error_type,
        explanation=_explain(result, reason, gold, protocol, kinds),
        decoded=prediction if result["correct_format"] else None,
        expected=gold,
        counts=counts,
        labels=labels,
        details=details,
    )
