"""The collection-time ``-k``/``-m`` prefilter (items that cannot be selected are never built) selects exactly what
pytest's own deselection selects: every shipped suite on its samples, compared with a run whose prefilter is off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

NO_PREFILTER = "import pytest_toolbench.plugin.collection as collection\ncollection.run_selector = lambda parent: None\n"


def _selected(tmp_path: Path, args: list[str], prefilter: bool) -> list[str]:
    plugin = tmp_path / "plugin"
    plugin.mkdir(exist_ok=True)
    (plugin / "no_prefilter.py").write_text(NO_PREFILTER)
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLBENCH_DATA", "PYTEST_XDIST_WORKER")}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), env.get("PYTHONPATH", "")])
    extra = [] if prefilter else ["-p", "no_prefilter"]
    done = subprocess.run([sys.executable, "-m", "pytest", "suites", "--collect-only", "-q", "-p", "no:cacheprovider",
                           f"--toolbench-cache={tmp_path / 'cache'}", *extra, *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 5), done.stdout[-2000:] + done.stderr[-2000:]  # 5: nothing selected
    return sorted(line for line in done.stdout.splitlines() if "::" in line)


@pytest.mark.parametrize("args", [
    ["-k", "bfcl"], ["-k", "BFCL and not live"], ["-k", "simple_python_1"], ["-k", "not rotbench and not acebench"],
    ["-k", "live or clean"], ["-k", "yaml and suites"], ["-k", "1"], ["-k", "Chat"], ["-k", "nothing_matches_this"],
    ["-m", "bfcl and parallel"], ["-m", "not nestools"], ["-m", "first_turn or dh_base"],
    ["-k", "task", "-m", "not teval"],
], ids=lambda args: " ".join(args))
def test_the_prefilter_selects_what_pytest_selects(tmp_path, args):
    with_prefilter = _selected(tmp_path, args, prefilter=True)
    assert with_prefilter == _selected(tmp_path, args, prefilter=False)
