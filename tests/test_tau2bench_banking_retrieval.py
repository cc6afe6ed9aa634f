"""τ²-bench banking_knowledge: the knowledge base's offline retrieval and the retrieval configurations' policies
against upstream 1.0.1's own (frozen by scripts/make_tau2_banking_oracle.py, with rank_bm25 in the oracle venv):
every query's BM25 ranking (ids and the scores' ``repr``: the same floats), the result text of ``KB_search``,
``KB_search_bm25`` (with ``k`` absent, 1, 3, 10, 20, 0, -1) and ``grep``, their schemas, and the sha256 of the
policy of each of upstream's 20 retrieval variants (``golden_retrieval``: each task's). Every fourth query runs by
default; all of them are ``slow``."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path

import pytest

from pytest_toolbench.run.catalog import import_scorer

ORACLE = Path(__file__).parent / "data" / "tau2_oracle_banking_retrieval.json.gz"
SUITE = Path(__file__).resolve().parents[1] / "suites" / "tau2bench"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2bench" / "upstream"
DOMAIN = DATA / "domains" / "banking_knowledge"

pytestmark = pytest.mark.skipif(not (DOMAIN / "documents").is_dir(),
                                reason=f"the τ²-bench data folder {DATA} is not here")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def oracle():
    with gzip.open(ORACLE, "rb") as handle:
        return json.loads(handle.read())


@pytest.fixture(scope="module")
def retrieval():
    return import_scorer(str(SUITE), "domains.banking_retrieval")


@pytest.fixture(scope="module")
def kit(retrieval):
    toolkit = import_scorer(str(SUITE), "toolkit")

    class Kit(retrieval.KBSearchMixin, retrieval.GrepMixin, retrieval.KBSearchBm25AllToolsMixin, toolkit.ToolKit):
        db_model = None

        def __init__(self):
            self.knowledge = retrieval.knowledge_base(str(DOMAIN / "documents"))

    return Kit()


def _searches(oracle, every: int):
    return oracle["searches"][::every]


def _check_searches(kit, searches):
    wrong = []
    for entry in searches:
        query = entry["query"]
        ranking = [[doc_id, repr(score)] for doc_id, score in kit.knowledge.ranked(kit.knowledge.bm25_search(query))]
        if ranking != entry["ranking"]:
            wrong.append((query, "ranking"))
        if _sha(kit.use_tool("KB_search", query=query)) != entry["KB_search"]:
            wrong.append((query, "KB_search"))
        for k, expected in entry["KB_search_bm25"].items():
            arguments = {"query": query} if k == "None" else {"query": query, "k": int(k)}
            if _sha(kit.use_tool("KB_search_bm25", **arguments)) != expected:
                wrong.append((query, f"KB_search_bm25 k={k}"))
    return wrong


def test_bm25_rankings_and_search_texts_equal_upstream(oracle, kit):
    assert oracle["documents"] == len(kit.knowledge.documents) == 698
    searches = _searches(oracle, 4)
    assert len(searches) > 50
    assert _check_searches(kit, searches) == []


@pytest.mark.slow
def test_every_search_equals_upstream(oracle, kit):
    assert _check_searches(kit, oracle["searches"]) == []


def test_grep_texts_equal_upstream(oracle, kit):
    wrong = [g["pattern"] for g in oracle["greps"] if _sha(kit.use_tool("grep", pattern=g["pattern"])) != g["grep"]]
    assert wrong == []


def test_retrieval_tool_schemas_equal_upstream(oracle, kit):
    tools = kit.tools()
    for name, schema in oracle["schemas"].items():
        assert tools[name].openai_schema() == schema, name


def test_every_variants_policy_equals_upstream(oracle, kit):
    policy = import_scorer(str(SUITE), "domains.banking_policy")
    assert sorted(policy.VARIANTS) == sorted(oracle["policies"])
    # upstream's get_tasks reads tasks/task_*.json (13 of which differ from tasks.json, 4 in their grading)
    tasks = {t["id"]: t for t in (json.loads(p.read_text()) for p in sorted((DOMAIN / "tasks").glob("task_*.json")))}
    for name, expected in oracle["policies"].items():
        if name == "golden_retrieval":
            ours = {task_id: _sha(policy.banking_policy(name, DOMAIN, kit.knowledge,
                                                        tasks[task_id].get("required_documents")))
                    for task_id in expected}
            assert ours == expected
        else:
            assert _sha(policy.banking_policy(name, DOMAIN, kit.knowledge)) == expected, name


def test_bm25_okapi_formula_by_hand(retrieval):
    """rank_bm25's BM25Okapi on a toy corpus, computed by hand: idf log((N - n + .5) / (n + .5)), a negative idf
    floored at epsilon times the mean idf, term frequency saturated by k1 and normalised by length with b."""
    bm25 = retrieval.BM25Okapi([["a", "b"], ["a", "c", "c"], ["a", "d"]])
    idf_b = math.log(3 - 1 + 0.5) - math.log(1 + 0.5)
    idf_a = math.log(3 - 3 + 0.5) - math.log(3 + 0.5)
    mean = (idf_a + 3 * idf_b) / 4
    assert bm25.idf["a"] == 0.25 * mean and bm25.idf["b"] == idf_b
    avgdl = 7 / 3
    expected_c = idf_b * (2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / avgdl)))
    assert bm25.get_scores(["c"]) == [0.0, expected_c, 0.0]
    assert bm25.get_scores(["zz"]) == [0.0, 0.0, 0.0]
