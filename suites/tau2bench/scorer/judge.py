"""The NL-assertion judge, as upstream 1.0.1's ``evaluator/evaluator_nl_assertions.py`` (``NLAssertionsEvaluator``)
calls it and reads it (read there, written here; ``tests/data/tau2_oracle_retail_judge.json.gz`` holds the official
evaluator's prompts and rewards for canned judge replies, and the tests compare both).

- **Who judges.** Upstream's judge is ``gpt-4.1-2025-04-14`` at temperature 0, the same model and temperature as its
  simulated user. Here the judge's request is a simulated role (``Request.simulates == "judge"``): with
  ``--toolbench-user-model`` it goes to that model, as the user's turns do (give upstream's model there and both
  roles are upstream's); without it the run's own model judges, and the figures say that the judge is not
  upstream's. A replayed ``tau2 run`` results file brings the judgments its run recorded
  (``reward_info.nl_assertions``).
- **The prompt** (:func:`judge_messages`): a system message with upstream's instructions (its indentation kept), and
  a user message with the conversation (``role: content`` of every message, ``None`` for a message without text,
  as upstream formats it) and the assertions as Python prints a list.
- **The reply** (:func:`parse_reply`): ``json.loads`` of the whole reply; ``results`` (absent: none), each with
  ``expectedOutcome``, ``metExpectation`` (a boolean as pydantic reads one) and ``reasoning``. The reward is 1 when
  every result is met (no result: 1, as upstream's ``all([])``). A reply that cannot be read raises upstream;
  here the item is not scored, with the reason (:class:`JudgeError`), never passed or failed on it.
"""

from __future__ import annotations

import json
from typing import Any, Generator, Mapping, Sequence

from pytest_toolbench.contract.suite import Generation, Request

JUDGE_MODEL = "gpt-4.1-2025-04-14"
JUDGE_TEMPERATURE = 0.0
#: ``Request.simulates`` of the judge's request (routed as the simulated user's turns are)
JUDGE_ROLE = "judge"

SYSTEM_PROMPT = """
        TASK
        - You will be given a list of expected outcomes and a conversation that was collected during a test case run.
        - The conversation is between an agent and a customer.
        - Your job is to evaluate whether the agent satisfies each of the expected outcomes.
        - Grade each expected outcome individually.

        FORMAT
        - Your response should be a JSON object with the following fields:
        - `reasoning`: a short explanation for your classification
        - `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise
        - `expectedOutcome`: repeat the expectation from the input that you are grading
        
        Example response structure:
        {
            "results": [
                {
                    "expectedOutcome": "<one of the expected outcomes from the input>",
                    "reasoning": "<reasoning trace>",
                    "metExpectation": <false or true>,
                }
            ]
        }
        """

USER_PROMPT = """
        conversation:
        {trajectory}
        
        expectedOutcomes:
        {assertions}
        """

_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


class JudgeError(ValueError):
    """The judge's reply cannot be read as upstream reads it (upstream raises; the item is not scored)."""


def trajectory_text(messages: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages)


def judge_messages(messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[dict[str, str]]:
    """The judge's system and user messages, text for text as upstream's."""
    user = USER_PROMPT.format(trajectory=trajectory_text(messages), assertions=list(assertions))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def judge_request(task: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> Request:
    assertions = (task.get("evaluation_criteria") or {}).get("nl_assertions") or []
    return Request(messages=tuple(judge_messages(messages, assertions)), simulates=JUDGE_ROLE,
                   temperature=JUDGE_TEMPERATURE)


def judge_step(task: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
               needed: bool) -> Generator[Request, Generation, dict[str, Any] | None]:
    """The judge's turn of a conversation that ended (``yield from`` it): when ``needed`` (the task is graded on NL
    assertions and the simulation ended by ``agent_stop`` or ``user_stop``), one request; returns the trajectory's
    ``nl_judgments`` entry (the raw reply, read by the scorer), or None without a judge's turn."""
    if not needed:
        return None
    reply = yield judge_request(task, messages)
    return {"judge": "the run's judge (the simulated-user model)", "reply": reply.recorded()}


def _lax_bool(value: Any) -> bool:
    """A boolean as pydantic's lax mode reads one (``NLAssertionCheck.met``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise JudgeError(f"metExpectation {value!r} is not a boolean")


def parse_reply(text: str) -> list[dict[str, Any]]:
    """The checks of a judge's reply, ``[{nl_assertion, met, justification}]``; :class:`JudgeError` when upstream's
    reading raises."""
    try:
        data = json.loads(text)
        results = data.get("results", [])
        checks = []
        for result in results:
            assertion, reasoning = result["expectedOutcome"], result["reasoning"]
            if not isinstance(assertion, str) or not isinstance(reasoning, str):
                raise JudgeError("expectedOutcome and reasoning must be strings")
            checks.append({"nl_assertion": assertion, "met": _lax_bool(result["metExpectation"]),
                           "justification": reasoning})
    except JudgeError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise JudgeError(f"the judge's reply cannot be read ({type(error).__name__}: {error})") from None
    return checks


def recorded_checks(judgments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The checks of a trajectory's ``nl_judgments``: a judge's raw reply (parsed), or checks a results file
    recorded."""
    if "reply" in judgments:
        return parse_reply(str(judgments["reply"]))
    checks = judgments.get("checks")
    if not isinstance(checks, list):
        raise JudgeError("no judge's reply and no recorded checks")
    return [{"nl_assertion": c.get("nl_assertion"), "met": _lax_bool(c.get("met")),
             "justification": c.get("justification")} for c in checks]


def nl_reward(checks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    reward = 1.0 if all(check["met"] for check in checks) else 0.0
    return {"reward": reward, "breakdown": {"NL_ASSERTION": reward}, "nl_assertions": list(checks)}
