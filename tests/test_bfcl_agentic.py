"""BFCL agentic categories (memory, web search): the checker against the official code's frozen verdicts, the memory
backends (official classes run from the wheel) against the official classes' results, loading, the protocol texts,
gold, skips for what cannot run here.

``tests/data/bfcl_agentic_oracle.jsonl``: hand-made results over real memory and web-search ground truth with the
verdict of ``_evaluate_single_agentic_entry`` of bfcl-eval 2026.3.23 (prompting and FC decoding).
``tests/data/bfcl_memory_oracle.jsonl``: call sequences with the official ``MemoryAPI_kv`` / ``MemoryAPI_rec_sum``
result strings and final state; ``tests/data/bfcl_memory_vector_oracle.jsonl`` the same for ``MemoryAPI_vector``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import shared_data_dir
from pytest_toolbench.scorer_lib import embedding_models
from pytest_toolbench.contract.suite import Generation, SuiteContext
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
bfcl = scorer("bfcl")
agentic = scorer("bfcl", "agentic.conversation")
memory = scorer("bfcl", "agentic.memory")
categories = scorer("bfcl", "categories")
executor = scorer("bfcl", "multi_turn.executor")

ROWS = [json.loads(line) for line in (REPO / "tests/data/bfcl_agentic_oracle.jsonl").read_text().splitlines()]
MEMORY_ROWS = [json.loads(line) for line in (REPO / "tests/data/bfcl_memory_oracle.jsonl").read_text().splitlines()]


def test_checker_verdicts_equal_the_official_checker():
    mismatches = []
    for row in ROWS:
        decode = executor.decode_fc_step if row["mode"] == "fc" else executor.decode_prompting_step
        gt = _ground_truth()[row["id"]]
        verdict = agentic.check_agentic(row["result"], gt, decode_step=decode)
        if (verdict.passed, verdict.error_type) != (row["official_valid"], row["official_error_type"]):
            mismatches.append((row["id"], row["mode"], row["label"], row["official_error_type"], verdict.error_type))
    assert not mismatches, f"{len(mismatches)} of {len(ROWS)} differ: {mismatches[:8]}"


_GT: dict = {}


def _ground_truth() -> dict:
    if not _GT:
        data = (shared_data_dir() or Path("/nonexistent")) / "bfcl" / "possible_answer"
        if not data.is_dir():
            pytest.skip("BFCL data not available (set TOOLBENCH_DATA)")
        for name, prefix in (("BFCL_v4_memory.json", ("memory", "memory_kv")),
                             ("BFCL_v4_web_search.json", ("web_search", "web_search_base"))):
            for line in (data / name).read_text().splitlines():
                entry = json.loads(line)
                _GT[entry["id"].replace(*prefix)] = entry["ground_truth"]
    return _GT


@pytest.mark.skipif(importlib.util.find_spec("rank_bm25") is None, reason="the bfcl-memory extra is not installed")
@pytest.mark.parametrize("row", MEMORY_ROWS, ids=[row["class"] for row in MEMORY_ROWS])
def test_memory_backends_answer_as_the_official_classes(row, shared_data):
    category = "memory_" + row["class"].removeprefix("MemoryAPI_")
    instance = memory.memory_instance(category, None, [shared_data / "bfcl"])
    results = executor.execute_calls(row["calls"], {row["class"]: instance}, entry_id="x")
    assert results == row["official_results"]
    state = {k: v for k, v in vars(instance).items() if not k.startswith("_") and k != "snapshot_folder"}
    assert state == row["official_state"]
    # a snapshot round-trips into a fresh instance
    again = memory.memory_instance(category, memory.memory_snapshot(category, instance), [shared_data / "bfcl"])
    assert memory.memory_snapshot(category, again) == memory.memory_snapshot(category, instance)


VECTOR_ROW = json.loads((REPO / "tests/data/bfcl_memory_vector_oracle.jsonl").read_text())


def _vector_backend_installed() -> bool:
    if any(importlib.util.find_spec(m) is None for m in ("sentence_transformers", "faiss", "numpy")):
        return False
    try:
        return embedding_models.archive_members(embedding_models.model_for("all-MiniLM-L6-v2")) is not None
    except embedding_models.ModelCopyError:
        return True  # installed but not the verified copy: the test must fail, not skip


needs_vector_backend = pytest.mark.skipif(not _vector_backend_installed(),
                                          reason="the bfcl-memory-vector extra (and its model) is not installed")


def _with_scores_rounded(result: str) -> object:
    """A result string with its similarity scores rounded to 1e-6: float32 sums may differ in the last bits on
    another CPU; ids, texts, order and errors must be equal."""
    try:
        value = json.loads(result)
    except json.JSONDecodeError:
        return result
    for entry in value.get("result", []) if isinstance(value, dict) and isinstance(value.get("result"), list) else []:
        if "similarity_score" in entry:
            entry["similarity_score"] = round(entry["similarity_score"], 6)
    return value


@needs_vector_backend
def test_memory_vector_backend_answers_as_the_official_package(shared_data):
    """``tests/data/bfcl_memory_vector_oracle.jsonl``: bfcl-eval 2026.3.23 installed with pip in a separate venv,
    ``MemoryAPI_vector`` imported as upstream does (the encoder loaded by its Hub name, offline, from a Hugging Face
    cache holding the verified all-MiniLM-L6-v2 files), the calls run with upstream's ``_process_method_calls``, eval
    and ``json.dumps``. Here the same calls run on the class from the wheel with the encoder loaded from the verified
    copy: every result and the final state are the same (bit-identical where recorded, on the same machine)."""
    instance = memory.memory_instance("memory_vector", None, [str(shared_data / "bfcl")])
    results = executor.execute_calls(VECTOR_ROW["calls"], {"MemoryAPI_vector": instance}, entry_id="x")
    assert [_with_scores_rounded(r) for r in results] == [_with_scores_rounded(r)
                                                         for r in VECTOR_ROW["official_results"]]
    assert json.loads(json.dumps(memory.memory_snapshot("memory_vector", instance))) == VECTOR_ROW["official_state"]
    assert any('"similarity_score"' in r for r in results)  # retrieval ran on real embeddings


@needs_vector_backend
def test_memory_vector_items_can_run_with_the_verified_encoder(cases):
    """With the extra installed, no memory_vector item is skipped (the main job scores all 155)."""
    vector = [case for case in cases.values() if case.category == "memory_vector"]
    assert len(vector) == 155 and not [case.case_id for case in vector if bfcl.unavailable(case)]


@pytest.fixture(scope="module")
def cases(shared_data):
    loaded = bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": list(categories.WEB_SEARCH + categories.MEMORY)}))
    return {case.case_id: case for case in loaded}


def test_465_memory_and_200_web_search_items(cases):
    categories = [case.category for case in cases.values()]
    assert len(cases) == 665
    assert {c: categories.count(c) for c in set(categories)} == {
        "memory_kv": 155, "memory_vector": 155, "memory_rec_sum": 155, "web_search_base": 100,
        "web_search_no_snippet": 100}
    case = cases["memory_kv_0-customer-0"]
    assert case.payload["question"][0][0] == {"role": "system", "content": agentic.ANSWER_FORMAT_PROMPT}
    assert [p["id"] for p in case.payload["prerequisites"]][:2] == ["memory_kv_prereq_0-customer-0",
                                                                    "memory_kv_prereq_1-customer-1"]
    assert cases["web_search_no_snippet_3"].payload["initial_config"] == {"WebSearchAPI": {"show_snippet": False}}


def drive(case, reply):
    conversation = bfcl.conversation(case)
    requests = []
    try:
        request = next(conversation)
        while True:
            requests.append(request)
            request = conversation.send(reply(request, len(requests) - 1))
    except StopIteration as done:
        return requests, done.value


@pytest.mark.skipif(importlib.util.find_spec("rank_bm25") is None, reason="the bfcl-memory extra is not installed")
def test_memory_question_runs_its_prerequisites_in_order_with_the_memory_carried_over(cases):
    case = cases["memory_kv_1-customer-1"]
    stored = []

    def reply(request, step):
        # store one fact in the first prerequisite, then answer without calls
        if step == 0:
            return Generation(text="[core_memory_add(key='user_name', value='Michael')]")
        if request.messages[-1]["role"] == "user" and request.messages[-1]["content"] == \
                case.payload["question"][0][-1]["content"]:
            stored.append(request.messages[0]["content"])
            return Generation(text=bfcl.gold_reply(case, step, request))
        return Generation(text="Noted.")

    requests, transcript = drive(case, reply)
    prerequisite_turns = sum(len(p["question"]) for p in case.payload["prerequisites"])
    assert len(requests) == prerequisite_turns + 2  # one extra step for the call, plus the question
    system = stored[0]
    assert system.startswith(requests[0].messages[0]["content"].split("\n\n")[0])  # the BFCL prompt comes first
    assert '"user_name": "Michael"' in system  # the question sees the memory the prerequisites left
    assert system.endswith("\n\n" + agentic.ANSWER_FORMAT_PROMPT)
    first_prerequisite_system = requests[0].messages[0]["content"]
    assert "There is no content in the core memory at this point." in first_prerequisite_system
    assert agentic.ANSWER_FORMAT_PROMPT not in first_prerequisite_system
    assert bfcl.score(case, Generation(text=json.dumps(transcript))).passed


@pytest.mark.skipif(importlib.util.find_spec("rank_bm25") is None, reason="the bfcl-memory extra is not installed")
def test_gold_passes_every_memory_question_that_can_run(cases):
    failures = []
    for case in cases.values():
        if case.category == "memory_vector" and bfcl.unavailable(case):
            continue
        if not case.category.startswith("memory"):
            continue
        _, transcript = drive(case, lambda request, step, case=case: Generation(
            text=bfcl.gold_reply(case, step, request)))
        verdict = bfcl.score(case, Generation(text=json.dumps(transcript)))
        if not verdict.passed:
            failures.append((case.case_id, verdict.explanation[:200]))
    assert not failures, failures[:5]


def test_web_search_needs_a_key_and_replays_are_scored(cases, monkeypatch):
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    case = cases["web_search_base_0"]
    assert "SERPAPI_API_KEY" in bfcl.unavailable(case)
    assert bfcl.score(case, Generation(text=bfcl.gold_output(case))).passed
    wrong = json.dumps([["[search_engine_query(keywords='tea')]", "I do not know"]])
    verdict = bfcl.score(case, Generation(text=wrong))
    assert not verdict.passed and verdict.error_type == "agentic:answer_not_found"


def test_overall_is_labelled_complete_only_when_every_category_ran_in_full():
    from pytest_toolbench.contract.suite import NOT_SCORED, CaseResult


    def results(skip=()):
        return [CaseResult("bfcl", f"{c}_0", c, c not in skip, NOT_SCORED if c in skip else None, {})
                for c in categories.ALL_CATEGORIES]

    metrics = {m.name: m for m in bfcl.aggregate(results())}
    assert metrics["overall_official"].value == pytest.approx(1.0)
    assert "complete: every scored category ran" in metrics["overall_official"].formula
    assert "overall_over_categories_ran" not in metrics
    metrics = {m.name: m for m in bfcl.aggregate(results(skip=("web_search_base", "web_search_no_snippet")))}
    assert metrics["web_search_base"].value is None and metrics["web_search"].value == 0
    assert metrics["agentic"].value == pytest.approx(0.5)
    assert metrics["overall_official"].value == pytest.approx(0.8)  # 0.4 * Agentic lost half
    assert "INCOMPLETE: 2 of 22" in metrics["overall_official"].formula
    assert metrics["overall_over_categories_ran"].value == pytest.approx(1.0)


def test_the_overall_without_web_search_renormalises_the_official_weights():
    """(10 NonLive + 10 Live + 10 Irrelevance + 30 MultiTurn + 20 Memory) / 80: the official Overall is 0.8 of it plus
    0.2 web search, and it is complete whenever every category but web search ran in full."""
    from pytest_toolbench.contract.suite import NOT_SCORED, CaseResult

    def results(skip=(), failing=()):
        out = []
        for c in categories.ALL_CATEGORIES:
            for n in range(4):
                out.append(CaseResult("bfcl", f"{c}_{n}", c, c not in skip and not (c in failing and n < len(c) % 4 + 1),
                                      NOT_SCORED if c in skip else None, {}))
        return out

    failing = ("simple_java", "live_multiple", "irrelevance", "multi_turn_base", "memory_vector", "web_search_base")
    metrics = {m.name: m for m in bfcl.aggregate(results(failing=failing))}
    without = metrics["overall_without_web_search"]
    assert without.value == pytest.approx(
        (10 * metrics["non_live_ast"].value + 10 * metrics["live_ast"].value + 10 * metrics["irrelevance_detection"].value
         + 30 * metrics["multi_turn"].value + 20 * metrics["memory"].value) / 80)
    assert metrics["overall_official"].value == pytest.approx(0.8 * without.value + 0.2 * metrics["web_search"].value)
    assert not without.incomplete and "NOT the official Overall" in without.formula
    skipped = {m.name: m for m in bfcl.aggregate(results(skip=categories.WEB_SEARCH, failing=failing))}
    assert skipped["overall_without_web_search"].value == pytest.approx(without.value)
    assert not skipped["overall_without_web_search"].incomplete and skipped["overall_official"].incomplete
    no_memory = {m.name: m for m in bfcl.aggregate(results(skip=categories.WEB_SEARCH + ("memory_kv",)))}
    assert no_memory["overall_without_web_search"].incomplete == \
        "INCOMPLETE: memory_kv did not run in full (counted as 0)"
