"""τ²-bench: our airline and retail environments and grading against the official ones (frozen by
scripts/make_tau2_oracle.py in the oracle venv): the tool schemas the agent is shown, every tool result text and
database hash of each variant trajectory (gold, a write dropped, an argument changed, an extra write, a failing
call, a missing communicate string, a premature end), and the official reward and breakdown of each. Every tenth
task runs by default; the whole corpus is ``slow``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle_{domain}.json.gz"
DOMAINS = ("airline", "retail")
SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2bench" / "upstream"

pytestmark = pytest.mark.skipif(not (DATA / "domains" / "airline" / "db.json").is_file(),
                                reason=f"the τ²-bench data folder {DATA} is not here")


@pytest.fixture(scope="module", params=DOMAINS)
def domain(request):
    return request.param


@pytest.fixture(scope="module")
def oracle(domain):
    with gzip.open(str(ORACLE).format(domain=domain), "rb") as handle:
        return json.loads(handle.read())


@pytest.fixture(scope="module")
def make_env(domain):
    registry = import_scorer(str(SUITE), "domains.registry")
    return registry.environment_factory(domain, DATA / "domains" / domain)


def test_tool_schemas_equal_upstream(oracle, make_env):
    """The schemas the agent is shown, text for text (the key order included: it is what a chat template prints)."""
    ours = [json.dumps(tool.openai_schema()) for tool in make_env().tools.tools().values()]
    assert len(ours) == len(oracle["tool_schemas"])
    for mine, theirs in zip(ours, oracle["tool_schemas"]):
        assert mine == theirs


def test_initial_hash(oracle, make_env):
    assert make_env().db_hash() == oracle["initial_db_hash"]


def _compare(oracle, make_env, domain, every: int) -> None:
    evaluation = import_scorer(str(SUITE), "evaluation")
    tasks = {t["id"]: t for t in json.loads((DATA / "domains" / domain / "tasks.json").read_text())}
    mismatches, total = [], 0
    for index, (task_id, variants) in enumerate(oracle["tasks"].items()):
        if index % every:
            continue
        for name, variant in variants.items():
            total += 1
            env = make_env()
            messages = []
            for index, call in enumerate(variant["calls"]):
                content, error = env.get_response(call["name"], call["arguments"], call["requestor"])
                expected = variant["results"][index]
                if (content, error) != (expected["content"], expected["error"]):
                    mismatches.append(f"{task_id}/{name} call {index} {call['name']}: {content[:200]!r} != "
                                      f"{expected['content'][:200]!r}")
                tool_call = dict(call, id=f"call_{index}")
                messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
                messages.append({"role": "tool", "id": tool_call["id"], "content": content, "error": error})
            messages.append({"role": "assistant", "content": variant["say"]})
            if env.db_hash() != variant["db_hash"]:
                mismatches.append(f"{task_id}/{name}: database hash differs")
            info = evaluation.evaluate(make_env, tasks[task_id], messages, variant["termination"])
            if (info["reward"], info["reward_breakdown"]) != (variant["reward"], variant["reward_breakdown"]):
                mismatches.append(f"{task_id}/{name}: reward {info['reward']} {info['reward_breakdown']} != "
                                  f"official {variant['reward']} {variant['reward_breakdown']}")
    assert total >= 4 * len(oracle["tasks"]) // every
    assert not mismatches, f"{len(mismatches)} of {total} disagree:\n" + "\n".join(mismatches[:20])


def test_every_tenth_task_matches_the_official_environment_and_evaluator(oracle, make_env, domain):
    _compare(oracle, make_env, domain, every=10)


@pytest.mark.slow
def test_every_variant_matches_the_official_environment_and_evaluator(oracle, make_env, domain):
    _compare(oracle, make_env, domain, every=1)


def test_the_tasks_left_out_of_the_oracle_are_those_graded_by_the_judge(oracle, domain):
    evaluation = import_scorer(str(SUITE), "evaluation")
    tasks = json.loads((DATA / "domains" / domain / "tasks.json").read_text())
    assert sorted(oracle.get("needs_judge", [])) == sorted(t["id"] for t in tasks if evaluation.needs_judge(t))
    assert len(oracle["tasks"]) + len(oracle.get("needs_judge", [])) == len(tasks)


def test_a_failing_airline_item_says_which_part_failed_and_why():
    """The explanation names the part of the reward that failed and what is missing."""
    from pytest_toolbench.contract.suite import Generation, SuiteContext

    suite = import_scorer(str(SUITE), "")
    context = SuiteContext(DATA, {"options": {"domains": ["airline"], "split": "base"}, "name": "tau2bench"})
    cases = {case.case_id: case for case in suite.load_cases(context)}
    case = next(c for c in cases.values() if c.payload["task"]["evaluation_criteria"].get("communicate_info"))
    gold = json.loads(suite.gold_output(case))
    silent = dict(gold, messages=gold["messages"][:-1] + [{"role": "assistant", "content": "Done."}])
    verdict = suite.score(case, Generation(text=json.dumps(silent)))
    assert not verdict.passed and verdict.error_type == "reward_communicate"
    assert "COMMUNICATE: not said by the agent" in verdict.explanation
    assert verdict.counts == {"reward": 0.0, "reward_db": 1.0, "reward_communicate": 0.0}
    booking = next(c for c in cases.values()
                   if any(a["name"] == "book_reservation" for a in c.payload["task"]["evaluation_criteria"]["actions"]))
    gold = json.loads(suite.gold_output(booking))
    verdict = suite.score(booking, Generation(text=json.dumps(dict(gold, messages=gold["messages"][-1:]))))
    assert verdict.error_type.startswith("reward_db") and "reservations[HATHAT]: gold {" in verdict.explanation
