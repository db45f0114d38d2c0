"""Breadth sweep over torchvision's models: classification, segmentation, detection, video.

    python bench/torchvision_sweep.py                                   # everything
    python bench/torchvision_sweep.py --exporters ours                  # ours only; keeps torch's results
    python bench/torchvision_sweep.py --models resnet18,fcos --modes trace,script
    python bench/torchvision_sweep.py --list

Every model is built with random weights (``weights=None``, nothing downloaded) and run on a small
input. Every (model, mode, exporter) runs in its own subprocess with a timeout: the model is built
(seeded), run eagerly, exported, loaded in onnxruntime (graph optimizations off, so the comparison
checks the exported semantics) and compared with eager torch. Modes:

- ``trace``: traced, opset 17, static shapes;
- ``script``: ``torch.jit.script(model)``, opset 17 (torchvision writes its models to be scriptable);
- ``dynamic``: traced with a dynamic batch axis (classification, video) or dynamic height/width
  (segmentation, detection), opset 17, then also run on an input of another size;
- ``trace11``: traced at opset 11 (a subset).

Exporters: ``ours`` and ``torchscript`` (torch's TorchScript exporter, ``dynamo=False``, for
comparison). Statuses: ``pass``; ``mismatch`` (exported and ran, outputs differ); ``export`` (the
exporter raised); ``ort`` (onnxruntime refused or failed to run the file); ``timeout``/``crash``;
``build`` (the model could not be built, run or scripted eagerly: a sweep problem, not counted).

torchvision's compiled ops need not load: tests/torchvision_shim.py defines its op schemas with
plain-torch kernels where they are missing. Batch-norm statistics are calibrated on the input
and detection heads get larger random weights than torchvision's initialisation, so activations
do not vanish and scores do not tie (ties make NMS and top-k orders arbitrary).
Results merge into ``bench/results/torchvision_sweep.json``; the markdown beside it is rewritten.
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
MODES = ["trace", "script", "dynamic", "trace11"]
MARK = sweep_runner.MARK

# name -> (family, builder kwargs). Families choose the input and the dynamic axes.
_DET = {"min_size": 96, "max_size": 128}
_RCNN = {
    **_DET,
    "rpn_pre_nms_top_n_test": 100,
    "rpn_post_nms_top_n_test": 40,
    "box_detections_per_img": 20,
    "box_score_thresh": 0.0,
}
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "resnet18": ("cls", {}),
    "resnet50": ("cls", {}),
    "resnext50_32x4d": ("cls", {}),
    "wide_resnet50_2": ("cls", {}),
    "mobilenet_v2": ("cls", {}),
    "mobilenet_v3_small": ("cls", {}),
    "mobilenet_v3_large": ("cls", {}),
    "efficientnet_b0": ("cls", {}),
    "efficientnet_v2_s": ("cls", {}),
    "regnet_y_400mf": ("cls", {}),
    "shufflenet_v2_x1_0": ("cls", {}),
    "squeezenet1_1": ("cls", {}),
    "densenet121": ("cls", {}),
    "googlenet": ("cls", {"aux_logits": False, "init_weights": True}),
    "inception_v3": ("cls80", {"aux_logits": False, "init_weights": True}),
    "mnasnet1_0": ("cls", {}),
    "vgg11": ("cls", {}),
    "alexnet": ("cls", {}),
    "convnext_tiny": ("cls", {}),
    "vit_b_16": ("cls", {"image_size": 64}),
    "swin_t": ("cls", {}),
    "swin_v2_t": ("cls", {}),
    "maxvit_t": ("cls224", {}),
    "fcn_resnet50": ("seg", {"weights_backbone": None, "aux_loss": False}),
    "deeplabv3_mobilenet_v3_large": ("seg", {"weights_backbone": None, "aux_loss": False}),
    "lraspp_mobilenet_v3_large": ("seg", {"weights_backbone": None}),
    "fasterrcnn_mobilenet_v3_large_320_fpn": ("det", {"weights_backbone": None, **_RCNN}),
    "fasterrcnn_resnet50_fpn": ("det", {"weights_backbone": None, **_RCNN}),
    "maskrcnn_resnet50_fpn": ("det", {"weights_backbone": None, **_RCNN}),
    "keypointrcnn_resnet50_fpn": ("det", {"weights_backbone": None, **_RCNN}),
    "retinanet_resnet50_fpn": (
        "det",
        {"weights_backbone": None, **_DET, "topk_candidates": 50, "detections_per_img": 20, "score_thresh": 0.0},
    ),
    "fcos_resnet50_fpn": (
        "det",
        {"weights_backbone": None, **_DET, "topk_candidates": 50, "detections_per_img": 20, "score_thresh": 0.0},
    ),
    "ssdlite320_mobilenet_v3_large": (
        "det",
        {"weights_backbone": None, "topk_candidates": 50, "detections_per_img": 20, "score_thresh": 0.0},
    ),
    "ssd300_vgg16": (
        "det",
        {"weights_backbone": None, "topk_candidates": 50, "detections_per_img": 20, "score_thresh": 0.0},
    ),
    "r3d_18": ("video", {}),
    "r2plus1d_18": ("video", {}),
}
# the opset-11 subset: one model per pattern (plain CNN, depthwise, attention, seg, detection)
TRACE11 = {
    "resnet18",
    "mobilenet_v3_small",
    "efficientnet_b0",
    "vit_b_16",
    "swin_t",
    "lraspp_mobilenet_v3_large",
    "fasterrcnn_mobilenet_v3_large_320_fpn",
    "retinanet_resnet50_fpn",
    "r3d_18",
}


# ------------------------------------------------------------------ building


def _spread_head_scores(model: Any) -> None:
    """torchvision initialises classification heads near zero: with random weights every class
    scores alike and NMS/top-k orders are arbitrary ties. Wider random weights in the heads
    (parameters named like cls/score/logits) make scores distinct."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if (
                any(key in name for key in ("cls", "score", "logits", "objectness", "classification"))
                and param.dim() > 1
            ):
                param.normal_(0, 0.3)


def build(name: str) -> tuple[Any, tuple[Any, ...], tuple[Any, ...], dict[str, dict[int, str]]]:
    """(model, args, other args (another size, for the dynamic mode), dynamic axes)."""
    import torch

    tv = sweep_runner.import_torchvision()
    family, kwargs = MODELS[name]
    torch.manual_seed(0)
    if family in ("cls", "cls80", "cls224"):
        model = getattr(tv.models, name)(weights=None, **kwargs)
        side = {"cls": 64, "cls80": 80, "cls224": 224}[family]
        args = (torch.rand(1, 3, side, side),)
        other = (torch.rand(2, 3, side, side),)
        calibration = (torch.rand(4, 3, side, side),)
        dynamic = {"x": {0: "batch"}}
    elif family == "seg":
        model = getattr(tv.models.segmentation, name)(weights=None, num_classes=5, **kwargs)
        args = (torch.rand(1, 3, 64, 64),)
        other = (torch.rand(1, 3, 48, 80),)
        calibration = (torch.rand(4, 3, 64, 64),)
        dynamic = {"x": {2: "height", 3: "width"}}
    elif family == "video":
        model = getattr(tv.models.video, name)(weights=None)
        args = (torch.rand(1, 3, 4, 32, 32),)
        other = (torch.rand(2, 3, 4, 32, 32),)
        calibration = (torch.rand(4, 3, 4, 32, 32),)
        dynamic = {"x": {0: "batch"}}
    else:
        model = getattr(tv.models.detection, name)(weights=None, num_classes=5, **kwargs)
        _spread_head_scores(model)
        args = ([torch.rand(3, 96, 128)],)
        other = ([torch.rand(3, 112, 96)],)
        calibration = args
        dynamic = {"x": {1: "height", 2: "width"}}
    model.eval()
    sweep_runner.calibrate_norms(model, calibration)
    return model, args, other, dynamic


# ------------------------------------------------------------------ the worker


def worker(name: str, mode: str, exporter: str) -> dict[str, Any]:
    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    result: dict[str, Any] = {"status": "build"}
    t0 = time.perf_counter()
    try:
        model, args, other, dynamic = build(name)
        with torch.no_grad():
            ref = sweep_runner.flat_tensors(model(*args))
            ref_other = sweep_runner.flat_tensors(model(*other)) if mode == "dynamic" else []
        if mode == "script":
            model = torch.jit.script(model)
            with torch.no_grad():
                ref = sweep_runner.flat_tensors(model(*args))
    except Exception as exc:  # noqa: BLE001 - reported
        result["error"] = sweep_runner.first_line(exc)
        result["traceback"] = traceback.format_exc()[-3000:]
        return result
    opset = 11 if mode == "trace11" else 17
    options: dict[str, Any] = {"opset_version": opset, "input_names": ["x"]}
    if mode == "dynamic":
        options["dynamic_axes"] = dynamic
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
            runs = [(args, ref)] + ([(other, ref_other)] if mode == "dynamic" else [])
            for run_args, run_ref in runs:
                feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), sweep_runner.flat_tensors(run_args))}
                # an empty ONNX optional output is torch's None, which flat_tensors leaves out
                outs = [o for o in sess.run(None, feeds) if o is not None]
                status, error, worst = sweep_runner.compare_outputs(run_ref, outs)
                result["max_diff"] = max(result.get("max_diff", 0.0), worst)
                if status != "pass":
                    if run_args is other:
                        error = "other input size: " + error
                    result.update(status=status, error=error)
                    return result
        except Exception as exc:  # noqa: BLE001 - reported
            result.update(status="ort", error=sweep_runner.first_line(exc), traceback=traceback.format_exc()[-3000:])
            return result
    result["status"] = "pass"
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


# ------------------------------------------------------------------ the driver

TIMEOUT = 420


def run_one(name: str, mode: str, exporter: str) -> dict[str, Any]:
    return sweep_runner.run_worker(__file__, [name, mode, exporter], TIMEOUT)


def _applies(name: str, mode: str) -> bool:
    return mode != "trace11" or name in TRACE11


def render(data: dict[str, Any]) -> str:
    res = data["results"]
    names = [n for n in MODELS if n in res] + sorted(n for n in res if n not in MODELS)
    meta = data.get("meta", {})
    lines = [
        "# torchvision sweep",
        "",
        f"Generated by `python bench/torchvision_sweep.py` ({meta.get('date', '?')}; {meta.get('versions', '')}). "
        "Random weights, small inputs; trace/script/dynamic at opset 17, trace11 at opset 11; onnxruntime with "
        "graph optimizations off, compared with eager torch (per output, max |diff| <= 1e-3 (1 + max |ref|): "
        "random-weight networks reach large activations, where float32 sums differ in the last digits). Cells: ours / torch's "
        "TorchScript exporter (dynamo=False).",
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
    lines += ["", "| model | " + " | ".join(MODES) + " | first error (ours, else torch's) |"]
    lines += ["|---|" + "---|" * len(MODES) + "---|"]
    for n in names:
        row = res[n]
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
        lines.append(f"| {n} | {' | '.join(cells)} | {err} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ns = sweep_runner.arguments(__doc__, RESULTS / "torchvision_sweep.json", EXPORTERS, MODES)
    if ns.worker:
        res = worker(*ns.worker)
        print(MARK + json.dumps(res), flush=True)
        return
    if ns.list:
        for n, (family, _) in MODELS.items():
            print(f"{n:40s} {family}")
        return
    data = sweep_runner.load(ns.results)
    if ns.render:
        sweep_runner.save(data, ns.results, render)
        return
    names = sweep_runner.selected(ns.models, MODELS)
    import onnxruntime
    import torch

    data["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": f"torch {torch.__version__}, torchvision 0.28.0 (shimmed ops), onnxruntime "
        f"{onnxruntime.__version__}, python {platform.python_version()}",
    }
    jobs = [(n, m, e) for e in ns.exporters.split(",") for m in ns.modes.split(",") for n in names if _applies(n, m)]
    sweep_runner.record_all(data, run_one, jobs, ns.jobs, lambda d: sweep_runner.save(d, ns.results, render))


if __name__ == "__main__":
    main()
