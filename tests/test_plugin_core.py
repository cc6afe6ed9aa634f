"""The plugin core, exercised end to end on the example ``echo`` suite (docs/adding-a-suite.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE
from counting_backend import COUNTING_BACKEND



@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    (pytester.path / "reports").mkdir()  # a project that keeps its reports there: bare report names go to it
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data", "data", "-p", "no:randomly", *args)


def test_gold_run_passes_every_case_and_prints_the_summary(echo):
    result = run(echo, "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*suites/echo/suite.yaml::echo_0 PASSED*",
                                 "*toolbench summary*", "backend: gold", "echo: Echo (example suite)*3/3*",
                                 "*overall*100.00%*3/3*"])
    assert "toolbench: backend gold (reference answers; no --model given)" in result.stdout.str()


def test_selection_by_keyword_marker_and_limit(echo):
    # items that -k cannot select are not built (so pytest counts no "deselected" for them)
    selected = run(echo, "--collect-only", "-q", "-k", "long").stdout.str()
    assert "suites/echo/suite.yaml::echo_1" in selected and "1 test collected" in selected
    run(echo, "-m", "echo and short").assert_outcomes(passed=2)
    limited = run(echo, "--toolbench-limit", "1", "--collect-only", "-q").stdout.str()
    assert "echo_0" in limited and "echo_1" in limited and "echo_2" not in limited


def test_replay_scores_saved_outputs_and_names_missing_ones(echo):
    saved = echo.path / "saved.jsonl"
    saved.write_text(json.dumps({"id": "echo_0", "result": '{"name": "echo", "arguments": {"text": "hello"}}'})
                     + "\n" + json.dumps({"id": "echo_1", "result": "[echo(text='nope')]"}) + "\n")
    result = run(echo, "--toolbench-replay", str(saved), "--tb=short")  # the long form: explanations
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "format_error: output is not an echo call" in out
    assert "missing_output: no saved output for echo case 'echo_2'" in out
    assert "toolbench: backend replay of" in out


def test_malformed_data_file_is_one_error_naming_file_line_and_field(echo):
    cases = echo.path / "data" / "echo" / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines[1] = json.dumps({"id": "echo_1", "text": 5})
    cases.write_text("\n".join(lines) + "\n")
    result = run(echo)
    assert result.ret != 0
    out = result.stdout.str()
    assert out.count("cases.jsonl:2: field 'text': 5 is not of type 'string'") == 1
    assert "Traceback" not in out


def test_malformed_suite_definition_names_its_line(echo):
    definition = echo.path / "suites" / "echo" / "suite.yaml"
    definition.write_text(definition.read_text().replace("max_tokens: 512", "max_tokens: 100"))
    line = definition.read_text().splitlines().index("  max_tokens: 100") + 1
    result = run(echo)
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*suite.yaml:{line}: field 'generation/max_tokens': 100 is less than the minimum "
                                 "of 512*"])


def test_unknown_backend_is_a_usage_error(echo):
    result = run(echo, "--toolbench-backend", "nonsense")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolbench-backend 'nonsense': unknown backend*"])


def test_json_results_hold_header_summary_and_every_case(echo):
    result = run(echo, "--toolbench-json", "out.json")
    result.assert_outcomes(passed=3)
    document = json.loads((echo.path / "reports" / "out.json").read_text())
    assert document["header"]["backend"] == "gold"
    assert document["suites"]["echo"]["passed"] == 3
    assert [c["case_id"] for c in document["cases"]] == ["echo_0", "echo_1", "echo_2"]
    assert {c["category"] for c in document["cases"]} == {"short", "long"}
    assert document["suites"]["echo"]["data_source"]["kind"] == "folder"


def test_xdist_gives_the_same_summary_as_a_serial_run(echo):
    run(echo, "--toolbench-json", "serial.json")
    run(echo, "-n", "2", "--toolbench-json", "parallel.json").assert_outcomes(passed=3)
    serial = json.loads((echo.path / "reports" / "serial.json").read_text())
    parallel = json.loads((echo.path / "reports" / "parallel.json").read_text())
    assert serial["suites"] == parallel["suites"]
    assert [c["case_id"] for c in serial["cases"]] == [c["case_id"] for c in parallel["cases"]]


def _batches(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def counting(echo, monkeypatch):
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + "\n" +
                                           textwrap.dedent(COUNTING_BACKEND))
    log = echo.path / "calls.log"
    monkeypatch.setenv("COUNTING_LOG", str(log))
    return echo, log


def test_engine_backend_pregenerates_once_then_reuses_the_cache(counting):
    echo, log = counting
    first = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache")
    first.assert_outcomes(passed=2, failed=1)
    assert [b["n"] for b in _batches(log)] == [3]  # one batch for every selected case
    assert "pre-generating answers for 3 cases" in first.stdout.str()
    second = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache")
    second.assert_outcomes(passed=2, failed=1)
    assert len(_batches(log)) == 1  # nothing generated again


def test_a_report_from_cached_answers_keeps_the_figures_of_the_run_that_generated_them(counting):
    echo, _ = counting

    def inline(*args: str) -> pytest.RunResult:  # in this process: a few tenths of a second a run
        return echo.runpytest("suites", "--toolbench-data", "data", "-p", "no:randomly", "--toolbench-backend",
                              "counting", "--toolbench-cache", "cache", *args)

    inline("--toolbench-json", "first.json")
    first = json.loads((echo.path / "reports" / "first.json").read_text())["header"]["generation"]
    assert first["generated"] == 3 and "earlier_runs" not in first
    again = inline("--toolbench-json", "again.json")
    header = json.loads((echo.path / "reports" / "again.json").read_text())["header"]["generation"]
    assert header["generated"] == 0 and header["cached"] == 3
    [earlier] = header["earlier_runs"]
    assert earlier["generated"] == 3 and earlier["output_tokens"] == 21 and earlier["finished"]
    assert "cached answers generated by 1 earlier run" in again.stdout.str()
    offline = inline("--toolbench-offline")
    assert "none (--toolbench-offline); cached answers generated by 1 earlier run" in offline.stdout.str()


SWALLOWING_BACKEND = '''
import json, os, signal
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation


class SwallowingBackend:
    """Answers one task at a time; after the first answer the process gets SIGINT, and this engine swallows the
    KeyboardInterrupt and goes on, as the in-process CPU engine was seen to."""

    name = "swallowing"
    capabilities = MODEL_BACKEND

    def __init__(self, options):
        pass

    def fingerprint(self):
        return {"backend": "swallowing"}

    def generate(self, tasks, on_chunk=None, **_):
        out = []
        for index, task in enumerate(tasks):
            text = task.request.messages[-1]["content"].removeprefix("Echo this: ")
            out.append(Generation(text=json.dumps({"name": "echo", "arguments": {"text": text}}),
                                  finish_reason="stop", prompt_tokens=5, output_tokens=7))
            on_chunk([(index, out[-1])])
            if index == 0 and not os.environ.get("NO_SIGINT"):
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    for _ in range(100):
                        __import__("time").sleep(0.01)
                except KeyboardInterrupt:
                    pass
        return out

    def close(self):
        pass


def pytest_toolbench_register(registry):
    registry.add_backend("swallowing", SwallowingBackend)
'''


def test_ctrl_c_stops_generation_keeps_every_answer_and_never_replaces_a_report_with_nothing(echo, monkeypatch):
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + "\n" + SWALLOWING_BACKEND)
    (echo.path / "reports" / "r.json").write_text('{"previous": true}')
    (echo.path / "reports" / "r.html").write_text("<html>the previous page</html>")
    stopped = run(echo, "--toolbench-backend", "swallowing", "--toolbench-cache", "cache", "--toolbench-json", "r.json",
                  "--toolbench-md", "r.md", "--html", "r.html")
    text = stopped.stdout.str()
    assert stopped.ret == pytest.ExitCode.INTERRUPTED, text
    # the engine swallowed the first KeyboardInterrupt: the next hand-over stopped it, after committing its answer
    assert "interrupted (Ctrl-C): generation stopped; the 2 answers generated so far are committed" in text, text
    assert json.loads((echo.path / "reports" / "r.json").read_text()) == {"previous": True}
    # pytest-html writes its page in its own session finish: the previous one is put back, the missing one not made
    assert (echo.path / "reports" / "r.html").read_text() == "<html>the previous page</html>"
    assert not (echo.path / "reports" / "r.md").exists()
    left = sorted(p.name for p in (echo.path / "reports").iterdir() if p.name != "assets")  # pytest-html's CSS
    assert left == ["r.html", "r.json"]  # no copy of the page left over
    assert "the results file" in text and "the HTML file" in text and "INTERRUPTED during generation" in text
    assert "was not written and is left as it was" in text
    # no page before: none after (pytest-html's page of not_run rows is removed)
    again = run(echo, "--toolbench-backend", "swallowing", "--toolbench-cache", "cache2", "--html", "new.html")
    assert again.ret == pytest.ExitCode.INTERRUPTED and not (echo.path / "reports" / "new.html").exists()
    assert "the HTML file" in again.stdout.str() and "new.html was not written\n" in again.stdout.str()
    monkeypatch.setenv("NO_SIGINT", "1")
    resumed = run(echo, "--toolbench-backend", "swallowing", "--toolbench-cache", "cache", "--toolbench-json", "r.json")
    assert "1 generated, 2 from cache" in resumed.stdout.str(), resumed.stdout.str()
    assert "interrupted" not in json.loads((echo.path / "reports" / "r.json").read_text())["header"]


def test_engine_backend_generates_only_the_selection(counting):
    echo, log = counting
    run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache", "-k", "echo_1").assert_outcomes(passed=1)
    assert [b["n"] for b in _batches(log)] == [1]


def test_under_xdist_only_the_controller_generates(counting):
    echo, log = counting
    result = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache", "-n", "2")
    result.assert_outcomes(passed=2, failed=1)
    batches = _batches(log)
    assert [b["n"] for b in batches] == [3]
    rerun = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache", "-n", "2")
    rerun.assert_outcomes(passed=2, failed=1)
    assert len(_batches(log)) == 1


def test_offline_run_fails_cache_misses_clearly(counting):
    echo, _ = counting
    result = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache", "--toolbench-offline",
                 "-rf", "--tb=line")
    result.assert_outcomes(failed=3)
    assert "no cached generation for echo case 'echo_0'" in result.stdout.str()


def test_a_run_killed_mid_generation_resumes_from_the_cache(counting, monkeypatch):
    echo, log = counting
    monkeypatch.setenv("COUNTING_KILL_AFTER", "2")
    killed = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache")
    assert killed.ret != 0
    monkeypatch.delenv("COUNTING_KILL_AFTER")
    resumed = run(echo, "--toolbench-backend", "counting", "--toolbench-cache", "cache")
    resumed.assert_outcomes(passed=2, failed=1)
    assert [b["n"] for b in _batches(log)] == [3, 1]  # the rerun generated only the missing request


def test_conftest_hooks_see_the_summary(echo):
    echo.makeconftest((echo.path / "conftest.py").read_text() + textwrap.dedent('''
        def pytest_terminal_summary(terminalreporter, config):
            terminalreporter.write_line(f"summary seen for {getattr(config, '_echo_summary_seen', None)}")
        '''))
    result = run(echo)
    result.stdout.fnmatch_lines(["summary seen for ['echo']"])


def test_importing_the_plugin_and_help_import_no_engine_and_no_ray():
    code = ("import sys, pytest, contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    pytest.main(['--help'])\n"
            "import pytest_toolbench.plugin\n"
            "print(sorted(m for m in ('vllm', 'torch', 'transformers', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_failed_cases_are_one_line_each_unless_tb_is_given(echo):
    saved = echo.path / "saved.jsonl"
    saved.write_text(json.dumps({"id": "echo_0", "result": "not json"}) + "\n")
    short = run(echo, f"--toolbench-replay={saved}").stdout.str()
    assert "= FAILURES =" not in short and "short test summary info" not in short
    assert "suites/echo/suite.yaml::echo_0: format_error: output is not an echo call" in short
    assert "FAILED suites/echo/suite.yaml::echo_0 - Failed: format_error" in \
        run(echo, f"--toolbench-replay={saved}", "-rf").stdout.str()
    long = run(echo, f"--toolbench-replay={saved}", "--tb=short").stdout.str()
    assert "= FAILURES =" in long and "model output: 'not json'" in long


NEW_SUITE_YAML = """\
name: tiny
title: Tiny (a suite added as one folder)
scorer: scorer
data:
  folder: tiny
  samples: samples
categories:
  - name: add
generation:
  max_tokens: 512
"""

NEW_SUITE_SCORER = '''\
import json

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.suite import FORMAT_ERROR, Case, Metric, Request, Verdict


def load_cases(data_dir, definition):
    return [Case(row["id"], "add", row) for row in load_jsonl(data_dir / "cases.jsonl")]


def build_request(case):
    return Request(messages=[{"role": "user", "content": f"{case.payload['a']} + {case.payload['b']}?"}])


def gold_output(case):
    return json.dumps(case.payload["a"] + case.payload["b"])


def score(case, generation):
    try:
        value = json.loads(generation.text)
    except ValueError:
        return Verdict(False, FORMAT_ERROR, "not a number")
    expected = case.payload["a"] + case.payload["b"]
    return Verdict(value == expected, None if value == expected else "wrong_sum", f"expected {expected}")


def aggregate(results):
    passed = sum(r.passed for r in results)
    return [Metric("accuracy", passed / len(results), passed, len(results), group="aggregate")]
'''


def test_a_suite_is_one_folder_with_a_yaml_file_and_a_scorer_module(pytester):
    folder = pytester.path / "suites" / "tiny"
    (folder / "samples").mkdir(parents=True)
    (folder / "suite.yaml").write_text(NEW_SUITE_YAML)
    (folder / "scorer.py").write_text(NEW_SUITE_SCORER)
    (folder / "samples" / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"sum_{i}", "a": i, "b": 2 * i}) + "\n" for i in range(4)))
    result = pytester.runpytest_subprocess("suites", "-p", "no:randomly", "-p", "no:cacheprovider",
                                           "--toolbench-no-download", "--toolbench-json=run.json", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*suites/tiny/suite.yaml::sum_0 PASSED*", "*tiny: Tiny (a suite added as one folder)*"])
    document = json.loads((pytester.path / "run.json").read_text())
    assert document["suites"]["tiny"]["metrics"][0]["value"] == 1.0
    selected = pytester.runpytest_subprocess("suites", "-p", "no:cacheprovider", "--toolbench-no-download",
                                             "-k", "sum_3", "--collect-only", "-q")
    assert "suites/tiny/suite.yaml::sum_3" in selected.stdout.str() and "1 test collected" in selected.stdout.str()


MAKE_BACKEND_CONFTEST = '''
from pytest_toolbench.contract.suite import BackendCapabilities, Generation


class Wrapped:
    """The built-in gold backend, with one answer spoiled: a conftest replacing how a backend is built."""
    name = "gold"
    capabilities = BackendCapabilities(cacheable=False, reads_requests=False)

    def __init__(self, inner):
        self.inner = inner

    def fingerprint(self):
        return {"backend": "wrapped-gold"}

    def generate(self, tasks, **kwargs):
        answers = self.inner.generate(tasks, **kwargs)
        return [Generation(text="nope") if t.case.case_id == "echo_1" else a for t, a in zip(tasks, answers)]

    def close(self):
        pass


class Incomplete:
    name = "gold"

    def generate(self, tasks, **kwargs):
        return []


def pytest_toolbench_make_backend(config, options, catalog, kind):
    if config.getoption("--incomplete-backend", False):
        return Incomplete()
    return Wrapped(kind.build(options, catalog))


def pytest_addoption(parser):
    parser.addoption("--incomplete-backend", action="store_true")
'''


def test_a_conftest_builds_the_backend_through_the_make_backend_hook(echo):
    conftest = echo.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n" + MAKE_BACKEND_CONFTEST)
    result = run(echo, "--toolbench-json=out.json")
    result.assert_outcomes(passed=2, failed=1)
    assert json.loads((echo.path / "reports" / "out.json").read_text())["cases"][1]["output"] == "nope"
    broken = run(echo, "--incomplete-backend")
    assert "backend 'gold' (Incomplete) lacks fingerprint, close" in broken.stdout.str() + broken.stderr.str()


REPORT_COUNTER = """
import json, os

def pytest_runtest_logreport(report):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # what the controller sees
    with open(os.environ["REPORT_LOG"], "a") as log:
        log.write(json.dumps([report.nodeid, report.when, report.outcome]) + "\\n")
"""


def _logged(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("dist", [[], ["-n", "2"]])
def test_a_passing_setup_and_teardown_of_a_case_are_not_reported(echo, monkeypatch, tmp_path, dist):
    """A case has no fixtures: only its call report travels (under xdist, a third of the messages)."""
    log = tmp_path / "reports.jsonl"
    monkeypatch.setenv("REPORT_LOG", str(log))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # when these tests themselves run under xdist
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + REPORT_COUNTER)
    result = run(echo, "-p", "no:cacheprovider", *dist)
    outcomes = result.parseoutcomes()
    logged = _logged(log)
    assert {when for _, when, _ in logged} == {"call"}
    assert len(logged) == outcomes["passed"] + outcomes.get("failed", 0) > 0


def test_a_skipped_case_and_junit_xml_still_get_their_reports(echo, monkeypatch, tmp_path):
    log = tmp_path / "reports.jsonl"
    monkeypatch.setenv("REPORT_LOG", str(log))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # when these tests themselves run under xdist
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + REPORT_COUNTER + """
import pytest

def pytest_collection_modifyitems(items):
    items[0].add_marker(pytest.mark.skip(reason="skipped by a conftest"))
""")
    xml = tmp_path / "junit.xml"
    result = run(echo, "-p", "no:cacheprovider", f"--junitxml={xml}")
    outcomes = result.parseoutcomes()
    assert outcomes["skipped"] == 1
    logged = _logged(log)
    assert [when for _, when, outcome in logged if outcome == "skipped"] == ["setup"]
    # JUnit XML closes each test case on its teardown report: with --junitxml every teardown is reported
    assert sum(when == "teardown" for _, when, _ in logged) == len({nodeid for nodeid, _, _ in logged})
    assert xml.read_text().count("<testcase ") == len({nodeid for nodeid, _, _ in logged})


def test_ctrl_c_while_scoring_writes_the_report_marked_interrupted_with_the_verdicts_so_far(echo):
    (echo.path / "conftest.py").write_text((echo.path / "conftest.py").read_text() + textwrap.dedent('''

        import os, signal


        def pytest_runtest_setup(item):
            if item.name.endswith("_2"):
                os.kill(os.getpid(), signal.SIGINT)
        '''))
    result = run(echo, "--toolbench-json", "r.json", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    document = json.loads((echo.path / "reports" / "r.json").read_text())
    assert document["header"]["interrupted"] == "while the cases were scored"
    outcomes = sorted(record["error_type"] or "pass" for record in document["cases"])
    assert outcomes.count("not_run") == 1 and len(outcomes) == 3, outcomes  # echo_0 and echo_1 kept
    assert "toolbench: INTERRUPTED while the cases were scored" in result.stdout.str()
