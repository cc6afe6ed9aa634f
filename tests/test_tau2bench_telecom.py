"""τ²-bench telecom: our environment (agent and user tools, the phone, ``sync_tools``) and grading against upstream
1.0.1's own (frozen by scripts/make_tau2_domain_oracle.py): the tool schemas of both sides, the initial database
hashes, each domain's policy, and for every variant trajectory of every task of the ``base`` and ``small`` splits
(gold, a write dropped, an argument changed, an extra write, a failing call, no communicate string, a premature end,
the agent alone in solo mode, and four probes of every tool) each tool result text and error flag, the final agent
and user database hashes, and the official reward and breakdown. Every fifth task runs by default; the whole corpus
is ``slow``."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Generation, SuiteContext
from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle_telecom.json.gz"
SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2bench" / "upstream"

pytestmark = pytest.mark.skipif(not (DATA / "domains" / "telecom" / "db.toml").is_file(),
                                reason=f"the τ²-bench data folder {DATA} is not here")


@pytest.fixture(scope="module")
def oracle():
    with gzip.open(ORACLE, "rb") as handle:
        return json.loads(handle.read())


@pytest.fixture(scope="module")
def make_env():
    registry = import_scorer(str(SUITE), "domains.registry")
    return registry.environment_factory("telecom", DATA / "domains" / "telecom")


@pytest.fixture(scope="module")
def tasks():
    return {t["id"]: t for t in json.loads((DATA / "domains" / "telecom" / "tasks.json").read_text())}


def test_tool_schemas_of_both_sides_equal_upstream(oracle, make_env):
    env = make_env()
    for kit, theirs in ((env.tools, oracle["tool_schemas"]), (env.user_tools, oracle["user_tool_schemas"])):
        ours = [json.dumps(tool.openai_schema()) for tool in kit.tools().values()]
        assert len(ours) == len(theirs)
        for mine, official in zip(ours, theirs):
            assert mine == official


def test_initial_hashes(oracle, make_env):
    env = make_env()
    assert (env.db_hash(), env.user_db_hash()) == (oracle["initial_db_hash"], oracle["initial_user_db_hash"])


def _compare(oracle, make_env, tasks, every: int) -> int:
    evaluation = import_scorer(str(SUITE), "evaluation")
    mismatches, total = [], 0
    for number, (task_id, variants) in enumerate(oracle["tasks"].items()):
        if number % every:
            continue
        task = tasks[task_id]
        state = task.get("initial_state") or {}
        for name, variant in variants.items():
            total += 1
            solo = variant.get("solo_mode", False)
            env = make_env(solo_mode=solo)
            env.set_state(state.get("initialization_data"), state.get("initialization_actions"),
                          state.get("message_history") or [])
            messages = [dict(m) for m in state.get("message_history") or []]
            for index, call in enumerate(variant["calls"]):
                content, error = env.get_response(call["name"], call["arguments"], call["requestor"])
                expected = variant["results"][index]
                text = oracle["texts"][expected["text"]]
                if (content, error) != (text, expected["error"]):
                    mismatches.append(f"{task_id}/{name} call {index} {call['name']}: {content[:300]!r} != "
                                      f"{text[:300]!r}")
                tool_call = dict(call, id=f"call_{index}")
                messages.append({"role": call["requestor"], "content": None, "tool_calls": [tool_call]})
                messages.append({"role": "tool", "id": tool_call["id"], "content": content, "error": error,
                                 "requestor": call["requestor"]})
            messages.append({"role": "assistant", "content": variant["say"]})
            if variant["db_hash"] is not None and env.db_hash() != variant["db_hash"]:
                mismatches.append(f"{task_id}/{name}: agent database hash differs")
            if env.user_db_hash() != variant["user_db_hash"]:
                mismatches.append(f"{task_id}/{name}: user database hash differs")
            info = evaluation.evaluate(make_env, task, messages, variant["termination"], solo_mode=solo)
            if (info["reward"], info["reward_breakdown"]) != (variant["reward"], variant["reward_breakdown"]):
                mismatches.append(f"{task_id}/{name}: reward {info['reward']} {info['reward_breakdown']} != "
                                  f"official {variant['reward']} {variant['reward_breakdown']}")
    assert not mismatches, f"{len(mismatches)} of {total} disagree:\n" + "\n".join(mismatches[:20])
    return total


def test_every_fifth_task_matches_the_official_environment_and_evaluator(oracle, make_env, tasks):
    assert _compare(oracle, make_env, tasks, every=5) >= 4 * len(oracle["tasks"]) // 5


@pytest.mark.slow
def test_every_variant_matches_the_official_environment_and_evaluator(oracle, make_env, tasks):
    assert _compare(oracle, make_env, tasks, every=1) == sum(len(v) for v in oracle["tasks"].values())


def test_the_oracle_covers_the_base_and_small_splits_and_every_reward_outcome(oracle):
    splits = json.loads((DATA / "domains" / "telecom" / "split_tasks.json").read_text())
    rewards = {variant["reward"] for variants in oracle["tasks"].values() for variant in variants.values()}
    assert set(oracle["tasks"]) == set(splits["base"]) | set(splits["small"]) and rewards == {0.0, 1.0}


def _cases(options: dict):
    suite = import_scorer(str(SUITE), "")
    return suite, suite.load_cases(SuiteContext(DATA, {"options": options, "name": "tau2bench"}))


@pytest.mark.parametrize("split, count", [("base", 114), ("small", 20), ("full", 2285)])
def test_telecom_splits(split, count):
    _, cases = _cases({"domains": ["telecom"], "split": split})
    assert len(cases) == count and {case.category for case in cases} == {"telecom"}
    assert all("reward_env_assertion" in case.keywords for case in cases)
    # every case is marked with the splits it belongs to, so one run of full selects base or small with -m
    if split == "full":
        assert [sum(f"split_{name}" in case.keywords for case in cases) for name in ("base", "small")] == [114, 20]
    else:
        assert all(f"split_{split}" in case.keywords for case in cases)


def test_a_split_a_selected_domain_lacks_is_refused_naming_the_domain():
    with pytest.raises(DataError, match="the airline domain has no split 'small'"):
        _cases({"domains": ["airline", "telecom"], "split": "small"})


def test_a_failing_telecom_item_names_the_env_assertion_or_the_gold_action_not_met():
    suite, cases = _cases({"domains": ["telecom"], "split": "base"})
    broken = next(c for c in cases if any(a.get("requestor") == "user"
                                          for a in c.payload["task"]["evaluation_criteria"]["actions"]))
    gold = json.loads(suite.gold_output(broken))
    assert suite.score(broken, Generation(text=json.dumps(gold))).passed
    # the user's tool calls dropped: the phone stays broken
    kept = [m for m in gold["messages"] if m.get("requestor", m.get("role")) != "user"]
    verdict = suite.score(broken, Generation(text=json.dumps(dict(gold, messages=kept))))
    assert not verdict.passed and verdict.error_type == "reward_env_assertion"
    assert verdict.explanation.startswith("ENV_ASSERTION: not met: assert_")
    transfer = next(c for c in cases if "ACTION" in c.payload["task"]["evaluation_criteria"]["reward_basis"])
    gold = json.loads(suite.gold_output(transfer))
    verdict = suite.score(transfer, Generation(text=json.dumps(dict(gold, messages=gold["messages"][-1:]))))
    assert not verdict.passed and "reward_action" in verdict.error_type
    assert "ACTION: gold actions not taken: transfer_to_human_agents(" in verdict.explanation


@pytest.mark.parametrize("key", ["airline", "retail", "mock", "mock/solo", "telecom/manual", "telecom/workflow",
                                 "telecom/manual/solo", "telecom/workflow/solo"])
def test_each_domain_policy_is_the_text_upstreams_environment_holds(oracle, key):
    policies = import_scorer(str(SUITE), "domains.policies")
    domain, *rest = key.split("/")
    policy_type = rest[0] if rest and rest[0] != "solo" else "manual"
    text = policies.domain_policy(domain, DATA / "domains" / domain, solo_mode=key.endswith("/solo"),
                                  policy_type=policy_type)
    assert hashlib.sha256(text.encode()).hexdigest() == oracle["policy_sha256"][key]
