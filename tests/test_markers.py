"""Every marker the suites use is registered with a description before collection (``pytest --markers`` lists it,
``--strict-markers`` accepts it), and a ``-m`` expression naming a marker nobody declares says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, shared_data_dir

KEYWORD_DUMP = """
import json, os

def pytest_collection_finish(session):
    used = {}
    for item in session.items:
        case = getattr(item, "case", None)
        if case is not None:
            used.setdefault(case.suite, set()).update(mark.name for mark in item.iter_markers()
                                                      if mark.name != "xfail")
    with open(os.environ["KEYWORD_DUMP"], "w") as out:
        json.dump({suite: sorted(names) for suite, names in used.items()}, out)
"""


def _pytest(tmp_path: Path, *args: str, data: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLBENCH_DATA", "PYTEST_XDIST_WORKER")}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    if data is not None:
        env["TOOLBENCH_DATA"] = str(data)
    (tmp_path / "plugin").mkdir(exist_ok=True)
    (tmp_path / "plugin" / "keyword_dump.py").write_text(KEYWORD_DUMP)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "plugin"), env.get("PYTHONPATH", "")])
    env["KEYWORD_DUMP"] = str(tmp_path / "used.json")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                           f"--toolbench-cache={tmp_path / 'cache'}", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_pytest_markers_lists_every_suite_category_and_keyword_with_its_description(tmp_path):
    listed = _pytest(tmp_path, "--markers").stdout
    for line in ("@pytest.mark.bfcl: every case of the suite BFCL v4",
                 "@pytest.mark.parallel: bfcl: the cases of the category parallel",
                 "@pytest.mark.live: bfcl: BFCL's live (user-contributed) or non-live single-turn categories",
                 "@pytest.mark.needs_user_model: acebench: agent multi-turn cases that need a simulated user",
                 "@pytest.mark.finance: nestools: the task's domain",
                 "@pytest.mark.nested: nestools: whether a call takes an earlier call's result (nested) or not (flat); "
                 "sealtools: samples with a call"):
        assert line in listed, line


@pytest.mark.parametrize("data", ["samples", "upstream"])
def test_every_marker_a_shipped_suite_uses_is_declared_by_name_in_its_suite_yaml(tmp_path, data):
    from pytest_toolbench.contract.definition import load_definition

    folder = shared_data_dir() if data == "upstream" else None
    if data == "upstream" and folder is None:
        pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")
    done = _pytest(tmp_path, "suites", "-p", "keyword_dump", "--collect-only", "-q", "--strict-markers",
                   "--toolbench-suite-option=apibank.samples=[dialog, api_call]", data=folder)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    used = json.loads((tmp_path / "used.json").read_text())
    assert len(used) == len(list((REPO / "suites").glob("*/suite.yaml")))
    for suite, names in used.items():
        declared = load_definition(REPO / "suites" / suite / "suite.yaml").marker_descriptions()
        assert not set(names) - set(declared), (suite, sorted(set(names) - set(declared)))


def test_strict_markers_accepts_the_suites_markers_and_a_misspelt_one_is_named(tmp_path):
    good = _pytest(tmp_path, "suites/bfcl", "--collect-only", "-q", "--strict-markers", "-m", "bfcl and parallel")
    assert good.returncode == 0 and "suites/bfcl/suite.yaml::parallel_0" in good.stdout, good.stdout[-2000:]
    # a misspelt marker is a usage error before anything runs (it would select nothing, or with "not" everything),
    # one line naming it, the likely one and where the known markers are listed
    for expression in ("bfcl and parralel", "not multiturn"):
        misspelt = _pytest(tmp_path, "suites/bfcl", "-q", "-m", expression)
        assert misspelt.returncode == 4, misspelt.stdout[-2000:] + misspelt.stderr[-2000:]
        name = expression.split()[-1]
        assert (f"ERROR: -m {expression!r} names the marker {name!r}, which no suite, plugin or ini file declares, "
                "so it would select nothing by that name; did you mean") in misspelt.stderr, misspelt.stderr
        assert ("'parallel'" if name == "parralel" else "'multi_turn'") in misspelt.stderr
        assert "listed by `pytest --markers`" in misspelt.stderr and "passed" not in misspelt.stdout
    quiet = _pytest(tmp_path, "suites/bfcl", "--collect-only", "-q", "-m", "bfcl and parallel")
    assert "PytestConfigWarning" not in quiet.stdout and quiet.returncode == 0
    # every suite here, NesTools' task-domain pattern among them: the pinned data's names are all declared, so the
    # typo is still an error; only data beyond the pinned files (--toolbench-data-unverified) may carry a name that
    # only a family pattern allows: a warning then
    everything = _pytest(tmp_path, "suites", "--collect-only", "-q", "-m", "multiturn")
    assert everything.returncode == 4 and "did you mean 'multi_turn'" in everything.stderr, everything.stderr
    family = _pytest(tmp_path, "suites/nestools", "--collect-only", "-q", "-m", "financ",
                     "--toolbench-data-unverified")
    assert family.returncode == 5, family.stdout[-2000:] + family.stderr[-2000:]
    assert "names the marker 'financ', which no suite declares by name" in family.stdout
    assert "did you mean 'finance'" in family.stdout


def test_xdist_workers_know_the_markers_of_the_suites_they_rule_out(tmp_path):
    # nestools is ruled out on each worker before it is collected, yet --strict-markers checks the -m names there
    done = _pytest(tmp_path, "suites/bfcl", "suites/nestools", "-n", "2", "--strict-markers", "--toolbench-limit=1",
                   "-m", "simple_python and not finance")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_a_project_without_suites_keeps_pytests_rules_for_its_own_marks(tmp_path):
    """The plugin installed beside a project's own tests: an undeclared mark of theirs is pytest's business (a
    warning, and ``-m`` selects what carries it), not a usage error of ours."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_own.py").write_text("import pytest\n\n\n@pytest.mark.nightly\ndef test_a():\n    pass\n\n\n"
                                         "def test_b():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLBENCH_DATA", "PYTEST_XDIST_WORKER")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "nightly"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed, 1 deselected" in done.stdout and "names the marker" not in done.stderr + done.stdout
