"""The verdict of one trajectory: upstream's reward (``evaluation.evaluate``); the item passes when it is 1.

The output is a JSON trajectory ``{"messages": [...], "termination_reason": ...}`` in upstream's message shapes
(``role``, ``content``, ``tool_calls`` of ``{id, name, arguments, requestor}``, tool messages with ``id``). A failing
item says which part of the reward failed and why: the database hash differs (with the records that differ from the
gold run's), the communicate strings missing, the gold actions not taken, the env assertions not met."""

from __future__ import annotations

import json
from typing import Any, Mapping

from pytest_toolbench.contract.suite import FORMAT_ERROR, NOT_SCORED, Case, Generation, Verdict

from .conversation_cost import transcript_cost
from .decoding import NotATrajectory, decode_trajectory
from .evaluation import GRADED_TERMINATIONS, NeedsJudge, evaluate, needs_judge
from .gold import make_env_for
from .judge import JudgeError, recorded_checks
from .solo import is_solo
from .toolkit import Table


def _text_of(table: Any, key: str) -> str | None:
    if isinstance(table, Table):
        return table.text_of(key)
    return json.dumps(table[key], sort_keys=True, default=str) if key in table else None


def _db_differences(gold, predicted, limit: int = 5) -> list[str]:
    """The records (table and key) whose content differs between the gold and the predicted databases."""
    lines = []
    for side, a, b in (("agent", gold.tools, predicted.tools), ("user", gold.user_tools, predicted.user_tools)):
        if a is None or b is None:
            continue
        for table in a.db:
            left, right = a.db[table], b.db.get(table)
            if isinstance(left, Mapping) and isinstance(right, Mapping):
                for key in sorted(set(left) | set(right)):
                    mine, theirs = _text_of(right, key), _text_of(left, key)
                    if mine != theirs:
                        lines.append(f"{side} db {table}[{key}]: gold {(theirs or 'absent')[:300]} != "
                                     f"yours {(mine or 'absent')[:300]}")
            elif left != right:
                lines.append(f"{side} db {table} differs")
    return lines[:limit] + ([f"... {len(lines) - limit} more"] if len(lines) > limit else [])


def score(case: Case, generation: Generation) -> Verdict:
    task = case.payload["task"]
    try:
        messages, termination = decode_trajectory(generation.recorded())
    except NotATrajectory as error:
        return Verdict(False, FORMAT_ERROR, f"not a τ²-bench trajectory: {error}", counts={"reward": 0.0})
    judgments = _judgments(generation.recorded())
    labels = {"termination_reason": termination}
    try:
        checks = None
        if judgments is not None and needs_judge(task) and termination in GRADED_TERMINATIONS:
            checks = recorded_checks(judgments)
            labels["nl_judge"] = str(judgments.get("judge"))
        info = evaluate(make_env_for(case), task, messages, termination, is_solo(case), nl_checks=checks)
    except NeedsJudge as error:
        return Verdict(False, NOT_SCORED, f"{error}: not scored without a judge", labels=labels,
                       counts=transcript_cost(generation.recorded()))
    except JudgeError as error:
        return Verdict(False, NOT_SCORED, f"the NL-assertion judge's reply cannot be read ({error}): not scored",
                       labels=labels, counts=transcript_cost(generation.recorded()))
    except (ValueError, AssertionError, TypeError, KeyError, AttributeError) as error:
        # the trajectory cannot be replayed (upstream raises too): malformed calls, results that differ
        return Verdict(False, "replay_error", f"the trajectory cannot be replayed: {error}", counts={"reward": 0.0})
    reward = info["reward"]
    breakdown = info.get("reward_breakdown") or {}
    details: dict[str, Any] = {"reward_basis": info.get("reward_basis"), "reward_breakdown": breakdown,
                               "termination_reason": termination}
    if info.get("skipped_gold_actions"):
        details["skipped_gold_actions"] = info["skipped_gold_actions"]
    counts = {"reward": reward, **transcript_cost(generation.recorded())}
    for part, value in breakdown.items():
        counts[f"reward_{part.lower()}"] = value
    if info.get("nl_assertions") is not None:
        details["nl_assertions"] = info["nl_assertions"]
    if reward == 1.0:
        return Verdict(True, counts=counts, labels=labels, details=details)
    why = []
    if info.get("reward_breakdown") is None:
        why.append(info.get("note", "reward 0"))
    if breakdown.get("DB") == 0.0:
        why.append("DB: the final database differs from the gold run's\n  "
                   + "\n  ".join(_db_differences(info["gold_env"], info["predicted_env"])))
    if breakdown.get("ENV_ASSERTION") == 0.0:
        why.append("ENV_ASSERTION: not met: " + "; ".join(
            f"{c['env_assertion']['func_name']}({c['env_assertion'].get('arguments')})"
            for c in info["env_assertions"] if not c["met"]))
    if breakdown.get("ACTION") == 0.0:
        why.append("ACTION: gold actions not taken: " + "; ".join(
            f"{c['action']['name']}({json.dumps(c['action'].get('arguments'))})"
            for c in info["action_checks"] if not c["action_match"]))
    if breakdown.get("NL_ASSERTION") == 0.0:
        why.append("NL_ASSERTION: not met, as the judge says: " + "; ".join(
            f"{c['nl_assertion']!r} ({c.get('justification')})" for c in info["nl_assertions"] if not c["met"]))
    if breakdown.get("COMMUNICATE") == 0.0:
        why.append("COMMUNICATE: not said by the agent: " + "; ".join(
            repr(c["info"]) for c in info["communicate_checks"] if not c["met"]))
    failed = [part for part, value in breakdown.items() if value != 1.0] or ["termination"]
    return Verdict(False, "reward_" + "_".join(p.lower() for p in failed), "\n".join(why), counts=counts,
                   labels=labels, details=details)


def _judgments(text: str) -> Mapping[str, Any] | None:
    """The trajectory's ``nl_judgments`` (the judge's reply, or checks a results file recorded), or None."""
    try:
        found = json.loads(text).get("nl_judgments")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, Mapping) else None
