"""Interpolation and grids: upsample_nearest*, upsample linear/bilinear/trilinear/bicubic, F.interpolate
as scripted code records it (__interpolate), affine_grid_generator.

ONNX idioms: opset 9 has Upsample with asymmetric coordinates only, so nearest interpolation is a
Gather of torch's source indices, and linear/cubic modes (static sizes) a weighted sum of Gathers
of torch's taps (``linear_gather``) until Resize-11 (symbolic_opset11); grids are computed with
MatMul over constant base coordinates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


def _nearest_sources(in_size: int, out_size: int, scale: float | None) -> list[int]:
    """torch's nearest source index min(floor(dst * s), in - 1), in float32 like torch, with
    s = 1/scale_factor when a factor was given, else in/out."""
    if scale is not None and scale > 0:
        step = torch.tensor(1.0 / scale, dtype=torch.float32)
    else:
        step = torch.tensor(in_size, dtype=torch.float32) / torch.tensor(out_size, dtype=torch.float32)
    dst = torch.arange(out_size, dtype=torch.float32)
    return torch.clamp(torch.floor(dst * step).to(torch.int64), max=in_size - 1).tolist()


def _nearest_gather(
    g: GraphContext,
    x: Value,
    in_sizes: list[int],
    out_sizes: list[int] | None,
    scales: list[float] | None,
) -> Value:
    """Nearest interpolation as one Gather per resized axis with constant source indices.
    Exact torch indices for any ratio (Upsample-9 refuses scales below 1 in onnxruntime)."""
    spatial = len(in_sizes)
    out = x
    for j in range(spatial):
        scale = scales[j] if scales is not None else None
        size = out_sizes[j] if out_sizes is not None else int(math.floor(in_sizes[j] * scale))  # type: ignore[operator]
        sources = _nearest_sources(in_sizes[j], size, scale)
        if sources == list(range(in_sizes[j])):
            continue
        out = g.op("Gather", out, g.constant(sources), axis=2 + j)
    return out


def interpolation_args(
    x: Value, output_size: Sequence[int] | None, scales: Sequence[float | None] | None
) -> tuple[list[int] | None, list[float] | None]:
    """Per-spatial-axis output sizes and scale factors (either may be None)."""
    spatial = h.known_rank(x, "interpolation") - 2
    scale_list: list[float] | None = None
    if scales is not None and len(scales) > 0 and all(s is not None for s in scales):
        scale_list = [float(s) for s in h.spatial_list(scales, spatial)]  # type: ignore[arg-type]
    out_sizes: list[int] | None = None
    if output_size is not None and len(output_size) > 0:
        out_sizes = h.spatial_list(output_size, spatial)
    if out_sizes is None and scale_list is None:
        raise ValueError("interpolation needs either an output size or scale factors")
    return out_sizes, scale_list


def _nearest_opset9(
    g: GraphContext, x: Value, output_size: Sequence[int] | None, scales: Sequence[float | None] | None
) -> Value:
    """Nearest upsampling before Resize-11.

    With static sizes, one Gather per axis with torch's own source indices: exact for any
    ratio, downsampling included (onnxruntime's Upsample refuses scales below 1). With dynamic
    sizes, Upsample-9 (Resize-10 at opset 10, where Upsample is deprecated) by scale factors,
    which samples floor(dst / scale) like torch.
    """
    out_sizes, scale_list = interpolation_args(x, output_size, scales)
    shape = h.static_shape(x)
    if shape is not None:
        return _nearest_gather(g, x, shape[2:], out_sizes, scale_list)
    if out_sizes is not None or scale_list is None or any(s < 1 for s in scale_list):
        raise NeedsExportTimeValue(
            "nearest interpolation with dynamic input sizes needs opset 11 or higher unless "
            "it upsamples by scale factors (Upsample/Resize-10 take scales >= 1 only)"
        )
    return h.upsample_by_scales(g, x, [1.0, 1.0] + scale_list, "nearest")


def _linear_needs_opset_11(mode: str) -> ValueError:
    return ValueError(
        f"{mode} interpolation needs opset 11 or higher: Upsample-9 and Resize-10 only have "
        "asymmetric coordinates, which differ from torch's half-pixel/align_corners sampling"
    )


def _cubic_weights(t: torch.Tensor) -> list[torch.Tensor]:
    """torch's cubic convolution coefficients (A = -0.75) of the taps at floor(src) - 1 .. + 2."""
    a = -0.75

    def near(x: torch.Tensor) -> torch.Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: torch.Tensor) -> torch.Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(
    in_size: int, out_size: int, scale: float | None, align_corners: bool, cubic: bool, dtype: torch.dtype
) -> list[tuple[list[int], torch.Tensor]]:
    """(source indices, weights) per tap for one axis, as torch's upsample kernels compute them
    (in their compute dtype): src = (dst + 0.5) * step - 0.5 (half-pixel, clamped at 0 for linear)
    or dst * (in - 1) / (out - 1) with align_corners; step is 1/scale_factor when one was given."""
    if align_corners:
        step = torch.tensor((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0, dtype=dtype)
    elif scale is not None and scale > 0:
        step = torch.tensor(1.0 / scale, dtype=dtype)
    else:
        step = torch.tensor(in_size, dtype=dtype) / torch.tensor(out_size, dtype=dtype)
    dst = torch.arange(out_size, dtype=dtype)
    src = dst * step if align_corners else step * (dst + 0.5) - 0.5
    if cubic:
        base = torch.floor(src)
        t = src - base
        index = base.to(torch.int64)
        return [
            (torch.clamp(index + offset, 0, in_size - 1).tolist(), w)
            for offset, w in zip((-1, 0, 1, 2), _cubic_weights(t))
        ]
    if not align_corners:
        src = torch.clamp(src, min=0)
    index = torch.clamp(torch.floor(src).to(torch.int64), max=in_size - 1)
    lam = torch.clamp(src - index.to(dtype), 0, 1)
    upper = torch.where(index < in_size - 1, index + 1, index)
    return [(index.tolist(), 1 - lam), (upper.tolist(), lam)]


def linear_gather(
    g: GraphContext,
    x: Value,
    mode: str,
    output_size: Sequence[int] | None,
    scales: Sequence[float | None] | None,
    align_corners: bool,
) -> Value:
    """Linear or cubic interpolation before Resize-11 (whose half_pixel/align_corners modes
    Upsample-9 and Resize-10 lack), for static input sizes: per resized axis, a Gather of each
    tap's constant source indices times its constant weights, summed, exactly torch's sampling."""
    out_sizes, scale_list = interpolation_args(x, output_size, scales)
    shape = h.static_shape(x)
    if shape is None:
        raise _linear_needs_opset_11(mode)
    spatial = len(shape) - 2
    dtype = torch.float64 if x.dtype == ir.DataType.DOUBLE else torch.float32
    out = x if x.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE) else h.cast(g, x, ir.DataType.FLOAT)
    for j in range(spatial):
        scale = scale_list[j] if scale_list is not None else None
        if out_sizes is not None:
            size = out_sizes[j]
        else:
            size = int(math.floor(shape[2 + j] * scale))  # type: ignore[operator]
        view = [size] + [1] * (spatial - 1 - j)
        total = None
        for sources, weights in _taps(shape[2 + j], size, scale, align_corners, mode == "cubic", dtype):
            weight = g.constant(weights.reshape(view).to(tensors.to_torch_dtype(out.dtype)))
            term = g.op("Mul", g.op("Gather", out, g.constant(sources), axis=2 + j), weight)
            total = term if total is None else g.op("Add", total, term)
        out = total
    return h.cast(g, out, x.dtype) if x.dtype is not None else out


def _linspace_coords(steps: int, align_corners: bool) -> torch.Tensor:
    """Normalized pixel centers of affine_grid along one axis (a single step is 0)."""
    if steps <= 1:
        return torch.zeros(max(steps, 0), dtype=torch.float64)
    coords = torch.linspace(-1.0, 1.0, steps, dtype=torch.float64)
    if not align_corners:
        coords = coords * (steps - 1) / steps
    return coords


def given_scales(*scales: float | None) -> list[float] | None:
    """Per-axis scales of the non-vec overloads, used only when all are given."""
    if any(s is None for s in scales):
        return None
    return [float(s) for s in scales]  # type: ignore[arg-type]


@onnx_symbolic("aten::upsample_nearest1d")
def aten_upsample_nearest1d(
    g: GraphContext, self: Value, output_size: Sequence[int], scales: float | None = None
) -> Value:
    """upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor

    Given scales decide the sampling (torch uses 1/scale, not in/out); the size the shape.
    """
    return _nearest_opset9(g, self, output_size, given_scales(scales))


@onnx_symbolic("aten::upsample_nearest1d.vec")
def aten_upsample_nearest1d_vec(
    g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None
) -> Value:  # noqa: A002
    """upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor (what tracing records)"""
    return _nearest_opset9(g, input, output_size, scale_factors)


@onnx_symbolic("aten::upsample_nearest2d")
def aten_upsample_nearest2d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _nearest_opset9(g, self, output_size, given_scales(scales_h, scales_w))


@onnx_symbolic("aten::upsample_nearest2d.vec")
def aten_upsample_nearest2d_vec(
    g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None
) -> Value:  # noqa: A002
    """upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _nearest_opset9(g, input, output_size, scale_factors)


@onnx_symbolic("aten::upsample_nearest3d")
def aten_upsample_nearest3d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    scales_d: float | None = None,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _nearest_opset9(g, self, output_size, given_scales(scales_d, scales_h, scales_w))


@onnx_symbolic("aten::upsample_nearest3d.vec")
def aten_upsample_nearest3d_vec(
    g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None
) -> Value:  # noqa: A002
    """upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _nearest_opset9(g, input, output_size, scale_factors)


_INTERPOLATE_MODES = {
    "nearest": "nearest",
    "linear": "linear",
    "bilinear": "linear",
    "trilinear": "linear",
    "bicubic": "cubic",
}


def interpolate_args(
    input: Value,  # noqa: A002
    size: Sequence[int] | None,
    scale_factor: Sequence[float] | None,
    mode: str,
    recompute_scale_factor: bool | None,
    antialias: bool,
) -> tuple[str, Sequence[int] | None, Sequence[float] | None]:
    """F.interpolate's arguments as (ONNX-ish mode, size, scales). recompute_scale_factor=True
    makes torch derive the output size and then sample with in/out, not the given factor."""
    if antialias:
        raise ValueError(f"interpolate with antialias=True supports bilinear and bicubic modes only, got {mode!r}")
    if mode not in _INTERPOLATE_MODES:
        raise ValueError(f"interpolate mode {mode!r} is not supported")
    if recompute_scale_factor and scale_factor is not None and size is None:
        shape = h.static_shape(input)
        if shape is None:
            raise NeedsExportTimeValue("recompute_scale_factor=True needs static input sizes")
        factors = h.spatial_list(scale_factor, len(shape) - 2)
        size = [int(math.floor(i * f)) for i, f in zip(shape[2:], factors)]
        scale_factor = None
    return _INTERPOLATE_MODES[mode], size, scale_factor


@onnx_symbolic("aten::__interpolate")
def aten___interpolate(
    g: GraphContext,
    input: Value,  # noqa: A002
    size: Sequence[int] | None = None,
    scale_factor: Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Value:
    """__interpolate(Tensor input, int? size=None, float? scale_factor=None, str mode="nearest", bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor (and the size_list/scale_list overloads)

    Scripted F.interpolate after function substitution. Linear and cubic modes with static
    input sizes are Gathers of torch's taps (linear_gather); Resize does it from opset 11.
    """
    onnx_mode, size, scale_factor = interpolate_args(
        input, size, scale_factor, mode, recompute_scale_factor, antialias and mode == "nearest"
    )
    if antialias:
        return antialias_matmul(g, input, onnx_mode, size, scale_factor, bool(align_corners))
    if onnx_mode != "nearest":
        return linear_gather(g, input, onnx_mode, size, scale_factor, bool(align_corners))
    return _nearest_opset9(g, input, size, scale_factor)


@onnx_symbolic("aten::upsample_linear1d")
def aten_upsample_linear1d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    align_corners: bool,
    scales: float | None = None,
) -> Value:
    """upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor

    Before opset 11 a Gather of torch's taps per axis (linear_gather), for static input sizes.
    """
    return linear_gather(g, self, "linear", output_size, given_scales(scales), align_corners)


@onnx_symbolic("aten::upsample_linear1d.vec")
def aten_upsample_linear1d_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int] | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return linear_gather(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bilinear2d")
def aten_upsample_bilinear2d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    Before opset 11 a Gather of torch's taps per axis (linear_gather), for static input sizes.
    """
    return linear_gather(g, self, "linear", output_size, given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bilinear2d.vec")
def aten_upsample_bilinear2d_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int] | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return linear_gather(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_trilinear3d")
def aten_upsample_trilinear3d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    align_corners: bool,
    scales_d: float | None = None,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor

    Before opset 11 a Gather of torch's taps per axis (linear_gather), for static input sizes.
    """
    return linear_gather(g, self, "linear", output_size, given_scales(scales_d, scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_trilinear3d.vec")
def aten_upsample_trilinear3d_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int] | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return linear_gather(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bicubic2d")
def aten_upsample_bicubic2d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    Before opset 11 a Gather of torch's taps per axis (linear_gather), for static input sizes.
    """
    return linear_gather(g, self, "cubic", output_size, given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bicubic2d.vec")
def aten_upsample_bicubic2d_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int] | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return linear_gather(g, input, "cubic", output_size, scale_factors, align_corners)


_AA_KERNELS = {"linear": "_upsample_bilinear2d_aa", "cubic": "_upsample_bicubic2d_aa"}
_AA_RUN_TIME = (
    "interpolate(antialias=True) with spatial sizes known only at run time needs opset 18 (Resize's "
    "antialias); below it the resampling matrices are constants of the export-time sizes"
)


def _antialias_matrix(
    kernel: str, in_size: int, out_size: int, scale: float | None, align_corners: bool
) -> torch.Tensor:
    """The (in_size, out_size) matrix of torch's antialiased resampling along one axis, from
    torch's own kernel applied to the unit vectors (the kernel is linear and separable): row i
    is where input pixel i goes, so resampling the last axis is ``x @ matrix``."""
    basis = torch.eye(in_size, dtype=torch.float64).reshape(in_size, 1, 1, in_size)
    op = getattr(torch.ops.aten, kernel).default
    return op(basis, [1, out_size], align_corners, None, scale).reshape(in_size, out_size)


def export_time_sizes(output_size: Sequence[int | Value] | Value | None) -> list[int] | None:
    """The output sizes as ints (constant values folded), or an error naming opset 18."""
    if output_size is None:
        return None
    if isinstance(output_size, Value):
        sizes = h.const_ints(output_size)
        if sizes is None:
            raise NeedsExportTimeValue(_AA_RUN_TIME)
        return sizes
    out: list[int] = []
    for v in output_size:
        known = [v] if isinstance(v, int) else h.const_ints(v)
        if known is None or len(known) != 1:
            raise NeedsExportTimeValue(_AA_RUN_TIME)
        out.append(int(known[0]))
    return out


def antialias_matmul(
    g: GraphContext,
    x: Value,
    mode: str,
    output_size: Sequence[int | Value] | Value | None,
    scales: Sequence[float | None] | None,
    align_corners: bool,
) -> Value:
    """F.interpolate(..., antialias=True) (bilinear, bicubic) as two MatMuls by constant
    matrices, at any opset: torch's antialiased kernels widen the filter by the downsampling
    factor and renormalize the weights at the borders, which Resize expresses only from opset
    18 (``antialias``) and not for align_corners; the resampling is linear and separable, so
    with static spatial sizes it is exactly ``H_matrix^T @ x @ W_matrix``, each matrix computed
    by torch's own kernel. N and C may be dynamic."""
    rank = h.known_rank(x, f"interpolate(antialias=True, mode={mode!r})")
    if rank != 4 or mode not in _AA_KERNELS:
        raise ValueError(f"interpolate with antialias=True supports bilinear and bicubic on 4-D input, got {mode!r}")
    in_shape = list(x.shape)[2:] if x.shape is not None else []
    output_size = export_time_sizes(output_size)
    if not all(isinstance(d, int) for d in in_shape):
        raise NeedsExportTimeValue(_AA_RUN_TIME)
    out_sizes, scale_list = interpolation_args(x, output_size, scales)
    in_sizes = [int(d) for d in in_shape]
    dtype = x.dtype if x.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16) else ir.DataType.FLOAT
    out = x if x.dtype == dtype else h.cast(g, x, dtype)
    torch_dtype = tensors.to_torch_dtype(dtype)
    for j, axis in enumerate((3, 2)):
        index = 1 - j  # the spatial index of this axis: width first, then height
        scale = scale_list[index] if scale_list is not None else None
        size = out_sizes[index] if out_sizes is not None else int(math.floor(in_sizes[index] * scale))  # type: ignore[operator]
        matrix = _antialias_matrix(_AA_KERNELS[mode], in_sizes[index], size, scale, align_corners)
        if in_sizes[index] == size and torch.equal(matrix, torch.eye(size, dtype=matrix.dtype)):
            continue
        weight = g.constant(matrix.to(torch_dtype))
        if axis == 3:
            out = g.op("MatMul", out, weight)  # (N, C, H, W) @ (W, W') -> (N, C, H, W')
        else:
            out = g.op("MatMul", g.constant(matrix.t().contiguous().to(torch_dtype)), out)  # (H', H) @ (N, C, H, W')
    return h.cast(g, out, x.dtype) if x.dtype is not None and x.dtype != dtype else out


@onnx_symbolic("aten::_upsample_bilinear2d_aa")
def aten__upsample_bilinear2d_aa(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    F.interpolate(mode="bilinear", antialias=True): two constant MatMuls (antialias_matmul).
    """
    return antialias_matmul(g, self, "linear", output_size, given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::_upsample_bilinear2d_aa.vec")
def aten__upsample_bilinear2d_aa_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return antialias_matmul(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::_upsample_bicubic2d_aa")
def aten__upsample_bicubic2d_aa(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """_upsample_bicubic2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    F.interpolate(mode="bicubic", antialias=True): two constant MatMuls (antialias_matmul).
    """
    return antialias_matmul(g, self, "cubic", output_size, given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::_upsample_bicubic2d_aa.vec")
def aten__upsample_bicubic2d_aa_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """_upsample_bicubic2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return antialias_matmul(g, input, "cubic", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::affine_grid_generator")
def aten_affine_grid_generator(
    g: GraphContext, theta: Value, size: Sequence[int] | Value, align_corners: bool
) -> Value:
    """affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor

    Before AffineGrid (opset 20) the grid is a base grid of homogeneous pixel coordinates
    times theta^T, one MatMul: a constant for a static size, built from the sizes at run time
    otherwise (a size passed as model inputs, as torch's exporter makes a list of Python ints).
    """
    if isinstance(size, Value):
        return _affine_grid_runtime(g, theta, size, align_corners)
    spatial = len(size) - 2
    if spatial not in (2, 3):
        raise ValueError(f"affine_grid_generator needs a 4-D or 5-D size, got {list(size)}")
    dims = list(size[2:])  # (H, W) or (D, H, W)
    axes = [_linspace_coords(n, align_corners) for n in reversed(dims)]  # x (W) first
    mesh = torch.meshgrid(*reversed(axes), indexing="ij")  # over (D,) H, W
    coords = [mesh[spatial - 1 - i] for i in range(spatial)]  # x, y(, z)
    base = torch.stack(coords + [torch.ones(dims, dtype=torch.float64)], dim=-1)
    base = base.reshape(-1, spatial + 1).to(tensors.to_torch_dtype(theta.dtype))
    rows = g.op("MatMul", g.constant(base), g.op("Transpose", theta, perm=[0, 2, 1]))
    return g.op("Reshape", rows, g.constant([size[0]] + dims + [spatial]))


def _affine_grid_runtime(g: GraphContext, theta: Value, size: Value, align_corners: bool) -> Value:
    """The base grid of :func:`aten_affine_grid_generator` for sizes known at run time: each
    axis's normalized pixel centers (:func:`_linspace_coords`, as arithmetic on its size n:
    (2i - (n - 1)) / max(n - 1, 1) with align_corners, else (2i + 1 - n) / n, both 0 for
    n = 1), expanded over the grid and stacked with ones."""
    theta_shape = h.static_shape(theta)
    size_shape = h.static_shape(size)
    if size_shape is not None and len(size_shape) == 1:
        spatial = size_shape[0] - 2
    elif theta_shape is not None and len(theta_shape) == 3:
        spatial = theta_shape[1]
    else:
        raise NeedsExportTimeValue("affine_grid_generator: the number of sizes must be known at export time")
    if spatial not in (2, 3):
        raise ValueError(f"affine_grid_generator needs a 4-D or 5-D size, got {spatial + 2} sizes")
    double = ir.DataType.DOUBLE
    size = h.cast(g, size, ir.DataType.INT64)
    dims = [h.gather_constant(g, size, torch.tensor([i]), 0) for i in range(2, 2 + spatial)]  # (D,) H, W
    grid_shape = g.op("Concat", *dims, axis=0)
    one = g.constant(1.0, double)
    columns = []
    for axis in reversed(range(spatial)):  # x (W) first
        n = h.cast(g, dims[axis], double)
        i = h.cast(g, h.iota(g, dims[axis]), double)
        twice = g.op("Add", i, i)
        if align_corners:
            n_less = g.op("Sub", n, one)
            coords = g.op("Div", g.op("Sub", twice, n_less), g.op("Max", n_less, one))
        else:
            coords = g.op("Div", g.op("Sub", g.op("Add", twice, one), n), n)
        shape = [1] * spatial
        shape[axis] = -1
        columns.append(g.op("Expand", h.reshape(g, coords, shape), grid_shape))
    columns.append(g.op("Expand", g.constant(torch.ones([1] * spatial, dtype=torch.float64)), grid_shape))
    base = g.op("Concat", *[h.unsqueeze(g, c, [spatial]) for c in columns], axis=spatial)
    base = h.cast(g, h.reshape(g, base, [-1, spatial + 1]), theta.dtype or ir.DataType.FLOAT)
    rows = g.op("MatMul", base, g.op("Transpose", theta, perm=[0, 2, 1]))
    batch = h.gather_constant(g, size, torch.tensor([0]), 0)
    return g.op("Reshape", rows, g.op("Concat", batch, *dims, g.constant([spatial]), axis=0))
