"""Opset 10: what changes for the base symbolics.

ONNX changes at opset 10 that this module reacts to:
- Slice takes starts/ends/axes/steps as inputs (symbolic_helper.slice_static/slice_dynamic
  branch on it); dynamic bounds become possible, and aten::slice with a step,
  aten::flip and aten::rot90 (step -1), aten::roll and aten::fft_fftshift/fft_ifftshift of a
  run-time dim (with Mod) and aten::chunk (and unsafe_chunk, prim::ConstantChunk, hsplit, vsplit,
  dsplit) of a run-time dim slice instead of gathering.
- MaxPool/AveragePool gain ``ceil_mode`` and MaxPool ``dilations``
  (symbolic_helper.pool_has_ceil_mode): max_pool1d-3d and avg_pool1d-3d, registered at 10 in
  opset9/pooling.py, pool with ceil_mode instead of padding the tail.
- Mod appears (integer remainder, fmod).
- QuantizeLinear/DequantizeLinear appear: quantize_per_tensor, dequantize, fake quantization
  and the quantized:: ops of eager-quantized models lower to the QDQ form (see
  exporter/quantization.py); packed weights become int8 constants + DequantizeLinear. These
  live in the families of exporter/opset10/, indexed here:
    quantized_ops: quantize_per_tensor, dequantize, fake quantization, the quantized::
        elementwise (add, mul, cat), activation and normalization ops.
    quantized_layers: the prepack ops and quantized::linear / conv* / conv_transpose*, also
        registered at 11 (Round: weights stay int8 + DequantizeLinear) and 13 (per-channel
        weights through DequantizeLinear's axis).
- TopK takes k as an input (symbolic_helper.topk): topk, sort and argsort accept a k (a dim
  size) known only at run time; so do median, nanmedian, kthvalue, msort, quantile and
  nanquantile (a sort of the whole dim).
- Resize appears (nearest upsampling by factors).

The base symbolics already branch in the helpers where the op signature changed, so only
ops whose lowering itself changes are re-registered here.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList
from exporter.symbolic_opset9 import indexing, order_statistics, shape, sorting, splitting

if TYPE_CHECKING:  # the opset-10 families, imported on first use by __getattr__ below
    from exporter.opset10 import quantized_layers, quantized_ops

__all__ = ["quantized_layers", "quantized_ops"]

_FAMILIES = ("quantized_layers", "quantized_ops")


def __getattr__(name: str) -> ModuleType:
    """An opset-10 family, imported on first use (``from exporter.symbolic_opset10 import
    quantized_ops``): the registry imports a family when one of its ops is first looked up
    (exporter/symbolic_index.py), so an export loads only what its graph uses."""
    if name in _FAMILIES:
        return importlib.import_module(f"exporter.opset10.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Value = ir.Value


@onnx_symbolic("aten::remainder", opset=10)
def aten_remainder(g: GraphContext, self: Value, other: Value) -> Value:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor

    Mod with fmod=0 takes the divisor's sign, which is torch's remainder for integers; floats
    need fmod=1 (and the same sign fix-up as opset 9), so they keep the floor formula.
    """
    if h.is_floating(self):
        quotient = g.op("Floor", g.op("Div", self, other))
        return g.op("Sub", self, g.op("Mul", quotient, other))
    return g.op("Mod", self, other, fmod=0)


@onnx_symbolic("aten::fmod", opset=10)
def aten_fmod_10(g: GraphContext, self: Value, other: Value) -> Value:
    """fmod.Tensor(Tensor self, Tensor other) -> Tensor: Mod with fmod=1 takes the dividend's
    sign (C fmod), exactly, for every dtype."""
    return g.op("Mod", self, h.cast(g, other, self.dtype), fmod=1)


@onnx_symbolic("aten::topk", opset=10)
def aten_topk_10(
    g: GraphContext,
    self: Value,
    k: int | Value,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)

    TopK takes k as an input, so k may be known only at run time.
    """
    return sorting.topk_before_11(g, self, k, dim, largest, sorted)


@onnx_symbolic("aten::sort", opset=10)
def aten_sort_10(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool | None = None
) -> tuple[Value, Value]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices) (and .stable)

    The whole dim may have a size known only at run time (TopK's k is an input).
    """
    del stable
    return sorting.sort_with(g, self, dim, descending, sorting.topk_before_11)


@onnx_symbolic("aten::argsort", opset=10)
def aten_argsort_10(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False
) -> Value:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor (and .stable): the
    indices of aten::sort"""
    return aten_sort_10(g, self, dim, descending, stable)[1]


@onnx_symbolic("aten::median", opset=10)
def aten_median_10(g: GraphContext, self: Value) -> Value:
    """median(Tensor self) -> Tensor: the element count may be known only at run time"""
    return sorting.median_with(g, self, None, False, sorting.topk_before_11, ignore_nan=False)[0]


@onnx_symbolic("aten::median.dim", opset=10)
def aten_median_dim_10(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices):
    the dim may have a size known only at run time"""
    return sorting.median_with(g, self, dim, keepdim, sorting.topk_before_11, ignore_nan=False)


@onnx_symbolic("aten::nanmedian", opset=10)
def aten_nanmedian_10(g: GraphContext, self: Value) -> Value:
    """nanmedian(Tensor self) -> Tensor: the element count may be known only at run time"""
    return sorting.median_with(g, self, None, False, sorting.topk_before_11, ignore_nan=True)[0]


@onnx_symbolic("aten::nanmedian.dim", opset=10)
def aten_nanmedian_dim_10(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices):
    the dim may have a size known only at run time"""
    return sorting.median_with(g, self, dim, keepdim, sorting.topk_before_11, ignore_nan=True)


@onnx_symbolic("aten::kthvalue", opset=10)
def aten_kthvalue_10(
    g: GraphContext, self: Value, k: int | Value, dim: int = -1, keepdim: bool = False
) -> tuple[Value, Value]:
    """kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices):
    the size of ``dim`` and k may be known only at run time"""
    return sorting.kthvalue_with(g, self, k, dim, keepdim, sorting.topk_before_11)


@onnx_symbolic("aten::msort", opset=10)
def aten_msort_10(g: GraphContext, self: Value) -> Value:
    """msort(Tensor self) -> Tensor: dim 0 may have a size known only at run time"""
    return aten_sort_10(g, self, 0)[0]


@onnx_symbolic("aten::quantile", opset=10)
def aten_quantile_10(
    g: GraphContext,
    self: Value,
    q: float | Value,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Value:
    """quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor (and .scalar):
    the size of ``dim`` may be known only at run time"""
    return order_statistics.quantile_with(
        g, self, q, dim, keepdim, interpolation, sorting.topk_before_11, ignore_nan=False
    )


@onnx_symbolic("aten::nanquantile", opset=10)
def aten_nanquantile_10(
    g: GraphContext,
    self: Value,
    q: float | Value,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Value:
    """nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor (and .scalar):
    the size of ``dim`` may be known only at run time"""
    return order_statistics.quantile_with(
        g, self, q, dim, keepdim, interpolation, sorting.topk_before_11, ignore_nan=True
    )


@onnx_symbolic("aten::slice", opset=10)
def aten_slice_10(
    g: GraphContext,
    self: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int | Value = 1,
) -> Value:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)

    Slice-10 takes steps, so a strided slice is one Slice at any size.
    """
    return indexing.slice_bounds(g, self, dim, start, end, step)


def _flip_dim_10(g: GraphContext, x: Value, dim: int) -> Value:
    """Reverse one dim: Slice with step -1, at any size."""
    return h.slice_static(g, x, [dim], [-1], [-h.INT64_MAX], [-1])


@onnx_symbolic("aten::flip", opset=10)
def aten_flip_10(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """flip(Tensor self, int[] dims) -> Tensor: Slice with step -1 (any size)."""
    return shape.flip_with(g, self, dims, _flip_dim_10)


@onnx_symbolic("aten::rot90", opset=10)
def aten_rot90_10(g: GraphContext, self: Value, k: int = 1, dims: Sequence[int] = (0, 1)) -> Value:
    """rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor: flips as Slice with step -1."""
    return shape.rot90_with(g, self, k, dims, _flip_dim_10)


def _roll_dim_10(g: GraphContext, x: Value, shift: int | Value, dim: int, size: Value) -> Value:
    """Roll a dim of run-time size or by a run-time shift: Mod with fmod=0 takes the divisor's
    sign, so negative shifts come out right, and Slice takes the run-time split point."""
    size_1d = h.unsqueeze(g, size, [0])
    shift_1d = (
        g.constant([shift]) if isinstance(shift, int) else h.unsqueeze(g, h.cast(g, shift, ir.DataType.INT64), [0])
    )
    split = g.op("Sub", size_1d, g.op("Mod", shift_1d, shape.size_as_divisor(g, size_1d), fmod=0))
    axes = g.constant([dim])
    tail = g.op("Slice", x, split, g.constant([h.INT64_MAX]), axes)
    head = g.op("Slice", x, g.constant([0]), split, axes)
    return g.op("Concat", tail, head, axis=dim)


@onnx_symbolic("aten::roll", opset=10)
def aten_roll_10(
    g: GraphContext, self: Value, shifts: Sequence[int] | Sequence[int | Value], dims: Sequence[int] = ()
) -> Value:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor: a dim of run-time size
    rolls with Mod and two run-time Slices."""
    return shape.roll_with(g, self, shifts, dims, _roll_dim_10)


def _slice_piece_10(g: GraphContext, x: Value, start: Value, end: Value, size: Value, dim: int) -> Value:
    """The piece [start, end) of ``dim`` as one Slice with run-time bounds."""
    del size  # Slice clamps the bounds itself
    bounds = [h.unsqueeze(g, start, [0]), h.unsqueeze(g, end, [0]), g.constant([dim])]
    return g.op("Slice", x, *bounds)


@onnx_symbolic("aten::fft_fftshift", opset=10)
def aten_fft_fftshift_10(g: GraphContext, self: Value, dim: Sequence[int] | None = None) -> Value:
    """fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor: a dim of run-time size rolls with
    Mod and two run-time Slices."""
    return shape.fftshift_with(g, self, dim, False, _roll_dim_10)


@onnx_symbolic("aten::fft_ifftshift", opset=10)
def aten_fft_ifftshift_10(g: GraphContext, self: Value, dim: Sequence[int] | None = None) -> Value:
    """fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor (see aten_fft_fftshift_10)"""
    return shape.fftshift_with(g, self, dim, True, _roll_dim_10)


@onnx_symbolic("aten::chunk", opset=10)
def aten_chunk_10(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]: a dim of run-time
    size is cut by Slices with run-time bounds."""
    return splitting.chunk_with(g, self, chunks, dim, _slice_piece_10)


@onnx_symbolic("aten::unsafe_chunk", opset=10)
def aten_unsafe_chunk_10(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]"""
    return splitting.chunk_with(g, self, chunks, dim, _slice_piece_10)


@onnx_symbolic("aten::hsplit", opset=10)
def aten_hsplit_10(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; hsplit.array: equal pieces
    of a dim of run-time size are Slices with run-time bounds."""
    return splitting.split_into_sections(g, self, sections, indices, "hsplit", _slice_piece_10)


@onnx_symbolic("aten::vsplit", opset=10)
def aten_vsplit_10(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; vsplit.array (see aten_hsplit_10)"""
    return splitting.split_into_sections(g, self, sections, indices, "vsplit", _slice_piece_10)


@onnx_symbolic("aten::dsplit", opset=10)
def aten_dsplit_10(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; dsplit.array (see aten_hsplit_10)"""
    return splitting.split_into_sections(g, self, sections, indices, "dsplit", _slice_piece_10)


@onnx_symbolic("prim::ConstantChunk", opset=10)
def prim_constant_chunk_10(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantChunk[chunks, dim](Tensor self) -> (Tensor, ...): a dim of run-time size
    is cut by Slices with run-time bounds."""
    return splitting.constant_chunk_with(g, inputs, _slice_piece_10)
