"""Plumbing shared by the breadth sweeps (zoo_sweep.py, torchvision_sweep.py, timm_sweep.py,
library_sweep.py): their command line, one worker subprocess per case, the commit measured,
results files rewritten atomically, and the comparison of onnxruntime's outputs with eager torch."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARK = "@@SWEEP-RESULT@@"  # the worker prints its result as one JSON line after this mark
PHASE = "@@SWEEP-PHASE@@"  # a worker may announce each phase, so a timeout says where it hung


def arguments(
    doc: str | None,
    results: Path,
    exporters: Sequence[str],
    modes: Sequence[str] | None = None,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """The sweeps' common options (``--modes`` where a sweep has modes); ``--worker`` takes
    (model, mode, exporter), or (model, exporter) without modes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="comma-separated model names (default: all)")
    if modes is not None:
        ap.add_argument("--modes", default=",".join(modes))
    ap.add_argument("--exporters", default=",".join(exporters))
    ap.add_argument("--jobs", type=int, default=2, help="subprocesses at once")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--render", action="store_true", help="rewrite the markdown from the JSON")
    ap.add_argument("--results", type=Path, default=results, help="the JSON to merge into (markdown beside it)")
    if extra is not None:
        extra(ap)
    worker = ("MODEL", "MODE", "EXPORTER") if modes is not None else ("MODEL", "EXPORTER")
    ap.add_argument("--worker", nargs=len(worker), metavar=worker, help=argparse.SUPPRESS)
    return ap.parse_args()


def selected(models: str | None, known: Iterable[str]) -> list[str]:
    """The models ``--models`` names (all by default); exits naming any unknown one."""
    known = list(known)
    names = models.split(",") if models else known
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"unknown models: {unknown} (see --list)")
    return names


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(exc: BaseException, *, cause: bool = False) -> str:
    """``Type: first line`` of the error; with ``cause``, also of its innermost cause (torch's
    exporters wrap the real error in a generic one, "Failed to convert the exported program")."""
    text = ANSI.sub("", f"{type(exc).__name__}: {exc}").strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    line = (lines[0] if lines else type(exc).__name__)[:400]
    root = exc
    while cause and root.__cause__ is not None:
        root = root.__cause__
    if root is not exc:
        line += " <- " + first_line(root)
    return line


def export_with(exporter: str, model: Any, args: tuple[Any, ...], path: str, **options: Any) -> None:
    """Export with ``ours`` (this checkout's package), ``torchscript`` or ``dynamo``."""
    import torch

    if exporter == "ours":
        sys.path.insert(0, str(ROOT))
        import exporter as ours

        ours.export(model, args, path, **options)
    else:
        torch.onnx.export(model, args, path, dynamo=exporter == "dynamo", **options)


def unoptimized_session(path: str) -> Any:
    """An onnxruntime CPU session with graph optimizations off: it runs the exported semantics,
    not fused kernels that differ between CPUs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def run_worker(script: str, worker_args: list[str], timeout: float) -> dict[str, Any]:
    """Run ``script --worker *worker_args`` in a fresh interpreter; its result, or a timeout or
    crash status with the last line it wrote."""
    t0 = time.perf_counter()
    cmd = [sys.executable, str(Path(script).resolve()), "--worker", *worker_args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        phases = [line[len(PHASE) :].strip() for line in out.splitlines() if line.startswith(PHASE)]
        during = f" during {phases[-1]}" if phases else ""
        return {"status": "timeout", "error": f"timeout after {timeout:g} s{during}"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            res = json.loads(line[len(MARK) :])
            res["seconds"] = round(time.perf_counter() - t0, 1)
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"status": "crash", "error": f"exit {proc.returncode}: {tail[0][:300]}"}


def run_all(
    run: Callable[..., dict[str, Any]], jobs: Sequence[tuple[str, ...]], workers: int
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """``run(*job)`` for every job, ``workers`` at once (each is a subprocess: threads suffice);
    (job, result) in the order they finish, so the caller can save after each."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(run, *job): job for job in jobs}
        for fut in concurrent.futures.as_completed(futures):
            yield futures[fut], fut.result()


def record_all(
    data: dict[str, Any],
    run: Callable[..., dict[str, Any]],
    jobs: Sequence[tuple[str, ...]],
    workers: int,
    save: Callable[[dict[str, Any]], None],
) -> float:
    """Run every job, ``(model, exporter)`` or ``(model, mode, exporter)``, with ``run_all`` and
    merge its result into ``data["results"][model]`` under ``exporter`` or ``mode/exporter``: ours'
    rows name the commit measured, ``save(data)`` runs after each (an interrupted sweep keeps what
    it measured) and one line per run shows progress. Returns the wall time in seconds."""
    measured = commit()
    t0 = time.perf_counter()
    for job, res in run_all(run, jobs, workers):
        name, exporter = job[0], job[-1]
        if exporter == "ours":
            res["commit"] = measured
        data["results"].setdefault(name, {})["/".join(job[1:])] = res
        save(data)
        labels = " ".join(f"{label:12s}" for label in job[1:])
        print(
            f"[{time.perf_counter() - t0:6.0f}s] {name:44s} {labels} {res['status']:9s} {res.get('error', '')[:140]}",
            flush=True,
        )
    save(data)
    return time.perf_counter() - t0


def phase(name: str) -> None:
    """Announce (in a worker) the phase that starts: a timeout names the last one announced."""
    print(PHASE + name, flush=True)


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


def import_torchvision() -> Any:
    """``import torchvision`` through tests/torchvision_shim.py, which defines its compiled ops in
    plain torch where the wheel's cannot load (a CUDA build beside a CPU torch)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import torchvision_shim

    return torchvision_shim.import_torchvision()


def calibrate_norms(model: Any, args: tuple[Any, ...]) -> None:
    """Random weights with identity batch-norm statistics (running mean 0, variance 1, as
    torchvision's detection backbones' FrozenBatchNorm2d start) let activations vanish (a
    mobilenet FPN's features are ~1e-8): every box then has the same features and score, and
    the outputs are ties in arbitrary order. One eager pass sets each norm's statistics to
    those of its input, so every layer sees unit-scale activations, as with trained weights. The
    pass runs on a batch of four images, so a norm after a 1x1 feature map sees a spread."""
    import torch

    def set_stats(module: Any, inputs: tuple[Any, ...]) -> None:
        x = inputs[0]
        dims = [d for d in range(x.dim()) if d != 1]
        module.running_mean.copy_(x.mean(dims))
        module.running_var.copy_(x.var(dims, unbiased=False).clamp(min=0.1))

    hooks = [
        m.register_forward_pre_hook(set_stats)
        for m in model.modules()
        if isinstance(getattr(m, "running_mean", None), torch.Tensor)
        and isinstance(getattr(m, "running_var", None), torch.Tensor)
    ]
    with torch.no_grad():
        model(*args)
    for hook in hooks:
        hook.remove()


def flat_tensors(obj: Any) -> list[Any]:
    """Tensors of a nested output (dicts by value order, lists, tuples), in order."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in flat_tensors(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in flat_tensors(v)]
    return []


def compare_outputs(ref: list[Any], outs: list[Any]) -> tuple[str, str, float]:
    """(status, error, worst difference) of onnxruntime's outputs against eager torch's: count,
    then shape, then values (integers and booleans exactly, floats within 1e-3 (1 + max |ref|),
    NaN where eager has NaN)."""
    import numpy as np

    if len(outs) != len(ref):
        return "mismatch", f"{len(outs)} outputs, eager has {len(ref)}", float("inf")
    worst = 0.0
    for index, (r, o) in enumerate(zip(ref, outs)):
        r = r.detach().numpy()
        if r.shape != o.shape:
            return "mismatch", f"output {index}: shape {o.shape} != eager {r.shape}", float("inf")
        if r.size == 0:
            continue
        if r.dtype == np.bool_ or np.issubdtype(r.dtype, np.integer):
            diff = float((r != o).sum())
        else:
            ref64 = r.astype(np.float64)
            diff = float(np.max(np.abs(ref64 - o.astype(np.float64))) / (1.0 + np.max(np.abs(ref64))))
            if np.isnan(r).any() != np.isnan(o).any():
                diff = float("inf")
        worst = max(worst, diff)
    if worst > 1e-3:
        return "mismatch", f"max |diff| / (1 + max |ref|) = {worst:.3g}", worst
    return "pass", "", worst


def export_and_compare(
    exporter: str,
    model: Any,
    args: tuple[Any, ...],
    runs: list[tuple[str, tuple[Any, ...], list[Any]]],
    options: dict[str, Any],
) -> dict[str, Any]:
    """Export ``model`` with ``exporter``, check the file with ``onnx.checker`` (full_check), and run
    it in onnxruntime on each ``(label, inputs, eager outputs)`` of ``runs``: the result's
    ``status`` is ``pass``, ``export``, ``invalid``, ``ort`` or ``mismatch``, with the error's first
    line in ``error`` and its whole text in ``message``. Inputs are fed by name: ``input_names``
    in ``options`` name them by position (an exporter may drop inputs the graph does not read).
    Announces its phases (see ``phase``), so a hang is reported with the phase it hung in."""
    import tempfile
    import traceback

    import onnx
    import torch

    names = list(options.get("input_names") or [])
    result: dict[str, Any] = {}

    def failed(status: str, exc: BaseException, cause: bool = False) -> dict[str, Any]:
        result.update(
            status=status,
            error=first_line(exc, cause=cause),
            message=ANSI.sub("", f"{type(exc).__name__}: {exc}")[:3000],
            traceback=traceback.format_exc()[-3000:],
        )
        return result

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        t0 = time.perf_counter()
        try:
            phase("export")
            with torch.no_grad():
                export_with(exporter, model, args, path, **options)
        except Exception as exc:  # noqa: BLE001 - reported
            return failed("export", exc, cause=exporter != "ours")
        result["export_seconds"] = round(time.perf_counter() - t0, 2)
        try:
            phase("checker")
            onnx.checker.check_model(path, full_check=True)
        except Exception as exc:  # noqa: BLE001 - reported
            return failed("invalid", exc)
        try:
            phase("onnxruntime session")
            sess = unoptimized_session(path)
            present = {i.name for i in sess.get_inputs()}
            for label, run_args, expected in runs:
                phase(f"onnxruntime run ({label})")
                tensors = flat_tensors(run_args)
                feeds = {n: t.numpy() for n, t in zip(names, tensors) if n in present}
                # an empty ONNX optional output is torch's None, which flat_tensors leaves out
                outs = [o for o in sess.run(None, feeds) if o is not None]
                status, error, worst = compare_outputs(expected, outs)
                result["max_diff"] = max(result.get("max_diff", 0.0), worst)
                if status != "pass":
                    prefix = "" if label == "example" else f"{label}: "
                    result.update(status=status, error=prefix + error, message=prefix + error)
                    return result
        except Exception as exc:  # noqa: BLE001 - reported
            return failed("ort", exc)
    result["status"] = "pass"
    return result
