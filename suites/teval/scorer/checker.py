"""T-Eval's per-item rules (the evaluators' per-sample metrics) and the verdict of an item.

Sources, read at open-compass/T-Eval @ 58f22406404d7e2a4f36856a19c7f4dc28a0a5f0 (``teval/evaluators/*.py``) and
thunlp/ToLeaP @ b95071311ff9a888303f819282e4d0872ce4c3fa (``scripts/evaluator.py``, the copy that produced the
ToLeaP paper's Table 7). The two agree on every per-item rule except the JSON Understand score (``args``): upstream
scores per gold key, ``sum(str(pred[k]) == str(gold[k])) / (len(gold) + 1e-5)``; ToLeaP's ``evaluate()`` scores the
F1 of those correct keys. Both are computed for every rru_json item (``args_per_key`` and ``args_f1``).

Per item, as the evaluators compute it before averaging:

* Instruct (``InstructEvaluator``): ``<fmt>_format_metric`` 1 if the output parses, and ``<fmt>_args_em_metric`` =
  ([action equal] + #gold args with an equal value) / (#gold args + 1), both 0 when it does not parse.
* Plan (``PlanningEvaluator``, ``bertscore`` strategy; ``plan.py``): precision, recall and f1 of the longest
  increasing run of a max-weight matching between predicted and gold steps (edges: 0.75 cos(name) + 0.25 cos(args) >
  0.8), and ``parse_rate``.
* Reason / Retrieve / Understand (``ReasonRetrieveUnderstandEvaluator``): ``thought`` (cosine), ``name`` (exact for
  json; for str the gold name is in the text and every ``\\w+\\.\\w+`` / ``FinishAction`` in it equals the gold name),
  ``args`` and ``parse_rate``.
* Review (``ReviewEvaluator``): ``review_quality`` (the letter after the first ``:`` equals the answer) and
  ``parse_rate``.

An item *passes* when it gets the full score of the figure it contributes to (similarities within
:data:`SIMILARITY_TOLERANCE` of 1); the official figures are the means in :mod:`.aggregation`. A similarity that
cannot be computed (no ``teval`` extra) is left out of the item's counts, labelled ``similarity: not_computed``, and
the item is judged on the parts that could be computed (see the README).
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import FORMAT_ERROR, NOT_SCORED, Case, Generation, Verdict
from .decoding import FormatLoadError, format_load, jsonable, literal_eval, parse_string, split_special_tokens
from .loading import settings
from .plan import plan_format_load, score_plan
from .similarity import NOT_COMPUTED, get_encoder

#: A cosine this close to 1 counts as full marks for an item's pass (identical texts give 1 +- float32 noise).
SIMILARITY_TOLERANCE = 1e-4


# ================================================================================================================
# Instruct


def instruct_json_parse(text: str, template: Mapping[str, Any]) -> dict[str, Any] | None:
    """``InstructEvaluator.json_format_parse``: any failure (parse, missing key, wrong type) gives None."""
    try:
        pred = format_load(text)
        new = {"thought": pred[template["thought"]], "action": pred[template["action"]]}
        args = pred[template["args"]]
        new["args"] = args if isinstance(args, dict) else {}
    except Exception:  # noqa: BLE001 - upstream: ``except Exception``
        return None
    return new


def instruct_string_parse(text: str, template: Mapping[str, Any]) -> dict[str, Any] | None:
    """``InstructEvaluator.string_format_parse``: the template as a regular expression, the args a Python literal
    (else ``{}``). Upstream crashes the whole evaluation when the template is not a valid expression or the
    fallback branch meets a repeated key; here such an output is unparsed (None)."""
    parse_template = (template["thought_start"] + "{thought}" + template["thought_end"]
                      + template["action_start"] + "{action}" + template["action_end"]
                      + template["args_start"] + "{args}" + template["args_end"])
    try:
        res = parse_string(parse_template, text, allow_newline=True)
    except Exception:  # noqa: BLE001 - re.error / ValueError from the template: an upstream crash
        return None
    if res is None:
        return None
    try:
        args = literal_eval(res["args"].strip())
        res["args"] = args if isinstance(args, dict) else {}
        res["action"] = res["action"].strip()
        return res
    except Exception:  # noqa: BLE001 - upstream: bare ``except``
        try:
            return {"thought": res["thought"], "action": res["action"].strip(), "args": {}}
        except Exception:  # noqa: BLE001 - upstream crash (a key repeated in the template)
            return None


def args_em(gt_action: Any, pred_action: Any, gt_args: Mapping[str, Any], pred_args: Mapping[str, Any]) -> float:
    """``InstructEvaluator.compute_args_em_metric`` (Python ``==``: ``1 == 1.0 == True``, ``[1] != (1,)``)."""
    count = 0.0
    if gt_action == pred_action:
        count += 1.0
    num_args = len(gt_args) + 1  # 1 means action name match
    for gt_key in gt_args:
        if pred_args.get(gt_key, "") == gt_args[gt_key]:
            count += 1.0
    return count / num_args


def score_instruct(payload: Mapping[str, Any], text: str, options: Mapping[str, Any]) -> Verdict:
    fmt = payload["format"]  # "json" or "string"
    template = payload["template"]
    gt = payload["ground_truth"]
    pred = instruct_json_parse(text, template) if fmt == "json" else instruct_string_parse(text, template)
    expected = {"action": gt["action"], "args": gt["args"]}
    if pred is None:
        if fmt == "json":
            why = ("no JSON/Python object with the keys "
                   + ", ".join(repr(template[k]) for k in ("thought", "action", "args")))
        else:
            why = "the output does not match the template " + repr(
                "".join(template[k] + ("{" + k.split("_")[0] + "}" if k.endswith("start") else "")
                        for k in ("thought_start", "thought_end", "action_start", "action_end", "args_start",
                                  "args_end")))
        return Verdict(False, FORMAT_ERROR, why, expected=expected, counts={"format": 0.0, "args_em": 0.0})
    em = args_em(gt["action"], pred["action"], gt["args"], pred["args"])
    decoded = {"action": jsonable(pred["action"]), "args": jsonable(pred["args"])}
    counts = {"format": 1.0, "args_em": em}
    if em == 1.0:
        return Verdict(True, decoded=decoded, expected=expected, counts=counts)
    if gt["action"] != pred["action"]:
        error, why = "wrong_action", f"action {jsonable(pred['action'])!r}, expected {gt['action']!r}"
    else:
        wrong = [k for k in gt["args"] if pred["args"].get(k, "") != gt["args"][k]]
        error, why = "wrong_args", f"args {', '.join(map(repr, wrong))} differ"
    return Verdict(False, error, f"{why}; args_em = {em:.4f}", decoded=decoded, expected=expected, counts=counts)


# ================================================================================================================
# Reason / Retrieve / Understand

_A_DOT_B = re.compile(r"\w+\.\w+")
_FINISH = re.compile(r"FinishAction")


def rru_format_load(data: Any, default_prompt_type: str) -> dict[str, Any]:
    """``ReasonRetrieveUnderstandEvaluator.format_load``: the dict between the first ``{`` and the last ``}``;
    thought and name as ``str`` ('' when missing); args a dict (json, else ``{}``) or ``str`` (str, else '')."""
    try:
        loaded = format_load(data, start_character="{", end_character="}")
    except Exception:  # noqa: BLE001
        return {}
    if type(loaded) is not dict:
        return {}
    prepared: dict[str, Any] = {}
    for key in ("thought", "name"):
        try:
            prepared[key] = str(loaded[key])
        except Exception:  # noqa: BLE001
            prepared[key] = ""
    if default_prompt_type == "json":
        args = loaded.get("args")
        prepared["args"] = args if isinstance(args, dict) else {}
    else:
        try:
            prepared["args"] = str(loaded["args"])
        except Exception:  # noqa: BLE001
            prepared["args"] = ""
    return prepared


def metric_keys(default_prompt_type: str, evaluator: str) -> tuple[str, ...]:
    """The keys ``_post_process`` / ``evaluate()`` average for this file."""
    if default_prompt_type == "json":
        return ("thought", "name", "args", "parse_rate")
    return {"reason": ("thought", "parse_rate"), "retrieve": ("name", "parse_rate"),
            "understand": ("args", "parse_rate")}.get(evaluator, ("parse_rate",))


def str_name_score(pred: str, gold: str) -> int:
    """Retrieve (str): the gold name occurs in the text, and every ``a.b`` token and ``FinishAction`` in it equals
    the gold name."""
    if gold not in pred:
        return 0
    found = _A_DOT_B.findall(pred) + _FINISH.findall(pred)
    return 0 if any(name != gold for name in found) else 1


def json_args_scores(pred_args: Mapping[str, Any], gt_args: Mapping[str, Any]) -> dict[str, float]:
    """Both JSON Understand scores of one item: upstream's per-key score and ToLeaP's precision/recall/F1."""
    correct = sum(1 for k in gt_args if k in pred_args and str(pred_args[k]) == str(gt_args[k]))
    per_key = correct / (len(gt_args) + 1e-5)
    if len(gt_args) == 0 and len(pred_args) == 0:
        per_key = 1.0
    if len(gt_args) == 0 and len(pred_args) != 0:
        per_key = 0.0
    if not pred_args and not gt_args:
        precision = recall = f1 = 1.0
    elif not pred_args or not gt_args:
        precision = recall = f1 = 0.0
    else:
        precision, recall = correct / len(pred_args), correct / len(gt_args)
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"args_per_key": float(per_key), "args_precision": float(precision), "args_recall": float(recall),
            "args_f1": float(f1)}


def score_rru(payload: Mapping[str, Any], text: str, options: Mapping[str, Any]) -> Verdict:
    evaluator, default_prompt_type, fmt = payload["evaluator"], payload["default_prompt_type"], payload["format"]
    gt = rru_format_load(payload["ground_truth"], default_prompt_type)
    if fmt == "json":
        pred = rru_format_load(text, default_prompt_type)
        if pred == {} or gt == {}:
            pred = {}
    else:
        pred = {}
        if evaluator == "reason":
            pred["thought"] = text
        if evaluator == "retrieve":
            pred["name"] = text
        if evaluator == "understand":
            pred["args"] = text
    keys = metric_keys(default_prompt_type, evaluator)
    counts: dict[str, float] = {"parse_rate": 1.0 if pred else 0.0}
    for key in keys:
        if key == "args" and default_prompt_type == "json":
            counts.update(args_per_key=0.0, args_precision=0.0, args_recall=0.0, args_f1=0.0)
        elif key != "parse_rate":
            counts[key] = 0.0
    labels: dict[str, str] = {}
    details: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    if "thought" in pred and "thought" in gt:
        encoder, reason = get_encoder(options["embedding_model"])
        if encoder is None:
            counts.pop("thought", None)
            labels["similarity"] = NOT_COMPUTED
            details["not_computed"] = reason
        else:
            counts["thought"] = encoder.pair(pred["thought"], gt["thought"])
            if counts["thought"] < 1 - SIMILARITY_TOLERANCE:
                problems.append(("low_thought", f"thought similarity {counts['thought']:.4f}"))
    if "name" in pred and "name" in gt:
        if default_prompt_type == "json":
            counts["name"] = 1.0 if pred["name"] == gt["name"] else 0.0
        else:
            counts["name"] = float(str_name_score(pred["name"], gt["name"]))
        if counts["name"] != 1.0:
            problems.append(("wrong_name", f"name {pred['name']!r}, expected {gt['name']!r}"))
    if "args" in pred and "args" in gt:
        if isinstance(gt["args"], dict):
            counts.update(json_args_scores(pred["args"], gt["args"]))
            if counts["args_f1"] != 1.0:
                problems.append(("wrong_args", f"args F1 {counts['args_f1']:.4f} (per key "
                                               f"{counts['args_per_key']:.4f})"))
        else:
            stripped = pred["args"].strip("'").strip('"')
            counts["args"] = float(gt["args"] == stripped)
            if counts["args"] != 1.0:
                problems.append(("wrong_args", f"args {stripped!r}, expected {gt['args']!r}"))
    expected = {k: jsonable(gt[k]) for k in ("thought", "name", "args") if k in gt and _scored(k, keys)}
    decoded = {k: jsonable(v) for k, v in pred.items()} if fmt == "json" else None
    if not pred:
        why = ("the ground truth does not parse" if gt == {} else
               "no JSON object with thought/name/args found" if fmt == "json" else "the format is not scored")
        return Verdict(False, FORMAT_ERROR if gt != {} else "unparsable_ground_truth", why, decoded=decoded,
                       expected=expected, counts=counts, labels=labels, details=details)
    if problems:
        return Verdict(False, problems[0][0], "; ".join(p[1] for p in problems), decoded=decoded, expected=expected,
                       counts=counts, labels=labels, details=details)
    if labels:  # everything else is right, but the thought similarity, part of the verdict, could not be computed
        return Verdict(False, NOT_SCORED, f"thought similarity not computed ({details['not_computed']}); the rest "
                                          "of the item is right", decoded=decoded, expected=expected, counts=counts,
                       labels=labels, details=details)
    return Verdict(True, None, "", decoded=decoded, expected=expected, counts=counts, labels=labels, details=details)


def _scored(key: str, keys: Sequence[str]) -> bool:
    return key in keys


# ================================================================================================================
# Review


def review_parse(text: str, fmt: str) -> Any:
    """``ReviewEvaluator._process_response``: json -> ``{'review': is_finished}`` when it is True/False (Python
    ``in [True, False]``, so 1 and 0.0 pass); otherwise the first character after the first ``:`` if it is A-E."""
    if fmt == "json":
        try:
            data = format_load(text)
        except Exception:  # noqa: BLE001
            return None
        try:
            new = {"review": data["is_finished"]}
            assert new["review"] in [True, False]
        except Exception:  # noqa: BLE001 - upstream catches the AssertionError too
            return None
        return new
    rest = text[text.find(":") + 1:].strip()
    if len(rest) > 0 and rest[0] in ["A", "B", "C", "D", "E"]:
        return rest[0]
    return None


def score_review(payload: Mapping[str, Any], text: str, options: Mapping[str, Any]) -> Verdict:
    answer = payload["ground_truth"]["answer"]
    pred = review_parse(text, payload["format"])
    if pred is None:
        return Verdict(False, FORMAT_ERROR, "no answer letter A-E after the first ':'" if payload["format"] != "json"
                       else "no JSON object with a boolean is_finished", expected=jsonable(answer),
                       counts={"parse_rate": 0.0, "review_quality": 0.0})
    quality = 1.0 if pred == answer else 0.0
    counts = {"parse_rate": 1.0, "review_quality": quality}
    if quality == 1.0:
        return Verdict(True, decoded=jsonable(pred), expected=jsonable(answer), counts=counts)
    return Verdict(False, "wrong_answer", f"answer {jsonable(pred)!r}, expected {jsonable(answer)!r}",
                   decoded=jsonable(pred), expected=jsonable(answer), counts=counts)


# ================================================================================================================
# Entry points

_SCORERS = {"instruct": score_instruct, "plan": score_plan, "reason": score_rru, "retrieve": score_rru,
            "understand": score_rru, "rru": score_rru, "review": score_review}


def output_text(case: Case, generation: Generation, options: Mapping[str, Any]) -> str:
    text = generation.text if isinstance(generation.text, str) else ""
    if options["postprocess"] == "split_special_tokens":
        text = split_special_tokens(text)
    return text


def score(case: Case, generation: Generation) -> Verdict:
    payload = case.payload
    options = settings(case)  # the suite options (postprocess, embedding_model), from the suite's context
    text = output_text(case, generation, options)
    verdict = _SCORERS[payload["evaluator"]](payload, text, options)
    if generation.truncated:
        verdict.labels["truncated"] = "yes"
    return verdict


# ================================================================================================================
# Gold: an output built from the ground truth that each evaluator reads back as the ground truth


def gold_output(case: Case) -> str:
    payload = case.payload
    evaluator, fmt, gt = payload["evaluator"], payload["format"], payload["ground_truth"]
    if evaluator == "instruct":
        template = payload["template"]
        thought = gt.get("thought", "")
        if fmt == "json":
            return json.dumps({template["thought"]: thought, template["action"]: gt["action"],
                               template["args"]: gt["args"]}, ensure_ascii=False)
        # The args must read back with literal_eval: the Python literal of the gold dict (JSON's true/null would not).
        return (template["thought_start"] + str(thought) + template["thought_end"]
                + template["action_start"] + str(gt["action"]) + template["action_end"]
                + template["args_start"] + repr(gt["args"]) + template["args_end"])
    if evaluator == "plan":
        steps = plan_format_load(gt)
        if fmt == "json":
            return gt if isinstance(gt, str) else json.dumps(steps, ensure_ascii=False)
        # str: one line per step (a trailing FinishAction is dropped by the matcher anyway); ". " and newlines in
        # the args would split a step, so they become spaces.
        steps = sorted(steps, key=lambda s: s["id"])
        if steps and steps[-1]["name"] == "FinishAction":
            steps = steps[:-1]
        return "\n".join(f"{s['name']} {s['args']}".replace(". ", " ").replace("\n", " ") for s in steps)
    if evaluator == "review":
        answer = gt["answer"]
        if fmt == "json":
            return json.dumps({"is_finished": answer}) if isinstance(answer, bool) else str(answer)
        return f"Answer: {answer}"
    prepared = rru_format_load(gt, payload["default_prompt_type"])
    if fmt == "json":
        return json.dumps({"thought": prepared.get("thought", ""), "name": prepared.get("name", ""),
                           "args": prepared.get("args", {})}, ensure_ascii=False)
    if evaluator == "reason":
        return prepared.get("thought", "")
    if evaluator == "retrieve":
        return prepared.get("name", "")
    if evaluator == "understand":
        return prepared.get("args", "")
    return ""


__all__ = ["score", "gold_output", "instruct_json_parse", "instruct_string_parse", "args_em", "plan_format_load",
           "plan_str_parse", "match_plans", "rru_format_load", "str_name_score", "json_args_scores", "review_parse",
           "FormatLoadError"]
