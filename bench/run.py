"""Side-by-side export benchmark: exporter vs torch.onnx.export (dynamo=False and dynamo=True).

    python bench/run.py                                  # every model except 'large'
    python bench/run.py --models lstm,bert --reps 3      # a selection
    python bench/run.py --large                          # include the ~2 GiB synthetic model
    python bench/run.py --exporters ours,torchscript     # a subset of exporters

Every (model, exporter) pair runs in its own subprocess (a fresh interpreter). Inside it the model
is built, then exported 1 (warm-up) + --reps times; the reported time is the median of the timed
exports. Results go to bench/results/results.json and bench/results/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
EXPORTERS = ["ours", "torchscript", "dynamo"]
EXPORTER_LABEL = {
    "ours": "exporter (ours)",
    "torchscript": "torch.onnx.export(dynamo=False)",
    "dynamo": "torch.onnx.export(dynamo=True)",
}
MARK = "@@BENCH-RESULT@@"


# ---------------------------------------------------------------- memory measurement


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _hwm_bytes() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_hwm() -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM) of this process; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class PeakMemory:
    """Peak resident memory during a block, relative to the resident memory just before it.

    Uses the kernel's VmHWM (reset through /proc/self/clear_refs) when possible, and a 2 ms
    sampling thread otherwise / in addition (the larger of the two is kept).
    """

    def __enter__(self):
        gc.collect()
        self.base = _rss_bytes()
        self.hwm_ok = _reset_hwm()
        self.sampled = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.002):
            rss = _rss_bytes()
            if rss > self.sampled:
                self.sampled = rss

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        peak = self.sampled
        if self.hwm_ok:
            hwm = _hwm_bytes()
            if hwm is not None:
                peak = max(peak, hwm)
        self.peak_increase = max(0, peak - self.base)
        return False


# ---------------------------------------------------------------- one exporter run (worker side)


def _export(exporter_name: str, model, args, path: str, input_names, dynamic_axes, opset: int):
    import torch

    if exporter_name == "ours":
        sys.path.insert(0, os.environ.get("BENCH_EXPORTER_ROOT", str(ROOT)))
        import exporter

        return exporter.export(
            model, args, path, opset_version=opset, input_names=input_names, dynamic_axes=dynamic_axes, report=True
        )
    kwargs = dict(opset_version=opset, input_names=input_names, dynamic_axes=dynamic_axes)
    if exporter_name == "torchscript":
        return torch.onnx.export(model, args, path, dynamo=False, **kwargs)
    if exporter_name == "dynamo":
        return torch.onnx.export(model, args, path, dynamo=True, external_data=True, **kwargs)
    raise ValueError(exporter_name)


def _write_floor(files_dir: Path, scratch: Path, reps: int) -> float:
    """Seconds to write the bytes of ``files_dir``'s files (the exported model and its external
    data) with ``open(...).write`` from memory: what any export has to pay at least. Median of
    ``reps`` writes into ``scratch``, each a fresh file as the exporters write."""
    blobs = [p.read_bytes() for p in sorted(files_dir.iterdir()) if p.is_file() and p.suffix != ".npz"]
    times = []
    for i in range(reps):
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        start = time.perf_counter()
        for j, blob in enumerate(blobs):
            with open(scratch / f"{i}-{j}.bin", "wb") as stream:
                stream.write(blob)
        times.append(time.perf_counter() - start)
    shutil.rmtree(scratch, ignore_errors=True)
    return statistics.median(times)


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _count_nodes(graph) -> int:
    n = 0
    for node in graph.node:
        n += 1
        for attr in node.attribute:
            if attr.g is not None and attr.HasField("g"):
                n += _count_nodes(attr.g)
            for sub in attr.graphs:
                n += _count_nodes(sub)
    return n


def _flatten(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flatten(o)]
    return []


_ANSI = __import__("re").compile(r"\x1b\[[0-9;]*m")


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip()
    line = text.splitlines()[0] if text else ""
    out = f"{type(exc).__name__}: {line}"
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        ctext = _ANSI.sub("", str(cause)).strip()
        out += f" (caused by {type(cause).__name__}: {ctext.splitlines()[0] if ctext else ''})"
    return out


def worker(
    model_name: str, exporter_name: str, reps: int, opset: int, dynamic: bool, ort_runs: int, keep_dir: str | None
) -> dict:
    """Build, export 1 + reps times, count, check accuracy in onnxruntime (and latency if ort_runs)."""
    import warnings

    import numpy as np
    import torch

    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(HERE))
    from zoo import ZOO

    res: dict = {"model": model_name, "exporter": exporter_name, "ok": False, "reps": reps}
    t0 = time.perf_counter()
    model, args, input_names, axes = ZOO[model_name].build()
    with torch.no_grad():
        expected = [t.detach().numpy().copy() for t in _flatten(model(*args))]
    res["build_seconds"] = time.perf_counter() - t0
    res["params_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    gc.collect()
    res["baseline_rss_bytes"] = _rss_bytes()

    workdir = Path(keep_dir) if keep_dir else Path(tempfile.mkdtemp(prefix=f"bench-{model_name}-"))
    times, mems = [], []
    path = None
    try:
        for i in range(1 + reps):
            run_dir = workdir / f"{exporter_name}-{i}"
            shutil.rmtree(run_dir, ignore_errors=True)
            run_dir.mkdir(parents=True)
            path = run_dir / "model.onnx"
            with PeakMemory() as mem:
                start = time.perf_counter()
                out = _export(exporter_name, model, args, str(path), input_names, axes if dynamic else None, opset)
                elapsed = time.perf_counter() - start
            out_report = out if hasattr(out, "capture") else None
            if i == 0:
                res["warmup_seconds"] = elapsed
                res["warmup_peak_mem_bytes"] = mem.peak_increase
                if exporter_name == "ours" and out is not None and hasattr(out, "phase_seconds"):
                    res["ours_phase_seconds"] = dict(out.phase_seconds)
            else:
                times.append(elapsed)
                mems.append(mem.peak_increase)
            del out
            if i < reps:  # keep only the last file
                shutil.rmtree(run_dir, ignore_errors=True)
    except BaseException as exc:  # noqa: BLE001 - a failing exporter is a result
        res["error"] = _first_line(exc)
        res["error_text"] = _ANSI.sub("", str(exc))[:4000]
        res["traceback_tail"] = traceback.format_exc()[-3000:]
        shutil.rmtree(workdir, ignore_errors=True) if not keep_dir else None
        return res

    if not times:  # reps == 0: the warm-up is the only measurement
        times, mems = [res["warmup_seconds"]], [res["warmup_peak_mem_bytes"]]
    res["export_seconds"] = statistics.median(times)
    res["export_seconds_all"] = times
    res["peak_mem_bytes"] = max(mems)
    res["peak_mem_bytes_all"] = mems
    res["file_bytes"] = _dir_size(path.parent)
    res["floor_seconds"] = _write_floor(path.parent, workdir / "floor", max(1, reps))
    if exporter_name == "ours" and out_report is not None:
        res["ours_capture"] = [out_report.capture, out_report.capture_reason]

    import onnx

    proto = onnx.load(str(path), load_external_data=False)
    res["nodes"] = _count_nodes(proto.graph)
    res["nodes_top_level"] = len(proto.graph.node)
    res["opset"] = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    del proto

    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feeds_np = [a.numpy() for a in _flatten(args)]
        sess_inputs = sess.get_inputs()
        names = [i.name for i in sess_inputs]
        if len(names) == len(feeds_np):
            feeds = dict(zip(names, feeds_np))
        else:  # an exporter dropped unused inputs: match by name
            by_name = dict(zip(input_names, feeds_np))
            feeds = {n: by_name[n] for n in names}
        outs = sess.run(None, feeds)
        for _ in range(3):
            sess.run(None, feeds)
        lat = []
        for _ in range(ort_runs):
            s = time.perf_counter()
            sess.run(None, feeds)
            lat.append(time.perf_counter() - s)
        if lat:
            res["ort_latency_seconds_in_worker"] = statistics.median(lat)
        res["ort_feeds"] = {n: [list(a.shape), str(a.dtype)] for n, a in feeds.items()}
        if keep_dir:
            np.savez(str(path.parent / "feeds.npz"), **feeds)
            res["kept_path"] = str(path)
        diffs = []
        for got, exp in zip(outs, expected):
            got = np.asarray(got)
            if got.shape != exp.shape:
                diffs.append(float("inf"))
            elif got.size:
                diffs.append(float(np.max(np.abs(got.astype(np.float64) - exp.astype(np.float64)))))
            else:
                diffs.append(0.0)
        res["max_abs_diff"] = max(diffs) if diffs else None
        if len(outs) != len(expected):
            res["output_count_mismatch"] = f"onnx {len(outs)} vs torch {len(expected)}"
        res["ok"] = True
    except BaseException as exc:  # noqa: BLE001
        res["ort_error"] = _first_line(exc)
        res["error"] = "onnxruntime: " + _first_line(exc)
        res["ok"] = False
    finally:
        if not keep_dir:
            shutil.rmtree(workdir, ignore_errors=True)
    return res


def latency_worker(paths: list[str], runs: int) -> dict:
    """onnxruntime latency of several models in one fresh process, interleaved run by run.

    Interleaving makes the ratios robust against the machine's drifting speed (2 shared cores).
    Returns every timing, so that the driver can pool the runs of several processes.
    """
    import numpy as np
    import onnxruntime as ort

    sessions, feeds = {}, {}
    for p in paths:
        sessions[p] = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
        with np.load(str(Path(p).parent / "feeds.npz")) as data:
            feeds[p] = {k: data[k] for k in data.files}
    for p in paths:
        for _ in range(3):
            sessions[p].run(None, feeds[p])
    lat = {p: [] for p in paths}
    for _ in range(runs):
        for p in paths:
            s = time.perf_counter()
            sessions[p].run(None, feeds[p])
            lat[p].append(time.perf_counter() - s)
    return {p: {"median": statistics.median(v), "min": min(v), "all": v} for p, v in lat.items()}


# ---------------------------------------------------------------- driver


def _machine() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    ram = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "ram_bytes": ram,
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def _versions(snapshot: str | None = None) -> dict:
    code = (
        "import json, torch, onnx, onnxruntime, onnxscript\n"
        "try:\n import transformers; tv = transformers.__version__\nexcept Exception: tv = None\n"
        "print(json.dumps({'torch': torch.__version__, 'onnx': onnx.__version__, "
        "'onnxruntime': onnxruntime.__version__, 'onnxscript': onnxscript.__version__, "
        "'transformers': tv}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    versions = json.loads(out.stdout.strip().splitlines()[-1])
    try:
        sha = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", snapshot or "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(ROOT), "status", "--porcelain", "--", "exporter"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        versions["exporter_commit"] = (
            (sha or None) if snapshot else (f"{sha} + uncommitted changes in exporter/" if dirty else sha or None)
        )
    except OSError:
        versions["exporter_commit"] = None
    return versions


def run_latency(results: list[dict], opts) -> None:
    """Measure onnxruntime latency of the kept files of one model, interleaved, in fresh processes.

    The session created first in a process runs measurably slower than the ones created after it
    (1-4% for identical files, on this VM), and the file order is the exporter order, so a single
    process biased the ratios against `ours`. One process per file, the creation order rotated so
    that each file comes first once, the runs split between them and pooled, cancels that.
    """
    kept = [r for r in results if r.get("ok") and r.get("kept_path")]
    if not kept:
        return
    paths = [r["kept_path"] for r in kept]
    runs = max(1, -(-opts.ort_runs // len(paths)))
    timings: dict[str, list[float]] = {p: [] for p in paths}
    rotations = []
    for shift in range(len(paths)):
        order = paths[shift:] + paths[:shift]
        cmd = [sys.executable, str(Path(__file__).resolve()), "--latency-worker", str(runs), *order]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.timeout)
            line = next(l for l in proc.stdout.splitlines() if l.startswith(MARK))
            lat = json.loads(line[len(MARK) :])
        except Exception as exc:  # noqa: BLE001
            for r in kept:
                r["ort_latency_error"] = _first_line(exc)
            return
        for p in paths:
            timings[p].extend(lat[p]["all"])
        rotations.append({p: lat[p]["median"] for p in paths})
    for r in kept:
        p = r["kept_path"]
        r["ort_latency_seconds"] = statistics.median(timings[p])
        r["ort_latency_min_seconds"] = min(timings[p])
        r["ort_latency_runs"] = len(timings[p])
        r["ort_latency_rotation_medians"] = [rot[p] for rot in rotations]


def run_one(model: str, exporter_name: str, opts, keep_dir: str) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        model,
        exporter_name,
        "--reps",
        str(opts.reps),
        "--opset",
        str(opts.opset),
        "--ort-runs",
        "0",
        "--keep-dir",
        keep_dir,
    ]
    if opts.dynamic:
        cmd.append("--dynamic")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {
            "model": model,
            "exporter": exporter_name,
            "ok": False,
            "error": f"timeout after {opts.timeout} s",
            "wall_seconds": time.perf_counter() - start,
        }
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            res = json.loads(line[len(MARK) :])
            res["wall_seconds"] = time.perf_counter() - start
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()
    return {
        "model": model,
        "exporter": exporter_name,
        "ok": False,
        "error": f"worker exited with {proc.returncode}: " + (tail[-1] if tail else ""),
        "stderr_tail": "\n".join(tail[-30:]),
        "wall_seconds": time.perf_counter() - start,
    }


def _pool(into: dict, res: dict) -> None:
    """Add another subprocess's timed exports (and floor) to ``into``: medians over all."""
    into["export_seconds_all"] = into["export_seconds_all"] + res["export_seconds_all"]
    into["export_seconds"] = statistics.median(into["export_seconds_all"])
    into["peak_mem_bytes_all"] = into.get("peak_mem_bytes_all", []) + res.get("peak_mem_bytes_all", [])
    into["peak_mem_bytes"] = max(into["peak_mem_bytes_all"])
    into.setdefault("floor_seconds_all", [into["floor_seconds"]]).append(res["floor_seconds"])
    into["floor_seconds"] = statistics.median(into["floor_seconds_all"])
    into.setdefault("warmup_seconds_all", [into["warmup_seconds"]]).append(res["warmup_seconds"])


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def _fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}"


def _fmt_bytes(n):
    if n is None:
        return "–"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:160]


def write_markdown(doc: dict, path: Path) -> None:
    from zoo import ZOO

    m, v = doc["machine"], doc["versions"]
    by = {(r["model"], r["exporter"]): r for r in doc["results"]}
    models = list(dict.fromkeys(r["model"] for r in doc["results"]))
    lines = [
        "# exporter benchmark",
        "",
        f"- date: {doc['date']}",
        f"- machine: {m['nproc']} CPUs, {(m['ram_bytes'] or 0) / 2**30:.1f} GiB RAM, {m['cpu']}; {m['platform']}",
        f"- versions: torch {v['torch']}, onnx {v['onnx']}, onnxruntime {v['onnxruntime']}, "
        f"onnxscript {v['onnxscript']}, transformers {v['transformers']}, python {m['python']}, "
        f"exporter commit {v.get('exporter_commit')}",
        f"- settings: opset {doc['settings']['opset']}, export reps {doc['settings']['reps']} "
        f"(median, after 1 warm-up; 0 = warm-up only), onnxruntime runs {doc['settings']['ort_runs']} "
        f"(median), dynamic axes {'on' if doc['settings']['dynamic'] else 'off'}; each (model, exporter) "
        f"in its own subprocess, {doc['settings'].get('rounds', 1)} round(s) of them interleaved "
        f"(times pooled, median; peak memory the maximum)",
        "",
        "## Ratios ours / torch TorchScript exporter (`dynamo=False`)",
        "",
        "Lower is better for all five. time = export wall time; memory = peak RSS increase during export "
        "(relative to the RSS after model construction); size = .onnx plus external data; nodes = ONNX "
        "nodes including subgraphs; latency = onnxruntime CPU median. ours / floor = our export time over "
        "the time to write the same bytes with `open().write` from memory; mem / weights = our peak "
        "memory increase over the model's parameter bytes; capture = how ours captured the graph.",
        "",
        "| model | time | memory | size | nodes | latency | ours max abs diff | torchscript max abs diff "
        "| ours / floor | mem / weights | capture |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model in models:
        o, t = by.get((model, "ours"), {}), by.get((model, "torchscript"), {})
        if not o.get("ok") or not t.get("ok"):
            why = []
            if not o.get("ok"):
                why.append(f"ours failed: {_md_escape(o.get('error', 'not run'))}")
            if not t.get("ok"):
                why.append(f"torchscript failed: {_md_escape(t.get('error', 'not run'))}")
            lines.append(f"| {model} | " + "; ".join(why) + " | | | | | | | | | |")
            continue
        lines.append(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                model,
                _fmt_ratio(_ratio(o["export_seconds"], t["export_seconds"])),
                _fmt_ratio(_ratio(o["peak_mem_bytes"], t["peak_mem_bytes"])),
                _fmt_ratio(_ratio(o["file_bytes"], t["file_bytes"])),
                _fmt_ratio(_ratio(o["nodes"], t["nodes"])),
                _fmt_ratio(_ratio(o.get("ort_latency_seconds"), t.get("ort_latency_seconds"))),
                (f"{o['max_abs_diff']:.2e}" if o.get("max_abs_diff") is not None else "–")
                + (
                    " **(wrong)**"
                    if (o.get("max_abs_diff") or 0) > max(1e-3, 100 * (t.get("max_abs_diff") or 0))
                    else ""
                ),
                f"{t['max_abs_diff']:.2e}" if t.get("max_abs_diff") is not None else "–",
                _fmt_ratio(_ratio(o["export_seconds"], o.get("floor_seconds"))),
                _fmt_ratio(_ratio(o["peak_mem_bytes"], o.get("params_bytes"))),
                (o.get("ours_capture") or ["–"])[0],
            )
        )
    lines += [
        "",
        "## Absolute numbers",
        "",
        "| model | exporter | export s (median) | floor s | warm-up s | peak mem | file | nodes | ORT latency ms "
        "| max abs diff | error |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model in models:
        for ex in EXPORTERS:
            r = by.get((model, ex))
            if r is None:
                continue
            if r.get("export_seconds") is None:
                lines.append(f"| {model} | {ex} | | | | | | | | | {_md_escape(r.get('error', ''))} |")
                continue
            lat = r.get("ort_latency_seconds")
            diff = r.get("max_abs_diff")
            lines.append(
                "| {} | {} | {:.3f} | {} | {:.3f} | {} | {} | {} | {} | {} | {} |".format(
                    model,
                    ex,
                    r["export_seconds"],
                    f"{r['floor_seconds']:.3f}" if r.get("floor_seconds") is not None else "–",
                    r["warmup_seconds"],
                    _fmt_bytes(r["peak_mem_bytes"]),
                    _fmt_bytes(r["file_bytes"]),
                    r["nodes"],
                    f"{lat * 1e3:.2f}" if lat is not None else "–",
                    f"{diff:.2e}" if diff is not None else "–",
                    _md_escape(r.get("error", "")),
                )
            )
    commits = sorted(
        {
            (r["model"], r["exporter_commit"])
            for r in doc["results"]
            if r["exporter"] == "ours" and r.get("exporter_commit") and r["exporter_commit"] != v.get("exporter_commit")
        }
    )
    if commits:
        lines += [
            "",
            "Rows of our exporter at another commit (merged runs): " + ", ".join(f"{m} ({c})" for m, c in commits),
        ]
    other = sorted(
        {
            (r["model"], r["reps"])
            for r in doc["results"]
            if r.get("reps") is not None and r["reps"] != doc["settings"]["reps"]
        }
    )
    if other:
        lines += ["", "Rows run with other export reps: " + ", ".join(f"{m} ({n})" for m, n in other)]
    lines += ["", "## Models", ""]
    for model in models:
        lines.append(f"- `{model}`: {ZOO[model].description}")
    lines += ["", "Exporters: " + "; ".join(f"`{k}` = {v}" for k, v in EXPORTER_LABEL.items()), ""]
    path.write_text("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=None, help="comma-separated model names (default: all but 'large')")
    p.add_argument("--exporters", default=",".join(EXPORTERS), help="comma-separated: ours,torchscript,dynamo")
    p.add_argument("--reps", type=int, default=3, help="timed exports after 1 warm-up (default 3)")
    p.add_argument("--ort-runs", type=int, default=20, help="timed onnxruntime runs (default 20)")
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--dynamic", action="store_true", help="export with a dynamic batch axis")
    p.add_argument("--large", action="store_true", help="include the ~2 GiB synthetic model")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per (model, exporter) subprocess")
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run each (model, exporter) subprocess this many times, exporters interleaved "
        "(ours, torchscript, ours, ...); times are pooled and their median reported",
    )
    p.add_argument("--out", default=str(RESULTS), help="results directory")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep results of models/exporters not run now from an existing results.json",
    )
    p.add_argument(
        "--snapshot",
        nargs="?",
        const="HEAD",
        default=None,
        metavar="REV",
        help="benchmark the exporter package of a git revision (default HEAD, via read-only "
        "`git archive` into a temp dir) instead of the working tree, which others may be editing",
    )
    p.add_argument("--list", action="store_true", help="list the zoo and exit")
    p.add_argument("--render", action="store_true", help="only rewrite results.md from results.json")
    p.add_argument("--worker", nargs=2, metavar=("MODEL", "EXPORTER"), help=argparse.SUPPRESS)
    p.add_argument("--keep-dir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--latency-worker", nargs="+", default=None, help=argparse.SUPPRESS)
    opts = p.parse_args(argv)

    sys.path.insert(0, str(HERE))
    if opts.latency_worker:
        res = latency_worker(opts.latency_worker[1:], int(opts.latency_worker[0]))
        print(MARK + json.dumps(res), flush=True)
        return 0
    if opts.worker:
        res = worker(opts.worker[0], opts.worker[1], opts.reps, opts.opset, opts.dynamic, opts.ort_runs, opts.keep_dir)
        sys.stdout.flush()
        print(MARK + json.dumps(res), flush=True)
        return 0

    from zoo import ZOO

    if opts.render:
        write_markdown(json.loads((Path(opts.out) / "results.json").read_text()), Path(opts.out) / "results.md")
        return 0
    if opts.list:
        for e in ZOO.values():
            print(f"{e.name:<22} {'[large] ' if e.large else ''}{e.description}")
        return 0
    if opts.models:
        models = [m.strip() for m in opts.models.split(",") if m.strip()]
        unknown = [m for m in models if m not in ZOO]
        if unknown:
            p.error(f"unknown models {unknown}; choose from {list(ZOO)}")
    else:
        models = [e.name for e in ZOO.values() if opts.large or not e.large]
    exporters = [e.strip() for e in opts.exporters.split(",") if e.strip()]
    if any(e not in EXPORTERS for e in exporters):
        p.error(f"exporters must be among {EXPORTERS}")

    if opts.snapshot:
        snap = Path(tempfile.mkdtemp(prefix="bench-exporter-snapshot-"))
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", opts.snapshot, "exporter"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(snap)], input=archive, check=True)
        os.environ["BENCH_EXPORTER_ROOT"] = str(snap)
        import atexit

        atexit.register(shutil.rmtree, snap, True)
        print(f"benchmarking exporter/ of {opts.snapshot} extracted to {snap}")
    out_dir = Path(opts.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "results.json", out_dir / "results.md"
    previous = []
    if opts.merge and json_path.exists():
        previous = json.loads(json_path.read_text()).get("results", [])
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": _machine(),
        "versions": _versions(opts.snapshot),
        "settings": {
            "opset": opts.opset,
            "reps": opts.reps,
            "ort_runs": opts.ort_runs,
            "dynamic": opts.dynamic,
            "rounds": opts.rounds,
        },
        "results": [
            r for r in previous if (r["model"], r["exporter"]) not in {(m, e) for m in models for e in exporters}
        ],
    }

    def flush():
        order = {m: i for i, m in enumerate(ZOO)}
        doc["results"].sort(key=lambda r: (order.get(r["model"], 99), EXPORTERS.index(r["exporter"])))
        json_path.write_text(json.dumps(doc, indent=1))
        write_markdown(doc, md_path)

    for model in models:
        keep_root = Path(tempfile.mkdtemp(prefix=f"bench-{model}-"))
        model_results = []
        try:
            pooled: dict[str, dict] = {}
            for round_index in range(opts.rounds):
                for ex in exporters:
                    print(f"[{time.strftime('%H:%M:%S')}] {model:<22} {ex:<12}", end=" ", flush=True)
                    res = run_one(model, ex, opts, str(keep_root / ex))
                    if res.get("ok"):
                        print(
                            f"ok  export {res['export_seconds']:.2f}s  mem {_fmt_bytes(res['peak_mem_bytes'])}",
                            flush=True,
                        )
                    else:
                        print(f"FAILED  {res.get('error')}", flush=True)
                    if round_index == 0 or not pooled[ex].get("ok"):
                        pooled[ex] = res
                    elif res.get("ok"):
                        _pool(pooled[ex], res)
            for ex in exporters:
                res = pooled[ex]
                res["rounds"] = opts.rounds
                if res.get("ok"):
                    print(
                        f"[{time.strftime('%H:%M:%S')}] {model:<22} {ex:<12} median of "
                        f"{len(res['export_seconds_all'])}: export {res['export_seconds']:.2f}s  "
                        f"floor {res['floor_seconds']:.2f}s  mem {_fmt_bytes(res['peak_mem_bytes'])}  "
                        f"nodes {res['nodes']}  diff {res['max_abs_diff']:.1e}",
                        flush=True,
                    )
                res["exporter_commit"] = doc["versions"].get("exporter_commit")
                model_results.append(res)
                doc["results"].append(res)
                flush()
            if opts.ort_runs > 0:
                run_latency(model_results, opts)
                print(
                    f"[{time.strftime('%H:%M:%S')}] {model:<22} onnxruntime latency (interleaved): "
                    + ", ".join(
                        f"{r['exporter']} {r['ort_latency_seconds'] * 1e3:.2f}ms"
                        for r in model_results
                        if r.get("ort_latency_seconds") is not None
                    ),
                    flush=True,
                )
            for r in model_results:
                r.pop("kept_path", None)
            flush()
        finally:
            shutil.rmtree(keep_root, ignore_errors=True)
    flush()
    print(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
