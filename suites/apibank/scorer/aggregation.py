"""The figures: ToLeaP's Table 9 (dialogue score per level and their weighted average) and the offline API-call
accuracy.

Table 9 (ToLeaP, arXiv 2505.11833): per level, ``dialog_score = float(np.mean(rougel_scores))`` over that level's
dialogue samples (``scripts/apibank_eval.py``), printed ×100 with 2 decimals; the "weighted average" column is
``(214·L1 + 50·L2) / 264``, i.e. weighted by the number of dialogue *files* of each level (214 and 50), computed from
the two printed values. That formula is not in ToLeaP's code; it is the one that reproduces all 15 rows of the table
within 0.005 (weighting by samples, 375/103, does not: up to 0.28 off). Here the per-level figures are rounded to 2
decimals of a percentage as printed, and the weighted average is taken of those rounded figures and rounded the
same way. The weights are the number of dialogue files of each level in the data read (214 and 50 on the pinned
data, also when a run selects only some items).

The mean itself: upstream sums in ``os.listdir`` order with numpy's pairwise summation; the order is not
reproducible, and the difference is in the last bits of a float, far below the printed precision.

API-call accuracy (offline): correct API samples / API samples, per level (upstream runs one level per invocation)
and over both levels. See :mod:`.api_check` for what "offline" leaves unchecked.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric

LEVEL_NAMES = {"level_1": "level-1-given-desc", "level_2": "level-2-toolsearcher"}


def _kind(result: CaseResult) -> str:
    return (result.labels or {}).get("kind") or ("api_call" if "api_correct" in result.counts else "dialog")


def table_figure(fraction: float) -> float:
    """A fraction as Table 9 prints it: ×100, 2 decimals."""
    return round(fraction * 100, 2)


def weighted_average(figures: dict[str, float], weights: dict[str, float]) -> float:
    """Table 9's weighted average of the printed level figures, printed the same way."""
    return round(sum(weights[c] * figures[c] for c in figures) / sum(weights[c] for c in figures), 2)


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    results = [r for r in results if r.counts]
    metrics: list[Metric] = []
    dialog = [r for r in results if _kind(r) == "dialog"]
    printed: dict[str, float] = {}
    weights: dict[str, float] = {}
    for category, folder in LEVEL_NAMES.items():
        rows = [r for r in dialog if r.category == category]
        if not rows:
            continue
        total = sum(float(r.counts.get("rouge_l", 0.0)) for r in rows)
        printed[category] = table_figure(total / len(rows))
        weights[category] = max(float(r.counts.get("level_files", 0.0)) for r in rows) or float(
            len({r.case_id.rpartition("#")[0] for r in rows}))
        metrics.append(Metric(
            name=f"{category} dialog score (Table 9)", value=printed[category] / 100, correct=None, total=len(rows),
            group="table9", formula=f"mean rounded ROUGE-L F over the {folder} dialogue samples (ToLeaP "
                                    "dialog_score), x100 to 2 decimals"))
    if len(printed) == len(LEVEL_NAMES):
        weight_sum = sum(weights.values())
        weighted = weighted_average(printed, weights)
        formula = " + ".join(f"{int(weights[c])}·{c}" for c in printed) + f") / {int(weight_sum)}"
        metrics.append(Metric(name="weighted dialog score (Table 9)", value=weighted / 100,
                              group="aggregate", formula="(" + formula + " of the printed level figures, by "
                                                         "dialogue files; 2 decimals"))
    if dialog:
        passed = sum(1 for r in dialog if r.passed)
        metrics.append(Metric(name="dialog samples with ROUGE-L >= pass threshold", value=passed / len(dialog),
                              correct=passed, total=len(dialog), group="dialog",
                              formula="items whose rounded ROUGE-L F reaches dialog_pass_threshold (upstream's "
                                      "'Low score' line, 0.2) / dialogue items; not a published figure"))
        errors = Counter(r.error_type for r in dialog if not r.passed and r.error_type)
        for error, count in sorted(errors.items()):
            metrics.append(Metric(name=f"dialog {error}", value=count / len(dialog), correct=count,
                                  total=len(dialog), group="dialog", formula="dialogue items of this outcome / all"))
    api = [r for r in results if _kind(r) == "api_call"]
    for category, folder in LEVEL_NAMES.items():
        rows = [r for r in api if r.category == category]
        if rows:
            correct = sum(float(r.counts.get("api_correct", 0.0)) for r in rows)
            metrics.append(Metric(name=f"{category} API-call accuracy (offline)", value=correct / len(rows),
                                  correct=correct, total=len(rows), group="api_call",
                                  formula=f"correct / API samples of {folder}; the simulator's output is not run "
                                          "(see the suite README)"))
    if api:
        correct = sum(float(r.counts.get("api_correct", 0.0)) for r in api)
        metrics.append(Metric(name="API-call accuracy (offline)", value=correct / len(api), correct=correct,
                              total=len(api), group="aggregate",
                              formula="correct / API samples, both levels pooled"))
        errors = Counter(r.error_type for r in api if not r.passed and r.error_type)
        for error, count in sorted(errors.items()):
            metrics.append(Metric(name=f"API-call {error}", value=count / len(api), correct=count, total=len(api),
                                  group="api_call", formula="API samples with this upstream error / all"))
    metrics.extend(tl_metrics([r for r in api]))
    return metrics
