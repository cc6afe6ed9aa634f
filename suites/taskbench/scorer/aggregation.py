"""TaskBench's figures from the per-case counts.

ToLeaP (``scripts/taskbench_eval.py`` ``evaluate``; the default protocol), per domain, **per-sample averages** over
every case of the domain (bad cases included, with their zeros), reported as fractions:
``rouge_1``, ``rouge_2``, ``name_f1`` (node F1), ``t_f1`` (argument-name F1), ``v_f1`` (name+value F1), ``link_f1``
(edge F1). The paper's representative TaskBench figure is the mean ``v_f1`` over the three domains
(``v_f1 (mean of domains)``, given when all three ran).

Upstream (``taskbench/evaluate.py``; protocol ``upstream``), per domain and per graph type (upstream's ``--splits
all``), **pooled** over the samples it scores: those inference.py wrote (``written``), the last line of a repeated id
(``superseded`` ones are out, as upstream keys samples by id), and, except for the steps, the ones that did not raise
(``supported``):

* ``node_micro_*``: sklearn ``precision_recall_fscore_support(labels=tools)`` after ``flatten``: per sample the
  union of predicted and label names, a name outside ``tool_desc.json`` counting nowhere; micro = from summed
  TP/FP/FN, macro = mean over EVERY tool of ``tool_desc.json`` of its F1 (precision, recall), a tool never predicted
  nor labelled counting 0 (sklearn's zero_division);
* ``argument_task_argname_binary_f1``, ``argument_task_argname_value_binary_f1``, ``link_binary_f1``: binary F1 =
  2TP/(2TP+FP+FN) over per-sample sets;
* ``edit_distance`` = 1 − mean over samples of ``Levenshtein.ratio`` of the tool-index sequences (lower is better);
* ``step_rouge1``, ``step_rouge2``: the MEAN of the per-sample F over the samples whose steps were read. Upstream
  prints ``load_metric("rouge")``'s ``.mid.fmeasure``: the median of an unseeded 1,000-sample bootstrap of that
  mean, which no two upstream runs reproduce exactly; the mean is its deterministic centre. ``rougeL``/``rougeLsum``
  and BERTScore (roberta-large, an embedding model) are not computed.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Iterable, Sequence

from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.contract.suite import CaseResult, Metric

from .loading import DOMAINS, GRAPH_TYPES

TOLEAP_METRICS = (
    ("rouge_1", "mean over samples of ROUGE-1 F (rouge_score, stemmer) of the \\n-joined steps"),
    ("rouge_2", "mean over samples of ROUGE-2 F (rouge_score, stemmer) of the \\n-joined steps"),
    ("name_f1", "mean over samples of the node-name set F1 (empty vs empty = 0)"),
    ("t_f1", "mean over samples of the '<task> - <arg name/type>' set F1"),
    ("v_f1", "mean over samples of the '<task> - <name>: <value>' set F1"),
    ("link_f1", "mean over samples of the link set F1 (consecutive nodes; dailylifeapis: source[i] - target[i+1]); "
                "ToLeaP's arithmetic: a sample with one node (dailylifeapis: one link) has no link on either side "
                "and empty vs empty scores 0, so even the reference answers score below 100%"),
)


def _by_domain(results: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    grouped: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        grouped[result.category].append(result)
    return grouped


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    upstream = [r for r in results if "written" in r.counts]
    toleap = [r for r in results if "written" not in r.counts]
    metrics: list[Metric] = []
    if toleap:
        metrics += toleap_metrics(toleap)
    if upstream:
        metrics += upstream_metrics(upstream)
    metrics += tl_failures.tl_metrics(results)
    return metrics


# -- ToLeaP ----------------------------------------------------------------------------------------------------
def toleap_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    metrics: list[Metric] = []
    grouped = _by_domain(results)
    v_f1: dict[str, float] = {}
    for domain in [d for d in DOMAINS if d in grouped]:
        cases = grouped[domain]
        for key, formula in TOLEAP_METRICS:
            values = [float(r.counts.get(key, 0.0)) for r in cases]
            value = _mean(values)
            if key == "v_f1" and value is not None:
                v_f1[domain] = value
            # a mean over samples: its sd gives reports a t interval (never the binomial one, whole sum or not)
            metrics.append(Metric(name=f"{domain} {key}", value=value, correct=sum(values), total=len(values),
                                  group="aggregate", formula=formula,
                                  sd=statistics.stdev(values) if len(values) > 1 else None))
        bad = sum(float(r.counts.get("bad_case", 0.0)) for r in cases)
        metrics.append(Metric(name=f"{domain} bad cases", value=bad / len(cases), correct=bad, total=len(cases),
                              group="counts", formula="outputs ToLeaP cannot parse (no JSON block / invalid JSON)",
                              better="lower"))
        crashed = sum(float(r.counts.get("toleap_crash", 0.0)) for r in cases)
        if crashed:
            metrics.append(Metric(name=f"{domain} outputs ToLeaP's evaluation would crash on", value=crashed / len(cases),
                                  correct=crashed, total=len(cases), group="counts", better="lower",
                                  formula="scored with the offending part empty (ToLeaP stops the whole run)"))
    if len(v_f1) == len(DOMAINS):
        metrics.append(Metric(name="v_f1 (mean of domains)", value=sum(v_f1.values()) / len(v_f1),
                              correct=None, total=len(v_f1), group="aggregate",
                              formula="mean of the three domains' v_f1 (the ToLeaP paper's TaskBench figure)"))
    return metrics


# -- upstream --------------------------------------------------------------------------------------------------
def _binary_f1(tp: float, fp: float, fn: float) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0


def _prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def upstream_figures(results: Sequence[CaseResult]) -> dict[str, float | None]:
    """evaluate.py's ``metric_dict`` for one group of cases (all of one domain, or one split of it)."""
    scored = [r for r in results if r.counts.get("written") and not r.counts.get("superseded")]
    steps = [r for r in scored if r.counts.get("steps")]
    graphs = [r for r in scored if r.counts.get("supported")]
    figures: dict[str, float | None] = {"all_samples": float(len(scored)), "step_supports": float(len(steps)),
                                        "node_supports": float(len(graphs)),
                                        "not_written": float(sum(1 for r in results if not r.counts.get("written")))}
    names = ("step_rouge1", "step_rouge2", "node_micro_precision_no_matching", "node_micro_recall_no_matching",
             "node_micro_f1_no_matching", "node_macro_precision_no_matching", "node_macro_recall_no_matching",
             "node_macro_f1_no_matching", "argument_task_argname_binary_f1_no_matching",
             "argument_task_argname_value_binary_f1_no_matching", "edit_distance", "link_binary_f1")
    figures.update({name: None for name in names})
    if not graphs:  # evaluate.py: "No supports, skip" (nothing else is written)
        return figures
    figures["step_rouge1"] = _mean([r.counts["rouge1"] for r in steps])
    figures["step_rouge2"] = _mean([r.counts["rouge2"] for r in steps])
    total = defaultdict(float)
    per_tool: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in graphs:
        for key, value in r.counts.items():
            if "|" in key:
                kind, tool = key.split("|", 1)
                per_tool[tool][kind] += value
            else:
                total[key] += value
    micro = _prf(total["node_tp"], total["node_fp"], total["node_fn"])
    tool_count = max(int(r.counts.get("tool_count", 0)) for r in graphs) or len(per_tool) or 1
    per = [_prf(c["node_tp"], c["node_fp"], c["node_fn"]) for c in per_tool.values()]
    macro = tuple(sum(p[i] for p in per) / tool_count for i in range(3))
    figures.update({
        "node_micro_precision_no_matching": micro[0], "node_micro_recall_no_matching": micro[1],
        "node_micro_f1_no_matching": micro[2], "node_macro_precision_no_matching": macro[0],
        "node_macro_recall_no_matching": macro[1], "node_macro_f1_no_matching": macro[2],
        "argument_task_argname_binary_f1_no_matching": _binary_f1(total["argname_tp"], total["argname_fp"],
                                                                  total["argname_fn"]),
        "argument_task_argname_value_binary_f1_no_matching": _binary_f1(total["argvalue_tp"], total["argvalue_fp"],
                                                                        total["argvalue_fn"]),
        "edit_distance": 1 - total["ed_ratio"] / len(graphs),
        "link_binary_f1": _binary_f1(total["link_tp"], total["link_fp"], total["link_fn"]),
    })
    return figures


_COUNTS = ("all_samples", "step_supports", "node_supports", "not_written")


def upstream_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    metrics: list[Metric] = []
    grouped = _by_domain(results)
    for domain in [d for d in DOMAINS if d in grouped]:
        groups = [("overall", grouped[domain])] + [
            (split, [r for r in grouped[domain] if split in r.keywords]) for split in GRAPH_TYPES]
        for split, cases in groups:
            if not cases:
                continue
            figures = upstream_figures(cases)
            prefix = f"{domain} {split}"
            for name, value in figures.items():
                if name in _COUNTS:
                    metrics.append(Metric(name=f"{prefix} {name}", value=value, unit="", group="supports",
                                          formula="samples (evaluate.py's supports; not_written: inference "
                                                  "failures, which upstream leaves out)"))
                else:
                    metrics.append(Metric(name=f"{prefix} {name}", value=value,
                                          group="aggregate" if split == "overall" else "by graph type",
                                          better="lower" if name == "edit_distance" else "higher",
                                          formula="pooled over the samples, as evaluate.py (see README.md)"))
    return metrics
