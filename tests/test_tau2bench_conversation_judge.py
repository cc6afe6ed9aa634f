"""τ²-bench's NL-assertion judge in a model run: a simulation ending ``user_stop`` for a task graded on NL
assertions yields the judge's request (upstream's prompt over the trajectory, a simulated role), its reply lands in
the transcript's ``nl_judgments`` and grades the item; other terminations and tasks without assertions ask no judge.
Driven by a scripted backend, as tests/test_tau2bench_conversation.py drives the conversation."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_toolbench.contract.suite import NOT_SCORED, Generation
from shipped import scorer
from test_tau2bench_conversation import MODES, _cases, as_answered, call, text


def _judged(assertions=("The agent creates the task", "The agent is polite"), **options):
    case = _cases(**options)["mock_create_task_1"]
    task = json.loads(json.dumps(case.payload["task"]))
    task["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    task["evaluation_criteria"]["nl_assertions"] = list(assertions)
    return dataclasses.replace(case, payload={**case.payload, "task": task})


def _verdict(met: list) -> str:
    return json.dumps({"results": [{"expectedOutcome": f"o{i}", "reasoning": f"why {i}", "metExpectation": m}
                                   for i, m in enumerate(met)]})


def converse(case, agent, user, judge=(), mode="native"):
    """The conversation with each role's replies in order; returns the transcript and (role, request) pairs."""
    conversation = scorer("tau2bench").conversation(case)
    queues = {"agent": list(agent), "user": list(user), "judge": list(judge)}
    requests = []
    try:
        request = next(conversation)
        while True:
            role = request.simulates or "agent"
            requests.append((role, request))
            request = conversation.send(as_answered(queues[role].pop(0), mode))
    except StopIteration as done:
        return done.value, requests


def _created(case, judge, mode="native", stop="Thanks! ###STOP###"):
    agent = [call("create_task", user_id="user_1", title="Important Meeting"), text("Done: task_2 created.")]
    user = [text("Please create a task 'Important Meeting' for user_1."), text(stop)]
    return converse(case, agent, user, judge, mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_judged_task_asks_the_judge_last_with_upstreams_prompt_and_passes_on_its_reply(mode):
    case = _judged()
    transcript, requests = _created(case, [Generation(text=_verdict([True, "true"]))], mode)
    assert [role for role, _ in requests] == ["user", "agent", "agent", "user", "judge"]
    judge = scorer("tau2bench", "judge")
    request = requests[-1][1]
    assert request == judge.judge_request(case.payload["task"], transcript["messages"])
    assert list(request.messages) == judge.judge_messages(transcript["messages"], case.payload["task"][
        "evaluation_criteria"]["nl_assertions"])
    assert request.simulates == judge.JUDGE_ROLE and request.temperature == 0.0 and request.tools is None
    assert "assistant: Hi! How can I help you today?\nuser: Please create" in request.messages[1]["content"]
    assert "\ntool: {" in request.messages[1]["content"] and "assistant: None\n" in request.messages[1]["content"]
    assert transcript["nl_judgments"]["reply"] == _verdict([True, "true"])
    assert transcript["conversation"]["agent"]["requests"] == 2  # the judge's turn is no agent's or user's cost
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert verdict.passed and verdict.counts["reward_nl_assertion"] == 1.0 and verdict.counts["reward_db"] == 1.0
    assert verdict.labels["nl_judge"].startswith("the run's judge")
    assert [c["met"] for c in verdict.details["nl_assertions"]] == [True, True]


def test_a_judged_task_fails_on_an_unmet_assertion_and_says_which():
    case = _judged()
    transcript, _ = _created(case, [Generation(text=_verdict([True, False]))])
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert not verdict.passed and verdict.error_type == "reward_nl_assertion"
    assert "NL_ASSERTION: not met, as the judge says: 'o1' (why 1)" in verdict.explanation
    assert verdict.counts["reward"] == 0.0 and verdict.counts["agent_requests"] == 2.0


@pytest.mark.parametrize("reply", ["I think the agent did well.", "", '{"results": [{"metExpectation": "maybe"}]}'])
def test_an_unreadable_judges_reply_leaves_the_item_not_scored_with_the_reason(reply):
    case = _judged()
    transcript, _ = _created(case, [Generation(text=reply)])
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert (verdict.passed, verdict.error_type) == (False, NOT_SCORED)
    assert "the NL-assertion judge's reply cannot be read" in verdict.explanation
    assert verdict.counts["agent_requests"] == 2.0  # the cost still counts


def test_no_judge_for_an_ungraded_termination_nor_for_a_task_without_assertions():
    case = _judged(max_steps=4)
    transcript, requests = converse(case, [text("Hello?")] * 3, [text("Hi")] * 3)
    assert transcript["termination_reason"] == "max_steps" and "nl_judgments" not in transcript
    assert "judge" not in [role for role, _ in requests]
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    assert not verdict.passed and verdict.counts["reward"] == 0.0  # upstream: 0 without evaluating
    plain = _cases()["mock_create_task_1"]  # not graded on NL assertions
    transcript, requests = _created(plain, [])
    assert "nl_judgments" not in transcript and [r for r, _ in requests].count("judge") == 0
    empty = _judged(assertions=())  # NL_ASSERTION in the basis, no assertions: upstream calls no judge, 1
    transcript, requests = _created(empty, [])
    assert "nl_judgments" not in transcript
    assert scorer("tau2bench").score(empty, Generation(text=json.dumps(transcript))).passed


def test_the_run_header_says_which_tasks_ask_the_judge_and_that_upstreams_is_gpt_4_1():
    context = _cases()["mock_create_task_1"].context
    note = scorer("tau2bench").run_info(context)["tau2bench judge"]
    assert "retail: 40" in note and "gpt-4.1-2025-04-14 at temperature 0.0" in note and "user_stop" in note
