"""T-Eval's figures from the per-item scores.

* **Table 7 (ToLeaP)**, thunlp/ToLeaP @ b9507131 ``scripts/standard_teval.py`` over the ``<model>_-1_.json`` that
  ``scripts/evaluate.py`` writes: Instruct = (format + args_em) / 2 per format, both means rounded to 4 decimals
  first (``np.round(np.mean(...), decimals=4)`` in ``InstructEvaluator._post_process``); Plan = mean ``f1_score``;
  Reason = mean ``thought``; Retrieve = mean ``name``; Understand = mean ``args`` (JSON: ToLeaP's per-item args F1);
  Review = mean ``review_quality`` rounded to 4 decimals. The str cells come from the ``*_str`` files, the JSON cells
  of Reason/Retrieve/Understand from the one rru_json file. Shown x100 with 2 decimals (``f"{value * 100:.2f}%"``),
  which is how the report prints every figure.
* **Upstream overall**, open-compass/T-Eval @ 58f2240 ``teval/utils/convert_results.py``: each dimension is the mean
  of its str and JSON figures (Review: its one figure twice), Understand JSON with upstream's per-key score, and
  Overall the mean of the six (printed ``%.1f``).
* The ToLeaP paper's per-model mean of the 11 cells (spec section 10.3, derived there, not printed by any script).

A figure whose similarities could not be computed (no ``teval`` extra) is ``None`` with a formula that says so,
never 0; figures that depend on it (the means) are ``None`` too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

from pytest_toolbench.contract.suite import NOT_SCORED, CaseResult, Metric
from .loading import CATEGORIES
from .similarity import EXTRA_HINT, NOT_COMPUTED

NOT_COMPUTED_NOTE = f"NOT COMPUTED: needs sentence-transformers, networkx and the embedding model ({EXTRA_HINT})"
SHORT_NOTE = "NOT COMPUTED (no sentence-embedding model: the teval extra)"


def np_round4(value: float) -> float:
    """``np.round(value, decimals=4)``: ``rint(value * 10**4) / 10**4`` (round half to even on the scaled float)."""
    return round(value * 10000) / 10000


def _variant(result: CaseResult) -> str:
    """'' for the full English v2 files, else the file variant ('subset', 'zh', 'subset, zh') from the keywords."""
    return ", ".join(k for k in ("subset", "zh") if k in result.keywords)


class _Cell:
    """Mean of one per-item score over one category's items; ``None`` when some item lacks it (not computed)."""

    def __init__(self, rows: Sequence[CaseResult], key: str, rounded: bool = False) -> None:
        self.total = len(rows)
        self.missing = sum(1 for r in rows if key not in r.counts)
        self.key = key
        self.value: float | None = None
        if rows and not self.missing:
            mean = sum(float(r.counts[key]) for r in rows) / len(rows)
            self.value = np_round4(mean) if rounded else mean

    def note(self) -> str:
        return f"{SHORT_NOTE} for {self.missing} of {self.total} items" if self.missing else ""


def _mean(values: Iterable[float | None]) -> float | None:
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _metrics_for(rows_by_category: dict[str, list[CaseResult]], suffix: str) -> list[Metric]:
    group_table, group_up, group_detail = f"Table 7{suffix}", f"upstream{suffix}", f"detail{suffix}"
    grouped: dict[str, list[Metric]] = {group_table: [], group_up: [], group_detail: []}

    def rows(category: str) -> list[CaseResult]:
        return rows_by_category.get(category, [])

    def add(name: str, cell: _Cell | float | None, group: str, formula: str, total: int | None = None) -> None:
        if isinstance(cell, _Cell):
            if not cell.total:
                return
            value, total, note = cell.value, cell.total, cell.note()
        else:
            value, note = cell, ""
        grouped[group].append(Metric(name=f"{name}{suffix}", value=value, total=total, group=group,
                                     formula=f"{note}; {formula}" if note else formula))

    # ---- Table 7 cells (ToLeaP) ---------------------------------------------------------------------------------
    cells: dict[str, float | None] = {}
    instruct: dict[str, float | None] = {}
    for fmt, label in (("str", "String"), ("json", "JSON")):
        members = rows(f"instruct_{fmt}")
        if members:
            fmt_cell, em_cell = _Cell(members, "format", rounded=True), _Cell(members, "args_em", rounded=True)
            add(f"Instruct {label} format_metric", fmt_cell, group_detail,
                "mean of format (1 if the output parses) over the format's items, rounded to 4 decimals")
            add(f"Instruct {label} args_em_metric", em_cell, group_detail,
                "mean of ([action equal] + #gold args equal) / (#gold args + 1), rounded to 4 decimals")
            instruct[fmt] = (fmt_cell.value + em_cell.value) / 2  # type: ignore[operator]
            add(f"Instruct {label}", instruct[fmt], group_table, "(format_metric + args_em_metric) / 2",
                len(members))
            cells[f"Instruct {label}"] = instruct[fmt]
    plan: dict[str, float | None] = {}
    for fmt, label in (("str", "String"), ("json", "JSON")):
        members = rows(f"plan_{fmt}")
        if members:
            cell = _Cell(members, "f1")
            add(f"Plan {label}", cell, group_table, "mean f1_score of the matched plan steps (bertscore match)")
            add(f"Plan {label} precision", _Cell(members, "precision"), group_detail, "mean precision")
            add(f"Plan {label} recall", _Cell(members, "recall"), group_detail, "mean recall")
            add(f"Plan {label} parse_rate", _Cell(members, "parse_rate"), group_detail,
                "items whose prediction and gold both parse as a plan")
            plan[fmt] = cells[f"Plan {label}"] = cell.value
    rru = rows("rru_json")
    per_dimension: dict[str, dict[str, float | None]] = {"reason": {}, "retrieve": {}, "understand": {}}
    for dimension, key in (("reason", "thought"), ("retrieve", "name"), ("understand", "args")):
        members = rows(f"{dimension}_str")
        if members:
            cell = _Cell(members, key)
            add(f"{dimension.capitalize()} String", cell, group_table, f"mean {key} over {dimension}_str")
            add(f"{dimension.capitalize()} String parse_rate", _Cell(members, "parse_rate"), group_detail,
                "items with a prediction (always 1 for str)")
            per_dimension[dimension]["str"] = cells[f"{dimension.capitalize()} String"] = cell.value
    if rru:
        for dimension, key, formula in (
                ("reason", "thought", "mean cosine similarity of the thought (all-mpnet-base-v2, clamped at 0)"),
                ("retrieve", "name", "mean [name == gold name]"),
                ("understand", "args_f1", "mean args F1 of the correct keys (ToLeaP's evaluate(); both empty: 1)")):
            cell = _Cell(rru, key)
            add(f"{dimension.capitalize()} JSON", cell, group_table, f"{formula} over rru_json")
            per_dimension[dimension]["json"] = cells[f"{dimension.capitalize()} JSON"] = cell.value
        per_key = _Cell(rru, "args_per_key")
        add("Understand JSON (upstream per-key)", per_key, group_detail,
            "mean of #correct gold keys / (#gold keys + 1e-5) (T-Eval's evaluator; both empty: 1)")
        add("Understand JSON args precision", _Cell(rru, "args_precision"), group_detail, "ToLeaP args_precision")
        add("Understand JSON args recall", _Cell(rru, "args_recall"), group_detail, "ToLeaP args_recall")
        add("RRU JSON parse_rate", _Cell(rru, "parse_rate"), group_detail, "items whose JSON object parses")
    review = rows("review_str")
    review_value: float | None = None
    if review:
        cell = _Cell(review, "review_quality", rounded=True)
        add("Review String", cell, group_table, "mean [answer letter == gold], rounded to 4 decimals")
        add("Review String parse_rate", _Cell(review, "parse_rate", rounded=True), group_detail,
            "items with an answer letter A-E, rounded to 4 decimals")
        review_value = cells["Review String"] = cell.value
    order = ["Instruct String", "Instruct JSON", "Plan String", "Plan JSON", "Reason String", "Reason JSON",
             "Retrieve String", "Retrieve JSON", "Understand String", "Understand JSON", "Review String"]
    if all(name in cells for name in order):
        add("Table 7 mean (11 cells)", _mean(cells[n] for n in order), group_table,
            "mean of the 11 cells (the ToLeaP paper's per-model average, derived in the spec; not a script's output)",
            sum(len(v) for v in rows_by_category.values()))
    # ---- upstream convert_results.py ----------------------------------------------------------------------------
    understand_upstream = dict(per_dimension["understand"])
    if rru:
        understand_upstream["json"] = _Cell(rru, "args_per_key").value
    dims = {
        "Instruct": instruct, "Plan": plan, "Reason": per_dimension["reason"],
        "Retrieve": per_dimension["retrieve"], "Understand": understand_upstream,
    }
    finals: list[float | None] = []
    complete = all(set(v) == {"str", "json"} for v in dims.values()) and review
    for name, pair in dims.items():
        if set(pair) == {"str", "json"}:
            value = _mean([pair["str"], pair["json"]])
            add(f"{name} (upstream)", value, group_up, "mean of the String and JSON figures"
                + ("; JSON Understand scored per key, as T-Eval's evaluator" if name == "Understand" else ""))
            finals.append(value)
    if review:
        add("Review (upstream)", review_value, group_up, "mean of [review_str, review_str]")
        finals.append(review_value)
    if complete:
        add("Overall (upstream)", _mean(finals), group_up,
            "mean of the six dimensions (teval/utils/convert_results.py, printed there with 1 decimal)")
    position = {f"{name}{suffix}": i for i, name in enumerate(order + ["Table 7 mean (11 cells)"])}
    table = sorted(grouped[group_table], key=lambda m: position.get(m.name, len(position)))
    return table + grouped[group_up] + grouped[group_detail]


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    by_variant: dict[str, dict[str, list[CaseResult]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        by_variant[_variant(result)][result.category].append(result)
    metrics: list[Metric] = []
    for variant in sorted(by_variant, key=lambda v: (v != "", v)):
        suffix = f" [{variant}]" if variant else ""
        metrics += _metrics_for(by_variant[variant], suffix)
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    for category in [c for c in CATEGORIES if c in by_category] + sorted(set(by_category) - set(CATEGORIES)):
        members = by_category[category]
        # A skipped item (not scored here: no embedding model) has no verdict to count, as BFCL's skipped cases:
        # the figure is over the scored items, N/A when there are none.
        scored = [r for r in members if r.error_type != NOT_SCORED]
        passed = sum(1 for r in scored if r.passed)
        skipped_here = len(members) - len(scored)
        note = f"; {skipped_here} of {len(members)} items skipped (not scored: {SHORT_NOTE})" if skipped_here else ""
        metrics.append(Metric(name=category, value=passed / len(scored) if scored else None,
                              correct=passed if scored else None, total=len(scored) if scored else None,
                              group="category", formula="items with full marks (see the README) / items" + note))
    skipped = sum(1 for r in results if r.labels.get("similarity") == NOT_COMPUTED)
    if skipped:
        metrics.append(Metric(name="items whose similarity was not computed", value=skipped / len(results),
                              correct=skipped, total=len(results), group="not computed",
                              formula=f"{NOT_COMPUTED_NOTE}: these items were judged on parsing only"))
    return metrics
