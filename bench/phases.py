"""Our export's time per phase, wall and CPU, for exporter/ at several git revisions; and the
sha256 of every file written, to check that a change leaves the bytes alone.

  python bench/phases.py --models encoder12,bert --revs HEAD~3,HEAD          # before / after
  python bench/phases.py --models encoder12 --revs HEAD --rounds 5
  python bench/phases.py --hashes --revs HEAD~3,HEAD                         # every zoo model
  python bench/phases.py --hashes --variants 18,18d,13,9 --revs HEAD~3,WORKTREE

Each (revision, model) runs in a fresh subprocess that builds the model and exports it
1 + --reps times (the warm-up is not counted); revisions are interleaved round by round, so
load on a shared machine falls on all of them. The table gives medians of the pooled timed
exports: wall seconds per phase (``report=True``) and CPU seconds per phase (user + system of
all the process's threads, ``time.process_time``: the figure to trust on a loaded machine,
where wall times mostly measure the wait for a core). ``WORKTREE`` is exporter/ as it is in
the working tree; other revisions are extracted read-only with ``git archive``.

--hashes exports each model once per variant (opset, ``d`` = dynamic batch axis) and prints
the files' sha256 per revision, then the variants where revisions differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_CHILD = r"""
import contextlib, hashlib, json, os, shutil, sys, tempfile, time, warnings
root, mode, reps, variants = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
models = sys.argv[5].split(",")
sys.path.insert(0, root)
sys.path.insert(0, HERE)
warnings.filterwarnings("ignore")
import torch
import exporter
from exporter import report
from zoo import ZOO

cpu = {}
timed = report.PhaseTimer.phase

@contextlib.contextmanager
def phase(self, name):
    start = time.process_time()
    with timed(self, name):
        yield
    cpu[name] = cpu.get(name, 0.0) + time.process_time() - start

report.PhaseTimer.phase = phase
out = {}
scratch = tempfile.mkdtemp(prefix="bench-phases-")
for name in models:
    model, args, input_names, axes = ZOO[name].build()
    for variant in variants:
        opset, dynamic = int(variant.rstrip("d")), variant.endswith("d")
        records = []
        for i in range(1 + (reps if mode == "time" else 0)):
            path = os.path.join(scratch, f"{name}-{variant}-{i}", "model.onnx")
            os.makedirs(os.path.dirname(path))
            cpu.clear()
            start_cpu, start = time.process_time(), time.perf_counter()
            try:
                result = exporter.export(model, args, path, opset_version=opset, input_names=input_names,
                                         dynamic_axes=axes if dynamic else None, report=True)
            except Exception as error:
                out[f"{name}@{variant}"] = f"error: {type(error).__name__}: {str(error)[:100]}"
                break
            record = {"wall": time.perf_counter() - start, "cpu": time.process_time() - start_cpu}
            record.update({f"wall {k}": v for k, v in result.phase_seconds.items()})
            record.update({f"cpu {k}": v for k, v in cpu.items()})
            if mode == "hash":
                with open(path, "rb") as f:
                    out[f"{name}@{variant}"] = hashlib.sha256(f.read()).hexdigest()[:16]
            elif i:
                records.append(record)
            shutil.rmtree(os.path.dirname(path))
        if mode == "time":
            out[f"{name}@{variant}"] = records
shutil.rmtree(scratch)
print("@@" + json.dumps(out))
""".replace("HERE", repr(str(HERE)))


def _extract(rev: str) -> str:
    if rev == "WORKTREE":
        return str(ROOT)
    target = Path(tempfile.mkdtemp(prefix=f"bench-phases-{rev.replace('/', '_')}-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "exporter"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return str(target)


def _run(root: str, mode: str, reps: int, variants: list[str], models: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, root, mode, str(reps), ",".join(variants), ",".join(models)],
        capture_output=True,
        text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    if not lines:
        raise RuntimeError(f"the export subprocess failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][2:])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=None, help="comma-separated zoo models (default: all but 'large')")
    p.add_argument("--revs", default="HEAD", help="comma-separated git revisions, or WORKTREE")
    p.add_argument("--rounds", type=int, default=2, help="subprocesses per (revision, model), interleaved")
    p.add_argument("--reps", type=int, default=3, help="timed exports per subprocess, after one warm-up")
    p.add_argument("--variants", default="18", help="comma-separated opsets, 'd' suffix for a dynamic batch axis")
    p.add_argument("--hashes", action="store_true", help="print the sha256 of each exported file instead")
    opts = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from zoo import ZOO

    models = opts.models.split(",") if opts.models else [n for n, e in ZOO.items() if not e.large]
    revs = opts.revs.split(",")
    variants = opts.variants.split(",")
    roots = {rev: _extract(rev) for rev in revs}
    try:
        if opts.hashes:
            found = {rev: _run(roots[rev], "hash", 0, variants, models) for rev in revs}
            keys = list(found[revs[0]])
            for key in keys:
                print(f"{key:28} " + "  ".join(f"{found[rev].get(key, '-'):16}" for rev in revs))
            differing = [key for key in keys if len({found[rev].get(key) for rev in revs}) > 1]
            print(f"{len(keys)} exports; differing between revisions: {differing or 'none'}")
            return 1 if differing else 0
        pooled: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for _ in range(opts.rounds):
            for model in models:
                for rev in revs:
                    for key, records in _run(roots[rev], "time", opts.reps, variants, [model]).items():
                        for record in records if isinstance(records, list) else []:
                            for name, seconds in record.items():
                                pooled[key][rev][name].append(seconds)
        for key, by_rev in pooled.items():
            print(f"{key} (medians of {opts.rounds} x {opts.reps} exports, seconds)")
            names = list(next(iter(by_rev.values())))
            print("  " + f"{'revision':14}" + "".join(f"{n:>15}" for n in names))
            for rev, values in by_rev.items():
                print("  " + f"{rev:14}" + "".join(f"{statistics.median(values[n]):15.3f}" for n in names))
        return 0
    finally:
        for rev, root in roots.items():
            if rev != "WORKTREE":
                shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
