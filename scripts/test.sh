#!/usr/bin/env bash
# The whole test suite: set up .venv if needed, lint with ruff, then pytest (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
.venv/bin/ruff check exporter tests bench tools
.venv/bin/ruff format --check exporter tests bench tools
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
