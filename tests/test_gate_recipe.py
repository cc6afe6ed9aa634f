"""The documented CI recipe works as written on a machine without API keys (issue 41).

README's gate (a baseline run, then the gated rerun) is read from README.md itself and run on the gold answers of
the upstream data: an identical rerun passes (exit 0), a replay with 20 of simple_python's 400 cases made wrong (a
5-point drop in one category) misses the gate (exit 1) on that category alone. Around it, on a few BFCL categories:
a baseline of other cases is refused before anything runs (exit 4), a rerun over part of the baseline is compared
on the cases both hold and lists the figures it did not run, and a 10% sampled run against a full gold baseline
shows a delta of 0 on every compared figure.

The recipe gates on BFCL's Overall (``overall_without_web_search``), which needs every category but web search, so
it cannot run on a subset: the full gold run takes about 80 s of CPU per run here, hence ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    """The plugin in a subprocess from the repository root (README's commands run there), without any API key."""
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env["TOOLBENCH_DATA"] = str(shared_data_dir())
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "--tb=no",
               f"--toolbench-cache={tmp_path / 'cache'}", *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1200, env=env)
    return result.returncode, result.stdout + result.stderr


def readme_command(marker: str) -> list[str]:
    """The arguments of README's first ``pytest`` command that contains ``marker`` (continuations joined)."""
    blocks = re.findall(r"```\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    for block in blocks:
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            if line.strip().startswith("pytest ") and marker in line:
                return shlex.split(line)[1:]
    raise AssertionError(f"README.md has no pytest command with {marker!r}")


def as_gold(args: list[str], **paths: str) -> list[str]:
    """A documented command on this machine: no ``--model`` (the gold answers), serial (``-n auto`` on a shared
    2-core machine only adds workers), no HTML or Markdown file, and the results files in the test's folder
    (``paths``: option -> path)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--model", "--html", "--toolbench-md") or arg == "--self-contained-html":
            skip = "=" not in arg and arg != "--self-contained-html"
            continue
        if arg == "-n":
            skip = True
            continue
        if name in paths:
            out.append(f"{name}={paths[name]}")
            continue
        out.append(arg)
    return out


def replay_folder(folder: Path, document: dict, wrong: dict[str, int]) -> Path:
    """BFCL result files of the gold run's own outputs (its ``output`` per case), ``wrong[category]`` cases of a
    category answered with a call to a function that does not exist. Web search (not scored without a key) is
    left out."""
    folder.mkdir()
    by_category: dict[str, list[str]] = {}
    for case in document["cases"]:
        if case["suite"] != "bfcl" or case["error_type"] == "not_scored":
            continue
        output = case["output"]
        if output.startswith('{"mode"'):
            output = json.loads(output)["result"]
        lines = by_category.setdefault(case["category"], [])
        if len(lines) < wrong.get(case["category"], 0):
            output = "[no_such_function(x=1)]"
        lines.append(json.dumps({"id": case["case_id"], "result": output}))
    for category, lines in by_category.items():
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n")
    return folder


def gate_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("toolbench gate")]


@pytest.fixture
def data():
    if shared_data_dir() is None:
        pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")


@pytest.mark.slow
def test_readme_gate_recipe_passes_an_identical_rerun_and_catches_a_planted_drop(tmp_path, data):
    baseline = tmp_path / "run.json"
    first = as_gold(readme_command("--toolbench-json=run.json"), **{"--toolbench-json": str(baseline)})
    gate = as_gold(readme_command("--toolbench-baseline="), **{"--toolbench-baseline": str(baseline)})
    assert "--toolbench-fail-under" in gate and "--toolbench-max-drop=2" in gate
    status, text = run(tmp_path, *first)
    assert status == 0, text[-3000:]
    status, text = run(tmp_path, *gate)  # an identical rerun
    assert status == 0, text[-3000:]
    assert not [line for line in gate_lines(text) if "missed" in line]
    assert "toolbench gate passed: bfcl.overall_without_web_search = " in text
    # a planted drop: 20 of simple_python's 400 cases wrong
    document = json.loads(baseline.read_text())
    replay = replay_folder(tmp_path / "planted", document, {"simple_python": 20})
    status, text = run(tmp_path, *gate, f"--toolbench-replay={replay}")
    assert status == 1, text[-3000:]
    missed = [line for line in gate_lines(text) if "missed" in line]
    assert len(missed) == 1 and missed[0].startswith(
        "toolbench gate missed: bfcl.simple_python fell 5.00 points (100.00% → 95.00%)"), missed


def test_a_baseline_of_other_cases_is_refused_before_the_run(tmp_path, data):
    other = tmp_path / "nestools.json"
    other.write_text(json.dumps({"header": {"backend": "gold"}, "suites": {"nestools": {"metrics": []}},
                                 "cases": [{"suite": "nestools", "case_id": "nestools_0", "category": "nestools",
                                            "passed": True}]}))
    status, text = run(tmp_path, "suites/bfcl", "-k", "simple_java and not javascript", f"--toolbench-baseline={other}",
                       "--toolbench-max-drop=2")
    assert status == 4, text[-3000:]
    assert (f"--toolbench-baseline {other}: shares no case with this run, so it could compare nothing and every "
            "gate on it would pass: this run selects bfcl: 100 cases (simple_java); the baseline holds nestools: "
            "1 case (nestools)") in text
    assert "toolbench summary" not in text and "passed" not in text.splitlines()[-1]


@pytest.mark.slow
def test_a_subset_rerun_a_planted_drop_and_a_sample_against_a_full_baseline(tmp_path, data):
    """On five single-turn categories (a few seconds each run): the subset rerun passes and lists what it did not
    run, the planted drop misses on its category, a 10% sample shows Δ 0 on every compared figure."""
    selection = "simple_python or simple_java or multiple or parallel or irrelevance"
    baseline = tmp_path / "full.json"
    gate = ["--toolbench-max-drop=2", "--toolbench-significance=0.05"]
    status, text = run(tmp_path, "suites/bfcl", "-k", selection, f"--toolbench-json={baseline}")
    assert status == 0, text[-3000:]
    document = json.loads(baseline.read_text())

    out = tmp_path / "subset.json"
    status, text = run(tmp_path, "suites/bfcl", "-k", "simple_java and not javascript",
                       f"--toolbench-baseline={baseline}", *gate, f"--toolbench-json={out}")
    assert status == 0, text[-3000:]
    held = len(document["cases"])
    assert f"compared on 100 of the baseline's {held:,} cases" in text
    assert re.search(r"\d+ figures not run in full here are not compared, never a drop \(simple_python, ", text)
    assert "--toolbench-accept-untested" not in text
    compared = json.loads(out.read_text())["report"]["baseline"]["suites"]["bfcl"]
    assert compared["compared_cases"] == 100 and compared["baseline_cases"] == held
    assert "overall_without_web_search" in compared["not_compared"]

    replay = replay_folder(tmp_path / "planted", document, {"simple_python": 20})
    status, text = run(tmp_path, "suites/bfcl", "-k", selection, f"--toolbench-replay={replay}",
                       f"--toolbench-baseline={baseline}", *gate)
    assert status == 1, text[-3000:]
    missed = [line for line in gate_lines(text) if "missed" in line]
    assert len(missed) == 1 and "bfcl.simple_python fell 5.00 points" in missed[0], missed

    sampled = tmp_path / "sampled.json"
    status, text = run(tmp_path, "suites/bfcl", "-k", selection, "--toolbench-sample=0.1",
                       f"--toolbench-baseline={baseline}", *gate, f"--toolbench-json={sampled}")
    assert status == 0, text[-3000:]
    assert "Δ is the paired difference on the" in text
    result = json.loads(sampled.read_text())
    metrics = result["report"]["baseline"]["suites"]["bfcl"]["metrics"]
    deltas = {m["name"]: m["delta"] for m in metrics if m["delta"] is not None}
    assert deltas and all(abs(delta) < 1e-12 for delta in deltas.values()), deltas
    assert deltas.keys() >= {"simple_python", "simple_java", "multiple", "parallel", "irrelevance"}
