"""Replay files are read once per run, line by line: one problem per bad line naming file and line, the rest still
scored; files in no known layout, empty files, duplicate and unknown ids are reported; BFCL v3 files are mapped.

Direct reader tests for every suite with a replay reader (BFCL, NesTools, RoTBench, ACEBench), the backend's
interface (``load`` once, ``problems``, ``coverage``, ``generate``), TL-Training (no reader: one problem, every case
without output), and the real plugin on the shipped samples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO

from pytest_toolbench.contract import replay_files
from pytest_toolbench.backends import MissingOutput
from pytest_toolbench.backends.replay import ReplayBackend, ReplayOutputError
from pytest_toolbench.run.catalog import Catalog, Registry
from pytest_toolbench.run.cache_layout import CacheLayout
from pytest_toolbench.contract.replay_files import ReplayOutputs, json_array, json_lines, leading_id
from pytest_toolbench.contract.suite import Task
from pytest_toolbench.run.requests import UNRENDERED

from shipped import scorer

acebench = scorer("acebench")
bfcl = scorer("bfcl")
nestools = scorer("nestools")
rotbench = scorer("rotbench")
bfcl_replay = scorer("bfcl", "replay")


BAD_UTF8 = b'{"id": "bad_\xff", "result": "x"}'


def lines_file(path: Path, rows: list, tail: bytes = b"") -> Path:
    """JSON lines (``bytes`` rows written as they are), then ``tail`` (e.g. a truncated last line, no newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    encoded = [row if isinstance(row, bytes) else json.dumps(row).encode() for row in rows]
    path.write_bytes(b"\n".join(encoded) + b"\n" + tail)
    return path


def texts(outputs: ReplayOutputs) -> list[str]:
    return [str(problem) for problem in outputs.problems]


def one(found: list[str], *parts: str) -> str:
    matching = [line for line in found if all(part in line for part in parts)]
    assert len(matching) == 1, (parts, found)
    return matching[0]


# ------------------------------------------------------------------------------------------------------------
# The line readers


def test_json_lines_reports_each_bad_line_and_reads_the_rest(tmp_path):
    path = lines_file(tmp_path / "f.jsonl", [{"id": "a"}, BAD_UTF8, b"", b"{not json", {"id": "b"}, {"no": 1}],
                      tail=b'{"id": "c", "res')
    outputs = ReplayOutputs()
    rows = list(json_lines(outputs, path, {"type": "object", "required": ["id"]}, what="thing",
                           case_of=lambda position, text: leading_id(text)))
    assert [(position, line, row["id"]) for position, line, row in rows] == [(0, 1, "a"), (3, 5, "b")]
    found = texts(outputs)
    assert one(found, f"{path}:2: error: not UTF-8 (byte 0xff at column 13)")
    assert one(found, f"{path}:4: error: invalid JSON")
    assert one(found, f"{path}:6: error: not a thing", "'id' is a required property")
    assert one(found, f"{path}:7: error: invalid JSON", "truncated")
    # a bad line whose id can be seen makes that case unreadable (it fails), instead of "no output"
    assert set(outputs.unreadable) == {"c"} and f"{path}:7" in outputs.unreadable["c"]


def test_json_lines_caps_the_bad_lines_listed_per_file(tmp_path):
    path = lines_file(tmp_path / "f.jsonl", [b"x"] * 30)
    outputs = ReplayOutputs()
    assert list(json_lines(outputs, path)) == []
    assert len(outputs.problems) == replay_files.MAX_LINE_PROBLEMS + 1
    assert "10 more unusable lines not listed (30 in all)" in texts(outputs)[-1]


def test_empty_and_missing_files_are_whole_file_problems(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n  \n")
    outputs = ReplayOutputs()
    assert list(json_lines(outputs, empty)) == [] and list(json_lines(outputs, tmp_path / "absent.jsonl")) == []
    found = texts(outputs)
    assert one(found, f"{empty}: warning: empty file")
    assert one(found, f"{tmp_path / 'absent.jsonl'}: error: cannot read the file")


def test_json_array_keeps_the_records_before_a_cut(tmp_path):
    path = tmp_path / "level.json"
    path.write_text('[\n{"a": 1},\n{"a": 2},\n{"a": "cut sh')
    outputs = ReplayOutputs()
    rows = list(json_array(outputs, path, case_of=lambda position, _text: f"case-{position}"))
    assert rows == [(0, 2, {"a": 1}), (1, 3, {"a": 2})]
    assert one(texts(outputs), f"{path}:4: error: the file ends inside a record (truncated?)", "position 2 on")
    assert set(outputs.unreadable) == {"case-2"}
    path.write_bytes(b'[{"a": 1},\n {"a": "\xfe"}, {"a": 3}]')
    outputs = ReplayOutputs()
    assert [row for _, _, row in json_array(outputs, path)] == [{"a": 1}]
    assert one(texts(outputs), f"{path}:2: error: not UTF-8 (byte 0xfe at column 9)")


def test_leading_id_reads_only_the_leading_key():
    assert leading_id('{"id": "simple_python_3", "result": "[f(x=') == "simple_python_3"
    assert leading_id('{"test_id": 12, "response": "x', "test_id") == 12
    assert leading_id('{"test_id": 12', "test_id") is None and leading_id('{"test_id": 12, "x": 1}') is None
    assert leading_id('{"result": [{"f": {"id": "nested"}}], "id": "x"}') is None


# ------------------------------------------------------------------------------------------------------------
# The suites' readers


def test_bfcl_bad_lines_cost_only_their_cases(tmp_path):
    deep = "[" * 5000 + "]" * 5000  # nested too deeply to read
    file = lines_file(tmp_path / "result" / "m" / "BFCL_v4_simple_python_result.json", [
        {"id": "simple_python_0", "result": "[a(x=1)]"},
        BAD_UTF8,
        {"id": "simple_python_1", "result": [{"f": '{"x": 2}'}]},
        {"id": "simple_python_0", "result": "[second()]"},
        {"id": 7, "result": "[int_id()]"},
        {"id": "simple_python_9", "result": "[unknown()]"},
        f'{{"id": "simple_python_2", "result": [{{"f": {{"x": {deep}}}}}]}}'.encode(),
    ], tail=b'{"id": "simple_python_3", "result": "[cut(')
    outputs = bfcl.replay_outputs(tmp_path / "result")
    fc = outputs.pop("simple_python_1")  # an FC record travels unchanged, as structured calls
    assert fc.tool_calls == [{"bfcl_fc_record": [{"f": '{"x": 2}'}]}]
    # the file holds FC records, so its texts are FC text answers (read by the FC decoder)
    assert {k: (v.text, v.tool_calls) for k, v in outputs.items()} == {"simple_python_0": ("[a(x=1)]", []),
                                                                        "simple_python_9": ("[unknown()]", [])}
    assert set(outputs.unreadable) == {"simple_python_2", "simple_python_3"}
    found = texts(outputs)
    assert one(found, f"{file}:2: error: not UTF-8")
    assert one(found, f"{file}:4: warning: duplicate id 'simple_python_0'", f"first at {file}:1", "first one counts")
    assert one(found, f"{file}:5: error: id 7 is not a string")
    assert one(found, f"{file}:7: error:", "nested too deeply")
    assert one(found, f"{file}:8: error: invalid JSON", "truncated")


def test_bfcl_no_known_layout_and_skipped_categories(tmp_path):
    lines_file(tmp_path / "acebench" / "result_en" / "data_normal_atom_bool_result.json", [{"id": "x", "result": ""}])
    outputs = bfcl.replay_outputs(tmp_path / "acebench")
    assert dict(outputs) == {} and one(texts(outputs), f"{tmp_path / 'acebench'}: error: no BFCL result files")
    lines_file(tmp_path / "r" / "BFCL_v4_exec_simple_result.json", [{"id": "exec_simple_0", "result": "[f()]"}])
    lines_file(tmp_path / "r" / "BFCL_v4_multi_turn_base_result.json", [{"id": "multi_turn_base_0", "result": [["x"]]}])
    lines_file(tmp_path / "r" / "BFCL_v4_irrelevance_result.json", [{"id": "irrelevance_0", "result": "no"}])
    fs_id = "format_sensitivity_0:ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&" \
            "style=classic:simple_python_19"
    lines_file(tmp_path / "r" / "BFCL_v4_format_sensitivity_result.json", [{"id": fs_id, "result": "[f()]"}])
    outputs = bfcl.replay_outputs(tmp_path / "r")
    # a multi-turn record keeps its nested result as JSON text, with its file's mode (all text: prompting); format
    # sensitivity (non-scoring, run since issue 40) is read like any prompting file, upstream's id mapped to the
    # suite's case id (the entry's id left out of the node name)
    assert dict(outputs) == {"irrelevance_0": "no", "multi_turn_base_0": '{"mode": "prompting", "result": [["x"]]}',
                             fs_id.removesuffix(":simple_python_19"): "[f()]"}
    assert one(texts(outputs), "warning: result files of categories this suite does not run", "exec_simple")


def test_bfcl_v3_files_are_mapped_to_v4_names_and_ids(tmp_path):
    flat = tmp_path / "result" / "Old-Model"  # v3 wrote result/<model>/BFCL_v3_<category>_result.json
    lines_file(flat / "BFCL_v3_simple_result.json", [{"id": "simple_3", "result": "[s()]"}])
    lines_file(flat / "BFCL_v3_java_result.json", [{"id": "java_0", "result": "[j()]"}])
    lines_file(flat / "sub" / "BFCL_v3_javascript_result.json", [{"id": "javascript_49", "result": "[js()]"}])
    lines_file(flat / "BFCL_v3_live_relevance_result.json",
               [{"id": f"live_relevance_{n}-{n}-0", "result": f"[r{n}()]"} for n in (0, 13, 14, 15, 16, 17)])
    lines_file(flat / "BFCL_v3_parallel_result.json", [{"id": "parallel_84", "result": "[p()]"}])
    lines_file(flat / "BFCL_v3_live_multiple_result.json", [{"id": "live_multiple_1052-79-0", "result": "[t()]"}])
    outputs = bfcl.replay_outputs(tmp_path / "result")
    assert dict(outputs) == {
        "simple_python_3": "[s()]", "simple_java_0": "[j()]", "simple_javascript_49": "[js()]",
        "live_relevance_0-0-0": "[r0()]", "live_irrelevance_882-882-0": "[r13()]", "live_relevance_13-13-0": "[r14()]",
        "live_irrelevance_883-883-0": "[r15()]", "live_relevance_14-14-0": "[r16()]",
        "live_relevance_15-15-0": "[r17()]", "parallel_84": "[p()]", "live_multiple_1052-279-0": "[t()]"}
    assert one(texts(outputs), "BFCL_v3_parallel_result.json: warning: BFCL v4 edited the prompt of parallel_84")
    # a v4 file keeps its ids as they are (live_relevance_13-13-0 is another entry in v4)
    lines_file(tmp_path / "v4" / "BFCL_v4_live_relevance_result.json", [{"id": "live_relevance_13-13-0", "result": ""}])
    assert dict(bfcl.replay_outputs(tmp_path / "v4")) == {"live_relevance_13-13-0": ""}


def test_bfcl_v4_file_wins_over_v3_and_duplicates_are_capped(tmp_path):
    lines_file(tmp_path / "BFCL_v3_simple_result.json", [{"id": f"simple_{n}", "result": "v3"} for n in range(30)])
    v4 = lines_file(tmp_path / "BFCL_v4_simple_python_result.json",
                    [{"id": f"simple_python_{n}", "result": "v4"} for n in range(30)])
    outputs = bfcl.replay_outputs(tmp_path)
    assert set(outputs.values()) == {"v4"} and len(outputs) == 30
    found = texts(outputs)
    assert one(found, "BFCL_v3_simple_result.json:1: warning: duplicate id 'simple_python_0'", f"first at {v4}:1")
    assert len([line for line in found if "duplicate id '" in line]) == replay_files.MAX_LINE_PROBLEMS
    assert one(found, "BFCL_v3_simple_result.json: warning: 10 more duplicate ids not listed (30 in all")


def test_bfcl_v3_mapping_lands_on_v4_data(shared_data):
    """Every v3 id shape maps into the v4 data, and the renumbered live_relevance entries keep their prompt."""
    def entries(category: str) -> dict[str, dict]:
        path = shared_data / "bfcl" / f"BFCL_v4_{category}.json"
        return {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}

    for v3_category, v4_category in bfcl_replay.V3_CATEGORIES.items():
        ids = list(entries(v4_category))
        assert [bfcl_replay.v4_id(f"{v3_category}_{n}") for n in range(len(ids))] == ids
    relevance, irrelevance = entries("live_relevance"), entries("live_irrelevance")
    assert set(bfcl_replay.V3_IDS.values()) <= set(relevance) | set(irrelevance) | set(entries("live_multiple"))
    assert len(relevance) == 16 and len(irrelevance) == 884  # last v3: 18 and 882
    # v3 16-16-0 ("What's happening in China right now?") is v4 live_relevance_14-14-0
    assert "China" in relevance[bfcl_replay.v4_id("live_relevance_16-16-0")]["question"][0][-1]["content"]
    assert "Portland" in irrelevance[bfcl_replay.v4_id("live_relevance_13-13-0")]["question"][0][-1]["content"]


def test_nestools_bad_lines_duplicates_and_string_ids(tmp_path):
    file = lines_file(tmp_path / "raw_response.jsonl", [
        {"test_id": 1, "prompt": "p", "response": "[]"},
        b'{"test_id": 2, "prompt": "p", "response": "\xe9"}',
        {"test_id": 3, "prompt": "p", "response": -1},
        {"test_id": 1, "prompt": "p", "response": "[1]"},
        {"test_id": "4", "prompt": "p", "response": "[]"},
        {"test_id": 5, "prompt": "p", "response": "[5]"},
    ], tail=b'{"test_id": 6, "prompt": "p", "resp')
    outputs = nestools.replay_outputs(tmp_path)
    assert dict(outputs) == {"1": "[]", "5": "[5]"} and set(outputs.unreadable) == {"2", "6"}
    found = texts(outputs)
    assert one(found, f"{file}:2: error: not UTF-8 (byte 0xe9")
    assert one(found, f"{file}:4: warning: duplicate id '1'", "upstream eval.py would score every line")
    assert one(found, f"{file}:5: error: not a raw_response.jsonl line", "'4' is not of type 'integer'")
    assert one(found, f"{file}:7: error: invalid JSON", "truncated")
    assert one(found, f"{file}: warning: 1 line is an API failure", "test_id 3")
    assert nestools.replay_dropped(tmp_path) == ["3"]


def test_nestools_folder_of_another_benchmark(tmp_path):
    lines_file(tmp_path / "BFCL_v4_simple_python_result.json", [{"id": "simple_python_0", "result": ""}])
    outputs = nestools.replay_outputs(tmp_path)
    assert dict(outputs) == {} and one(texts(outputs), f"{tmp_path}: error: no NesTools prediction file here")
    # a file of another layout given directly: every line is reported, none is read
    outputs = nestools.replay_outputs(tmp_path / "BFCL_v4_simple_python_result.json")
    assert dict(outputs) == {} and one(texts(outputs), ":1: error: not a raw_response.jsonl line")


def test_rotbench_positions_survive_a_bad_line(tmp_path):
    def row(text: str) -> dict:
        return {"conversations": [{"from": "user", "value": "q"}, {"from": "assistant", "value": text}]}

    file = lines_file(tmp_path / "First_Turn" / "clean.jsonl",
                      [row("a0"), b'{"conversations": [{"value": "\xff"}]}', row("a2"), {"other": 1}, row("a4")],
                      tail=b'{"conversations": [{"va')
    outputs = rotbench.replay_outputs(tmp_path)
    assert dict(outputs) == {"first_turn-clean-0": "a0", "first_turn-clean-2": "a2", "first_turn-clean-4": "a4"}
    assert set(outputs.unreadable) == {"first_turn-clean-1", "first_turn-clean-3", "first_turn-clean-5"}
    found = texts(outputs)
    assert one(found, f"{file}:2: error: not UTF-8")
    assert one(found, f"{file}:4: error: not a RoTBench output record")
    assert one(found, f"{file}:6: error: invalid JSON", "truncated")
    # the JSON array form: the records before a cut still count
    array = tmp_path / "arr" / "Third_Turn" / "heavy.json"
    array.parent.mkdir(parents=True)
    array.write_text("[\n" + json.dumps(row("h0")) + ",\n" + json.dumps(row("h1"))[:20])
    outputs = rotbench.replay_outputs(tmp_path / "arr")
    assert dict(outputs) == {"third_turn-heavy-0": "h0"} and set(outputs.unreadable) == {"third_turn-heavy-1"}
    assert one(texts(outputs), f"{array}:3: error: the file ends inside a record")


def test_rotbench_no_known_layout(tmp_path):
    lines_file(tmp_path / "raw_response.jsonl", [{"test_id": 1, "response": "[]"}])
    assert one(texts(rotbench.replay_outputs(tmp_path)), f"{tmp_path}: error: no RoTBench output files here")
    assert one(texts(rotbench.replay_outputs(tmp_path / "raw_response.jsonl")), "error: not a RoTBench output file")


def test_acebench_bad_lines_ids_and_layouts(tmp_path):
    file = lines_file(tmp_path / "result_en" / "data_normal_atom_bool_result.json", [
        {"id": "normal_atom_bool_0", "result": "[a()]"},
        b'{"id": "normal_atom_bool_1", "result": "\xc3"}',
        {"id": 2, "result": "[b()]"},
        {"id": "normal_atom_bool_0", "result": "[again()]"},
        {"id": "normal_atom_bool_3", "result": [{"f": {}}]},
    ], tail=b'{"id": "normal_atom_bool_4", "result": "[c(')
    lines_file(tmp_path / "result_en" / "data_unknown_category_result.json", [{"id": "x", "result": ""}])
    lines_file(tmp_path / "elsewhere" / "data_normal_atom_enum_result.json", [{"id": "normal_atom_enum_0",
                                                                                 "result": ""}])
    (tmp_path / "result_zh").mkdir()
    (tmp_path / "result_zh" / "data_normal_atom_enum_result.json").write_bytes(b"")
    outputs = acebench.replay_outputs(tmp_path)
    assert dict(outputs) == {"en-normal_atom_bool_0": "[a()]", "en-normal_atom_bool_3": '[{"f": {}}]'}
    assert set(outputs.unreadable) == {"en-normal_atom_bool_1", "en-normal_atom_bool_4"}
    found = texts(outputs)
    assert one(found, f"{file}:2: error: not UTF-8")
    assert one(found, f"{file}:3: error: id 2 is not an ACEBench id")
    assert one(found, f"{file}:4: warning: duplicate id 'en-normal_atom_bool_0'")
    assert one(found, f"{file}:6: error: invalid JSON", "truncated")
    assert one(found, "data_unknown_category_result.json: warning: not an ACEBench result file")
    assert one(found, "elsewhere/data_normal_atom_enum_result.json: error: cannot tell the language")
    assert one(found, "result_zh/data_normal_atom_enum_result.json: warning: empty file")
    lines_file(tmp_path / "other" / "raw_response.jsonl", [{"test_id": 1, "response": "[]"}])
    assert one(texts(acebench.replay_outputs(tmp_path / "other")), "error: no ACEBench result files here")


# ------------------------------------------------------------------------------------------------------------
# The backend: read once, problems, coverage, generate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    catalog = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=None)
    for name in ("bfcl", "nestools", "rotbench", "acebench", "tltraining"):
        catalog.load(REPO / "suites" / name / "suite.yaml")
    return catalog


def task(case) -> Task:
    return Task(case=case, request=UNRENDERED)


def test_backend_reads_each_file_once_and_fails_only_the_bad_cases(catalog, tmp_path, monkeypatch):
    cases = catalog.by_name("bfcl").cases
    rows: list = [{"id": case.case_id, "result": catalog.by_name("bfcl").benchmark.gold_output(case)}
                  for case in cases if case.category == "simple_python"]
    broken, missing = rows[1]["id"], rows[2]["id"]
    rows[1] = json.dumps(rows[1])[:30].encode() + b"\xff"
    del rows[2]
    rows.append({"id": "simple_python_999999", "result": "[x()]"})
    rows.append({"id": "nonsense_1", "result": "[x()]"})
    file = lines_file(tmp_path / "BFCL_v4_simple_python_result.json", rows)
    reads: list[str] = []
    original = replay_files.read_bytes
    monkeypatch.setattr(replay_files, "read_bytes", lambda outputs, path: reads.append(str(path))
                        or original(outputs, path))
    backend = ReplayBackend(catalog, str(tmp_path))
    simple = [case for case in cases if case.category == "simple_python"]
    good = [case for case in simple if case.case_id not in (broken, missing)]
    for _ in range(3):
        assert [g.text for g in backend.generate([task(c) for c in good])] == \
               [catalog.by_name("bfcl").benchmark.gold_output(c) for c in good]
        with pytest.raises(ReplayOutputError, match=f"{file}:2: not UTF-8"):
            backend.generate([task(next(c for c in simple if c.case_id == broken))])
        with pytest.raises(MissingOutput, match=f"no saved output for bfcl case {missing!r}"):
            backend.generate([task(next(c for c in simple if c.case_id == missing))])
    assert reads == [str(file)]
    coverage = backend.coverage(cases)
    assert coverage["bfcl"]["simple_python"] == (len(simple), 2)  # the unreadable one has no output either
    assert coverage["bfcl"]["multiple"] == (2, 2)
    problems = backend.problems()
    assert one(problems, f"bfcl: {file}:2: error: not UTF-8")
    assert one(problems, f"bfcl: {file}: warning: 2 ids match no case of suite bfcl",
               "'simple_python_999999', 'nonsense_1'")
    assert reads == [str(file)]


def test_backend_reports_suites_without_files_or_reader(catalog, tmp_path):
    lines_file(tmp_path / "BFCL_v4_irrelevance_result.json", [{"id": "irrelevance_0", "result": "no"}])
    backend = ReplayBackend(catalog, str(tmp_path))
    cases = [case for name in ("bfcl", "nestools", "tltraining") for case in catalog.by_name(name).cases]
    coverage = backend.coverage(cases)
    assert coverage["nestools"] == {"depth1": (2, 2), "depth2": (2, 2), "depth3plus": (2, 2)}
    assert all(without == selected for selected, without in coverage["tltraining"].values())
    assert coverage["bfcl"]["irrelevance"] == (2, 1)
    problems = backend.problems()
    assert problems == sorted(problems, key=lambda line: line.split(":")[0])  # suites in name order
    assert one(problems, f"nestools: {tmp_path}: error: no NesTools prediction file here")
    assert one(problems, f"tltraining: {tmp_path}: error: no TL-Training test-set output files here")
    assert not [line for line in problems if line.startswith("bfcl:")]


def test_backend_reports_a_suite_without_a_reader(catalog, tmp_path, monkeypatch):
    # every shipped suite has one (tests/test_suite_shape.py); a suite added without it is told, not crashed on
    monkeypatch.delattr(catalog.by_name("tltraining").benchmark, "replay_outputs")
    backend = ReplayBackend(catalog, str(tmp_path))
    coverage = backend.coverage(catalog.by_name("tltraining").cases)
    assert all(without == selected for selected, without in coverage["tltraining"].values())
    assert one(backend.problems(), "tltraining:", "error: suite tltraining has no replay reader")


def test_backend_survives_a_reader_that_raises(catalog, tmp_path, monkeypatch):
    calls = []

    def failing(path):
        calls.append(path)
        raise ValueError("boom")

    monkeypatch.setattr(catalog.by_name("rotbench").benchmark, "replay_outputs", failing)
    backend = ReplayBackend(catalog, str(tmp_path))
    case = catalog.by_name("rotbench").cases[0]
    for _ in range(3):
        with pytest.raises(MissingOutput):
            backend.generate([task(case)])
    assert len(calls) == 1
    assert one(backend.problems(), "rotbench:", "error: reading the saved outputs failed: ValueError: boom")


def test_limit_does_not_turn_left_out_cases_into_unknown_ids(tmp_path):
    limited = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=1)
    suite = limited.load(REPO / "suites" / "bfcl" / "suite.yaml")
    lines_file(tmp_path / "BFCL_v4_simple_python_result.json",
               [{"id": f"simple_python_{n}", "result": ""} for n in range(3)])
    backend = ReplayBackend(limited, str(tmp_path))
    assert backend.coverage(suite.cases)["bfcl"]["simple_python"] == (1, 0)
    assert backend.problems() == []


# ------------------------------------------------------------------------------------------------------------
# The real plugin


def test_plugin_scores_the_good_lines_of_a_broken_file(tmp_path):
    """The shipped BFCL samples, replayed from a file with a bad line, a duplicate and a truncated last line."""
    catalog = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=None)
    suite = catalog.load(REPO / "suites" / "bfcl" / "suite.yaml")
    by_category: dict[str, list] = {}
    for case in suite.cases:
        by_category.setdefault(case.category, []).append({"id": case.case_id,
                                                          "result": suite.benchmark.gold_output(case)})
    folder = tmp_path / "result"
    simple = by_category.pop("simple_python")
    first, broken, cut = (row["id"] for row in simple[:3])
    def v3(case_id: str) -> str:
        return case_id.replace("simple_python_", "simple_")

    lines_file(folder / "BFCL_v3_simple_result.json",
               [{"id": v3(first), "result": simple[0]["result"]},
                f'{{"id": "{v3(broken)}", "result": "'.encode() + b'\xff"}',
                {"id": v3(first), "result": "[duplicate()]"}],
               tail=f'{{"id": "{v3(cut)}", "result": "[cut'.encode())
    for category, rows in by_category.items():
        lines_file(folder / f"BFCL_v4_{category}_result.json", rows)
    out = tmp_path / "run.json"
    env = {key: value for key, value in os.environ.items() if key != "TOOLBENCH_DATA"}  # the shipped samples
    result = subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-q", "-p",
                             "no:cacheprovider", "-p", "no:randomly", f"--toolbench-replay={folder}",
                             f"--toolbench-json={out}", "--tb=short"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300,
                            env=env)
    combined = result.stdout + result.stderr
    assert "INTERNALERROR" not in combined, combined[-3000:]
    document = json.loads(out.read_text())
    verdicts = {case["case_id"]: case for case in document["cases"]}
    assert len(verdicts) == len(suite.cases)
    failed = sorted(case_id for case_id, case in verdicts.items() if not case["passed"])
    assert failed == sorted([broken, cut]), failed
    # a case whose line cannot be read has no output: missing_output (naming file and line), counted in the
    # coverage line beside the cases without a line; the rest score as usual
    assert verdicts[broken]["error_type"] == "missing_output" and verdicts[cut]["error_type"] == "missing_output"
    simple_count = sum(1 for case in suite.cases if case.category == "simple_python")
    assert f"selected cases without a saved output (scored missing_output): simple_python 2/{simple_count}" \
        in combined, combined[-3000:]
    assert document["header"]["replay_coverage"]["bfcl"]["simple_python"] == {"selected": simple_count,
                                                                               "without_output": 2}
    assert "BFCL_v3_simple_result.json:2: not UTF-8 (byte 0xff" in combined
    assert "BFCL_v3_simple_result.json:4: invalid JSON" in combined


# ------------------------------------------------------------------------------------------------------------
# --toolbench-replay-mode

def test_bfcl_single_turn_mode_is_decided_per_file_or_stated(tmp_path):
    """A file with any list result is an FC file (its texts go to the FC decoder); ``mode`` states it instead."""
    lines_file(tmp_path / "fc" / "BFCL_v4_simple_python_result.json",
               [{"id": "simple_python_0", "result": [{"f": "{}"}]}, {"id": "simple_python_1", "result": "[f()]"}])
    lines_file(tmp_path / "text" / "BFCL_v4_simple_python_result.json", [{"id": "simple_python_1", "result": "[f()]"}])
    per_file = bfcl.replay_outputs(tmp_path / "fc")
    assert per_file["simple_python_1"].tool_calls == [] and per_file["simple_python_0"].tool_calls
    assert bfcl.replay_outputs(tmp_path / "text")["simple_python_1"] == "[f()]"
    assert bfcl.replay_outputs(tmp_path / "text", mode="fc")["simple_python_1"].tool_calls == []
    stated = bfcl.replay_outputs(tmp_path / "fc", mode="prompting")
    assert stated["simple_python_0"] == '[{"f": "{}"}]' and stated["simple_python_1"] == "[f()]"


def test_bfcl_multi_turn_records_carry_their_file_mode(tmp_path):
    fc_step = [[[{"cd": '{"folder": "x"}'}]]]
    text_step = [["[cd(folder='x')]"]]
    lines_file(tmp_path / "fc" / "BFCL_v4_multi_turn_base_result.json",
               [{"id": "multi_turn_base_0", "result": fc_step}, {"id": "multi_turn_base_1", "result": text_step},
                {"id": "multi_turn_base_2", "result": "Error during inference: boom"}])
    lines_file(tmp_path / "text" / "BFCL_v4_multi_turn_base_result.json",
               [{"id": "multi_turn_base_1", "result": text_step}])
    modes = {case_id: json.loads(text)["mode"] for case_id, text in bfcl.replay_outputs(tmp_path / "fc").items()}
    assert modes == {"multi_turn_base_0": "fc", "multi_turn_base_1": "fc", "multi_turn_base_2": "fc"}
    assert json.loads(bfcl.replay_outputs(tmp_path / "text")["multi_turn_base_1"]) == {"mode": "prompting",
                                                                                      "result": text_step}
    assert json.loads(bfcl.replay_outputs(tmp_path / "text", mode="fc")["multi_turn_base_1"])["mode"] == "fc"
    stated = bfcl.replay_outputs(tmp_path / "fc", mode="prompting")
    assert {json.loads(text)["mode"] for text in stated.values()} == {"prompting"}
    assert json.loads(stated["multi_turn_base_2"])["result"] == "Error during inference: boom"


def test_the_replay_backend_hands_its_mode_to_readers_that_take_it(tmp_path):
    lines_file(tmp_path / "BFCL_v4_simple_python_result.json", [{"id": "simple_python_1", "result": "[f()]"}])
    seen = []

    class Suite:
        def __init__(self, reader):
            self.benchmark = type("Benchmark", (), {"replay_outputs": staticmethod(reader)})
            self.all_case_ids, self.cases = [], []

    def with_mode(path, mode=None):
        seen.append(mode)
        return {"a": "x"}

    def without_mode(path):
        seen.append("no mode")
        return {"a": "x"}

    class Catalog_:
        suites = {"with": Suite(with_mode), "without": Suite(without_mode)}

        def by_name(self, name):
            return self.suites.get(name)

    backend = ReplayBackend(Catalog_(), str(tmp_path), mode="fc")
    assert backend.fingerprint()["replay_mode"] == "fc"
    backend.load("with"), backend.load("without")
    assert seen == ["fc", "no mode"]
    assert ReplayBackend(Catalog_(), str(tmp_path)).fingerprint()["replay_mode"] == "per file"


def _run_replay(tmp_path, *args):
    env = {key: value for key, value in os.environ.items() if key != "TOOLBENCH_DATA"}  # the shipped samples
    return subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-q", "-p",
                           "no:cacheprovider", "-p", "no:randomly", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)


def test_replay_mode_is_in_the_header_and_reaches_the_bfcl_reader(tmp_path):
    catalog = Catalog(Registry(), None, "", CacheLayout.at(tempfile.mkdtemp()).downloads, False, limit=None)
    suite = catalog.load(REPO / "suites" / "bfcl" / "suite.yaml")
    case = next(c for c in suite.cases if c.category == "simple_python")
    lines_file(tmp_path / "r" / "BFCL_v4_simple_python_result.json",
               [{"id": case.case_id, "result": suite.benchmark.gold_output(case)}])
    for mode, passed in ((None, True), ("fc", False)):
        out = tmp_path / f"{mode}.json"
        result = _run_replay(tmp_path, f"--toolbench-replay={tmp_path / 'r'}", f"--toolbench-json={out}",
                             "-v", "-k", case.case_id, *([f"--toolbench-replay-mode={mode}"] if mode else []))
        document = json.loads(out.read_text())
        assert document["header"]["replay_mode"] == (mode or "per file"), result.stdout[-2000:]
        assert f"replay mode: {mode or 'per file'}" in result.stdout
        record = next(c for c in document["cases"] if c["case_id"] == case.case_id)
        # the gold text read as an FC model's text: upstream's FC decoder does not decode text
        assert record["passed"] is passed and record["labels"]["mode"] == ("fc" if mode else "prompting")


@pytest.mark.parametrize("args, message", [
    (["--toolbench-replay-mode=fc"], "--toolbench-replay-mode=fc applies to replayed outputs only"),
    (["--toolbench-replay-mode=native", "--toolbench-replay=."], "invalid choice: 'native'"),
])
def test_a_bad_replay_mode_is_one_usage_error(tmp_path, args, message):
    result = _run_replay(tmp_path, "--collect-only", *args)
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    assert message in result.stderr and "Traceback" not in result.stderr + result.stdout
