"""τ²-bench: our airline and retail environments and grading against the official ones (upstream 1.0.1's own code,
frozen by scripts/make_tau2_oracle.py in the oracle venv): the tool schemas the agent is shown, every tool result
text and database hash of each variant trajectory (gold, a write dropped, an argument changed, an extra write, a
failing call, a missing communicate string, a transfer to a human agent, the gold actions ended by the user, by max
steps, by too many errors, by an agent error), and the official reward and breakdown of each, the trajectories
replayed through the suite as a ``tau2 run`` results file; for retail's tasks graded on NL assertions, the judge's
messages text for text and the reward for canned judge replies. Every tenth task runs by default; the whole corpus
is ``slow``."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle_{domain}.json.gz"
RUN = Path(__file__).parent / "data" / "tau2_run_{domain}.json.gz"
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


def _messages(variant: dict, make_env, mismatches: list, where: str) -> list[dict]:
    """The variant's trajectory in upstream's message shapes, each call run through our environment (its result
    compared with the official one), as the oracle script builds it."""
    env = make_env()
    messages = []
    for index, call in enumerate(variant["calls"]):
        content, error = env.get_response(call["name"], call["arguments"], call["requestor"])
        expected = variant["results"][index]
        if (content, error) != (expected["content"], expected["error"]):
            mismatches.append(f"{where} call {index} {call['name']}: {content[:200]!r} != "
                              f"{expected['content'][:200]!r}")
        tool_call = dict(call, id=f"call_{index}")
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        messages.append({"role": "tool", "id": tool_call["id"], "content": content, "error": error,
                         "requestor": call["requestor"]})
    messages.append({"role": "assistant", "content": variant["say"]})
    if variant["termination"] == "user_stop":
        messages.append({"role": "user", "content": "###STOP###"})
    if env.db_hash() != variant["db_hash"]:
        mismatches.append(f"{where}: database hash differs")
    return messages


def _replayed(tmp_path, domain: str, simulations: list[dict]) -> dict:
    """The simulations written as one ``tau2 run`` results file and read back by the suite's replay reader."""
    suite = import_scorer(str(SUITE), "")
    path = tmp_path / f"{domain}.json"
    path.write_text(json.dumps({"info": {"environment_info": {"domain_name": domain}}, "simulations": simulations}))
    outputs = suite.replay_outputs(path)
    assert not outputs.problems, outputs.problems
    return outputs


def _cases(domain: str) -> dict:
    from pytest_toolbench.contract.suite import SuiteContext

    suite = import_scorer(str(SUITE), "")
    context = SuiteContext(DATA, {"options": {"domains": [domain], "split": "base"}, "name": "tau2bench"})
    tasks = {t["id"]: t for t in json.loads((DATA / "domains" / domain / "tasks.json").read_text())}
    cases = {}
    for case in suite.load_cases(context):
        cases[case.payload["task"]["id"]] = case
    # every task of the corpus, those outside the base split too
    for task_id, task in tasks.items():
        if task_id not in cases:
            base = next(iter(cases.values()))
            cases[task_id] = type(base)(f"{domain}_{task_id}", domain, {"domain": domain, "task": task}, (),
                                        base.suite, base.context)
    return cases


def _official(counts: dict) -> tuple:
    parts = {k[len("reward_"):].upper(): v for k, v in counts.items() if k.startswith("reward_")}
    return counts.get("reward"), parts or None


def _compare(oracle, make_env, domain, every: int, tmp_path) -> None:
    from pytest_toolbench.contract.suite import Generation

    suite = import_scorer(str(SUITE), "")
    cases = _cases(domain)
    mismatches, simulations, expected = [], [], {}
    for index, (task_id, variants) in enumerate(oracle["tasks"].items()):
        if index % every:
            continue
        for trial, (name, variant) in enumerate(sorted(variants.items())):
            messages = _messages(variant, make_env, mismatches, f"{task_id}/{name}")
            simulations.append({"task_id": task_id, "trial": trial, "termination_reason": variant["termination"],
                                "messages": messages})
            expected[(task_id, trial)] = (name, variant)
    outputs = _replayed(tmp_path, domain, simulations)
    for (task_id, trial), (name, variant) in expected.items():
        key = f"{domain}_{task_id}" + (f"[r{trial}]" if trial else "")
        verdict = suite.score(cases[task_id], Generation(text=outputs[key]))
        ours = _official(verdict.counts)
        if ours != (variant["reward"], variant["reward_breakdown"]):
            mismatches.append(f"{task_id}/{name}: reward {ours} != official {variant['reward']} "
                              f"{variant['reward_breakdown']} ({verdict.error_type}: {verdict.explanation[:200]})")
    assert len(expected) >= 4 * len(oracle["tasks"]) // every
    assert not mismatches, f"{len(mismatches)} of {len(expected)} disagree:\n" + "\n".join(mismatches[:20])


def _compare_judged(oracle, make_env, domain, every: int) -> int:
    """The judged tasks: the judge's messages text for text, and the reward of each canned reply (or, where
    upstream raises on the reply, not scored here)."""
    from pytest_toolbench.contract.suite import NOT_SCORED, Generation

    suite = import_scorer(str(SUITE), "")
    judge = import_scorer(str(SUITE), "judge")
    cases = _cases(domain)
    mismatches, total = [], 0
    for index, (task_id, variants) in enumerate(oracle.get("judged", {}).items()):
        if index % every:
            continue
        assertions = cases[task_id].payload["task"]["evaluation_criteria"]["nl_assertions"]
        for name, variant in variants.items():
            total += 1
            messages = _messages(variant, make_env, mismatches, f"{task_id}/{name}")
            graded = variant["termination"] in ("agent_stop", "user_stop")
            ours = [judge.judge_messages(messages, assertions)] if graded else []
            if ours != variant["judge_messages"]:
                mismatches.append(f"{task_id}/{name}: the judge's messages differ from upstream's")
            trajectory = {"task_id": task_id, "termination_reason": variant["termination"], "messages": messages,
                          "nl_judgments": {"judge": "canned", "reply": variant["judge_reply"]}}
            verdict = suite.score(cases[task_id], Generation(text=json.dumps(trajectory)))
            if "raises" in variant:
                if verdict.error_type != NOT_SCORED:
                    mismatches.append(f"{task_id}/{name}: upstream raises ({variant['raises']}), ours "
                                      f"{verdict.error_type}")
            elif _official(verdict.counts) != (variant["reward"], variant["reward_breakdown"]):
                mismatches.append(f"{task_id}/{name}: reward {_official(verdict.counts)} != official "
                                  f"{variant['reward']} {variant['reward_breakdown']}")
    assert not mismatches, f"{len(mismatches)} of {total} disagree:\n" + "\n".join(mismatches[:20])
    return total


def test_every_tenth_task_matches_the_official_environment_and_evaluator(oracle, make_env, domain, tmp_path):
    _compare(oracle, make_env, domain, 10, tmp_path)


@pytest.mark.slow
def test_every_variant_matches_the_official_environment_and_evaluator(oracle, make_env, domain, tmp_path):
    _compare(oracle, make_env, domain, 1, tmp_path)


def test_every_tenth_judged_task_asks_and_grades_as_the_official_judge(oracle, make_env, domain):
    total = _compare_judged(oracle, make_env, domain, 10)
    assert total >= (4 if domain == "retail" else 0)


@pytest.mark.slow
def test_every_judged_task_asks_and_grades_as_the_official_judge(oracle, make_env, domain):
    assert _compare_judged(oracle, make_env, domain, 1) == 8 * len(oracle["judged"])


@pytest.mark.parametrize("layout", ["json", "dir"])
def test_a_tau2_run_results_file_replays_to_the_rewards_it_recorded(domain, layout, tmp_path):
    """A results file as upstream's own ``Results`` model writes it (scripts/make_tau2_oracle.py --run: four trials
    of every fifth task, each simulation graded by the official evaluator), in the monolithic and the ``dir``
    storage format: every simulation, mapped to its task and trial, gets the reward and breakdown it recorded."""
    from pytest_toolbench.contract.suite import CaseRecord, Generation

    with gzip.open(str(RUN).format(domain=domain), "rb") as handle:
        document = json.loads(handle.read())
    if layout == "json":
        (tmp_path / "run.json").write_text(json.dumps(document))
    else:
        (tmp_path / "simulations").mkdir()
        for simulation in document["simulations"]:
            (tmp_path / "simulations" / f"{simulation['id']}.json").write_text(json.dumps(simulation))
        (tmp_path / "results.json").write_text(json.dumps(dict(document, simulations=[])))
    suite = import_scorer(str(SUITE), "")
    outputs = suite.replay_outputs(tmp_path)
    assert not outputs.problems, outputs.problems
    cases = _cases(domain)
    assert len(outputs) == len(document["simulations"]) >= 40
    judged, records = 0, []
    for simulation in document["simulations"]:
        key = f"{domain}_{simulation['task_id']}" + (f"[r{simulation['trial']}]" if simulation["trial"] else "")
        verdict = suite.score(cases[simulation["task_id"]], Generation(text=outputs[key]))
        recorded = simulation["reward_info"]
        breakdown = recorded["reward_breakdown"]
        assert _official(verdict.counts) == (recorded["reward"], breakdown or None), key
        if "needs_judge" in cases[simulation["task_id"]].keywords and simulation["termination_reason"] == "agent_stop":
            assert verdict.labels["nl_judge"] == "recorded in the tau2 results file", key
            judged += 1
        records.append(CaseRecord("tau2bench", key.split("[")[0], domain, verdict.passed, verdict.error_type,
                                  counts=verdict.counts, sample=simulation["trial"]))
    assert judged >= (0 if domain == "airline" else 12)  # retail: every fifth judged task, three graded trials
    # the suite's figures of the run are upstream's compute_metrics of it (average reward, pass^k)
    official = json.loads(Path(str(RUN).replace(".json.gz", "_metrics.json").format(domain=domain)).read_text())
    aggregation = import_scorer(str(SUITE), "aggregation")
    ours = {m.name: m.value for m in aggregation.aggregate_samples(records)}
    per_trial = [aggregation.aggregate([r for r in records if r.sample == k])[0] for k in range(4)]
    assert {m.name for m in per_trial} == {"average reward"}  # the core averages each trial's figure
    assert math.isclose(sum(m.value for m in per_trial) / 4, official["avg_reward"])
    assert math.isclose(ours[f"{domain} pass^1"], official["avg_reward"])
    assert {k: ours[f"{domain} pass^{k}"] for k in official["pass_hat_ks"]} == \
        pytest.approx(official["pass_hat_ks"], abs=1e-12)


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
