"""Breadth sweep over timm's image models: CNNs, vision transformers, hybrids, MLPs.

    python bench/timm_sweep.py                                   # everything (~25 min on 2 cores)
    python bench/timm_sweep.py --exporters ours                  # ours only; keeps torch's results
    python bench/timm_sweep.py --models resnet18,swin_tiny_patch4_window7_224 --modes trace
    python bench/timm_sweep.py --list

Every model is built by ``timm.create_model(name, pretrained=False)`` (nothing downloaded; random
weights from a fixed seed) on a small image: 160x160 unless the model needs another size (models
with a fixed patch grid get ``img_size`` when they take it). Every (model, mode, exporter) runs in
its own subprocess with a timeout: the model is built, batch-norm statistics calibrated on the
input (see torchvision_sweep), run eagerly, exported, loaded in onnxruntime (graph optimizations
off, so the comparison checks the exported semantics) and compared with eager torch. Modes:

- ``trace``: traced, opset 17, static shapes;
- ``dynamic``: traced with a dynamic batch axis, opset 17, then also run on a batch of two (a subset);
- ``dynimg``: ViTs built with ``dynamic_img_size=True`` (at their default img_size, so the position
  embedding is resampled to the traced patch grid), traced with dynamic batch, height and width at
  opset 18, then also run on a batch of two images of another size (a subset).

Exporters: ``ours`` and ``torchscript`` (torch's TorchScript exporter, ``dynamo=False``).
Statuses as in torchvision_sweep: ``pass``, ``mismatch``, ``export``, ``ort``, ``timeout``/``crash``,
``build`` (the model could not be built or run eagerly: a sweep problem, not counted).
timm imports torchvision, whose compiled ops need not load: tests/torchvision_shim.py stands in.
Results merge into ``bench/results/timm_sweep.json``; the markdown beside it is rewritten.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import sweep_runner

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
EXPORTERS = ["ours", "torchscript"]
MODES = ["trace", "dynamic", "dynimg"]
MARK = sweep_runner.MARK

# name -> (family, image side). Families are for the table; the side is the input's height and width.
MODELS: dict[str, tuple[str, int]] = {
    # residual CNNs
    "resnet18": ("cnn", 160),
    "resnet26d": ("cnn", 160),
    "seresnext26d_32x4d": ("cnn", 160),
    "res2net50_26w_4s": ("cnn", 160),
    "resnest14d": ("cnn", 160),
    "skresnet18": ("cnn", 160),
    "resnetv2_50x1_bit": ("cnn", 160),
    "nf_resnet26": ("cnn", 160),
    "eca_nfnet_l0": ("cnn", 160),
    "regnetx_002": ("cnn", 160),
    "regnety_002": ("cnn", 160),
    "regnetz_b16": ("cnn", 160),
    "dla34": ("cnn", 160),
    "dpn48b": ("cnn", 160),
    "hrnet_w18_small": ("cnn", 160),
    "densenet121": ("cnn", 160),
    "cspresnet50": ("cnn", 160),
    "cs3darknet_s": ("cnn", 160),
    "darknet17": ("cnn", 160),
    "ese_vovnet19b_dw": ("cnn", 160),
    "selecsls42b": ("cnn", 160),
    "gernet_s": ("cnn", 160),
    "inception_v3": ("cnn", 160),
    "convmixer_768_32": ("cnn", 160),
    "tresnet_m": ("cnn", 160),
    "cspnext_tiny": ("cnn", 160),
    # mobile CNNs
    "mobilenetv3_small_100": ("mobile", 160),
    "mobilenetv3_large_100": ("mobile", 160),
    "efficientnet_b0": ("mobile", 160),
    "tf_efficientnet_b0": ("mobile", 160),
    "efficientnet_lite0": ("mobile", 160),
    "mixnet_s": ("mobile", 160),
    "tinynet_e": ("mobile", 106),
    "fbnetc_100": ("mobile", 160),
    "lcnet_050": ("mobile", 160),
    "ghostnet_100": ("mobile", 160),
    "ghostnetv2_100": ("mobile", 160),
    "rexnet_100": ("mobile", 160),
    "mobileone_s0": ("mobile", 160),
    "repvgg_a0": ("mobile", 160),
    "repvit_m1": ("mobile", 160),
    "hgnetv2_b0": ("mobile", 160),
    "starnet_s1": ("mobile", 160),
    "repghostnet_050": ("mobile", 160),
    "fasternet_t0": ("mobile", 160),
    "cpubone_nano": ("mobile", 160),
    # modern CNNs / metaformers
    "convnext_atto": ("modern", 160),
    "convnextv2_atto": ("modern", 160),
    "mambaout_femto": ("modern", 160),
    "poolformer_s12": ("modern", 160),
    "fastvit_t8": ("modern", 160),
    "edgenext_xx_small": ("modern", 160),
    "efficientformer_l1": ("modern", 224),
    "efficientformerv2_s0": ("modern", 160),
    "efficientvit_b0": ("modern", 160),
    "efficientvit_m0": ("modern", 160),
    "mobilevit_xxs": ("modern", 160),
    "mobilevitv2_050": ("modern", 160),
    "focalnet_tiny_srf": ("modern", 160),
    "caformer_s18": ("modern", 160),
    "inception_next_atto": ("modern", 160),
    "efficientvim_m1": ("modern", 160),
    "iformer_t": ("modern", 160),
    "lowformer_b0": ("modern", 160),
    "shvit_s1": ("modern", 160),
    "swiftformer_xs": ("modern", 160),
    # MLPs, recurrent
    "mixer_s16_224": ("mlp", 160),
    "resmlp_12_224": ("mlp", 160),
    "gmlp_ti16_224": ("mlp", 160),
    "sequencer2d_s": ("mlp", 160),
    # vision transformers
    "vit_tiny_patch16_224": ("vit", 160),
    "deit_tiny_distilled_patch16_224": ("vit", 160),
    "eva02_tiny_patch14_224": ("vit", 160),
    "vit_small_patch14_reg4_dinov2": ("vit", 168),
    "cait_xxs24_224": ("vit", 160),
    "xcit_nano_12_p16_224": ("vit", 160),
    "convit_tiny": ("vit", 160),
    "pit_ti_224": ("vit", 160),
    "tnt_s_patch16_224": ("vit", 160),
    "crossvit_tiny_240": ("vit", 240),
    "volo_d1_224": ("vit", 160),
    "levit_128s": ("vit", 160),
    "visformer_tiny": ("vit", 160),
    "vit_relpos_small_patch16_224": ("vit", 160),
    "vit_tiny_r_s16_p8_224": ("vit", 160),
    "vitamin_small_224": ("vit", 160),
    "naflexvit_base_patch16_gap": ("vit", 160),
    # windowed / hierarchical transformers, hybrids
    "swin_tiny_patch4_window7_224": ("hier", 160),
    "swinv2_cr_tiny_ns_224": ("hier", 160),
    "swinv2_tiny_window8_256": ("hier", 160),
    "maxvit_pico_rw_256": ("hier", 160),
    "coatnet_nano_rw_224": ("hier", 160),
    "coat_lite_tiny": ("hier", 160),
    "gcvit_xxtiny": ("hier", 160),
    "twins_pcpvt_small": ("hier", 160),
    "twins_svt_small": ("hier", 160),
    "pvt_v2_b0": ("hier", 160),
    "davit_tiny": ("hier", 160),
    "nest_tiny": ("hier", 160),
    "mvitv2_tiny": ("hier", 160),
    "hiera_tiny_224": ("hier", 160),
    "tiny_vit_5m_224": ("hier", 224),
    "nextvit_small": ("hier", 160),
    "botnet26t_256": ("hier", 160),
    "halonet26t": ("hier", 256),
    "lambda_resnet26t": ("hier", 160),
}
# the dynamic-batch subset: one or two models per pattern
DYNAMIC = {
    "resnet18",
    "hrnet_w18_small",
    "mobilenetv3_small_100",
    "efficientnet_b0",
    "convnext_atto",
    "poolformer_s12",
    "efficientformerv2_s0",
    "mobilevit_xxs",
    "vit_tiny_patch16_224",
    "deit_tiny_distilled_patch16_224",
    "eva02_tiny_patch14_224",
    "xcit_nano_12_p16_224",
    "levit_128s",
    "swin_tiny_patch4_window7_224",
    "maxvit_pico_rw_256",
    "coat_lite_tiny",
    "naflexvit_base_patch16_gap",
    "volo_d1_224",
}

# the dynimg subset: ViTs that take dynamic_img_size=True -> patch size
DYNIMG = {
    "vit_tiny_patch16_224": 16,
    "deit_tiny_distilled_patch16_224": 16,
    "vit_small_patch14_reg4_dinov2": 14,
    "eva02_tiny_patch14_224": 14,
    "vitamin_small_224": 16,
}


# ------------------------------------------------------------------ building


def build(name: str, mode: str = "trace") -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """(model, args, args of batch two for the dynamic modes; for dynimg also of another size)."""
    import torch

    sweep_runner.import_torchvision()
    import timm

    _, side = MODELS[name]
    torch.manual_seed(0)
    if mode == "dynimg":
        model = timm.create_model(name, pretrained=False, dynamic_img_size=True).eval()
        patch = DYNIMG[name]
        args = (torch.rand(1, 3, 10 * patch, 10 * patch),)
        other = (torch.rand(2, 3, 8 * patch, 13 * patch),)
        sweep_runner.calibrate_norms(model, (torch.rand(4, 3, 10 * patch, 10 * patch),))
        return model, args, other
    try:
        model = timm.create_model(name, pretrained=False, img_size=side)
    except TypeError:  # the model takes any size and no img_size
        model = timm.create_model(name, pretrained=False)
    model.eval()
    args = (torch.rand(1, 3, side, side),)
    other = (torch.rand(2, 3, side, side),)
    sweep_runner.calibrate_norms(model, (torch.rand(4, 3, side, side),))
    return model, args, other


# ------------------------------------------------------------------ the worker


def worker(name: str, mode: str, exporter: str) -> dict[str, Any]:
    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    result: dict[str, Any] = {"status": "build"}
    t0 = time.perf_counter()
    try:
        model, args, other = build(name, mode)
        with torch.no_grad():
            ref = sweep_runner.flat_tensors(model(*args))
            ref_other = sweep_runner.flat_tensors(model(*other)) if mode != "trace" else []
    except Exception as exc:  # noqa: BLE001 - reported
        result["error"] = sweep_runner.first_line(exc)
        result["traceback"] = traceback.format_exc()[-3000:]
        return result
    options: dict[str, Any] = {"opset_version": 18 if mode == "dynimg" else 17, "input_names": ["x"]}
    if mode == "dynimg":
        options["dynamic_axes"] = {"x": {0: "batch", 2: "height", 3: "width"}}
    elif mode == "dynamic":
        options["dynamic_axes"] = {"x": {0: "batch"}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        t1 = time.perf_counter()
        try:
            with torch.no_grad():
                sweep_runner.export_with(exporter, model, args, path, **options)
        except Exception as exc:  # noqa: BLE001 - reported
            result.update(
                status="export",
                error=sweep_runner.first_line(exc, cause=exporter != "ours"),
                traceback=traceback.format_exc()[-3000:],
            )
            return result
        result["export_seconds"] = round(time.perf_counter() - t1, 2)
        try:
            sess = sweep_runner.unoptimized_session(path)
            runs = [(args, ref)] + ([(other, ref_other)] if mode != "trace" else [])
            for run_args, run_ref in runs:
                feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), sweep_runner.flat_tensors(run_args))}
                outs = [o for o in sess.run(None, feeds) if o is not None]
                status, error, worst = sweep_runner.compare_outputs(run_ref, outs)
                result["max_diff"] = max(result.get("max_diff", 0.0), worst)
                if status != "pass":
                    if run_args is other:
                        error = ("other size: " if mode == "dynimg" else "batch of two: ") + error
                    result.update(status=status, error=error)
                    return result
        except Exception as exc:  # noqa: BLE001 - reported
            result.update(status="ort", error=sweep_runner.first_line(exc), traceback=traceback.format_exc()[-3000:])
            return result
    result["status"] = "pass"
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


# ------------------------------------------------------------------ the driver

TIMEOUT = 300


def run_one(name: str, mode: str, exporter: str) -> dict[str, Any]:
    return sweep_runner.run_worker(__file__, [name, mode, exporter], TIMEOUT)


def _applies(name: str, mode: str) -> bool:
    return mode == "trace" or name in {"dynamic": DYNAMIC, "dynimg": DYNIMG}[mode]


# failures explained in the markdown (model -> why); none is a limitation shared by both exporters
NOTES: dict[str, str] = {
    "cpubone_nano": "ours, when it mismatches: a race in writing the file, not a lowering. Its one transposed "
    "weight above 4 MiB (1536x1600, written in three chunks) gets one staging buffer "
    "(exporter/serialization.py `_Staging`: min(2, number of such weights)), so the next chunk is copied "
    "into the buffer while the current one is written from it; rows 435+ of the weight come out wrong in "
    "about half the runs.",
    "eva02_tiny_patch14_224": "torch's exporter: its scaled_dot_product_attention symbolic is called with "
    "is_causal as a tensor (TypeError); ours passes.",
    "dynimg (vit_tiny, deit_tiny, dinov2, vitamin)": "torch's exporter has no symbolic for the antialiased "
    "bicubic resampling of the position embedding (timm's resample_abs_pos_embed); ours lowers it to Resize-18 "
    "with antialias when the patch grid is known only at run time (before, ours failed too).",
    "volo_d1_224": "torch's exporter: aten::col2im (F.fold) only from opset 18; ours lowers it at 17 (with a "
    "dynamic batch since the reshape before F.fold keeps its export-time sizes; before, ours refused it: "
    "'col2im needs the size of dim 1 at export time').",
    "naflexvit_base_patch16_gap": "torch's exporter has no symbolic for antialiased interpolation "
    "(F.interpolate(mode='bicubic', antialias=True) resizing the position embedding); ours lowers it as two "
    "MatMuls by constant resampling matrices (before that, ours failed alike).",
    "mobilenetv5_300m (not in the table: 300M parameters)": "ours fails, torch's passes: RecursionError in "
    "exporter/cleanup/unused_inputs.py `_known_at_export`, which recurses once per producer from a value that read a graph "
    "input's folded shape; the net is deeper than Python's recursion limit.",
    "halonet26t": "torch's exporter: Tensor.unfold needs a static size it cannot read from the trace; ours passes.",
}


def render(data: dict[str, Any]) -> str:
    res = data["results"]
    names = [n for n in MODELS if n in res] + sorted(n for n in res if n not in MODELS)
    meta = data.get("meta", {})
    lines = [
        "# timm sweep",
        "",
        f"Generated by `python bench/timm_sweep.py` ({meta.get('date', '?')}; {meta.get('versions', '')}). "
        "timm models with random weights (`pretrained=False`, seed 0), batch-norm statistics calibrated on "
        "the input, images 160x160 unless noted; trace and dynamic (batch axis, also run on a batch of "
        "two) at opset 17; dynimg: ViTs built with dynamic_img_size=True, dynamic batch/height/width at opset "
        "18, also run on two images of another size; onnxruntime with graph optimizations off, compared with eager torch (per "
        "output, max |diff| <= 1e-3 (1 + max |ref|)). Cells: ours / torch's TorchScript exporter "
        "(dynamo=False).",
        "",
    ]
    if meta.get("wall_seconds"):
        lines += [
            f"Last full run ({meta.get('full_run_date', '?')}): {meta.get('jobs', '?')} jobs (model x mode x "
            f"exporter), 2 at once, in {meta['wall_seconds']:.0f} s wall on 2 shared cores.",
            "",
        ]
    commits = sorted({r["commit"] for row in res.values() for r in row.values() if "commit" in r})
    if commits:
        lines += [f"Ours measured at commit(s): {', '.join(commits)}.", ""]
    lines += ["| exporter | mode | pass | mismatch | export | ort | timeout/crash | build | not run |"]
    lines += ["|---|---|---|---|---|---|---|---|---|"]
    for e in EXPORTERS:
        for m in MODES:
            st = [res[n].get(f"{m}/{e}", {}).get("status") for n in names if _applies(n, m)]
            lines.append(
                f"| {e} | {m} | {st.count('pass')} | {st.count('mismatch')} | {st.count('export')} | "
                f"{st.count('ort')} | {st.count('timeout') + st.count('crash')} | {st.count('build')} | "
                f"{st.count(None)} |"
            )
    lines += ["", "| model | family | side | " + " | ".join(MODES) + " | first error (ours, else torch's) |"]
    lines += ["|---|---|---|" + "---|" * len(MODES) + "---|"]
    for n in names:
        row = res[n]
        family, side = MODELS.get(n, ("?", 0))
        cells = []
        err = ""
        for m in MODES:
            if not _applies(n, m):
                cells.append("")
                continue
            cells.append(" / ".join(row.get(f"{m}/{e}", {}).get("status", "-") for e in EXPORTERS))
        for e in EXPORTERS:
            for m in MODES:
                r = row.get(f"{m}/{e}", {})
                if not err and r.get("status") not in (None, "pass"):
                    err = f"{m}/{e}: {r.get('error', '')}"
        err = sweep_runner.ANSI.sub("", err).replace("|", "\\|").replace("\n", " ")[:200]
        lines.append(f"| {n} | {family} | {side} | {' | '.join(cells)} | {err} |")
    if NOTES:
        lines += ["", "## Notes on failures", ""]
        lines += [f"- **{n}**: {why}" for n, why in NOTES.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    ns = sweep_runner.arguments(__doc__, RESULTS / "timm_sweep.json", EXPORTERS, MODES)
    if ns.worker:
        res = worker(*ns.worker)
        print(MARK + json.dumps(res), flush=True)
        return
    if ns.list:
        for n, (family, side) in MODELS.items():
            print(f"{n:40s} {family:8s} {side}")
        return
    data = sweep_runner.load(ns.results)
    if ns.render:
        sweep_runner.save(data, ns.results, render)
        return
    names = sweep_runner.selected(ns.models, MODELS)
    import onnxruntime
    import torch

    sweep_runner.import_torchvision()
    import timm

    previous = data.get("meta", {})
    data["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": f"torch {torch.__version__}, timm {timm.__version__}, onnxruntime "
        f"{onnxruntime.__version__}, python {platform.python_version()}",
    }
    jobs = [(n, m, e) for m in ns.modes.split(",") for n in names for e in ns.exporters.split(",") if _applies(n, m)]
    wall = sweep_runner.record_all(data, run_one, jobs, ns.jobs, lambda d: sweep_runner.save(d, ns.results, render))
    # the wall time of a run over every model and mode; a partial run keeps the last full one's
    if ns.models or ns.modes != ",".join(MODES) or ns.exporters != ",".join(EXPORTERS):
        data["meta"].update({k: previous[k] for k in ("wall_seconds", "jobs", "full_run_date") if k in previous})
    else:
        data["meta"].update(wall_seconds=round(wall, 1), jobs=len(jobs), full_run_date=data["meta"]["date"])
    sweep_runner.save(data, ns.results, render)


if __name__ == "__main__":
    main()
