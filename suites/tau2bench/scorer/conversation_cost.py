"""What the conversations cost: per case the counts of its transcript's ``conversation`` record (requests and
tokens of the agent and of the user simulator apart, steps, tool errors), and per domain the figures over its
conversations (group ``cost``: the conversations, and per conversation each role's requests, prompt tokens and
generated tokens; plain numbers, no direction of improvement; a total is the mean times the conversations).

A transcript without a ``conversation`` record (the gold backend's, a replayed ``tau2 run`` file) adds no counts,
and a domain none of whose cases conversed gets no cost figures. No clock time enters a case's record (records are
the same byte for byte for the same answers, serial or ``-n 2``, fresh or cached): conversations overlap in the
engine's batch, so a per-conversation time would not add up anyway; the run's generation time is the run header's
``timing.generation_s``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import CaseResult, Metric

ROLES = ("agent", "user")
#: the per-role counts a case carries, ``<role>_<name>``
ROLE_COUNTS = ("requests", "prompt_tokens", "output_tokens", "truncated")
CASE_COUNTS = tuple(f"{role}_{name}" for role in ROLES for name in ROLE_COUNTS) + (
    "conversation_steps", "conversation_tool_errors")


def cost_counts(transcript: Any) -> dict[str, float]:
    """The cost counts of one transcript (empty when it holds no conversation record)."""
    record = transcript.get("conversation") if isinstance(transcript, Mapping) else None
    if not isinstance(record, Mapping):
        return {}
    counts: dict[str, float] = {}
    for role in ROLES:
        side = record.get(role) if isinstance(record.get(role), Mapping) else {}
        for name in ROLE_COUNTS:
            counts[f"{role}_{name}"] = float(_number(side.get(name)))
    counts["conversation_steps"] = float(_number(record.get("steps")))
    counts["conversation_tool_errors"] = float(_number(record.get("tool_errors")))
    return counts


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _figure(name: str, value: float, conversations: int, formula: str) -> Metric:
    return Metric(name, value, None, conversations, group="cost", unit="", better="none", formula=formula)


def domain_cost(domain: str, results: Sequence[CaseResult]) -> list[Metric]:
    """The cost figures of one domain's conversations (none when no case of it conversed)."""
    conversed = [r for r in results if "agent_requests" in (r.counts or {})]
    n = len(conversed)
    if not n:
        return []

    def total(key: str) -> float:
        return sum(float(r.counts.get(key, 0.0)) for r in conversed)

    metrics = [_figure(f"{domain} conversations", float(n), n, "cases whose conversation ran (or was cached)")]
    for role in ROLES:
        for key, what in (("requests", "requests"), ("prompt_tokens", "prompt tokens"),
                          ("output_tokens", "generated tokens")):
            metrics.append(_figure(f"{domain} {role} {what} per conversation", total(f"{role}_{key}") / n, n,
                                   f"the {role}'s {what} over all conversations / conversations"))
    return metrics


def cost_metrics(results: Sequence[CaseResult]) -> list[Metric]:
    """Every domain's cost figures, domains in name order."""
    by_domain: dict[str, list[CaseResult]] = {}
    for result in results:
        by_domain.setdefault(result.category, []).append(result)
    return [metric for domain in sorted(by_domain) for metric in domain_cost(domain, by_domain[domain])]


def transcript_cost(text: str) -> dict[str, float]:
    """:func:`cost_counts` of an output's text (empty for text that is not a JSON transcript)."""
    try:
        return cost_counts(json.loads(text))
    except (TypeError, ValueError, RecursionError):
        return {}
