"""Nothing lost, nothing misread: hostile model outputs and broken result files, serially and under ``-n 2``.

Every suite with a replay reader gets result files in its own upstream layout whose outputs carry the values that
used to crash a worker or drop a case (ints of 20 and 5,000 digits of both signs, ``1e308``/``nan``/``inf``,
10,000-deep nesting, lone surrogates, NUL bytes, a 5 MB string), in files that also hold a truncated line and a
line that is not UTF-8. Each selected case must end with a verdict, and the serial and ``-n 2`` records must be
identical. A worker killed in the middle of a run must leave a named, counted ``not_run`` case and a failing exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from pytest_toolbench.run import records

DEEP = 10_000
BIG = "5" * 5_000
HUGE_STRING = "a" * 5_000_000


def _python_values() -> list[str]:
    """Argument values written in Python call syntax (BFCL and ACEBench outputs)."""
    return ["123456789012345678901", "-123456789012345678901", BIG, "-" + BIG, "10**5000", "1e308", "-1e308",
            "1e999", "float('nan')", "float('inf')", "[" * DEEP + "]" * DEEP, "'\ud800 lone'", "'nul\x00byte'",
            f"'{HUGE_STRING}'"]


def _json_values() -> list[str]:
    """The same values as JSON text (NesTools and RoTBench outputs carry JSON arguments)."""
    return ["123456789012345678901", "-123456789012345678901", BIG, "-" + BIG, "1e308", "-1e308", "1e999",
            "NaN", "Infinity", "-Infinity", "[" * DEEP + "]" * DEEP, '"\\ud800 lone"', '"\ud800 raw"',
            '"nul\\u0000byte"', f'"{HUGE_STRING}"']


def _python_output(index: int) -> str:
    values = _python_values()
    return f"[get_apdex_report(apdexId='ns9934', value={values[index % len(values)]})]"


def _json_output(index: int) -> str:
    values = _json_values()
    return f'[{{"api_name": "get_weather", "parameters": {{"city": {values[index % len(values)]}}}}}]'


def _rotbench_output(index: int) -> str:
    values = _json_values()
    return f'Thought: call it\nAction: get_weather\nAction Input: {{"city": {values[index % len(values)]}}}'


def _jsonl_with_broken_lines(rows: list[dict]) -> bytes:
    """One JSON object per line (``ensure_ascii=False``: raw surrogates are written surrogate-escaped), then a line
    that is not UTF-8 and a truncated last line, as a killed writer leaves it."""
    lines = [json.dumps(row, ensure_ascii=False).encode("utf-8", "surrogatepass") for row in rows]
    lines.append(b'{"id": "not_utf8_\xff\xfe", "result": "x"}')
    lines.append(json.dumps(rows[0])[: len(json.dumps(rows[0])) // 2].encode("utf-8"))
    return b"\n".join(lines)


def _samples(suite: str):
    from pytest_toolbench.run.catalog import Catalog, Registry
    from pytest_toolbench.run.cache_layout import CacheLayout

    catalog = Catalog(Registry(), None, "", CacheLayout.at(REPO / ".no-download").downloads, False, limit=None)
    return catalog.load(REPO / "suites" / suite / "suite.yaml").cases


def write_results(suite: str, folder: Path) -> int:
    """Result files for every sample case of ``suite`` in the suite's upstream layout; returns the case count."""
    cases = _samples(suite)
    if suite == "bfcl":
        by_category: dict[str, list[dict]] = {}
        for index, case in enumerate(cases):
            by_category.setdefault(case.category, []).append({"id": case.case_id, "result": _python_output(index)})
        for category, rows in by_category.items():
            (folder / f"BFCL_v4_{category}_result.json").write_bytes(_jsonl_with_broken_lines(rows))
    elif suite == "acebench":
        by_category = {}
        for index, case in enumerate(cases):
            language, _, upstream_id = case.case_id.partition("-")
            output = _python_output(index)
            result = {"Travel": {"note": output}} if case.category.startswith("agent") else output
            by_category.setdefault((language, case.category), []).append({"id": upstream_id, "result": result})
        for (language, category), rows in by_category.items():
            target = folder / f"result_{language}" / f"data_{category}_result.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_jsonl_with_broken_lines(rows))
    elif suite == "nestools":
        rows = [{"test_id": int(case.case_id) if case.case_id.isdigit() else case.case_id,
                 "response": _json_output(index)} for index, case in enumerate(cases)]
        (folder / "raw_response.jsonl").write_bytes(_jsonl_with_broken_lines(rows))
    elif suite == "rotbench":
        by_file: dict[tuple[str, str], list[tuple[int, dict]]] = {}
        turns = {"first_turn": "First_Turn", "third_turn": "Third_Turn"}
        for index, case in enumerate(cases):
            turn, level, position = case.case_id.split("-")
            row = {"conversations": [{"from": "user", "value": "q"}, {"from": "assistant",
                                                                       "value": _rotbench_output(index)}]}
            by_file.setdefault((turns[turn], level), []).append((int(position), row))
        for (turn, level), rows in by_file.items():
            target = folder / turn / f"{level}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            # position-matched upstream: the broken lines go last so the others keep their positions
            target.write_bytes(_jsonl_with_broken_lines([row for _, row in sorted(rows, key=lambda r: r[0])]))
    else:
        raise AssertionError(suite)
    return len(cases)


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    return env


def run_plugin(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", str(REPO / "suites"), "-q", "-p", "no:cacheprovider",
                           "--toolbench-no-download", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env or _environment())


@pytest.mark.parametrize("suite", ["bfcl", "nestools", "rotbench", "acebench"])
def test_hostile_outputs_and_broken_files_give_every_case_a_verdict(suite, tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    count = write_results(suite, folder)
    documents = []
    for name, extra in (("serial", []), ("parallel", ["-n", "2"])):
        out = tmp_path / f"{name}.json"
        result = run_plugin(tmp_path, "-k", suite, f"--toolbench-replay={folder}", f"--toolbench-json={out}",
                            *extra)
        combined = result.stdout + result.stderr
        assert "INTERNALERROR" not in combined and "Traceback" not in combined, combined[-4000:]
        assert result.returncode == 0, combined[-4000:]  # failing cases are the measurement
        documents.append(json.loads(out.read_text(encoding="utf-8")))
    serial, parallel = documents
    cases = serial["cases"]
    assert len(cases) == count and all(case["passed"] in (True, False) for case in cases)
    assert not [case for case in cases if case["error_type"] == "not_run"]
    assert serial["suites"][suite]["total"] == count
    assert serial["cases"] == parallel["cases"]
    assert serial["suites"] == parallel["suites"]
    # the broken lines are reported, by file and line, in the header
    problems = "\n".join(serial["header"].get("replay_problems", []))
    assert "not UTF-8" in problems and "invalid JSON" in problems, problems


def test_a_killed_worker_leaves_a_named_not_run_case_and_a_failing_exit(tmp_path):
    victim = "simple_python_1"
    (tmp_path / "killer.py").write_text(
        "import os\n"
        "def pytest_runtest_call(item):\n"
        f"    if hasattr(item.config, 'workerinput') and item.name == '{victim}':\n"
        "        os._exit(1)\n")
    env = {**_environment(), "PYTHONPATH": str(tmp_path)}
    out = tmp_path / "run.json"
    result = run_plugin(tmp_path, "-k", "bfcl", "-n", "2", "-p", "killer", f"--toolbench-json={out}", env=env)
    combined = result.stdout + result.stderr
    assert result.returncode != 0, combined[-3000:]
    assert f"no verdict for 1 selected cases (not_run): suites/bfcl/suite.yaml::{victim}" in combined
    document = json.loads(out.read_text(encoding="utf-8"))
    not_run = [case for case in document["cases"] if case["error_type"] == "not_run"]
    assert [case["case_id"] for case in not_run] == [victim]
    assert document["report"]["not_run"] == [f"suites/bfcl/suite.yaml::{victim}"]
    total = document["suites"]["bfcl"]["total"]
    assert total == len(_samples("bfcl"))  # counted in the figures, as a failure
    assert document["suites"]["bfcl"]["error_types"]["not_run"] == 1


def test_a_path_option_as_a_separate_word_collects_the_same_or_stops_with_the_spelling(shared_data):
    data = Path(shared_data).resolve()
    common = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-k", "nestools",
              "--toolbench-no-download"]
    joined = subprocess.run([*common, f"--toolbench-data={data}"], cwd=REPO, capture_output=True, text=True,
                            env=_environment(), timeout=300)
    separate = subprocess.run([*common, "--toolbench-data", str(data)], cwd=REPO, capture_output=True, text=True,
                              env=_environment(), timeout=300)
    assert joined.returncode == 0, joined.stdout[-2000:] + joined.stderr[-2000:]
    if separate.returncode == 0:
        assert separate.stdout == joined.stdout
    else:
        assert separate.returncode == 4
        message = [line for line in separate.stderr.splitlines() if line.strip()]
        assert len(message) == 1, message  # one line, no traceback
        assert message[0].startswith(f"ERROR: pytest-toolbench: --toolbench-data {data}: pytest took {data} for a "
                                     "test path before the plugin loaded, which moved its rootdir to ")
        assert message[0].endswith(f"(it is {REPO} otherwise); write --toolbench-data={data}")


HOSTILE_VALUES = {
    "int20": 10**20, "int20_negative": -(10**20), "int5000": 10**5000, "int5000_negative": -(10**5000),
    "float_max": 1e308, "nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf"),
    "lone_surrogate": "\ud800", "nul": "nul\x00byte", "string_5mb": "a" * 5_000_000, "bytes": b"\xff\xfe",
    "set": {1, 2}, "tuple": (1, 2), "object": object(),
}


@pytest.mark.parametrize("value", list(HOSTILE_VALUES.values()), ids=list(HOSTILE_VALUES))
def test_the_record_policy_makes_any_value_json_safe(value):
    record = {"suite": "s", "case_id": "c", "decoded": value, "output": value if isinstance(value, str) else "",
              "counts": {"correct": 0.0}, "labels": {"mode": "\ud800"}}
    text = records.encode(record)
    assert text.isascii()
    back = records.decode(text)
    assert records.safe_record(back) == back  # idempotent
    # a fixed point of the transport: a single process keeps the safe record itself, a worker sends its JSON
    assert records.safe_record(record) == back
    made = records.CaseRecord.from_json(records.safe_record({**record, "category": "x", "passed": False}))
    assert records.CaseRecord.from_json(records.decode(records.transport(made))) == made
    json.dumps(back, ensure_ascii=False).encode("utf-8")  # writable as UTF-8


def test_deep_nesting_is_cut_with_the_cut_shown():
    deep: list = []
    node = deep
    for _ in range(DEEP):
        node.append([])
        node = node[0]
    safe = records.safe_value(deep)
    depth = 0
    while isinstance(safe, list):
        safe = safe[0]
        depth += 1
    assert safe == f"… [nested deeper than {records.MAX_DEPTH} levels]" and depth == records.MAX_DEPTH


def test_huge_ints_and_long_strings_show_what_was_cut():
    assert records.safe_value(10**20) == "100000000000000000000"
    assert records.safe_value(-(10**5000)) == "-<an int of about 5,001 digits>"
    assert records.safe_value(10**100).endswith("(101 digits)")
    text = records.safe_text("a" * 5_000_000, records.OUTPUT_LIMIT)
    assert text.endswith("… [cut: 5,000,000 characters in all]") and len(text) < records.OUTPUT_LIMIT + 100
