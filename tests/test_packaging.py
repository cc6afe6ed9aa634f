"""The wheel carries every suite (definition, samples, known defects) and runs them from any directory.

Packaging finds the suites by itself (setup.py): every ``suites/<name>/`` folder ships as
``pytest_toolbench.suites.<name>`` with no package list to keep by hand, and the build warns about nothing.
The wheels are built from a clean copy of the checkout, so a stale ``build/`` folder cannot hide a file
that the packaging configuration would drop.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO

SUITES = sorted(p.parent.name for p in (REPO / "suites").glob("*/suite.yaml"))

# Python warnings (BuildBackendWarning, SetuptoolsDeprecationWarning, ...) and distutils "warning: ..." lines;
# pip's own "WARNING:" lines (an unreachable index, say) are about the machine, not about the packaging.
WARNING = re.compile(r"\b\w+Warning\b|^\s*warning:", re.MULTILINE)


@dataclass
class Built:
    source: Path  # the clean copy the wheel was built from
    site: Path  # the wheel, extracted
    output: str  # everything the build printed


def _clean_copy(dest: Path) -> Path:
    top_level = {".git", ".venv", "build", "dist", "reports"}
    anywhere = {"__pycache__", ".pytest_cache"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in anywhere or n.endswith((".egg-info", ".pyc"))}
        if Path(folder) == REPO:
            skip |= top_level & set(names)
        return skip

    shutil.copytree(REPO, dest, ignore=ignore)
    return dest


def _build(source: Path, out: Path) -> Built:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out / "wheel"), str(source)],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-300:]}")
    wheel = next((out / "wheel").glob("pytest_toolbench-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(out / "site")
    return Built(source, out / "site", built.stdout + built.stderr)


def _shipped(source: Path) -> list[str]:
    """What the wheel must hold, as paths inside it: every module, every suite's yaml files and every sample."""
    files = [f"pytest_toolbench/{p.relative_to(source / 'pytest_toolbench').as_posix()}"
             for p in (source / "pytest_toolbench").rglob("*.py")]
    for path in (source / "suites").rglob("*"):
        relative = path.relative_to(source / "suites")
        if not path.is_file() or "__pycache__" in relative.parts:
            continue
        if path.suffix in (".py", ".yaml") or "samples" in relative.parts[1:-1]:
            files.append(f"pytest_toolbench/suites/{relative.as_posix()}")
    return sorted(files)


def _suite_folders(source: Path) -> list[str]:
    return sorted(p.name for p in (source / "suites").iterdir()
                  if p.is_dir() and p.name != "__pycache__" and not p.name.startswith("."))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    out = tmp_path_factory.mktemp("wheel")
    return _build(_clean_copy(out / "source"), out)


def test_the_build_warns_about_nothing(built):
    assert not WARNING.findall(built.output), built.output[-3000:]


def test_wheel_ships_every_module_suite_definition_and_sample(built):
    missing = [f for f in _shipped(built.source) if not (built.site / f).is_file()]
    assert not missing, missing
    assert (built.site / "pytest_toolbench" / "scorer_lib" / "embedding_models.json").is_file()  # the models' pinned hashes
    for suite in _suite_folders(built.source):
        assert (built.site / "pytest_toolbench" / "suites" / suite).is_dir(), f"suites/{suite}/ missing from the wheel"
    for suite in SUITES:
        folder = built.site / "pytest_toolbench" / "suites" / suite
        assert (folder / "suite.yaml").is_file(), suite
        assert any((folder / "samples").rglob("*.*")), f"{suite} has no samples in the wheel"


def test_a_new_suite_folder_ships_with_no_packaging_edit(tmp_path):
    """A suite with no Python in it and sample folders whose names Python could import (as upstream layouts
    have: data_en, First_Turn, possible_answer) ships whole, and the build still warns about nothing."""
    source = _clean_copy(tmp_path / "source")
    new = source / "suites" / "zzz_new_suite"
    (new / "samples" / "data_en" / "possible_answer").mkdir(parents=True)
    (new / "samples" / "odd-name").mkdir()
    (new / "suite.yaml").write_text("name: zzz_new_suite\n")
    (new / "known_defects.yaml").write_text("{}\n")
    (new / "samples" / "data_en" / "cases.json").write_text("{}\n")
    (new / "samples" / "data_en" / "possible_answer" / "cases.json").write_text("{}\n")
    (new / "samples" / "odd-name" / "cases.jsonl").write_text("{}\n")
    (new / "samples" / "table.csv").write_text("a,b\n")
    result = _build(source, tmp_path)
    folder = result.site / "pytest_toolbench" / "suites" / "zzz_new_suite"
    for name in ("suite.yaml", "known_defects.yaml", "samples/data_en/cases.json",
                 "samples/data_en/possible_answer/cases.json", "samples/odd-name/cases.jsonl", "samples/table.csv"):
        assert (folder / name).is_file(), name
    assert not WARNING.findall(result.output), result.output[-3000:]


@pytest.mark.parametrize("suite", [s for s in SUITES if s in ("bfcl", "rotbench", "nestools")])
def test_installed_suites_run_from_any_directory_on_samples(built, tmp_path, suite):
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["PYTHONPATH"] = str(built.site)
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    result = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", f"pytest_toolbench.suites.{suite}",
                             "-p", "no:cacheprovider", "-q", "--toolbench-no-download"],
                            cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "SAMPLE DATA ONLY" in result.stdout
    assert str(built.site) in result.stdout  # the installed copy ran, not the checkout
