"""A relative data folder (``TOOLBENCH_DATA=../shared/data``, as the README writes it) means a folder relative to
where pytest was invoked, for the run itself, its xdist workers, the subprocesses its tests start, and the tests'
own data discovery (``conftest.shared_data_dir``), whatever folder each of them works in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import conftest
from conftest import EXAMPLE_SUITE, REPO

PROBE = '''
import os, subprocess, sys


def test_a_worker_and_its_subprocesses_see_the_absolute_folder(tmp_path):
    assert os.environ.get("PYTEST_XDIST_WORKER"), "this probe is meant to run on an xdist worker"
    given = os.environ["TOOLBENCH_DATA"]
    assert os.path.isabs(given) and os.path.isdir(os.path.join(given, "echo")), given
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['TOOLBENCH_DATA'])"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert child.stdout.strip() == given
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    return pytester


def test_a_relative_toolbench_data_reaches_xdist_workers_and_subprocesses_as_absolute(project, monkeypatch):
    project.makepyfile(test_probe=PROBE)
    monkeypatch.setenv("TOOLBENCH_DATA", "data")
    result = project.runpytest_subprocess("suites", "test_probe.py", "-n", "2", "-p", "no:randomly",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)  # the three echo cases and the probe
    result.stdout.fnmatch_lines([f"toolbench: data {(project.path / 'data').resolve()} (TOOLBENCH_DATA)"])


def test_a_run_in_this_process_puts_the_relative_value_back(project, monkeypatch):
    monkeypatch.setenv("TOOLBENCH_DATA", "data")
    result = project.runpytest("suites", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert os.environ["TOOLBENCH_DATA"] == "data"


def test_a_missing_relative_folder_is_one_error_naming_where_it_was_looked_for(project, monkeypatch):
    monkeypatch.setenv("TOOLBENCH_DATA", "../no-such-data")
    result = project.runpytest_subprocess("suites", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*TOOLBENCH_DATA=../no-such-data: no such folder (relative to {project.path}: "
                                 f"{project.path.parent / 'no-such-data'})*"])
    assert "Traceback" not in result.stderr.str()


def test_the_tests_find_the_data_from_a_relative_toolbench_data_in_any_working_folder(shared_data, tmp_path,
                                                                                      monkeypatch):
    relative = os.path.relpath(shared_data, conftest._invocation_dir)
    assert not Path(relative).is_absolute()
    monkeypatch.setenv("TOOLBENCH_DATA", relative)
    monkeypatch.chdir(tmp_path)  # as a pytester run does
    assert conftest.shared_data_dir() == shared_data.resolve()


@pytest.mark.parametrize("data_env", ["relative", "unset"])
def test_the_bfcl_simulator_tests_pass_with_a_relative_toolbench_data_or_none(shared_data, data_env, tmp_path):
    """The README's test command, on the tests that once failed when run after others (the wheel beside the data
    was not found): ``TOOLBENCH_DATA`` relative to the checkout, and not set at all."""
    env = {key: value for key, value in os.environ.items() if key not in ("TOOLBENCH_DATA", "PYTEST_XDIST_WORKER",
                                                                          "PYTEST_ADDOPTS")}
    if data_env == "relative":
        env["TOOLBENCH_DATA"] = os.path.relpath(shared_data, REPO)
    if data_env == "unset" and shared_data.resolve() != (REPO.parent / "shared" / "data").resolve():
        pytest.skip("without TOOLBENCH_DATA the tests look in ../shared/data, which is not this run's data")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_bfcl_multi_turn_checker.py", "-p", "no:cacheprovider", "-q",
         "-p", "no:randomly", "-k", "malicious_calls or wheel_is_found or failed_lookup", f"--basetemp={tmp_path}"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout


def test_a_data_folder_one_level_too_high_says_where_it_looked_and_which_folder_holds_the_suites(project):
    result = project.runpytest("suites", f"--toolbench-data={project.path}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert (f"the data folder {project.path} (from --toolbench-data) holds none of the suites' data folders: looked "
            f"for echo/ in {project.path}; {project.path / 'data'} holds echo/: did you mean "
            f"--toolbench-data={project.path / 'data'}?") in text, text
    # one level too low: the parent is named
    result = project.runpytest("suites", f"--toolbench-data={project.path / 'data' / 'echo'}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"did you mean --toolbench-data={project.path / 'data'}?" in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("keyword, hint", [("ecoh", "did you mean 'echo'?"), ("short or shrot", "did you mean 'short'?"),
                                           ("short", None)])
def test_a_keyword_that_matches_nothing_gets_a_did_you_mean(project, keyword, hint):
    result = project.runpytest("suites", "--toolbench-data=data", "-k", keyword, "--collect-only", "-q",
                               "-p", "no:cacheprovider")
    lines = [line for line in result.stdout.lines if "matches nothing" in line]
    if hint is None:
        assert lines == [], lines
    else:
        assert len(lines) == 1 and lines[0].endswith(hint), result.stdout.str()
