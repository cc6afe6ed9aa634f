"""τ²-bench: our airline environment and grading against the official package's (frozen by
scripts/make_tau2_oracle.py in the oracle venv): the tool schemas the agent is shown, every tool result text and
database hash of each variant trajectory (gold, a write dropped, an argument changed, an extra write, a failing
call, a missing communicate string, a premature end), and the official reward and breakdown of each."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle.json.gz"
SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2bench" / "upstream"

pytestmark = pytest.mark.skipif(not (DATA / "domains" / "airline" / "db.json").is_file(),
                                reason=f"the τ²-bench data folder {DATA} is not here")


@pytest.fixture(scope="module")
def oracle():
    with gzip.open(ORACLE, "rb") as handle:
        return json.loads(handle.read())


@pytest.fixture(scope="module")
def make_env():
    registry = import_scorer(str(SUITE), "domains.registry")
    return registry.environment_factory("airline", DATA / "domains" / "airline")


def test_tool_schemas_equal_upstream(oracle, make_env):
    ours = [tool.openai_schema() for tool in make_env().tools.tools().values()]
    assert [s["function"]["name"] for s in ours] == [s["function"]["name"] for s in oracle["tool_schemas"]]
    for mine, theirs in zip(ours, oracle["tool_schemas"]):
        assert mine == theirs, mine["function"]["name"]
        assert json.dumps(mine) == json.dumps(theirs), f"key order differs: {mine['function']['name']}"


def test_initial_hash(oracle, make_env):
    assert make_env().db_hash() == oracle["initial_db_hash"]


def test_every_variant_matches_the_official_environment_and_evaluator(oracle, make_env):
    evaluation = import_scorer(str(SUITE), "evaluation")
    tasks = {t["id"]: t for t in json.loads((DATA / "domains" / "airline" / "tasks.json").read_text())}
    mismatches, total = [], 0
    for task_id, variants in oracle["tasks"].items():
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
    assert total >= 50 * 4
    assert not mismatches, f"{len(mismatches)} of {total} disagree:\n" + "\n".join(mismatches[:20])
