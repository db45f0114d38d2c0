"""Gather and scatter: gather, scatter/scatter_add/scatter_reduce, index_select, take,
take_along_dim, index_fill/index_copy/index_add.

ONNX idioms: opset 9 has Gather and Scatter but no GatherElements/ScatterElements and no
reduction on repeated indices before ScatterElements-16, so scatter with a reduction is a
one-hot contraction (``scatter_reduce``) that sums repeated indices exactly at every opset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs
from exporter.opset9 import arithmetic
from exporter.registry import onnx_symbolic

Value = ir.Value


def _sizes(g: GraphContext, x: Value, what: str) -> list[int | Value]:
    """Every dim size of ``x``: ints where static, 0-d int64 values where dynamic."""
    return [h.dim_size(g, x, i) for i in range(h.known_rank(x, what))]


def _accumulator(dtype: ir.DataType | None) -> ir.DataType | None:
    """A dtype ReduceSum/Max/Prod have kernels for at every opset, holding ``dtype`` exactly."""
    if dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return ir.DataType.FLOAT
    if dtype in (ir.DataType.BOOL, ir.DataType.INT8, ir.DataType.INT16, ir.DataType.UINT8, ir.DataType.UINT16):
        return ir.DataType.INT32
    return dtype


def _identity(reduction: str, dtype: ir.DataType) -> float | int | bool:
    """The neutral element of a reduction in ``dtype``."""
    if reduction == "sum":
        return 0
    if reduction == "prod":
        return 1
    torch_dtype = tensors.to_torch_dtype(dtype)
    if torch_dtype.is_floating_point:
        return -math.inf if reduction == "amax" else math.inf
    info = torch.iinfo(torch_dtype)
    return info.min if reduction == "amax" else info.max


def _combine(g: GraphContext, reduction: str, a: Value, b: Value) -> Value:
    """a (op) b elementwise. Max/Min before opset 12 only take floats; integers compare."""
    if reduction == "sum":
        return g.op("Add", a, b)
    if reduction == "prod":
        return g.op("Mul", a, b)
    return h.max_min(g, a, b, larger=reduction == "amax")


_REDUCE_OP = {"sum": "ReduceSum", "prod": "ReduceProd", "amax": "ReduceMax", "amin": "ReduceMin"}


def _pad_to_static(g: GraphContext, x: Value, target: Sequence[int], skip_axis: int, fill: float | int) -> Value:
    """Extend ``x`` (static shape) with ``fill`` up to ``target`` on every axis but ``skip_axis``."""
    shape = h.static_shape(x)
    assert shape is not None
    for axis, (have, want) in enumerate(zip(shape, target)):
        if axis == skip_axis or have >= want:
            continue
        block_shape = list(shape)
        block_shape[axis] = want - have
        block = torch.full(block_shape, fill, dtype=tensors.to_torch_dtype(x.dtype))
        x = g.op("Concat", x, g.constant(block), axis=axis)
        shape[axis] = want
        x.shape = ir.Shape(shape)
    return x


def _covers(index: Value, self: Value, dim: int) -> bool:
    """Whether ``index`` is known to have ``self``'s sizes on every dim but ``dim`` (the same
    static size, or the same named dim)."""
    if index.shape is None or self.shape is None:
        return False
    return all(
        axis == dim or (i == n and (isinstance(i, int) or (i.value is not None)))
        for axis, (i, n) in enumerate(zip(index.shape, self.shape))
    )


def _pad_to_run_time(
    g: GraphContext, index: Value, src: Value, self: Value, dim: int, rank: int, reduction: str
) -> tuple[Value, Value]:
    """``index`` padded with -1 (which matches no position) and ``src`` with 0 up to ``self``'s
    run-time sizes on every dim but ``dim`` (torch requires index.size(d) <= self.size(d)
    there): the one-hot lowering of a reducing scatter when the sizes are known only at run
    time. Pad-11 takes run-time pads."""
    refusal = (
        "a reducing scatter whose index may be smaller than the input on other dims needs "
        f"static sizes below opset 11 (Pad takes run-time pads from 11); ScatterElements "
        f"reduces itself from opset {h.SCATTER_REDUCTIONS[reduction][1]}"
    )
    keep = g.constant([0 if axis == dim else 1 for axis in range(rank)])
    grow = g.op("Mul", g.op("Sub", h.shape_of(g, self), h.shape_of(g, index)), keep)
    pads = g.op("Concat", g.constant([0] * rank), grow, axis=0)
    index = h.pad_run_time(g, index, pads, "constant", -1, refusal=refusal)
    src = h.pad_run_time(g, src, pads, "constant", 0, refusal=refusal)
    return index, src


def _scatter_reduce_onehot(
    g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduction: str, covers: bool = False
) -> Value:
    """Scatter with a reduction that combines repeated indices, without a reducing scatter.

    For self [.., N, ..] and index/src [.., M, ..], an [.., M, N, ..] match of each index
    against 0..N-1 selects src (Where, so an inf in src cannot leak into other positions as
    0*inf would) or the reduction's identity; reducing over M gives each target's combined
    update, which is folded into self. Index dims other than ``dim`` smaller than self's are
    padded with -1, which matches no position; ``covers`` says the caller knows they are equal
    (index_add: torch requires it), which sizes known only at run time cannot show. Memory is
    size(src) * N.
    """
    rank = h.known_rank(self, "scatter with a reduction")
    index = h.cast(g, index, ir.DataType.INT64)
    self_shape, index_shape = h.static_shape(self), h.static_shape(index)
    if (
        self_shape is not None
        and index_shape is not None
        and any(a != dim and i != s for a, (i, s) in enumerate(zip(index_shape, self_shape)))
    ):
        index = _pad_to_static(g, index, self_shape, dim, -1)
        src = _pad_to_static(g, src, self_shape, dim, 0)
    elif not covers and not _covers(index, self, dim):
        index, src = _pad_to_run_time(g, index, src, self, dim, rank, reduction)
    acc = _accumulator(self.dtype)
    assert acc is not None
    src_acc, self_acc = h.cast(g, src, acc), h.cast(g, self, acc)
    positions = g.op("Reshape", h.iota(g, h.dim_size(g, self, dim)), g.constant(h.axis_shape(rank + 1, dim + 1)))
    match = g.op("Equal", h.unsqueeze(g, index, [dim + 1]), positions)
    identity = g.constant(torch.tensor(_identity(reduction, acc), dtype=tensors.to_torch_dtype(acc)))
    picked = g.op("Where", match, h.unsqueeze(g, src_acc, [dim + 1]), identity)
    combined = h.reduce(g, _REDUCE_OP[reduction], picked, [dim], False)
    combined.dtype = acc
    return h.cast(g, _combine(g, reduction, self_acc, combined), self.dtype)


def scatter(g: GraphContext, data: Value, index: Value, updates: Value, axis: int) -> Value:
    """ScatterElements (opset 11) or its predecessor Scatter, which has the same semantics.
    Callers pass indices in [0, size): torch rejects negative ones for scatter, index_copy
    and index_add, and the indexing positions are wrapped already."""
    return h.scatter_elements(g, data, h.cast(g, index, ir.DataType.INT64), updates, axis)


def scatter_reduce(
    g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduction: str, covers: bool = False
) -> Value:
    """Scatter combining repeated indices: ScatterElements' reduction where it exists (add/mul
    from 16, max/min from 18: the symbolics calling this are registered there too), else the
    one-hot lowering (``covers``: the index has self's sizes on every dim but ``dim``, see
    _scatter_reduce_onehot)."""
    name = h.scatter_reduction(g, reduction)
    if name is not None:
        # onnxruntime has no half kernels for reducing ScatterElements: reduce in float
        acc = ir.DataType.FLOAT if self.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16) else self.dtype
        out = g.op(
            "ScatterElements",
            h.cast(g, self, acc),
            h.cast(g, index, ir.DataType.INT64),
            h.cast(g, src, acc),
            axis=dim,
            reduction=name,
        )
        return h.cast(g, out, self.dtype)
    return _scatter_reduce_onehot(g, self, dim, index, h.cast(g, src, self.dtype), reduction, covers)


def _fit_to_index(g: GraphContext, src: Value, index: Value) -> Value:
    """src cut to index's shape: torch reads only that corner, ScatterElements needs equal shapes."""
    src_shape, index_shape = h.static_shape(src), h.static_shape(index)
    if src_shape is not None and index_shape is not None:
        if src_shape == index_shape:
            return src
        axes = list(range(len(index_shape)))
        return h.slice_static(g, src, axes, [0] * len(axes), index_shape)
    cut = h.slice_like(g, src, index, "scatter")
    # Slice-1 cannot cut at run-time sizes: src is kept whole (torch's usual use has equal shapes)
    return src if cut is None else cut


def _along(g: GraphContext, index: Value, dim: int, like: Value) -> Value:
    """A 1-D index of ``dim`` (index_copy/index_add) expanded to the shape of ``like``."""
    rank = h.known_rank(like, "index_add/index_copy")
    flat = h.cast(g, g.op("Reshape", index, g.constant([-1])), ir.DataType.INT64)
    placed = g.op("Reshape", flat, g.constant(h.axis_shape(rank, dim)))
    return g.op("Expand", placed, h.shape_of(g, like))


@onnx_symbolic("aten::gather", complex_inputs=ComplexInputs.PARTS)
def aten_gather(g: GraphContext, self: Value, dim: int, index: Value, sparse_grad: bool = False) -> Value:
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor

    GatherElements from opset 11 (symbolic_opset11). Before it (static sizes), each index
    becomes a position in the flattened input (the other coordinates are the index's own, folded into a constant),
    read with one Gather: exact for every dtype, unlike a one-hot product (0*inf is NaN, and
    there is no integer MatMul).
    """
    del sparse_grad
    rank = h.known_rank(self, "gather")
    dim = h.normalize_dim(dim, rank)
    index = h.cast(g, index, ir.DataType.INT64)
    self_shape, index_shape = h.static_shape(self), h.static_shape(index)
    if self_shape is None or index_shape is None:
        raise NeedsExportTimeValue("gather on sizes known only at run time needs opset 11 (GatherElements)")
    strides = [math.prod(self_shape[a + 1 :]) for a in range(rank)]
    base = torch.zeros(index_shape, dtype=torch.int64)
    for axis in range(rank):
        if axis != dim:
            base = base + torch.arange(index_shape[axis]).view(h.axis_shape(rank, axis)) * strides[axis]
    positions = g.op("Add", g.op("Mul", index, g.constant(strides[dim])), g.constant(base))
    return g.op("Gather", g.op("Reshape", self, g.constant([-1])), positions, axis=0)


@onnx_symbolic("aten::scatter", opset=16)
@onnx_symbolic("aten::scatter")
def aten_scatter(
    g: GraphContext,
    self: Value,
    dim: int,
    index: Value,
    src: Value | None = None,
    value: Value | None = None,
    reduce: str | None = None,
) -> Value:
    """scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor (and .value, .reduce, .value_reduce)

    Scatter at opset 9-10, ScatterElements from 11. reduce='add'/'multiply' must combine
    repeated indices: ScatterElements' reduction from 16, the one-hot lowering before.
    """
    rank = h.known_rank(self, "scatter")
    dim = h.normalize_dim(dim, rank)
    if src is not None:
        updates = h.cast(g, _fit_to_index(g, src, index), self.dtype)
    elif value is not None:
        updates = g.op("Expand", h.cast(g, value, self.dtype), h.shape_of(g, index))
    else:
        raise ValueError("scatter needs src or value")
    if reduce is None:
        return scatter(g, self, index, updates, dim)
    reductions = {"add": "sum", "multiply": "prod"}
    if reduce not in reductions:
        raise ValueError(f"unknown scatter reduce {reduce!r}")
    return scatter_reduce(g, self, dim, index, updates, reductions[reduce])


@onnx_symbolic("aten::scatter_add", opset=16)
@onnx_symbolic("aten::scatter_add")
def aten_scatter_add(g: GraphContext, self: Value, dim: int, index: Value, src: Value) -> Value:
    """scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor

    Repeated indices add up. A plain scatter keeps one of them (torch's exporter below
    opset 16 does that), so before ScatterElements-16's reduction='add' the sums go through
    the one-hot lowering.
    """
    rank = h.known_rank(self, "scatter_add")
    dim = h.normalize_dim(dim, rank)
    return scatter_reduce(g, self, dim, index, _fit_to_index(g, src, index), "sum")


@onnx_symbolic("aten::scatter_reduce", opset=18)
@onnx_symbolic("aten::scatter_reduce", opset=16)
@onnx_symbolic("aten::scatter_reduce")
def aten_scatter_reduce(
    g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduce: str, include_self: bool = True
) -> Value:
    """scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor

    ScatterElements reduces from opset 16 (add/mul; max/min from 18); before that the
    one-hot lowering combines repeated indices, so every opset from 9 works (torch's exporter
    needs 16). include_self=False first overwrites every target with the reduction's
    identity; mean divides a sum by a scattered count (flooring for integers, as torch does)
    and leaves untouched positions as they were.
    """
    rank = h.known_rank(self, "scatter_reduce")
    dim = h.normalize_dim(dim, rank)
    src = h.cast(g, _fit_to_index(g, src, index), self.dtype)
    index = h.cast(g, index, ir.DataType.INT64)
    index_shape = h.shape_of(g, index)
    if reduce == "mean":
        zero = h.scalar_like(g, 0, self)
        one = h.scalar_like(g, 1, self)
        base = self if include_self else scatter(g, self, index, g.op("Expand", zero, index_shape), dim)
        total = scatter_reduce(g, base, dim, index, src, "sum")
        start = g.op("Expand", one if include_self else zero, h.shape_of(g, self))
        counts = scatter_reduce(g, start, dim, index, g.op("Expand", one, index_shape), "sum")
        if include_self:
            return g.op("Div", total, counts) if h.is_floating(self) else arithmetic.floor_divide(g, total, counts)
        untouched = g.op("Not", g.op("Greater", h.comparable(g, counts), h.comparable(g, zero)))  # counts >= 0
        safe = g.op("Where", untouched, one, counts)
        mean = g.op("Div", total, safe) if h.is_floating(self) else arithmetic.floor_divide(g, total, safe)
        return g.op("Where", untouched, self, mean)
    if reduce not in _REDUCE_OP:
        raise ValueError(f"unknown scatter_reduce reduction {reduce!r}")
    data = self
    if not include_self:
        identity = g.constant(torch.tensor(_identity(reduce, self.dtype), dtype=tensors.to_torch_dtype(self.dtype)))
        data = scatter(g, self, index, g.op("Expand", identity, index_shape), dim)
    return scatter_reduce(g, data, dim, index, src, reduce)


@onnx_symbolic("aten::index_select", complex_inputs=ComplexInputs.PARTS)
def aten_index_select(g: GraphContext, self: Value, dim: int, index: Value) -> Value:
    """index_select(Tensor self, int dim, Tensor index) -> Tensor

    A 0-d index selects a dim of size 1 (the dim stays), as in torch.
    """
    rank = h.known_rank(self, "index_select")
    dim = h.normalize_dim(dim, rank) if rank > 0 else 0
    if rank == 0:
        return self
    index = h.cast(g, index, ir.DataType.INT64)
    if h.rank_of(index) == 0:
        index = g.op("Reshape", index, g.constant([1]))
    return g.op("Gather", self, index, axis=dim)


@onnx_symbolic("aten::take")
def aten_take(g: GraphContext, self: Value, index: Value) -> Value:
    """take(Tensor self, Tensor index) -> Tensor: a Gather from the flattened input."""
    numel = h.prod_sizes(g, _sizes(g, self, "take"))
    flat = g.op("Reshape", self, g.constant([-1]))
    return g.op("Gather", flat, h.normalize_index(g, index, numel), axis=0)


@onnx_symbolic("aten::take_along_dim")
def aten_take_along_dim(g: GraphContext, self: Value, indices: Value, dim: int | None = None) -> Value:
    """take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor: aten::gather's
    static-size form (symbolic_opset11: GatherElements, any size)"""
    return take_along_dim_with(g, self, indices, dim, aten_gather)


def take_along_dim_with(
    g: GraphContext,
    self: Value,
    indices: Value,
    dim: int | None,
    gather: Callable[[GraphContext, Value, int, Value], Value],
) -> Value:
    """Without a dim, a Gather from the flattened input (a 1-d result, as torch). With one,
    ``gather`` (aten::gather of the opset) after torch's broadcast: every dim but ``dim``
    broadcasts between the two (Expand broadcasts both ways: each is expanded to the other's
    shape with ``dim`` set to 1)."""
    index = h.cast(g, indices, ir.DataType.INT64)
    if dim is None:
        flat = g.op("Reshape", self, g.constant([-1]))
        return g.op("Gather", flat, g.op("Reshape", index, g.constant([-1])), axis=0)
    rank = h.known_rank(self, "take_along_dim")
    dim = h.normalize_dim(dim, rank)
    self_shape, index_shape = h.static_shape(self), h.static_shape(index)
    if self_shape is not None and index_shape is not None:
        others = torch.broadcast_shapes(
            tuple(1 if a == dim else n for a, n in enumerate(self_shape)),
            tuple(1 if a == dim else n for a, n in enumerate(index_shape)),
        )
        data_shape = [self_shape[dim] if a == dim else n for a, n in enumerate(others)]
        taken_shape = [index_shape[dim] if a == dim else n for a, n in enumerate(others)]
        data = self if data_shape == self_shape else g.op("Expand", self, g.constant(data_shape))
        index = index if taken_shape == index_shape else g.op("Expand", index, g.constant(taken_shape))
    else:
        one = g.constant([1])
        data = g.op("Expand", self, _with_one_at(g, index, dim, one))
        index = g.op("Expand", index, _with_one_at(g, self, dim, one))
    return gather(g, data, dim, index)


def _with_one_at(g: GraphContext, x: Value, dim: int, one: Value) -> Value:
    """x's shape with a 1 at ``dim``: what Expand broadcasts every other dim to."""
    shape = h.shape_of(g, x)
    rank = h.known_rank(x, "take_along_dim")
    parts = [h.slice_static(g, shape, [0], [0], [dim]), one, h.slice_static(g, shape, [0], [dim + 1], [rank])]
    return g.op("Concat", *parts, axis=0)


@onnx_symbolic("aten::index_fill")
def aten_index_fill(g: GraphContext, self: Value, dim: int, index: Value, value: Value) -> Value:
    """index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor (and .int_Scalar)

    A Where over a bool vector of the selected positions along ``dim`` (any match of the
    index against 0..N-1): no scatter needed, so every opset handles it alike.
    """
    rank = h.known_rank(self, "index_fill")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    flat = h.normalize_index(g, g.op("Reshape", index, g.constant([-1])), size)
    match = g.op("Equal", h.unsqueeze(g, flat, [1]), h.unsqueeze(g, h.iota(g, size), [0]))
    hits = h.reduce(g, "ReduceMax", h.cast(g, match, ir.DataType.INT32), [0], False)
    selected = g.op("Reshape", h.cast(g, hits, ir.DataType.BOOL), g.constant(h.axis_shape(rank, dim)))
    return h.where(g, selected, h.cast(g, value, self.dtype), self)


@onnx_symbolic("aten::index_copy")
def aten_index_copy(g: GraphContext, self: Value, dim: int, index: Value, source: Value) -> Value:
    """index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor: a scatter with
    the 1-D index spread over source's shape."""
    rank = h.known_rank(self, "index_copy")
    dim = h.normalize_dim(dim, rank)
    positions = _along(g, index, dim, source)
    return scatter(g, self, positions, h.cast(g, source, self.dtype), dim)


@onnx_symbolic("aten::index_add", opset=16)
@onnx_symbolic("aten::index_add")
def aten_index_add(g: GraphContext, self: Value, dim: int, index: Value, source: Value, alpha: float = 1) -> Value:
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor

    Repeated indices add up at every opset: ScatterElements' reduction='add' from 16, the
    one-hot lowering before.
    """
    rank = h.known_rank(self, "index_add")
    dim = h.normalize_dim(dim, rank)
    source = h.cast(g, source, self.dtype)
    if alpha != 1:
        source = g.op("Mul", source, h.scalar_like(g, alpha, source))
    positions = _along(g, index, dim, source)
    # torch requires source to match self on every other dim, also when sizes are dynamic
    return scatter_reduce(g, self, dim, positions, source, "sum", covers=True)
