"""torchvision's custom operators, defined in plain torch when its compiled ``_C`` cannot load.

torchvision registers ``torchvision::nms``, ``torchvision::roi_align`` and friends from its C++
extension; a wheel built for another CUDA/torch (or none at all, as in CI) leaves them undefined
and ``import torchvision`` fails ("operator torchvision::nms does not exist"). Its Python model
code only needs the op *schemas* to exist (and eager runs need kernels): ``define_ops()`` defines
the schemas with ``torch.library`` under the same names and argument names as torchvision's C++
(``torchvision/csrc/ops/*.cpp``), with CPU kernels written in plain torch, so tests can trace and
script models that call ``torch.ops.torchvision.*`` without torchvision, and ``import_torchvision()``
makes torchvision's models usable. The kernels are reference implementations (loops, not speed):
torchvision's own ``_roi_align`` for RoIAlign, a greedy loop for NMS, the kernel's bin arithmetic
for RoIPool, bilinear sampling for deformable convolution.

Used by tests/ and bench/ only; the exporter never imports it.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import torch

__all__ = [
    "SCHEMAS",
    "define_ops",
    "import_torchvision",
    "prepare_for_transformers",
    "nms_reference",
    "roi_align_reference",
    "roi_pool_reference",
    "deform_conv2d_reference",
]

# torchvision/csrc/ops/*.cpp, TORCH_LIBRARY_FRAGMENT(torchvision, m) (SymInt written as int)
SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align": "roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
    "int pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool": "roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
    "int pooled_width) -> (Tensor, Tensor)",
    "ps_roi_align": "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
    "int pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "ps_roi_pool": "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
    "int pooled_width) -> (Tensor, Tensor)",
    "deform_conv2d": "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "int stride_h, int stride_w, int pad_h, int pad_w, int dilation_h, int dilation_w, int groups, "
    "int offset_groups, bool use_mask) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qroi_align": "qroi_align(Tensor input, Tensor rois, float input_scale, int input_zero_point, "
    "float rois_scale, int rois_zero_point, float spatial_scale, int pooled_height, int pooled_width, "
    "int sampling_ratio, bool aligned) -> Tensor",
    "box_iou_rotated": "box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor",
    "_cuda_version": "_cuda_version() -> int",
}

_LIBRARY: torch.library.Library | None = None


# ------------------------------------------------------------------ reference kernels


def nms_reference(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """Greedy NMS: indices of kept boxes (x1, y1, x2, y2) by decreasing score; a box is dropped
    when its IoU with a kept, higher-scoring box exceeds the threshold (torchvision's rule)."""
    order = torch.argsort(scores, descending=True, stable=True)
    boxes = dets[order].to(torch.float64)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep: list[int] = []
    for i in range(len(order)):
        if suppressed[i]:
            continue
        keep.append(i)
        lt = torch.maximum(boxes[i, :2], boxes[:, :2])
        rb = torch.minimum(boxes[i, 2:], boxes[:, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, 0] * wh[:, 1]
        iou = inter / (area[i] + area - inter)
        suppressed |= iou > iou_threshold
    return order[torch.tensor(keep, dtype=torch.long)]


def roi_align_reference(
    input: torch.Tensor,  # noqa: A002 - torchvision's schema name
    rois: torch.Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
) -> torch.Tensor:
    """torchvision's pure-torch RoIAlign (``torchvision.ops.roi_align._roi_align``), copied in
    loop form so this module does not need torchvision: average of bilinear samples per bin."""
    num_rois, channels = rois.shape[0], input.shape[1]
    height, width = input.shape[-2:]
    out = input.new_zeros(num_rois, channels, pooled_height, pooled_width)
    offset = 0.5 if aligned else 0.0
    for k in range(num_rois):
        batch = int(rois[k, 0])
        x1, y1, x2, y2 = (float(v) * spatial_scale - offset for v in rois[k, 1:])
        roi_w, roi_h = x2 - x1, y2 - y1
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / pooled_height, roi_w / pooled_width
        grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_h / pooled_height)
        grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_w / pooled_width)
        count = max(grid_h * grid_w, 1)
        plane = input[batch]
        for ph in range(pooled_height):
            for pw in range(pooled_width):
                acc = input.new_zeros(channels)
                for iy in range(grid_h):
                    y = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                    for ix in range(grid_w):
                        x = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                        acc = acc + _bilinear(plane, y, x, height, width)
                out[k, :, ph, pw] = acc / count
    return out


def _bilinear(plane: torch.Tensor, y: float, x: float, height: int, width: int) -> torch.Tensor:
    """The RoIAlign kernels' bilinear sample of a (C, H, W) plane: zero outside [-1, H] x [-1, W],
    coordinates clamped at 0 and at the last row/column."""
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return plane.new_zeros(plane.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (
        hy * hx * plane[:, y_low, x_low]
        + hy * lx * plane[:, y_low, x_high]
        + ly * hx * plane[:, y_high, x_low]
        + ly * lx * plane[:, y_high, x_high]
    )


def roi_pool_reference(
    input: torch.Tensor,  # noqa: A002 - torchvision's schema name
    rois: torch.Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoIPool as torchvision's CPU kernel computes it: rounded roi corners, bins of
    floor/ceil bounds clipped to the image, max per bin (0 for an empty bin), and the argmax
    (flat index in the plane, -1 for an empty bin)."""
    num_rois, channels = rois.shape[0], input.shape[1]
    height, width = input.shape[-2:]
    out = input.new_zeros(num_rois, channels, pooled_height, pooled_width)
    argmax = torch.full((num_rois, channels, pooled_height, pooled_width), -1, dtype=torch.int32)
    for k in range(num_rois):
        batch = int(rois[k, 0])
        x1, y1, x2, y2 = (round(float(v) * spatial_scale) for v in rois[k, 1:])
        roi_w, roi_h = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        bin_h, bin_w = roi_h / pooled_height, roi_w / pooled_width
        for ph in range(pooled_height):
            h0 = min(max(math.floor(ph * bin_h) + y1, 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), height)
            for pw in range(pooled_width):
                w0 = min(max(math.floor(pw * bin_w) + x1, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), width)
                if h1 <= h0 or w1 <= w0:
                    continue
                window = input[batch, :, h0:h1, w0:w1].reshape(channels, -1)
                best, where = window.max(dim=1)
                out[k, :, ph, pw] = best
                argmax[k, :, ph, pw] = ((where // (w1 - w0) + h0) * width + where % (w1 - w0) + w0).to(torch.int32)
    return out, argmax


def deform_conv2d_reference(
    input: torch.Tensor,  # noqa: A002 - torchvision's schema name
    weight: torch.Tensor,
    offset: torch.Tensor,
    mask: torch.Tensor,
    bias: torch.Tensor,
    stride_h: int,
    stride_w: int,
    pad_h: int,
    pad_w: int,
    dilation_h: int,
    dilation_w: int,
    groups: int,
    offset_groups: int,
    use_mask: bool,
) -> torch.Tensor:
    """Deformable convolution (v1, and v2 with ``use_mask``): every kernel tap samples the input
    bilinearly at its regular position plus its learned (dy, dx) offset (zero outside the image),
    times its mask, then an ordinary grouped convolution sums the taps."""
    batch, in_ch, height, width = input.shape
    out_ch, _, kh, kw = weight.shape
    out_h, out_w = offset.shape[-2:]
    taps = kh * kw
    off = offset.reshape(batch, offset_groups, taps, 2, out_h, out_w)
    base_y = (torch.arange(out_h) * stride_h - pad_h).reshape(1, 1, out_h, 1).to(input.dtype)
    base_x = (torch.arange(out_w) * stride_w - pad_w).reshape(1, 1, 1, out_w).to(input.dtype)
    tap_y = (torch.arange(kh).repeat_interleave(kw) * dilation_h).reshape(1, taps, 1, 1).to(input.dtype)
    tap_x = (torch.arange(kw).repeat(kh) * dilation_w).reshape(1, taps, 1, 1).to(input.dtype)
    per_group = in_ch // offset_groups
    columns = []
    for grp in range(offset_groups):
        y = base_y + tap_y + off[:, grp, :, 0]  # (N, taps, oh, ow)
        x = base_x + tap_x + off[:, grp, :, 1]
        sampled = _bilinear_zero(input[:, grp * per_group : (grp + 1) * per_group], y, x)  # (N, c, taps, oh, ow)
        if use_mask:
            m = mask.reshape(batch, offset_groups, taps, out_h, out_w)[:, grp]
            sampled = sampled * m.unsqueeze(1)
        columns.append(sampled)
    cols = torch.cat(columns, dim=1)  # (N, C, taps, oh, ow)
    cols = cols.reshape(batch, groups, in_ch // groups * taps, out_h * out_w)
    w = weight.reshape(groups, out_ch // groups, in_ch // groups * taps)
    out = torch.einsum("gok,ngkp->ngop", w, cols).reshape(batch, out_ch, out_h, out_w)
    return out + bias.reshape(1, -1, 1, 1)


def _bilinear_zero(x: torch.Tensor, y: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    """Bilinear samples of (N, C, H, W) at float positions (N, T, oh, ow), corners outside the
    image contributing zero (deformable convolution's rule) -> (N, C, T, oh, ow)."""
    n, c, height, width = x.shape
    y0, x0 = torch.floor(y), torch.floor(xs)
    out = x.new_zeros(n, c, *y.shape[1:])
    flat = x.reshape(n, c, height * width)
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            weight = (1 - (y - yy).abs()) * (1 - (xs - xx).abs())
            inside = (yy >= 0) & (yy < height) & (xx >= 0) & (xx < width) & (y > -1) & (y < height)
            inside &= (xs > -1) & (xs < width)
            index = (yy.clamp(0, height - 1) * width + xx.clamp(0, width - 1)).long().reshape(n, 1, -1)
            values = torch.gather(flat, 2, index.expand(n, c, -1)).reshape(out.shape)
            out = out + values * (weight * inside).unsqueeze(1)
    return out


def _position_sensitive_unsupported(*args: object) -> tuple[torch.Tensor, torch.Tensor]:
    raise NotImplementedError("the torchvision shim has no kernel for position-sensitive RoI ops")


def _quantized_unsupported(*args: object) -> torch.Tensor:
    raise NotImplementedError("the torchvision shim has no kernel for quantized or rotated-box torchvision ops")


def _cuda_version() -> int:
    return -1


def _roi_align_kernel(
    input: torch.Tensor,  # noqa: A002 - torchvision's schema name
    rois: torch.Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
) -> torch.Tensor:
    """torchvision's vectorised ``_roi_align`` (uncompiled) once torchvision is imported (models
    pool thousands of boxes), else the loop above."""
    module = sys.modules.get("torchvision.ops.roi_align")
    vectorised = getattr(getattr(module, "_roi_align", None), "__wrapped__", None)
    fn = vectorised if vectorised is not None else roi_align_reference
    return fn(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


_KERNELS = {
    "nms": nms_reference,
    "roi_align": _roi_align_kernel,
    "roi_pool": roi_pool_reference,
    "deform_conv2d": deform_conv2d_reference,
    "ps_roi_align": _position_sensitive_unsupported,
    "ps_roi_pool": _position_sensitive_unsupported,
    "qnms": _quantized_unsupported,
    "qroi_align": _quantized_unsupported,
    "box_iou_rotated": _quantized_unsupported,
    "_cuda_version": _cuda_version,
}


# ------------------------------------------------------------------ registration


def _compiled_ops_load() -> bool:
    """Whether torchvision's own ``_C`` extension loads (then its ops are the real ones)."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    for folder in spec.submodule_search_locations:
        for lib in Path(folder).glob("_C*.so"):
            try:
                torch.ops.load_library(str(lib))
            except (OSError, RuntimeError):
                return False
            return True
    return False


def _defined(name: str) -> bool:
    try:
        getattr(torch.ops.torchvision, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def define_ops() -> bool:
    """Make ``torch.ops.torchvision.*`` exist: torchvision's compiled ops when they load, else the
    schemas above with the plain-torch kernels. Returns True when the shim's kernels are used."""
    global _LIBRARY
    if _LIBRARY is not None:
        return True
    if _defined("nms") or _compiled_ops_load():
        return False
    _LIBRARY = torch.library.Library("torchvision", "FRAGMENT")  # noqa: TOR901 - kept alive for the session
    for name, schema in SCHEMAS.items():
        _LIBRARY.define(schema)
        _LIBRARY.impl(name, _KERNELS[name], "CompositeExplicitAutograd")
    return True


def _has_ops() -> bool:
    """torchvision.extension._has_ops replacement: the ops exist (defined by the shim)."""
    return True


class _Placeholder:
    """Any attribute of the Pillow stand-in (an image type in an annotation, a constant)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("Pillow is not installed (a stand-in module was imported for torchvision)")

    def __class_getitem__(cls, item: object) -> type:
        return cls


def _stub_pillow() -> None:
    """torchvision imports Pillow at import time (datasets, transforms) but its models never
    use it; where Pillow is missing, a stand-in whose every attribute is a placeholder lets the
    import go through."""
    if importlib.util.find_spec("PIL") is not None:
        return

    def attribute(name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder

    package = ModuleType("PIL")
    package.__path__ = []  # type: ignore[attr-defined]
    package.__version__ = "0.0"  # type: ignore[attr-defined]
    package.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules["PIL"] = package
    for sub in ("Image", "ImageOps", "ImageEnhance", "ImageColor", "ImageDraw", "ImageFont"):
        module = ModuleType(f"PIL.{sub}")
        module.__getattr__ = attribute  # type: ignore[method-assign]
        setattr(package, sub, module)
        sys.modules[f"PIL.{sub}"] = module


def import_torchvision() -> ModuleType:
    """``import torchvision`` with its ops defined; after the shim defined them, torchvision's
    ``_has_ops`` is patched to say so (its Python paths then call ``torch.ops.torchvision.*``,
    which is what traced and scripted models record)."""
    shimmed = define_ops()
    _stub_pillow()
    import torchvision
    import torchvision.extension
    import torchvision.ops.roi_align

    if shimmed:  # (torchvision.ops.roi_align is the function: its module is patched by name)
        torchvision.extension._has_ops = _has_ops
        sys.modules["torchvision.ops.roi_align"]._has_ops = _has_ops
    return torchvision


def prepare_for_transformers() -> None:
    """transformers imports torchvision (transforms) whenever Pillow is installed, and an
    ``import torchvision`` whose compiled ops cannot load (a CUDA wheel beside a CPU torch)
    raises RuntimeError, not ImportError: every transformers model then fails to build. Where
    both are installed, torchvision is imported here first, its ops defined by the shim."""
    if importlib.util.find_spec("PIL") is None or importlib.util.find_spec("torchvision") is None:
        return
    import_torchvision()
