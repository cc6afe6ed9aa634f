"""``--toolbench-repeat=K``: K samples per case (sample k with seed + k, cached per request and sample index), the
figures as means over the samples (pass@1), pass^k and the flaky cases, and the paired test over per-case rates.

End to end with a scripted sampling backend on the example echo suite: ``echo_0`` passes every sample, ``echo_1``
fails its odd samples (flaky), ``echo_2`` fails every sample.
"""

from __future__ import annotations

import itertools
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE, XDIST
from pytest_toolbench.contract.suite import MODEL_BACKEND, Case, CaseRecord, Generation, Metric, Request
from pytest_toolbench.report.case_figures import case_figures
from pytest_toolbench.report.significance import MCNEMAR, SIGN_FLIP, REPEATED_NOTE, paired_result
from pytest_toolbench.run.cache import request_key
from pytest_toolbench.run.summary import mean_over_samples, repeat_figures

SAMPLING_BACKEND = '''
import json, os
from pytest_toolbench.contract.suite import MODEL_BACKEND, Generation


class SamplingBackend:
    """Answers "hello" right, "hello world..." right on even samples only, "bye" wrong; logs (text, sample)."""

    name = "sampling"
    capabilities = MODEL_BACKEND

    def __init__(self, options):
        self.log = os.environ["SAMPLING_LOG"]

    def fingerprint(self):
        return {"backend": "sampling", "version": 1}

    def generate(self, tasks, on_chunk=None, **_):
        out = []
        with open(self.log, "a") as handle:
            for index, task in enumerate(tasks):
                text = task.request.messages[-1]["content"].removeprefix("Echo this: ")
                handle.write(json.dumps([text, task.request.sample]) + "\\n")
                wrong = text == "bye" or (text.startswith("hello world") and task.request.sample % 2)
                answer = "not json" if wrong else json.dumps({"name": "echo", "arguments": {"text": text}})
                out.append(Generation(text=answer, finish_reason="stop", prompt_tokens=5, output_tokens=7))
                if on_chunk is not None:
                    on_chunk([(index, out[-1])])
        return out

    def close(self):
        pass


def pytest_toolbench_register(registry):
    registry.add_backend("sampling", SamplingBackend, engine=True)
'''


@pytest.fixture
def echo(pytester: pytest.Pytester, monkeypatch):
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    pytester.syspathinsert()
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n" + textwrap.dedent(SAMPLING_BACKEND))
    monkeypatch.setenv("SAMPLING_LOG", str(pytester.path / "calls.log"))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "--toolbench-data=data", "-p", "no:randomly",
                                         "--toolbench-cache=cache", *args)


def generated(pytester: pytest.Pytester) -> list[tuple[str, int]]:
    log = pytester.path / "calls.log"
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []


EXPECTED_REPEAT = {"samples": 3, "cases": 3, "pass_at_1": 5 / 9, "pass_hat_k": 1 / 3, "flaky": 1 / 3}
#: tau-bench's pass^k for k = 1..3 over echo_0 (3 of 3 pass), echo_1 (2 of 3) and echo_2 (0 of 3)
EXPECTED_CURVE = [5 / 9, (1 + 1 / 3 + 0) / 3, 1 / 3]


@pytest.mark.parametrize("workers", [[], XDIST])
def test_three_samples_per_case(echo, workers):
    result = run(echo, "--toolbench-backend=sampling", "--toolbench-repeat=3", "--toolbench-json=out.json",
                 "--toolbench-md=out.md", "-rA", *workers)
    result.assert_outcomes(passed=5, failed=4)
    assert sorted(generated(echo)) == sorted((text, sample) for text in
                                             ("hello", "hello world, this is a longer text", "bye")
                                             for sample in range(3))
    document = json.loads((echo.path / "out.json").read_text())
    assert document["header"]["repeat"] == 3
    cases = [(c["case_id"], c["sample"], c["passed"], c["nodeid"].rsplit("::", 1)[1]) for c in document["cases"]]
    assert cases == [("echo_0", 0, True, "echo_0"), ("echo_0", 1, True, "echo_0[r1]"),
                     ("echo_0", 2, True, "echo_0[r2]"), ("echo_1", 0, True, "echo_1"),
                     ("echo_1", 1, False, "echo_1[r1]"), ("echo_1", 2, True, "echo_1[r2]"),
                     ("echo_2", 0, False, "echo_2"), ("echo_2", 1, False, "echo_2[r1]"),
                     ("echo_2", 2, False, "echo_2[r2]")]
    suite = document["suites"]["echo"]
    assert suite["repeat"].pop("flaky_cases") == ["echo_1"]
    curve = suite["repeat"].pop("pass_hat")
    assert [point["value"] for point in curve] == pytest.approx(EXPECTED_CURVE)
    assert [(point["k"], point["cases"], point["excluded"]) for point in curve] == [(1, 3, 0), (2, 3, 0), (3, 3, 0)]
    assert suite["repeat"] == pytest.approx(EXPECTED_REPEAT)
    metrics = {m["name"]: m for m in suite["metrics"]}
    assert metrics["overall"]["value"] == pytest.approx(5 / 9)  # pass@1: the mean of 2/3, 1/3, 2/3
    assert (metrics["overall"]["correct"], metrics["overall"]["total"]) == (pytest.approx(5 / 3), 3)
    assert metrics["long"]["value"] == pytest.approx(2 / 3) and metrics["short"]["value"] == pytest.approx(0.5)
    text = result.stdout.str()
    assert "echo: Echo (example suite)  (5/9 samples passed)" in text
    assert ("repeat: 3 samples per case: pass@1 55.56% (the mean of each case's pass rate; the figures are means over "
            "the samples), pass^k for k=1..3 55.56%, 44.44%, 33.33% (tau-bench's C(c,k)/C(n,k)), pass^3 33.33%, "
            "flaky 33.33% (1 of 3 cases: echo_1)") in text
    assert "**Repeat**: 3 samples per case: pass@1 55.56%" in (echo.path / "out.md").read_text()


def test_cache_serves_each_sample_index(echo):
    run(echo, "--toolbench-backend=sampling").assert_outcomes(passed=2, failed=1)
    assert sorted(sample for _, sample in generated(echo)) == [0, 0, 0]
    # sample 0 is keyed as a run without repeats: only samples 1 and 2 are new
    run(echo, "--toolbench-backend=sampling", "--toolbench-repeat=3").assert_outcomes(passed=5, failed=4)
    assert sorted(sample for _, sample in generated(echo)) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    result = run(echo, "--toolbench-backend=sampling", "--toolbench-repeat=3", "--toolbench-offline")
    result.assert_outcomes(passed=5, failed=4)
    assert len(generated(echo)) == 9
    # --lf reruns the failed samples alone, from the cache
    result = run(echo, "--toolbench-backend=sampling", "--toolbench-repeat=3", "--lf", "--toolbench-json=lf.json")
    result.assert_outcomes(failed=4)
    assert len(generated(echo)) == 9
    rerun = json.loads((echo.path / "lf.json").read_text())["cases"]
    assert sorted((c["case_id"], c["sample"]) for c in rerun) == [("echo_1", 1), ("echo_2", 0), ("echo_2", 1),
                                                                  ("echo_2", 2)]


#: the lines of a results file that hold the clock (when the run started and ended, how long it took)
CLOCK_FIELDS = ('"started": ', '"finished": ', '"wall_s": ', '"generation_s": ', '"collection_and_scoring_s": ')


def without_clock(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.lstrip().startswith(CLOCK_FIELDS)]


def test_repeat_one_changes_nothing(echo):
    run(echo, "--toolbench-json=plain.json").assert_outcomes(passed=3)
    run(echo, "--toolbench-json=one.json", "--toolbench-repeat=1").assert_outcomes(passed=3)
    plain = json.loads((echo.path / "plain.json").read_text())
    assert "repeat" not in plain["header"] and "repeat" not in plain["suites"]["echo"]
    assert all("sample" not in case for case in plain["cases"])
    # byte for byte, but for the clock's five lines
    assert without_clock(echo.path / "plain.json") == without_clock(echo.path / "one.json")
    assert len(without_clock(echo.path / "plain.json")) == len((echo.path / "plain.json").read_text().splitlines()) - 5


@pytest.mark.parametrize("value, error", [
    ("0", "--toolbench-repeat=0: expected a whole number of samples per case, at least 1"),
    ("two", "--toolbench-repeat=two: expected a whole number of samples per case, at least 1"),
    ("-3", "--toolbench-repeat=-3: expected a whole number of samples per case, at least 1"),
    ("1.5", "--toolbench-repeat=1.5: expected a whole number of samples per case, at least 1"),
])
def test_bad_value_is_a_usage_error(echo, value, error):
    result = run(echo, "--toolbench-backend=sampling", f"--toolbench-repeat={value}")
    assert result.ret == 4
    assert error in result.stderr.str() and "Traceback" not in result.stderr.str() + result.stdout.str()


def test_backends_with_one_answer_refuse_repeats(echo):
    result = run(echo, "--toolbench-repeat=2")  # gold
    assert result.ret == 4
    assert "--toolbench-repeat=2: the gold backend has one answer per case" in result.stderr.str()


# -- the pure parts ------------------------------------------------------------------------------------------------
def test_sample_zero_keeps_the_key_of_a_run_without_repeats():
    request = Request(messages=[{"role": "user", "content": "q"}], max_tokens=64)
    keys = {request_key({"m": 1}, Request(**{**request.__dict__, "sample": k})) for k in range(3)}
    assert request_key({"m": 1}, request) in keys and len(keys) == 3
    assert request_key({"m": 1}, Request(**{**request.__dict__, "sample": 0})) == request_key({"m": 1}, request)


def _record(case_id: str, sample: int | None, passed: bool, order: int) -> CaseRecord:
    return CaseRecord("s", case_id, "c", passed, None if passed else "wrong", order=order, sample=sample)


def test_repeat_figures_on_a_hand_made_suite():
    # four cases, K=2: a passes both, b fails both, c and d pass one each (flaky)
    outcomes = {"a": (True, True), "b": (False, False), "c": (True, False), "d": (False, True)}
    records = [_record(case, k, passed[k], order) for order, (case, passed) in enumerate(outcomes.items())
               for k in range(2)]
    figures = repeat_figures(records, 2)
    assert figures == {"samples": 2, "cases": 4, "pass_at_1": 0.5, "pass_hat_k": 0.25, "flaky": 0.5,
                       "flaky_cases": ["c", "d"],
                       "pass_hat": [{"k": 1, "value": 0.5, "cases": 4, "excluded": 0},
                                    {"k": 2, "value": 0.25, "cases": 4, "excluded": 0}]}


def _all_pass_chance(passed: tuple[bool, ...], k: int) -> float:
    """pass^k of one case by brute force: the share of its k-sample subsets in which every sample passes."""
    subsets = list(itertools.combinations(passed, k))
    return sum(all(subset) for subset in subsets) / len(subsets)


def test_pass_hat_curve_is_tau_bench_estimator_and_short_cases_are_left_out_and_counted():
    # K=3; b ran one sample only (--lf), which once counted as "all 3 pass" and lifted pass^3 from 0 to 1/3
    outcomes = {"a": (True, True, False), "b": (True,), "c": (False, False, True), "d": (True, True, True)}
    records = [_record(case, k, passed[k], order) for order, (case, passed) in enumerate(outcomes.items())
               for k in range(len(passed))]
    figures = repeat_figures(records, 3)
    assert figures["pass_at_1"] == pytest.approx((2 / 3 + 1 + 1 / 3 + 1) / 4)  # the mean of per-case rates
    for point in figures["pass_hat"]:
        eligible = [passed for passed in outcomes.values() if len(passed) >= point["k"]]
        assert point["value"] == pytest.approx(sum(_all_pass_chance(p, point["k"]) for p in eligible) / len(eligible))
        assert (point["cases"], point["excluded"]) == (len(eligible), len(outcomes) - len(eligible))
    assert figures["pass_hat_k"] == pytest.approx(1 / 3)  # a, c and d: only d passes all three
    assert [p["excluded"] for p in figures["pass_hat"]] == [0, 1, 1]
    from pytest_toolbench.report.stats import repeat_text
    text = repeat_text(figures)
    assert "pass^k for k=1..3 75.00%, 44.44%, 33.33%" in text
    assert "left out of pass^k for having fewer than k samples: k=2: 1, k=3: 1 cases" in text


def test_mean_over_samples_averages_each_figure():
    first = [Metric("overall", 0.5, 2, 4, group="aggregate"), Metric("f1", 0.8, group="P/R/F1")]
    second = [Metric("overall", 0.75, 3, 4, group="aggregate"), Metric("f1", None, group="P/R/F1")]
    merged = mean_over_samples([first, second])
    assert merged[0] == Metric("overall", 0.625, 2.5, 4, group="aggregate")
    assert merged[1].value is None  # a sample without the figure: no mean, never a value invented


def _aggregate(results):
    passed = sum(r.passed for r in results)
    return [Metric("overall", passed / len(results), passed, len(results), group="aggregate")]


def test_paired_test_over_repeats_is_the_sign_flip_on_per_case_rates():
    cases = [f"c{i}" for i in range(20)]
    baseline = [_record(case, None, True, i) for i, case in enumerate(cases)]
    # the current run passes every case on sample 0 and fails the first ten on sample 1: rates 0.5 there
    current = [_record(case, k, k == 0 or i >= 10, i) for i, case in enumerate(cases) for k in range(2)]
    key = ("aggregate", "overall")
    before = case_figures(_aggregate, baseline, _aggregate(baseline))
    now = case_figures(_aggregate, current, [Metric("overall", 0.75, 15, 20, group="aggregate")])
    assert now.repeated and now.means[key] == {case: 0.5 if i < 10 else 1.0 for i, case in enumerate(cases)}
    tested = paired_result(key, now, before)
    assert tested.test.startswith(SIGN_FLIP) and tested.note == REPEATED_NOTE
    assert tested.pairs == 20 and tested.flipped_to_fail == 10 and tested.flipped_to_pass == 0
    low, high = tested.delta_interval95
    assert low <= -0.25 <= high < 0 and tested.p_value < 0.05
    # without repeats the same kind of figure keeps McNemar
    assert paired_result(key, before, before).test == MCNEMAR


# -- an interactive suite: each sample is its own conversation --------------------------------------------------------
class _TwoTurns:
    """A conversation of two model turns; the second request quotes the first answer, so a sample's second turn
    depends on that sample's own first answer."""

    def conversation(self, case):
        first = yield Request(messages=[{"role": "user", "content": case.payload["q"]}])
        yield Request(messages=[{"role": "user", "content": case.payload["q"]},
                                {"role": "assistant", "content": first.text}, {"role": "user", "content": "again"}])
        return {"done": True}


class _Recorder:
    """A model backend that answers with the step and sample it was asked for, and keeps what it was asked."""

    capabilities = MODEL_BACKEND

    def __init__(self):
        self.asked: list[tuple[int, int]] = []

    def generate(self, tasks, on_chunk=None, **_):
        out = []
        for task in tasks:
            self.asked.append((task.step, task.request.sample))
            out.append(Generation(text=f"answer {task.step} of sample {task.request.sample}", finish_reason="stop"))
        return out


def test_interactive_samples_are_separate_conversations(tmp_path):
    from types import SimpleNamespace

    from pytest_toolbench.run.cache import GenerationCache
    from pytest_toolbench.run.generation import pregenerate
    from pytest_toolbench.run.requests import Answerer, run_case

    suite = SimpleNamespace(name="talk", interactive=True, benchmark=_TwoTurns(),
                            definition=SimpleNamespace(generation={"max_tokens": 32}, max_tokens=32))
    case = Case("talk_0", "c", {"q": "hi"}, suite="talk")
    backend = _Recorder()
    cache = GenerationCache(tmp_path)
    stats = pregenerate([(suite, case, 0), (suite, case, 1), (suite, case, 2)], backend, cache, {"m": 1}, None)
    assert stats.rounds == 2 and stats.generated == 6
    assert sorted(backend.asked) == [(step, sample) for step in (0, 1) for sample in range(3)]
    # scoring reads each sample's own conversation back from the cache, the engine not asked again
    answer = Answerer(None, cache, {"m": 1})
    for sample in range(3):
        transcript = run_case(case, suite, answer, None, sample)
        assert json.loads(transcript.text) == {"done": True}
    assert len(backend.asked) == 6
    # a pair without a sample index is sample 0: served from the same cache
    assert pregenerate([(suite, case)], backend, cache, {"m": 1}, None).generated == 0


def test_k_selects_one_sample_index(echo):
    # twice: the second run decides from the loaded-suite cache's index of case ids, before loading the suite
    for _ in range(2):
        result = run(echo, "--toolbench-backend=sampling", "--toolbench-repeat=3", "-k", "r1", "-rA")
        result.assert_outcomes(passed=1, failed=2)
        assert "PASSED suites/echo/suite.yaml::echo_0[r1]" in result.stdout.str()
    assert sorted(generated(echo)) == [("bye", 1), ("hello", 1), ("hello world, this is a longer text", 1)]


def test_every_writer_shows_the_pass_hat_curve():
    from pytest_toolbench.report import markdown
    from pytest_toolbench.report.html import summary_html
    from pytest_toolbench.report.run_report import build
    from pytest_toolbench.run.summary import RunSummary, SuiteSummary

    outcomes = {"a": (True, True, False), "b": (True, True, True)}
    records = [_record(case, k, passed[k], order) for order, (case, passed) in enumerate(outcomes.items())
               for k in range(3)]
    suite = SuiteSummary("s", "S", {}, 6, 5, [Metric("overall", 5 / 6, 2.5, 3, group="aggregate")], {}, {}, {},
                         repeat=repeat_figures(records, 3))
    report = build(RunSummary(header={"backend": "sampling", "repeat": 3}, suites=[suite]))
    assert "pass^k for k=1..3 83.33%, 66.67%, 50.00%" in markdown.render(report)
    page = summary_html(report)
    assert "pass^k: all of k samples pass" in page and "<title>pass^3: 50.0% (over 2 cases)</title>" in page
