"""τ²-bench grading beyond one trajectory: the NL-assertion judge (upstream's prompt and reading of its reply),
trials (a results file's trials as ``--toolbench-repeat`` samples, the replay backend handing out sample K) and
pass^k per domain with upstream's formula."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
from pathlib import Path

from scipy.special import comb

from pytest_toolbench.backends.replay import ReplayBackend
from pytest_toolbench.contract.errors import MissingOutput
from pytest_toolbench.contract.suite import NOT_SCORED, CaseRecord, Generation, Request, SuiteContext, Task
from shipped import scorer

SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
OPTIONS = {"options": {"domains": ["mock"], "split": "base"}, "name": "tau2bench"}


def _cases():
    return {c.case_id: c for c in scorer("tau2bench").load_cases(SuiteContext(SUITE / "samples", OPTIONS, "samples"))}


def _judged_case():
    """A mock case made a judged one: NL_ASSERTION in its basis, with two assertions."""
    case = _cases()["mock_create_task_1"]
    task = json.loads(json.dumps(case.payload["task"]))
    task["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    task["evaluation_criteria"]["nl_assertions"] = ["The agent creates the task", "The agent is polite"]
    return type(case)(case.case_id, case.category, {**case.payload, "task": task}, ("needs_judge",),
                      case.suite, case.context)


def _reply(*met):
    return json.dumps({"results": [{"expectedOutcome": f"o{i}", "reasoning": "r", "metExpectation": m}
                                   for i, m in enumerate(met)]})


def test_the_judge_is_asked_as_upstream_asks_and_its_reply_read_as_upstream_reads_it():
    judge = scorer("tau2bench", "judge")
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]
    system, user = judge.judge_messages(messages, ["A", "B's"])
    assert system["content"].startswith("\n        TASK\n        - You will be given a list of expected outcomes")
    assert "conversation:\n        user: hi\nassistant: None\n        \n        expectedOutcomes:\n        " \
           "['A', \"B's\"]\n        " in user["content"]
    assert [c["met"] for c in judge.parse_reply(_reply(True, "false", 1))] == [True, False, True]
    assert judge.nl_reward(judge.parse_reply('{"results": []}'))["reward"] == 1.0  # upstream: all([])
    assert judge.nl_reward(judge.parse_reply('{"other": 1}'))["reward"] == 1.0
    for bad in ("not json", '{"results": [{"reasoning": "r", "metExpectation": true}]}',
                _reply("maybe"), "[1]"):
        try:
            judge.parse_reply(bad)
        except judge.JudgeError:
            continue
        raise AssertionError(bad)


def test_the_judges_turn_is_a_simulated_role_and_its_reply_grades_the_task():
    judge = scorer("tau2bench", "judge")
    case = _judged_case()
    gold = json.loads(scorer("tau2bench").gold_output(case))
    step = judge.judge_step(case.payload["task"], gold["messages"], needed=True)
    request = next(step)
    assert request.simulates == judge.JUDGE_ROLE and request.temperature == 0.0
    try:
        step.send(Generation(text=_reply(True, False)))
    except StopIteration as done:
        judgments = done.value
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(dict(gold, nl_judgments=judgments))))
    assert not verdict.passed and verdict.error_type == "reward_nl_assertion"
    assert verdict.counts == {"reward": 0.0, "reward_db": 1.0, "reward_nl_assertion": 0.0}
    assert "NL_ASSERTION: not met, as the judge says: 'o1'" in verdict.explanation
    assert verdict.labels["nl_judge"].startswith("the run's judge")
    passed = scorer("tau2bench").score(case, Generation(text=json.dumps(
        dict(gold, nl_judgments={"judge": "j", "reply": _reply(True, True)}))))
    assert passed.passed and passed.counts["reward_nl_assertion"] == 1.0


def test_without_a_judgment_or_with_an_unreadable_one_a_judged_task_is_not_scored():
    case = _judged_case()
    gold = json.loads(scorer("tau2bench").gold_output(case))
    for trajectory in (gold, dict(gold, nl_judgments={"judge": "j", "reply": "I think yes"})):
        verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(trajectory)))
        assert (verdict.passed, verdict.error_type) == (False, NOT_SCORED)
    assert list(scorer("tau2bench", "judge").judge_step(case.payload["task"], [], needed=False)) == []


def test_a_results_file_brings_its_trials_and_recorded_judgments(tmp_path):
    case = _judged_case()
    gold = json.loads(scorer("tau2bench").gold_output(case))
    simulations = [{"task_id": case.payload["task"]["id"], "trial": trial, "termination_reason": "agent_stop",
                    "messages": gold["messages"],
                    "reward_info": {"nl_assertions": [{"nl_assertion": "o", "met": trial == 0,
                                                       "justification": "j"}]}} for trial in (0, 1, 2)]
    (tmp_path / "r.json").write_text(json.dumps({"info": {"environment_info": {"domain_name": "mock"}},
                                                 "simulations": simulations + simulations[:1]}))
    outputs = scorer("tau2bench").replay_outputs(tmp_path)
    assert sorted(outputs) == [case.case_id, f"{case.case_id}[r1]", f"{case.case_id}[r2]"]
    assert any("duplicate id" in str(p) for p in outputs.problems)
    first = scorer("tau2bench").score(case, Generation(text=outputs[case.case_id]))
    second = scorer("tau2bench").score(case, Generation(text=outputs[f"{case.case_id}[r1]"]))
    assert (first.passed, second.passed) == (True, False)
    assert first.labels["nl_judge"] == "recorded in the tau2 results file"

    class Lookup:
        def by_name(self, name):
            class Suite:
                benchmark = scorer("tau2bench")
                all_case_ids = [case.case_id]
            return Suite()

    backend = ReplayBackend(Lookup(), str(tmp_path))
    case = type(case)(case.case_id, case.category, case.payload, case.keywords, "tau2bench", case.context)
    for sample in (0, 1, 2):
        text = backend.generate([Task(case, Request(messages=(), sample=sample))])[0].text
        assert json.loads(text)["trial"] == sample
    try:
        backend.generate([Task(case, Request(messages=(), sample=3))])
    except MissingOutput as error:
        assert "(sample 3)" in str(error)
    else:
        raise AssertionError("a trial the file lacks must be a missing output")
    assert not [p for p in backend.problems() if "matches no case" in p]


def _records(outcomes):
    """{case: [reward per trial]} -> records with ``sample`` (one domain, 'mock')."""
    return [CaseRecord("tau2bench", case, "mock", reward == 1.0, counts={"reward": reward}, sample=trial)
            for case, rewards in outcomes.items() for trial, reward in enumerate(rewards)]


def test_pass_hat_k_is_upstreams_formula_and_agrees_with_scipy_and_enumeration():
    aggregation = scorer("tau2bench", "aggregation")
    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                value = aggregation.pass_hat_k(n, c, k)
                assert math.isclose(value, comb(c, k, exact=True) / comb(n, k, exact=True))
                trials = [True] * c + [False] * (n - c)
                subsets = list(itertools.combinations(trials, k))
                assert math.isclose(value, sum(all(s) for s in subsets) / len(subsets))
    rng = random.Random(7)
    outcomes = {f"t{i}": [float(rng.random() < 0.6) for _ in range(4)] for i in range(30)}
    metrics = {m.name: m for m in aggregation.aggregate_samples(_records(outcomes))}
    for k in range(1, 5):
        expected = sum(aggregation.pass_hat_k(4, int(sum(r)), k) for r in outcomes.values()) / 30
        assert math.isclose(metrics[f"mock pass^{k}"].value, expected)
    assert "mock pass^5" not in metrics
    assert math.isclose(metrics["mock pass^1"].value, sum(map(sum, outcomes.values())) / 120)


def test_pass_hat_k_stops_at_the_fewest_trials_and_leaves_not_scored_items_out():
    aggregation = scorer("tau2bench", "aggregation")
    records = _records({"a": [1.0, 1.0, 0.0], "b": [1.0, 1.0]})
    records.append(CaseRecord("tau2bench", "c", "mock", False, NOT_SCORED, keywords=("needs_judge",), sample=0))
    metrics = {m.name: m for m in aggregation.aggregate_samples(records)}
    assert sorted(metrics) == ["all pass^1", "all pass^2", "mock pass^1", "mock pass^2"]
    assert math.isclose(metrics["mock pass^2"].value, (1 / 3 + 1) / 2)
    assert metrics["mock pass^2"].incomplete.startswith("1 task(s) not scored")


def test_the_summary_adds_the_figures_over_all_samples_with_the_runs_notes():
    """The core calls a suite's optional ``aggregate_samples`` once over every sample's record (the per-sample
    figures of ``aggregate`` are averaged), and marks its figures as the others (here: cases without a verdict)."""
    from pytest_toolbench.contract.suite import NOT_RUN
    from pytest_toolbench.run.summary import SuiteInput, summarize

    records = [dataclasses.replace(r, order=order)
               for order, r in enumerate(_records({"a": [1.0, 0.0, 1.0], "b": [1.0, 1.0, 1.0]}))]
    records += [CaseRecord("tau2bench", "c", "mock", False, NOT_RUN, sample=k, order=99) for k in range(3)]
    benchmark = scorer("tau2bench")
    summary = summarize(records, {"tau2bench": SuiteInput(benchmark, "t", {})}, {"repeat": 3})
    metrics = {m.name: m for m in summary.suites[0].metrics}
    assert math.isclose(metrics["mock pass^3"].value, 1 / 3) and metrics["mock pass^3"].group == "pass^k"
    assert math.isclose(metrics["mock pass^2"].value, (1 / 3 + 1 + 0) / 3)
    assert "not_run" in metrics["mock pass^3"].incomplete
    assert summary.suites[0].repeat["samples"] == 3


def test_the_judges_request_goes_where_the_simulated_users_turns_go():
    """With --toolbench-user-model the judge's request reaches that model (upstream's judge is its user's model);
    the agent's requests stay with the model under test."""
    from types import SimpleNamespace

    from pytest_toolbench.backends.user_simulator import UserSimulatorRouter

    class Fake:
        def __init__(self, name):
            self.name, self.seen = name, []
            self.capabilities = SimpleNamespace(cacheable=True)

        def generate(self, tasks, on_chunk=None, on_progress=None):
            self.seen += [task.request.simulates for task in tasks]
            return [Generation(text=self.name) for _ in tasks]

    judge = scorer("tau2bench", "judge")
    case = _judged_case()
    model, user = Fake("model"), Fake("user")
    router = UserSimulatorRouter(model, user)
    tasks = [Task(case, judge.judge_request(case.payload["task"], [])), Task(case, Request(messages=()))]
    assert [g.text for g in router.generate(tasks)] == ["user", "model"]
    assert (user.seen, model.seen) == (["judge"], [None])
