"""A replay with a BFCL row (``--toolbench-bfcl-model``, or the row ``--model`` matches) decodes the result files as
that row's handler does, as ``bfcl evaluate --model <row>`` does: the official verdict and error type on every
record of ``tests/data/bfcl_row_replay_oracle.json.gz`` (frozen from bfcl-eval 2026.3.23 by
``scripts/make_row_replay_oracle.py``: the ground truth written in each row's own call format, fenced, after a
reasoning block, wrong, as text, empty, in another row's format, and hostile, each recorded by the official handler
as ``bfcl generate`` writes it, over single-turn and multi-turn entries, one row per handler and the six published
rows). Without a row, the per-file rule of before holds."""

from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import REPO
from pytest_toolbench.backends.replay import ReplayBackend, replay_row
from pytest_toolbench.contract.errors import UsageProblem
from pytest_toolbench.contract.suite import SuiteContext, Task
from pytest_toolbench.scorer_lib.bfcl_handlers import handlers
from shipped import scorer

ORACLE = json.loads(gzip.decompress((REPO / "tests/data/bfcl_row_replay_oracle.json.gz").read_bytes()))["rows"]
bfcl = scorer("bfcl")
PUBLISHED = ["Qwen/Qwen3-4B-Instruct-2507-FC", "MadeAgents/Hammer2.1-7b", "microsoft/phi-4", "google/gemma-3-27b-it",
             "meta-llama/Llama-3.3-70B-Instruct-FC", "Qwen/Qwen3-8B"]


@pytest.fixture(scope="module")
def cases(shared_data):
    categories = sorted({record["category"] for row in ORACLE.values() for record in row["records"]})
    return {case.case_id: dataclasses.replace(case, suite="bfcl") for case in  # stamped as the catalog stamps it
            bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": categories}))}


def write_results(folder: Path, records: list[dict]) -> Path:
    """The records as ``bfcl generate`` result files (one per category)."""
    folder.mkdir(parents=True)
    by_category = defaultdict(list)
    for record in records:
        by_category[record["category"]].append(json.dumps({"id": record["id"], "result": record["result"]}))
    for category, lines in by_category.items():
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


class Suites:
    def __init__(self, cases):
        self.cases = list(cases.values())
        self.all_case_ids = [case.case_id for case in self.cases]
        self.name, self.benchmark = "bfcl", bfcl

    def by_name(self, name):
        return self if name == "bfcl" else None


def replayed_verdicts(tmp_path: Path, cases: dict, records: list[dict], row: dict | None) -> dict:
    """``{(id, label): (passed, error_type, mode)}`` of the records replayed through the replay backend."""
    by_label = defaultdict(list)
    for record in records:
        by_label[record["label"]].append(record)
    verdicts = {}
    for label, group in by_label.items():
        folder = write_results(tmp_path / label, group)
        backend = ReplayBackend(Suites(cases), str(folder), row=row)
        for record in group:
            case = cases[record["id"]]
            [generation] = backend.generate([Task(case, None, 0)])
            verdict = bfcl.score(case, generation)
            verdicts[(record["id"], label)] = (verdict.passed, verdict.error_type, verdict.labels.get("mode"))
        assert not [p for p in backend.problems() if "error" in p], backend.problems()
    return verdicts


def test_the_oracle_has_a_row_for_every_handler_and_the_published_rows():
    assert {row["handler"] for row in ORACLE.values()} >= set(handlers.HANDLERS) - {"QuickTestingOSSHandler"}
    assert set(PUBLISHED) <= set(ORACLE)
    labels = {record["label"] for row in ORACLE.values() for record in row["records"]}
    assert {"native", "fenced_json", "fenced_python", "think", "huge_int", "deep", "nul", "surrogate",
            "truncated"} <= labels
    # the oracle is not one-sided: the row's own format passes, its failures have several error types
    for name, row in ORACLE.items():
        assert any(r["valid"] for r in row["records"] if r["label"] == "native"), name
    error_types = {r["error_type"] for row in ORACLE.values() for r in row["records"]}
    assert {None, "ast_decoder:decoder_failed", "irrelevance_error:decoder_success",
            "relevance_error:decoder_failed"} <= error_types


@pytest.mark.parametrize("row", sorted(ORACLE))
def test_a_replay_with_the_row_gives_the_official_verdict_and_error_type(row, cases, tmp_path):
    records = ORACLE[row]["records"]
    choice = replay_row(row, None, None).to_json()
    assert choice["handler"] == ORACLE[row]["handler"] and choice["matched"] == "named"
    verdicts = replayed_verdicts(tmp_path, cases, records, choice)
    mismatches = [(r["id"], r["label"], r["valid"], r["error_type"], verdicts[(r["id"], r["label"])][:2])
                  for r in records if verdicts[(r["id"], r["label"])][:2] != (r["valid"], r["error_type"])]
    assert not mismatches, f"{len(mismatches)} of {len(records)} differ from the official evaluator: {mismatches[:6]}"


def test_without_a_row_the_per_file_rule_holds(cases, tmp_path):
    """phi-4's fenced outputs: PhiHandler strips the fence, the per-file prompting decoder does not; Qwen FC's
    ``<tool_call>`` blocks: the row's decoder reads them, the prompting decoder does not."""
    for row, label in [("microsoft/phi-4", "fenced_python"), ("Qwen/Qwen3-4B-Instruct-2507-FC", "native")]:
        records = [r for r in ORACLE[row]["records"] if r["label"] == label and r["valid"]
                   and not r["category"].startswith("multi_turn") and "irrelevance" not in r["category"]]
        assert records
        with_row = replayed_verdicts(tmp_path / "row" / row, cases, records, replay_row(row, None, None).to_json())
        without = replayed_verdicts(tmp_path / "none" / row, cases, records, None)
        assert all(passed for passed, _, _ in with_row.values())
        assert not any(passed for passed, _, _ in without.values())
        assert {mode for _, _, mode in without.values()} == {"prompting"}
        assert {error for _, error, _ in without.values()} <= {"ast_decoder:decoder_failed",
                                                                "relevance_error:decoder_failed"}


def test_the_row_matched_by_model_decodes_as_the_generation_path_matches_it():
    assert replay_row(None, "microsoft/phi-4", None).to_json()["handler"] == "PhiHandler"
    assert replay_row(None, "microsoft/phi-4", None).matched == "checkpoint id"
    assert replay_row(None, "Qwen/Qwen2.5-7B-Instruct", None).matched == "family"
    assert replay_row(None, "Qwen/Qwen2.5-7B-Instruct", None).handler == "QwenHandler"
    assert replay_row(None, "someone/unknown-model", None).handler is None
    assert replay_row(None, None, None).handler is None
    # --toolbench-replay-mode states the files' mode: no match by --model; with a named row it is refused
    assert replay_row(None, "microsoft/phi-4", "prompting").handler is None
    with pytest.raises(UsageProblem, match="exclude each other"):
        replay_row("microsoft/phi-4", None, "fc")
    with pytest.raises(UsageProblem, match="not an open-model row"):
        replay_row("Qwen/Qwen9-1B", None, None)


def _run(shared_data, tmp_path, folder, out, *extra):
    ids = sorted({r["id"] for r in ORACLE["microsoft/phi-4"]["records"] if not r["category"].startswith("multi")})
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-q", "-p", "no:cacheprovider", "-p",
         "no:randomly", f"--toolbench-data={shared_data}", f"--toolbench-replay={folder}", f"--toolbench-json={out}",
         "-k", " or ".join(ids), *extra],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)])
def test_the_plugin_replays_with_the_row_and_writes_it_in_the_header(shared_data, tmp_path, workers):
    """End to end: ``--toolbench-bfcl-model=microsoft/phi-4`` over phi-4's fenced outputs gives the official
    verdicts, the header names the row; without it the header says no row and the per-file rule fails them."""
    records = [r for r in ORACLE["microsoft/phi-4"]["records"]
               if r["label"] == "fenced_python" and not r["category"].startswith("multi")]
    folder = write_results(tmp_path / "results", records)
    with_row = _run(shared_data, tmp_path, folder, tmp_path / "row.json", "--toolbench-bfcl-model=microsoft/phi-4",
                    *workers)
    assert with_row["header"]["bfcl_row"]["row"] == "microsoft/phi-4"
    assert with_row["header"]["bfcl_row"]["handler"] == "PhiHandler"
    official = {r["id"]: (r["valid"], r["error_type"]) for r in records}
    got = {c["case_id"]: (c["passed"], c["error_type"]) for c in with_row["cases"]}
    assert {case_id: got.get(case_id) for case_id in official} == official  # -k may select a few more
    without = _run(shared_data, tmp_path, folder, tmp_path / "none.json", *workers)
    assert without["header"]["bfcl_row"]["matched"] == "none" and without["header"]["bfcl_row"]["handler"] is None
    assert sum(c["passed"] for c in without["cases"]) < sum(c["passed"] for c in with_row["cases"])
    if not workers:  # the gold backend writes the field too: no row
        out = tmp_path / "gold.json"
        subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-q", "-p", "no:cacheprovider",
                        f"--toolbench-data={shared_data}", f"--toolbench-json={out}", "-k", "simple_python_0"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
        header = json.loads(out.read_text())["header"]
        assert header["backend"] == "gold" and header["bfcl_row"]["matched"] == "none"


@pytest.mark.slow
def test_a_replay_with_the_row_gives_the_same_records_serially_and_under_xdist(shared_data, tmp_path):
    records = [r for r in ORACLE["Qwen/Qwen3-4B-Instruct-2507-FC"]["records"] if r["label"] == "native"
               and not r["category"].startswith("multi")]
    folder = write_results(tmp_path / "results", records)
    runs = [_run(shared_data, tmp_path, folder, tmp_path / f"run{n}.json",
                 "--toolbench-bfcl-model=Qwen/Qwen3-4B-Instruct-2507-FC", *extra)
            for n, extra in enumerate([[], ["-n", "2"]])]
    strip = ("nodeid", "order")
    serial, parallel = ([{k: v for k, v in c.items() if k not in strip} for c in run["cases"]] for run in runs)
    assert sorted(serial, key=lambda c: c["case_id"]) == sorted(parallel, key=lambda c: c["case_id"])
    assert runs[0]["suites"] == runs[1]["suites"]


def test_every_built_in_backend_says_its_row_for_the_header(tmp_path):
    """gold and replay say it from their options (an xdist controller builds no backend for them); vllm and openai
    from the backend's own ``row_choice`` (tests/test_bfcl_fc_rows.py, tests/test_engine_endpoint.py)."""
    from pytest_toolbench.backends.gold import GoldKind
    from pytest_toolbench.backends.replay import ReplayKind, ReplayOptions
    from pytest_toolbench.run.options import RunOptions

    gold = GoldKind.row_choice(RunOptions(backend="gold"))
    assert gold.row is None and gold.matched == "none" and "gold" in gold.note
    named = replay_row("microsoft/phi-4", None, None).to_json()
    options = RunOptions(backend="replay", backend_options=ReplayOptions(path=str(tmp_path), row=named))
    assert ReplayKind.row_choice(options).to_json() == named
    assert "decoded as BFCL row microsoft/phi-4 (PhiHandler)" in ReplayKind.describe(options)
    assert ReplayKind.options_from_json(json.loads(json.dumps(options.backend_options.__dict__))) == \
        options.backend_options  # what an xdist worker gets
