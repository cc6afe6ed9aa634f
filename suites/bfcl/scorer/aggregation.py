"""BFCL v4 summary figures, following ``bfcl_eval/eval_checker/eval_runner_helper.py`` (bfcl-eval 2026.3.23).

A category that did not run counts as accuracy 0 in every aggregate (upstream shows it as "N/A" but still uses 0);
in the count-weighted Live figure it weighs with its full upstream entry count. A category that ran only in part (a
case skipped here, or one without a verdict: ``not_run`` after an interrupted run or a crashed worker, counted as
failed) is incomplete too: every figure over an incomplete category carries ``Metric.incomplete``, so a gate on it
is missed. The official Overall is always a
number; its formula line says whether it is complete (every one of the 22 scored categories ran) or which categories
it counts as 0. A clearly labelled figure renormalised over the components that ran in full is given next to it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import NOT_RUN, NOT_SCORED, CaseResult, Metric
from .categories import ALL_CATEGORIES, LIVE_AST, MEMORY, MULTI_TURN, NON_LIVE_AST, WEB_SEARCH
from .format_sensitivity import metrics as format_sensitivity_metrics
from .unpassable import metrics as unpassable_metrics
from .tl import SINGLE_CALL_CATEGORIES

#: Entries per category in the pinned data; used as the weight of a live category that did not run.
UPSTREAM_COUNTS = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
    "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258, "live_multiple": 1053, "live_parallel": 16,
    "live_parallel_multiple": 24, "live_irrelevance": 884, "live_relevance": 16,
    "multi_turn_base": 200, "multi_turn_miss_func": 200, "multi_turn_miss_param": 200, "multi_turn_long_context": 200,
    "web_search_base": 100, "web_search_no_snippet": 100, "memory_kv": 155, "memory_vector": 155,
    "memory_rec_sum": 155,
}
SIMPLE = ("simple_python", "simple_java", "simple_javascript")
OVERALL_WEIGHTS = {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
#: The Overall without the web-search categories (they call the live SerpAPI): what a CI without a key gates on.
OVERALL_WITHOUT_WEB_SEARCH_FORMULA = (
    "NOT the official Overall: its weights without web search's half of Agentic, renormalised: (10*NonLive + "
    "10*Live + 10*Irrelevance + 30*MultiTurn + 20*Memory) / 80; complete when every category but web_search_base "
    "and web_search_no_snippet ran in full")


def official_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    """The figures of ``eval_runner_helper`` (see the module docstring)."""
    correct: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    skipped: dict[str, int] = defaultdict(int)
    no_verdict: dict[str, int] = defaultdict(int)  # not_run: selected, but stopped before its verdict
    for result in results:
        if result.error_type == NOT_SCORED:  # could not run here (a missing key or extra): as if it had not run
            skipped[result.category] += 1
            continue
        if result.error_type == NOT_RUN:  # counted as a failure (0), and the category did not run in full
            no_verdict[result.category] += 1
        total[result.category] += 1
        correct[result.category] += 1 if result.passed else 0

    def accuracy(category: str) -> float:
        return correct[category] / total[category] if total[category] else 0.0

    def ran_all(categories: Sequence[str]) -> bool:
        return all(total[c] and not skipped[c] and not no_verdict[c] for c in categories)

    missing = [c for c in ALL_CATEGORIES if not ran_all([c])]

    def incomplete(categories: Sequence[str]) -> str:
        """Why a figure over ``categories`` is incomplete ("" when every one of them ran in full)."""
        gaps = [c for c in categories if c in missing]
        return f"INCOMPLETE: {', '.join(gaps)} did not run in full (counted as 0)" if gaps else ""

    metrics: list[Metric] = []
    for category in ALL_CATEGORIES:
        ran = total[category] > 0
        metrics.append(Metric(
            name=category,
            value=accuracy(category) if ran else None,
            correct=correct[category] if ran else None,
            total=total[category] if ran else None,
            group="category",
            formula="correct / total",
            incomplete=(f"INCOMPLETE: {no_verdict[category]} of {total[category]} cases have no verdict (not_run, "
                        "counted as failed)") if no_verdict[category] else "",
        ))

    simple = (accuracy("simple_python") + accuracy("simple_java") + accuracy("simple_javascript")) / 3
    non_live = (simple + accuracy("multiple") + accuracy("parallel") + accuracy("parallel_multiple")) / 4
    live_weight = {c: total[c] if total[c] else UPSTREAM_COUNTS[c] for c in LIVE_AST}
    live_correct = sum(correct[c] for c in LIVE_AST)
    live_total = sum(live_weight.values())
    live = live_correct / live_total
    irrelevance = (accuracy("irrelevance") + accuracy("live_irrelevance")) / 2
    relevance = accuracy("live_relevance")
    multi_turn = sum(accuracy(c) for c in MULTI_TURN) / len(MULTI_TURN)
    web_search = sum(accuracy(c) for c in WEB_SEARCH) / len(WEB_SEARCH)
    memory = sum(accuracy(c) for c in MEMORY) / len(MEMORY)
    agentic = (web_search + memory) / 2
    parts = {"non_live": non_live, "live": live, "irrelevance": irrelevance, "multi_turn": multi_turn,
             "agentic": agentic}
    overall = sum(OVERALL_WEIGHTS[name] * value for name, value in parts.items()) / sum(OVERALL_WEIGHTS.values())

    if missing:
        completeness = (f"INCOMPLETE: {len(missing)} of {len(ALL_CATEGORIES)} categories did not run (in full) and "
                        f"count as 0 ({', '.join(missing)})")
    else:
        completeness = "complete: every scored category ran"

    metrics += [
        Metric("simple", simple, group="aggregate", incomplete=incomplete(SIMPLE),
               formula="mean(simple_python, simple_java, simple_javascript), unweighted; missing = 0"),
        Metric("non_live_ast", non_live, group="aggregate", incomplete=incomplete(NON_LIVE_AST),
               formula="mean(Simple, multiple, parallel, parallel_multiple), unweighted; missing = 0"),
        Metric("live_ast", live, correct=live_correct, total=live_total, group="aggregate",
               incomplete=incomplete(LIVE_AST),
               formula="sum(correct) / sum(total) over live_simple, live_multiple, live_parallel, "
                       "live_parallel_multiple; a missing category weighs its full upstream count at 0"),
        Metric("irrelevance_detection", irrelevance, group="aggregate",
               incomplete=incomplete(("irrelevance", "live_irrelevance")),
               formula="mean(irrelevance, live_irrelevance), unweighted; missing = 0"),
        Metric("relevance_detection", relevance,
               correct=correct["live_relevance"] if total["live_relevance"] else None,
               total=total["live_relevance"] if total["live_relevance"] else None, group="aggregate",
               incomplete=incomplete(("live_relevance",)),
               formula="live_relevance accuracy (not part of Overall)"),
        Metric("multi_turn", multi_turn, group="aggregate", incomplete=incomplete(MULTI_TURN),
               formula="mean(multi_turn_base, multi_turn_miss_func, multi_turn_miss_param, multi_turn_long_context), "
                       "unweighted; missing = 0"),
        Metric("web_search", web_search, group="aggregate", incomplete=incomplete(WEB_SEARCH),
               formula="mean(web_search_base, web_search_no_snippet), unweighted; missing = 0"),
        Metric("memory", memory, group="aggregate", incomplete=incomplete(MEMORY),
               formula="mean(memory_kv, memory_vector, memory_rec_sum), unweighted; missing = 0"),
        Metric("agentic", agentic, group="aggregate", formula="mean(Web search, Memory), unweighted",
               incomplete=incomplete(WEB_SEARCH + MEMORY)),
        Metric("overall_official", overall, group="aggregate", incomplete=completeness if missing else "",
               formula="0.1*NonLive + 0.1*Live + 0.1*Irrelevance + 0.3*MultiTurn + 0.4*Agentic; " + completeness),
    ]
    # The Overall a run without SerpAPI can have in full: the official weights with web search's share of Agentic
    # (20 of 100) left out and the rest renormalised, (10 NL + 10 Live + 10 Irrelevance + 30 MultiTurn + 20 Memory)
    # / 80. A fixed formula (unlike overall_over_categories_ran), so two runs' figures are the same quantity.
    no_web = [c for c in ALL_CATEGORIES if c not in WEB_SEARCH]
    weights_without_web = {**{k: v for k, v in OVERALL_WEIGHTS.items() if k != "agentic"},
                           "memory": OVERALL_WEIGHTS["agentic"] / 2}
    values_without_web = {**{k: v for k, v in parts.items() if k != "agentic"}, "memory": memory}
    metrics.append(Metric(
        "overall_without_web_search",
        sum(weights_without_web[k] * values_without_web[k] for k in weights_without_web)
        / sum(weights_without_web.values()),
        group="aggregate", incomplete=incomplete(no_web),
        formula=OVERALL_WITHOUT_WEB_SEARCH_FORMULA))
    components = []
    if ran_all(NON_LIVE_AST):
        components.append(("non_live", non_live))
    if ran_all(LIVE_AST):
        components.append(("live", live))
    if ran_all(("irrelevance", "live_irrelevance")):
        components.append(("irrelevance", irrelevance))
    if ran_all(MULTI_TURN):
        components.append(("multi_turn", multi_turn))
    if ran_all(WEB_SEARCH + MEMORY):
        components.append(("agentic", agentic))
    if components and missing:
        weight = sum(OVERALL_WEIGHTS[name] for name, _ in components)
        ran_value = sum(OVERALL_WEIGHTS[name] * value for name, value in components) / weight
        metrics.append(Metric(
            "overall_over_categories_ran", ran_value, group="aggregate",
            formula="NOT the official Overall: the official weights renormalised over the fully run components ("
                    + ", ".join(name for name, _ in components) + ")",
        ))
    return metrics


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """BFCL's official figures; beside them, each category's accuracy over its passable items where it holds items
    no model can pass (:mod:`.unpassable`, not official); TL-Training's failure categories and mean reward
    (single-call cases); the non-scoring format-sensitivity figures (in no aggregate: :mod:`.format_sensitivity`)."""
    single_call = [r for r in results if r.category in SINGLE_CALL_CATEGORIES]
    return (official_metrics(results) + unpassable_metrics(results, ALL_CATEGORIES) + tl_metrics(single_call)
            + format_sensitivity_metrics(results))
