#!/usr/bin/env bash
# The main job: set up .venv if needed, export the bundled example model, verify it in onnxruntime.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python -m exporter.demo "$@"
