"""First export in a fresh process, import included: this package vs torch.onnx.export.

Every run is a new interpreter (nothing cached in the process: imports, registries, probes).
For each variant the wall time and the CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)`` around the child) are recorded; the variants are
interleaved run by run (the order rotates) so that load on a shared machine affects all of
them alike, and the table shows medians.

  python bench/first_export.py                 # 9 runs of each variant
  python bench/first_export.py --runs 15
  python bench/first_export.py --snapshot HEAD # also the exporter/ of a git revision ("before")

Bytecode: an installed package has its .pyc files; a working tree run with
PYTHONDONTWRITEBYTECODE=1 recompiles this package's ~70 modules in every process (~0.1 s)
while torch's come precompiled. So the children run with PYTHONPYCACHEPREFIX set to a
temporary directory (nothing is written into the tree) and every variant runs once untimed
first to fill it; --no-bytecode-cache runs them with the environment as it is.

Variants:
  floor    python -c "import torch"
  torch    import torch; torch.onnx.export(mlp, args, f, dynamo=False)
  ours     import exporter; exporter.export(mlp, args, f)
  cli      python -m exporter mlp.pt --input x:1x16 -o out.onnx (a torch.jit.save archive)
  ours@REV, cli@REV   the same with exporter/ of REV (--snapshot), extracted read-only
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_MLP = (
    "import torch\n"
    "model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()\n"
    "args = (torch.randn(1, 16),)\n"
)

_SCRIPTS = {
    "floor": "import torch\n",
    "torch": _MLP
    + "import warnings\nwarnings.simplefilter('ignore')\n"
    + "torch.onnx.export(model, args, {out!r}, dynamo=False, opset_version=20)\n",
    "ours": _MLP + "import exporter\nexporter.export(model, args, {out!r}, opset_version=20)\n",
}


def _save_archive(path: Path) -> None:
    code = _MLP + f"torch.jit.save(torch.jit.script(model), {str(path)!r})\n"
    subprocess.run([sys.executable, "-c", code], check=True)


def _command(variant: str, work: Path, archive: Path) -> list[str]:
    kind = variant.split("@")[0]
    out = str(work / f"{variant.replace('@', '_')}.onnx")
    if kind == "cli":
        return [sys.executable, "-m", "exporter", str(archive), "--input", "x:1x16", "--opset", "20", "-o", out]
    return [sys.executable, "-c", _SCRIPTS[kind].format(out=out)]


def _run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child. ``cwd`` is not the repository, so
    the child imports exporter from PYTHONPATH (the tree or a snapshot), not from ''."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{command} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _snapshot(rev: str, target: Path) -> Path:
    """exporter/ of ``rev`` via a read-only ``git archive`` (the working tree is not touched)."""
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "exporter"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per variant (default 9)")
    parser.add_argument("--snapshot", metavar="REV", help="also benchmark exporter/ of this git revision")
    parser.add_argument("--variants", default="floor,torch,ours,cli", help="comma-separated subset")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="run children with the environment as is")
    opts = parser.parse_args()

    variants = opts.variants.split(",")
    with tempfile.TemporaryDirectory(prefix="first-export-") as tmp:
        work = Path(tmp)
        base_env = dict(os.environ)
        if not opts.no_bytecode_cache:
            base_env.pop("PYTHONDONTWRITEBYTECODE", None)
            base_env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        envs = {v: {**base_env, "PYTHONPATH": str(ROOT)} for v in variants}
        if opts.snapshot:
            snap = _snapshot(opts.snapshot, work / "snapshot")
            for kind in ("ours", "cli"):
                if kind in variants:
                    name = f"{kind}@{opts.snapshot}"
                    variants.append(name)
                    envs[name] = {**base_env, "PYTHONPATH": str(snap)}
        archive = work / "mlp.pt"
        _save_archive(archive)
        if not opts.no_bytecode_cache:
            for variant in variants:  # untimed: fills the bytecode cache
                _run(_command(variant, work, archive), envs[variant], work)
        walls: dict[str, list[float]] = {v: [] for v in variants}
        cpus: dict[str, list[float]] = {v: [] for v in variants}
        for i in range(opts.runs):
            order = variants[i % len(variants) :] + variants[: i % len(variants)]
            for variant in order:
                wall, cpu = _run(_command(variant, work, archive), envs[variant], work)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
            print(f"run {i + 1}/{opts.runs} done", file=sys.stderr)

    med_wall = {v: statistics.median(walls[v]) for v in variants}
    med_cpu = {v: statistics.median(cpus[v]) for v in variants}
    base = "torch" if "torch" in variants else None
    cache = "no bytecode cache" if opts.no_bytecode_cache else "bytecode cached"
    print(f"\n{opts.runs} fresh processes per variant, interleaved, {cache}; medians [min-max]\n")
    header = "| variant | wall s | CPU s |" + (" wall / torch | CPU / torch |" if base else "")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for v in variants:
        row = (
            f"| {v} | {med_wall[v]:.2f} [{min(walls[v]):.2f}-{max(walls[v]):.2f}] "
            f"| {med_cpu[v]:.2f} [{min(cpus[v]):.2f}-{max(cpus[v]):.2f}] |"
        )
        if base:
            row += f" {med_wall[v] / med_wall[base]:.2f} | {med_cpu[v] / med_cpu[base]:.2f} |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
