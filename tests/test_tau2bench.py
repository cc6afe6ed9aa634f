"""τ²-bench suite: the mock domain from the shipped samples (no data folder needed), the grading's parts and its
explanations, the ``calculate`` tool without ``eval``, replay."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import yaml

from pytest_toolbench.contract.suite import FORMAT_ERROR, BackendCapabilities, Generation, SuiteContext
from shipped import scorer

SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
SAMPLES = SUITE / "samples"
OPTIONS = {"options": {"domains": ["airline", "mock"], "split": "base"}, "name": "tau2bench"}


def _cases():
    return {case.case_id: case for case in scorer("tau2bench").load_cases(SuiteContext(SAMPLES, OPTIONS, "samples"))}


def _score(case, trajectory):
    return scorer("tau2bench").score(case, Generation(text=json.dumps(trajectory)))


def test_samples_hold_the_mock_domain_and_gold_passes_but_the_two_known_defects():
    cases = _cases()
    assert len(cases) == 10 and {c.category for c in cases.values()} == {"mock"}
    known = set(yaml.safe_load((SUITE / "known_defects.yaml").read_text()))
    verdicts = {cid: _score(case, json.loads(scorer("tau2bench").gold_output(case))) for cid, case in cases.items()}
    assert {cid for cid, v in verdicts.items() if not v.passed} == known
    assert all(v.counts["reward"] == 1.0 for cid, v in verdicts.items() if cid not in known)


def test_a_dropped_write_fails_the_database_and_says_which_records_differ():
    case = _cases()["mock_create_task_1"]
    gold = json.loads(scorer("tau2bench").gold_output(case))
    calls = [m for m in gold["messages"] if m.get("tool_calls")]
    assert calls, "the task has a gold write"
    verdict = _score(case, {"messages": [gold["messages"][-1]], "termination_reason": "agent_stop"})
    assert not verdict.passed and verdict.error_type.startswith("reward_") and verdict.counts["reward"] == 0.0
    assert "DB: the final database differs" in verdict.explanation and "tasks[task_2]" in verdict.explanation


def test_a_premature_end_gets_zero_and_says_why():
    case = _cases()["mock_create_task_1"]
    gold = json.loads(scorer("tau2bench").gold_output(case))
    verdict = _score(case, dict(gold, termination_reason="max_steps"))
    assert not verdict.passed and "terminated prematurely" in verdict.explanation


def test_output_that_is_no_trajectory_is_a_format_error():
    case = _cases()["mock_create_task_1"]
    verdict = scorer("tau2bench").score(case, Generation(text="I booked it."))
    assert not verdict.passed and verdict.error_type == FORMAT_ERROR


def test_tool_errors_read_as_upstream_words_them():
    registry = scorer("tau2bench", "domains.registry")
    env = registry.environment_factory("mock", SAMPLES / "domains" / "mock")()
    assert env.get_response("update_task_status", {"task_id": "task_9", "status": "completed"}) == \
        ("Error: Task task_9 not found", True)
    assert env.get_response("no_such_tool", {}) == ("Error: Tool 'no_such_tool' not found.", True)
    content, error = env.get_response("create_task", {"title": "x"})
    assert error and content == "Error: MockTools.create_task() missing 1 required positional argument: 'user_id'"


def test_calculate_without_eval():
    calculate = scorer("tau2bench", "arithmetic").calculate
    assert calculate("2 + 2") == "4.0"
    assert calculate("(1200 - 150) * 2 / 3") == "700.0"
    assert calculate("10 / 3") == "3.33"
    for bad, text in (("1/0", "division by zero"), ("import os", "Invalid characters in expression")):
        try:
            calculate(bad)
        except Exception as error:  # noqa: BLE001
            assert str(error) == text
        else:
            raise AssertionError(bad)


def test_tool_schemas_come_from_signatures_and_docstrings():
    registry = scorer("tau2bench", "domains.registry")
    env = registry.environment_factory("mock", SAMPLES / "domains" / "mock")()
    schema = env.tools.tools()["create_task"].openai_schema()
    assert schema["function"]["description"] == "Create a new task for a user."
    assert schema["function"]["parameters"] == {
        "properties": {"user_id": {"description": "The ID of the user creating the task", "title": "User Id",
                                   "type": "string"},
                       "title": {"description": "The title of the task", "title": "Title", "type": "string"},
                       "description": {"default": None, "description": "Optional description of the task",
                                       "title": "Description", "type": "string"}},
        "required": ["user_id", "title"], "title": "parameters", "type": "object"}
    transfer = env.tools.tools()["transfer_to_human_agents"].openai_schema()["function"]["description"]
    assert transfer.startswith("Transfer the user to a human agent, with a summary of the user's issue.\n\nOnly "
                               "transfer if\n -  the user explicitly asks")


def test_tau2_results_files_replay_to_the_same_rewards(tmp_path):
    cases = _cases()
    simulations = []
    for case in cases.values():
        gold = json.loads(scorer("tau2bench").gold_output(case))
        for trial in (0, 1):
            simulations.append({"task_id": case.payload["task"]["id"], "trial": trial,
                                "termination_reason": "user_stop" if trial == 0 else "max_steps",
                                "messages": gold["messages"]})
    (tmp_path / "run.json").write_text(json.dumps({"info": {"environment_info": {"domain_name": "mock"}},
                                                   "simulations": simulations}))
    (tmp_path / "other.json").write_text("{not json")
    outputs = scorer("tau2bench").replay_outputs(tmp_path)
    assert set(outputs) == set(cases) | {f"{case_id}[r1]" for case_id in cases}  # trial 1: each case's sample 1
    assert any("other.json" in str(problem) for problem in outputs.problems)
    for case_id in cases:
        gold = _score(cases[case_id], json.loads(scorer("tau2bench").gold_output(cases[case_id])))
        replayed = scorer("tau2bench").score(cases[case_id], Generation(text=outputs[case_id]))
        assert (replayed.passed, replayed.counts) == (gold.passed, gold.counts), case_id
        assert replayed.labels == {"termination_reason": "user_stop"}
        second = json.loads(outputs[f"{case_id}[r1]"])
        assert (second["task_id"], second["trial"]) == (cases[case_id].payload["task"]["id"], 1)
        late = scorer("tau2bench").score(cases[case_id], Generation(text=outputs[f"{case_id}[r1]"]))
        assert (late.passed, late.counts["reward"], late.labels) == (False, 0.0, {"termination_reason": "max_steps"})


def test_the_average_reward_leaves_out_and_names_what_was_not_scored():
    from pytest_toolbench.contract.suite import NOT_SCORED, CaseRecord

    records = [CaseRecord("tau2bench", "retail_0", "retail", True, counts={"reward": 1.0}),
               CaseRecord("tau2bench", "retail_1", "retail", False, "reward_db", counts={"reward": 0.0}),
               CaseRecord("tau2bench", "retail_2", "retail", False, NOT_SCORED, keywords=("needs_judge",)),
               CaseRecord("tau2bench", "retail_3", "retail", False, NOT_SCORED)]
    overall = scorer("tau2bench").aggregate(records)[0]
    assert (overall.value, overall.correct, overall.total) == (0.5, 1.0, 2)
    assert overall.incomplete == ("1 task(s) not scored (NL assertions without a judge, or a reply it could not "
                                  "read); 1 task(s) not generated")


def test_the_core_hands_the_backend_to_a_two_parameter_unavailable():
    from pytest_toolbench.run.requests import unavailable

    seen = []
    one = SimpleNamespace(interactive=True, benchmark=SimpleNamespace(unavailable=lambda case: seen.append(case)))
    two = SimpleNamespace(interactive=True,
                          benchmark=SimpleNamespace(unavailable=lambda case, backend: seen.append((case, backend))))
    backend = SimpleNamespace(capabilities=BackendCapabilities())
    unavailable(one, "case", backend)
    unavailable(two, "case", backend)
    assert seen == ["case", ("case", backend)]
