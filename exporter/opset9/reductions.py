"""Reductions, norms and statistics: sum/mean/prod, all/any, max/min with and without indices,
argmax/argmin, amax/amin, logsumexp, cumsum/cumprod, trapezoid/trapz, var/std (and _mean),
vector and matrix norms, histc.

ONNX idioms: Reduce* through ``h.reduce`` (axes become an input at 13 for ReduceSum, 18 for the
rest); onnxruntime lacks Reduce*/ArgMax kernels for bool and narrow integers at low opsets, so
those widen to int32 (``widened``); NaN propagates as in torch through explicit IsNaN masks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Quantized
from exporter.registry import onnx_symbolic

Value = ir.Value


HALF_DTYPES = (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)


def upcast_half(g: GraphContext, x: Value) -> Value:
    """float16/bfloat16 statistics are computed in float32, as torch does (opmath type)."""
    return h.cast(g, x, ir.DataType.FLOAT) if x.dtype in HALF_DTYPES else x


def _reduce_dims(dim: Sequence[int] | None) -> list[int] | None:
    return None if dim is None or len(dim) == 0 else list(dim)


@onnx_symbolic("aten::mean", complex_inputs=ComplexInputs.PARTS)
def aten_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    x = h.cast(g, self, h.ir_dtype(dtype)) if dtype is not None else self
    return h.reduce(g, "ReduceMean", x, _reduce_dims(dim), keepdim)


@onnx_symbolic("aten::sum", complex_inputs=ComplexInputs.PARTS)
def aten_sum(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    Bool and integer sums accumulate in int64, as torch does.
    """
    if dtype is not None:
        x = h.cast(g, self, h.ir_dtype(dtype))
    elif not h.is_floating(self):
        x = h.cast(g, self, ir.DataType.INT64)
    else:
        x = self
    return h.reduce(g, "ReduceSum", x, _reduce_dims(dim), keepdim)


def _without_nan(g: GraphContext, x: Value) -> Value:
    if not h.is_floating(x):
        return x
    return g.op("Where", g.op("IsNaN", x), h.scalar_like(g, 0.0, x), x)


@onnx_symbolic("aten::nansum")
def aten_nansum(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor:
    the sum with NaN counted as 0 (integers sum as in aten::sum)"""
    return aten_sum(g, _without_nan(g, self), dim, keepdim, dtype)


@onnx_symbolic("aten::nanmean")
def aten_nanmean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor:
    the sum without NaNs over their count, as torch (an all-NaN slice gives 0 / 0 = NaN)"""
    x = h.cast(g, self, h.ir_dtype(dtype)) if dtype is not None else self
    kept = h.cast(g, g.op("Not", g.op("IsNaN", x)), x.dtype)
    dims = _reduce_dims(dim)
    total = h.reduce(g, "ReduceSum", _without_nan(g, x), dims, keepdim)
    return g.op("Div", total, h.reduce(g, "ReduceSum", kept, dims, keepdim))


@onnx_symbolic("aten::count_nonzero")
def aten_count_nonzero(g: GraphContext, self: Value, dim: int | Sequence[int] | None = None) -> Value:
    """count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor; count_nonzero(Tensor self,
    int? dim=None): an int64 count (NaN is nonzero)"""
    flags = h.cast(g, g.op("Not", h.equal(g, self, h.scalar_like(g, 0, self))), ir.DataType.INT64)
    dims = [dim] if isinstance(dim, int) else _reduce_dims(dim)
    return h.reduce(g, "ReduceSum", flags, dims, False)


# dtypes without Reduce*/ArgMax kernels in onnxruntime at some opset in 9..26.
_NARROW = (
    ir.DataType.BOOL,
    ir.DataType.INT8,
    ir.DataType.UINT8,
    ir.DataType.INT16,
    ir.DataType.UINT16,
)


def _axes(dim: Sequence[int] | None, rank: int | None) -> list[int] | None:
    """torch dims -> non-negative ONNX axes (None and [] mean every axis, as in torch)."""
    dims = _reduce_dims(dim)
    if dims is None:
        return None
    return [h.normalize_dim(d, rank) for d in dims]


def _widened(g: GraphContext, x: Value) -> Value:
    """x in a dtype every Reduce*/ArgMax kernel of onnxruntime takes at every opset."""
    if x.dtype in _NARROW:
        return h.cast(g, x, ir.DataType.INT32)
    if x.dtype == ir.DataType.BFLOAT16:
        return h.cast(g, x, ir.DataType.FLOAT)
    return x


def _sum_dtype(g: GraphContext, x: Value, dtype: torch.dtype | None) -> Value:
    """Operand of sum-like ops: ``dtype`` if given, else int64 for bool and integers."""
    if dtype is not None:
        return h.cast(g, x, h.ir_dtype(dtype))
    if not h.is_floating(x):
        return h.cast(g, x, ir.DataType.INT64)
    return x


def reduced_count(g: GraphContext, x: Value, axes: list[int] | None) -> int | Value:
    """How many elements each reduction over ``axes`` sees: an int when static, else a 0-d
    int64 value."""
    shape = h.static_shape(x)
    rank = h.rank_of(x)
    if shape is not None:
        return math.prod(shape if axes is None else [shape[a] for a in axes])
    if axes is None or rank is None:
        return g.op("Size", x)
    dims = g.op("Gather", g.op("Shape", x), g.constant(list(axes)), axis=0)
    return g.op("ReduceProd", dims, keepdims=0)


def _squeeze_axes(g: GraphContext, x: Value, axes: list[int] | None, keepdim: bool, rank: int | None) -> Value:
    """Drop reduced axes that were kept (keepdims=1) when torch's keepdim is False."""
    if keepdim:
        return x
    if axes is None:
        if rank is None:
            raise NeedsExportTimeValue("dropping every reduced axis needs the input rank")
        axes = list(range(rank))
    return h.squeeze(g, x, axes) if axes else x


def _nan_flags(g: GraphContext, x: Value) -> Value:
    return h.cast(g, g.op("IsNaN", x), ir.DataType.INT32)


def _extreme(g: GraphContext, op_type: str, x: Value, axes: list[int] | None, keepdim: bool) -> Value:
    """ReduceMax/ReduceMin in x's dtype (narrow dtypes computed in int32 and cast back).

    onnxruntime's ReduceMax/ReduceMin skip NaN; torch propagates it, so a float reduction
    that saw a NaN is replaced by NaN.
    """
    out = h.cast(g, h.reduce(g, op_type, _widened(g, x), axes, keepdim), x.dtype)
    if not h.is_floating(x):
        return out
    has_nan = h.reduce(g, "ReduceMax", _nan_flags(g, x), axes, keepdim)
    return g.op("Where", h.cast(g, has_nan, ir.DataType.BOOL), h.scalar_like(g, math.nan, x), out)


def _arg_extreme(g: GraphContext, op_type: str, x: Value, dim: int | None, keepdim: bool) -> Value:
    """ArgMax/ArgMin with torch's rules: the first index wins ties (select_last_index=0, the
    default) and a NaN is both the maximum and the minimum (onnxruntime skips NaN, so rows
    with one take the index of their first NaN). ArgMax-1 rejects negative axes."""
    rank = h.rank_of(x)
    if dim is None:
        flat = g.op("Reshape", x, g.constant([-1]))
        flat.dtype = x.dtype
        out = _arg_extreme(g, op_type, flat, 0, False)
        if keepdim:
            if rank is None:
                raise NeedsExportTimeValue(f"{op_type} over all dims with keepdim=True needs the input rank")
            out = g.op("Reshape", out, g.constant([1] * rank))
        return out
    if rank == 0:  # torch allows dim 0/-1 on a 0-d tensor: the index is 0
        return g.constant(0)
    axis = h.normalize_dim(dim, rank)
    out = g.op(op_type, _widened(g, x), axis=axis, keepdims=int(keepdim))
    if not h.is_floating(x):
        return out
    flags = _nan_flags(g, x)
    has_nan = h.cast(g, h.reduce(g, "ReduceMax", flags, [axis], keepdim), ir.DataType.BOOL)
    return g.op("Where", has_nan, g.op("ArgMax", flags, axis=axis, keepdims=int(keepdim)), out)


def vector_norm(g: GraphContext, x: Value, ord: float, axes: list[int] | None, keepdim: bool) -> Value:  # noqa: A002
    """sum(|x|^ord)^(1/ord) over axes, with torch's special orders 0, 1, 2, inf, -inf.
    Half inputs are computed in float32 (torch accumulates them in float)."""
    if not h.is_floating(x):
        raise ValueError(f"norms need a floating point input, got {x.dtype}")
    operand = upcast_half(g, x)
    if ord == 2:
        out = h.reduce(g, "ReduceL2", operand, axes, keepdim)
    elif ord == 1:
        out = h.reduce(g, "ReduceL1", operand, axes, keepdim)
    elif ord == math.inf:
        out = _extreme(g, "ReduceMax", g.op("Abs", operand), axes, keepdim)
    elif ord == -math.inf:
        out = _extreme(g, "ReduceMin", g.op("Abs", operand), axes, keepdim)
    elif ord == 0:  # the count of non-zero entries
        nonzero = h.cast(g, h.cast(g, operand, ir.DataType.BOOL), operand.dtype)
        out = h.reduce(g, "ReduceSum", nonzero, axes, keepdim)
    else:
        powered = g.op("Pow", g.op("Abs", operand), h.scalar_like(g, ord, operand))
        summed = h.reduce(g, "ReduceSum", powered, axes, keepdim)
        out = g.op("Pow", summed, h.scalar_like(g, 1.0 / ord, operand))
    return h.cast(g, out, x.dtype)


def _matrix_norm(
    g: GraphContext,
    x: Value,
    ord: float | str,
    dim: Sequence[int],
    keepdim: bool,  # noqa: A002
) -> Value:
    """Matrix norms that need no singular values: 'fro', +-1 (column sums), +-inf (row sums)."""
    rank = h.rank_of(x)
    if len(dim) != 2:
        raise ValueError(f"a matrix norm needs two dims, got {list(dim)}")
    rows, cols = (h.normalize_dim(d, rank) for d in dim)
    if ord == "fro":
        return vector_norm(g, x, 2.0, [rows, cols], keepdim)
    if ord == "nuc" or ord in (2, -2):
        raise ValueError(f"matrix norm ord={ord!r} needs singular values, which ONNX cannot compute")
    if isinstance(ord, str) or abs(ord) not in (1, math.inf):
        raise ValueError(f"unknown matrix norm ord={ord!r}")
    operand = g.op("Abs", upcast_half(g, x))
    summed_axis, picked_axis = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = h.reduce(g, "ReduceSum", operand, [summed_axis], True)
    out = _extreme(g, "ReduceMax" if ord > 0 else "ReduceMin", sums, [picked_axis], True)
    out = _squeeze_axes(g, out, sorted([rows, cols]), keepdim, rank)
    return h.cast(g, out, x.dtype)


def _norm_operand(g: GraphContext, x: Value, dtype: torch.dtype | None) -> Value:
    return h.cast(g, x, h.ir_dtype(dtype)) if dtype is not None else x


Combine = Callable[[list[Value], list[Value]], list[Value]]


def scan(g: GraphContext, combine: Combine, xs: Sequence[Value], dim: int, what: str) -> list[Value]:
    """Inclusive scan of the tensors ``xs`` (equal shapes, scanned together: a value and its
    index) along a dim of static size, in ceil(log2(n)) rounds of y[i] = combine(y[i - k],
    y[i]) for i >= k, k = 1, 2, 4, ...; ``combine(earlier, later)`` must be associative.

    Only Slice and Concat are used, so it works at every opset and keeps infinities intact
    (a MatMul with a triangular ones matrix would turn inf * 0 into NaN).
    """
    size = h.dim_size(g, xs[0], dim)
    if not isinstance(size, int):
        raise NeedsExportTimeValue(f"{what} along a dim whose size is only known at run time is not supported")
    ys = list(xs)
    step = 1
    while step < size:
        heads = [h.slice_static(g, y, [dim], [0], [step]) for y in ys]
        shifted = [h.slice_static(g, y, [dim], [0], [size - step]) for y in ys]
        tails = [h.slice_static(g, y, [dim], [step], [size]) for y in ys]
        ys = [g.op("Concat", head, part, axis=dim) for head, part in zip(heads, combine(shifted, tails), strict=True)]
        step *= 2
    return ys


def _scan(g: GraphContext, op_type: str, x: Value, dim: int, what: str) -> Value:
    """Inclusive scan with an elementwise ONNX op (Add: cumsum, Mul: cumprod)."""
    return scan(g, lambda earlier, later: [g.op(op_type, later[0], earlier[0])], [x], dim, what)[0]


def cumulative_operand(g: GraphContext, self: Value, dtype: torch.dtype | None) -> tuple[Value, ir.DataType]:
    """(operand, result dtype) of cumsum/cumprod: ints and bool accumulate in int64 like
    torch; halves accumulate in float32 (torch's acc_type) and are cast back."""
    x = _sum_dtype(g, self, dtype)
    out_dtype = x.dtype
    return upcast_half(g, x), out_dtype


def _logical_reduce(g: GraphContext, op_type: str, self: Value, dim: Sequence[int] | None, keepdim: bool) -> Value:
    flags = h.cast(g, h.cast(g, self, ir.DataType.BOOL), ir.DataType.INT32)
    out = h.reduce(g, op_type, flags, _axes(dim, h.rank_of(self)), keepdim)
    return h.cast(g, out, ir.DataType.UINT8 if self.dtype == ir.DataType.UINT8 else ir.DataType.BOOL)


@onnx_symbolic("aten::all")
def aten_all(g: GraphContext, self: Value, dim: Sequence[int] | None = None, keepdim: bool = False) -> Value:
    """all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor (and all(), all.dim)

    Truthiness via Cast to bool (NaN is true, as in torch), then ReduceMin over int32 flags:
    Reduce* has no bool kernel before opset 20. torch keeps uint8 for uint8 inputs.
    """
    return _logical_reduce(g, "ReduceMin", self, dim, keepdim)


@onnx_symbolic("aten::any")
def aten_any(g: GraphContext, self: Value, dim: Sequence[int] | None = None, keepdim: bool = False) -> Value:
    """any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor (and any(), any.dim)

    ReduceMax over int32 truth flags, for the same reasons as ``all``.
    """
    return _logical_reduce(g, "ReduceMax", self, dim, keepdim)


@onnx_symbolic("aten::argmax")
def aten_argmax(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> Value:
    """argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor

    dim=None is the argmax of the flattened input; with keepdim it is reshaped to all ones.
    """
    return _arg_extreme(g, "ArgMax", self, dim, keepdim)


@onnx_symbolic("aten::argmin")
def aten_argmin(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> Value:
    """argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg_extreme(g, "ArgMin", self, dim, keepdim)


@onnx_symbolic("aten::amax")
def aten_amax(g: GraphContext, self: Value, dim: Sequence[int] = (), keepdim: bool = False) -> Value:
    """amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor (dim=[] reduces all)"""
    return _extreme(g, "ReduceMax", self, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::amin")
def aten_amin(g: GraphContext, self: Value, dim: Sequence[int] = (), keepdim: bool = False) -> Value:
    """amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor (dim=[] reduces all)"""
    return _extreme(g, "ReduceMin", self, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::aminmax")
def aten_aminmax(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> tuple[Value, Value]:
    """aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)"""
    axes = None if dim is None else [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMin", self, axes, keepdim), _extreme(g, "ReduceMax", self, axes, keepdim)


@onnx_symbolic("aten::max")
def aten_max(g: GraphContext, self: Value) -> Value:
    """max(Tensor self) -> Tensor: the full reduction (max.other is elementwise, max.dim below)"""
    return _extreme(g, "ReduceMax", self, None, False)


@onnx_symbolic("aten::min")
def aten_min(g: GraphContext, self: Value) -> Value:
    """min(Tensor self) -> Tensor: the full reduction"""
    return _extreme(g, "ReduceMin", self, None, False)


@onnx_symbolic("aten::max.dim")
def aten_max_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

    Indices from ArgMax, whose default select_last_index=0 gives torch's first maximum.
    """
    axes = [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMax", self, axes, keepdim), _arg_extreme(g, "ArgMax", self, dim, keepdim)


@onnx_symbolic("aten::min.dim")
def aten_min_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    axes = [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMin", self, axes, keepdim), _arg_extreme(g, "ArgMin", self, dim, keepdim)


@onnx_symbolic("aten::prod")
def aten_prod(
    g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False, dtype: torch.dtype | None = None
) -> Value:
    """prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor (and prod())

    Bool and integer products accumulate in int64, as torch does.
    """
    x = _sum_dtype(g, self, dtype)
    axes = None if dim is None else [h.normalize_dim(dim, h.rank_of(self))]
    return h.reduce(g, "ReduceProd", x, axes, keepdim)


@onnx_symbolic("aten::logsumexp")
def aten_logsumexp(g: GraphContext, self: Value, dim: Sequence[int], keepdim: bool = False) -> Value:
    """logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor

    log(sum(exp(x - m))) + m with m the max, so large inputs do not overflow. A non-finite m
    (all -inf, or an inf) is replaced by 0 so the result is -inf/inf rather than NaN; the test
    is |m| < inf because Equal has no float kernel and IsInf no opset before 10. Integer
    inputs give the default float dtype, as in torch.
    """
    x = self if h.is_floating(self) else h.cast(g, self, h.ir_dtype(torch.get_default_dtype()))
    operand = upcast_half(g, x)
    rank = h.rank_of(self)
    axes = _axes(dim, rank)
    peak = h.reduce(g, "ReduceMax", operand, axes, True)
    finite = g.op("Less", g.op("Abs", peak), h.scalar_like(g, math.inf, operand))
    peak = g.op("Where", finite, peak, h.scalar_like(g, 0.0, operand))
    summed = h.reduce(g, "ReduceSum", g.op("Exp", g.op("Sub", operand, peak)), axes, keepdim)
    out = g.op("Add", g.op("Log", summed), _squeeze_axes(g, peak, axes, keepdim, rank))
    return h.cast(g, out, x.dtype)


@onnx_symbolic("aten::histc")
def aten_histc(g: GraphContext, self: Value, bins: int = 100, min: float = 0, max: float = 0) -> Value:  # noqa: A002
    """histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor

    Mixtral counts tokens per expert with it. As torch computes it: min == max (default 0, 0)
    means the data's min and max, which widen by 1 each way when equal; an element's bin is
    int((x - min) * bins / (max - min)) in the input dtype, x == max falls in the last bin and
    elements outside [min, max] (and NaN) are not counted. Counting is a one-hot sum: Equal of
    the int64 bin index with 0..bins-1, summed over the elements (exact, in the input dtype).
    """
    if not h.is_floating(self):
        raise ValueError(f"histc of a {self.dtype} tensor is not supported (torch takes floating inputs)")
    if bins <= 0:
        raise ValueError(f"histc needs bins > 0, got {bins}")
    if min > max:
        raise ValueError(f"histc needs min <= max, got min={min}, max={max}")
    x = g.op("Reshape", upcast_half(g, self), g.constant([-1]))  # half comparisons lack kernels below 13
    if min == max:
        low, high = h.reduce(g, "ReduceMin", x, None, False), h.reduce(g, "ReduceMax", x, None, False)
        widen = h.cast_like(g, h.equal(g, low, high), x)
        low, high = g.op("Sub", low, widen), g.op("Add", high, widen)
    else:
        low, high = h.scalar_like(g, min, x), h.scalar_like(g, max, x)
    inside = g.op("And", g.op("Not", g.op("Less", x, low)), g.op("Not", g.op("Greater", x, high)))
    inside = g.op("And", inside, g.op("Not", g.op("IsNaN", x)))
    position = g.op("Div", g.op("Mul", g.op("Sub", x, low), h.scalar_like(g, bins, x)), g.op("Sub", high, low))
    index = h.cast(g, g.op("Floor", position), ir.DataType.INT64)
    index = h.max_min(g, index, g.constant(bins - 1), larger=False)  # x == max: the last bin
    index = g.op("Where", inside, index, g.constant(-1))  # outside: matches no bin
    one_hot = g.op("Equal", h.unsqueeze(g, index, [1]), g.constant(torch.arange(bins).unsqueeze(0)))
    return h.cast(g, h.reduce(g, "ReduceSum", h.cast_like(g, one_hot, x), [0], False), self.dtype)


class TrapezoidTerms(NamedTuple):
    """The trapezoid rule's parts along ``dim``: the summed neighbours y[i + 1] + y[i]
    (``heights``), x's differences (``spacing``, None for a constant dx), both in the compute
    dtype, and the dtype of the result."""

    heights: Value
    spacing: Value | None
    dim: int
    result: ir.DataType


def trapezoid_terms(g: GraphContext, y: Value, x: Value | None, dim: int, what: str) -> TrapezoidTerms:
    """The parts of the trapezoid rule (trapezoid, cumulative_trapezoid): a 1-d x lies along
    ``dim``, a lower-rank x gains leading dims. Slices rather than torch's sum-minus-ends, so 0
    or 1 samples give no interval at sizes known only at run time too. Integers give float32
    (torch's default dtype), half computes in float32."""
    rank = h.known_rank(y, what)
    dim = h.normalize_dim(dim, rank)
    promoted = tensors.to_torch_dtype(y.dtype)
    if x is not None:
        promoted = torch.promote_types(promoted, tensors.to_torch_dtype(x.dtype))
    result = h.ir_dtype(promoted if promoted.is_floating_point else torch.float32)
    compute = ir.DataType.FLOAT if result in HALF_DTYPES else result
    y = h.cast(g, y, compute)
    heights = g.op(
        "Add",
        h.slice_static(g, y, [dim], [1], [h.INT64_MAX]),
        h.slice_static(g, y, [dim], [0], [-1]),
    )
    if x is None:
        return TrapezoidTerms(heights, None, dim, result)
    x_rank = h.known_rank(x, what)
    if x_rank == 1 and rank > 1:
        x = g.op("Reshape", x, g.constant(h.axis_shape(rank, dim)))
    elif x_rank < rank:
        x = h.unsqueeze(g, x, list(range(rank - x_rank)))
    spacing = g.op(
        "Sub",
        h.slice_static(g, x, [dim], [1], [h.INT64_MAX]),
        h.slice_static(g, x, [dim], [0], [-1]),
    )
    return TrapezoidTerms(heights, h.cast(g, spacing, compute), dim, result)


def _trapezoid(g: GraphContext, y: Value, x: Value | None, dx: float, dim: int) -> Value:
    """The trapezoid rule along ``dim``: the sum of the heights times dx / 2, or of the
    heights times the spacing, halved (trapezoid_terms)."""
    heights, spacing, dim, result = trapezoid_terms(g, y, x, dim, "trapezoid")
    if spacing is None:
        area = g.op("Mul", h.reduce(g, "ReduceSum", heights, [dim], False), h.scalar_like(g, dx / 2, heights))
        return h.cast(g, area, result)
    doubled = h.reduce(g, "ReduceSum", g.op("Mul", spacing, heights), [dim], False)
    return h.cast(g, g.op("Div", doubled, h.scalar_like(g, 2, doubled)), result)


@onnx_symbolic("aten::trapezoid.x")
@onnx_symbolic("aten::trapz.x")
def aten_trapezoid_x(g: GraphContext, y: Value, x: Value, dim: int = -1) -> Value:
    """trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor; trapz.x: the integral of y
    sampled at x (_trapezoid)"""
    return _trapezoid(g, y, x, 1.0, dim)


@onnx_symbolic("aten::trapezoid.dx")
@onnx_symbolic("aten::trapz.dx")
def aten_trapezoid_dx(g: GraphContext, y: Value, dx: float = 1.0, dim: int = -1) -> Value:
    """trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor; trapz.dx: samples ``dx``
    apart (_trapezoid)"""
    return _trapezoid(g, y, None, dx, dim)


@onnx_symbolic("aten::cumsum", complex_inputs=ComplexInputs.PARTS)
def aten_cumsum(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    CumSum only exists from opset 11: below it the scan is built from Slice/Add/Concat in
    log2(n) rounds, which needs the size of ``dim`` at export time.
    """
    x, out_dtype = cumulative_operand(g, self, dtype)
    rank = h.rank_of(x)
    if rank == 0:
        return h.cast(g, x, out_dtype)
    out = _scan(g, "Add", x, h.normalize_dim(dim, rank), "cumsum below opset 11 (CumSum)")
    return h.cast(g, out, out_dtype)


@onnx_symbolic("aten::cumprod")
def aten_cumprod(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    ONNX has CumProd only from opset 26; the Slice/Mul/Concat scan works at every opset
    (the size of ``dim`` must be known at export time). Exp(CumSum(Log)) would lose signs
    and zeros.
    """
    x, out_dtype = cumulative_operand(g, self, dtype)
    rank = h.rank_of(x)
    if rank == 0:
        return h.cast(g, x, out_dtype)
    out = _scan(g, "Mul", x, h.normalize_dim(dim, rank), "cumprod")
    return h.cast(g, out, out_dtype)


@onnx_symbolic("aten::numel", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.SHAPE)
def aten_numel(g: GraphContext, self: Value) -> int | Value:
    """numel(Tensor self) -> int: a Python int when the shape is static, so it folds away;
    else Size, a 0-d int64 like TorchScript's int."""
    shape = h.static_shape(self)
    if shape is not None:
        return math.prod(shape)
    out = g.op("Size", self)
    out.dtype = ir.DataType.INT64
    out.shape = ir.Shape([])
    return out


def _variance(
    g: GraphContext, self: Value, dim: Sequence[int] | None, unbiased: bool, correction: float | None, keepdim: bool
) -> tuple[Value, Value]:
    """(variance, mean) with torch's correction: sum((x - mean)^2) / max(N - correction, 0).

    A zero divisor gives inf (or NaN for a zero sum), as in torch. Halves are computed in
    float32 and cast back.
    """
    if not h.is_floating(self):
        raise ValueError(f"var/std need a floating point input, got {self.dtype}")
    if correction is None:
        correction = 1.0 if unbiased else 0.0
    x = upcast_half(g, self)
    rank = h.rank_of(self)
    axes = _axes(dim, rank)
    mean_kept = h.reduce(g, "ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean_kept)
    squares = g.op("Mul", centered, centered)
    if correction == 0:
        var = h.reduce(g, "ReduceMean", squares, axes, keepdim)
    else:
        count = reduced_count(g, x, axes)
        if isinstance(count, int):
            divisor = max(count - correction, 0.0)
            divisor_value = h.scalar_like(g, divisor, x)
        else:
            shifted = g.op("Sub", h.cast(g, count, x.dtype), h.scalar_like(g, correction, x))
            divisor_value = g.op("Max", shifted, h.scalar_like(g, 0.0, x))
        var = g.op("Div", h.reduce(g, "ReduceSum", squares, axes, keepdim), divisor_value)
    mean = mean_kept if keepdim else _squeeze_axes(g, mean_kept, axes, False, rank)
    return h.cast(g, var, self.dtype), h.cast(g, mean, self.dtype)


@onnx_symbolic("aten::var")
def aten_var(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> Value:
    """var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    (and var(self, unbiased), var.dim(self, dim, unbiased, keepdim))

    correction=None means 1 (Bessel); unbiased=False is correction 0.
    """
    return _variance(g, self, dim, unbiased, correction, keepdim)[0]


@onnx_symbolic("aten::std")
def aten_std(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> Value:
    """std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    (and std(self, unbiased), std.dim(self, dim, unbiased, keepdim))"""
    return g.op("Sqrt", _variance(g, self, dim, unbiased, correction, keepdim)[0])


@onnx_symbolic("aten::var_mean")
def aten_var_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> tuple[Value, Value]:
    """var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    return _variance(g, self, dim, unbiased, correction, keepdim)


@onnx_symbolic("aten::std_mean")
def aten_std_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> tuple[Value, Value]:
    """std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    var, mean = _variance(g, self, dim, unbiased, correction, keepdim)
    return g.op("Sqrt", var), mean


@onnx_symbolic("aten::norm")
def aten_norm(
    g: GraphContext,
    self: Value,
    p: float | None = 2.0,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor
    (and norm.Scalar, norm.ScalarOpt_dim, norm.ScalarOpt_dtype)

    p=None is 2; an empty dim reduces every dim.
    """
    x = _norm_operand(g, self, dtype)
    return vector_norm(g, x, 2.0 if p is None else p, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::linalg_vector_norm")
def aten_linalg_vector_norm(
    g: GraphContext,
    self: Value,
    ord: float = 2.0,  # noqa: A002 - schema name
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    ord 2 and 1 map to ReduceL2/ReduceL1, +-inf to ReduceMax/ReduceMin of |x|, 0 counts
    non-zeros; any other ord is sum(|x|^ord)^(1/ord).
    """
    x = _norm_operand(g, self, dtype)
    return vector_norm(g, x, ord, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::linalg_matrix_norm")
def aten_linalg_matrix_norm(
    g: GraphContext,
    self: Value,
    ord: float | str = "fro",  # noqa: A002
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    (and the str_ord overload)

    'fro', +-1 and +-inf only: 'nuc' and +-2 need singular values, which ONNX has no op for.
    """
    return _matrix_norm(g, _norm_operand(g, self, dtype), ord, dim, keepdim)


@onnx_symbolic("aten::linalg_norm")
def aten_linalg_norm(
    g: GraphContext,
    self: Value,
    ord: float | str | None = None,  # noqa: A002
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    (and the ord_str overload)

    torch's dispatch: ord=None is the 2-norm of the flattened dims (Frobenius for two dims);
    otherwise one dim (or a 1-D input) is a vector norm, two dims (or a 2-D input) a matrix norm.
    """
    x = _norm_operand(g, self, dtype)
    rank = h.rank_of(self)
    if ord is None:
        return vector_norm(g, x, 2.0, _axes(dim, rank), keepdim)
    dims = list(dim) if dim is not None else (list(range(rank)) if rank is not None else None)
    if dims is None:
        raise NeedsExportTimeValue("linalg_norm with ord and no dim needs the input rank")
    if len(dims) == 1 and not isinstance(ord, str):
        return vector_norm(g, x, ord, _axes(dims, rank), keepdim)
    if len(dims) == 2:
        return _matrix_norm(g, x, ord, dims, keepdim)
    raise ValueError(f"linalg_norm with ord={ord!r} needs one or two dims, got {dims}")


@onnx_symbolic("aten::frobenius_norm")
def aten_frobenius_norm(g: GraphContext, self: Value, dim: Sequence[int], keepdim: bool = False) -> Value:
    """frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    return vector_norm(g, self, 2.0, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::bincount")
def aten_bincount(g: GraphContext, self: Value, weights: Value | None = None, minlength: int | Value = 0) -> Value:
    """bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor

    Counts as a sum of one-hot rows: ``self[:, None] == arange(size)`` summed over the
    inputs (times ``weights``), with ``size = max(max(self) + 1, minlength)`` computed at run
    time (a -1 appended first makes the maximum of an empty input 0 bins). No scatter, so any
    opset; memory is n x size. Weighted counts are float for float32 weights, else double.
    """
    x = h.cast(g, self, ir.DataType.INT64)
    flat = g.op("Reshape", x, g.constant([-1]))
    padded = g.op("Concat", flat, g.constant([-1]), axis=0)
    top = g.op("Add", h.reduce(g, "ReduceMax", padded, [0], False), g.constant(1))
    floor = g.constant(minlength) if isinstance(minlength, int) else h.cast(g, minlength, ir.DataType.INT64)
    size = h.max_min(g, top, floor, larger=True)
    hits = g.op("Equal", h.unsqueeze(g, flat, [1]), h.unsqueeze(g, h.iota(g, size), [0]))
    if weights is None:
        return h.reduce(g, "ReduceSum", h.cast(g, hits, ir.DataType.INT64), [0], False)
    dtype = weights.dtype if weights.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE) else ir.DataType.DOUBLE
    w = g.op("Reshape", h.cast(g, weights, dtype), g.constant([-1]))
    return h.reduce(g, "ReduceSum", g.op("Mul", h.cast(g, hits, dtype), h.unsqueeze(g, w, [1])), [0], False)
