"""BFCL items no model can pass (suites/bfcl/scorer/unpassable.yaml): confirmed by running the ground truth through
the multi-turn environment, marked in the verdict, kept in the official figures, with a passable-only figure
beside."""

from __future__ import annotations

import json

import pytest

from pytest_toolbench.contract.suite import CaseRecord, Generation, SuiteContext
from shipped import scorer

bfcl = scorer("bfcl")
unpassable = scorer("bfcl", "unpassable")
conversation = scorer("bfcl", "multi_turn.conversation")
executor = scorer("bfcl", "multi_turn.executor")


@pytest.fixture(scope="module")
def base_cases(shared_data):
    context = SuiteContext(shared_data / "bfcl", {"categories": [{"name": "multi_turn_base"}]})
    return {case.case_id: case for case in bfcl.load_cases(context)}


def test_every_declared_item_names_its_upstream_issue_and_exists(base_cases):
    assert unpassable.declared()
    for case_id, entry in unpassable.declared().items():
        assert case_id in base_cases
        assert entry["issue"].startswith("ShishirPatil/gorilla#") and entry["why"]


def test_multi_turn_base_4_ground_truth_is_not_what_the_tools_return(base_cases):
    case = base_cases["multi_turn_base_4"]
    instances = conversation.new_instances(case)
    turns = [executor.execute_calls(turn, instances, entry_id=case.case_id) for turn in case.payload["ground_truth"]]
    sorted_text = json.loads(turns[1][0])["sorted_content"]
    tweet = json.loads(turns[2][0])["content"]
    assert sorted_text == "Initial report content Unsorted data More unsorted data"  # sort() of one line: itself
    assert tweet != sorted_text and sorted(tweet.split()) == sorted(sorted_text.split())


def test_a_faithful_model_fails_it_with_the_note_and_the_figures_keep_it(base_cases):
    case = base_cases["multi_turn_base_4"]
    gold = bfcl.gold_output(case)
    passed = bfcl.score(case, Generation(text=gold))
    assert passed.passed and passed.labels["unpassable"] == "ShishirPatil/gorilla#1367"
    faithful = gold.replace("Initial report content More unsorted data Unsorted data",
                            "Initial report content Unsorted data More unsorted data")
    assert faithful != gold
    failed = bfcl.score(case, Generation(text=faithful))
    assert not failed.passed
    assert failed.explanation.startswith("fails for every model: upstream ground truth unreachable "
                                         "(ShishirPatil/gorilla#1367")
    records = [CaseRecord("bfcl", "multi_turn_base_4", "multi_turn_base", False, failed.error_type),
               CaseRecord("bfcl", "multi_turn_base_5", "multi_turn_base", True),
               CaseRecord("bfcl", "multi_turn_base_6", "multi_turn_base", False, "x")]
    figures = {m.name: m for m in bfcl.aggregate(records)}
    assert (figures["multi_turn_base"].correct, figures["multi_turn_base"].total) == (1, 3)  # official: kept
    passable = figures["multi_turn_base_passable"]
    assert (passable.correct, passable.total, passable.value) == (1, 2, 0.5)
    assert passable.formula.startswith("NOT official") and "multi_turn_base_4" in passable.formula
    assert "multi_turn_base_passable" not in figures["overall_official"].formula
