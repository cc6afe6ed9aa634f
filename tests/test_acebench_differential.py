"""ACEBench scorer against the official verdicts (shared/dev-verdicts/acebench) and the gold answers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from pytest_toolbench.contract.suite import CaseResult, Generation, SuiteContext

from conftest import shared_data_dir
from shipped import scorer

acebench = scorer("acebench")


REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA = (shared_data_dir() or SHARED / "data") / "acebench"
VERDICTS = SHARED / "dev-verdicts" / "acebench"


@pytest.fixture(scope="module")
def cases_by_id():
    if not DATA.is_dir():
        pytest.skip(f"ACEBench data not found at {DATA}")
    return {case.case_id: case for case in acebench.load_cases(SuiteContext(DATA, {}))}


def test_every_official_verdict_is_reproduced(cases_by_id):
    path = VERDICTS / "verdicts.jsonl"
    if not path.is_file():
        pytest.skip(f"official verdicts not found at {path}")
    disagreements = []
    error_types = Counter()
    total = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        total += 1
        case = cases_by_id[f"{record['lang']}-{record['id']}"]
        verdict = acebench.score(case, Generation(text=record["result"]))
        official_type = record["error"]
        mine = verdict.details.get("official_error_type", verdict.error_type) if not verdict.passed else None
        if verdict.passed != record["valid"] or (not record["valid"] and mine != official_type):
            disagreements.append((case.case_id, record["operator"], record["valid"], official_type, verdict.passed, mine))
        error_types[official_type] += 1
    assert total > 1000
    assert not disagreements, f"{len(disagreements)}/{total} disagree, first: {disagreements[:5]}"


def test_replayed_round_matches_the_verdict_file(cases_by_id):
    round_dir = VERDICTS / "round_0"
    path = VERDICTS / "verdicts.jsonl"
    if not round_dir.is_dir() or not path.is_file():
        pytest.skip("official round_0 results not found")
    outputs = acebench.replay_outputs(round_dir)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(outputs) == len(records)
    for record in records:
        case_id = f"{record['lang']}-{record['id']}"
        assert outputs[case_id] == record["result"]
        assert acebench.score(cases_by_id[case_id], Generation(text=outputs[case_id])).passed == record["valid"]


def test_gold_passes_everything_but_the_documented_defects(cases_by_id):
    defects = yaml.safe_load((REPO / "suites" / "acebench" / "known_defects.yaml").read_text(encoding="utf-8")) or {}
    failing = set()
    for case in cases_by_id.values():
        if case.category.startswith("agent"):
            continue
        if not acebench.score(case, Generation(text=acebench.gold_output(case))).passed:
            failing.add(case.case_id)
    assert failing == set(defects)


def test_gold_summary_figures(cases_by_id):
    results = []
    for case in cases_by_id.values():
        if case.category.startswith("agent"):
            continue
        verdict = acebench.score(case, Generation(text=acebench.gold_output(case)))
        results.append(
            CaseResult(case.suite, case.case_id, case.category, verdict.passed, verdict.error_type, verdict.counts,
                       keywords=case.keywords)
        )
    metrics = {m.name: m for m in acebench.aggregate(results)}
    assert metrics["en/special_summary"].value == 1.0
    assert metrics["en/normal_multi_turn_user_switch"].total == 50
    assert metrics["zh/normal_multi_turn_user_adjust"].total == 50
    assert metrics["en/normal_atom_bool"].total == 50
    assert 0.98 < metrics["combined/normal_summary"].value < 1.0
