#!/usr/bin/env bash
# Create (or reuse) .venv with torch 2.13.0 (CPU build), the package and its test extra.
# Sourced by the README's two commands; prints nothing when everything is already installed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EXPORTER_VENV:-$here/.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
if ! "$py" -c "import torch, onnx, onnxscript, onnxruntime, beartype, pytest, hypothesis, exporter" >/dev/null 2>&1 \
    || [ ! -x "$venv/bin/ruff" ]; then
  "$py" -m pip install -q --upgrade pip >/dev/null
  # torch first and pinned: a plain 'torch' requirement would pull a multi-GB CUDA build.
  "$py" -m pip install -q "torch==2.13.0"
  "$py" -m pip install -q -e "$here[test]"
fi
