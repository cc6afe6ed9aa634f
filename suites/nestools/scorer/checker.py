"""The official per-case counts (``process_results_gen``) and the verdict of a case built on them."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any, Mapping, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.scorer_lib.tl_failures import CORRECT, REWARDS
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict
from .candidates import candidate_ids
from .decoding import decode_calls
from .gold import gold_calls, max_depth
from .tl import tl_category
from .values import safe_value_score

# --------------------------------------------------------------------------------------------------------------
# Per-case counts (``process_results_gen``)
# --------------------------------------------------------------------------------------------------------------

FAMILIES = ("api", "order", "param", "nest")
COUNT_KEYS = tuple(f"{kind}_{family}_num" for family in FAMILIES for kind in ("correct", "predict", "gold"))
PARAM_ERROR_KEYS = (
    "para_error_type",
    "para_error_omission",
    "para_error_redundancy",
    "para_error_extaction",  # upstream's spelling
    "para_error_transformation",
)
NEST_ERROR_KEYS = ("nest_error_omission", "nest_error_unfind", "nest_error_wrong_place", "nest_error_hallucination")
ERROR_KEYS = PARAM_ERROR_KEYS + NEST_ERROR_KEYS
#: Readable error-type names for the nine upstream counters (the paper's names in comments).
ERROR_TYPE_NAMES = {
    "para_error_type": "param_type",
    "para_error_omission": "param_omission",
    "para_error_redundancy": "param_redundancy",
    "para_error_extaction": "param_extraction",
    "para_error_transformation": "param_transformation",  # paper: "Others"
    "nest_error_omission": "nest_omission",
    "nest_error_unfind": "nest_unfind",  # paper: "Identification"
    "nest_error_wrong_place": "nest_wrong_place",  # paper: "Confusion"
    "nest_error_hallucination": "nest_hallucination",
}
_NESTED = re.compile("API_call")


def _has_placeholder(value: Any) -> bool:
    return _NESTED.search(str(value)) is not None


def _hashable(value: Any) -> Any:
    """Order pairs are counted with a Counter; upstream crashes on unhashable ids, we give them a unique key."""
    try:
        hash(value)
        return value
    except TypeError:
        return ("<unhashable>", repr(value))


def _response_slots(call: Mapping[str, Any]) -> list[Any]:
    """A predicted call's return placeholders in slot order: dict values, non-strings as -1; anything but a dict
    gives no slots."""
    responses = call.get("responses")
    if not isinstance(responses, dict):
        return []
    return [value if isinstance(value, str) else -1 for value in responses.values()]


def _last_slot(slots_per_call: Sequence[Sequence[Any]], value: Any) -> tuple[int, int]:
    """(call, slot) holding ``value``: the first slot within a call, the *last* such call (upstream's loops only
    break out of the inner one). (-1, -1) when absent."""
    found = (-1, -1)
    for call_index, slots in enumerate(slots_per_call):
        for slot_index, slot in enumerate(slots):
            if slot == value:
                found = (call_index, slot_index)
                break
    return found


def evaluate(gold: Sequence[Mapping[str, Any]], task: str, text: Any) -> dict[str, Any]:
    """The official per-case numbers for one raw output: the twelve counts, ``correct_format_num``, ``tree_acc``,
    the nine parameter-error counters, plus ``matches`` (gold index, predicted index) and the decoded calls."""
    counts: dict[str, Any] = {key: 0 for key in COUNT_KEYS}
    counts["correct_format_num"] = 0
    errors = {key: 0 for key in ERROR_KEYS}
    predicted = decode_calls(text)

    # Gold side (also counted on a format failure: these are the recall denominators).
    counts["gold_api_num"] = len(gold)
    gold_slots: list[Sequence[Any]] = []
    producer_of: dict[str, Any] = {}
    unmatched: dict[Any, list[int]] = {}
    for index, call in enumerate(gold):
        counts["gold_param_num"] += len(call["parameters"])
        gold_slots.append(call["responses"])
        for value in call["parameters"].values():
            if _has_placeholder(value):
                counts["gold_nest_num"] += 1
                producer, slot = _last_slot(gold_slots, str(value))
                # A nested value that is no single placeholder (e.g. a list of them) is kept as its own text and
                # then only scores by plain equality.
                producer_of[str(value)] = (
                    str(value) if producer == -1 else (producer, gold[producer]["api_id"], slot)
                )
        unmatched.setdefault(call["api_id"], []).append(index)

    # Order: multiset intersection of adjacent id pairs.
    if predicted is not None and len(predicted) > 1:
        gold_pairs = [(gold[i]["api_id"], gold[i + 1]["api_id"]) for i in range(len(gold) - 1)]
        predicted_pairs = [_hashable((predicted[i]["api_id"], predicted[i + 1]["api_id"]))
                           for i in range(len(predicted) - 1)]
        counts["gold_order_num"] = len(gold_pairs)
        counts["predict_order_num"] = len(predicted_pairs)
        counts["correct_order_num"] = sum((Counter(gold_pairs) & Counter(predicted_pairs)).values())
    else:
        counts["gold_order_num"] = len(gold) - 1

    matches: list[list[int]] = []
    if predicted is not None:
        counts["correct_format_num"] = 1
        predicted_slots: list[list[Any]] = []
        for p_index, call in enumerate(predicted):
            counts["predict_api_num"] += 1
            parameters = call["parameters"]
            counts["predict_param_num"] += len(parameters)
            predicted_slots.append(_response_slots(call))
            counts["predict_nest_num"] += sum(1 for value in parameters.values() if _has_placeholder(value))

            same_id = [g for g in range(len(gold)) if gold[g]["api_id"] == call["api_id"]
                       and g in unmatched[gold[g]["api_id"]]]
            if not same_id:
                continue
            counts["correct_api_num"] += 1
            best_score: float = 0
            best_nest = 0
            best_gold = -1
            for g in same_id:
                param_score: float = 0
                nest_score = 0
                gold_parameters = gold[g]["parameters"]
                for name, value in parameters.items():
                    if name not in gold_parameters:
                        continue
                    gold_value = gold_parameters[name]
                    score: float = 0
                    producer = producer_of.get(str(gold_value))
                    if producer:
                        if isinstance(producer, tuple):
                            # Structural rule: the placeholder must sit, at the gold slot index, in the responses
                            # of an earlier predicted call already paired with the gold producer.
                            if isinstance(value, str):
                                gold_producer, _, gold_slot = producer
                                p_call, p_slot = _last_slot(predicted_slots, value)
                                if (p_slot == gold_slot and [gold_producer, p_call] in matches
                                        and _has_placeholder(value)):
                                    nest_score += 1
                                    score = 1
                        elif gold_value == value:
                            nest_score += 1
                            score = 1
                    else:
                        score = safe_value_score(gold_value, value)
                    param_score += score
                if param_score > best_score:
                    best_score, best_gold, best_nest = param_score, g, nest_score
            if best_score == 0:
                # No candidate scores anything: the first unmatched gold call with this id is taken.
                best_gold = same_id[0]
            counts["correct_nest_num"] += best_nest
            counts["correct_param_num"] += best_score
            matches.append([best_gold, p_index])
            unmatched[call["api_id"]].remove(best_gold)

        _count_errors(gold, predicted, predicted_slots, matches, task, errors)

    tree = (
        counts["correct_api_num"] == counts["gold_api_num"] == counts["predict_api_num"]
        and counts["correct_order_num"] == counts["predict_order_num"] == counts["gold_order_num"]
        and counts["correct_param_num"] == counts["predict_param_num"] == counts["gold_param_num"]
        and counts["gold_nest_num"] == counts["predict_nest_num"] == counts["correct_nest_num"]
    )
    result: dict[str, Any] = dict(counts)
    result["tree_acc"] = 1 if tree else 0
    result.update(errors)
    result["matches"] = sorted(matches, key=lambda pair: pair[0])
    result["predicted"] = predicted
    return result


def _count_errors(gold, predicted, predicted_slots, matches, task: str, errors: dict[str, int]) -> None:
    """The ``--eval_para_error`` counters over matched pairs, in gold order (as upstream sorts them)."""
    ordered = sorted(matches, key=lambda pair: pair[0])
    paired: dict[int, int] = {}
    for g_index, p_index in ordered:
        gold_call, predicted_call = gold[g_index], predicted[p_index]
        paired[g_index] = p_index
        predicted_parameters = predicted_call["parameters"]
        for key, value in gold_call["parameters"].items():
            if not _has_placeholder(value):
                if key in predicted_parameters and _has_placeholder(predicted_parameters[key]):
                    errors["nest_error_hallucination"] += 1
                continue
            location = None
            for producer, slots in enumerate(gold[i]["responses"] for i in range(len(gold))):
                for slot, placeholder in enumerate(slots):
                    # The producer must be paired with a predicted call *before* this one; last hit wins.
                    if placeholder == value and producer in paired and paired[producer] < p_index:
                        location = (paired[producer], slot)
            if location is None:
                # QUIRK: a nested gold parameter whose producer is unpaired (or paired later) counts no error.
                continue
            if key not in predicted_parameters:
                errors["nest_error_omission"] += 1
                continue
            given = predicted_parameters[key]
            if given == "UNK":
                errors["nest_error_omission"] += 1
            elif not _has_placeholder(given):
                errors["nest_error_unfind"] += 1
            else:
                slots = predicted_slots[location[0]]
                if location[1] >= len(slots) or slots[location[1]] != given:
                    errors["nest_error_wrong_place"] += 1

    lowered_task = task.lower()
    for g_index, p_index in ordered:
        gold_parameters = gold[g_index]["parameters"]
        predicted_parameters = predicted[p_index]["parameters"]
        errors["para_error_redundancy"] += sum(1 for key in predicted_parameters if key not in gold_parameters)
        # QUIRK: nested gold parameters go through this non-nested analysis too (placeholders compared by ROUGE).
        for key, value in gold_parameters.items():
            if key not in predicted_parameters or predicted_parameters[key] == "UNK":
                errors["para_error_omission"] += 1
                continue
            given = predicted_parameters[key]
            if safe_value_score(value, given) != 1:
                if str(value) == str(given):
                    errors["para_error_type"] += 1
                elif str(value).lower() in lowered_task:
                    errors["para_error_extaction"] += 1
                else:
                    errors["para_error_transformation"] += 1


# --------------------------------------------------------------------------------------------------------------
# Benchmark protocol: score
# --------------------------------------------------------------------------------------------------------------

#: Tie-break order for the dominant parameter-error kind (the nested kinds first: a wrong placeholder is also
#: counted as a non-nested "transformation" upstream, and the nested label says more).
_ERROR_PRIORITY = NEST_ERROR_KEYS + PARAM_ERROR_KEYS


def _json_safe(value: Any) -> Any:
    """Decoded Python literals can hold tuples, sets, bytes or complex numbers; reports need plain JSON."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return repr(value)


def _tool_error(gold, predicted, matches, offered: set[Any], counts: Mapping[str, Any]) -> str:
    """A tool-level label for a failed case with no parameter-error counter (the paper's qualitative categories;
    this rule is ours): a predicted id outside the gold pool is a *selection* (offered distractor) or a
    *hallucination* (never offered); a surplus call to a gold id is *redundancy*; an unpaired gold call is
    *omission*; otherwise the chain is mis-ordered, or the failure is partial credit on a value."""
    paired_predicted = {p for _, p in matches}
    paired_gold = {g for g, _ in matches}
    gold_ids = [call["api_id"] for call in gold]
    extra = [call for index, call in enumerate(predicted) if index not in paired_predicted]
    if any(call["api_id"] not in gold_ids for call in extra):
        hallucinated = any(_hashable(call["api_id"]) not in offered for call in extra if call["api_id"] not in gold_ids)
        return "tool_hallucination" if hallucinated else "tool_selection"
    if len(paired_gold) < len(gold):
        return "tool_omission"
    if extra:
        return "tool_redundancy"
    if not counts["correct_order_num"] == counts["predict_order_num"] == counts["gold_order_num"]:
        return "tool_order"
    if not counts["correct_nest_num"] == counts["predict_nest_num"] == counts["gold_nest_num"]:
        return "nest_other"
    return "param_partial_credit"


def _failure_type(result: Mapping[str, Any], tool_error: str | None) -> str:
    """The error type of a failed case: format failure, else the dominant upstream parameter-error counter, else
    the tool-level label (when no counter fired: wrong/extra/missing calls, order, partial credit)."""
    if not result["correct_format_num"]:
        return FORMAT_ERROR
    worst = max(_ERROR_PRIORITY, key=lambda key: (result[key], -_ERROR_PRIORITY.index(key)))
    if result[worst] > 0:
        return ERROR_TYPE_NAMES[worst]
    return tool_error or "other"


def _explain(result: Mapping[str, Any], gold, error_type: str | None) -> str:
    lines = []
    if not result["correct_format_num"]:
        lines.append("format failure: no list of {api_name, api_id, parameters: {...}} objects could be parsed "
                     "(first '[' to last ']', as a Python literal or JSON); only the gold counts are added")
    names = {"api": "Selection", "order": "Order", "param": "Parameter", "nest": "Nested"}
    for family in FAMILIES:
        correct = result[f"correct_{family}_num"]
        lines.append(f"{names[family]}: correct {round(correct, 6)} / predicted {result[f'predict_{family}_num']} "
                     f"/ gold {result[f'gold_{family}_num']}")
    if result["correct_format_num"]:
        lines.append(f"pairs (gold index, predicted index): {result['matches']}")
        errors = {ERROR_TYPE_NAMES[k]: result[k] for k in ERROR_KEYS if result[k]}
        if errors:
            lines.append(f"parameter errors: {errors}")
    lines.append("tree: " + ("pass (every family exact)" if result["tree_acc"] else f"fail ({error_type})"))
    lines.append("expected: " + json.dumps(
        [{"api_name": c["api_name"], "api_id": c["api_id"], "parameters": c["parameters"],
          "responses": c["responses"]} for c in gold], ensure_ascii=False))
    return "\n".join(lines)


def score(case: Case, generation: Generation) -> Verdict:
    gold = gold_calls(case.payload)
    result = evaluate(gold, case.payload["task"], generation.text)
    passed = bool(result["tree_acc"])
    tool_error = None
    if not passed and result["correct_format_num"]:
        offered = {_hashable(i) for i in candidate_ids(case)}
        tool_error = _tool_error(gold, result["predicted"], result["matches"], offered, result)
    error_type = None if passed else _failure_type(result, tool_error)
    counts = {"all_num": 1.0, "correct_format_num": float(result["correct_format_num"]),
              "tree_acc": float(result["tree_acc"])}
    counts.update({key: float(result[key]) for key in COUNT_KEYS})
    counts.update({key: float(result[key]) for key in ERROR_KEYS})
    depth = case.payload.get("depth") or max_depth(gold)
    structure = case.payload.get("structure_key")
    labels = {"depth": str(depth), "structure": "other" if structure is None else str(structure)}
    if tool_error:
        labels["tool_error"] = tool_error
    if depth == 1 and tl_failures.enabled(case):
        # TL-Training's categories (opted into by suite.yaml: libraries: [tl_failures]), on flat chains only (see
        # tl_category); passed flat cases carry the +1 reward so that the mean reward is taken over exactly the cases
        # in scope.
        if passed:
            counts["tl_reward"] = REWARDS[CORRECT]
        else:
            order_exact = result["correct_order_num"] == result["predict_order_num"] == result["gold_order_num"]
            labels["tl_category"], counts["tl_reward"] = tl_category(case, gold, result["predicted"], order_exact)
    return Verdict(
        passed=passed,
        error_type=error_type,
        explanation=_explain(result, gold, error_type),
        decoded=_json_safe(result["predicted"]),
        expected=_json_safe(gold),
        counts=counts,
        labels=labels,
        details={"matches": result["matches"], "truncated": generation.truncated,
                 "prompt_source": case.payload.get("prompt_source")},
    )
