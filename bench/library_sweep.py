"""Breadth sweep over libraries written for ``torch.jit.script``: kornia, torch_geometric, einops,
torchmetrics, torchvision (ops, transforms, detection parts), torchaudio, monai, julius,
asteroid-filterbanks and pytorch-msssim.

    bash scripts/library_sweep.sh                        # all of it: install once, sweep, --repros, README
    python bench/library_sweep.py                        # everything: 436 exports (see below for how long)
    python bench/library_sweep.py --quick                # one or two cases per library: 46 exports, 2-5 min
    python bench/library_sweep.py --libraries kornia,einops --modes script
    python bench/library_sweep.py --models torchaudio.resample --exporters ours
    python bench/library_sweep.py --list                 # the cases, their library, scripted or not
    python bench/library_sweep.py --render               # rewrite results.md and FAILURES.md from the JSON
    python bench/library_sweep.py --repros               # run FAILURES.md's reproductions with ours

scripts/library_sweep.sh installs the libraries (once), runs the sweep (its arguments go to this
script), reruns the reproductions and copies the pass counts into README.md. By hand: the
``bench`` extra beside torch 2.13, pinned (torch and the versions measured) by
bench/library_sweep_constraints.txt, ``pip install -c bench/library_sweep_constraints.txt -e
'.[bench]'``, then torchvision and torchaudio with ``--no-deps`` and the same constraints (their
wheels pin other torch releases; the sweep imports torchvision through tests/torchvision_shim.py
and torchaudio without its compiled extension, see library_cases.import_library). A library that
is not installed shows as ``build``.

How long: 4-5 CPU seconds per export (mostly the worker's imports), so about 25 minutes for
everything with the default two subprocesses on two idle cores; on the shared machine at load
13-18 it took 58 minutes with up to nine (``--jobs``). results.md records the last full run's.

A case (bench/library_cases.py) is a module or function of a library with example inputs, and for
some, dynamic axes and inputs of other sizes. Each case runs in modes ``trace`` and, where the
library can script it, ``script`` (``torch.jit.script``; a case the library cannot script is
traced only). Every (case, mode, exporter) runs in its own subprocess with a timeout
(``--timeout``, 120 s): build the case (seeded), run it eagerly (the scripted module's outputs
are the reference in script mode), export at opset 17 with inputs ``in0, in1, ...`` and the
case's dynamic axes, check the file with ``onnx.checker.check_model(full_check=True)``, run it
in onnxruntime (graph optimizations off) on the example inputs and, for dynamic cases, on the
inputs of other sizes, and compare with eager torch (count, shape, then values within
1e-3 (1 + max |ref|); integers exactly).

Exporters: ``ours`` and ``torchscript`` (torch's TorchScript exporter, ``dynamo=False``).
Statuses: ``pass``; ``mismatch`` (ran, outputs differ); ``export`` (the exporter raised);
``invalid`` (onnx.checker full_check refused the file); ``ort`` (onnxruntime refused or failed to
run it); ``timeout`` (a hang: the phase it hung in is named) or ``crash``; ``build`` (the case
could not be built, run or scripted eagerly: a sweep problem, not counted).

Results merge into ``bench/results/library_sweep/results.json`` (every run's row, with its
error line, traceback tail and the commit ours was measured at); ``results.md`` beside it is
the summary (the README's table is copied from it by tools/update_readme.py) and
``FAILURES.md`` groups our failures by the construct behind them, each with a reproduction
(bench/library_failures.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import traceback
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import library_failures
import sweep_runner
from library_cases import CASES, LIBRARIES, import_library

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "library_sweep" / "results.json"
EXPORTERS = ["ours", "torchscript"]
MODES = ["trace", "script"]
OPSET = 17
TIMEOUT = 120.0
REPRO_TIMEOUT = 60.0  # a reproduction is a few ops; one of them hangs by design


# ------------------------------------------------------------------ the worker


def worker(name: str, mode: str, exporter: str) -> dict[str, Any]:
    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    case = CASES[name]
    result: dict[str, Any] = {"status": "build"}
    try:
        sweep_runner.phase("build")
        import_library(case.library)
        torch.manual_seed(0)
        example = case.build()
        result["dynamic"] = bool(example.dynamic)
        model = example.model.eval()
        if mode == "script":
            if not case.script:
                raise RuntimeError(f"{case.library} cannot script {name} (traced only)")
            model = torch.jit.script(model)
        with torch.no_grad():
            ref = sweep_runner.flat_tensors(model(*example.args))
            ref_other = sweep_runner.flat_tensors(model(*example.other)) if example.other is not None else []
    except Exception as exc:  # noqa: BLE001 - reported
        result.update(error=sweep_runner.first_line(exc), traceback=traceback.format_exc()[-3000:])
        return result
    options: dict[str, Any] = {
        "opset_version": OPSET,
        "input_names": [f"in{k}" for k in range(len(example.args))],
    }
    if example.dynamic:
        options["dynamic_axes"] = {f"in{k}": axes for k, axes in example.dynamic.items()}
    runs = [("example", example.args, ref)]
    if example.other is not None:
        runs.append(("other input size", example.other, ref_other))
    result.update(sweep_runner.export_and_compare(exporter, model, example.args, runs, options))
    return result


# ------------------------------------------------------------------ the summary


COUNTED = ("pass", "mismatch", "export", "invalid", "ort", "timeout", "crash")
FULL_RUN = ("wall_seconds", "jobs", "workers", "full_run_date")  # meta of the last run over everything


def _row(data: dict[str, Any], name: str, mode: str, exporter: str) -> dict[str, Any]:
    return data["results"].get(name, {}).get(f"{mode}/{exporter}", {})


def _applies(name: str, mode: str) -> bool:
    return mode == "trace" or CASES[name].script


def pass_table(data: dict[str, Any]) -> str:
    """Per library and mode: ours' and torch's passes out of the cases that built (the README's table)."""
    lines = [
        "| library | cases | traced: ours | traced: torch | scripted: ours | scripted: torch |",
        "|---|---|---|---|---|---|",
    ]
    totals = {(m, e): [0, 0] for m in MODES for e in EXPORTERS}
    for library in LIBRARIES:
        names = [n for n, c in CASES.items() if c.library == library]
        cells = []
        for m in MODES:
            for e in EXPORTERS:
                statuses = [_row(data, n, m, e).get("status") for n in names if _applies(n, m)]
                counted = [s for s in statuses if s in COUNTED]
                passed = counted.count("pass")
                totals[(m, e)][0] += passed
                totals[(m, e)][1] += len(counted)
                cells.append(f"{passed} / {len(counted)}" if counted else "-")
        lines.append(f"| {library} | {len(names)} | " + " | ".join(cells) + " |")
    total = " | ".join(f"**{p} / {n}**" for p, n in totals.values())
    lines.append(f"| **all** | **{len(CASES)}** | {total} |")
    return "\n".join(lines) + "\n"


def _wall_time(meta: dict[str, Any]) -> str:
    """How long the last run over everything took: what a rerun costs (the load of the machine shows in it)."""
    if "wall_seconds" not in meta:
        return "No run over every case yet (its wall time shows here)."
    return (
        f"The last run over every case ({meta['full_run_date']}: {meta['jobs']} exports, {meta['workers']} "
        f"subprocesses at once) took {meta['wall_seconds'] / 60:.0f} minutes."
    )


def render(data: dict[str, Any]) -> str:
    meta = data.get("meta", {})
    commits = sorted({r["commit"] for row in data["results"].values() for r in row.values() if "commit" in r})
    lines = [
        "# Library sweep",
        "",
        f"Generated by `python bench/library_sweep.py` ({meta.get('date', '?')}; {meta.get('versions', '')}). "
        f"Each case traced and, where the library scripts it, scripted; exported at opset {OPSET} by ours and by "
        "torch's TorchScript exporter (`dynamo=False`), checked with `onnx.checker` (full_check), run in "
        "onnxruntime with graph optimizations off and compared with eager torch, also on inputs of other sizes "
        "where the case has dynamic axes.",
        "",
        f"Ours measured at commit(s): {', '.join(commits) or '-'}. Library versions: {meta.get('libraries', '-')}.",
        "",
        _wall_time(meta),
        "",
        "## Pass counts",
        "",
        "Passes of the cases that built (a case that cannot be built or scripted eagerly is not counted):",
        "",
        pass_table(data),
        "## Statuses",
        "",
        "| exporter | mode | " + " | ".join(COUNTED) + " | build | not run |",
        "|---|---|" + "---|" * (len(COUNTED) + 2),
    ]
    for e in EXPORTERS:
        for m in MODES:
            st = [_row(data, n, m, e).get("status") for n in CASES if _applies(n, m)]
            counts = " | ".join(str(st.count(s)) for s in COUNTED)
            lines.append(f"| {e} | {m} | {counts} | {st.count('build')} | {st.count(None)} |")
    lines += ["", "## Cases", "", "Cells: ours / torch's.", ""]
    lines += ["| case | dynamic | trace | script | first error (ours, else torch's) |", "|---|---|---|---|---|"]
    for name, case in CASES.items():
        cells, error = [], ""
        for m in MODES:
            if not _applies(name, m):
                cells.append("(not scriptable)")
                continue
            cells.append(" / ".join(_row(data, name, m, e).get("status", "-") for e in EXPORTERS))
        for e in EXPORTERS:
            for m in MODES:
                r = _row(data, name, m, e)
                if not error and r.get("status") not in (None, "pass"):
                    error = f"{m}/{e}: {r.get('error', '')}"
        error = sweep_runner.ANSI.sub("", error).replace("|", "\\|").replace("\n", " ")[:220]
        row = data["results"].get(name, {})
        dynamic = "yes" if any(r.get("dynamic") for r in row.values()) else ""
        lines.append(f"| {name} | {dynamic} | {' | '.join(cells)} | {error} |")
    return "\n".join(lines) + "\n"


def save(data: dict[str, Any], path: Path) -> None:
    """results.json, results.md and FAILURES.md beside it."""
    sweep_runner.save(data, path, render)
    failures = path.parent / "FAILURES.md"
    tmp = failures.with_name(failures.name + ".tmp")
    tmp.write_text(library_failures.report(data, CASES))
    os.replace(tmp, failures)


# ------------------------------------------------------------------ the driver


def _extra(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--quick", action="store_true", help="only the smoke subset (one or two cases per library)")
    ap.add_argument("--libraries", help=f"comma-separated libraries (default: all of {', '.join(LIBRARIES)})")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per (case, mode, exporter) subprocess")
    ap.add_argument("--repros", action="store_true", help="run FAILURES.md's reproductions with ours and record them")


def _versions() -> tuple[str, str]:
    import onnxruntime
    import torch

    tools = f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, python {platform.python_version()}"
    libraries = []
    for library, dist in LIBRARIES.items():
        try:
            libraries.append(f"{library} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            libraries.append(f"{library} (not installed)")
    return tools, ", ".join(libraries)


def main() -> None:
    ns = sweep_runner.arguments(__doc__, RESULTS, EXPORTERS, MODES, extra=_extra)
    if ns.worker:
        res = worker(*ns.worker)
        print(sweep_runner.MARK + json.dumps(res), flush=True)
        return
    if ns.list:
        for name, case in CASES.items():
            traits = ("traced and scripted" if case.script else "traced only") + (", quick" if case.quick else "")
            print(f"{name:48s} {traits}")
        return
    data = sweep_runner.load(ns.results)
    if ns.render:
        save(data, ns.results)
        return
    if ns.repros:
        data["repros"] = library_failures.run_repros(min(ns.timeout, REPRO_TIMEOUT))
        save(data, ns.results)
        return
    names = sweep_runner.selected(ns.models, CASES)
    if ns.libraries:
        wanted = ns.libraries.split(",")
        unknown = [lib for lib in wanted if lib not in LIBRARIES]
        if unknown:
            raise SystemExit(f"unknown libraries: {unknown} (known: {', '.join(LIBRARIES)})")
        names = [n for n in names if CASES[n].library in wanted]
    if ns.quick:
        names = [n for n in names if CASES[n].quick]
    tools, libraries = _versions()
    previous = data.get("meta", {})
    data["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": tools,
        "libraries": libraries,
    }
    jobs = [(n, m, e) for m in ns.modes.split(",") for n in names for e in ns.exporters.split(",") if _applies(n, m)]

    def run(name: str, mode: str, exporter: str) -> dict[str, Any]:
        return sweep_runner.run_worker(__file__, [name, mode, exporter], ns.timeout)

    wall = sweep_runner.record_all(data, run, jobs, ns.jobs, lambda d: save(d, ns.results))
    # the wall time of a run over every case, mode and exporter; a partial run keeps the last full one's
    every_mode = (ns.modes, ns.exporters) == (",".join(MODES), ",".join(EXPORTERS))
    if every_mode and not (ns.models or ns.libraries or ns.quick):
        data["meta"].update(
            wall_seconds=round(wall), jobs=len(jobs), workers=ns.jobs, full_run_date=data["meta"]["date"]
        )
    else:
        data["meta"].update({k: previous[k] for k in FULL_RUN if k in previous})
    save(data, ns.results)


if __name__ == "__main__":
    main()
