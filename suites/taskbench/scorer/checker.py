"""One case's verdict: the per-sample figures of the protocol followed (``toleap.py`` or ``upstream.py``), the counts
the aggregation pools or averages, and the item's pass.

Neither ToLeaP nor JARVIS has a per-sample pass; the item passes when the prediction's graph is the reference
answer's, as the protocol's own scorer sees both: the same set of node names, of links, of argument names and of
argument values, each computed from the reference answer with the PREDICTION-side rules (the answer a model would
have to write). The steps text (ROUGE only) is not part of the pass. Failures, first that applies:
``format_error`` (ToLeaP: no JSON object, invalid JSON, a top-level array, or an output its evaluation would crash
on; upstream: inference.py would have written no prediction, or evaluate.py skips the sample), ``wrong_nodes``,
``wrong_links``, ``wrong_argument_names``, ``wrong_argument_values``.

Because both sides pass through the prediction-side rules, the gold answer passes every case, also where ToLeaP's
label-side rules differ (a label argument that is a number or a list: ToLeaP's ``t_f1``/``v_f1`` of the gold answer
is then below 1, and ``details.gold_ceiling`` says so).

Counts, ToLeaP (averaged per domain by ``aggregation``): ``rouge_1``, ``rouge_2``, ``name_f1``, ``t_f1``, ``v_f1``,
``link_f1`` (per-sample values), ``bad_case`` (ToLeaP's bad-case count), ``toleap_crash``. Upstream (pooled):
``written``, ``superseded`` (a later line repeats the id: upstream keeps the last), ``steps`` with ``rouge1`` and
``rouge2``, ``supported`` with ``node_tp/fp/fn``, per-tool ``node_tp|<tool>`` ..., ``argname_tp/fp/fn``,
``argvalue_tp/fp/fn``, ``link_tp/fp/fn``, ``ed_ratio``, and ``upstream_crash``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Generation, Verdict

from .tl import classify as tl_classify
from .toleap import as_sets, f1, label_representation, representation, sample_scores
from .upstream import lcs_ratio, sample as upstream_sample
from .decoding import PARSED_RESULT, toleap_result, upstream_result
from .prompt import protocol_of
from .rouge import rouge_n

WRONG_NODES = "wrong_nodes"
WRONG_LINKS = "wrong_links"
WRONG_ARGUMENT_NAMES = "wrong_argument_names"
WRONG_ARGUMENT_VALUES = "wrong_argument_values"

_SET_ERRORS = (("names", WRONG_NODES, "node names"), ("links", WRONG_LINKS, "links"),
               ("arg_names", WRONG_ARGUMENT_NAMES, "argument names"),
               ("arg_values", WRONG_ARGUMENT_VALUES, "argument values"))


def gold_output(case: Case) -> str:
    """The reference answer as the model would write it: ToLeaP's label JSON (``{"task_steps", "task_nodes",
    "task_links"}``); for the upstream protocol, that result already parsed (no output cleaning applies)."""
    label = case.payload["label"]
    text = json.dumps({key: label[key] for key in ("task_steps", "task_nodes", "task_links")}, ensure_ascii=False)
    return PARSED_RESULT + text if protocol_of(case) == "upstream" else text


def _json_safe(value: Any, depth: int = 0) -> Any:
    """Decoded model output for the report: non-finite floats as text, very deep or long values clipped."""
    if depth > 20:
        return "..."
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, list):
        return [_json_safe(v, depth + 1) for v in value[:200]]
    if isinstance(value, str) and len(value) > 2000:
        return value[:2000] + f"... [{len(value)} characters]"
    return value


def _clip(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(x[:120]) for x in items[:limit])
    return "{" + shown + (f", ... {len(items) - limit} more" if len(items) > limit else "") + "}"


def _compare(predicted: Mapping[str, list[str]], expected: Mapping[str, list[str]]) -> tuple[str | None, str]:
    for key, error_type, what in _SET_ERRORS:
        if predicted[key] != expected[key]:
            missing = [x for x in expected[key] if x not in predicted[key]]
            extra = [x for x in predicted[key] if x not in expected[key]]
            return error_type, (f"{what} differ: expected {_clip(expected[key])}, got {_clip(predicted[key])} "
                                f"(missing {_clip(missing)}, unexpected {_clip(extra)})")
    return None, ""


def score(case: Case, generation: Generation) -> Verdict:
    text = generation.text if isinstance(generation.text, str) else ""
    if protocol_of(case) == "upstream":
        return _score_upstream(case, text)
    return _score_toleap(case, text)


# -- ToLeaP ----------------------------------------------------------------------------------------------------
def _score_toleap(case: Case, text: str) -> Verdict:
    payload = case.payload
    temporal = payload["tools"]["dependency_type"] == "temporal"
    label = payload["label"]
    result, bad, is_list = toleap_result(text)
    sample = sample_scores(result, label, temporal)
    predicted_sets = as_sets(sample["predicted"])
    expected_sets = as_sets(representation(label, temporal))
    crashes = sample["predicted"]["crashes"]
    counts = dict(sample["scores"])
    counts.update(bad_case=1.0 if bad else 0.0, toleap_crash=1.0 if crashes else 0.0)
    details: dict[str, Any] = {"protocol": "toleap", "scores": dict(sample["scores"])}
    ceiling = _toleap_ceiling(label, temporal)
    if ceiling:
        details["gold_ceiling"] = ceiling
    if crashes:
        details["toleap_crash"] = crashes
    if bad or is_list:
        error_type: str | None = FORMAT_ERROR
        explanation = (f"ToLeaP bad case ({bad}): scored with empty steps, nodes and links" if bad else
                       "the first JSON block is an array: ToLeaP reads no task_steps/task_nodes/task_links from it "
                       "(all scores 0; not among ToLeaP's bad cases)")
    else:
        error_type, explanation = _compare(predicted_sets, expected_sets)
        if error_type and crashes:
            error_type = FORMAT_ERROR
            explanation = (f"ToLeaP's evaluation would stop on this output ({'; '.join(f'{k}: {v}' for k, v in crashes.items())}); "
                           f"scored with that part empty. {explanation}")
    passed = error_type is None
    verdict = Verdict(passed=passed, error_type=error_type, explanation=explanation or "graph matches the reference",
                      decoded=_json_safe(result), expected=expected_sets, counts=counts, details=details)
    if not passed:
        _add_tl(verdict, case, result, unparseable=bool(bad) or is_list)
    return verdict


def _toleap_ceiling(label: Mapping[str, Any], temporal: bool) -> dict[str, float]:
    """The reference answer's own ToLeaP scores where below 1 (label-side rules no prediction can meet, or empty
    label sets, which ToLeaP scores 0)."""
    echo = representation(label, temporal)
    gold = label_representation(label, temporal)
    ceiling = {"name_f1": f1(echo["names"], gold["names"]), "t_f1": f1(echo["arg_names"], gold["arg_names"]),
               "v_f1": f1(echo["arg_values"], gold["arg_values"]), "link_f1": f1(echo["links"], gold["links"])}
    return {key: value for key, value in ceiling.items() if value < 1}


# -- upstream --------------------------------------------------------------------------------------------------
def _score_upstream(case: Case, text: str) -> Verdict:
    payload = case.payload
    tools = payload["tools"]
    temporal = tools["dependency_type"] == "temporal"
    counts: dict[str, float] = {"superseded": 1.0 if payload.get("superseded") else 0.0}
    details: dict[str, Any] = {"protocol": "upstream"}
    result, not_written = upstream_result(text)
    if not_written:
        counts["written"] = 0.0
        verdict = Verdict(passed=False, error_type=FORMAT_ERROR,
                          explanation=f"{not_written}; the case is in no upstream figure", counts=counts,
                          details=details)
        _add_tl(verdict, case, None, unparseable=True)
        return verdict
    counts["written"] = 1.0
    sample = upstream_sample(result, payload["label"], temporal, tools["output_types"])
    if sample["steps"] is not None:
        predicted_text, label_text = sample["steps"]
        counts.update(steps=1.0, rouge1=rouge_n(label_text, predicted_text, 1, stem=False)[2],
                      rouge2=rouge_n(label_text, predicted_text, 2, stem=False)[2])
    graph = sample["graph"]
    if graph is None:
        counts["supported"] = 0.0
        verdict = Verdict(passed=False, error_type=FORMAT_ERROR, decoded=_json_safe(result),
                          explanation=f"evaluate.py skips this sample (Parsing Error: {sample['skipped']})",
                          counts=counts, details=details)
        _add_tl(verdict, case, result, unparseable=False)
        return verdict
    counts["supported"] = 1.0
    counts.update(_pool_counts(graph, tools["names"]))
    if sample["crash"]:
        counts["upstream_crash"] = 1.0
        details["upstream_crash"] = f"task_links: {sample['crash']} (evaluate.py would stop; counted as no links)"
    echo = upstream_sample(_label_result(payload["label"]), payload["label"], temporal, tools["output_types"])["graph"]
    predicted_sets, expected_sets = _upstream_sets(graph), _upstream_sets(echo) if echo else None
    if expected_sets is None:  # the label itself cannot be scored by evaluate.py: a data defect
        error_type, explanation = FORMAT_ERROR, "evaluate.py cannot score the reference answer of this case"
    else:
        error_type, explanation = _compare(predicted_sets, expected_sets)
    verdict = Verdict(passed=error_type is None, error_type=error_type,
                      explanation=explanation or "graph matches the reference", decoded=_json_safe(result),
                      expected=expected_sets, counts=counts, details=details)
    if error_type is not None:
        _add_tl(verdict, case, result, unparseable=False)
    return verdict


def _label_result(label: Mapping[str, Any]) -> dict[str, Any]:
    return {key: label[key] for key in ("task_steps", "task_nodes", "task_links")}


def _upstream_sets(graph: Mapping[str, Any]) -> dict[str, list[str]]:
    return {"names": sorted(set(graph["pred_names"])),
            "links": sorted({f"{s} -> {t}" for s, t in graph["pred_links"]}),
            "arg_names": sorted(set(graph["pred_arg_names"])),
            "arg_values": sorted(set(graph["pred_arg_values"]))}


def _binary(prefix: str, predicted: list[Any], gold: list[Any]) -> dict[str, float]:
    p, g = set(predicted), set(gold)
    return {f"{prefix}_tp": float(len(p & g)), f"{prefix}_fp": float(len(p - g)), f"{prefix}_fn": float(len(g - p))}


def _pool_counts(graph: Mapping[str, Any], tool_names: list[str]) -> dict[str, float]:
    """What the sample adds to evaluate.py's ``flatten`` + sklearn pools."""
    counts: dict[str, float] = {"tool_count": float(len(tool_names))}  # macro averages over every tool
    known = set(tool_names)
    predicted, gold = set(graph["pred_names"]), set(graph["label_names"])
    for kind, members in (("tp", predicted & gold), ("fp", predicted - gold), ("fn", gold - predicted)):
        members = members & known  # names outside tool_desc count nowhere (flatten puts 0 on both sides)
        counts[f"node_{kind}"] = float(len(members))
        for name in members:
            counts[f"node_{kind}|{name}"] = 1.0
    counts.update(_binary("argname", graph["pred_arg_names"], graph["label_arg_names"]))
    counts.update(_binary("argvalue", graph["pred_arg_values"], graph["label_arg_values"]))
    counts.update(_binary("link", graph["pred_links"], graph["label_links"]))
    # evaluate.py "ed": tool_map (1-based positions, "<PAD>" -> -1, unknown -> 0), Levenshtein.ratio per sample
    tool_map = {name: i + 1 for i, name in enumerate(tool_names)}
    tool_map["<PAD>"] = -1
    counts["ed_ratio"] = lcs_ratio([tool_map.get(n, 0) for n in graph["pred_names"]],
                                            [tool_map.get(n, 0) for n in graph["label_names"]])
    return counts


def _add_tl(verdict: Verdict, case: Case, result: Any, unparseable: bool) -> None:
    outcome = tl_classify(case, result, unparseable)
    if outcome is not None:
        verdict.labels["tl_category"] = outcome[0]
        verdict.counts["tl_reward"] = outcome[1]
