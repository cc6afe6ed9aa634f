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

@pytest.mark.slow  # four CPU engines (two pytest runs, the raw baseline, vllm serve): minutes
def test_the_gpu_benchmark_runs_on_the_cpu_engine_and_prints_one_table(tmp_path, shared_data):
    pytest.importorskip("vllm")
    model = build_tiny_model(tmp_path / "tiny-qwen2", max_position_embeddings=32768)
    out = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_gpu.py"), f"--model={model}", f"--data={shared_data}",
         "--device=cpu", "--limit=1", "--mt-limit=1", "--mt-categories=multi_turn_base", "--max-tokens=4",
         "--dtype=float32", "--threads=4", "--repeats=1", f"--out={out}"],
        cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    figures = json.loads(out.read_text())

    assert figures["machine"]["device"] == "cpu" and figures["machine"]["vllm"]
    assert figures["model"]["architecture"] == "Qwen2ForCausalLM"
    assert not figures["model"]["random_weights"]  # the tiny model came with its weights
    single = figures["single_turn"]
    assert single["same_requests"], single
    assert single["plugin"]["requested"] == single["raw"]["requests"] == 14  # one case of each single-turn category (format_sensitivity too)
    assert single["plugin"]["output_tokens"] > 0 and single["raw"]["output_tokens"] > 0
    assert single["ratio"] > 0 and single["generate_call_ratio"] > 0 and single["wall_ratio"] > 0
    # raw ran on one engine in both orders, its clock including the tokenizing; every engine had the same budget
    assert set(single["raw"]["runs"]) == {"dataset order", "longest first"}
    assert single["raw"]["distinct_requests"] <= single["raw"]["requests"] == 14
    assert single["raw"]["compile_cache_before_start"] in ("warm", "cold")
    assert "max_num_batched_tokens" in figures["settings"]["engine_args"]
    multi = figures["multi_turn"]
    assert multi["harness"]["conversations"] == 1 and multi["harness"]["threads"] == 4
    assert multi["same_requests"], multi  # greedy: both sides drove the conversation through the same steps
    assert multi["harness"]["requests"] >= 1 and multi["ratio"] > 0
    # the engine-only limit: the plugin's requests replayed from its cache, round after round, once each
    replay = multi["engine_only"]
    assert replay["requests"] == multi["plugin"]["generated"] and replay["rounds"] == multi["plugin"]["rounds"]
    assert multi["engine_limit_ratio"] > 0
    assert figures["replicas"] == {"skipped": "CPU device"}

    table = result.stdout[result.stdout.index("machine: CPU"):]
    assert "| (a) BFCL single-turn pre-generation, 14 requests (" in table
    assert "| (b) BFCL multi-turn, 1 conversations, " in table
    assert "| (c) replicas 2 vs 1 | skipped: CPU device |" in table
    assert "| (a') identical requests | the plugin generated " in table
    assert "| (b') multi-turn vs the engine's own limit | " in table and "engine start-up, apart" in table


def _bench_module():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_gpu

    return bench_gpu


def test_a_folder_with_only_a_config_gets_random_weights_once_and_says_so(tmp_path):
    pytest.importorskip("torch")
    bench = _bench_module()
    model = build_tiny_model(tmp_path / "tiny-qwen2")
    for weights in model.glob("*.safetensors"):
        weights.unlink()
    assert bench.ensure_weights(model, "cpu") is True
    described = bench.describe_model(model)
    assert described["random_weights"] and described["parameters"] > 0 and described["layers"] == 2
    assert bench.ensure_weights(model, "cpu") is False  # weights there: left alone
    assert not (model / "generation_config.json").exists()


def test_the_stored_gpu_figures_reprint_as_the_readme_table(capsys):
    bench = _bench_module()
    bench.main(["--table-from", str(REPO / "benchmarks" / "results" / "gpu-h100-2026-11-26.json")])
    table = capsys.readouterr().out
    assert table.startswith("machine: NVIDIA H100 80GB HBM3 x1 (driver 580.159.04")
    assert "| (a) BFCL single-turn pre-generation, 3641 requests (6 identical ones generated once) |" in table
    assert "| 0.88x (generate call alone 1.02x) |" in table
    assert "| (b) BFCL multi-turn, 200 conversations, 736 requests |" in table and "| 1.26x |" in table
    assert "| (c) replicas 2 vs 1 | skipped: 1 GPU |" in table
