"""Shape and layout: view/reshape/flatten/unflatten, permute/transpose/movedim, squeeze/unsqueeze,
expand, size, stride (refused where not folded at export), flip, rot90, roll, fftshift/ifftshift,
pixel_shuffle, channel_shuffle.

ONNX idioms: target shapes are built from the sizes known at export time, or from Shape
arithmetic where a size is only known at run time; flip and roll gather with constant reversed
or rotated indices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Quantized
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::view", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_view(g: GraphContext, self: Value, size: Sequence[int] | Value) -> Value:
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return _reshape(g, self, h.shape_value(g, size))


@onnx_symbolic("aten::reshape", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_reshape(g: GraphContext, self: Value, shape: Sequence[int] | Value) -> Value:
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return _reshape(g, self, h.shape_value(g, shape))


def _reshape(g: GraphContext, self: Value, shape: Value) -> Value:
    """Reshape, whose output rank is the length of ``shape`` even when its entries are only
    known at run time (``y.reshape(x.size()[:3] + (-1,))``): a later transpose or flatten
    needs that rank, and ONNX's per-node inference does not always give it. Entries known at
    export time are sizes of the output too, though others are not (``x.reshape(B, C * 9, L)``
    with a dynamic batch B): ONNX's inference gives no dim of a shape it cannot fold, and a
    later op may need them (F.fold needs its channels)."""
    # a 0 among sizes known at export time is a size (an empty result), not a copied dim;
    # one computed at run time is the input's own dim there (x.view(x.size(0), -1))
    zero_size = 0 in (h.const_ints(shape) or [])
    out = h.reshape_keeping_zeros(g, self, shape) if zero_size else g.op("Reshape", self, shape)
    if out.shape is None and shape.shape is not None and len(shape.shape) == 1 and isinstance(shape.shape[0], int):
        out.shape = ir.Shape([None] * shape.shape[0])
    entries = _known_entries(shape)
    if out.shape is not None and entries is not None and len(entries) == len(out.shape):
        dims = list(out.shape)
        if any(not isinstance(d, int) and isinstance(e, int) for d, e in zip(dims, entries)):
            out.shape = ir.Shape(
                [e if not isinstance(d, int) and isinstance(e, int) else d for d, e in zip(dims, entries)]
            )
    return out


def _known_entries(shape: Value) -> list[int | None] | None:
    """The entries of a Reshape's target shape known at export time (positive sizes; None for
    those computed at run time, and for 0 and -1, whose meaning depends on the input), when the
    shape is a constant or a Concat of one-element pieces (GraphContext.list_to_value)."""
    constant = h.const_ints(shape)
    if constant is not None:
        return [v if v > 0 else None for v in constant]
    node = shape.producer()
    if node is None or node.op_type != "Concat":
        return None
    entries: list[int | None] = []
    for part in node.inputs:
        if part is None or part.shape is None or list(part.shape) != [1]:
            return None
        values = h.const_ints(part)
        entries.append(values[0] if values is not None and values[0] > 0 else None)
    return entries


@onnx_symbolic("aten::view_as", complex_inputs=ComplexInputs.PARTS)
def aten_view_as(g: GraphContext, self: Value, other: Value) -> Value:
    """view_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Reshape", self, h.shape_of(g, other))


@onnx_symbolic("aten::reshape_as", complex_inputs=ComplexInputs.PARTS)
def aten_reshape_as(g: GraphContext, self: Value, other: Value) -> Value:
    """reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Reshape", self, h.shape_of(g, other))


@onnx_symbolic("aten::flatten", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_flatten(g: GraphContext, self: Value, start_dim: int = 0, end_dim: int = -1) -> Value:
    """flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"""
    rank = h.rank_of(self)
    if rank is None:
        raise NeedsExportTimeValue("flatten needs the input rank")
    if rank == 0:
        return g.op("Reshape", self, g.constant([1]))
    start = h.normalize_dim(start_dim, rank)
    end = h.normalize_dim(end_dim, rank)
    if start == end:
        return self
    shape = h.static_shape(self)
    if shape is not None:
        flat = math.prod(shape[start : end + 1])
        return g.op("Reshape", self, g.constant(shape[:start] + [flat] + shape[end + 1 :]))
    if end == rank - 1 and start == 1:
        return g.op("Flatten", self, axis=1)
    parts = []
    full = g.op("Shape", self)
    if start > 0:
        parts.append(h.slice_static(g, full, [0], [0], [start]))
    parts.append(g.constant([-1]))
    if end < rank - 1:
        parts.append(h.slice_static(g, full, [0], [end + 1], [h.INT64_MAX]))
    return g.op("Reshape", self, g.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0])


@onnx_symbolic("aten::unflatten", complex_inputs=ComplexInputs.PARTS)
def aten_unflatten(g: GraphContext, self: Value, dim: int, sizes: Sequence[int]) -> Value:
    """unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    shape = h.static_shape(self)
    if shape is not None:
        return g.op("Reshape", self, g.constant(shape[:dim] + list(sizes) + shape[dim + 1 :]))
    full = g.op("Shape", self)
    parts = []
    if dim > 0:
        parts.append(h.slice_static(g, full, [0], [0], [dim]))
    parts.append(g.constant(list(sizes)))
    if rank is not None and dim < rank - 1:
        parts.append(h.slice_static(g, full, [0], [dim + 1], [h.INT64_MAX]))
    return g.op("Reshape", self, g.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0])


@onnx_symbolic("aten::permute", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_permute(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    rank = len(dims)
    perm = [h.normalize_dim(d, rank) for d in dims]
    if perm == list(range(rank)):
        return self
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::transpose", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_transpose(g: GraphContext, self: Value, dim0: int, dim1: int) -> Value:
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    rank = h.rank_of(self)
    if rank is None:
        raise NeedsExportTimeValue("transpose needs the input rank")
    a, b = h.normalize_dim(dim0, rank), h.normalize_dim(dim1, rank)
    if a == b:
        return self
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::t", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_t(g: GraphContext, self: Value) -> Value:
    """t(Tensor(a) self) -> Tensor(a)"""
    if (h.rank_of(self) or 0) < 2:
        return self
    return g.op("Transpose", self, perm=[1, 0])


def _last_two_swapped(g: GraphContext, self: Value, what: str) -> Value:
    rank = h.known_rank(self, what)
    if rank < 2:
        raise ValueError(f"{what} needs a tensor of at least 2 dims")
    return g.op("Transpose", self, perm=[*range(rank - 2), rank - 1, rank - 2])


@onnx_symbolic("aten::mT", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_mT(g: GraphContext, self: Value) -> Value:  # noqa: N802 - torch's name
    """mT(Tensor(a) self) -> Tensor(a): the last two dims swapped (a batch of matrices transposed)"""
    return _last_two_swapped(g, self, "mT")


@onnx_symbolic("aten::mH", quantized=Quantized.INTEGERS)
@onnx_symbolic("aten::adjoint", quantized=Quantized.INTEGERS)
@onnx_symbolic("aten::matrix_H", quantized=Quantized.INTEGERS)
def aten_adjoint(g: GraphContext, self: Value) -> Value:
    """adjoint(Tensor(a) self) -> Tensor(a); mH, matrix_H: the conjugate transpose, which for
    the real tensors ONNX has is mT"""
    return _last_two_swapped(g, self, "adjoint")


@onnx_symbolic("aten::ravel", quantized=Quantized.INTEGERS)
def aten_ravel(g: GraphContext, self: Value) -> Value:
    """ravel(Tensor(a) self) -> Tensor(a): flatten to 1-d (a 0-d tensor gives one element)"""
    return g.op("Reshape", self, g.constant([-1]))


@onnx_symbolic("aten::contiguous", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_contiguous(g: GraphContext, self: Value) -> Value:
    """contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a): layout only"""
    return self


@onnx_symbolic("aten::cpu")
def aten_cpu(g: GraphContext, self: Value) -> Value:
    """cpu(Tensor(a) self) -> Tensor(a): device placement only (pack_padded_sequence moves lengths)"""
    return self


@onnx_symbolic("aten::clone", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_clone(g: GraphContext, self: Value) -> Value:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return self


@onnx_symbolic("aten::detach", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_detach(g: GraphContext, self: Value) -> Value:
    """detach(Tensor(a) self) -> Tensor(a)"""
    return self


def _run_time_dim(g: GraphContext, dim: Value, rank: int) -> Value:
    """A dim computed at run time as a non-negative 0-d int64 (``dim + rank`` when negative)."""
    dim = h.cast(g, g.op("Reshape", dim, g.constant(torch.tensor([], dtype=torch.int64))), ir.DataType.INT64)
    return g.op("Where", g.op("Less", dim, g.constant(0)), g.op("Add", dim, g.constant(rank)), dim)


@onnx_symbolic("aten::unsqueeze", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_unsqueeze(g: GraphContext, self: Value, dim: int | Value) -> Value:
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)

    A dim computed at run time reshapes to the shape with a 1 inserted there: output
    position j takes input size j (before ``dim``), 1 (at it) or j - 1 (after it).
    """
    rank = h.rank_of(self)
    if isinstance(dim, Value):
        if rank is None:
            raise NeedsExportTimeValue("unsqueeze at a dim computed at run time needs the input rank")
        at = _run_time_dim(g, dim, rank + 1)
        positions = g.constant(torch.arange(rank + 1))
        after = h.cast(g, g.op("Greater", positions, at), ir.DataType.INT64)
        source = g.op("Sub", positions, after)
        source = g.op("Where", g.op("Less", source, g.constant(rank)), source, g.constant(max(rank - 1, 0)))
        sizes = g.op("Gather", g.op("Concat", g.op("Shape", self), g.constant([1]), axis=0), source, axis=0)
        target = g.op("Where", g.op("Equal", positions, at), g.constant([1]), sizes)
        result = h.reshape_keeping_zeros(g, self, target)  # a size-0 dim is a size, not "copy"
        result.dtype = self.dtype
        result.shape = ir.Shape([None] * (rank + 1))
        return result
    if dim < 0:
        if rank is None:
            raise NeedsExportTimeValue("unsqueeze with a negative dim needs the input rank")
        dim += rank + 1
    return h.unsqueeze(g, self, [dim])


@onnx_symbolic("aten::squeeze", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_squeeze(
    g: GraphContext, self: Value, dim: Sequence[int] | Sequence[int | Value] | Value | None = None
) -> Value:
    """squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a); squeeze.dim; squeeze()

    torch leaves a dim that is not of size 1 alone; ONNX Squeeze would fail on it, so such
    dims are dropped from the axes when the shape is known. Dims computed at run time
    select the sizes to drop in the graph (the rank of the result is then a run-time fact).
    """
    if isinstance(dim, Value) or (dim is not None and any(isinstance(d, Value) for d in dim)):
        rank = h.rank_of(self)
        if rank is None:
            raise NeedsExportTimeValue("squeeze of dims computed at run time needs the input rank")
        dims = [dim] if isinstance(dim, Value) else list(dim)
        named = [
            _run_time_dim(g, d, rank) if isinstance(d, Value) else g.constant(h.normalize_dim(d, rank)) for d in dims
        ]
        return _squeeze_where_one(g, self, named)
    if dim is None:
        shape = h.static_shape(self)
        if shape is not None:
            axes = [i for i, s in enumerate(shape) if s == 1]
            return h.squeeze(g, self, axes) if axes else self
        return _squeeze_where_one(g, self, None)
    rank = h.rank_of(self)
    axes = [h.normalize_dim(d, rank) for d in dim]
    if self.shape is not None:
        axes = [a for a in axes if not (isinstance(self.shape[a], int) and self.shape[a] != 1)]
    if not axes:
        return self
    if self.shape is not None and all(self.shape[a] == 1 for a in axes):
        return h.squeeze(g, self, axes)
    return _squeeze_where_one(g, self, axes)


def _squeeze_where_one(g: GraphContext, self: Value, axes: Sequence[int | Value] | None) -> Value:
    """Squeeze of dims whose sizes are only known at run time: torch drops a dim only if its
    size is 1 there, where ONNX Squeeze fails. The kept sizes are selected from Shape
    (Compress, opset 9) and the input reshaped to them; the result's rank is a run-time fact.
    ``axes`` may be computed at run time (non-negative 0-d values)."""
    shape = g.op("Shape", self)
    drop = g.op("Equal", shape, g.constant(1))
    if axes is not None:
        positions = h.iota(g, h.dim_size(g, shape, 0))
        named = None
        for axis in axes:
            this = g.op("Equal", positions, axis if isinstance(axis, Value) else g.constant(axis))
            named = this if named is None else g.op("Or", named, this)
        drop = g.op("And", drop, named)
    kept = g.op("Compress", shape, g.op("Not", drop), axis=0)
    result = g.op("Reshape", self, kept)
    result.dtype = self.dtype
    return result


@onnx_symbolic("aten::expand", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_expand(g: GraphContext, self: Value, size: Sequence[int] | Value, implicit: bool = False) -> Value:
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)

    torch's -1 keeps a dim; Expand broadcasts, so a 1 there does the same.
    """
    del implicit
    if isinstance(size, Value):
        ones = g.op("ConstantOfShape", g.op("Shape", size), value=torch.tensor([1]))
        is_keep = g.op("Equal", size, g.constant(-1))
        return g.op("Expand", self, g.op("Where", is_keep, ones, size))
    target = [1 if s == -1 else s for s in size]
    shape = h.static_shape(self)
    if shape is not None and len(shape) == len(target) and all(t in (1, s) for t, s in zip(target, shape)):
        return self
    return g.op("Expand", self, g.constant(target))


@onnx_symbolic("aten::expand_as", complex_inputs=ComplexInputs.PARTS)
def aten_expand_as(g: GraphContext, self: Value, other: Value) -> Value:
    """expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Expand", self, h.shape_of(g, other))


@onnx_symbolic("aten::size", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.SHAPE)
def aten_size(g: GraphContext, self: Value, dim: int | None = None) -> int | Value | list[int]:
    """size.int(Tensor self, int dim) -> int; size(Tensor self) -> int[]

    A static dim is returned as a Python int, so shape arithmetic folds away.
    """
    if dim is None:
        shape = h.static_shape(self)
        return shape if shape is not None else g.op("Shape", self)
    return h.dim_size(g, self, dim)


@onnx_symbolic("aten::stride")
def aten_stride(g: GraphContext, self: Value, dim: int | None = None) -> int | list[int]:
    """stride.int(Tensor self, int dim) -> int; stride(Tensor self) -> int[]

    ONNX tensors have no strides: the specialization pass folds a stride the layout fixes at
    export (exporter.passes.strides). What reaches here is folded only for the result of
    ``contiguous()``, whose strides are row-major by definition (julius reads the strides of
    ``F.pad(x, ...).contiguous()``, whose sizes the pass does not know when they come from a
    list it changes: ``length = shape.pop(-1)``): products of the sizes inside each dim, where
    they are static. Any other stride changes with a size chosen at run time (a dynamic axis
    inside the dim in memory order), or belongs to a tensor whose layout is not known at export.
    """
    strides = _row_major_strides(g, self)
    if strides is not None:
        if dim is None and None not in strides:
            return [int(s) for s in strides]  # type: ignore[arg-type]
        if dim is not None and -len(strides) <= dim < len(strides) and strides[dim] is not None:
            return int(strides[dim])  # type: ignore[arg-type]
    which = "x.stride()" if dim is None else f"x.stride({dim})"
    raise NeedsExportTimeValue(
        f"{which} is not fixed at export: a dynamic axis inside the dim in memory order changes it at run "
        f"time, or the tensor's layout is not known at export (ONNX tensors have no strides); make the axes "
        f"inside it static, or compute the stride from sizes"
    )


# TorchScript's int for torch.contiguous_format (c10::MemoryFormat::Contiguous)
_CONTIGUOUS_FORMAT = 0


def _row_major_strides(g: GraphContext, x: Value) -> list[int | None] | None:
    """The strides of ``x`` where its TorchScript producer is ``contiguous()`` (row-major), None
    for each one a size known only at run time makes; None where the layout is not row-major."""
    if g.node is None or x.shape is None:
        return None
    producer = g.node.inputsAt(0).node()
    if producer.kind() != "aten::contiguous" or producer.inputsSize() < 2:
        return None
    memory_format = producer.inputsAt(1)
    if memory_format.node().kind() != "prim::Constant" or memory_format.toIValue() != _CONTIGUOUS_FORMAT:
        return None
    sizes = list(x.shape)
    strides: list[int | None] = []
    for d in range(len(sizes)):
        inner = sizes[d + 1 :]
        strides.append(math.prod(inner) if all(isinstance(n, int) for n in inner) else None)  # type: ignore[arg-type]
    return strides


def _flip_dim(g: GraphContext, x: Value, dim: int) -> Value:
    """Reverse one dim at opset 9: Slice-1 has no steps, so gather reversed indices
    (constant, or from the run-time size)."""
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        return h.gather_constant(g, x, torch.arange(size - 1, -1, -1), dim)
    last = g.op("Sub", size, g.constant(1))
    return g.op("Gather", x, g.op("Sub", last, h.iota(g, size)), axis=dim)


@onnx_symbolic("aten::rot90")
def aten_rot90(g: GraphContext, self: Value, k: int = 1, dims: Sequence[int] = (0, 1)) -> Value:
    """rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor (rot90_with)"""
    return rot90_with(g, self, k, dims, _flip_dim)


def rot90_with(
    g: GraphContext, self: Value, k: int, dims: Sequence[int], flip_dim: Callable[[GraphContext, Value, int], Value]
) -> Value:
    """Quarter turns from dims[0] towards dims[1], as torch composes them: k mod 4 = 1 flips
    dims[1] then swaps the two, 2 flips both, 3 flips dims[0] then swaps."""
    rank = h.known_rank(self, "rot90")
    if len(dims) != 2 or rank < 2:
        raise ValueError(f"rot90 takes two dims of a tensor of rank >= 2, not dims={list(dims)} at rank {rank}")
    first, second = (h.normalize_dim(d, rank) for d in dims)
    if first == second:
        raise ValueError(f"rot90 takes two different dims, not {list(dims)}")
    turns = k % 4
    if turns == 0:
        return self
    if turns == 2:
        return flip_with(g, self, [first, second], flip_dim)
    flipped = flip_dim(g, self, second if turns == 1 else first)
    perm = list(range(rank))
    perm[first], perm[second] = second, first
    return g.op("Transpose", flipped, perm=perm)


@onnx_symbolic("aten::movedim", complex_inputs=ComplexInputs.PARTS)
def aten_movedim(g: GraphContext, self: Value, source: Sequence[int], destination: Sequence[int]) -> Value:
    """movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a); movedim.int

    The remaining dims keep their order in the free slots.
    """
    rank = h.known_rank(self, "movedim")
    src = [h.normalize_dim(d, rank) for d in source]
    dst = [h.normalize_dim(d, rank) for d in destination]
    perm = [-1] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(d for d in range(rank) if d not in src)
    perm = [p if p != -1 else next(rest) for p in perm]
    if perm == list(range(rank)):
        return self
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::numpy_T", complex_inputs=ComplexInputs.PARTS)
def aten_numpy_t(g: GraphContext, self: Value) -> Value:
    """numpy_T(Tensor(a) self) -> Tensor(a): x.T reverses all dims."""
    rank = h.known_rank(self, "numpy_T")
    if rank < 2:
        return self
    return g.op("Transpose", self, perm=list(range(rank))[::-1])


@onnx_symbolic("aten::flip", complex_inputs=ComplexInputs.PARTS)
def aten_flip(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """flip(Tensor self, int[] dims) -> Tensor

    At opset 9, which has no Slice steps, a Gather with reversed indices; symbolic_opset10
    slices with step -1.
    """
    return flip_with(g, self, dims, _flip_dim)


def flip_with(
    g: GraphContext, self: Value, dims: Sequence[int], flip_dim: Callable[[GraphContext, Value, int], Value]
) -> Value:
    """aten::flip, one ``flip_dim`` per distinct dim."""
    rank = h.known_rank(self, "flip")
    if rank == 0:  # torch accepts dims [0] or [-1] on a 0-d tensor: nothing to reverse
        return self
    out = self
    for d in dict.fromkeys(h.normalize_dim(d, rank) for d in dims):
        out = flip_dim(g, out, d)
    return out


def size_as_divisor(g: GraphContext, size: Value) -> Value:
    """A run-time dim size to take a shift modulo: 1 for an empty dim (which any shift leaves
    as it is), since integer division by zero fails at run time."""
    return g.op("Where", g.op("Equal", size, g.constant(0)), g.constant(1), size)


def _roll_dim_gather(g: GraphContext, x: Value, shift: int | Value, dim: int, size: Value) -> Value:
    """Opset 9 roll along a run-time dim or by a run-time shift (no Mod, no run-time Slice
    bounds): gather index (i - shift) mod size, the modulo made non-negative with Where (Div
    truncates)."""
    shift_v = g.constant(shift) if isinstance(shift, int) else h.cast(g, shift, ir.DataType.INT64)
    divisor = size_as_divisor(g, size)
    remainder = g.op("Sub", shift_v, g.op("Mul", g.op("Div", shift_v, divisor), divisor))

    def wrap(v: Value) -> Value:
        return g.op("Where", g.op("Less", v, g.constant(0)), g.op("Add", v, size), v)

    index = wrap(g.op("Sub", h.iota(g, size), wrap(remainder)))
    return g.op("Gather", x, index, axis=dim)


RollDynamic = Callable[[GraphContext, Value, "int | Value", int, Value], Value]


def _roll_dim(g: GraphContext, x: Value, shift: int | Value, dim: int, dynamic: RollDynamic) -> Value:
    """One roll: the last ``shift`` items (mod size) move to the front. A static size and
    shift are reduced at export time; a run-time one goes to ``dynamic(g, x, shift, dim, size)``."""
    size = h.dim_size(g, x, dim)
    if isinstance(size, int) and not isinstance(shift, int):  # a shift computed at run time
        return dynamic(g, x, shift, dim, g.constant(size))
    if isinstance(size, int):
        assert isinstance(shift, int)
        s = shift % size if size else 0
        if s == 0:
            return x
        tail = h.slice_static(g, x, [dim], [size - s], [size])
        head = h.slice_static(g, x, [dim], [0], [size - s])
        return g.op("Concat", tail, head, axis=dim)
    return dynamic(g, x, shift, dim, size)


@onnx_symbolic("aten::roll", complex_inputs=ComplexInputs.PARTS)
def aten_roll(
    g: GraphContext, self: Value, shifts: Sequence[int] | Sequence[int | Value], dims: Sequence[int] = ()
) -> Value:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor

    Each roll is two slices concatenated in swapped order, the shift taken modulo the dim
    size (shifts larger than the dim, and negative ones, are valid in torch). Without dims
    the flattened tensor rolls and is reshaped back. At opset 9 (no Mod, no run-time Slice
    bounds) a dynamic dim or shift (a scripted argument) rolls by a Gather; symbolic_opset10 slices.
    """
    return roll_with(g, self, shifts, dims, _roll_dim_gather)


def roll_with(
    g: GraphContext, self: Value, shifts: Sequence[int | Value], dims: Sequence[int], dynamic: RollDynamic
) -> Value:
    """aten::roll, rolling dims of run-time size with ``dynamic(g, x, shift, dim, size)``."""
    if not dims:
        flat = h.reshape(g, self, [-1])
        rolled = _roll_dim(g, flat, shifts[0], 0, dynamic)
        return g.op("Reshape", rolled, h.shape_of(g, self))
    if len(shifts) != len(dims):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    rank = h.known_rank(self, "roll")
    out = self
    for shift, dim in zip(shifts, dims):
        out = _roll_dim(g, out, shift, h.normalize_dim(dim, rank), dynamic)
    return out


def _shape_parts(g: GraphContext, x: Value, rank: int) -> tuple[Value | None, Value, Value, Value]:
    """(leading dims, C, H, W) of a run-time shape as 1-D int64 values (Slice of Shape)."""
    full = g.op("Shape", x)

    def part(start: int, end: int) -> Value:
        return h.slice_static(g, full, [0], [start], [end])

    batch = part(0, rank - 3) if rank > 3 else None
    return batch, part(rank - 3, rank - 2), part(rank - 2, rank - 1), part(rank - 1, rank)


@onnx_symbolic("aten::pixel_shuffle")
def aten_pixel_shuffle(g: GraphContext, self: Value, upscale_factor: int) -> Value:
    """pixel_shuffle(Tensor self, int upscale_factor) -> Tensor

    (*, C*r*r, H, W) -> (*, C, H*r, W*r) as reshape-transpose-reshape, which works for every
    dtype and opset (DepthToSpace's CRD mode, the torch order, needs opset 11). Run-time
    sizes build the Reshape targets from Shape.
    """
    r = upscale_factor
    shape = h.static_shape(self)
    if shape is not None:
        *batch, c, hh, ww = shape
        c_out = c // (r * r)
        split = h.reshape(g, self, [-1, c_out, r, r, hh, ww])
        moved = g.op("Transpose", split, perm=[0, 1, 4, 2, 5, 3])
        return h.reshape(g, moved, batch + [c_out, hh * r, ww * r])
    rank = h.known_rank(self, "pixel_shuffle")
    batch_v, c_v, h_v, w_v = _shape_parts(g, self, rank)
    c_out = g.op("Div", c_v, g.constant([r * r]))
    split = g.op("Reshape", self, h.concat_shape(g, [-1, c_out, r, r, h_v, w_v]))
    moved = g.op("Transpose", split, perm=[0, 1, 4, 2, 5, 3])
    scale = g.constant([r])
    target = h.concat_shape(g, [batch_v, c_out, g.op("Mul", h_v, scale), g.op("Mul", w_v, scale)])
    return g.op("Reshape", moved, target)


@onnx_symbolic("aten::pixel_unshuffle")
def aten_pixel_unshuffle(g: GraphContext, self: Value, downscale_factor: int) -> Value:
    """pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor

    (*, C, H*r, W*r) -> (*, C*r*r, H, W). SpaceToDepth orders the channels block-first,
    torch channel-first, so this is always reshape-transpose-reshape.
    """
    r = downscale_factor
    shape = h.static_shape(self)
    if shape is not None:
        *batch, c, hh, ww = shape
        split = h.reshape(g, self, [-1, c, hh // r, r, ww // r, r])
        moved = g.op("Transpose", split, perm=[0, 1, 3, 5, 2, 4])
        return h.reshape(g, moved, batch + [c * r * r, hh // r, ww // r])
    rank = h.known_rank(self, "pixel_unshuffle")
    batch_v, c_v, h_v, w_v = _shape_parts(g, self, rank)
    scale = g.constant([r])
    h_out, w_out = g.op("Div", h_v, scale), g.op("Div", w_v, scale)
    split = g.op("Reshape", self, h.concat_shape(g, [-1, c_v, h_out, r, w_out, r]))
    moved = g.op("Transpose", split, perm=[0, 1, 3, 5, 2, 4])
    target = h.concat_shape(g, [batch_v, g.op("Mul", c_v, g.constant([r * r])), h_out, w_out])
    return g.op("Reshape", moved, target)


def fftshift_with(
    g: GraphContext, self: Value, dim: Sequence[int] | None, inverse: bool, dynamic: RollDynamic
) -> Value:
    """fft_fftshift (``inverse``: fft_ifftshift): a roll of each dim (all without ``dim``) by
    size // 2 (ifftshift: -(size // 2)), computed at run time for a dynamic size and rolled
    by ``dynamic``. A dim listed twice rolls twice, as in torch."""
    what = "fft_ifftshift" if inverse else "fft_fftshift"
    rank = h.known_rank(self, what)
    dims = list(range(rank)) if dim is None else [h.normalize_dim(d, rank) for d in dim]
    if not dims:
        raise ValueError(f"{what} of a 0-d tensor (or with dim=[]) has nothing to shift; torch refuses it too")
    shifts: list[int | Value] = []
    for d in dims:
        size = h.dim_size(g, self, d)
        if isinstance(size, int):
            shifts.append(-(size // 2) if inverse else size // 2)
        else:
            half = g.op("Div", size, g.constant(2))
            shifts.append(g.op("Sub", g.constant(0), half) if inverse else half)
    return roll_with(g, self, shifts, dims, dynamic)


@onnx_symbolic("aten::fft_fftshift")
def aten_fft_fftshift(g: GraphContext, self: Value, dim: Sequence[int] | None = None) -> Value:
    """fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor: the zero frequency moved to the
    centre (see ``fftshift_with``; a dynamic size rolls by Gather here, by Slice from opset 10)"""
    return fftshift_with(g, self, dim, False, _roll_dim_gather)


@onnx_symbolic("aten::fft_ifftshift")
def aten_fft_ifftshift(g: GraphContext, self: Value, dim: Sequence[int] | None = None) -> Value:
    """fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor: fftshift undone (odd sizes differ)"""
    return fftshift_with(g, self, dim, True, _roll_dim_gather)


@onnx_symbolic("aten::channel_shuffle")
def aten_channel_shuffle(g: GraphContext, self: Value, groups: int) -> Value:
    """channel_shuffle(Tensor self, SymInt groups) -> Tensor

    torch views (N, C, *) as (N, groups, C / groups, *) and swaps the two group dims, which
    moves input channel (j % groups) * (C / groups) + j // groups to channel j: one Gather of
    those indices on dim 1 (constant for a known C, computed otherwise). Unlike a
    reshape-transpose-reshape it needs no target shape, so dynamic and empty sizes work at
    every opset (Reshape copies a 0 before opset 14).
    """
    rank = h.known_rank(self, "channel_shuffle")
    if rank < 3:
        raise ValueError(f"channel_shuffle needs a tensor of more than 2 dims, got {rank}")
    if groups <= 0:
        raise ValueError(f"channel_shuffle: argument 'groups' must be positive, got {groups}")
    channels = h.dim_size(g, self, 1)
    if isinstance(channels, int):
        if channels % groups:
            raise ValueError(f"channel_shuffle: {channels} channels are not divisible by groups={groups}")
        order = torch.arange(channels).reshape(groups, channels // groups).t().reshape(-1)
        return h.gather_constant(g, self, order, 1)
    steps = h.iota(g, channels)
    per_group = g.op("Div", channels, g.constant(groups))
    group = g.op("Div", steps, g.constant(groups))
    position = g.op("Sub", steps, g.op("Mul", group, g.constant(groups)))
    return g.op("Gather", self, g.op("Add", g.op("Mul", position, per_group), group), axis=1)
