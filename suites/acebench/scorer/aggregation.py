"""ACEBench's summary table (``generate_result_csv`` of the official evaluation), per language and combined.

Leaf accuracy = correct / total; the Normal multi-turn leaves count dialogues (all turns valid, "end accuracy");
the agent leaves count end-to-end accuracy (process accuracy is reported beside it). Atom, Single-Turn and
Multi-Turn are plain means of their leaves; Normal = mean of the 12 Normal leaves; Special = mean of its 3 leaves;
Agent = mean of the two agent end-to-end accuracies; Overall = 0.578·Normal + 0.2676·Special + 0.1545·Agent (the
upstream constants, ∝ √700 : √150 : √50). The combined EN+ZH table is the plain mean of the two languages.
Upstream rounds leaf accuracies to 3 decimals in its score files; the values here are unrounded.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from typing import Iterable, Sequence

from pytest_toolbench.scorer_lib.tl_failures import tl_metrics
from pytest_toolbench.contract.suite import CaseResult, Metric
from .loading import AGENT_CATEGORIES, LANGUAGES, NORMAL_CATEGORIES, SPECIAL_CATEGORIES, split_case_id

ATOM_LEAVES = tuple(c for c in NORMAL_CATEGORIES if c.startswith("normal_atom"))
SINGLE_TURN_LEAVES = ("normal_single_turn_single_function", "normal_single_turn_parallel_function")
MULTI_TURN_LEAVES = ("normal_multi_turn_user_switch", "normal_multi_turn_user_adjust")

#: Upstream's hard-coded family weights (w_k = √n_k / Σ√n for n = 700, 150, 50).
FAMILY_WEIGHTS = {"normal": 0.578, "special": 0.2676, "agent": 0.1545}


def dialogue_key(upstream_id: str) -> tuple[str, str]:
    """(category, dialogue index) of a multi-turn turn id ``<category>_<dialogue>_<turn>``."""
    head, _, _turn = upstream_id.rpartition("_")
    category, _, dialogue = head.rpartition("_")
    return category, dialogue


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _language_metrics(language: str, results: Sequence[CaseResult]) -> list[Metric]:
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    leaf: "OrderedDict[str, Metric]" = OrderedDict()
    extra: list[Metric] = []
    prefix = f"{language}/"
    for category in NORMAL_CATEGORIES + SPECIAL_CATEGORIES + AGENT_CATEGORIES:
        rows = by_category.get(category)
        if not rows:
            continue
        if category in MULTI_TURN_LEAVES:
            dialogues: "OrderedDict[tuple[str, str], bool]" = OrderedDict()
            for row in rows:
                key = dialogue_key(split_case_id(row.case_id)[1])
                dialogues[key] = dialogues.get(key, True) and row.passed
            correct = sum(dialogues.values())
            total = len(dialogues)
            leaf[category] = Metric(
                prefix + category, correct / total, correct, total, "category", "dialogues with every turn valid / dialogues"
            )
            turn_correct = sum(r.passed for r in rows)
            # Upstream's process accuracy: mean over dialogues of the share of valid turns.
            shares: dict[tuple[str, str], list[bool]] = defaultdict(list)
            for row in rows:
                shares[dialogue_key(split_case_id(row.case_id)[1])].append(row.passed)
            process = _mean(sum(v) / len(v) for v in shares.values())
            extra.append(Metric(prefix + category + "_turns", turn_correct / len(rows), turn_correct, len(rows), "turns", "valid turns / turns"))
            extra.append(Metric(prefix + category + "_process", process, None, None, "process", "mean over dialogues of valid-turn share"))
            continue
        correct = sum(r.passed for r in rows)
        total = len(rows)
        if category in AGENT_CATEGORIES:
            leaf[category] = Metric(prefix + category, correct / total, correct, total, "category", "end-to-end accuracy: final state equals target")
            process = _mean(float(r.counts.get("process", 1.0 if r.passed else 0.0)) for r in rows)
            extra.append(Metric(prefix + category + "_process", process, None, None, "process", "mean milestone-subsequence ratio (1 when end-to-end correct)"))
        else:
            leaf[category] = Metric(prefix + category, correct / total, correct, total, "category", "correct / total")

    def summary(name: str, members: Sequence[str], formula: str) -> Metric | None:
        values = [leaf[m].value for m in members if m in leaf]
        if not values:
            return None
        return Metric(prefix + name, _mean(values), None, None, "aggregate", formula)

    aggregates: list[Metric] = []
    pieces = {
        "atom": summary("atom", ATOM_LEAVES, "mean of the 6 atom leaves"),
        "single_turn": summary("single_turn", SINGLE_TURN_LEAVES, "mean(single_function, parallel_function)"),
        "multi_turn": summary("multi_turn", MULTI_TURN_LEAVES, "mean(user_switch, user_adjust) dialogue accuracies"),
        "normal": summary("normal_summary", NORMAL_CATEGORIES, "unweighted mean of the 12 Normal leaves"),
        "special": summary("special_summary", SPECIAL_CATEGORIES, "mean(incomplete, error_param, irrelevant)"),
        "agent": summary("agent_summary", AGENT_CATEGORIES, "mean(EA agent_multi_turn, EA agent_multi_step)"),
    }
    aggregates.extend(m for m in pieces.values() if m is not None)
    normal, special, agent = pieces["normal"], pieces["special"], pieces["agent"]
    if normal and special and agent:
        overall = (
            FAMILY_WEIGHTS["normal"] * normal.value
            + FAMILY_WEIGHTS["special"] * special.value
            + FAMILY_WEIGHTS["agent"] * agent.value
        )
        aggregates.append(Metric(prefix + "overall", overall, None, None, "aggregate", "0.578·Normal + 0.2676·Special + 0.1545·Agent"))
    if normal and special and "agent_multi_step" in leaf:
        # The simulated user (an external LLM upstream) only affects agent_multi_turn; this figure leaves it out.
        overall = (
            FAMILY_WEIGHTS["normal"] * normal.value
            + FAMILY_WEIGHTS["special"] * special.value
            + FAMILY_WEIGHTS["agent"] * leaf["agent_multi_step"].value
        )
        aggregates.append(
            Metric(prefix + "overall_without_agent_multi_turn", overall, None, None, "aggregate",
                   "0.578·Normal + 0.2676·Special + 0.1545·EA(agent_multi_step)")
        )
    return list(leaf.values()) + extra + aggregates


def official_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    """ACEBench's table per language, then the combined EN+ZH table (see the module docstring)."""
    by_language: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_language[split_case_id(result.case_id)[0]].append(result)
    metrics: list[Metric] = []
    per_language: dict[str, dict[str, Metric]] = {}
    for language in LANGUAGES:
        if by_language.get(language):
            language_metrics = _language_metrics(language, by_language[language])
            metrics.extend(language_metrics)
            per_language[language] = {m.name.split("/", 1)[1]: m for m in language_metrics}
    if len(per_language) == len(LANGUAGES):
        first, second = (per_language[lang] for lang in LANGUAGES)
        group_order = {"category": 0, "turns": 1, "process": 2, "aggregate": 3}
        ordered = sorted(first.items(), key=lambda item: group_order.get(item[1].group, 4))
        for name, metric in ordered:
            other = second.get(name)
            if other is None or metric.value is None or other.value is None:
                continue
            group = "aggregate" if metric.group == "category" else metric.group
            metrics.append(
                Metric("combined/" + name, (metric.value + other.value) / 2, None, None, group, "mean of the en and zh values")
            )
    return metrics


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    # ACEBench's own table, then TL-Training's categories and mean reward over the single-call Normal cases.
    return official_metrics(results) + tl_metrics([r for r in results if "tl_reward" in r.counts])
