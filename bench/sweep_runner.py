"""Plumbing shared by the breadth sweeps (zoo_sweep.py, torchvision_sweep.py): one worker
subprocess per case, the commit measured, and results files rewritten atomically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARK = "@@SWEEP-RESULT@@"  # the worker prints its result as one JSON line after this mark


def run_worker(script: str, worker_args: list[str], timeout: float) -> dict[str, Any]:
    """Run ``script --worker *worker_args`` in a fresh interpreter; its result, or a timeout or
    crash status with the last line it wrote."""
    t0 = time.perf_counter()
    cmd = [sys.executable, str(Path(script).resolve()), "--worker", *worker_args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"timeout after {timeout:g} s"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            res = json.loads(line[len(MARK) :])
            res["seconds"] = round(time.perf_counter() - t0, 1)
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"status": "crash", "error": f"exit {proc.returncode}: {tail[0][:300]}"}


def commit() -> str:
    """The commit our exporter was measured at ("+dirty" when exporter/ has uncommitted edits)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
        dirty = subprocess.run(["git", "status", "--porcelain", "exporter"], capture_output=True, text=True, cwd=ROOT)
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {"results": {}}


def save(data: dict[str, Any], path: Path, render: Callable[[dict[str, Any]], str]) -> None:
    """Rewrite the JSON and the markdown next to it (each by a rename: a reader never sees half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, text in (
        (path, json.dumps(data, indent=1, sort_keys=True) + "\n"),
        (path.with_suffix(".md"), render(data)),
    ):
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, target)
