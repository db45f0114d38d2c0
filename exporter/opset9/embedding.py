"""Embeddings: embedding, embedding_bag (sum/mean/max, offsets, per-sample weights,
include_last_offset, padding_idx) and embedding_renorm.

ONNX idioms: embedding is a Gather; bags reduce the gathered rows per offset window with a
one-hot segment matrix, so they stay exact at opset 9 without loops.
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::embedding")
def aten_embedding(
    g: GraphContext,
    weight: Value,
    indices: Value,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Value:
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor

    padding_idx, scale_grad_by_freq and sparse only affect gradients.
    """
    del padding_idx, scale_grad_by_freq, sparse
    return g.op("Gather", weight, indices, axis=0)


def _embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    mode: int,
    per_sample_weights: Value | None,
    include_last_offset: bool,
    padding_idx: int | None,
) -> tuple[Value, Value, Value, Value]:
    """Bags from a [bags, L] membership matrix: bag b holds positions offsets[b] <= j < end[b].
    Sum and mean are a MatMul of the membership with the gathered rows (finite weights
    assumed: a 0*inf would spread NaN to other bags); max is a ReduceMax over rows masked to
    -inf. Empty bags are 0, as in torch. Only the first output is computed: the others are
    backward helpers and come back empty."""
    if h.rank_of(indices) != 1:
        raise ValueError("embedding_bag expects 1-D indices with offsets")
    indices = h.cast(g, indices, ir.DataType.INT64)
    offsets = h.cast(g, offsets, ir.DataType.INT64)
    length = h.dim_size(g, indices, 0)
    starts = h.slice_static(g, offsets, [0], [0], [-1]) if include_last_offset else offsets
    tail = h.slice_static(g, offsets, [0], [1], [h.INT64_MAX])
    ends = tail if include_last_offset else g.op("Concat", tail, g.list_to_value([length]), axis=0)
    positions = h.unsqueeze(g, h.iota(g, length), [0])  # [1, L]
    starts, ends = h.unsqueeze(g, starts, [1]), h.unsqueeze(g, ends, [1])  # [B, 1]
    member = g.op("And", g.op("Not", g.op("Less", positions, starts)), g.op("Less", positions, ends))
    if padding_idx is not None and padding_idx >= 0:
        kept = g.op("Not", g.op("Equal", indices, g.constant(padding_idx)))
        member = g.op("And", member, h.unsqueeze(g, kept, [0]))
    rows = g.op("Gather", weight, indices, axis=0)  # [L, D]
    if per_sample_weights is not None:
        if mode != 0:
            raise ValueError("embedding_bag per_sample_weights only work with mode='sum'")
        rows = g.op("Mul", rows, h.unsqueeze(g, h.cast(g, per_sample_weights, weight.dtype), [1]))
    work = ir.DataType.FLOAT if weight.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16) else weight.dtype
    rows = h.cast(g, rows, work)
    counts = h.reduce(g, "ReduceSum", h.cast(g, member, work), [1], True)  # [B, 1]
    if mode in (0, 1):
        out = g.op("MatMul", h.cast(g, member, work), rows)
        if mode == 1:
            one = g.constant(torch.tensor(1, dtype=tensors.to_torch_dtype(work)))
            out = g.op("Div", out, g.op("Max", counts, one))
    elif mode == 2:
        minus_inf = g.constant(torch.tensor(-math.inf, dtype=tensors.to_torch_dtype(work)))
        picked = g.op("Where", h.unsqueeze(g, member, [2]), h.unsqueeze(g, rows, [0]), minus_inf)
        out = h.reduce(g, "ReduceMax", picked, [1], False)
        zero = g.constant(torch.tensor(0, dtype=tensors.to_torch_dtype(work)))
        out = g.op("Where", g.op("Greater", counts, zero), out, zero)
    else:
        raise ValueError(f"unknown embedding_bag mode {mode}")
    empty = h.empty_int64(g)
    return h.cast(g, out, weight.dtype), empty, empty, empty


@onnx_symbolic("aten::embedding_bag")
def aten_embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Value | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Value, Value, Value, Value]:
    """embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)

    Mode 0 sum, 1 mean, 2 max; scale_grad_by_freq and sparse only affect gradients. Every
    opset (no Loop): see _embedding_bag.
    """
    del scale_grad_by_freq, sparse
    return _embedding_bag(g, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


@onnx_symbolic("aten::_embedding_bag")
def aten__embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Value | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
) -> tuple[Value, Value, Value, Value]:
    """_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)

    padding_idx=-1 means none here (the public op has already made a given one positive).
    """
    del scale_grad_by_freq, sparse
    return _embedding_bag(g, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


@onnx_symbolic("aten::embedding_renorm")
def aten_embedding_renorm(g: GraphContext, self: Value, indices: Value, max_norm: float, norm_type: float) -> Value:
    """embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor

    (from embedding_renorm_, which F.embedding(max_norm=...) applies to the weight.) Rows
    that are referenced and whose norm exceeds max_norm are scaled by max_norm/(norm+1e-7),
    torch's formula; a bool vector of referenced rows replaces the scatter, so opset 9 works.
    """
    rank = h.known_rank(self, "embedding_renorm")
    if rank != 2:
        raise ValueError("embedding_renorm expects a 2-D weight")
    x = self
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, x, ir.DataType.FLOAT)
    magnitude = g.op("Abs", x)
    if norm_type == math.inf:
        norm = h.reduce(g, "ReduceMax", magnitude, [1], True)
    elif norm_type == 1:
        norm = h.reduce(g, "ReduceSum", magnitude, [1], True)
    elif norm_type == 2:
        norm = g.op("Sqrt", h.reduce(g, "ReduceSum", g.op("Mul", x, x), [1], True))
    else:
        powered = g.op("Pow", magnitude, h.scalar_like(g, norm_type, x))
        norm = g.op("Pow", h.reduce(g, "ReduceSum", powered, [1], True), h.scalar_like(g, 1.0 / norm_type, x))
    norm.dtype = x.dtype
    rows = h.dim_size(g, self, 0)
    flat = h.normalize_index(g, g.op("Reshape", indices, g.constant([-1])), rows)
    match = g.op("Equal", h.unsqueeze(g, flat, [1]), h.unsqueeze(g, h.iota(g, rows), [0]))
    used = h.cast(g, h.reduce(g, "ReduceMax", h.cast(g, match, ir.DataType.INT32), [0], False), ir.DataType.BOOL)
    limit = h.scalar_like(g, max_norm, x)
    scale = g.op("Div", limit, g.op("Add", norm, h.scalar_like(g, 1e-7, x)))
    renorm = g.op("And", h.unsqueeze(g, used, [1]), g.op("Greater", norm, limit))
    out = g.op("Where", renorm, g.op("Mul", x, scale), x)
    return h.cast(g, out, self.dtype)
