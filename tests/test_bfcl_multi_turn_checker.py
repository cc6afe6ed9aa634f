"""BFCL multi-turn checker and executor against the official bfcl-eval 2026.3.23 code's frozen answers.

``tests/data/bfcl_multi_turn_oracle.jsonl.gz``: hand-made results over 120 real entries of the four categories (gold,
ground truth with positional arguments, a dropped / reordered / split / wrong call, an empty turn, hostile and
undecodable steps, a force-terminated transcript, a non-list result, FC steps with bad JSON, text, odd shapes), each
with the verdict and error type of ``_evaluate_single_multi_turn_entry`` (prompting handler:
``default_decode_execute_prompting``; FC: ``convert_to_function_call``). Rows labelled ``fc_*``, ``prompting_*``,
``*_as_prompting`` (36 real entries of base / miss_param / long_context, gold as FC steps): turns answered in text by
an FC model (an empty turn upstream), FC steps read by the prompting handler, a repeated argument key (``"k"`` and
``"k "``: ``eval`` refuses ``f(k=v,k =v)``), two calls fused into one FC name with ``or`` / ``and`` (``eval`` runs
both, or stops at the first falsy result), a repeated keyword in prompting text (the decoder keeps one).

``tests/data/bfcl_executor_oracle.jsonl``: call strings (the ground truth plus hostile and odd calls) with the result
strings of the official ``execute_multi_turn_func_call`` on fresh instances. Calls where this executor deviates on
purpose (a builtin or module name upstream's ``eval`` would run; attribute walks) must give an error string here.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from pytest_toolbench.contract.suite import SuiteContext
from shipped import scorer

REPO = Path(__file__).resolve().parents[1]
checker = scorer("bfcl", "multi_turn.checker")
executor = scorer("bfcl", "multi_turn.executor")
simulators = scorer("bfcl", "multi_turn.simulators")
conversation = scorer("bfcl", "multi_turn.conversation")
bfcl = scorer("bfcl")

ROWS = [json.loads(line) for line in gzip.decompress((REPO / "tests/data/bfcl_multi_turn_oracle.jsonl.gz").read_bytes())
        .decode("utf-8").splitlines()]
EXEC_ROWS = [json.loads(line) for line in (REPO / "tests/data/bfcl_executor_oracle.jsonl").read_text().splitlines()]
#: Calls that upstream's eval runs and this executor refuses (module docstring of executor.py).
DEVIATIONS = re.compile(r"^\s*(__import__|\(\)\.__class__|os\.|dict\(|round\(|len\()")


@pytest.fixture(scope="module")
def cases(shared_data):
    categories = sorted({row["category"] for row in ROWS})
    return {c.case_id: c for c in bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": categories}))}


def test_the_oracle_file_covers_every_error_type():
    seen = Counter((row["mode"], row["official_error_type"]) for row in ROWS)
    for error_type in (None, "multi_turn:empty_turn_model_response", "multi_turn:force_terminated",
                       "multi_turn:inference_error", "multi_turn:instance_state_mismatch",
                       "multi_turn:execution_response_mismatch"):
        assert seen[("prompting", error_type)], error_type
    assert seen[("fc", None)] and seen[("fc", "multi_turn:instance_state_mismatch")]
    labels = Counter(row["label"] for row in ROWS)
    for label in ("fc_text_turn", "fc_all_text", "fc_repeated_key", "fc_or_name", "fc_and_name",
                  "prompting_repeated_key", "all_text_as_prompting", "fc_steps_as_prompting"):
        assert labels[label] >= 30, label


def test_verdicts_equal_the_official_checker(cases):
    mismatches = []
    for row in ROWS:
        case = cases[row["id"]]
        decode = executor.decode_fc_step if row["mode"] == "fc" else executor.decode_prompting_step
        verdict = checker.check_multi_turn(case.payload, row["result"], decode_step=decode, category=case.category,
                                           wheel_near=conversation.data_dirs(case))
        if (verdict.passed, verdict.error_type) != (row["official_valid"], row["official_error_type"]):
            mismatches.append((row["id"], row["mode"], row["label"], row["official_error_type"], verdict.error_type))
    assert not mismatches, f"{len(mismatches)} of {len(ROWS)} differ: {mismatches[:8]}"


def test_the_suite_scores_replayed_results_in_their_mode(cases):
    for row in ROWS[::7]:
        expected = (row["official_valid"], row["official_error_type"])
        wrapped = bfcl.score(cases[row["id"]], bfcl_generation({"mode": row["mode"], "result": row["result"]}))
        assert (wrapped.passed, wrapped.error_type) == expected, row["label"]
        structured = isinstance(row["result"], list) and any(
            isinstance(s, list) for t in row["result"] if isinstance(t, list) for s in t)
        if structured == (row["mode"] == "fc"):
            # a bare result (no file around it) can only be read as FC when it holds a structured step
            bare = bfcl.score(cases[row["id"]], bfcl_generation(row["result"]))
            assert (bare.passed, bare.error_type) == expected, row["label"]


def test_replayed_files_are_decoded_in_their_file_mode(cases, tmp_path):
    """An FC file (any record with a structured step) decodes every record as FC, its all-text records included
    (upstream's FC decoder never reads text: an empty turn); ``mode`` overrides the per-file decision."""
    from pytest_toolbench.contract.suite import Generation

    as_prompting = {(row["id"], row["label"]): row for row in ROWS
                    if row["label"] in ("fc_steps_as_prompting", "all_text_as_prompting")}
    fc_rows = [row for row in ROWS if row["label"] in ("fc_gold_keywords", "fc_all_text")
               and row["category"] == "multi_turn_base" and (row["id"], "all_text_as_prompting") in as_prompting]
    assert len(fc_rows) >= 20
    for position, rows in enumerate((fc_rows[0::2], fc_rows[1::2])):  # one file of gold, one of text (each id once)
        folder = tmp_path / str(position)
        folder.mkdir()
        (folder / "BFCL_v4_multi_turn_base_result.json").write_text(
            "".join(json.dumps({"id": row["id"], "result": row["result"]}) + "\n" for row in rows))
        for mode in (None, "fc", "prompting"):
            outputs = bfcl.replay_outputs(folder, mode=mode)
            for row in rows:
                verdict = bfcl.score(cases[row["id"]], Generation(text=outputs[row["id"]], finish_reason="stop"))
                if mode == "prompting":
                    label = "fc_steps_as_prompting" if row["label"] == "fc_gold_keywords" else "all_text_as_prompting"
                    expected = as_prompting[(row["id"], label)]
                elif mode is None and all(not isinstance(s, list) for turn in row["result"] for s in turn) \
                        and all(r["label"] == "fc_all_text" for r in rows):
                    expected = as_prompting[(row["id"], "all_text_as_prompting")]  # a file of text: prompting
                else:
                    expected = row
                assert (verdict.passed, verdict.error_type) == (expected["official_valid"],
                                                                 expected["official_error_type"]), (mode, row["label"])
                assert verdict.labels["mode"] == expected["mode"]
    # a file mixing both: the text records are an FC model's, empty turns as upstream
    folder = tmp_path / "mixed"
    folder.mkdir()
    mixed = [row for row in fc_rows if row["label"] == "fc_gold_keywords"][:3] + \
        [row for row in fc_rows if row["label"] == "fc_all_text"][3:6]
    (folder / "BFCL_v4_multi_turn_base_result.json").write_text(
        "".join(json.dumps({"id": row["id"], "result": row["result"]}) + "\n" for row in mixed))
    outputs = bfcl.replay_outputs(folder)
    for row in mixed:
        verdict = bfcl.score(cases[row["id"]], Generation(text=outputs[row["id"]], finish_reason="stop"))
        assert (verdict.passed, verdict.error_type) == (row["official_valid"], row["official_error_type"]), row["label"]
        assert verdict.labels["mode"] == "fc"


def bfcl_generation(result):
    from pytest_toolbench.contract.suite import Generation
    return Generation(text=json.dumps(result))


def test_executor_results_equal_the_official_executor(cases, shared_data):
    compared = deviations = 0
    for row in EXEC_ROWS:
        case = cases.get(row["id"]) or _load_one(shared_data, row)
        instances = simulators.new_instances(case.payload["involved_classes"], case.payload["initial_config"],
                                             case.category, [shared_data / "bfcl"])
        ours = executor.execute_calls(row["calls"], instances, entry_id=row["id"], model_name=row["model_name"])
        for call, expected, got in zip(row["calls"], row["official_results"], ours):
            if DEVIATIONS.match(call):
                deviations += 1
                assert got.startswith("Error during execution:"), (call, got)
                continue
            if " at 0x" in expected:  # an object's repr: its address differs from run to run
                continue
            compared += 1
            assert got == expected, (row["id"], call, expected[:300], got[:300])
    assert compared > 1000 and deviations > 0


def _load_one(shared_data, row):
    loaded = bfcl.load_cases(SuiteContext(shared_data / "bfcl", {"categories": [row["category"]]}))
    return next(c for c in loaded if c.case_id == row["id"])


MALICIOUS = [
    "__import__('os').system('touch {sentinel}')",
    "().__class__.__mro__[1].__subclasses__()",
    "pwd().__class__",
    "echo(content=open('{sentinel}', 'w'))",
    "eval(\"__import__('os').system('touch {sentinel}')\")",
    "exec('import os')",
    "GorillaFileSystem_instance.__init__()",
    "toolbench_entry_GorillaFileSystem_instance._load_scenario({{}})",
    "toolbench_entry_GorillaFileSystem_instance.root.__dict__",
    "touch(file_name='a' * 10 ** 9)",
    "touch(file_name=[1] * 10 ** 8)",
    "echo(content=2 ** 10 ** 9)",
    "echo(content=" + "[" * 5000 + "]" * 5000 + ")",
    "(lambda: __import__('os'))()",
    "[x for x in ().__class__.__base__.__subclasses__()]",
    "getattr(pwd, '__globals__')",
]


def test_malicious_calls_execute_nothing_and_each_is_an_error_string(tmp_path, shared_data):
    sentinel = tmp_path / "pwned"
    instances = simulators.new_instances(["GorillaFileSystem"], {"GorillaFileSystem": {"root": {"alex": {
        "type": "directory", "contents": {}}}}}, "multi_turn_base", [shared_data / "bfcl"])
    before = {k: v for k, v in vars(instances["GorillaFileSystem"]).items()}
    calls = [call.format(sentinel=sentinel) for call in MALICIOUS]
    results = executor.execute_calls(calls, instances, entry_id="entry")
    assert all(result.startswith("Error during execution:") for result in results), results
    assert not sentinel.exists()
    assert {k: v for k, v in vars(instances["GorillaFileSystem"]).items()} == before


def test_a_malicious_transcript_is_a_scored_failure(tmp_path, cases):
    sentinel = tmp_path / "pwned"
    case = cases["multi_turn_base_0"]
    step = "[" + ", ".join(call.format(sentinel=sentinel) for call in MALICIOUS[:3]) + "]"
    verdict = bfcl.score(case, bfcl_generation([[step]] * len(case.payload["ground_truth"])))
    assert not verdict.passed and verdict.error_type.startswith("multi_turn:")
    assert not sentinel.exists()


def test_a_wheel_with_another_checksum_is_one_error_naming_it(tmp_path, monkeypatch):
    fake = tmp_path / simulators.WHEEL
    fake.write_bytes(b"not the wheel")
    monkeypatch.setenv("TOOLBENCH_BFCL_EVAL_WHEEL", str(fake))
    with pytest.raises(simulators.SimulatorsUnavailable, match="is not the pinned") as error:
        simulators.find_wheel()
    assert str(fake) in str(error.value) and simulators.WHEEL_SHA256 in str(error.value)


def test_the_wheel_is_found_beside_the_data(shared_data, monkeypatch):
    monkeypatch.delenv("TOOLBENCH_DATA", raising=False)
    monkeypatch.delenv("TOOLBENCH_BFCL_EVAL_WHEEL", raising=False)
    assert simulators.find_wheel([shared_data / "bfcl"], download=False) == shared_data / "bfcl-eval" / simulators.WHEEL


def test_a_failed_lookup_does_not_hide_the_wheel_a_later_call_finds_beside_its_data(shared_data, tmp_path,
                                                                                   monkeypatch):
    # A run without the wheel nearby (the shipped samples, no network) used to leave the failure for the whole
    # process, so every later test in it failed even with the data and the wheel beside it.
    monkeypatch.delenv("TOOLBENCH_DATA", raising=False)
    monkeypatch.delenv("TOOLBENCH_BFCL_EVAL_WHEEL", raising=False)
    monkeypatch.setattr(simulators, "DOWNLOAD_FOLDER", tmp_path / "downloads")
    monkeypatch.setattr(simulators, "_modules", None)
    monkeypatch.setattr(simulators, "_fetch_failure", None, raising=False)
    attempts = []

    def offline():
        attempts.append(1)
        raise simulators.SimulatorsUnavailable("no network here")

    monkeypatch.setattr(simulators, "_fetch", offline)
    (tmp_path / "samples" / "bfcl").mkdir(parents=True)
    for _ in range(2):
        with pytest.raises(simulators.SimulatorsUnavailable, match="no network here"):
            simulators.official_module("long_context", [tmp_path / "samples" / "bfcl"])
    assert attempts == [1]  # the download is tried once per process
    module = simulators.official_module("long_context", [shared_data / "bfcl"])
    assert module.__file__.startswith(str(shared_data / "bfcl-eval" / simulators.WHEEL))
