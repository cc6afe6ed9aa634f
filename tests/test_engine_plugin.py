"""The real vLLM engine driven through the plugin: one engine, one generation pass, cache reuse, resume after a
kill, and CPU-only xdist workers. Uses the tiny random-weight model (answers are wrong; mechanics are exercised).

Skipped when vllm cannot be imported (install it with scripts/setup-dev.sh).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, committed_generations

sys.path.insert(0, str(Path(__file__).parent))

# slow: each test starts a real vLLM engine (about 40 s to 150 s each on two CPU cores); run with -m slow
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed")]

# A -p plugin that records, per process, whether heavy engine modules were imported (workers must stay light).
IMPORT_PROBE = '''
import json, os, sys

def pytest_sessionfinish(session):
    config = session.config
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    heavy = sorted(m for m in ("vllm", "torch", "transformers") if m in sys.modules)
    with open(os.environ["IMPORT_PROBE_LOG"], "a") as handle:
        handle.write(json.dumps({"role": role, "heavy": heavy}) + "\\n")
'''


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

    apply_cpu_environment()
    try:
        from tiny_model import build_tiny_model
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"cannot build the tiny model: {exc}")
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2")


@pytest.fixture
def probe(tmp_path, monkeypatch) -> Path:
    (tmp_path / "import_probe.py").write_text(IMPORT_PROBE)
    log = tmp_path / "imports.log"
    monkeypatch.setenv("IMPORT_PROBE_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return log


def plugin_run(shared_data: Path, model: Path, tmp_path: Path, *extra: str, wait: bool = True,
               select: str = "bfcl and not multi_turn and not agentic", context: int = 4096):
    args = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-k", select, "-p", "import_probe",
            "-p", "no:cacheprovider", "-q", f"--model={model}", f"--toolbench-data={shared_data}",
            f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-json={tmp_path / 'run.json'}",
            "--toolbench-max-tokens", "24", "--toolbench-vllm-arg", "enforce_eager=true", "--toolbench-vllm-arg", "dtype=float32",
            "--toolbench-vllm-arg", f"max_model_len={context}", "--toolbench-vllm-arg",
            f"kv_cache_memory_bytes={(1 << 30) if context > 4096 else (256 << 20)}", *extra]
    if not wait:
        return subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def generation_stats(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "run.json").read_text())["header"]["generation"]


def test_one_engine_generates_once_and_workers_only_score(shared_data, tiny_model, tmp_path, probe):
    first = plugin_run(shared_data, tiny_model, tmp_path, "--toolbench-limit", "5", "-n", "2")
    assert "pre-generating answers for 70 cases" in first.stdout, first.stdout[-3000:]
    stats = generation_stats(tmp_path)
    assert (stats["generated"], stats["cached"]) == (70, 0)
    # how long and how fast: the engine's start-up apart from generation, tokens per second of what was generated
    assert stats["requests"] == 70 and stats["engine_startup_s"] > 0 and stats["generation_s"] > 0
    assert stats["output_tokens_per_s"] == pytest.approx(stats["output_tokens"] / stats["generation_s"], rel=0.01)
    assert "toolbench: engine started in " in first.stdout
    assert "toolbench: generating: 70/70 requests (100%), prompt " in first.stdout
    document = json.loads((tmp_path / "run.json").read_text())
    assert len(document["cases"]) == 70 and document["suites"]["bfcl"]["total"] == 70
    assert document["header"]["fingerprint"]["backend"] == "vllm"
    roles = [json.loads(line) for line in probe.read_text().splitlines()]
    assert {r["role"] for r in roles} == {"controller", "gw0", "gw1"}
    assert all(r["heavy"] == [] for r in roles if r["role"] != "controller"), roles

    second = plugin_run(shared_data, tiny_model, tmp_path, "--toolbench-limit", "5", "-n", "2")
    assert "70 from cache" in second.stdout or generation_stats(tmp_path)["cached"] == 70
    stats = generation_stats(tmp_path)
    assert (stats["generated"], stats["cached"]) == (0, 70)
    assert stats["engine_startup_s"] is None and "engine started" not in second.stdout  # nothing to generate
    assert json.loads((tmp_path / "run.json").read_text())["suites"] == document["suites"]


def test_a_run_killed_during_generation_resumes_with_only_the_missing_requests(shared_data, tiny_model, tmp_path,
                                                                                probe):
    running = plugin_run(shared_data, tiny_model, tmp_path, "--toolbench-limit", "3", "--toolbench-commit-every",
                         "4", "--toolbench-max-tokens", "200", wait=False)
    deadline = time.monotonic() + 300
    while committed_generations(tmp_path / "cache") < 4 and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(running.pid, signal.SIGKILL)
    running.wait()
    committed = committed_generations(tmp_path / "cache")
    assert 4 <= committed < 42, f"kill came too late or too early ({committed} committed)"

    plugin_run(shared_data, tiny_model, tmp_path, "--toolbench-limit", "3", "--toolbench-max-tokens", "200")
    stats = generation_stats(tmp_path)
    assert stats["cached"] == committed
    assert stats["generated"] == 42 - committed


def test_bfcl_native_mode_on_the_engine_scores_through_the_fc_path(shared_data, tiny_model, tmp_path, probe):
    run = plugin_run(shared_data, tiny_model, tmp_path, "--toolbench-limit", "2", "--toolbench-mode", "native",
                     select="bfcl and (simple_python or live_irrelevance or parallel)")
    document = json.loads((tmp_path / "run.json").read_text())
    assert document["cases"], run.stdout[-2000:]
    assert {case["labels"].get("mode") for case in document["cases"]} == {"fc"}, run.stdout[-2000:]


@pytest.fixture(scope="module")
def tiny_long_model(tmp_path_factory) -> Path:
    """The tiny model with a 32k context: BFCL's multi-turn system prompts (every involved class's docs) need it."""
    from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

    apply_cpu_environment()
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2-32k", max_position_embeddings=32768)


MULTI_TURN = "bfcl and multi_turn"


def test_bfcl_multi_turn_runs_without_rounds_and_a_rerun_in_rounds_generates_nothing(shared_data, tiny_long_model,
                                                                                     tmp_path, probe):
    first = plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-limit", "1", "-n", "2",
                       select=MULTI_TURN, context=32768)
    assert "toolbench: conversations: 4 ran without rounds" in first.stdout, first.stdout[-3000:]
    stats = generation_stats(tmp_path)
    assert stats["rounds"] >= 2 and stats["generated"] > 0
    document = json.loads((tmp_path / "run.json").read_text())
    assert document["suites"]["bfcl"]["total"] == 4
    transcripts = [json.loads(case["output"]) for case in document["cases"]]
    assert all(t["mode"] == "prompting" and t["result"] for t in transcripts)
    roles = [json.loads(line) for line in probe.read_text().splitlines()]
    assert all(r["heavy"] == [] for r in roles if r["role"] != "controller"), roles

    # step-synchronous rounds over the same cache make exactly the requests the engine answered without rounds
    # (greedy: same answers, so same transcripts and verdicts)
    second = plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-limit", "1", "-n", "2",
                        "--toolbench-conversations=rounds", select=MULTI_TURN, context=32768)
    assert "toolbench: round 1: 4 requests from 4 conversations" in second.stdout, second.stdout[-3000:]
    assert generation_stats(tmp_path)["generated"] == 0
    assert generation_stats(tmp_path)["rounds"] == stats["rounds"]
    rerun = json.loads((tmp_path / "run.json").read_text())
    assert rerun["suites"] == document["suites"]
    assert sorted((c["case_id"], c["output"], c["passed"]) for c in rerun["cases"]) == \
        sorted((c["case_id"], c["output"], c["passed"]) for c in document["cases"])


def test_bfcl_multi_turn_killed_mid_run_resumes_without_regenerating_committed_rounds(shared_data, tiny_long_model,
                                                                                       tmp_path, probe):
    running = plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-limit", "1", "--toolbench-commit-every",
                         "1", select=MULTI_TURN, context=32768, wait=False)
    deadline = time.monotonic() + 300
    while committed_generations(tmp_path / "cache") < 6 and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(running.pid, signal.SIGKILL)
    running.wait()
    committed = committed_generations(tmp_path / "cache")
    assert committed >= 6, f"the kill came too early ({committed} committed)"

    plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-limit", "1", select=MULTI_TURN, context=32768)
    stats = generation_stats(tmp_path)
    total = stats["cached"] + stats["generated"]
    # every committed step is reused (identical requests of two conversations count once per conversation), so
    # at most the steps that were not committed are generated again
    assert stats["cached"] >= committed and stats["generated"] <= total - committed and stats["generated"] > 0


def test_acebench_agent_cases_run_in_batched_rounds_on_the_engine(shared_data, tiny_model, tmp_path, probe):
    """Multi-step and multi-turn agent cases: rounds across live conversations, sandbox executed, step limits hit
    (random weights never say "finish conversation"), the engine's own model playing the user, flagged."""
    args = [sys.executable, "-m", "pytest", str(REPO / "suites" / "acebench"), "-p", "no:cacheprovider", "-q",
            "-k", "agent", "--toolbench-limit", "2", f"--model={tiny_model}", f"--toolbench-data={shared_data}",
            f"--toolbench-cache={tmp_path / 'cache'}", f"--toolbench-json={tmp_path / 'run.json'}",
            "--toolbench-max-tokens", "16", "--toolbench-vllm-arg", "enforce_eager=true", "--toolbench-vllm-arg", "dtype=float32",
            "--toolbench-vllm-arg", "max_model_len=4096", "--toolbench-vllm-arg", f"kv_cache_memory_bytes={256 << 20}", "-n", "2"]
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    document = json.loads((tmp_path / "run.json").read_text())
    stats = document["header"]["generation"]
    assert stats["rounds"] > 1, result.stdout[-2000:]
    assert "NOT comparable" in document["header"]["user_simulator"]
    cases = {c["case_id"]: c for c in document["cases"]}
    assert {c["category"] for c in cases.values()} == {"agent_multi_step", "agent_multi_turn"}
    transcripts = [json.loads(case["output"]) for case in cases.values()]
    assert len(cases) == 4  # --toolbench-limit 2 per category (categories span both languages)
    assert all(t["dialogue"] and t["stopped_by"] in ("limit", "finish") for t in transcripts)
    assert any(t["stopped_by"] == "limit" for t in transcripts)  # random weights run into the step limit
    rerun = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert json.loads((tmp_path / "run.json").read_text())["header"]["generation"]["generated"] == 0, \
        rerun.stdout[-2000:]


def test_a_replay_run_imports_no_engine_even_with_vllm_installed(shared_data, tmp_path, probe):
    folder = tmp_path / "result"
    folder.mkdir()
    (folder / "BFCL_v4_simple_python_result.json").write_text(
        json.dumps({"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]"}) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "suites" / "bfcl"), "-p", "import_probe", "-p", "no:cacheprovider",
         "-q", f"--toolbench-data={shared_data}", f"--toolbench-replay={folder}", "-k", "simple_python_0",
         "-n", "2"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "1 passed" in result.stdout, result.stdout[-2000:]
    roles = [json.loads(line) for line in probe.read_text().splitlines()]
    assert len(roles) == 3 and all(r["heavy"] == [] for r in roles), roles
