#!/usr/bin/env bash
# The library sweep in one command: install its libraries into .venv beside torch 2.13 (once),
# run bench/library_sweep.py (extra arguments go to it: --quick, --libraries kornia, ...), rerun
# FAILURES.md's reproductions with ours, and copy the pass counts into README.md. Prints its
# wall time last. The whole sweep (436 exports) takes about 25 minutes on 2 idle cores, an hour
# on a loaded machine; --quick (46) 2-5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
py=.venv/bin/python
constraints=bench/library_sweep_constraints.txt
if ! "$py" -c 'import sys; sys.path.insert(0, "bench"); from importlib import metadata; from library_cases import LIBRARIES; [metadata.version(d) for d in LIBRARIES.values()]' >/dev/null 2>&1; then
  "$py" -m pip install -q -c "$constraints" -e ".[bench]"
  # their wheels pin other torch releases: without their dependencies (the sweep imports
  # torchvision through tests/torchvision_shim.py and torchaudio without its compiled extension)
  "$py" -m pip install -q --no-deps -c "$constraints" torchvision torchaudio
fi
start=$SECONDS
"$py" bench/library_sweep.py "$@"
"$py" bench/library_sweep.py --repros
"$py" tools/update_readme.py
echo "library sweep wall time: $((SECONDS - start)) s"
