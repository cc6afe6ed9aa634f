"""The wheel carries every suite (definition, samples, known defects) and runs them from any directory."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

SUITES = sorted(p.parent.name for p in (REPO / "suites").glob("*/suite.yaml"))


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-300:]}")
    wheel = next(out.glob("pytest_toolbench-*.whl"))
    extracted = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(extracted)
    return extracted


def test_every_package_directory_is_declared_in_pyproject():
    declared = (REPO / "pyproject.toml").read_text()
    for init in sorted((REPO / "pytest_toolbench").rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(REPO).parts)
        assert f'"{package}"' in declared, f"{package} missing from [tool.setuptools] packages"
    for init in sorted((REPO / "suites").rglob("__init__.py")):
        package = ".".join(("pytest_toolbench", *init.parent.relative_to(REPO).parts))
        assert f'"{package}"' in declared, f"{package} missing from [tool.setuptools] packages"


def test_wheel_ships_suite_definitions_and_samples(wheel_dir):
    for suite in SUITES:
        folder = wheel_dir / "pytest_toolbench" / "suites" / suite
        assert (folder / "suite.yaml").is_file(), suite
        assert (folder / f"test_{suite}.py").is_file(), suite
        assert any((folder / "samples").rglob("*.*")), f"{suite} has no samples in the wheel"


@pytest.mark.parametrize("suite", [s for s in SUITES if s in ("bfcl", "rotbench", "nestools")])
def test_installed_suites_run_from_any_directory_on_samples(wheel_dir, tmp_path, suite):
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA"}
    env["PYTHONPATH"] = str(wheel_dir)
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    result = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", f"pytest_toolbench.suites.{suite}",
                             "-p", "no:cacheprovider", "-q", "--toolbench-no-download"],
                            cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "SAMPLE DATA ONLY" in result.stdout
    assert str(wheel_dir) in result.stdout  # the installed copy ran, not the checkout
