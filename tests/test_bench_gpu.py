"""benchmarks/bench_gpu.py end to end on the CPU engine with tiny sizes: the table and the JSON have every part
(single-turn plugin vs raw, multi-turn batched rounds vs the vllm-serve harness, replicas skipped on a CPU), the
two sides of each comparison saw the same requests. Timings are not checked (they belong to the benchmark)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from tiny_model import build_tiny_model  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # four CPU engines (two pytest runs, the raw baseline, vllm serve): minutes


def test_the_gpu_benchmark_runs_on_the_cpu_engine_and_prints_one_table(tmp_path, shared_data):
    pytest.importorskip("vllm")
    model = build_tiny_model(tmp_path / "tiny-qwen2", max_position_embeddings=32768)
    out = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_gpu.py"), f"--model={model}", f"--data={shared_data}",
         "--device=cpu", "--limit=1", "--mt-limit=1", "--mt-categories=multi_turn_base", "--max-tokens=4",
         "--dtype=float32", "--threads=4", f"--out={out}"],
        cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    figures = json.loads(out.read_text())

    assert figures["machine"]["device"] == "cpu" and figures["machine"]["vllm"]
    assert figures["model"]["architecture"] == "Qwen2ForCausalLM" and not figures["model"]["random_weights"]
    single = figures["single_turn"]
    assert single["same_prompts"], single
    assert single["plugin"]["requests"] == single["raw"]["requests"] == 13  # one case of each single-turn category
    assert single["plugin"]["output_tokens"] > 0 and single["raw"]["output_tokens"] > 0 and single["ratio"] > 0
    multi = figures["multi_turn"]
    assert multi["harness"]["conversations"] == 1 and multi["harness"]["threads"] == 4
    assert multi["plugin"]["requests"] >= 1 and multi["harness"]["requests"] >= 1 and multi["ratio"] > 0
    assert figures["replicas"] == {"skipped": "CPU device"}

    table = result.stdout[result.stdout.index("machine: CPU"):]
    assert "| (a) BFCL single-turn pre-generation, 13 requests |" in table
    assert "| (b) BFCL multi-turn, 1 conversations |" in table
    assert "| (c) replicas 2 vs 1 | skipped: CPU device |" in table
