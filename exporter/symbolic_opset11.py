"""Opset 11: what changes for the base symbolics.

ONNX changes at opset 11 that this module reacts to:
- Unique appears: torch.unique and unique_dim become exportable (no ONNX form before).
- Resize gains coordinate_transformation_mode (half_pixel, align_corners, pytorch_half_pixel)
  and cubic interpolation: every interpolate mode and align_corners now matches torch, where
  Upsample-9/Resize-10 only had asymmetric coordinates.
- CumSum appears (cumsum of a run-time length); Det appears (det, logdet, linalg_det).
- Range, negative Gather indices, Slice/Squeeze/Pad/Clip with input bounds (handled in
  symbolic_helper), Round, ScatterElements/GatherElements, sequence ops.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import (  # the base lowering's helpers
    _cumulative_operand,
    _data_dependent,
    _empty_int64,
    _interpolate_args,
    _rank,
    _resize,
    _scales,
    _unique_input,
)

Value = ir.Value


@onnx_symbolic("aten::_unique2", opset=11)
def aten__unique2(
    g: GraphContext, self: Value, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False  # noqa: A002
) -> tuple[Value, Value, Value]:
    """_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)

    Unique arrives at opset 11. torch sorts even with sorted=False, so Unique always sorts.
    Outputs not asked for are empty, as in torch.
    """
    del sorted
    flat = g.op("Reshape", _unique_input(g, self), g.constant([-1]))
    values, _, inverse, counts = g.op("Unique", flat, sorted=1, num_outputs=4)
    values = _data_dependent(g, h.cast(g, values, self.dtype), 0)
    inverse = g.op("Reshape", inverse, h.shape_of(g, self)) if return_inverse else _empty_int64(g)
    counts = _data_dependent(g, counts, 2) if return_counts else _empty_int64(g)
    return values, inverse, counts


@onnx_symbolic("aten::_unique", opset=11)
def aten__unique(
    g: GraphContext, self: Value, sorted: bool = True, return_inverse: bool = False  # noqa: A002
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
    rank = _rank(self, "unique_dim")
    dim = h.normalize_dim(dim, rank)
    values, _, inverse, counts = g.op("Unique", _unique_input(g, self), axis=dim, sorted=1, num_outputs=4)
    values = h.cast(g, values, self.dtype)
    shape = [None if a == dim else s for a, s in enumerate(self.shape)] if self.shape is not None else None
    if shape is not None:
        values.shape = ir.Shape(shape)
    inverse = inverse if return_inverse else _empty_int64(g)
    counts = _data_dependent(g, counts, 2) if return_counts else _empty_int64(g)
    return values, inverse, counts


@onnx_symbolic("aten::upsample_nearest1d", opset=11)
def aten_upsample_nearest1d_11(g: GraphContext, self: Value, output_size: Sequence[int], scales: float | None = None) -> Value:
    """upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor

    Resize-11 asymmetric + floor reproduces torch's source index, also for dynamic sizes.
    """
    return _resize(g, self, "nearest", output_size, _scales(scales), None)


@onnx_symbolic("aten::upsample_nearest1d.vec", opset=11)
def aten_upsample_nearest1d_vec_11(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_nearest2d", opset=11)
def aten_upsample_nearest2d_11(g: GraphContext, self: Value, output_size: Sequence[int], scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _resize(g, self, "nearest", output_size, _scales(scales_h, scales_w), None)


@onnx_symbolic("aten::upsample_nearest2d.vec", opset=11)
def aten_upsample_nearest2d_vec_11(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_nearest3d", opset=11)
def aten_upsample_nearest3d_11(g: GraphContext, self: Value, output_size: Sequence[int], scales_d: float | None = None, scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _resize(g, self, "nearest", output_size, _scales(scales_d, scales_h, scales_w), None)


@onnx_symbolic("aten::upsample_nearest3d.vec", opset=11)
def aten_upsample_nearest3d_vec_11(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "nearest", output_size, scale_factors, None)


@onnx_symbolic("aten::upsample_linear1d", opset=11)
def aten_upsample_linear1d(g: GraphContext, self: Value, output_size: Sequence[int], align_corners: bool, scales: float | None = None) -> Value:
    """upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor

    From opset 11: Upsample-9/Resize-10 only sample at asymmetric coordinates, never torch's
    half-pixel or align_corners positions.
    """
    return _resize(g, self, "linear", output_size, _scales(scales), align_corners)


@onnx_symbolic("aten::upsample_linear1d.vec", opset=11)
def aten_upsample_linear1d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bilinear2d", opset=11)
def aten_upsample_bilinear2d(g: GraphContext, self: Value, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor (from opset 11, see upsample_linear1d)"""
    return _resize(g, self, "linear", output_size, _scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bilinear2d.vec", opset=11)
def aten_upsample_bilinear2d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_trilinear3d", opset=11)
def aten_upsample_trilinear3d(g: GraphContext, self: Value, output_size: Sequence[int], align_corners: bool, scales_d: float | None = None, scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor (from opset 11)"""
    return _resize(g, self, "linear", output_size, _scales(scales_d, scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_trilinear3d.vec", opset=11)
def aten_upsample_trilinear3d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::upsample_bicubic2d", opset=11)
def aten_upsample_bicubic2d(g: GraphContext, self: Value, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    Resize cubic with cubic_coeff_a=-0.75 (torch's A) from opset 11, the first with cubic.
    """
    return _resize(g, self, "cubic", output_size, _scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::upsample_bicubic2d.vec", opset=11)
def aten_upsample_bicubic2d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _resize(g, input, "cubic", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::__interpolate", opset=11)
def aten___interpolate_11(
    g: GraphContext,
    input: Value,  # noqa: A002
    size: Sequence[int] | None = None,
    scale_factor: Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Value:
    """__interpolate(Tensor input, int? size=None, float? scale_factor=None, str mode="nearest", bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor

    Every mode through Resize-11 (align_corners=None means False, as in torch).
    """
    onnx_mode, size, scale_factor = _interpolate_args(input, size, scale_factor, mode, recompute_scale_factor, antialias)
    return _resize(g, input, onnx_mode, size, scale_factor, bool(align_corners))


@onnx_symbolic("aten::cumsum", opset=11)
def aten_cumsum_11(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    CumSum; it has no float16 kernel before opset 14, and torch accumulates halves in float32
    anyway, so halves are summed in float32 and cast back.
    """
    x, out_dtype = _cumulative_operand(g, self, dtype)
    if h.rank_of(x) == 0:
        return h.cast(g, x, out_dtype)
    out = g.op("CumSum", x, g.constant(dim))
    return h.cast(g, out, out_dtype)


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
