"""The reward, as upstream's ``evaluator/evaluator.py`` (``evaluate_simulation``, evaluation type ``all``) and its
environment, action and communicate evaluators compute it (1.0.1; read there, written here).

- A simulation that did not end with ``agent_stop`` or ``user_stop`` gets 0 and no breakdown.
- DB: the predicted environment replays the trajectory's tool calls (the state-mutating ones, 1.0.1's
  ``set_state``); the gold environment replays the task's gold actions, each one that fails being skipped (upstream
  logs a warning); both the agent's and the user's database hashes must match. ENV_ASSERTION: every assertion of
  the task run on the predicted environment. ACTION: every gold action matched by some tool call of the trajectory
  (name, and the arguments in ``compare_args``, or all of the call's). COMMUNICATE: every string found,
  case-insensitively, in an assistant message with commas removed.
- The reward is the product over the task's ``reward_basis``. NL_ASSERTION needs an LLM judge (``judge``): a task
  whose ``nl_assertions`` are empty gets 1 for it (as upstream, which calls no judge then); one with assertions is
  graded on the judge's checks handed in (``nl_checks``), and without them cannot be graded (:class:`NeedsJudge`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .environment import Environment
from .judge import nl_reward

GRADED_TERMINATIONS = ("agent_stop", "user_stop")
#: ``EvaluationCriteria.reward_basis`` when a task leaves it out (upstream's default, the original τ-bench's).
DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")


def reward_basis(task: Mapping[str, Any]) -> list[str]:
    criteria = task.get("evaluation_criteria") or {}
    basis = criteria.get("reward_basis")
    return list(DEFAULT_REWARD_BASIS if basis is None else basis)


class NeedsJudge(Exception):
    """The task's reward needs the NL-assertion judge (an LLM), which this suite does not run."""


def needs_judge(task: Mapping[str, Any]) -> bool:
    criteria = task.get("evaluation_criteria") or {}
    return "NL_ASSERTION" in reward_basis(task) and bool(criteria.get("nl_assertions"))


def tool_calls_of(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    calls = []
    for message in messages:
        if message.get("role") in ("assistant", "user") and message.get("tool_calls"):
            calls.extend(message["tool_calls"])
    return calls


def action_matches(action: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    if action["name"] != call.get("name"):
        return False
    arguments = call.get("arguments") or {}
    compare = action.get("compare_args")
    keys = list(arguments.keys()) if compare is None else compare
    if len(keys) == 0:
        return True
    return ({k: v for k, v in arguments.items() if k in keys}
            == {k: v for k, v in (action.get("arguments") or {}).items() if k in keys})


def _initial(task: Mapping[str, Any]) -> tuple[Any, Any, list]:
    state = task.get("initial_state") or {}
    return state.get("initialization_data"), state.get("initialization_actions"), state.get("message_history") or []


def env_reward(make_env: Callable[..., Environment], task: Mapping[str, Any], messages: Sequence[Mapping],
               solo_mode: bool = False) -> dict[str, Any]:
    criteria = task["evaluation_criteria"]
    if criteria.get("actions") is None and criteria.get("env_assertions") is None:
        return {"reward": 1.0, "db_check": {"db_match": True, "db_reward": 1.0}, "breakdown": {}}
    data, actions, history = _initial(task)
    predicted = make_env(solo_mode=solo_mode)
    predicted.set_state(data, actions, list(messages))
    gold = make_env()
    gold.set_state(data, actions, history)
    skipped = []
    for action in criteria.get("actions") or []:
        try:
            gold.make_tool_call(action["name"], requestor=action.get("requestor", "assistant"),
                                **(action.get("arguments") or {}))
        except Exception as error:  # noqa: BLE001 - upstream skips a gold action that fails
            skipped.append({"action_id": action.get("action_id"), "error": str(error)})
    db_match = gold.db_hash() == predicted.db_hash() and gold.user_db_hash() == predicted.user_db_hash()
    db_reward = 1.0 if db_match else 0.0
    checks = []
    assertion_reward = 1.0
    for assertion in criteria.get("env_assertions") or []:
        met = predicted.run_env_assertion(assertion)
        checks.append({"env_assertion": assertion, "met": met})
        assertion_reward *= 1.0 if met else 0.0
    reward, breakdown = 1.0, {}
    basis = reward_basis(task)
    if "DB" in basis:
        breakdown["DB"] = db_reward
        reward *= db_reward
    if "ENV_ASSERTION" in basis:
        breakdown["ENV_ASSERTION"] = assertion_reward
        reward *= assertion_reward
    return {"reward": reward, "breakdown": breakdown, "db_check": {"db_match": db_match, "db_reward": db_reward},
            "env_assertions": checks, "skipped_gold_actions": skipped,
            "gold_env": gold, "predicted_env": predicted}


def action_reward(task: Mapping[str, Any], messages: Sequence[Mapping]) -> dict[str, Any]:
    actions = task["evaluation_criteria"].get("actions")
    if not actions:
        return {"reward": 1.0, "breakdown": {"ACTION": 1.0}, "action_checks": []}
    calls = tool_calls_of(messages)
    checks = [{"action": action, "action_match": any(action_matches(action, call) for call in calls)}
              for action in actions]
    reward = 1.0 if all(check["action_match"] for check in checks) else 0.0
    return {"reward": reward, "breakdown": {"ACTION": reward}, "action_checks": checks}


def communicate_reward(task: Mapping[str, Any], messages: Sequence[Mapping]) -> dict[str, Any]:
    infos = task["evaluation_criteria"].get("communicate_info")
    if not infos:
        return {"reward": 1.0, "breakdown": {"COMMUNICATE": 1.0}, "communicate_checks": []}
    texts = [m["content"].lower().replace(",", "") for m in messages
             if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"] != ""]
    checks = [{"info": info, "met": any(info.lower() in text for text in texts)} for info in infos]
    reward = 1.0 if all(check["met"] for check in checks) else 0.0
    return {"reward": reward, "breakdown": {"COMMUNICATE": reward}, "communicate_checks": checks}


def evaluate(make_env: Callable[..., Environment], task: Mapping[str, Any], messages: Sequence[Mapping],
             termination_reason: str, solo_mode: bool = False,
             nl_checks: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Upstream's ``RewardInfo`` for one simulation, as a dict: ``reward``, ``reward_basis``, ``reward_breakdown``
    and each part's checks. ``nl_checks``: the judge's checks (``judge.parse_reply``); raises :class:`NeedsJudge`
    for a task graded on NL assertions it has when none are given."""
    if termination_reason not in GRADED_TERMINATIONS:
        return {"reward": 0.0, "reward_basis": None, "reward_breakdown": None,
                "note": f"Simulation terminated prematurely. Termination reason: {termination_reason}"}
    criteria = task.get("evaluation_criteria")
    if criteria is None:
        return {"reward": 1.0, "reward_basis": None, "reward_breakdown": None, "note": "No evaluation criteria"}
    basis = reward_basis(task)
    if needs_judge(task) and nl_checks is None:
        raise NeedsJudge(f"task {task.get('id')} is graded on NL assertions, which need an LLM judge")
    nl = nl_reward(nl_checks if needs_judge(task) else [])  # no assertions: upstream calls no judge, 1
    env = env_reward(make_env, task, messages, solo_mode)
    action = action_reward(task, messages)
    communicate = communicate_reward(task, messages)
    reward, breakdown = 1.0, {}
    if set(basis) & {"DB", "ENV_ASSERTION"}:
        breakdown.update(env["breakdown"])
        reward *= env["reward"]
    if "ACTION" in basis:
        breakdown.update(action["breakdown"])
        reward *= action["reward"]
    if "NL_ASSERTION" in basis:
        breakdown.update(nl["breakdown"])
        reward *= nl["reward"]
    if "COMMUNICATE" in basis:
        breakdown.update(communicate["breakdown"])
        reward *= communicate["reward"]
    return {"reward": reward, "reward_basis": basis, "reward_breakdown": breakdown,
            "db_check": env.get("db_check"), "env_assertions": env.get("env_assertions", []),
            "action_checks": action["action_checks"], "communicate_checks": communicate["communicate_checks"],
            "nl_assertions": nl["nl_assertions"] if "NL_ASSERTION" in basis else None,
            "skipped_gold_actions": env.get("skipped_gold_actions", []),
            "gold_env": env.get("gold_env"), "predicted_env": env.get("predicted_env")}
