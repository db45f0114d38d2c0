"""ONNX idioms shared by the symbolic modules.

Helpers branch on ``g.opset`` only where an ONNX operator's signature changed: Unsqueeze,
Squeeze and ReduceSum take axes as an input from 13, the other Reduce* ops from 18, Slice
takes its bounds as inputs from 10 and Clip from 11. Symbolic modules call these instead of
branching themselves, so a delta file only holds real behaviour changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.graph_context import GraphContext

__all__ = [
    "INT64_MAX",
    "static_shape",
    "rank_of",
    "normalize_dim",
    "cast",
    "cast_like",
    "scalar_like",
    "unsqueeze",
    "squeeze",
    "reduce",
    "slice_static",
    "shape_of",
    "dim_size",
    "clip",
    "softmax",
    "where",
    "ir_dtype",
    "is_floating",
    "matmul_transposed_last",
]

Value = ir.Value
# The "to the end" bound of Slice and the trip count of a Loop without one.
INT64_MAX = 9223372036854775807


def ir_dtype(dtype: torch.dtype) -> ir.DataType:
    return tensors.from_torch_dtype(dtype)


def is_floating(x: Value) -> bool:
    return tensors.is_floating(x.dtype)


def static_shape(x: Value) -> list[int] | None:
    """The shape when every dimension is known at export time, else None."""
    if x.shape is None:
        return None
    dims = list(x.shape)
    if all(isinstance(d, int) for d in dims):
        return dims
    return None


def rank_of(x: Value) -> int | None:
    return None if x.shape is None else len(x.shape)


def normalize_dim(dim: int, rank: int | None) -> int:
    """A non-negative dim. torch wraps dims of a 0-d tensor as if it had one dim (-1 is 0)."""
    if dim >= 0:
        return dim
    if rank is None:
        raise ValueError(f"negative dim {dim} needs a known rank")
    return dim + max(rank, 1)


def cast(g: GraphContext, x: Value, dtype: ir.DataType) -> Value:
    """Cast unless ``x`` already has ``dtype``."""
    if x.dtype == dtype:
        return x
    return g.op("Cast", x, to=dtype)


def cast_like(g: GraphContext, x: Value, like: Value) -> Value:
    if like.dtype is None:
        return g.op("CastLike", x, like) if g.opset >= 15 else x
    return cast(g, x, like.dtype)


def scalar_like(g: GraphContext, value: float | int | bool, like: Value) -> Value:
    """A 0-d constant with the dtype of ``like`` (ONNX never casts implicitly)."""
    dtype = like.dtype if like.dtype is not None else ir.DataType.FLOAT
    return g.constant(torch.tensor(value, dtype=tensors.to_torch_dtype(dtype)))


def unsqueeze(g: GraphContext, x: Value, axes: Sequence[int]) -> Value:
    if g.opset >= 13:
        return g.op("Unsqueeze", x, g.constant(list(axes)))
    return g.op("Unsqueeze", x, axes=list(axes))


def squeeze(g: GraphContext, x: Value, axes: Sequence[int] | None) -> Value:
    if axes is None:
        return g.op("Squeeze", x)
    if g.opset >= 13:
        return g.op("Squeeze", x, g.constant(list(axes)))
    return g.op("Squeeze", x, axes=list(axes))


def reduce(
    g: GraphContext, op_type: str, x: Value, axes: Sequence[int] | None, keepdims: bool
) -> Value:
    """Reduce* over ``axes`` (None: all axes). torch names dim 0 or -1 of a 0-d tensor, which
    ONNX refuses as out of range: a 0-d tensor is reduced over all (no) axes instead."""
    if axes is not None and x.shape is not None and len(x.shape) == 0:
        axes = None
    axes_as_input = g.opset >= 18 or (op_type == "ReduceSum" and g.opset >= 13)
    if axes is None:
        return g.op(op_type, x, keepdims=int(keepdims))
    if axes_as_input:
        return g.op(op_type, x, g.constant(list(axes)), keepdims=int(keepdims))
    return g.op(op_type, x, axes=list(axes), keepdims=int(keepdims))


def slice_static(
    g: GraphContext,
    x: Value,
    axes: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    steps: Sequence[int] | None = None,
) -> Value:
    """Slice with constant bounds; steps other than 1 need opset 10."""
    if g.opset >= 10:
        inputs = [g.constant(list(starts)), g.constant(list(ends)), g.constant(list(axes))]
        if steps is not None and any(s != 1 for s in steps):
            inputs.append(g.constant(list(steps)))
        return g.op("Slice", x, *inputs)
    if steps is not None and any(s != 1 for s in steps):
        raise ValueError("Slice with a step other than 1 needs opset 10 or higher")
    return g.op("Slice", x, axes=list(axes), starts=list(starts), ends=list(ends))


def shape_of(g: GraphContext, x: Value) -> Value:
    """Shape(x): a constant when the shape is static, so it folds away."""
    shape = static_shape(x)
    if shape is not None:
        return g.constant(shape)
    return g.op("Shape", x)


def dim_size(g: GraphContext, x: Value, dim: int) -> int | Value:
    """Size of one dimension: a Python int when static, a 0-d int64 value otherwise."""
    rank = rank_of(x)
    dim = normalize_dim(dim, rank)
    if x.shape is not None and isinstance(x.shape[dim], int):
        return int(x.shape[dim])
    gathered = g.op("Gather", g.op("Shape", x), g.constant(dim), axis=0)
    gathered.dtype = ir.DataType.INT64
    gathered.shape = ir.Shape([])
    return gathered


def clip(g: GraphContext, x: Value, low: Value | float | None, high: Value | float | None) -> Value:
    """Clip to [low, high]. Clip takes its bounds as inputs from opset 11 (floats only until
    12); before that they are float attributes. Integer tensors below opset 12 go through
    Less/Greater/Where, since Max/Min lack integer kernels there too."""

    def bound(b: Value | float | None) -> Value | None:
        if b is None:
            return None
        return cast_like(g, b, x) if isinstance(b, Value) else scalar_like(g, b, x)

    # onnxruntime's Clip kernels: float/float16 only before opset 12, most numeric types after
    clip_kernel = x.dtype in (ir.DataType.FLOAT, ir.DataType.FLOAT16)
    scalar_bounds = all(
        not isinstance(b, Value) or (b.shape is not None and len(b.shape) == 0) for b in (low, high)
    )
    if scalar_bounds and (g.opset >= 12 or (g.opset >= 11 and clip_kernel)):
        return g.op("Clip", x, bound(low), bound(high))
    if clip_kernel and g.opset < 11 and not isinstance(low, Value) and not isinstance(high, Value):
        attrs = {}
        if low is not None:
            attrs["min"] = float(low)
        if high is not None:
            attrs["max"] = float(high)
        return g.op("Clip", x, **attrs)
    out = x
    low_v, high_v = bound(low), bound(high)
    if low_v is not None:
        out = g.op("Where", g.op("Less", out, low_v), low_v, out)
    if high_v is not None:
        out = g.op("Where", g.op("Greater", out, high_v), high_v, out)
    return out


def where(g: GraphContext, condition: Value, x: Value, y: Value) -> Value:
    """Where, except for bool data, which onnxruntime's Where has no kernel for."""
    if x.dtype == ir.DataType.BOOL:
        return g.op("Or", g.op("And", condition, x), g.op("And", g.op("Not", condition), y))
    return g.op("Where", condition, x, y)


def softmax(g: GraphContext, x: Value, dim: int, *, log: bool = False, rank: int | None = None) -> Value:
    """(Log)Softmax over one dim. Before opset 13 ONNX flattens from ``axis`` on, which is
    only the same as torch for the last dim, so other dims are transposed there and back."""
    op_type = "LogSoftmax" if log else "Softmax"
    rank = rank_of(x) if rank is None else rank
    if g.opset >= 13:
        return g.op(op_type, x, axis=dim)
    if rank is None:
        raise ValueError(f"{op_type} below opset 13 needs the input rank")
    dim = normalize_dim(dim, rank)
    if dim == rank - 1:
        return g.op(op_type, x, axis=dim)
    perm = list(range(rank))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    moved = g.op("Transpose", x, perm=perm)
    out = g.op(op_type, moved, axis=rank - 1)
    return g.op("Transpose", out, perm=perm)


def matmul_transposed_last(g: GraphContext, x: Value) -> Value:
    """x with its last two dims swapped (rank must be known)."""
    rank = rank_of(x)
    if rank is None:
        raise ValueError("transpose of the last two dims needs the rank")
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", x, perm=perm)
