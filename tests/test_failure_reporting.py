"""Failed cases explain themselves where people look: the terminal's "toolbench failures" section (node id, error
type, the whole one-line reason; bounded per suite and error type), the JSON record's ``message`` (the text the test
failed with), the same serially and under ``-n 2``."""

from __future__ import annotations

import json
import re

import pytest

SUITE_YAML = """\
name: tiny
title: Tiny
scorer: scorer
data:
  folder: tiny
  samples: samples
categories:
  - name: add
generation:
  max_tokens: 512
"""

# Every case whose id ends in an odd number fails with a long, two-line explanation; sum_4 makes the scorer raise.
SCORER = '''
import json

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.suite import Case, Metric, Request, Verdict

WHY = "the sum is wrong, and this reason is deliberately longer than any terminal line so that a cut would show: " \\
      + "x" * 120


def load_cases(data_dir, definition):
    return [Case(row["id"], "add", row) for row in load_jsonl(data_dir / "cases.jsonl")]


def build_request(case):
    return Request(messages=[{"role": "user", "content": "sum?"}])


def gold_output(case):
    return "answer of " + case.case_id


def score(case, generation):
    number = int(case.case_id.split("_")[1])
    if number == 4:
        raise ValueError("the scorer broke on sum_4")
    if number % 2:
        return Verdict(False, "wrong_sum", f"{WHY}\\nsecond line of {case.case_id}")
    return Verdict(True, None, "fine")


def aggregate(results):
    passed = sum(r.passed for r in results)
    return [Metric("accuracy", passed / len(results), passed, len(results), group="aggregate")]
'''

CASES = 50  # 25 wrong_sum failures: 20 listed, 5 counted


@pytest.fixture
def tiny(pytester: pytest.Pytester) -> pytest.Pytester:
    folder = pytester.path / "suites" / "tiny"
    (folder / "samples").mkdir(parents=True)
    (folder / "suite.yaml").write_text(SUITE_YAML)
    (folder / "scorer.py").write_text(SCORER)
    (folder / "samples" / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"sum_{i}"}) + "\n" for i in range(CASES)))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "-p", "no:randomly", "-p", "no:cacheprovider",
                                         "--toolbench-no-download", *args)


def section(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"=+ toolbench failures =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("===="))
    return [line for line in lines[start + 1:end] if line]


def test_each_failure_is_listed_whole_bounded_per_error_type_and_identical_under_xdist(tiny):
    serial = run(tiny, "--toolbench-json=serial.json")
    assert serial.ret == 0  # failing cases are the measurement
    listed = section(serial.stdout.str())
    wrong = [line for line in listed if ": wrong_sum: " in line]
    assert len(wrong) == 20
    assert wrong[0] == ("suites/tiny/suite.yaml::sum_1: wrong_sum: the sum is wrong, and this reason is deliberately "
                        "longer than any terminal line so that a cut would show: " + "x" * 120
                        + ' / second line of sum_1 | output: "answer of sum_1"')
    assert any(line.startswith("... and 5 more tiny wrong_sum failures (25 in all;") for line in listed)
    assert any(line.startswith("suites/tiny/suite.yaml::sum_4: scorer_error: scoring raised ValueError: the scorer "
                               "broke on sum_4") for line in listed)
    # pytest's own short summary (each reason cut to the terminal's width) is left to -rf
    assert "short test summary info" not in serial.stdout.str()
    assert "FAILED suites/tiny/suite.yaml::sum_1" in run(tiny, "-rf", "-k", "sum_1").stdout.str()

    parallel = run(tiny, "-n", "2", "--toolbench-json=parallel.json")
    assert parallel.ret == 0
    assert section(parallel.stdout.str()) == listed

    documents = [json.loads((tiny.path / name).read_text()) for name in ("serial.json", "parallel.json")]
    cases = [{case["case_id"]: case for case in document["cases"]} for document in documents]
    assert {k: v.get("message") for k, v in cases[0].items()} == {k: v.get("message") for k, v in cases[1].items()}
    assert "message" not in cases[0]["sum_0"]  # passed: no message
    assert cases[0]["sum_1"]["message"].startswith("wrong_sum: the sum is wrong")
    assert "second line of sum_1\n\nmodel output: 'answer of sum_1'" in cases[0]["sum_1"]["message"]
    assert cases[0]["sum_4"]["message"].startswith("scorer_error: scoring raised ValueError: the scorer broke")


def test_the_json_message_is_the_text_the_test_failed_with(tiny):
    result = run(tiny, "-k", "sum_3", "--tb=short", "--toolbench-json=one.json")
    message = json.loads((tiny.path / "one.json").read_text())["cases"][0]["message"]
    out = result.stdout.str()
    for line in message.splitlines():
        assert line in out
    assert "= FAILURES =" in out


def test_known_defects_of_a_gold_run_are_counted_as_pytest_counts_them_xfailed():
    from pytest_toolbench.contract.suite import CaseRecord
    from pytest_toolbench.report import failures

    records = [CaseRecord(suite="s", case_id=f"c{i}", category="a", passed=False, error_type="wrong",
                          explanation="no", known_defect="upstream answer is wrong" if i < 3 else None)
               for i in range(5)]
    gold = failures.lines(records, defects_expected=True)
    assert gold[0].startswith("2 failing benchmark cases and 3 expected failures (xfailed: known upstream defects"), gold
    only_defects = failures.lines(records[:3], defects_expected=True)
    assert only_defects[0].startswith("3 expected failures (xfailed"), only_defects
    assert "failing benchmark cases" not in only_defects[0]
    # a model run: known defects are failures there, as pytest reports them
    assert failures.lines(records)[0].startswith("5 failing benchmark cases (")
