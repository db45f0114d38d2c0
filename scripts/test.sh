#!/usr/bin/env bash
# The whole test suite: set up .venv if needed, lint with ruff, then pytest (extra arguments go to pytest).
# Prints the 15 slowest tests and, last, the suite's wall time (ruff and pytest), however quiet pytest is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
start=$SECONDS
.venv/bin/ruff check exporter tests bench tools
.venv/bin/ruff format --check exporter tests bench tools
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 "$@" || status=$?
echo "test suite wall time: $((SECONDS - start)) s"
exit $status
