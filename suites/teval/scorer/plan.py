"""T-Eval's Plan rules (``teval/evaluators/planning_evaluator.py``, ``PlanningEvaluator`` with the ``bertscore``
strategy, at open-compass/T-Eval @ 58f22406404d7e2a4f36856a19c7f4dc28a0a5f0; ToLeaP's copy agrees): the plan read from
JSON or from text lines, the max-weight matching of predicted and gold steps on name and args similarity, and the
item's verdict. The other evaluators' rules, and the verdict of any item, are ``checker.py``."""

from __future__ import annotations

import copy
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import FORMAT_ERROR, NOT_SCORED, Verdict
from .decoding import format_load
from .similarity import EXTRA_HINT, NOT_COMPUTED, Encoder, get_encoder

#: PlanningEvaluator defaults (name_weight, args_weight, match_threshold).
NAME_WEIGHT, ARGS_WEIGHT, MATCH_THRESHOLD = 0.75, 0.25, 0.8


def plan_format_load(data: Any) -> list[dict[str, Any]]:
    """``PlanningEvaluator.format_load``: the list between the first ``[`` and the last ``]``, each step as
    ``{name: str, id: int, args: str}``; any failure gives ``[]``."""
    try:
        steps = format_load(data, start_character="[", end_character="]")
    except Exception:  # noqa: BLE001
        return []
    if type(steps) is not list:
        return []
    steps = list(steps)  # upstream rewrites the elements in place; the ground truth is never mutated here
    for i in range(len(steps)):
        try:
            steps[i] = {"name": str(steps[i]["name"]), "id": int(steps[i]["id"]), "args": str(steps[i]["args"])}
        except Exception:  # noqa: BLE001
            return []
    return steps


def plan_str_parse(text: str, api_list: Sequence[str]) -> list[dict[str, Any]]:
    """``PlanningEvaluator._process_response`` for ``str``: lines (``". "`` also ends a line); in each, the API name
    that occurs first (ties: the earlier one in ``API_list``) names a step whose args are the whole line."""
    steps: list[dict[str, Any]] = []
    for line in text.replace(". ", "\n").split("\n"):
        first, action = 1e9, ""
        for api_name in api_list:
            at = line.find(api_name)
            if at != -1 and at < first:
                first, action = at, api_name
        if action != "":
            steps.append({"id": len(steps), "name": action, "args": line})
    return steps


def match_plans(pred_plan: list[dict[str, Any]], gt_plan: list[dict[str, Any]],
                encoder: Encoder) -> dict[str, Any]:
    """``PlanningEvaluator.bertscore_match`` with upstream's default weights and threshold.

    QUIRKS kept: a trailing ``FinishAction`` is dropped from both plans (after sorting by id); the matched count is
    the longest strictly increasing run of matched gold indices, and because every unmatched step starts a run of
    length 1 it is at least 1 for any non-empty prediction. DEVIATION: upstream raises (``max()`` of an empty array,
    or a division by zero) when a plan is only a ``FinishAction``, which stops the whole evaluation; here that item
    scores 0 (``details.upstream_crash``).
    """
    import networkx as nx  # part of the teval extra (a torch dependency)

    zero = {"precision": 0.0, "recall": 0.0, "f1_score": 0.0}
    if len(pred_plan) == 0 or len(gt_plan) == 0:
        return zero
    pred_plan = copy.deepcopy(sorted(pred_plan, key=lambda x: x["id"]))
    gt_plan = copy.deepcopy(sorted(gt_plan, key=lambda x: x["id"]))
    if pred_plan[-1]["name"] == "FinishAction":
        pred_plan = pred_plan[:-1]
    if gt_plan[-1]["name"] == "FinishAction":
        gt_plan = gt_plan[:-1]
    len_pred, len_gt = len(pred_plan), len(gt_plan)
    if len_pred == 0 or len_gt == 0:
        return {**zero, "upstream_crash": True}
    names = encoder.similarity([s["name"] for s in pred_plan], [s["name"] for s in gt_plan])
    args = encoder.similarity([str(s["args"]) for s in pred_plan], [str(s["args"]) for s in gt_plan])
    scores = [[names[i][j] * NAME_WEIGHT + args[i][j] * ARGS_WEIGHT for j in range(len_gt)] for i in range(len_pred)]
    graph = nx.Graph()
    for i in range(len_pred):  # same insertion order as upstream (it decides ties in networkx)
        for j in range(len_gt):
            if scores[i][j] > MATCH_THRESHOLD:
                graph.add_edge(i, str(j), weight=scores[i][j])
    mapping: dict[int, int] = {}
    for key in nx.max_weight_matching(graph):
        if type(key[0]) is int:
            mapping[int(key[0])] = int(key[1])
        else:
            mapping[int(key[1])] = int(key[0])
    for i in range(len_pred):
        mapping.setdefault(i, -1)
    dp = [1.0] * len_pred
    for i in range(len_pred):
        for j in range(i):
            if mapping[i] == -1 or mapping[j] == -1:
                continue
            if mapping[i] > mapping[j]:
                dp[i] = max(dp[i], dp[j] + 1)
    correct = int(max(dp))
    recall, precision = correct / len_gt, correct / len_pred
    return {"precision": precision, "recall": recall, "f1_score": 2 * recall * precision / (recall + precision),
            "matched": correct, "pairs": sorted(mapping.items()), "scores": [[round(v, 4) for v in r] for r in scores]}


def plan_encoder(model: str) -> tuple[Encoder | None, str | None]:
    """The encoder for plan matching, which also needs networkx (both come with the ``teval`` extra)."""
    import importlib.util

    if importlib.util.find_spec("networkx") is None:
        return None, f"networkx is not installed; {EXTRA_HINT}"
    return get_encoder(model)


def score_plan(payload: Mapping[str, Any], text: str, options: Mapping[str, Any]) -> Verdict:
    fmt = payload["format"]
    gt_plan = plan_format_load(payload["ground_truth"])
    if fmt == "json":
        pred_plan = plan_format_load(text)
    else:
        pred_plan = plan_str_parse(text, payload["api_list"] or [])
    parsed = bool(pred_plan) and bool(gt_plan)
    expected = [{"name": s["name"], "args": s["args"]} for s in gt_plan]
    decoded = [{"name": s["name"], "args": s["args"]} for s in pred_plan]
    counts = {"parse_rate": 1.0 if parsed else 0.0}
    if not gt_plan:  # a ground truth that does not parse: every output scores 0 (upstream too)
        counts.update(precision=0.0, recall=0.0, f1=0.0)
        return Verdict(False, "unparsable_ground_truth", "the ground truth plan does not parse", decoded=decoded,
                       counts=counts)
    if not pred_plan:
        counts.update(precision=0.0, recall=0.0, f1=0.0)
        what = "a JSON list of {name, id, args} steps" if fmt == "json" else "a line naming an API of API_list"
        return Verdict(False, FORMAT_ERROR, f"no plan found: expected {what}", expected=expected, counts=counts)
    encoder, reason = plan_encoder(options["embedding_model"])
    if encoder is None:
        return Verdict(False, NOT_SCORED, f"plan similarity not computed ({reason}); the output parses as a plan of "
                                          f"{len(pred_plan)} steps", decoded=decoded, expected=expected,
                       counts=counts, labels={"similarity": NOT_COMPUTED}, details={"not_computed": reason})
    result = match_plans(pred_plan, gt_plan, encoder)
    counts.update(precision=result["precision"], recall=result["recall"], f1=result["f1_score"])
    details = {k: result[k] for k in ("matched", "pairs", "scores", "upstream_crash") if k in result}
    if result["precision"] == 1.0 and result["recall"] == 1.0:
        return Verdict(True, decoded=decoded, expected=expected, counts=counts, details=details)
    return Verdict(False, "plan_mismatch",
                   f"f1 {result['f1_score']:.4f} (precision {result['precision']:.4f}, recall {result['recall']:.4f}): "
                   f"{result.get('matched', 0)} matched steps in order, of {len(pred_plan)} predicted and "
                   f"{len(gt_plan)} gold (trailing FinishAction dropped)",
                   decoded=decoded, expected=expected, counts=counts, details=details)
