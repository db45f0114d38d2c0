"""Splitting and joining: cat/stack/hstack/vstack/column_stack/dstack/atleast_*,
split/chunk/tensor_split/unbind/hsplit/vsplit/dsplit and the ConstantChunk/ConstantSplit prims.

ONNX idioms: Concat takes one dtype, so cat/stack cast to torch's promoted type first (``promoted``);
Split with sizes known at export time (an attribute before 13, an input from 13);
run-time sizes slice with Shape arithmetic; cat of a RuntimeList is ConcatFromSequence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter import symbolic_helper as h
from exporter import tensors as tensors_module
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Quantized
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList

Value = ir.Value


def _add_sizes(g: GraphContext, a: int | Value, b: int | Value) -> int | Value:
    """Sum of two sizes or offsets, folded when both are known."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    a_v = a if isinstance(a, Value) else g.constant(a)
    b_v = b if isinstance(b, Value) else g.constant(b)
    return g.op("Add", h.cast(g, a_v, ir.DataType.INT64), h.cast(g, b_v, ir.DataType.INT64))


def promoted(g: GraphContext, tensors: Sequence[Value]) -> list[Value]:
    """The tensors cast to their torch result type (cat/stack promote: int64 with float32 is
    float32, float16 with float32 is float32), since Concat requires one dtype."""
    dtypes = [t.dtype for t in tensors]
    if None in dtypes or len(set(dtypes)) <= 1:
        return list(tensors)
    target = tensors_module.to_torch_dtype(dtypes[0])
    for dtype in dtypes[1:]:
        target = torch.promote_types(target, tensors_module.to_torch_dtype(dtype))
    return [h.cast(g, t, h.ir_dtype(target)) for t in tensors]


@onnx_symbolic("aten::cat", complex_inputs=ComplexInputs.PARTS)
def aten_cat(g: GraphContext, tensors: Sequence[Value] | RuntimeList, dim: int = 0) -> Value:  # noqa: F811
    """cat(Tensor[] tensors, int dim=0) -> Tensor: mixed dtypes promote as in torch.result_type"""
    if isinstance(tensors, RuntimeList):
        return runtime_list.cat(g, tensors, dim)
    tensors = promoted(g, tensors)
    # torch skips 1-D empty tensors (``torch.tensor([])``, an empty cache's start) whatever the
    # rank of the others; Concat would reject the rank mismatch
    kept = [t for t in tensors if h.static_shape(t) != [0]]
    if kept and len(kept) < len(tensors):
        tensors = kept
    if len(tensors) == 1:
        return tensors[0]
    return g.op("Concat", *tensors, axis=dim)


@onnx_symbolic("aten::stack", complex_inputs=ComplexInputs.PARTS)
def aten_stack(g: GraphContext, tensors: Sequence[Value] | RuntimeList, dim: int = 0) -> Value:  # noqa: F811
    """stack(Tensor[] tensors, int dim=0) -> Tensor: mixed dtypes promote as in cat"""
    if isinstance(tensors, RuntimeList):
        return runtime_list.stack(g, tensors, dim)
    tensors = promoted(g, tensors)
    rank = h.rank_of(tensors[0])
    if dim < 0:
        if rank is None:
            raise NeedsExportTimeValue("stack with a negative dim needs the input rank")
        dim += rank + 1
    parts = [h.unsqueeze(g, t, [dim]) for t in tensors]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=dim)


def _split_static(g: GraphContext, x: Value, sizes: Sequence[int], dim: int) -> list[Value]:
    """Split ``x`` along ``dim`` into pieces of the given export-time sizes.

    Split takes the sizes as an attribute before opset 13 and as an input from 13 (at 18
    the num_outputs attribute is the alternative to sizes, not needed with them).
    """
    sizes = [int(s) for s in sizes]
    if len(sizes) == 1:
        return [x]
    return list(h.split_static(g, x, sizes, dim))


def _split_sizes(total: int, split_size: int) -> list[int]:
    """torch.split by a size: full pieces and a shorter last one (one empty piece for 0)."""
    if split_size <= 0:
        raise ValueError(f"split_size must be positive, got {split_size}")
    if total == 0:
        return [0]
    sizes = [split_size] * (total // split_size)
    if total % split_size:
        sizes.append(total % split_size)
    return sizes


def _chunk_sizes(total: int, chunks: int) -> list[int]:
    """torch.chunk: pieces of ceil(total/chunks), so fewer than ``chunks`` may come out."""
    if chunks <= 0:
        raise ValueError(f"chunks must be positive, got {chunks}")
    return _split_sizes(total, max(1, math.ceil(total / chunks)))


def _atleast(g: GraphContext, x: Value, ndim: int) -> Value:
    rank = h.known_rank(x, f"atleast_{ndim}d")
    if rank >= ndim:
        return x
    if ndim == 3 and rank == 1:
        return h.unsqueeze(g, x, [0, 2])
    if ndim == 3 and rank == 2:
        return h.unsqueeze(g, x, [2])
    return h.unsqueeze(g, x, list(range(ndim - rank)))


def _output_count(g: GraphContext) -> int | None:
    """How many items a list-returning node yields, when a prim::ListUnpack consumes it."""
    if g.node is None or g.node.outputsSize() != 1:
        return None
    uses = g.node.output().uses()
    if len(uses) == 1 and uses[0].user.kind() == "prim::ListUnpack":
        return uses[0].user.outputsSize()
    return None


def _pieces_sequence(g: GraphContext, x: Value, piece: int | Value, dim: int, refusal: str) -> RuntimeList:
    """Pieces of ``piece`` items along ``dim`` (the last one shorter), as a list whose length
    is only known at run time: one SplitToSequence with a scalar split, which cuts exactly as
    torch's split and chunk do. Used where the pieces are not unpacked (returned or iterated),
    so ONNX cannot fix their count; below opset 11, which has no sequences, ``refusal``."""
    split = g.constant(piece) if isinstance(piece, int) else h.cast(g, piece, ir.DataType.INT64)
    pieces = RuntimeList(item_dtype=x.dtype)
    pieces.item_rank = h.rank_of(x)
    pieces.set_sequence(h.split_to_sequence(g, x, split, dim, refusal=refusal))
    return pieces


def _split_by(
    g: GraphContext, self: Value, split: int | Sequence[int] | Value, dim: int, count: int | None = None
) -> list[Value] | RuntimeList:
    """split by a size or by sizes. By a size along a dim known only at run time, piece i is
    the constant slice [i*size, (i+1)*size) (Slice clamps the last one); how many pieces
    there are is read from the ListUnpack (or the node's outputs) since ONNX needs it fixed.
    A size computed at run time cuts each piece by a Gather of its clamped index range."""
    rank = h.known_rank(self, "split")
    dim = h.normalize_dim(dim, rank)
    if isinstance(split, Value):
        count = _output_count(g) if count is None else count
        if count is None:
            refusal = (
                "argument 'split_size' computed at run time needs the pieces unpacked (a, b = x.split(n)) "
                "below opset 11: ONNX fixes the number of outputs"
            )
            return _pieces_sequence(g, self, split, dim, refusal)
        piece = h.cast(g, split, ir.DataType.INT64)
        return _cut_pieces(g, self, piece, dim, _dim_size_value(g, self, dim), count, _gather_piece)
    if not isinstance(split, int):
        if any(isinstance(size, Value) for size in split):
            return _split_run_time_sizes(g, self, split, dim)
        return _split_static(g, self, [int(size) for size in split], dim)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return _split_static(g, self, _split_sizes(size, split), dim)
    count = _output_count(g) if count is None else count
    if count is None:
        refusal = "split of a dynamic dim needs its pieces unpacked below opset 11 (the count must be static)"
        return _pieces_sequence(g, self, split, dim, refusal)
    # the last piece is open-ended: it takes whatever the run-time dim leaves
    ends = [(i + 1) * split for i in range(count - 1)] + [h.INT64_MAX]
    return [h.slice_static(g, self, [dim], [i * split], [ends[i]]) for i in range(count)]


@onnx_symbolic("aten::split", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_split(
    g: GraphContext,
    self: Value,
    split_size: int | Sequence[int] | Sequence[int | Value] | Value | None = None,
    split_sizes: Sequence[int] | Sequence[int | Value] | None = None,
    dim: int = 0,
) -> list[Value] | RuntimeList:
    """split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]; split.sizes; split(self, int[] split_sizes, dim)

    Sizes must be known at export time: the number of ONNX outputs is fixed in the graph.
    A split_size covering the whole dim yields the input itself.
    """
    split = split_size if split_size is not None else split_sizes
    if split is None:
        raise ValueError("split needs split_size or split_sizes")
    return _split_by(g, self, split, dim)


@onnx_symbolic("aten::split_with_sizes", complex_inputs=ComplexInputs.PARTS)
def aten_split_with_sizes(
    g: GraphContext, self: Value, split_sizes: Sequence[int] | Sequence[int | Value] | RuntimeList, dim: int = 0
) -> list[Value] | RuntimeList:
    """split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]

    Sizes computed at run time (``[n // 2, n - n // 2]``) cut slices at their running sums.
    A list of sizes whose length is only known at run time (``lengths.tolist()``) gives as
    many pieces: SplitToSequence (opset 11), a run-time list.
    """
    if isinstance(split_sizes, RuntimeList):
        refusal = "split with a run-time number of sizes needs opset 11 (SplitToSequence)"
        sizes = h.cast(g, runtime_list.tensor_of(g, split_sizes), ir.DataType.INT64)
        pieces = RuntimeList(sequence=h.split_to_sequence(g, self, sizes, dim, refusal=refusal), item_dtype=self.dtype)
        pieces.item_rank = h.rank_of(self)
        pieces.sequence.type = pieces.sequence_type()  # type: ignore[union-attr]
        return pieces
    return _split_by(g, self, list(split_sizes), dim)


@onnx_symbolic("aten::unsafe_split", complex_inputs=ComplexInputs.PARTS)
def aten_unsafe_split(g: GraphContext, self: Value, split_size: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[] (split
    without view tracking; the values are the same)"""
    return _split_by(g, self, split_size, dim)


@onnx_symbolic("aten::unsafe_split_with_sizes")
def aten_unsafe_split_with_sizes(
    g: GraphContext, self: Value, split_sizes: Sequence[int] | Sequence[int | Value], dim: int = 0
) -> list[Value] | RuntimeList:
    """unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"""
    return _split_by(g, self, list(split_sizes), dim)


def _split_run_time_sizes(g: GraphContext, x: Value, sizes: Sequence[int | Value], dim: int) -> list[Value]:
    """Pieces of sizes known only at run time: the slice between consecutive running sums
    (Slice-10 takes run-time bounds; below, h.slice_dynamic gathers the positions). The
    last piece runs to the end, as the sizes must add up to the dim in torch."""
    pieces = []
    start: int | Value = 0
    for position, size in enumerate(sizes):
        if isinstance(size, Value):
            size = h.cast(g, size, ir.DataType.INT64)
        end = h.INT64_MAX if position == len(sizes) - 1 else _add_sizes(g, start, size)
        if isinstance(start, int) and isinstance(end, int):
            pieces.append(h.slice_static(g, x, [dim], [start], [end]))
        else:
            pieces.append(h.slice_dynamic(g, x, dim, start, end))
        start = end
    return pieces


# cut(g, x, start, end, size, dim): the piece [start, end) of a dim of run-time ``size``
ChunkPiece = Callable[[GraphContext, Value, Value, Value, Value, int], Value]


def _gather_piece(g: GraphContext, x: Value, start: Value, end: Value, size: Value, dim: int) -> Value:
    """Slice-1 takes constant bounds only: gather the clamped index range instead."""

    def at_most_size(v: Value) -> Value:
        return g.op("Where", g.op("Less", v, size), v, size)

    index = h.arange(g, at_most_size(start), at_most_size(end), 1, torch.int64)
    return g.op("Gather", x, index, axis=dim)


def _dim_size_value(g: GraphContext, x: Value, dim: int) -> Value:
    """The size of ``dim`` as a 0-d int64 value (a constant when known at export time)."""
    size = h.dim_size(g, x, dim)
    return g.constant(size) if isinstance(size, int) else size


def _cut_pieces(
    g: GraphContext, x: Value, piece: Value, dim: int, size: Value, count: int, cut: ChunkPiece
) -> list[Value]:
    """``count`` pieces [i*piece, (i+1)*piece) of ``dim``, ``piece`` computed at run time."""
    pieces = []
    for i in range(count):
        start = g.op("Mul", piece, g.constant(i))
        end = g.op("Mul", piece, g.constant(i + 1))
        pieces.append(cut(g, x, start, end, size, dim))
    return pieces


def chunk_with(
    g: GraphContext, self: Value, chunks: int | Value, dim: int, cut: ChunkPiece
) -> list[Value] | RuntimeList:
    """aten::chunk; the pieces of a dim of run-time size are cut with ``cut``. A ``chunks``
    computed at run time gives pieces of ceil(size/chunks) computed in the graph."""
    rank = h.known_rank(self, "chunk")
    dim = h.normalize_dim(dim, rank)
    if isinstance(chunks, Value):
        count = _output_count(g)
        size = _dim_size_value(g, self, dim)
        n = h.cast(g, chunks, ir.DataType.INT64)
        piece = g.op("Div", g.op("Sub", g.op("Add", size, n), g.constant(1)), n)
        if count is None:
            refusal = (
                "argument 'chunks' computed at run time needs the pieces unpacked (a, b = x.chunk(n)) "
                "below opset 11: ONNX fixes the number of outputs"
            )
            return _pieces_sequence(g, self, piece, dim, refusal)
        return _cut_pieces(g, self, piece, dim, size, count, cut)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return _split_static(g, self, _chunk_sizes(size, chunks), dim)
    return _chunk_dynamic(g, self, chunks, dim, size, _output_count(g), cut)


def _chunk_dynamic(
    g: GraphContext, x: Value, chunks: int, dim: int, size: Value, count: int | None, cut: ChunkPiece
) -> list[Value] | RuntimeList:
    """chunk of a dim known only at run time: the piece size ceil(size/chunks) is computed
    in the graph and each piece cut out (gathered at opset 9, whose Slice has no run-time
    bounds; sliced from opset 10). How many pieces come out must still be fixed: it is read
    from the ListUnpack that consumes them."""
    piece = g.op("Div", g.op("Add", size, g.constant(chunks - 1)), g.constant(chunks))
    if count is None:
        refusal = "chunk of a dynamic dim needs its pieces unpacked below opset 11 (the count must be static)"
        return _pieces_sequence(g, x, piece, dim, refusal)
    pieces = []
    for i in range(count):
        start = g.op("Mul", piece, g.constant(i))
        end = g.op("Mul", piece, g.constant(i + 1))
        pieces.append(cut(g, x, start, end, size, dim))
    return pieces


@onnx_symbolic("aten::chunk", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_chunk(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]

    torch makes pieces of ceil(size/chunks), so fewer than ``chunks`` may come out (chunk(5)
    of 6 gives 3 pieces of 2). A dynamic dim is cut with bounds computed at run time (by
    Gather at opset 9, by Slice from symbolic_opset10).
    """
    return chunk_with(g, self, chunks, dim, _gather_piece)


@onnx_symbolic("aten::unsafe_chunk", complex_inputs=ComplexInputs.PARTS)
def aten_unsafe_chunk(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]"""
    return chunk_with(g, self, chunks, dim, _gather_piece)


@onnx_symbolic("aten::tensor_split", complex_inputs=ComplexInputs.PARTS)
def aten_tensor_split(
    g: GraphContext,
    self: Value,
    sections: int | None = None,
    indices: Sequence[int] | None = None,
    tensor_indices_or_sections: object = None,
    dim: int = 0,
) -> list[Value]:
    """tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]; .indices; .tensor_indices_or_sections

    Unlike split, sections spread the remainder over the first pieces and may yield empty
    pieces; indices are clamped to the dim like Python slices. A tensor argument must be a
    constant (0-d: sections, 1-d: indices).
    """
    rank = h.known_rank(self, "tensor_split")
    dim = h.normalize_dim(dim, rank)
    size = h.static_dim(self, dim, "tensor_split")
    if tensor_indices_or_sections is not None:
        values = h.const_ints(tensor_indices_or_sections)
        if values is None:
            raise NeedsExportTimeValue("tensor_split with indices computed at run time is not supported")
        obj = tensor_indices_or_sections
        zero_d = (
            isinstance(obj, (int, float))
            or (isinstance(obj, torch.Tensor) and obj.dim() == 0)
            or (isinstance(obj, Value) and obj.shape is not None and len(obj.shape) == 0)
        )
        if zero_d:
            sections = values[0]
        else:
            indices = values
    if sections is not None:
        base, extra = divmod(size, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        return _split_static(g, self, sizes, dim)
    if indices is None:
        raise ValueError("tensor_split needs sections or indices")
    bounds = [min(max(i + size if i < 0 else i, 0), size) for i in indices]
    starts, ends = [0] + bounds, bounds + [size]
    # each piece is self[start:end] like a Python slice: decreasing indices give empty ones
    return [h.slice_static(g, self, [dim], [a], [max(a, b)]) for a, b in zip(starts, ends)]


@onnx_symbolic("aten::unbind", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_unbind(g: GraphContext, self: Value, dim: int = 0) -> list[Value] | RuntimeList:
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]: one size-1 split per index,
    squeezed; along a run-time dim, one Gather per item the ListUnpack takes, or (a list
    iterated or indexed at run time) the stacked RuntimeList: the tensor with ``dim`` moved first."""
    rank = h.known_rank(self, "unbind")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return [h.squeeze(g, piece, [dim]) for piece in _split_static(g, self, [1] * size, dim)]
    count = _output_count(g)
    if count is None:
        perm = [dim, *(d for d in range(rank) if d != dim)]
        stacked = self if dim == 0 else g.op("Transpose", self, perm=perm)
        if stacked.shape is None and self.shape is not None:
            stacked.shape = ir.Shape([self.shape[d] for d in perm])
        stacked.dtype = self.dtype
        return RuntimeList(stacked=stacked, item_dtype=self.dtype)
    return [g.op("Gather", self, g.constant(i), axis=dim) for i in range(count)]


@onnx_symbolic("prim::ConstantChunk")
def prim_constant_chunk(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantChunk[chunks, dim](Tensor self) -> (Tensor, ...): chunk with the count
    fixed as node attributes and one output per piece."""
    return constant_chunk_with(g, inputs, _gather_piece)


def constant_chunk_with(g: GraphContext, inputs: Sequence[object], cut: ChunkPiece) -> object:
    """prim::ConstantChunk; the pieces of a dim of run-time size are cut with ``cut``."""
    (x,) = inputs
    assert isinstance(x, Value)
    chunks, dim = g.node.i("chunks"), g.node.i("dim")
    rank = h.known_rank(x, "prim::ConstantChunk")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        pieces = _split_static(g, x, _chunk_sizes(size, chunks), dim)
    else:
        pieces = _chunk_dynamic(g, x, chunks, dim, size, g.node.outputsSize(), cut)
    return tuple(pieces) if len(pieces) > 1 else pieces[0]


@onnx_symbolic("prim::ConstantSplit")
def prim_constant_split(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantSplit[split_size, dim](Tensor self) -> (Tensor, ...)"""
    (x,) = inputs
    assert isinstance(x, Value)
    pieces = _split_by(g, x, g.node.i("split_size"), g.node.i("dim"), g.node.outputsSize())
    return tuple(pieces) if len(pieces) > 1 else pieces[0]


@onnx_symbolic("aten::atleast_1d")
def aten_atleast_1d(
    g: GraphContext,
    self: Value | None = None,
    tensors: Sequence[Value] | None = None,  # noqa: F811
) -> Value | list[Value]:
    """atleast_1d(Tensor self) -> Tensor; atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]"""
    if tensors is not None:
        return [_atleast(g, t, 1) for t in tensors]
    assert self is not None
    return _atleast(g, self, 1)


@onnx_symbolic("aten::atleast_2d")
def aten_atleast_2d(
    g: GraphContext,
    self: Value | None = None,
    tensors: Sequence[Value] | None = None,  # noqa: F811
) -> Value | list[Value]:
    """atleast_2d(Tensor self) -> Tensor; atleast_2d.Sequence: a 1-D [n] becomes [1, n]."""
    if tensors is not None:
        return [_atleast(g, t, 2) for t in tensors]
    assert self is not None
    return _atleast(g, self, 2)


@onnx_symbolic("aten::atleast_3d")
def aten_atleast_3d(
    g: GraphContext,
    self: Value | None = None,
    tensors: Sequence[Value] | None = None,  # noqa: F811
) -> Value | list[Value]:
    """atleast_3d(Tensor self) -> Tensor; atleast_3d.Sequence

    Not leading ones like the others: [n] becomes [1, n, 1] and [m, n] becomes [m, n, 1].
    """
    if tensors is not None:
        return [_atleast(g, t, 3) for t in tensors]
    assert self is not None
    return _atleast(g, self, 3)


@onnx_symbolic("aten::hstack")
def aten_hstack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """hstack(Tensor[] tensors) -> Tensor: concatenates 1-D inputs on dim 0, others on dim 1;
    mixed dtypes promote as in cat."""
    parts = [_atleast(g, t, 1) for t in promoted(g, tensors)]
    axis = 0 if h.rank_of(parts[0]) == 1 else 1
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)


@onnx_symbolic("aten::vstack")
def aten_vstack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """vstack(Tensor[] tensors) -> Tensor: 1-D inputs become rows, then concatenated on dim 0;
    mixed dtypes promote as in cat."""
    parts = [_atleast(g, t, 2) for t in promoted(g, tensors)]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)


@onnx_symbolic("aten::column_stack")
def aten_column_stack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """column_stack(Tensor[] tensors) -> Tensor: 0-d and 1-d inputs become columns ([n] is
    [n, 1]), the rest concatenate on dim 1 as they are; mixed dtypes promote as in cat."""
    parts = []
    for t in promoted(g, tensors):
        rank = h.known_rank(t, "column_stack")
        parts.append(h.reshape(g, t, [1, 1]) if rank == 0 else h.unsqueeze(g, t, [1]) if rank == 1 else t)
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=1)


@onnx_symbolic("aten::dstack")
def aten_dstack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """dstack(Tensor[] tensors) -> Tensor: atleast_3d of each ([n] is [1, n, 1]), concatenated
    on dim 2; mixed dtypes promote as in cat."""
    parts = [_atleast(g, t, 3) for t in promoted(g, tensors)]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=2)


def split_into_sections(
    g: GraphContext, self: Value, sections: int | None, indices: Sequence[int] | None, what: str, cut: ChunkPiece
) -> list[Value] | RuntimeList:
    """hsplit/vsplit/dsplit: ``sections`` equal pieces (torch refuses a dim they do not divide),
    or tensor_split at ``indices``. hsplit cuts dim 1 (dim 0 of a 1-d tensor), vsplit dim 0,
    dsplit dim 2. Equal pieces of a dim of run-time size are cut at multiples of size / sections
    (``cut`` gathers or slices them)."""
    rank = h.known_rank(self, what)
    least = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[what]
    if rank < least:
        raise ValueError(f"{what} needs a tensor of at least {least} dims, got {rank}")
    dim = {"hsplit": 0 if rank == 1 else 1, "vsplit": 0, "dsplit": 2}[what]
    if sections is None:
        if indices is None:
            raise ValueError(f"{what} needs sections or indices")
        if isinstance(h.dim_size(g, self, dim), int) or any(i < 0 for i in indices):
            return aten_tensor_split(g, self, indices=indices, dim=dim)
        # Slice clamps non-negative bounds to a run-time size as a Python slice does
        starts, ends = [0, *indices], [*indices, h.INT64_MAX]
        return [h.slice_static(g, self, [dim], [a], [max(a, b)]) for a, b in zip(starts, ends)]
    if sections <= 0:
        raise ValueError(f"{what}: argument 'sections' must be positive, got {sections}")
    size = h.dim_size(g, self, dim)
    if not isinstance(size, int):  # the count is known even when the pieces are not unpacked
        return _cut_pieces(g, self, g.op("Div", size, g.constant(sections)), dim, size, sections, cut)
    if size % sections:
        raise ValueError(f"{what}: dim {dim} of size {size} is not divisible by sections={sections}")
    return _split_static(g, self, [size // sections] * sections, dim)


@onnx_symbolic("aten::hsplit")
def aten_hsplit(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; hsplit.array(Tensor(a -> *) self, int[] indices)

    See ``split_into_sections``: a dim of run-time size is gathered here, sliced from opset 10.
    """
    return split_into_sections(g, self, sections, indices, "hsplit", _gather_piece)


@onnx_symbolic("aten::vsplit")
def aten_vsplit(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; vsplit.array (dim 0)"""
    return split_into_sections(g, self, sections, indices, "vsplit", _gather_piece)


@onnx_symbolic("aten::dsplit")
def aten_dsplit(
    g: GraphContext, self: Value, sections: int | None = None, indices: Sequence[int] | None = None
) -> list[Value] | RuntimeList:
    """dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]; dsplit.array (dim 2)"""
    return split_into_sections(g, self, sections, indices, "dsplit", _gather_piece)


def _pad_to_longest(g: GraphContext, x: Value, longest: Value, padding_value: float, left: bool) -> Value:
    """``x`` padded along dim 0 to ``longest`` (0-d int64) items with ``padding_value``."""
    rank = h.known_rank(x, "pad_sequence")
    extra = h.unsqueeze(g, g.op("Sub", longest, _dim_size_value(g, x, 0)), [0])
    zeros = g.constant([0] * (rank - 1)) if rank > 1 else None
    zero = g.constant([0])
    before = [extra if left else zero, *([zeros] if zeros is not None else [])]
    after = [zero if left else extra, *([zeros] if zeros is not None else [])]
    pads = g.op("Concat", *before, *after, axis=0)
    value = g.constant(torch.tensor(padding_value, dtype=tensors_module.to_torch_dtype(x.dtype)))
    out = g.op("Pad", x, pads, value)
    out.dtype, out.shape = x.dtype, ir.Shape([None] * rank)
    return out


def _pad_run_time_list(g: GraphContext, items: RuntimeList, padding_value: float, left: bool) -> Value:
    """The items of a sequence padded to the longest and stacked on axis 0: one Loop gathers
    the lengths (a scan output), a second pads each item (a scan output, which stacks)."""
    sequence = runtime_list.sequence_of(g, items)
    count = runtime_list.length(g, items)
    assert isinstance(count, Value)
    trip = h.cast(g, count, ir.DataType.INT64)

    def loop(name: str, item_output: Callable[[GraphContext, Value], Value]) -> Value:
        iteration = ir.Value(name=g.unique_name(f"{name}_i"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
        cond = ir.Value(name=g.unique_name(f"{name}_cond"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
        dummy = ir.Value(name=g.unique_name(f"{name}_dummy"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))

        def body(sub: GraphContext) -> list[Value]:
            item = items._typed(sub.op("SequenceAt", sequence, iteration), 0)
            return [sub.op("Identity", cond), sub.op("Identity", dummy), item_output(sub, item)]

        graph = g.build_subgraph([iteration, cond, dummy], body, name)
        _, scanned = g.op("Loop", trip, g.constant(True), g.constant(False), body=graph, num_outputs=2)
        return scanned

    lengths = loop("pad_lengths", lambda sub, item: _dim_size_value(sub, item, 0))
    lengths.dtype, lengths.shape = ir.DataType.INT64, ir.Shape([None])
    longest = h.reduce(g, "ReduceMax", lengths, [0], False)
    stacked = loop("pad_items", lambda sub, item: _pad_to_longest(sub, item, longest, padding_value, left))
    stacked.dtype = items.item_dtype
    if items.item_rank is not None:
        stacked.shape = ir.Shape([None] * (items.item_rank + 1))
    return stacked


@onnx_symbolic("aten::pad_sequence", opset=11)
def aten_pad_sequence(
    g: GraphContext,
    sequences: Sequence[Value] | RuntimeList,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Value:
    """pad_sequence(Tensor[] sequences, bool batch_first=False, float padding_value=0.0, str padding_side="right") -> Tensor

    Each sequence padded along dim 0 to the longest (Pad with run-time pads: opset 11, the
    opset this is registered at) and stacked. A list built at run time (a sequence) is padded
    item by item in a Loop; a list in the stacked form already has items of one length.
    """
    left = padding_side == "left"
    if isinstance(sequences, RuntimeList) and sequences.sequence is None:
        stacked = sequences.stacked
        assert stacked is not None
    elif isinstance(sequences, RuntimeList):
        stacked = _pad_run_time_list(g, sequences, padding_value, left)
    else:
        items = list(sequences)
        longest = _dim_size_value(g, items[0], 0)
        for item in items[1:]:
            longest = h.max_min(g, longest, _dim_size_value(g, item, 0), larger=True)
        padded = [h.unsqueeze(g, _pad_to_longest(g, v, longest, padding_value, left), [0]) for v in items]
        stacked = padded[0] if len(padded) == 1 else g.op("Concat", *padded, axis=0)
    rank = h.rank_of(stacked)
    if batch_first or rank is None:
        if not batch_first:
            raise NeedsExportTimeValue("pad_sequence with batch_first=False needs the rank of the items")
        return stacked
    return g.op("Transpose", stacked, perm=[1, 0, *range(2, rank)])
