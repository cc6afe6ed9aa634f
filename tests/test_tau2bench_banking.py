"""τ²-bench banking_knowledge: our environment (the agent's banking and discoverable tools, the user's tools, the
unlock/give/call protocol, the read-log allowlist) and grading against upstream 1.0.1's own (frozen by
scripts/make_tau2_banking_env_oracle.py): the tool schemas of both sides, the initial database hash, and for every
variant trajectory of every one of the 97 tasks (gold, a write dropped, an argument changed, an extra write, a
failing call, ended by max steps, and three probes: every discoverable tool unlocked and called bare, the gold
calls with each argument spoilt, the base and user tools' error paths) the sha256 of each tool result text (16 hex digits) and
its error flag, the final database hash, and the official reward and breakdown. Every fifth task runs by default; the
whole corpus is ``slow``."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import Generation, SuiteContext
from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle_banking_knowledge.json.gz"
SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2bench" / "upstream"
DOMAIN = DATA / "domains" / "banking_knowledge"

pytestmark = pytest.mark.skipif(not (DOMAIN / "db.json").is_file(),
                                reason=f"the τ²-bench data folder {DATA} is not here")


@pytest.fixture(scope="module")
def oracle():
    with gzip.open(ORACLE, "rb") as handle:
        return json.loads(handle.read())


@pytest.fixture(scope="module")
def tasks():
    return {t["id"]: t for t in (json.loads(p.read_text()) for p in sorted((DOMAIN / "tasks").glob("task_*.json")))}


def _factory(task, retrieval="no_knowledge"):
    registry = import_scorer(str(SUITE), "domains.registry")
    return registry.environment_factory("banking_knowledge", DOMAIN, task=task, retrieval=retrieval)


def test_tool_schemas_of_both_sides_and_the_initial_hash_equal_upstream(oracle):
    env = _factory(None)()
    for kit, theirs in ((env.tools, oracle["tool_schemas"]), (env.user_tools, oracle["user_tool_schemas"])):
        assert [json.dumps(tool.openai_schema()) for tool in kit.tools().values()] == theirs
    assert env.db_hash() == oracle["initial_db_hash"]


def _graded(task: dict) -> dict:
    """The oracle graded task_102 on DB only (its NL assertion needs the LLM judge)."""
    criteria = task["evaluation_criteria"]
    basis = [b for b in criteria.get("reward_basis") or [] if b != "NL_ASSERTION"]
    return dict(task, evaluation_criteria=dict(criteria, reward_basis=basis))


def _compare(oracle, tasks, every: int) -> int:
    evaluation = import_scorer(str(SUITE), "evaluation")
    mismatches, total = [], 0
    for number, (task_id, variants) in enumerate(sorted(oracle["tasks"].items())):
        if number % every:
            continue
        task = _graded(tasks[task_id])
        make_env = _factory(task)
        state = task.get("initial_state") or {}
        for name, variant in variants.items():
            total += 1
            env = make_env()
            env.set_state(state.get("initialization_data"), state.get("initialization_actions"),
                          state.get("message_history") or [])
            messages = [dict(m) for m in state.get("message_history") or []]
            for index, call_index in enumerate(variant["calls"]):
                call = json.loads(oracle["calls"][call_index])
                content, error = env.get_response(call["name"], call["arguments"], call["requestor"])
                text_index, expected_error = variant["results"][index]
                ours = hashlib.sha256(content.encode()).hexdigest()[:16]
                if (ours, error) != (oracle["sha256_16"][text_index], expected_error):
                    mismatches.append(f"{task_id}/{name} call {index} {call['name']}({call['arguments']}): "
                                      f"{content[:400]!r} (error {error}) differs")
                tool_call = dict(call, id=f"call_{index}")
                messages.append({"role": call["requestor"], "content": None, "tool_calls": [tool_call]})
                messages.append({"role": "tool", "id": tool_call["id"], "content": content, "error": error,
                                 "requestor": call["requestor"]})
            messages.append({"role": "assistant", "content": variant["say"]})
            if env.db_hash() != variant["db_hash"]:
                mismatches.append(f"{task_id}/{name}: database hash differs")
            info = evaluation.evaluate(make_env, task, messages, variant["termination"])
            if (info["reward"], info["reward_breakdown"]) != (variant["reward"], variant["reward_breakdown"]):
                mismatches.append(f"{task_id}/{name}: reward {info['reward']} {info['reward_breakdown']} != "
                                  f"official {variant['reward']} {variant['reward_breakdown']}")
    assert not mismatches, f"{len(mismatches)} of {total} disagree:\n" + "\n".join(mismatches[:40])
    return total


def test_every_fifth_task_matches_the_official_environment_and_evaluator(oracle, tasks):
    assert _compare(oracle, tasks, every=5) >= 4 * len(oracle["tasks"]) // 5


@pytest.mark.slow
def test_every_variant_matches_the_official_environment_and_evaluator(oracle, tasks):
    assert _compare(oracle, tasks, every=1) == sum(len(v) for v in oracle["tasks"].values())


def test_the_oracle_covers_every_task_and_both_reward_outcomes(oracle, tasks):
    rewards = {variant["reward"] for variants in oracle["tasks"].values() for variant in variants.values()}
    assert set(oracle["tasks"]) == set(tasks) and len(tasks) == 97 and rewards == {0.0, 1.0}


def _cases(options: dict):
    suite = import_scorer(str(SUITE), "")
    return suite, suite.load_cases(SuiteContext(DATA, {"options": options, "name": "tau2bench"}))


def test_the_domain_loads_upstreams_97_tasks_from_the_tasks_folder():
    _, cases = _cases({"domains": ["banking_knowledge"], "split": "base"})
    bases = [tuple(sorted(k for k in case.keywords if k.startswith("reward_"))) for case in cases]
    assert len(cases) == 97 and {case.category for case in cases} == {"banking_knowledge"}
    assert bases.count(("reward_db",)) == 87 and bases.count(("reward_action",)) == 9
    assert [case.case_id for case in cases if "needs_judge" in case.keywords] == ["banking_knowledge_task_102"]


def test_a_failing_banking_item_names_the_database_difference_or_the_action_not_taken():
    suite, cases = _cases({"domains": ["banking_knowledge"], "split": "base", "retrieval": "bm25_grep"})
    writes = next(c for c in cases if c.case_id == "banking_knowledge_task_001")
    gold = json.loads(suite.gold_output(writes))
    assert suite.score(writes, Generation(text=json.dumps(gold))).passed
    verdict = suite.score(writes, Generation(text=json.dumps(dict(gold, messages=gold["messages"][-1:]))))
    assert not verdict.passed and verdict.error_type == "reward_db"
    action = next(c for c in cases if "reward_action" in c.keywords)
    gold = json.loads(suite.gold_output(action))
    verdict = suite.score(action, Generation(text=json.dumps(dict(gold, messages=gold["messages"][-1:]))))
    assert not verdict.passed and "ACTION: gold actions not taken" in verdict.explanation


def test_the_agent_is_shown_the_retrieval_configurations_tools_first():
    env = _factory(None, "bm25_grep")()
    names = list(env.tools.tools())
    assert names[:3] == ["KB_search", "grep", "transfer_to_human_agents"] and len(names) == 16
    assert "Debit Card Dispute" in env.tools.use_tool("KB_search", query="debit card dispute")
    assert list(_factory(None, "no_knowledge")().tools.tools())[0] == "transfer_to_human_agents"


def test_a_banking_conversation_holds_the_configurations_policy_tools_and_the_tasks_user_tools():
    conversation = import_scorer(str(SUITE), "conversation")
    policy = import_scorer(str(SUITE), "domains.banking_policy")
    retrieval = import_scorer(str(SUITE), "domains.banking_retrieval")
    knowledge = retrieval.knowledge_base(str(DOMAIN / "documents"))
    for option in ("bm25_grep", "golden_retrieval"):
        _, cases = _cases({"domains": ["banking_knowledge"], "split": "base", "retrieval": option})
        case = next(c for c in cases if c.case_id == "banking_knowledge_task_001")
        simulation = conversation.Simulation(case)
        task = case.payload["task"]
        assert policy.banking_policy(option, DOMAIN, knowledge, task["required_documents"]) in simulation.agent_system
        names = [tool["function"]["name"] for tool in simulation.agent_tools]
        assert names[:2] == (["KB_search", "grep"] if option == "bm25_grep" else ["transfer_to_human_agents",
                                                                                  "get_current_time"])
        assert [tool["function"]["name"] for tool in simulation.user_tools] == task["user_tools"]
