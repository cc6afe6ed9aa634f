"""The real generation path, end to end, on every suite: the in-process vLLM engine (tiny random-weight Qwen2 on the
CPU) answers ``--toolbench-limit`` cases of each category of each shipped suite, conversations included; every
selected case must reach a verdict of its scorer, a rerun must generate nothing and score the same, and the run
header must say how long generation took and how fast it ran.

Slow (minutes on two cores): marked ``slow``, run by CI after the default test command (docs/development.md).
Skipped when vllm cannot be imported.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed")]

#: Verdicts that mean the generation half lost a case (the scorer never judged the model's answer).
LOST = {"not_run", "missing_output", "scorer_error"}

#: What a CI user reads off the header to know how long generation took and how fast it ran.
THROUGHPUT_FIGURES = ("requests", "prompt_tokens", "output_tokens", "prompt_tokens_per_s", "output_tokens_per_s",
                      "generation_s", "engine_startup_s")


@pytest.fixture(scope="module")
def tiny_long_model(tmp_path_factory) -> Path:
    """32k context: BFCL's multi-turn system prompts carry every involved class's documentation."""
    from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

    apply_cpu_environment()
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2-32k", max_position_embeddings=32768)


def run_every_suite(shared_data: Path, model: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "run.json"
    args = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-p", "no:cacheprovider", "-q",
            "--toolbench-limit=1", f"--model={model}", f"--toolbench-data={shared_data}",
            f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-json={report}",
            "--toolbench-max-tokens=16", "--toolbench-vllm-arg=enforce_eager=true",
            "--toolbench-vllm-arg=dtype=float32", "--toolbench-vllm-arg=max_model_len=32768",
            f"--toolbench-vllm-arg=kv_cache_memory_bytes={1 << 30}", "-n", "2"]
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert report.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    return result, json.loads(report.read_text())


def test_every_suite_gets_a_verdict_on_every_case_and_a_rerun_generates_nothing(shared_data, tiny_long_model,
                                                                                  tmp_path):
    first, document = run_every_suite(shared_data, tiny_long_model, tmp_path)
    output = first.stdout[-4000:]
    assert first.returncode == 0, output

    cases = document["cases"]
    suites_run = {case["suite"] for case in cases}
    shipped = {path.parent.name for path in (REPO / "suites").glob("*/suite.yaml")}
    assert suites_run == shipped, (sorted(shipped - suites_run), output)
    lost = [(case["suite"], case["case_id"], case["error_type"]) for case in cases if case["error_type"] in LOST]
    assert not lost, lost[:20]
    assert not document.get("report", {}).get("not_run")

    generation = document["header"]["generation"]
    for figure in THROUGHPUT_FIGURES:
        assert figure in generation, (figure, generation)
    assert generation["generated"] > 0 and generation["output_tokens"] > 0
    assert generation["output_tokens_per_s"] > 0 and generation["generation_s"] > 0
    assert generation["engine_startup_s"] is not None and generation["engine_startup_s"] > 0
    assert generation["rounds"] >= 2  # the conversations (BFCL multi-turn, ACEBench agent) ran in rounds
    assert "generated tok/s" in first.stdout, output  # the terminal's run header shows the speed too

    second, again = run_every_suite(shared_data, tiny_long_model, tmp_path)
    assert second.returncode == 0, second.stdout[-4000:]
    assert again["header"]["generation"]["generated"] == 0
    assert again["header"]["generation"]["cached"] == generation["generated"] + generation["cached"]
    assert again["suites"] == document["suites"]
    assert [(c["suite"], c["case_id"], c["passed"], c["error_type"]) for c in again["cases"]] == \
           [(c["suite"], c["case_id"], c["passed"], c["error_type"]) for c in cases]
