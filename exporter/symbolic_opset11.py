"""Opset 11: what changes for the base symbolics.

ONNX changes at opset 11 that this module reacts to:
- Unique appears: torch.unique and unique_dim become exportable (no ONNX form before).
- Resize gains coordinate_transformation_mode (half_pixel, align_corners, pytorch_half_pixel)
  and cubic interpolation: every interpolate mode and align_corners now matches torch, where
  Upsample-9/Resize-10 only had asymmetric coordinates.
- CumSum appears (cumsum and cumulative_trapezoid of a run-time length; the packed-row offsets of
  _pad_packed_sequence and the packed lstm/gru/rnn .data overloads, whose symbolics in
  opset9/recurrent.py are registered at 11 too: only h.exclusive_cumsum changes); Det appears
  (det, logdet, linalg_det).
- Range, negative Gather indices, Slice/Squeeze/Pad/Clip with input bounds (handled in
  symbolic_helper), Round, ScatterElements/GatherElements, sequence ops.
- Sequence ops appear: an export-time list of tensors read at a run-time index
  (aten::__getitem__) is a sequence instead of a chain of Ifs; split/chunk into a count known
  only at run time (symbolic_helper.split_to_sequence).
- Pad takes amounts computed at run time (symbolic_helper.pad_run_time): pad_sequence becomes
  exportable (registered at 11 in opset9/splitting.py).
- Range appears: scaled_dot_product_attention builds the is_causal mask of run-time sequence
  lengths; repeat_interleave takes counts known only at run time (with CumSum).
- Round appears (aten::round); GatherElements appears (aten::gather and take_along_dim at any shape,
  searchsorted with a sorter); Gather takes negative indices (aten::select with a negative index on a
  dynamic dim).
- TopK gains largest/sorted and integer inputs: topk, sort, argsort, msort, median, nanmedian
  and kthvalue find the smallest directly, keep integers exact, and read NaN-ordered values
  back with GatherElements at any shape; a scripted list's ``l.sort()`` (aten::sort.int/.float/.bool) finds the smallest
  directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import (
    arithmetic,
    attention,
    cumulative,
    gather_scatter,
    indexing,
    interpolation,
    reductions,
    repeat_pad,
    script_lists,
    sorting,
)

Value = ir.Value


def _unique_input(g: GraphContext, x: Value) -> Value:
    """onnxruntime's Unique has float, double, int8, int64 and string kernels only."""
    if x.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.INT8, ir.DataType.INT64):
        return x
    if h.is_floating(x):
        return h.cast(g, x, ir.DataType.FLOAT)
    return h.cast(g, x, ir.DataType.INT64)


def _resize_sizes(g: GraphContext, x: Value, out_sizes: list[int]) -> Value:
    """Full-rank sizes input of Resize: N and C from the input, then the spatial sizes."""
    shape = h.static_shape(x)
    if shape is not None:
        return g.constant(shape[:2] + out_sizes)
    leading = h.slice_static(g, g.op("Shape", x), [0], [0], [2])
    return g.op("Concat", leading, g.constant(out_sizes), axis=0)


def _resize(
    g: GraphContext,
    x: Value,
    mode: str,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    scales: Sequence[float | None] | None,
    align_corners: bool | None,
    antialias: bool = False,
) -> Value:
    """Resize-11+ with torch's sampling; ``mode`` is nearest, linear or cubic. Output sizes
    computed at run time (scripted code resizing to ``int(h * scale)``) are Resize's sizes input.

    An output size computed at run time (traced code sizing by a tensor scale, as torchvision's
    detection transform does) is Resize's sizes input; torch then samples with in/out ratios,
    which is what Resize does with sizes.

    torch's nearest source is floor(dst * in/out), or floor(dst / scale) when a factor was
    given: asymmetric + floor. Linear with align_corners=False is half_pixel (torch clamps
    negative sources to 0, as onnxruntime does; pytorch_half_pixel would differ for an output
    of size 1), align_corners=True is 'align_corners'. Cubic uses torch's A=-0.75.
    """
    if isinstance(output_size, Value):
        return _resize_to_run_time_size(g, x, mode, output_size, bool(align_corners), antialias)
    if output_size and any(isinstance(v, Value) for v in output_size):
        return _resize_to_run_time_size(g, x, mode, g.list_to_value(list(output_size)), bool(align_corners), antialias)
    out_sizes, scale_list = interpolation.interpolation_args(x, output_size, scales)  # type: ignore[arg-type]
    attrs = _resize_attributes(mode, bool(align_corners), antialias)
    if out_sizes is not None and scale_list is not None:
        # both given (the non-vec overloads): torch samples with the scales, so keep them
        # when they produce the requested size, which is the usual case
        shape = h.static_shape(x)
        if shape is not None and all(math.floor(i * sc) == o for i, sc, o in zip(shape[2:], scale_list, out_sizes)):
            out_sizes = None
    empty = g.constant(torch.empty(0, dtype=torch.float32))  # roi (and scales with sizes)
    if out_sizes is not None:
        inputs = [empty, empty, _resize_sizes(g, x, out_sizes)]
    else:
        assert scale_list is not None
        inputs = [empty, g.constant([1.0, 1.0] + scale_list, ir.DataType.FLOAT)]
    return g.op("Resize", x, *inputs, **attrs)


@onnx_symbolic("aten::_unique2", opset=11)
def aten__unique2(
    g: GraphContext,
    self: Value,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,  # noqa: A002
) -> tuple[Value, Value, Value]:
    """_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)

    Unique arrives at opset 11. torch sorts even with sorted=False, so Unique always sorts.
    Outputs not asked for are empty, as in torch.
    """
    del sorted
    flat = g.op("Reshape", _unique_input(g, self), g.constant([-1]))
    values, _, inverse, counts = g.op("Unique", flat, sorted=1, num_outputs=4)
    values = h.data_dependent(g, h.cast(g, values, self.dtype), 0)
    inverse = g.op("Reshape", inverse, h.shape_of(g, self)) if return_inverse else h.empty_int64(g)
    counts = h.data_dependent(g, counts, 2) if return_counts else h.empty_int64(g)
    return values, inverse, counts


@onnx_symbolic("aten::_unique", opset=11)
def aten__unique(
    g: GraphContext,
    self: Value,
    sorted: bool = True,
    return_inverse: bool = False,  # noqa: A002
) -> tuple[Value, Value]:
    """_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor): see _unique2"""
    values, inverse, _ = aten__unique2(g, self, sorted, return_inverse, False)
    return values, inverse


@onnx_symbolic("aten::unique_dim", opset=11)
def aten_unique_dim(
    g: GraphContext,
    self: Value,
    dim: int,
    sorted: bool = True,  # noqa: A002
    return_inverse: bool = False,
    return_counts: bool = False,
) -> tuple[Value, Value, Value]:
    """unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)

    Unique with an axis (opset 11) sorts the slices lexicographically, as torch does.
    """
    del sorted
    rank = h.known_rank(self, "unique_dim")
    dim = h.normalize_dim(dim, rank)
    values, _, inverse, counts = g.op("Unique", _unique_input(g, self), axis=dim, sorted=1, num_outputs=4)
    values = h.cast(g, values, self.dtype)
    shape = [None if a == dim else s for a, s in enumerate(self.shape)] if self.shape is not None else None
    if shape is not None:
        values.shape = ir.Shape(shape)
    inverse = inverse if return_inverse else h.empty_int64(g)
    counts = h.data_dependent(g, counts, 2) if return_counts else h.empty_int64(g)
    return values, inverse, counts


@onnx_symbolic("aten::upsample_nearest1d", opset=11)
def aten_upsample_nearest1d_11(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    scales: float | None = None,
) -> Value:
    """upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor

    Resize-11 asymmetric + floor reproduces torch's source index, also for dynamic sizes.
    """
    return _resize(g, self, "nearest", output_size, interpolation.given_scales(scales), None)


@onnx_symbolic("aten::upsample_nearest1d.vec", opset=11)
def aten_upsample_nearest1d_vec_11(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_nearest2d", opset=11)
def aten_upsample_nearest2d_11(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _resize(g, self, "nearest", output_size, interpolation.given_scales(scales_h, scales_w), None)


@onnx_symbolic("aten::upsample_nearest2d.vec", opset=11)
def aten_upsample_nearest2d_vec_11(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_nearest3d", opset=11)
def aten_upsample_nearest3d_11(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    scales_d: float | None = None,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _resize(g, self, "nearest", output_size, interpolation.given_scales(scales_d, scales_h, scales_w), None)


@onnx_symbolic("aten::upsample_nearest3d.vec", opset=11)
def aten_upsample_nearest3d_vec_11(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_linear1d", opset=11)
def aten_upsample_linear1d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    align_corners: bool,
    scales: float | None = None,
) -> Value:
    """upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor

    From opset 11: Upsample-9/Resize-10 only sample at asymmetric coordinates, never torch's
    half-pixel or align_corners positions.
    """
    return _resize(g, self, "linear", output_size, interpolation.given_scales(scales), align_corners)


@onnx_symbolic("aten::upsample_linear1d.vec", opset=11)
def aten_upsample_linear1d_vec(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bilinear2d", opset=11)
def aten_upsample_bilinear2d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor (from opset 11, see upsample_linear1d)"""
    return _resize(g, self, "linear", output_size, interpolation.given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bilinear2d.vec", opset=11)
def aten_upsample_bilinear2d_vec(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_trilinear3d", opset=11)
def aten_upsample_trilinear3d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    align_corners: bool,
    scales_d: float | None = None,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor (from opset 11)"""
    return _resize(
        g, self, "linear", output_size, interpolation.given_scales(scales_d, scales_h, scales_w), align_corners
    )


@onnx_symbolic("aten::upsample_trilinear3d.vec", opset=11)
def aten_upsample_trilinear3d_vec(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bicubic2d", opset=11)
def aten_upsample_bicubic2d(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    Resize cubic with cubic_coeff_a=-0.75 (torch's A) from opset 11, the first with cubic.
    """
    return _resize(g, self, "cubic", output_size, interpolation.given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bicubic2d.vec", opset=11)
def aten_upsample_bicubic2d_vec(
    g: GraphContext,
    input: Value,
    output_size: Sequence[int] | Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:  # noqa: A002
    """upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "cubic", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::__interpolate", opset=11)
def aten___interpolate_11(
    g: GraphContext,
    input: Value,  # noqa: A002
    size: Sequence[int] | Value | None = None,
    scale_factor: Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Value:
    """__interpolate(Tensor input, int? size=None, float? scale_factor=None, str mode="nearest", bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor

    Every mode through Resize-11 (align_corners=None means False, as in torch). A size known
    only at run time (``size=(int(y.size(0)), int(y.size(1)))`` scripted) is Resize's sizes
    input, completed with the input's N and C.
    """
    if isinstance(size, Value):
        if antialias:
            raise NeedsExportTimeValue("interpolate with antialias=True needs the output size at export time")
        onnx_mode, _, _ = interpolation.interpolate_args(input, None, None, mode, None, antialias)
        return _resize_to_run_time_size(g, input, onnx_mode, size, bool(align_corners))
    onnx_mode, size, scale_factor = interpolation.interpolate_args(
        input, size, scale_factor, mode, recompute_scale_factor, antialias and mode == "nearest"
    )
    if antialias:
        return interpolation.antialias_matmul(g, input, onnx_mode, size, scale_factor, bool(align_corners))
    return _resize(g, input, onnx_mode, size, scale_factor, bool(align_corners))


def _resize_attributes(mode: str, align_corners: bool, antialias: bool = False) -> dict[str, object]:
    """Resize attributes that sample as torch's interpolate does (see ``_resize``). torch's
    antialiased kernels (Resize-18's ``antialias``, half-pixel only) renormalize the taps inside
    the image (``exclude_outside``) and use the cubic A=-0.5."""
    if antialias:
        attrs_aa: dict[str, object] = {
            "mode": mode,
            "coordinate_transformation_mode": "half_pixel",
            "antialias": 1,
            "exclude_outside": 1,
        }
        if mode == "cubic":
            attrs_aa["cubic_coeff_a"] = -0.5
        return attrs_aa
    if mode == "nearest":
        return {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    attrs: dict[str, object] = {
        "mode": mode,
        "coordinate_transformation_mode": "align_corners" if align_corners else "half_pixel",
    }
    if mode == "cubic":
        attrs["cubic_coeff_a"] = -0.75
    return attrs


def _resize_to_run_time_size(
    g: GraphContext, x: Value, mode: str, size: Value, align_corners: bool, antialias: bool = False
) -> Value:
    """Resize to spatial sizes computed at run time: one size for every spatial axis (a 0-d or
    one-item ``size``) or one per axis, after N and C of ``x``; sampling as in ``_resize``."""
    spatial = h.known_rank(x, "interpolate") - 2
    size = h.cast(g, g.op("Reshape", size, g.constant([-1])), ir.DataType.INT64)
    if size.shape is not None and size.shape[0] == 1 and spatial > 1:
        size = g.op("Expand", size, g.constant([spatial]))
    leading = h.slice_static(g, g.op("Shape", x), [0], [0], [2])
    sizes = g.op("Concat", leading, size, axis=0)
    attrs = _resize_attributes(mode, align_corners, antialias)
    empty = g.constant(torch.empty(0, dtype=torch.float32))
    out = g.op("Resize", x, empty, empty, sizes, **attrs)
    if out.shape is None:
        out.shape = ir.Shape([None] * (spatial + 2))
    return out


@onnx_symbolic("aten::cumsum", opset=11)
def aten_cumsum_11(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    CumSum; it has no float16 kernel before opset 14, and torch accumulates halves in float32
    anyway, so halves are summed in float32 and cast back.
    """
    x, out_dtype = reductions.cumulative_operand(g, self, dtype)
    if h.rank_of(x) == 0:
        return h.cast(g, x, out_dtype)
    out = g.op("CumSum", x, g.constant(dim))
    return h.cast(g, out, out_dtype)


@onnx_symbolic("aten::cumulative_trapezoid.x", opset=11)
def aten_cumulative_trapezoid_x_11(g: GraphContext, y: Value, x: Value, dim: int = -1) -> Value:
    """cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor: CumSum, at any size"""
    return cumulative.cumulative_trapezoid_with(g, y, x, 1.0, dim, aten_cumsum_11)


@onnx_symbolic("aten::cumulative_trapezoid.dx", opset=11)
def aten_cumulative_trapezoid_dx_11(g: GraphContext, y: Value, dx: float = 1.0, dim: int = -1) -> Value:
    """cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor: CumSum, at any size"""
    return cumulative.cumulative_trapezoid_with(g, y, None, dx, dim, aten_cumsum_11)


# ============================================================================================
# Determinants
# ============================================================================================


@onnx_symbolic("aten::linalg_det", opset=11)
def aten_linalg_det(g: GraphContext, A: Value) -> Value:  # noqa: N803 - schema name
    """linalg_det(Tensor A) -> Tensor

    Det exists from opset 11; before it no op sequence computes a determinant of any size.
    """
    return g.op("Det", A)


@onnx_symbolic("aten::det", opset=11)
def aten_det(g: GraphContext, self: Value) -> Value:
    """det(Tensor self) -> Tensor (Det is opset 11)"""
    return g.op("Det", self)


@onnx_symbolic("aten::logdet", opset=11)
def aten_logdet(g: GraphContext, self: Value) -> Value:
    """logdet(Tensor self) -> Tensor

    log(det): NaN for a negative determinant and -inf for zero, as in torch. Det is opset 11.
    """
    return g.op("Log", g.op("Det", self))


def _topk_11(g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool) -> tuple[Value, Value]:
    """TopK with largest/sorted and integer inputs (small integers widened to int64); float
    values are read back by index (see sorting.topk_key). Ties come lowest index first."""
    rank = h.known_rank(x, "topk")
    dim = h.normalize_dim(dim, rank)
    work = sorting.topk_work(g, x, native_integers=True)
    key = sorting.topk_key(g, x, work, negate=False, read_back=h.is_floating(x))
    values, indices = h.topk(g, key, k, dim, largest=int(largest), sorted=int(sorted_))
    sorting.set_topk_types(x, key, values, indices, k, dim)
    if h.is_floating(x):
        values = g.op("GatherElements", work, indices, axis=dim)
    return h.cast(g, values, x.dtype), indices


@onnx_symbolic("aten::topk", opset=11)
def aten_topk_11(
    g: GraphContext,
    self: Value,
    k: int | Value,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"""
    return _topk_11(g, self, k, dim, largest, sorted)


@onnx_symbolic("aten::sort", opset=11)
def aten_sort_11(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool | None = None
) -> tuple[Value, Value]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices) (and .stable)

    NaN sorts last ascending and first descending, as in torch, at any shape.
    """
    del stable
    return sorting.sort_with(g, self, dim, descending, _topk_11)


@onnx_symbolic("aten::argsort", opset=11)
def aten_argsort_11(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False
) -> Value:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor (and .stable): the
    indices of aten::sort"""
    return aten_sort_11(g, self, dim, descending, stable)[1]


@onnx_symbolic("aten::median", opset=11)
def aten_median_11(g: GraphContext, self: Value) -> Value:
    """median(Tensor self) -> Tensor: integers sort exactly (no detour through double)"""
    return sorting.median_with(g, self, None, False, _topk_11, ignore_nan=False)[0]


@onnx_symbolic("aten::median.dim", opset=11)
def aten_median_dim_11(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices):
    integers sort exactly"""
    return sorting.median_with(g, self, dim, keepdim, _topk_11, ignore_nan=False)


@onnx_symbolic("aten::nanmedian", opset=11)
def aten_nanmedian_11(g: GraphContext, self: Value) -> Value:
    """nanmedian(Tensor self) -> Tensor: integers sort exactly"""
    return sorting.median_with(g, self, None, False, _topk_11, ignore_nan=True)[0]


@onnx_symbolic("aten::nanmedian.dim", opset=11)
def aten_nanmedian_dim_11(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices):
    integers sort exactly"""
    return sorting.median_with(g, self, dim, keepdim, _topk_11, ignore_nan=True)


@onnx_symbolic("aten::kthvalue", opset=11)
def aten_kthvalue_11(
    g: GraphContext, self: Value, k: int | Value, dim: int = -1, keepdim: bool = False
) -> tuple[Value, Value]:
    """kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices):
    integers sort exactly"""
    return sorting.kthvalue_with(g, self, k, dim, keepdim, _topk_11)


@onnx_symbolic("aten::msort", opset=11)
def aten_msort_11(g: GraphContext, self: Value) -> Value:
    """msort(Tensor self) -> Tensor: integers sort exactly"""
    return aten_sort_11(g, self, 0)[0]


def _list_topk_11(
    g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool
) -> tuple[Value, Value]:
    """TopK of a list's stacked numbers, finding the smallest directly (largest=0)."""
    return h.topk(g, x, k, dim, largest=int(largest), sorted=int(sorted_))


@onnx_symbolic("aten::sort.int", opset=11)
@onnx_symbolic("aten::sort.float", opset=11)
@onnx_symbolic("aten::sort.bool", opset=11)
def aten_sort_list_11(g: GraphContext, self: object, reverse: bool = False) -> None:
    """sort.int(int[](a!) self, bool reverse=False) -> (): ``l.sort()`` in place; numbers known
    only at run time go through one TopK with largest/sorted."""
    return script_lists.sort_list_with(g, self, reverse, _list_topk_11)


def _pick_from_sequence(g: GraphContext, items: Sequence[Value], index: Value) -> object:
    """The tensor at a run-time index of an export-time list: SequenceAt of the list as an ONNX
    sequence, which holds tensors of any shapes."""
    return runtime_list.at(g, runtime_list.from_items(g, list(items)), index)


@onnx_symbolic("aten::__getitem__", opset=11)
def aten___getitem___11(g: GraphContext, list: object, idx: object) -> object:  # noqa: A002 - schema name
    """__getitem__.t(t[](a) list, int idx) -> t(*): an export-time list of tensors read at an
    index known only at run time becomes an ONNX sequence (SequenceAt)."""
    return script_lists.getitem_with(g, list, idx, _pick_from_sequence)


@onnx_symbolic("aten::searchsorted", opset=11)
def aten_searchsorted_11(
    g: GraphContext,
    sorted_sequence: Value,
    self: Value,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Value | None = None,
) -> Value:
    """searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor

    ``sorter`` reorders each row first, with GatherElements.
    """
    if sorter is not None:
        sorted_sequence = g.op("GatherElements", sorted_sequence, sorter, axis=-1)
    return sorting.aten_searchsorted(g, sorted_sequence, self, out_int32, right, side)


@onnx_symbolic("aten::round", opset=11)
def aten_round_11(g: GraphContext, self: Value, decimals: int = 0) -> Value:
    """round(Tensor self) -> Tensor, round.decimals(Tensor self, *, int decimals) -> Tensor

    ONNX Round rounds half to even, as torch does.
    """
    return arithmetic.round_with(g, self, decimals, lambda v: g.op("Round", v))


@onnx_symbolic("aten::gather", opset=11)
def aten_gather_11(g: GraphContext, self: Value, dim: int, index: Value, sparse_grad: bool = False) -> Value:
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor: GatherElements."""
    del sparse_grad
    rank = h.known_rank(self, "gather")
    dim = h.normalize_dim(dim, rank)
    return g.op("GatherElements", self, h.cast(g, index, ir.DataType.INT64), axis=dim)


@onnx_symbolic("aten::take_along_dim", opset=11)
def aten_take_along_dim_11(g: GraphContext, self: Value, indices: Value, dim: int | None = None) -> Value:
    """take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor: GatherElements at any size."""
    return gather_scatter.take_along_dim_with(g, self, indices, dim, aten_gather_11)


@onnx_symbolic("aten::select", opset=11)
def aten_select_11(g: GraphContext, self: Value, dim: int, index: int | Value) -> Value:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)

    Gather takes negative indices, so a dynamic dim needs no fix-up.
    """
    return indexing.select_with(g, self, dim, index, negative_ok=True)


def causal_mask(g: GraphContext, query: Value, key: Value) -> Value:
    """A bool [L, S] mask, true on and below the diagonal (torch aligns it top-left): a
    constant for static lengths, from Range at run time otherwise."""
    length = h.dim_size(g, query, -2)
    source = h.dim_size(g, key, -2)
    if isinstance(length, int) and isinstance(source, int):
        return g.constant(torch.ones(length, source, dtype=torch.bool).tril())

    def positions(size: int | Value) -> Value:
        end = size if isinstance(size, Value) else g.constant(size)
        return g.op("Range", g.constant(0), end, g.constant(1))

    rows = h.unsqueeze(g, positions(length), [1])
    return g.op("Not", g.op("Less", rows, positions(source)))


@onnx_symbolic("aten::scaled_dot_product_attention", opset=11)
def aten_scaled_dot_product_attention_11(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    attn_mask: Value | None = None,
    dropout_p: float = 0.0,
    is_causal: bool | Value = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Value:
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor

    is_causal works with sequence lengths known only at run time (the mask from Range), and
    is_causal itself may be known only at run time (attention.causal_at_run_time).
    """
    if isinstance(is_causal, Value):
        return attention.causal_at_run_time(
            g,
            is_causal,
            attn_mask,
            query,
            lambda sub, mask, causal: aten_scaled_dot_product_attention_11(
                sub, query, key, value, mask, dropout_p, causal, scale, enable_gqa
            ),
        )
    return attention.scaled_dot_product_attention_with(
        g, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, causal_mask
    )


def _interleave_indices_11(g: GraphContext, repeats: Value) -> Value:
    """repeat_interleave(repeats) for a 1-D count tensor known at run time: output position
    p takes index #{j : cumsum(repeats)[j] <= p}."""
    counts = h.cast(g, repeats, ir.DataType.INT64)
    ends = g.op("CumSum", counts, g.constant(0))
    total = h.reduce(g, "ReduceSum", counts, [0], False)
    positions = g.op("Range", g.constant(0), total, g.constant(1))
    row_ends, column = h.unsqueeze(g, ends, [0]), h.unsqueeze(g, positions, [1])
    passed = h.less_or_equal(g, row_ends, column)
    return h.reduce(g, "ReduceSum", h.cast(g, passed, ir.DataType.INT64), [1], False)


@onnx_symbolic("aten::repeat_interleave", opset=11)
def aten_repeat_interleave_11(
    g: GraphContext,
    repeats: int | Value,
    self: Value | None = None,
    dim: int | None = None,
    output_size: int | None = None,
) -> Value:
    """repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor; .self_Tensor; .Tensor(Tensor repeats)

    Counts known only at run time become gather indices from CumSum and Range.
    """
    return repeat_pad.repeat_interleave_with(g, repeats, self, dim, output_size, _interleave_indices_11)
