"""One command that prepares everything ``bench_gpu.py`` needs on a GPU machine without network:

    python benchmarks/make_gpu_kit.py .gpu-kit --model=/work/models/qwen-0.5b --data=../shared/data

The kit (about 30 MB; ``.gpu-kit/`` is ignored by git):

* ``wheels/``: this checkout's wheel (``pip wheel --no-deps``) and the plugin's own pure dependencies, downloaded
  for Python 3.10-3.12 on manylinux x86_64 (vLLM, torch and transformers are the machine's own: they are far too
  large to carry and must match its CUDA);
* ``repo/``: this checkout's tracked files at HEAD (``git archive``; ``bench_gpu.py`` runs from there);
* ``model-0.5b/``: the model's config, tokenizer and chat template, no weights (``bench_gpu.py`` writes random ones,
  seed 0); ``model-8b/``: the same tokenizer under Qwen2.5-7B's architecture (7.6B parameters, random weights), the
  8B-class variant;
* ``data/bfcl/``: the BFCL data the runs read;
* ``run.sh``: installs the wheels offline, runs the 0.5B benchmark, then the 8B one when ``KIT_8B=1`` and at least
  ``KIT_8B_MIN_S`` seconds of ``KIT_BUDGET_S`` remain; every figure goes to ``results/`` as JSON and a table;
* ``kit.json``: the commit, date and what was packed.

Sizes are chosen to fit 10 minutes on one H100 (engine start-ups included): all 3,641 single-turn requests and 50
conversations of each multi-turn category at 128 output tokens, as in the 2026-11-26 run, with 2 raw repeats.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
               "merges.txt", "chat_template.jinja", "added_tokens.json")
DEPENDENCIES = ("pytest>=8.0", "pytest-xdist>=3.5,<4", "pytest-html>=4.1,<5", "jsonschema>=4.18", "pyyaml>=6.0",
                "mpmath==1.3.0")
#: Qwen2.5-7B-Instruct's architecture (config.json of the published checkpoint), for random weights.
QWEN_7B = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
           "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "vocab_size": 152064,
           "tie_word_embeddings": False, "hidden_act": "silu", "torch_dtype": "bfloat16", "use_sliding_window": False,
           "bos_token_id": 151643, "eos_token_id": 151645}

RUN_SH = r"""#!/usr/bin/env bash
# Runs the GPU benchmark offline from this kit (see kit.json); results/ gets the JSON and the printed tables.
set -uo pipefail
kit="$(cd "$(dirname "$0")" && pwd)"; cd "$kit"
budget=${KIT_BUDGET_S:-570}; start=$(date +%s); mkdir -p results
python -m pip install -q --no-index --find-links wheels --no-deps wheels/pytest_toolbench-*.whl
for dep in pytest pytest-xdist pytest-html jsonschema pyyaml mpmath; do
  python -c "import importlib.metadata as m; m.version('$dep')" 2>/dev/null \
    || python -m pip install -q --no-index --find-links wheels "$dep" || echo "could not install $dep"
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee results/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
timeout "$(left)" python repo/benchmarks/bench_gpu.py --model="$kit/model-0.5b" --data="$kit/data" \
  --repeats=2 --mt-limit=50 --work="$kit/results/work-0.5b" --out="$kit/results/gpu-0.5b.json" \
  2>&1 | tee results/gpu-0.5b.log
if [ "${KIT_8B:-0}" = 1 ] && [ "$(left)" -gt "${KIT_8B_MIN_S:-300}" ]; then
  timeout "$(left)" python repo/benchmarks/bench_gpu.py --model="$kit/model-8b" --data="$kit/data" --repeats=1 \
    --limit=50 --mt-limit=10 --work="$kit/results/work-8b" --out="$kit/results/gpu-8b.json" \
    2>&1 | tee results/gpu-8b.log
fi
echo "kit finished in $(( $(date +%s) - start )) s"
"""


def run(command: list[str], **kwargs) -> None:
    print("+ " + " ".join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the kit's folder (made; emptied first)")
    parser.add_argument("--model", required=True, help="a model folder with config and tokenizer (Qwen2.5 family)")
    parser.add_argument("--data", required=True, help="the toolbench data root (its bfcl/ is packed)")
    parser.add_argument("--no-download", action="store_true", help="pack no dependency wheels (only the plugin's)")
    args = parser.parse_args(argv)
    out, model, data = Path(args.out).resolve(), Path(args.model).resolve(), Path(args.data).resolve()
    if out.exists():
        shutil.rmtree(out)
    (out / "wheels").mkdir(parents=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip())
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out / "wheels"),
         str(REPO)])
    if not args.no_download:
        for version in ("3.10", "3.11", "3.12"):
            run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--platform",
                 "manylinux2014_x86_64", "--python-version", version, "-d", str(out / "wheels"), *DEPENDENCIES])
    archive = out / "repo.tar"
    run(["git", "archive", "--format=tar", "-o", str(archive), "HEAD"], cwd=REPO)
    with tarfile.open(archive) as tar:
        tar.extractall(out / "repo", filter="data")
    archive.unlink()
    for folder in ("model-0.5b", "model-8b"):
        (out / folder).mkdir()
        for name in MODEL_FILES:
            if (model / name).is_file():
                shutil.copy2(model / name, out / folder / name)
    config = json.loads((model / "config.json").read_text())
    config.pop("quantization_config", None)
    (out / "model-0.5b" / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (out / "model-8b" / "config.json").write_text(json.dumps(QWEN_7B, indent=2) + "\n")
    shutil.copytree(data / "bfcl", out / "data" / "bfcl")
    (out / "run.sh").write_text(RUN_SH)
    (out / "run.sh").chmod(0o755)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    facts = {"commit": commit, "uncommitted_changes": dirty,
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "model_from": str(model), "data_from": str(data / "bfcl"), "bytes": size,
             "wheels": sorted(p.name for p in (out / "wheels").iterdir())}
    (out / "kit.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(f"kit ready: {out} ({size / 1e6:.1f} MB); on the GPU machine: bash {out.name}/run.sh")
    return out


if __name__ == "__main__":
    main()
