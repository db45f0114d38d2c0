"""Sorting and selection: topk, sort, argsort, bucketize (unique lives in symbolic_opset11).

ONNX idioms: TopK's k is an attribute before opset 10 and it has no NaN ordering rule, so values
are mapped to a total order that places NaN like torch and read back by index (``_topk``).
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.opset9 import gather_scatter
from exporter.registry import onnx_symbolic

Value = ir.Value


def _topk(
    g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool
) -> tuple[Value, Value]:
    """TopK. It takes k as an attribute at opset 9, as an input from 10; smallest-k and
    unsorted output arrive at 11, so before that the smallest are the largest of -x. TopK
    before 11 only takes floats (integers go through double, exact to 2**53); half and
    small integers are widened at every opset. Ties come lowest index first."""
    rank = h.known_rank(x, "topk")
    dim = h.normalize_dim(dim, rank)
    work = x
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        work = h.cast(g, x, ir.DataType.FLOAT)
    elif not h.is_floating(x):
        if g.opset < 11:
            work = h.cast(g, x, ir.DataType.DOUBLE)
        elif x.dtype not in (ir.DataType.INT32, ir.DataType.INT64):
            work = h.cast(g, x, ir.DataType.INT64)
    negate = not largest and g.opset < 11
    shape = h.static_shape(x)
    # torch ranks NaN above +inf. onnxruntime's TopK has ranked NaN lowest (before 1.32) and
    # highest (1.32), so for floats the key says it explicitly: infinities are clamped to the
    # largest finite value, NaN becomes +inf (-inf once negated), and the values are read back
    # by index. Below opset 11 that read-back needs static shapes; without them NaN only moves
    # to the right end (and comes out as inf).
    read_back = h.is_floating(x) and (g.opset >= 11 or shape is not None)
    key = work
    if h.is_floating(x):
        if read_back:
            finite_max = torch.finfo(tensors.to_torch_dtype(work.dtype)).max
            key = g.op("Min", work, h.scalar_like(g, finite_max, work))
        nan_key = math.inf if not negate else -math.inf
        key = g.op("Neg", key) if negate else key
        key = g.op("Where", g.op("IsNaN", work), h.scalar_like(g, nan_key, work), key)
    elif negate:
        key = g.op("Neg", work)
    if g.opset < 10:
        if not isinstance(k, int):
            raise ValueError("topk with k known only at run time needs opset 10")
        values, indices = g.op("TopK", key, axis=dim, k=k, num_outputs=2)
    else:
        attrs = {"largest": int(largest), "sorted": int(sorted_)} if g.opset >= 11 else {}
        values, indices = g.op("TopK", key, g.list_to_value([k]), axis=dim, num_outputs=2, **attrs)
    if negate:
        values = g.op("Neg", values)
    if shape is not None and isinstance(k, int):
        shape[dim] = k
        indices.shape, indices.dtype = ir.Shape(shape), ir.DataType.INT64
        values.shape, values.dtype = ir.Shape(shape), key.dtype
    if read_back:
        if g.opset >= 11:
            values = g.op("GatherElements", work, indices, axis=dim)
        else:
            values = gather_scatter.aten_gather(g, work, dim, indices)
    return h.cast(g, values, x.dtype), indices


@onnx_symbolic("aten::topk")
def aten_topk(
    g: GraphContext, self: Value, k: int | Value, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)

    sorted=False leaves the order unspecified in torch; sorted output satisfies it.
    """
    return _topk(g, self, k, dim, largest, sorted)


@onnx_symbolic("aten::sort")
def aten_sort(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool | None = None
) -> tuple[Value, Value]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices) (and .stable)

    A TopK of the whole dim; its ties come lowest index first, which is the stable order.
    NaN sorts last ascending and first descending, as in torch (below opset 11 with sizes
    known only at run time, a NaN value comes out as inf, in its place).
    """
    del stable
    if h.rank_of(self) == 0:
        return self, g.constant(torch.tensor(0))
    return _topk(g, self, h.dim_size(g, self, dim), dim, descending, True)


@onnx_symbolic("aten::argsort")
def aten_argsort(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False
) -> Value:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor (and .stable): the
    indices of aten::sort"""
    return aten_sort(g, self, dim, descending, stable)[1]


@onnx_symbolic("aten::bucketize")
def aten_bucketize(
    g: GraphContext, self: Value, boundaries: Value, out_int32: bool = False, right: bool = False
) -> Value:
    """bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor (and .Scalar)

    The bucket is a count of boundaries below x (right=False: b < x; right=True: b <= x),
    from a broadcast comparison against the sorted boundaries. NaN sorts after everything,
    as in torch, so it lands in the last bucket.
    """
    x, b = self, boundaries
    if x.dtype != b.dtype:
        x, b = h.cast(g, x, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
    x, b = h.comparable(g, x), h.comparable(g, b)
    rank = h.known_rank(self, "bucketize")
    column = h.unsqueeze(g, x, [rank])
    if right:
        below = g.op("Not", g.op("Greater", b, column))
    else:
        below = g.op("Less", b, column)
        if h.is_floating(x):
            below = g.op("Or", below, g.op("IsNaN", column))
    count = h.reduce(g, "ReduceSum", h.cast(g, below, ir.DataType.INT64), [rank], False)
    return h.cast(g, count, ir.DataType.INT32 if out_int32 else ir.DataType.INT64)
