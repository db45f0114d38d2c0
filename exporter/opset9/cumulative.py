"""Running reductions along a dim beyond cumsum/cumprod: cummax and cummin (values with the
index torch picks), logcumsumexp and cumulative_trapezoid.

ONNX idioms: ONNX has no running max or log-sum-exp, so each is an inclusive scan
(``reductions.scan``: log2(n) rounds of Slice/Concat over a dim of static size) with an
associative combine of the earlier and the later part: the sequential update torch's kernel
runs, which keeps its ties, NaN and infinity rules exact. cumulative_trapezoid is a cumsum of
the trapezoid areas (reductions.trapezoid_terms), CumSum from opset 11 (symbolic_opset11).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.opset9 import arithmetic, reductions
from exporter.registry import onnx_symbolic

Value = ir.Value


def _running_extreme(g: GraphContext, self: Value, dim: int, larger: bool) -> tuple[Value, Value]:
    """cummax (``larger``) or cummin as torch's kernel updates it: a later element replaces the
    running one when it is NaN, or when neither is NaN and it is >= (cummax) or <= (cummin), so
    ties and repeated NaNs take the latest index. Bools and narrow types compare widened."""
    rank = h.known_rank(self, "cummax/cummin")
    if rank == 0:
        return self, g.constant(torch.tensor(0))
    dim = h.normalize_dim(dim, rank)
    x = h.cast(g, self, ir.DataType.INT32) if self.dtype == ir.DataType.BOOL else h.comparable(g, self)
    size = h.static_dim(x, dim, "cummax/cummin")
    positions = g.constant(torch.arange(size).reshape(h.axis_shape(rank, dim)))
    indices = g.op("Expand", positions, g.op("Shape", x))
    floating = h.is_floating(x)

    def combine(earlier: list[Value], later: list[Value]) -> list[Value]:
        (old, old_index), (new, new_index) = earlier, later
        beaten = g.op("Greater" if larger else "Less", old, new)
        take_new = g.op("Not", beaten)
        if floating:
            take_new = g.op("Or", g.op("IsNaN", new), g.op("And", take_new, g.op("Not", g.op("IsNaN", old))))
        return [g.op("Where", take_new, new, old), g.op("Where", take_new, new_index, old_index)]

    values, indices = reductions.scan(g, combine, [x, indices], dim, "cummax/cummin")
    return h.cast(g, values, self.dtype), indices


@onnx_symbolic("aten::cummax")
def aten_cummax(g: GraphContext, self: Value, dim: int) -> tuple[Value, Value]:
    """cummax(Tensor self, int dim) -> (Tensor values, Tensor indices) (_running_extreme)"""
    return _running_extreme(g, self, dim, larger=True)


@onnx_symbolic("aten::cummin")
def aten_cummin(g: GraphContext, self: Value, dim: int) -> tuple[Value, Value]:
    """cummin(Tensor self, int dim) -> (Tensor values, Tensor indices) (_running_extreme)"""
    return _running_extreme(g, self, dim, larger=False)


@onnx_symbolic("aten::logcumsumexp")
def aten_logcumsumexp(g: GraphContext, self: Value, dim: int) -> Value:
    """logcumsumexp(Tensor self, int dim) -> Tensor

    A scan of logaddexp (max + log1p(exp(-|a - b|))), stable where log(cumsum(exp)) overflows
    or underflows; -inf stays -inf. Half computes in float32 (torch takes floats only).
    """
    rank = h.known_rank(self, "logcumsumexp")
    if rank == 0:
        return self

    def combine(earlier: list[Value], later: list[Value]) -> list[Value]:
        return [arithmetic.log_add_exp(g, later[0], earlier[0], math.e)]

    x = reductions.upcast_half(g, self)
    out = reductions.scan(g, combine, [x], h.normalize_dim(dim, rank), "logcumsumexp")[0]
    return h.cast(g, out, self.dtype)


CumSum = Callable[[GraphContext, Value, int], Value]


def cumulative_trapezoid_with(g: GraphContext, y: Value, x: Value | None, dx: float, dim: int, cumsum: CumSum) -> Value:
    """The running trapezoid rule: ``cumsum`` of each interval's area, computed in torch's
    order (dx / 2 * (y[i] + y[i + 1]), or (x[i + 1] - x[i]) * (y[i] + y[i + 1]) / 2), so n
    samples give n - 1 sums (none for 0 or 1). Integers give float32, half computes in float32
    (reductions.trapezoid_terms)."""
    heights, spacing, dim, result = reductions.trapezoid_terms(g, y, x, dim, "cumulative_trapezoid")
    if spacing is None:
        areas = g.op("Mul", h.scalar_like(g, dx / 2, heights), heights)
    else:
        areas = g.op("Div", g.op("Mul", spacing, heights), h.scalar_like(g, 2, heights))
    samples = y.shape[dim] if y.shape is not None else None
    if isinstance(samples, int) and samples <= 1:
        return h.cast(g, areas, result)  # no interval: nothing to sum (and no size for the scan)
    return h.cast(g, cumsum(g, areas, dim), result)


@onnx_symbolic("aten::cumulative_trapezoid.x")
def aten_cumulative_trapezoid_x(g: GraphContext, y: Value, x: Value, dim: int = -1) -> Value:
    """cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor

    cumulative_trapezoid_with; without CumSum (opset 11) the scan needs the size of ``dim`` at
    export time.
    """
    return cumulative_trapezoid_with(g, y, x, 1.0, dim, reductions.aten_cumsum)


@onnx_symbolic("aten::cumulative_trapezoid.dx")
def aten_cumulative_trapezoid_dx(g: GraphContext, y: Value, dx: float = 1.0, dim: int = -1) -> Value:
    """cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor: samples ``dx``
    apart (cumulative_trapezoid_with; the size of ``dim`` at export time below opset 11)"""
    return cumulative_trapezoid_with(g, y, None, dx, dim, reductions.aten_cumsum)
