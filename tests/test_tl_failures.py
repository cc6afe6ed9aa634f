"""TL-Training error categories and reward: every category, every parameter combination, the faithful string mode."""

from __future__ import annotations

import statistics

import pytest

from pytest_toolbench.contract.suite import CaseResult
from pytest_toolbench.scorer_lib.tl_failures import (ANY_VALUE, classify_call, classify_call_lists, classify_calls,
                                          parameter_reward, tl_metrics, tool_code_reward, tool_signatures)

TOOLS = [
    {"name": "search", "parameters": {"type": "object", "properties": {"query": {}, "limit": {}, "lang": {}}}},
    {"type": "function", "function": {"name": "lookup", "parameters": {"type": "dict", "properties": {"id": {}}}}},
    {"name": "ping"},
]
SIGNATURES = tool_signatures(TOOLS)
GOLD = {"name": "search", "arguments": {"query": "cats", "limit": 5}}


def _classify(predicted, gold=GOLD, **kwargs):
    outcome = classify_call(predicted, gold, SIGNATURES, **kwargs)
    return outcome.category, outcome.reward


def test_signatures_read_bare_and_wrapped_docs():
    assert SIGNATURES == {"search": ("query", "limit", "lang"), "lookup": ("id",), "ping": ()}


@pytest.mark.parametrize(
    ("predicted", "expected"),
    [
        (None, ("unparseable", -2.0)),
        ({"arguments": {}}, ("unparseable", -2.0)),
        ({"name": "search", "arguments": "query=cats"}, ("unparseable", -2.0)),
        ({"name": "serch", "arguments": {"query": "cats", "limit": 5}}, ("tool_hallucination", -2.0)),
        # Upstream: an empty name is not a hallucination; it is a wrong tool.
        ({"name": "", "arguments": {}}, ("wrong_tool", -1.5)),
        ({"name": "lookup", "arguments": {"id": 1}}, ("wrong_tool", -1.5)),
        ({"name": "search", "arguments": {"query": "cats", "limit": 5, "sort": "x"}}, ("parameter_hallucination", -0.8)),
        ({"name": "search", "arguments": {"query": "cats", "limit": 5, "lang": "en"}}, ("parameter_redundant", -0.5)),
        ({"name": "search", "arguments": {"query": "cats"}}, ("parameter_missing", -0.5)),
        ({"name": "search", "arguments": {"query": "cats", "lang": "en"}},
         ("parameter_redundant+parameter_missing", -1.0)),
        ({"name": "search", "arguments": {"query": "cats", "limit": 5, "lang": "en", "x": 1}},
         ("parameter_hallucination+parameter_redundant", -1.3)),
        ({"name": "search", "arguments": {"query": "cats", "x": 1}}, ("parameter_hallucination+parameter_missing", -1.3)),
        ({"name": "search", "arguments": {"query": "cats", "lang": "en", "x": 1}},
         ("parameter_hallucination+parameter_redundant+parameter_missing", -1.8)),
        ({"name": "search", "arguments": {"query": "dogs", "limit": 5}}, ("content_mismatch", -0.25)),
        ({"name": "search", "arguments": {"query": "cats", "limit": "5"}}, ("content_mismatch", -0.25)),
        ({"name": "search", "arguments": {"query": "cats", "limit": 5}}, ("correct", 1.0)),
        ({"name": "search", "arguments": {"limit": 5.0, "query": "cats"}}, ("correct", 1.0)),
    ],
)
def test_categories_in_order(predicted, expected):
    assert _classify(predicted) == expected


@pytest.mark.parametrize(("h", "r", "m", "reward"), [
    (1, 1, 1, -1.8), (1, 1, 0, -1.3), (1, 0, 1, -1.3), (0, 1, 1, -1.0), (1, 0, 0, -0.8), (0, 1, 0, -0.5),
    (0, 0, 1, -0.5), (0, 0, 0, 0.0)])
def test_parameter_reward_table_equals_linear_formula(h, r, m, reward):
    assert parameter_reward(bool(h), bool(r), bool(m)) == reward
    if h or r or m:
        assert reward == pytest.approx(-0.8 * h - 0.5 * r - 0.5 * m)


def test_any_value_and_optional_and_acceptable_lists():
    gold = {"name": "search", "arguments": {"query": ANY_VALUE, "limit": [5, 10], "lang": ["", "en"]}}
    assert _classify({"name": "search", "arguments": {"query": "x", "limit": 10}}, gold, acceptable_values=True,
                     optional=("lang",)) == ("correct", 1.0)
    assert _classify({"name": "search", "arguments": {"query": "x", "limit": 10}}, gold) == \
        ("parameter_missing", -0.5)
    assert _classify({"name": "search", "arguments": {"query": "x", "limit": 7, "lang": "en"}}, gold,
                     acceptable_values=True) == ("content_mismatch", -0.25)


def test_classify_calls_bfcl_layout_and_multiple_calls():
    gold = [{"name": "search", "arguments": {"query": ["cats"], "limit": [5], "lang": ["", "en"]}},
            {"name": "lookup", "arguments": {"id": [1]}}]
    good = [{"name": "lookup", "arguments": {"id": 1}}, {"name": "search", "arguments": {"query": "cats", "limit": 5}}]
    assert classify_calls(good, gold, TOOLS) == ("correct", 1.0)
    assert classify_calls(None, gold, TOOLS) == ("unparseable", -2.0)
    assert classify_calls([], gold, TOOLS) == ("unparseable", -2.0)
    # One gold call unanswered: wrong tool for it.
    assert classify_calls(good[:1], gold, TOOLS) == ("wrong_tool", -1.5)
    # An extra call to an invented tool.
    assert classify_calls(good + [{"name": "nope", "arguments": {}}], gold, TOOLS) == ("tool_hallucination", -2.0)
    # The worst pair decides.
    off = [{"name": "lookup", "arguments": {"id": 2}}, {"name": "search", "arguments": {"query": "cats"}}]
    assert classify_calls(off, gold, TOOLS) == ("parameter_missing", -0.5)
    assert classify_call_lists([], [], SIGNATURES).category == "correct"


def test_many_calls_fall_back_to_greedy_pairing():
    gold = [{"name": "lookup", "arguments": {"id": i}} for i in range(10)]
    predicted = list(reversed(gold))
    assert classify_call_lists(predicted, gold, SIGNATURES).category == "correct"


@pytest.mark.parametrize(
    ("prediction", "gold", "reward"),
    [
        ("no call here", "search(query='cats')", -2),
        ("serch(query='cats')", "search(query='cats')", -2),
        ("(query='cats')", "search(query='cats')", -1.5),  # empty name: wrong tool, not hallucination
        ("lookup(id='1')", "search(query='cats')", -1.5),
        ("search(query='cats', sort='x')", "search(query='cats')", -0.8),
        ("search(query='cats', lang='en')", "search(query='cats')", -0.5),
        ("search()", "search(query='cats')", -0.5),
        ("search(lang='en')", "search(query='cats')", -1.0),
        ("search(sort='x', lang='en')", "search(query='cats')", -1.8),
        ("search(query='dogs')", "search(query='cats')", -0.25),
        ("search(query = 'cats') ", "search(query='cats')", 1),
        # Only key='string' pairs are arguments: numbers are invisible, so a wrong number still scores +1.
        ("search(query='cats', limit=9)", "search(query='cats', limit=5)", 1),
        # The name is everything before "(" on its line: an earlier line is skipped, a prefix on the line is not.
        ("Thought\nsearch(query='cats')", "search(query='cats')", 1),
        ("I call search(query='cats')", "search(query='cats')", -2),
    ],
)
def test_tool_code_reward_faithful_mode(prediction, gold, reward):
    params = {"search": ["query", "limit", "lang"], "lookup": ["id"]}
    assert tool_code_reward(prediction, gold, ["search", "lookup"], params) == reward


def test_tool_code_reward_demo_action_signature():
    params = {"search": ["query"], "lookup": ["id", "query"]}
    assert tool_code_reward("search(id='1', query='x')", "search(query='x')", ["search", "lookup"], params,
                            demo_action="lookup") == -0.5


def test_tl_metrics_tallies_and_mean_reward():
    def result(passed, category=None, reward=None):
        return CaseResult(suite="s", case_id=str(id(object())), category="c", passed=passed,
                          error_type=None if passed else "x",
                          counts={} if reward is None else {"tl_reward": reward},
                          labels={} if category is None else {"tl_category": category})
    results = [result(True), result(True), result(False, "wrong_tool", -1.5), result(False, "wrong_tool", -1.5),
               result(False, "parameter_missing", -0.5), result(False)]
    metrics = {m.name: m for m in tl_metrics(results)}
    assert metrics["TL wrong_tool"].value == pytest.approx(2 / 3) and metrics["TL wrong_tool"].correct == 2
    assert metrics["TL parameter_missing"].total == 3
    assert metrics["TL mean reward"].value == pytest.approx((1 + 1 - 1.5 - 1.5 - 0.5) / 5)
    assert list(metrics)[:2] == ["TL wrong_tool", "TL parameter_missing"]
    assert metrics["TL wrong_tool"].better == "none"  # a share of the failures: neither way is better
    assert "/ 5 cases" in metrics["TL mean reward"].formula  # the denominator is said
    assert metrics["TL mean reward"].sd == pytest.approx(statistics.stdev([1, 1, -1.5, -1.5, -0.5]))
    # a passed case alone carries its reward (+1), so the mean splits per case for the paired tests
    alone = tl_metrics([result(True)])
    assert [(m.name, m.value, m.total) for m in alone] == [("TL mean reward", 1.0, 1)]
