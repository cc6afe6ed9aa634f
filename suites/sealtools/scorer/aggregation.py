"""The official figures of ``calculate_score_ToolLearning``, per split, pooled over the split's samples (micro).

Upstream computes one result per split file (``result_ToolLearning_<split>.json``; ToLeaP
``eval_result/<model>/<split>.json``):

* ``AMOUNT`` = correct_format / number of samples (the "format accuracy"), **only if** correct_format > 0;
* ``P_api`` = correct_api / predict_api, ``R_api`` = correct_api / gold_api, ``F1_api`` = 2PR/(P+R), **only if**
  correct_api · predict_api · gold_api > 0; the same for ``_param``.

A figure upstream leaves out (a zero count) is reported here with no value (``None``), never as 0. Values are the
raw fractions; ToLeaP's Table 4 shows them ×100 with two decimals, which is how the report prints percentages.
ToLeaP's representative SealTools metric is the mean ``F1_param`` over the three splits.

QUIRK: samples without any output (a replay file that lacks them) carry no counts and are left out of every figure,
as ToLeaP's ``zip`` of outputs and samples leaves them out.

Also reported: the same seven figures per split and difficulty (Seal-Tools' own ``eval.py`` scores easy and
difficult samples apart), the item pass rate per category, ToLeaP's error-type counters (ToLeaP protocol), the
outputs on which the official scorer would have crashed, and TL-Training's categories on single-call samples.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric
from .checker import TOLEAP_ERROR_KEYS, TOLEAP_ERROR_NAMES, UPSTREAM_CRASH
from .loading import DIFFICULTIES, SPLITS

FAMILIES = ("api", "param")


def split_of(result: CaseResult) -> str:
    return result.category.rsplit("_", 1)[0]


def _added(parts: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The key-wise sum of counts or of totals. The figures' counts are whole numbers (the checker's integer
    counters as floats, as upstream's Python ints are), so the order of addition changes no figure; only
    ``tl_reward`` can be a fraction, and no figure here reads its total."""
    totals: Counter = Counter()
    for part in parts:
        for key, value in part.items():
            totals[key] += value
    return dict(totals)


def _sums(results: Iterable[CaseResult]) -> dict[str, float]:
    return _added(result.counts for result in results)


def official_figures(totals: dict[str, float]) -> dict[str, float | None]:
    """``calculate_score_ToolLearning``'s result dict from pooled counts; omitted keys map to None."""
    figures: dict[str, float | None] = {}
    samples = totals.get("all", 0)
    correct_format = totals.get("correct_format", 0)
    figures["AMOUNT"] = correct_format / samples if correct_format > 0 else None
    for family in FAMILIES:
        correct = totals.get(f"correct_{family}", 0)
        predicted = totals.get(f"predict_{family}", 0)
        gold = totals.get(f"gold_{family}", 0)
        if correct * predicted * gold > 0:
            precision = correct / predicted
            recall = correct / gold
            figures[f"P_{family}"] = precision
            figures[f"R_{family}"] = recall
            figures[f"F1_{family}"] = 2 * precision * recall / (precision + recall)
        else:
            figures[f"P_{family}"] = figures[f"R_{family}"] = figures[f"F1_{family}"] = None
    return figures


def _figure_metrics(totals: dict[str, float], prefix: str, group: str, f1_only: bool = False) -> list[Metric]:
    """The seven figures (``f1_only``: AMOUNT and the two F1, for the shorter views)."""
    figures = official_figures(totals)
    omitted = "; none if a count is 0 (upstream leaves it out)"
    metrics = [Metric(f"{prefix}AMOUNT", figures["AMOUNT"], totals.get("correct_format", 0), totals.get("all", 0),
                      group, "parsed outputs / samples" + omitted)]
    for family in FAMILIES:
        correct = totals.get(f"correct_{family}", 0)
        if f1_only:
            metrics.append(Metric(f"{prefix}F1_{family}", figures[f"F1_{family}"], None, None, group,
                                  f"2·P·R/(P+R) of the pooled {family} counts" + omitted))
            continue
        metrics += [
            Metric(f"{prefix}P_{family}", figures[f"P_{family}"], correct, totals.get(f"predict_{family}", 0), group,
                   f"correct_{family} / predict_{family}" + omitted),
            Metric(f"{prefix}R_{family}", figures[f"R_{family}"], correct, totals.get(f"gold_{family}", 0), group,
                   f"correct_{family} / gold_{family}" + omitted),
            Metric(f"{prefix}F1_{family}", figures[f"F1_{family}"], None, None, group,
                   "2·P·R/(P+R)" + omitted),
        ]
    return metrics


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    results = [r for r in results if r.counts and "all" in r.counts]
    # Each record's counts are read once (the paired tests call this thousands of times: the swap test makes
    # 2 x 1,999 pseudo-runs): a category's totals are summed from its records, a split's from its categories'.
    by_split: dict[str, list[CaseResult]] = {}
    by_category: dict[str, list[CaseResult]] = {}
    for r in results:
        by_split.setdefault(split_of(r), []).append(r)
        by_category.setdefault(r.category, []).append(r)
    category_totals = {category: _sums(members) for category, members in by_category.items()}
    split_totals = {split: _added(category_totals[c] for c in by_category if split_of(by_category[c][0]) == split)
                    for split in by_split}
    metrics: list[Metric] = []
    splits = [s for s in SPLITS if s in by_split]
    f1_param: list[float | None] = []
    for split in splits:
        totals = split_totals[split]
        metrics += _figure_metrics(totals, f"{split} ", "split")
        f1_param.append(official_figures(totals)["F1_param"])
    if splits:
        value = None if any(v is None for v in f1_param) else sum(f1_param) / len(f1_param)  # type: ignore[arg-type]
        what = "the three splits" if len(splits) == len(SPLITS) else f"the splits run ({', '.join(splits)})"
        metrics.append(Metric("mean F1_param", value, None, len(splits), "aggregate",
                              f"mean of F1_param over {what} (ToLeaP's representative SealTools metric)"))
    for split in splits:
        for difficulty in DIFFICULTIES:
            members = by_category.get(f"{split}_{difficulty}")
            if members:
                metrics += _figure_metrics(category_totals[f"{split}_{difficulty}"], f"{split} {difficulty}: ",
                                           "difficulty", f1_only=True)
    for split in splits:
        for difficulty in DIFFICULTIES:
            members = by_category.get(f"{split}_{difficulty}")
            if members:
                passed = sum(1 for r in members if r.passed)
                metrics.append(Metric(f"{split}_{difficulty}", passed / len(members), passed, len(members),
                                      "category", "samples with correct == predicted == gold for APIs and parameters"))
    crashes = sum(r.counts.get(UPSTREAM_CRASH, 0) for r in results)
    if crashes:
        metrics.append(Metric("outputs the official scorer crashes on", crashes / len(results), crashes, len(results),
                              "aggregate", "samples whose output makes calculate_score_ToolLearning raise (upstream "
                                           "stops the run); scored here as format failures"))
    for split in splits:
        members = [r for r in by_split[split] if "toleap_bad_case" in r.counts]
        if not members:
            continue
        totals = split_totals[split] if len(members) == len(by_split[split]) else _sums(members)
        for key in TOLEAP_ERROR_KEYS:
            metrics.append(Metric(f"{split} ToLeaP {TOLEAP_ERROR_NAMES[key]}", totals.get(key, 0), None, None,
                                  "toleap_errors", "ToLeaP's 错误类型统计 counter (occurrences)", unit=""))
        bad = totals.get("toleap_bad_case", 0)
        metrics.append(Metric(f"{split} ToLeaP bad cases", bad / len(members), bad, len(members), "toleap_errors",
                              "samples ToLeaP writes to its bad-case file (any error counter fired)"))
    metrics += tl_metrics([r for r in results if "tl_reward" in r.counts])
    return metrics
