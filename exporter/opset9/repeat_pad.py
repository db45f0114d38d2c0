"""Repeating, broadcasting and padding: repeat/tile/repeat_interleave, expand-like broadcasts,
meshgrid (and what it builds: cartesian_prod, combinations), as_strided/unfold,
constant/reflection/replication/circular padding.

ONNX idioms: repeats are Tile (or Expand when only new leading dims appear); Pad's mode
attribute covers constant/reflect/edge, and circular padding is a Concat of slices
(``_circular_pad``); as_strided gathers the flat indices the strides describe.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs
from exporter.opset9.shape import aten_expand
from exporter.registry import onnx_symbolic

Value = ir.Value


def _pad_lists(pad: Sequence[int], rank: int) -> tuple[list[int], list[int]]:
    """torch pads (last dim first, begin/end pairs) as full-rank begin and end lists."""
    if len(pad) % 2:
        raise ValueError(f"pad needs begin/end pairs, got {list(pad)}")
    if len(pad) // 2 > rank:
        raise ValueError(f"pad {list(pad)} has more dims than the input rank {rank}")
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = int(pad[2 * i])
        ends[rank - 1 - i] = int(pad[2 * i + 1])
    return begins, ends


def _circular_pad(g: GraphContext, x: Value, begins: Sequence[int], ends: Sequence[int]) -> Value:
    """Circular padding: each dim gets its own tail in front and its head behind (Slice with
    negative starts needs no sizes). torch crops first for negative pads; so does this."""
    out = x
    for dim, (b, e) in enumerate(zip(begins, ends)):
        if b < 0 or e < 0:
            out = h.slice_static(g, out, [dim], [max(-b, 0)], [e if e < 0 else h.INT64_MAX])
        parts = []
        if b > 0:
            parts.append(h.slice_static(g, out, [dim], [-b], [h.INT64_MAX]))
        parts.append(out)
        if e > 0:
            parts.append(h.slice_static(g, out, [dim], [0], [e]))
        if len(parts) > 1:
            out = g.op("Concat", *parts, axis=dim)
    return out


def _runtime_pad(
    g: GraphContext, x: Value, pad: Sequence[int | Value] | Value, mode: str, value: float | int | bool
) -> Value:
    """Pad amounts computed at run time: Pad-11 takes them as an input (begins, then ends,
    full rank), assembled with Concat; Pad-2 takes them as an attribute only. A 1-D tensor of
    amounts (a scripted ``List[int]`` argument, fed as an ONNX sequence) may have any even
    length up to twice the rank at run time (:func:`_onnx_pads`)."""
    refusal = (
        f"argument 'pad' computed at run time needs opset 11 or higher (Pad takes its amounts as an "
        f"attribute at opset {g.opset})"
    )
    rank = h.known_rank(x, f"{mode} padding")
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}.get(mode)
    if onnx_mode is None:
        raise NeedsExportTimeValue(f"padding mode {mode!r} with amounts computed at run time is not supported")
    if isinstance(pad, Value):
        pads = _onnx_pads(g, pad, rank)
    else:
        if len(pad) % 2 or len(pad) // 2 > rank:
            raise ValueError(f"pad needs at most {rank} begin/end pairs, got {len(pad)} amounts")
        begins: list[int | Value] = [0] * rank
        ends: list[int | Value] = [0] * rank
        for i in range(len(pad) // 2):
            begins[rank - 1 - i] = pad[2 * i]
            ends[rank - 1 - i] = pad[2 * i + 1]
        pads = g.list_to_value(begins + ends)
    return h.pad_run_time(g, x, pads, onnx_mode, value, refusal=refusal)


def _onnx_pads(g: GraphContext, pad: Value, rank: int) -> Value:
    """torch's amounts (last dim first, begin/end pairs) in a 1-D tensor whose length is only
    known at run time, as ONNX's (begins of every dim, then ends): zeros appended up to
    ``2 * rank`` amounts (ConstantOfShape; a longer list fails there, as torch refuses it),
    then rows of (begin, end) transposed and their dim order reversed with a constant Gather."""
    amounts = h.cast(g, pad, ir.DataType.INT64)
    missing = g.op("Sub", g.constant([2 * rank]), g.op("Shape", amounts))
    zeros = g.op("ConstantOfShape", missing, value=torch.tensor([0], dtype=torch.int64))
    pairs = g.op("Transpose", h.reshape(g, g.op("Concat", amounts, zeros, axis=0), [rank, 2]), perm=[1, 0])
    return h.reshape(g, h.gather_constant(g, pairs, torch.arange(rank - 1, -1, -1), 1), [2 * rank])


def _torch_pad(
    g: GraphContext,
    x: Value,
    pad: Sequence[int] | Sequence[int | Value] | Value,
    mode: str,
    value: float | int | bool = 0,
) -> Value:
    if isinstance(pad, Value):
        return _runtime_pad(g, x, pad, mode, value)
    if any(isinstance(p, Value) for p in pad):
        return _runtime_pad(g, x, pad, mode, value)
    rank = h.known_rank(x, f"{mode} padding")
    begins, ends = _pad_lists(pad, rank)
    if mode == "circular":
        return _circular_pad(g, x, begins, ends)
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}.get(mode)
    if onnx_mode is None:
        raise ValueError(f"unknown padding mode {mode!r}")
    return h.pad(g, x, begins, ends, onnx_mode, value)


def _tile(g: GraphContext, x: Value, repeats: Sequence[int] | Value) -> Value:
    """Tile after giving ``x`` as many dims as ``repeats`` (leading ones, as torch adds them).
    Repeats computed at run time (a list holding a run-time size) need their count known at
    export: it decides the result's rank."""
    rank = h.known_rank(x, "repeat")
    if isinstance(repeats, Value):
        count = repeats.shape[0] if repeats.shape is not None and len(repeats.shape) == 1 else None
        if not isinstance(count, int):
            raise NeedsExportTimeValue("repeat with run-time repeats needs their count known at export")
        if count < rank:
            raise ValueError(f"repeat needs at least as many repeats as input dims ({rank}), got {count}")
        return g.op("Tile", _with_leading_dims(g, x, rank, count), h.cast(g, repeats, ir.DataType.INT64))
    repeats = [int(r) for r in repeats]
    x = _with_leading_dims(g, x, rank, len(repeats))
    if all(r == 1 for r in repeats) and len(repeats) == rank:
        return x
    return g.op("Tile", x, g.constant(repeats))


def _with_leading_dims(g: GraphContext, x: Value, rank: int, count: int) -> Value:
    """``x`` of rank ``rank`` with leading dims of size 1 up to ``count`` dims."""
    if count <= rank:
        return x
    extra = count - rank
    return h.unsqueeze(g, x, list(range(extra))) if rank else h.reshape(g, x, [1] * extra)


@onnx_symbolic("aten::repeat", complex_inputs=ComplexInputs.PARTS)
def aten_repeat(g: GraphContext, self: Value, repeats: Sequence[int] | Value) -> Value:
    """repeat(Tensor self, SymInt[] repeats) -> Tensor: Tile, with leading dims added when
    there are more repeats than dims (torch allows that, Tile does not)."""
    return _tile(g, self, repeats)


@onnx_symbolic("aten::tile", complex_inputs=ComplexInputs.PARTS)
def aten_tile(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """tile(Tensor self, SymInt[] dims) -> Tensor: like repeat, but fewer dims than the input
    rank repeat the trailing dims. Tile-6 (opset 9) already takes repeats as an input."""
    rank = h.known_rank(self, "tile")
    dims = [1] * (rank - len(dims)) + list(dims)
    return _tile(g, self, dims)


def _interleave_indices(g: GraphContext, repeats: Value) -> Value:
    """repeat_interleave(repeats) for a 1-D count tensor known at run time needs Range and
    CumSum (symbolic_opset11)."""
    del g, repeats
    raise NeedsExportTimeValue("repeat_interleave with repeats known only at run time needs opset 11")


# interleave_indices(g, repeats): the gather indices of a 1-D count tensor known at run time
InterleaveIndices = Callable[[GraphContext, Value], Value]


@onnx_symbolic("aten::repeat_interleave")
def aten_repeat_interleave(
    g: GraphContext,
    repeats: int | Value,
    self: Value | None = None,
    dim: int | None = None,
    output_size: int | None = None,
) -> Value:
    """repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor; .self_Tensor; .Tensor(Tensor repeats)

    An int (or constant) repeat count is Unsqueeze + Tile + Reshape; constant per-index
    counts become a constant Gather; counts known only at run time need opset 11. Without
    dim the input is flattened first, as in torch.
    """
    return repeat_interleave_with(g, repeats, self, dim, output_size, _interleave_indices)


def repeat_interleave_with(
    g: GraphContext,
    repeats: int | Value,
    self: Value | None,
    dim: int | None,
    output_size: int | None,
    interleave_indices: InterleaveIndices,
) -> Value:
    """aten::repeat_interleave; counts known only at run time go to ``interleave_indices``."""
    del output_size
    if self is None:  # repeat_interleave(repeats): indices 0..n-1 repeated
        assert isinstance(repeats, Value)
        counts = h.const_ints(repeats)
        if counts is not None:
            return g.constant(torch.repeat_interleave(torch.tensor(counts, dtype=torch.int64)))
        return interleave_indices(g, repeats)
    x = self
    if dim is None:
        x = h.reshape(g, x, [-1])
        dim = 0
    rank = h.known_rank(x, "repeat_interleave")
    dim = h.normalize_dim(dim, rank)
    counts = h.const_ints(repeats) if isinstance(repeats, Value) else [repeats]
    if counts is not None and len(counts) == 1 and counts[0] == 0:
        return h.slice_static(g, x, [dim], [0], [0])  # a 0 in a Reshape target would copy the dim
    one_count = (
        isinstance(repeats, Value)
        and repeats.shape is not None
        and math.prod(d if isinstance(d, int) else 2 for d in repeats.shape) == 1
    )
    if counts is not None and len(counts) == 1 or counts is None and one_count:
        # one count for every index (a run-time one too): Unsqueeze + Tile + Reshape
        if counts is not None:
            r_1d: Value = g.constant(counts)
        else:
            assert isinstance(repeats, Value)
            r_1d = h.reshape(g, h.cast(g, repeats, ir.DataType.INT64), [1])
        ones_before = g.constant([1] * (dim + 1))
        ones_after = g.constant([1] * (rank - dim - 1)) if rank - dim - 1 else None
        expanded = h.unsqueeze(g, x, [dim + 1])
        if counts is not None:
            tiled = g.op("Tile", expanded, g.constant([1] * (dim + 1) + counts + [1] * (rank - dim - 1)))
        else:
            tiled = g.op("Tile", expanded, h.concat_shape(g, [ones_before, r_1d, ones_after]))
        shape = h.static_shape(x)
        if shape is not None and counts is not None:
            shape[dim] *= counts[0]
            return h.reshape(g, tiled, shape)
        scale = h.concat_shape(g, [g.constant([1] * dim) if dim else None, r_1d, ones_after])
        return g.op("Reshape", tiled, g.op("Mul", h.shape_of(g, x), scale))
    if counts is not None:
        index = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
        return h.gather_constant(g, x, index, dim)
    assert isinstance(repeats, Value)
    size = h.dim_size(g, x, dim)
    if not isinstance(size, int) or repeats.shape is None or len(repeats.shape) != 1 or repeats.shape[0] != size:
        # a count tensor whose length is known only at run time may hold one count for every
        # index (torch broadcasts a single count): Expand makes it one count per index
        repeats = g.op("Expand", h.reshape(g, repeats, [-1]), h.sizes_to_shape(g, [size]))
    return g.op("Gather", x, interleave_indices(g, repeats), axis=dim)


@onnx_symbolic("aten::broadcast_to")
def aten_broadcast_to(g: GraphContext, self: Value, size: Sequence[int] | Value) -> Value:
    """broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a): expand (-1 keeps a dim)."""
    return aten_expand(g, self, size)


@onnx_symbolic("aten::broadcast_tensors")
def aten_broadcast_tensors(g: GraphContext, tensors: Sequence[Value]) -> list[Value]:  # noqa: F811
    """broadcast_tensors(Tensor[] tensors) -> Tensor[]

    Expand broadcasts both ways, so expanding a tensor by every other tensor's shape in turn
    gives the common shape even when it is only known at run time.
    """
    shapes = [h.static_shape(t) for t in tensors]
    if all(s is not None for s in shapes):
        target = list(torch.broadcast_shapes(*[tuple(s) for s in shapes]))
        return [t if s == target else g.op("Expand", t, g.constant(target)) for t, s in zip(tensors, shapes)]
    out = []
    for i, t in enumerate(tensors):
        y = t
        for j, other in enumerate(tensors):
            if j != i:
                y = g.op("Expand", y, h.shape_of(g, other))
        out.append(y)
    return out


@onnx_symbolic("aten::meshgrid")
def aten_meshgrid(
    g: GraphContext,
    tensors: Sequence[Value],
    indexing: str = "ij",  # noqa: F811
) -> list[Value]:
    """meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]; meshgrid(Tensor[] tensors)

    Each 0-d/1-d input is reshaped to lie along its own axis and expanded to the grid shape;
    'xy' swaps the roles of the first two axes (torch's default without indexing is 'ij').
    """
    if indexing not in ("ij", "xy"):
        raise ValueError(f"unknown meshgrid indexing {indexing!r}")
    n = len(tensors)
    flat = [h.reshape(g, t, [-1]) if h.rank_of(t) != 1 else t for t in tensors]
    axes = list(range(n))
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    sizes: list[int | Value] = []
    for t in tensors:
        shape = h.static_shape(t)
        sizes.append(math.prod(shape) if shape is not None else g.op("Shape", h.reshape(g, t, [-1])))
    grid_sizes = [sizes[axes.index(a)] for a in range(n)]
    if all(isinstance(s, int) for s in grid_sizes):
        grid = g.constant(grid_sizes)
    else:
        grid = g.op("Concat", *[g.constant([s]) if isinstance(s, int) else s for s in grid_sizes], axis=0)
    out = []
    for t, axis in zip(flat, axes):
        shape = [1] * n
        shape[axis] = -1
        out.append(g.op("Expand", h.reshape(g, t, shape), grid))
    return out


@onnx_symbolic("aten::cartesian_prod")
def aten_cartesian_prod(g: GraphContext, tensors: Sequence[Value]) -> Value:
    """cartesian_prod(Tensor[] tensors) -> Tensor

    The 'ij' meshgrid of the 1-d inputs, each grid flattened into one column, first input
    slowest, as torch builds it; one input is returned as it is (1-d, as in torch).
    """
    if len(tensors) == 1:
        return tensors[0]
    grids = aten_meshgrid(g, tensors, "ij")
    return g.op("Concat", *[g.op("Reshape", grid, g.constant([-1, 1])) for grid in grids], axis=1)


@onnx_symbolic("aten::combinations")
def aten_combinations(g: GraphContext, self: Value, r: int = 2, with_replacement: bool = False) -> Value:
    """combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor

    [C, r] in torch's (lexicographic) order. A length known at export time gathers constant
    index rows; a run-time length builds the r-dimensional grid of positions and keeps the
    rows that increase (or never decrease, with replacement) with Compress, as torch's own
    meshgrid-and-mask does, so any length exports from opset 9. r = 0 gives an empty 1-d
    tensor, as in torch.
    """
    if r == 0:
        return g.constant(torch.empty(0), self.dtype)
    length = h.dim_size(g, self, 0)
    if isinstance(length, int):
        rows = torch.combinations(torch.arange(length), r, with_replacement)
        return g.op("Gather", self, g.constant(rows.reshape(-1, r)), axis=0)
    grid = h.concat_shape(g, [h.reshape(g, length, [1])] * r)
    positions = [
        g.op("Expand", g.op("Reshape", h.iota(g, length), g.constant(h.axis_shape(r, axis))), grid) for axis in range(r)
    ]
    rows = g.op("Concat", *[g.op("Reshape", p, g.constant([-1, 1])) for p in positions], axis=1)
    if r > 1:
        in_order = [
            h.less_or_equal(g, a, b) if with_replacement else g.op("Less", a, b)
            for a, b in zip(positions, positions[1:])
        ]
        keep = in_order[0]
        for more in in_order[1:]:
            keep = g.op("And", keep, more)
        rows = h.data_dependent(g, g.op("Compress", rows, g.op("Reshape", keep, g.constant([-1])), axis=0))
    return g.op("Gather", self, rows, axis=0)


def _input_layout(g: GraphContext, index: int) -> tuple[list[int], list[int]] | None:
    """The sizes and strides TorchScript recorded for a node input (traced graphs carry them)."""
    if g.node is None:
        return None
    ts_type = g.node.inputsAt(index).type()
    if not isinstance(ts_type, torch._C.TensorType):
        return None
    sizes, strides = ts_type.sizes(), ts_type.strides()
    if sizes is None or strides is None or None in sizes or None in strides or len(sizes) != len(strides):
        return None
    return list(sizes), list(strides)


@onnx_symbolic("aten::as_strided")
def aten_as_strided(
    g: GraphContext,
    self: Value,
    size: Sequence[int | Value] | Value,
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Value:
    """as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)

    A Gather from the flattened input at the offsets the sizes and strides describe (any view:
    sliding windows, overlapping frames, broadcasts), computed at export time, or with Range
    where a size is known only at run time (julius' frames of a dynamic batch). ONNX has no
    storage: the offsets address ``self``'s elements by where they sit in memory, using the
    strides the trace recorded (so x.t().as_strided reads x's layout, as in torch: a lookup
    from memory position to element, which needs ``self``'s sizes at export); without recorded
    strides the input is taken as contiguous. An explicit storage_offset counts from the
    input's first element. The strides must be known at export (a scripted ``x.stride(d)`` is
    folded where the layout fixes it: exporter.passes.strides).
    """
    offset = storage_offset or 0
    if isinstance(size, Value):  # a list holding run-time sizes, as one 1-d value
        size = _items(g, size, len(stride))
    lookup = _memory_to_element(self, _input_layout(g, 0))
    if all(isinstance(n, int) for n in size):
        index = torch.full(tuple(size), offset, dtype=torch.int64)  # type: ignore[arg-type]
        for d, (n, s) in enumerate(zip(size, stride)):
            index = index + (torch.arange(n, dtype=torch.int64) * s).reshape(h.axis_shape(len(size), d))  # type: ignore[arg-type]
        if lookup is not None:
            if index.numel() and (int(index.max()) >= lookup.numel() or bool((lookup[index] < 0).any())):
                raise ValueError("as_strided reads memory outside the input's elements")
            index = lookup[index]
        return h.gather_constant(g, h.reshape(g, self, [-1]), index, 0)
    positions: Value = g.constant(offset)
    for d, (n, s) in enumerate(zip(size, stride)):
        steps = g.op("Mul", h.iota(g, n), g.constant(s))
        positions = g.op("Add", positions, h.reshape(g, steps, h.axis_shape(len(size), d)))
    if lookup is not None:  # reading outside the elements gathers -1: an error at run time
        positions = g.op("Gather", g.constant(lookup), positions, axis=0)
    return g.op("Gather", h.reshape(g, self, [-1]), positions, axis=0)


def _items(g: GraphContext, values: Value, count: int) -> list[int | Value]:
    """The ``count`` items of a 1-d int value (a size list built at run time), each a 0-d value."""
    shape = h.static_shape(values)
    if shape != [count]:
        raise ValueError(f"as_strided needs as many sizes as strides ({count}), got a list of shape {shape}")
    return [g.op("Gather", values, g.constant(i), axis=0) for i in range(count)]


def _memory_to_element(x: Value, layout: tuple[list[int], list[int]] | None) -> torch.Tensor | None:
    """For an input whose recorded strides are not row-major: the flat element index at each
    memory position it covers (-1 where it has none); None for a row-major input. Needs the
    input's sizes at export."""
    if layout is None:
        return None
    recorded, strides = layout
    contiguous = [math.prod(recorded[d + 1 :]) for d in range(len(recorded))]

    def significant(values: list[int]) -> list[int]:  # size-1 dims have any stride
        return [s for n, s in zip(recorded, values) if n > 1]

    if significant(strides) == significant(contiguous):
        return None
    shape = h.static_shape(x)
    if shape is None or shape != recorded:
        raise NeedsExportTimeValue("as_strided of a view that is not row-major needs the view's sizes at export")
    positions = torch.zeros(shape, dtype=torch.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        positions = positions + (torch.arange(n, dtype=torch.int64) * s).reshape(h.axis_shape(len(shape), d))
    flat_positions = positions.reshape(-1)
    extent = int(flat_positions.max()) + 1 if flat_positions.numel() else 1
    lookup = torch.full((extent,), -1, dtype=torch.int64)
    lookup[flat_positions] = torch.arange(flat_positions.numel(), dtype=torch.int64)
    return lookup


@onnx_symbolic("aten::unfold")
def aten_unfold(g: GraphContext, self: Value, dimension: int, size: int, step: int) -> Value:
    """unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)

    Sliding windows as one Gather with an [n, size] index along the dim (a constant when the
    dim is static, computed from its run-time size otherwise), then the window axis moved
    last.
    """
    rank = h.known_rank(self, "unfold")
    if rank == 0:
        return h.reshape(g, self, [1])
    dim = h.normalize_dim(dimension, rank)
    length = h.dim_size(g, self, dim)
    if isinstance(length, int):
        count = (length - size) // step + 1
        index = torch.arange(count).unsqueeze(1) * step + torch.arange(size).unsqueeze(0)
        windows = h.gather_constant(g, self, index, dim)
    else:  # window starts computed at run time (the base arange works at every opset)
        count_v = g.op("Add", g.op("Div", g.op("Sub", length, g.constant(size)), g.constant(step)), g.constant(1))
        starts = g.op("Mul", h.iota(g, count_v), g.constant(step))
        index = g.op("Add", h.unsqueeze(g, starts, [1]), g.constant(torch.arange(size).unsqueeze(0)))
        windows = g.op("Gather", self, index, axis=dim)
    if dim == rank - 1:
        return windows
    perm = [d for d in range(rank + 1) if d != dim + 1] + [dim + 1]
    return g.op("Transpose", windows, perm=perm)


@onnx_symbolic("aten::constant_pad_nd")
def aten_constant_pad_nd(
    g: GraphContext, self: Value, pad: Sequence[int] | Sequence[int | Value] | Value, value: float | int | bool = 0
) -> Value:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor (negative pads crop; amounts
    computed at run time from opset 11)"""
    return _torch_pad(g, self, pad, "constant", value)


@onnx_symbolic("aten::pad")
def aten_pad(
    g: GraphContext,
    self: Value,
    pad: Sequence[int] | Sequence[int | Value] | Value,
    mode: str = "constant",
    value: float | None = None,
) -> Value:
    """pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor

    ONNX calls replicate 'edge'; circular has no ONNX mode and is sliced and concatenated.
    Amounts computed at run time need Pad-11 (an input, not an attribute); a list of them
    whose length is only known at run time (a scripted ``List[int]`` argument) arrives as
    one 1-D tensor (its Value form).
    """
    return _torch_pad(g, self, pad, mode, 0 if value is None else value)


@onnx_symbolic("aten::reflection_pad1d")
def aten_reflection_pad1d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::reflection_pad2d")
def aten_reflection_pad2d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::reflection_pad3d")
def aten_reflection_pad3d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::replication_pad1d")
def aten_replication_pad1d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")


@onnx_symbolic("aten::replication_pad2d")
def aten_replication_pad2d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")


@onnx_symbolic("aten::replication_pad3d")
def aten_replication_pad3d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")
