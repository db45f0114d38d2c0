"""Order statistics beyond the median: quantile and nanquantile (every interpolation mode) and
mode (the most frequent value).

ONNX idioms: quantile reads the sorted values (sorting.sort_with, NaN last) at ranks computed
as torch computes them, by a one-hot mask summed over the dim (GatherElements needs opset 11),
so every q, row and interpolation works from opset 9; rows holding NaN are set to NaN
explicitly rather than through the sorted NaN (which TopK below opset 11 cannot always keep).
mode counts each element's equals with a pairwise comparison along a new axis, which needs no
sort and no size at export time.
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.opset9 import arithmetic, sorting
from exporter.registry import onnx_symbolic

Value = ir.Value

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _ranks(g: GraphContext, x: Value, q: Value, axis: int, ignore_nan: bool) -> Value:
    """torch's ranks, [Q, *x's shape with ``axis`` kept as 1]: q * (n - 1), in x's dtype. For
    nanquantile n counts the non-NaN elements of each row and a negative rank (an all-NaN row)
    becomes 0."""
    if not ignore_nan:
        size = h.dim_size(g, x, axis)
        count = h.scalar_like(g, size, x) if isinstance(size, int) else h.cast(g, size, x.dtype)
        return g.op("Mul", q, g.op("Sub", count, h.scalar_like(g, 1, x)))
    valid = h.cast(g, g.op("Not", g.op("IsNaN", x)), ir.DataType.INT64)
    count = h.cast(g, h.reduce(g, "ReduceSum", valid, [axis], True), x.dtype)
    ranks = g.op("Mul", q, g.op("Sub", count, h.scalar_like(g, 1, x)))
    zero = h.scalar_like(g, 0, x)
    return g.op("Where", g.op("Less", ranks, zero), zero, ranks)


def _pick_at(g: GraphContext, ordered: Value, ranks: Value, axis: int) -> Value:
    """``ordered`` (with a leading axis of 1 for q) at integral ``ranks`` [Q, kept dims] along
    ``axis``: a one-hot mask summed over the axis, so NaN or inf elsewhere in a row stay out."""
    rank = h.known_rank(ordered, "quantile")
    positions = h.iota(g, h.dim_size(g, ordered, axis))
    positions = g.op("Reshape", positions, g.constant(h.axis_shape(rank, axis)))
    mask = g.op("Equal", positions, h.cast(g, ranks, ir.DataType.INT64))
    return h.reduce(g, "ReduceSum", g.op("Where", mask, ordered, h.scalar_like(g, 0, ordered)), [axis], True)


def quantile_with(
    g: GraphContext,
    self: Value,
    q: float | Value,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    topk: sorting.TopK,
    *,
    ignore_nan: bool,
) -> Value:
    """torch's quantile: sort along ``dim`` (every element when None), rank = q * (n - 1)
    (n: the row's non-NaN count for nanquantile), rounded for lower/higher/nearest (half to
    even), and for linear/midpoint a lerp (torch's two-formula lerp) between the values at the
    floor and ceiling of the rank. quantile of a row holding NaN is NaN, and so is nanquantile
    of an all-NaN row. A 1-d q puts its axis first; a number or 0-d q adds none. torch takes
    float and double only, and q of self's dtype."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"quantile: interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
    rank = h.known_rank(self, "quantile")
    if dim is None or rank == 0:
        x, axis = g.op("Reshape", self, g.constant([-1])), 0
    else:
        x, axis = self, h.normalize_dim(dim, rank)
    x_rank = h.known_rank(x, "quantile")
    if isinstance(q, Value):
        q_is_scalar = h.known_rank(q, "quantile") == 0
        q = h.cast(g, q, x.dtype)
    else:
        q_is_scalar = True
        q = g.constant(torch.tensor(q, dtype=tensors.to_torch_dtype(x.dtype)))
    q = g.op("Reshape", q, g.constant([-1] + [1] * x_rank))
    ordered = h.unsqueeze(g, sorting.sort_with(g, x, axis, False, topk)[0], [0])
    ranks = _ranks(g, x, q, axis, ignore_nan)
    if interpolation == "lower":
        ranks = g.op("Floor", ranks)
    elif interpolation == "higher":
        ranks = g.op("Ceil", ranks)
    elif interpolation == "nearest":
        ranks = arithmetic.round_half_even(g, ranks)
    out = _pick_at(g, ordered, ranks, axis + 1)
    if interpolation in ("linear", "midpoint"):
        below = g.op("Floor", ranks)
        above = _pick_at(g, ordered, g.op("Ceil", ranks), axis + 1)
        weight = g.op("Sub", ranks, below) if interpolation == "linear" else h.scalar_like(g, 0.5, x)
        out = arithmetic.aten_lerp(g, out, above, weight)
    nan_rows = h.reduce(g, "ReduceSum", h.cast(g, g.op("IsNaN", x), ir.DataType.INT64), [axis], True)
    size = h.dim_size(g, x, axis)
    size_v = g.constant(size) if isinstance(size, int) else size
    # quantile: any NaN in the row; nanquantile: nothing but NaN in it
    undefined = g.op("Equal", nan_rows, size_v) if ignore_nan else g.op("Greater", nan_rows, g.constant(0))
    out = g.op("Where", h.unsqueeze(g, undefined, [0]), h.scalar_like(g, math.nan, out), out)
    if not keepdim:
        out = h.squeeze(g, out, [axis + 1])
    elif dim is None or rank == 0:
        out = g.op("Reshape", out, g.constant([0] + [1] * rank))
    return h.squeeze(g, out, [0]) if q_is_scalar else out


@onnx_symbolic("aten::quantile")
def aten_quantile(
    g: GraphContext,
    self: Value,
    q: float | Value,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Value:
    """quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor (and .scalar)

    quantile_with; TopK takes k as an attribute at opset 9, so the size of ``dim`` (the element
    count when dim is None) must be known at export time; symbolic_opset10 lifts that.
    """
    return quantile_with(g, self, q, dim, keepdim, interpolation, sorting.topk_static_k, ignore_nan=False)


@onnx_symbolic("aten::nanquantile")
def aten_nanquantile(
    g: GraphContext,
    self: Value,
    q: float | Value,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Value:
    """nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor (and .scalar)

    quantile_with over each row's non-NaN elements (the sort puts NaN last, past every rank).
    """
    return quantile_with(g, self, q, dim, keepdim, interpolation, sorting.topk_static_k, ignore_nan=True)


# -- mode -----------------------------------------------------------------------------------------


@onnx_symbolic("aten::mode")
def aten_mode(g: GraphContext, self: Value, dim: int = -1, keepdim: bool = False) -> tuple[Value, Value]:
    """mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)

    Each element's count of equals in its row (a pairwise Equal along a new axis: n x n per
    row), the largest count, and among the values reaching it the smallest, as torch's kernel
    chooses (it walks the sorted row keeping the first longest run); the index is that value's
    last occurrence, which is torch's for rows it sorts stably (up to 16 elements, where its
    std::sort is an insertion sort; beyond, its index among equal values is whatever the sort
    leaves). NaN equals nothing here; torch sorts rows holding NaN with a comparison NaN breaks,
    so its result for a row mixing NaN and numbers depends on the order. An all-NaN row gives
    NaN at index 0, as in torch.
    """
    rank = h.known_rank(self, "mode")
    if rank == 0:
        return self, g.constant(torch.tensor(0))
    axis = h.normalize_dim(dim, rank)
    x = h.cast(g, self, ir.DataType.INT32) if self.dtype == ir.DataType.BOOL else h.comparable(g, self)
    same = h.equal(g, h.unsqueeze(g, x, [axis + 1]), h.unsqueeze(g, x, [axis]))
    counts = h.reduce(g, "ReduceSum", h.cast(g, same, ir.DataType.INT64), [axis + 1], False)
    best = h.reduce(g, "ReduceMax", counts, [axis], True)
    candidate = g.op("Equal", counts, best)
    dtype = tensors.to_torch_dtype(x.dtype)
    above_all = math.inf if dtype.is_floating_point else torch.iinfo(dtype).max
    smallest = h.reduce(g, "ReduceMin", g.op("Where", candidate, x, h.scalar_like(g, above_all, x)), [axis], True)
    chosen = g.op("And", candidate, h.equal(g, x, smallest))
    positions = g.op("Reshape", h.iota(g, h.dim_size(g, x, axis)), g.constant(h.axis_shape(rank, axis)))
    index = h.reduce(g, "ReduceMax", g.op("Where", chosen, positions, g.constant(-1)), [axis], True)
    values = smallest
    if h.is_floating(x):
        all_nan = g.op("Equal", best, g.constant(0))
        values = g.op("Where", all_nan, h.scalar_like(g, math.nan, x), values)
        index = g.op("Where", all_nan, g.constant(0), index)
    values = h.cast(g, values, self.dtype)
    if not keepdim:
        values, index = h.squeeze(g, values, [axis]), h.squeeze(g, index, [axis])
    return values, index
