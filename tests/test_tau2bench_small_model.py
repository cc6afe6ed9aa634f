"""A real model's τ²-bench conversations (Qwen2.5-Coder-0.5B-Instruct on the CPU engine, agent and user on the one
engine; two airline and two retail tasks, made by the plugin), graded by upstream 1.0.1's own evaluator
(``scripts/make_tau2_model_oracle.py``, frozen in ``tests/data/tau2_small_model.json``): the plugin re-grades every
trajectory as it ended and as if the user had ended it, and must give the official reward and breakdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import Generation, SuiteContext
from shipped import scorer

FROZEN = Path(__file__).resolve().parent / "data" / "tau2_small_model.json"
DOCUMENT = json.loads(FROZEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cases(shared_data):
    context = SuiteContext(shared_data / "tau2bench" / "upstream",
                           {"options": {"domains": ["airline", "retail"], "split": "base"}, "name": "tau2bench"})
    return {case.case_id: case for case in scorer("tau2bench").load_cases(context)}


def _plugin(case, transcript):
    verdict = scorer("tau2bench").score(case, Generation(text=json.dumps(transcript)))
    breakdown = verdict.details.get("reward_breakdown") if verdict.details else None
    return {"reward": verdict.counts["reward"], "reward_breakdown": breakdown or None}


def test_the_frozen_run_holds_two_airline_and_two_retail_conversations_of_the_model():
    assert sorted(c["case_id"] for c in DOCUMENT["cases"]) == ["airline_0", "airline_1", "retail_0", "retail_1"]
    assert "qwen-coder-0.5b" in str(DOCUMENT["model"])
    for row in DOCUMENT["cases"]:
        cost = row["transcript"]["conversation"]
        assert cost["agent"]["requests"] > 0 and cost["user"]["requests"] > 0  # both roles answered by the model


@pytest.mark.parametrize("row", DOCUMENT["cases"], ids=lambda row: row["case_id"])
def test_the_plugin_gives_the_official_reward_on_the_models_trajectories(cases, row):
    case = cases[row["case_id"]]
    transcript = row["transcript"]
    assert _plugin(case, transcript) == row["official"] == row["plugin"]
    assert _plugin(case, dict(transcript, termination_reason="user_stop")) == row["official_as_user_stop"]
