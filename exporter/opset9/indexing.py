"""Indexing: slice/select and their scatter forms, advanced indexing (aten::index,
index_put), masks (masked_select/masked_scatter), nonzero, one_hot, narrow.

ONNX idioms: advanced indices are broadcast and flattened into one Gather over a reshaped input
(``_Arranged``); index_put with accumulate goes through gather_scatter's scatter_reduce; the
data-dependent shapes (nonzero, masked_select) say so when a later consumer needs them static.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Promotion, Quantized, Result
from exporter.opset9 import gather_scatter
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::slice", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_slice(
    g: GraphContext,
    self: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int | Value = 1,
) -> Value:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)

    Slice-1 has no steps: a strided slice gathers the selected positions instead (static
    sizes only). symbolic_opset10 slices with steps, also a step computed at run time.
    """
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    start = 0 if start is None else start
    end = h.INT64_MAX if end is None else end
    if isinstance(start, int) and isinstance(end, int) and isinstance(step, int) and step != 1:
        size = self.shape[dim] if self.shape is not None else None
        if isinstance(size, int):
            positions = list(range(size))[slice(start, end, step)]
            return g.op("Gather", self, g.constant(positions), axis=dim)
    return slice_bounds(g, self, dim, start, end, step)


def slice_bounds(
    g: GraphContext, self: Value, dim: int, start: int | Value | None, end: int | Value | None, step: int | Value
) -> Value:
    """aten::slice as a Slice (constant bounds fold; a full slice is ``self``). A step computed
    at run time is a Slice-10 input like the bounds."""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    start = 0 if start is None else start
    end = h.INT64_MAX if end is None else end
    if isinstance(step, int) and isinstance(start, int) and isinstance(end, int):
        size = self.shape[dim] if self.shape is not None else None
        if step == 1 and start in (0,) and isinstance(size, int) and end >= size:
            return self
        return h.slice_static(g, self, [dim], [start], [end], [step])
    return h.slice_dynamic(g, self, dim, start, end, step)


@onnx_symbolic("aten::select", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_select(g: GraphContext, self: Value, dim: int, index: int | Value) -> Value:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)

    Gather before opset 11 does not take negative indices: they are made positive here, by
    the static size or by the size read at run time (``size + i``; an index computed at run
    time is wrapped when negative). symbolic_opset11 passes them through on dynamic dims.
    """
    return select_with(g, self, dim, index, negative_ok=False)


def select_with(g: GraphContext, self: Value, dim: int, index: int | Value, *, negative_ok: bool) -> Value:
    """aten::select as a Gather. A negative constant index is made positive on a dim of
    static size; on a dynamic dim, or for an index computed at run time, a Gather that does
    not take negatives (``negative_ok=False``) gets ``size + i`` computed in the graph."""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    if isinstance(index, int):
        if index < 0:
            size = h.dim_size(g, self, dim)
            if isinstance(size, int):
                index += size
            elif not negative_ok:
                return g.op("Gather", self, g.op("Add", size, g.constant(index)), axis=dim)
        return g.op("Gather", self, g.constant(index), axis=dim)
    index = h.cast(g, index, ir.DataType.INT64)
    if not negative_ok:
        index = h.normalize_index(g, index, h.dim_size(g, self, dim))
    return g.op("Gather", self, index, axis=dim)


@onnx_symbolic("aten::slice_scatter")
def aten_slice_scatter(
    g: GraphContext,
    self: Value,
    src: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int | Value = 1,
) -> Value:
    """slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor

    The functional form of a write into a slice (``y[:, 1:3] = v``). With static bounds and
    step 1 it is a Concat of the untouched parts around ``src`` (a full slice is ``src``
    itself); other steps scatter along ``dim`` with indices folded at export time.
    Bounds or a step known only at run time scatter at positions computed in the graph.
    """
    return slice_scatter_with(g, self, src, dim, start, end, step, slice_scatter_positions)


# dynamic(g, self, src, dim, start, step, rank): slice_scatter with bounds known at run time
SliceScatterDynamic = Callable[
    [GraphContext, Value, Value, int, "int | Value | None", "int | Value", "int | None"], Value
]


def slice_scatter_positions(
    g: GraphContext, self: Value, src: Value, dim: int, start: int | Value | None, step: int | Value, rank: int | None
) -> Value:
    """slice_scatter with bounds known at run time: positions ``start + step * iota(n)`` (n
    from src's size, a negative start wrapped by the dim's size), expanded to src's shape
    and scattered (Scatter before opset 11, ScatterElements from it; iota is Range from 11)."""
    size = h.dim_size(g, self, dim)
    first = h.normalize_index(g, g.list_to_value([0 if start is None else start]), size)
    step_v = g.list_to_value([step])
    count = g.op("Gather", g.op("Shape", src), g.constant([dim]), axis=0)
    positions = g.op("Add", first, g.op("Mul", h.iota(g, count), step_v))
    shape = [1] * (rank or 1)
    shape[dim] = -1
    indices = g.op("Expand", g.op("Reshape", positions, g.constant(shape)), g.op("Shape", src))
    return h.scatter_elements(g, self, indices, src, dim)


def slice_scatter_with(
    g: GraphContext,
    self: Value,
    src: Value,
    dim: int,
    start: int | Value | None,
    end: int | Value | None,
    step: int | Value,
    dynamic: SliceScatterDynamic,
) -> Value:
    """aten::slice_scatter; bounds or a step known only at run time go to ``dynamic``."""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    size = self.shape[dim] if self.shape is not None else None
    src = h.cast(g, src, self.dtype) if self.dtype is not None else src
    if isinstance(step, Value):
        return dynamic(g, self, src, dim, start, step, rank)
    if isinstance(size, int) and not isinstance(start, Value) and not isinstance(end, Value):
        lo = 0 if start is None else (start + size if start < 0 else start)
        hi = size if end is None else (end + size if end < 0 else end)
        lo, hi = max(0, min(lo, size)), max(0, min(hi, size))
        if step == 1:
            if lo == 0 and hi >= size:
                return src
            parts = []
            if lo > 0:
                parts.append(h.slice_static(g, self, [dim], [0], [lo]))
            parts.append(src)
            if hi < size:
                parts.append(h.slice_static(g, self, [dim], [hi], [size]))
            return g.op("Concat", *parts, axis=dim)
        src_shape = h.static_shape(src)
        if src_shape is None:
            raise NeedsExportTimeValue("slice_scatter with a step needs a source of static shape")
        positions = torch.arange(lo, hi, step)[: src_shape[dim]]
        view = [1] * len(src_shape)
        view[dim] = len(positions)
        indices = positions.reshape(view).expand(src_shape).contiguous()
        return h.scatter_elements(g, self, g.constant(indices), src, dim)
    open_end = end is None or (isinstance(end, int) and end >= h.INT64_MAX)
    if (
        step == 1
        and isinstance(start, (int, type(None)))
        and (start or 0) >= 0
        and (open_end or (isinstance(end, int) and end >= 0))
    ):
        # Bounds known at export time on a dim whose size is not: the kept parts are slices
        # with constant bounds, which every opset's Slice takes, around the source.
        lo = start or 0
        parts = [h.slice_static(g, self, [dim], [0], [lo])] if lo > 0 else []
        parts.append(src)
        if not open_end:
            parts.append(h.slice_static(g, self, [dim], [end], [h.INT64_MAX]))
        return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=dim)
    return dynamic(g, self, src, dim, start, step, rank)


@onnx_symbolic("aten::select_scatter")
def aten_select_scatter(g: GraphContext, self: Value, src: Value, dim: int, index: int | Value) -> Value:
    """select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor

    The functional form of ``y[i] = v`` / ``y[i].add_(1)``: a one-element slice_scatter.
    """
    return select_scatter_with(g, self, src, dim, index, slice_scatter_positions)


def select_scatter_with(
    g: GraphContext, self: Value, src: Value, dim: int, index: int | Value, dynamic: SliceScatterDynamic
) -> Value:
    """aten::select_scatter as a slice_scatter_with ``dynamic``."""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    expanded = h.unsqueeze(g, src, [dim])
    if isinstance(index, int):
        size = self.shape[dim] if self.shape is not None else None
        if index >= 0 or isinstance(size, int):
            index += size if index < 0 else 0  # type: ignore[operator]
            return slice_scatter_with(g, self, expanded, dim, index, index + 1, 1, dynamic)
        index = g.constant(index)  # a negative index on a dynamic dim: wrapped by the run-time size
    return slice_scatter_with(
        g, self, expanded, dim, index, g.op("Add", h.cast(g, index, ir.DataType.INT64), g.constant(1)), 1, dynamic
    )


def _flat_nonzero(g: GraphContext, mask: Value) -> Value:
    """Row-major positions of the true elements of ``mask`` as a 1-D int64 tensor."""
    flat = g.op("Reshape", h.cast(g, mask, ir.DataType.BOOL), g.constant([-1]))
    return h.squeeze(g, g.op("NonZero", flat), [0])


def _index_items(g: GraphContext, indices: object) -> list[Value | None]:
    """The Tensor?[] argument: None entries are full slices; constants become values."""
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"expected a list of optional index tensors, got {type(indices).__name__}")
    items: list[Value | None] = []
    for item in indices:
        if item is None or isinstance(item, Value):
            items.append(item)
        elif isinstance(item, torch.Tensor):
            items.append(g.constant(item))
        else:
            raise TypeError(f"unsupported index entry {item!r}")
    return items


class _Arranged:
    """``data`` viewed so that every indexed dim sits in one merged axis ``axis``.

    Advanced indices that are adjacent stay in place; otherwise they move to the front, as
    torch does. Each index becomes a position in the merged axis: a bool mask over k dims is
    its row-major NonZero positions over them, integer indices are wrapped and scaled by the
    sizes of the indexed dims after them; broadcasting the terms broadcasts the indices.
    """

    def __init__(self, g: GraphContext, data: Value, indices: Sequence[Value | None]) -> None:
        rank = h.known_rank(data, "advanced indexing")
        entries: list[tuple[list[int], Value]] = []
        self.has_mask = False
        dim = 0
        for item in indices:
            if item is None:
                dim += 1
                continue
            if item.dtype in (ir.DataType.BOOL, ir.DataType.UINT8):
                k = h.known_rank(item, "a boolean mask index")
                entries.append((list(range(dim, dim + k)), _flat_nonzero(g, item)))
                self.has_mask = True
                dim += k
            else:
                entries.append(([dim], h.normalize_index(g, item, h.dim_size(g, data, dim))))
                dim += 1
        if dim > rank:
            raise ValueError(f"too many indices for a tensor of rank {rank}")
        indexed = [d for dims, _ in entries for d in dims]
        if indexed == list(range(indexed[0], indexed[-1] + 1)):
            self.order = list(range(rank))
            self.axis = indexed[0]
            view = data
        else:
            self.order = indexed + [d for d in range(rank) if d not in indexed]
            self.axis = 0
            view = g.op("Transpose", data, perm=self.order)
        all_sizes = [h.dim_size(g, data, d) for d in range(rank)]
        self.sizes = [all_sizes[d] for d in self.order]
        self.count = len(indexed)
        position: Value | None = None
        stride: int | Value = 1
        for dims, index in reversed(entries):
            term = (
                index
                if isinstance(stride, int) and stride == 1
                else g.op("Mul", index, stride if isinstance(stride, Value) else g.constant(stride))
            )
            position = term if position is None else g.op("Add", term, position)
            stride = h.mul_sizes(g, stride, h.prod_sizes(g, [all_sizes[d] for d in dims]))
        assert position is not None
        self.position = position
        if self.count > 1:
            merged = [
                *self.sizes[: self.axis],
                h.prod_sizes(g, self.sizes[self.axis : self.axis + self.count]),
                *self.sizes[self.axis + self.count :],
            ]
            view = g.op("Reshape", view, h.sizes_to_shape(g, merged))
            static = all(isinstance(m, int) for m in merged)
            view.shape = ir.Shape(merged if static else [None] * len(merged))
            view.dtype = data.dtype
            self.merged_rank = len(merged)
        else:
            self.merged_rank = rank
        self.view = view

    def restore(self, g: GraphContext, merged: Value) -> Value:
        """The inverse of the arrangement for a tensor shaped like the merged view."""
        out = merged
        if self.count > 1:
            out = g.op("Reshape", out, h.sizes_to_shape(g, self.sizes))
        if self.order != sorted(self.order):
            inverse = [self.order.index(d) for d in range(len(self.order))]
            out = g.op("Transpose", out, perm=inverse)
        return out


@onnx_symbolic("aten::index", complex_inputs=ComplexInputs.PARTS)
def aten_index(g: GraphContext, self: Value, indices: object) -> Value:
    """index.Tensor(Tensor self, Tensor?[] indices) -> Tensor

    One Gather on a view where the indexed dims are merged into one axis (see _Arranged):
    boolean masks, several broadcast index tensors and None slices all reduce to it, at
    every opset (GatherND only arrives at 11 and cannot express masks or slices anyway).
    """
    items = _index_items(g, indices)
    if all(item is None for item in items):
        return self
    arranged = _Arranged(g, self, items)
    out = g.op("Gather", arranged.view, arranged.position, axis=arranged.axis)
    return h.data_dependent(g, out) if arranged.has_mask else out


@onnx_symbolic("aten::index_put", opset=16)
@onnx_symbolic("aten::index_put", promotion=Promotion(("values",), Result.SELF))
def aten_index_put(g: GraphContext, self: Value, indices: object, values: Value, accumulate: bool = False) -> Value:
    """index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor

    Also the functional form of ``x[idx] = v`` and ``x[mask] = v``. On the merged view (see
    aten::index), the positions are flattened to one axis with the values broadcast to the
    indexed result, then scattered; accumulate=True sums repeated positions (reduction='add'
    from opset 16, hence the registration there; the one-hot lowering before).
    """
    items = _index_items(g, indices)
    values = h.cast(g, values, self.dtype)
    if all(item is None for item in items):
        return g.op("Expand", values, h.shape_of(g, self))
    arranged = _Arranged(g, self, items)
    axis, view = arranged.axis, arranged.view
    before = arranged.sizes[:axis]
    after = arranged.sizes[axis + arranged.count :]
    flat_position = g.op("Reshape", arranged.position, g.constant([-1]))
    selected = h.dim_size(g, flat_position, 0)
    result_shape = g.op(
        "Concat", h.sizes_to_shape(g, before), g.op("Shape", arranged.position), h.sizes_to_shape(g, after), axis=0
    )
    target = h.sizes_to_shape(g, [*before, selected, *after])
    updates = g.op("Reshape", g.op("Expand", values, result_shape), target)
    placed = g.op("Reshape", flat_position, g.constant(h.axis_shape(arranged.merged_rank, axis)))
    positions = g.op("Expand", placed, target)
    if accumulate:
        out = gather_scatter.scatter_reduce(g, view, axis, positions, updates, "sum")
    else:
        out = gather_scatter.scatter(g, view, positions, updates, axis)
    return arranged.restore(g, out)


@onnx_symbolic("aten::masked_select")
def aten_masked_select(g: GraphContext, self: Value, mask: Value) -> Value:
    """masked_select(Tensor self, Tensor mask) -> Tensor

    self and mask broadcast against each other (a Where broadcasts both), then the flat true
    positions are gathered; NonZero and Gather make it expressible from opset 9.
    """
    mask = h.cast(g, mask, ir.DataType.BOOL)
    broadcast = h.where(g, mask, self, self)
    full_mask = g.op("Expand", mask, g.op("Shape", broadcast))
    flat = g.op("Reshape", broadcast, g.constant([-1]))
    return h.data_dependent(g, g.op("Gather", flat, _flat_nonzero(g, full_mask), axis=0))


@onnx_symbolic("aten::masked_scatter")
def aten_masked_scatter(g: GraphContext, self: Value, mask: Value, source: Value) -> Value:
    """masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor

    The i-th true position (row-major, mask broadcast to self) takes source's i-th element:
    the first n flat source elements are scattered onto the flat true positions. Opset 9
    suffices (NonZero, Gather, Scatter); no CumSum is needed.
    """
    shape = h.shape_of(g, self)
    mask = g.op("Expand", h.cast(g, mask, ir.DataType.BOOL), shape)
    positions = _flat_nonzero(g, mask)
    count = h.dim_size(g, positions, 0)
    updates = g.op("Gather", g.op("Reshape", h.cast(g, source, self.dtype), g.constant([-1])), h.iota(g, count), axis=0)
    flat = g.op("Reshape", self, g.constant([-1]))
    return g.op("Reshape", gather_scatter.scatter(g, flat, positions, updates, 0), shape)


def _nonzero_rows(g: GraphContext, self: Value) -> Value:
    x = self
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, x, ir.DataType.FLOAT)
    return g.op("NonZero", x)


@onnx_symbolic("aten::nonzero")
def aten_nonzero(g: GraphContext, self: Value) -> Value:
    """nonzero(Tensor self) -> Tensor: [n, rank], NonZero's [rank, n] transposed. Only the
    count is data-dependent: the static second dim lets ``nonzero(m).squeeze(1)`` of a 1-d
    mask (box filtering) be a plain Squeeze with a known rank."""
    out = h.data_dependent(g, g.op("Transpose", _nonzero_rows(g, self), perm=[1, 0]))
    rank = h.rank_of(self)
    if rank is not None:
        out.shape = ir.Shape([None, rank])
    return out


@onnx_symbolic("aten::nonzero_numpy")
def aten_nonzero_numpy(g: GraphContext, self: Value) -> list[Value]:
    """nonzero_numpy(Tensor self) -> Tensor[] (nonzero(as_tuple=True)): one row per dim"""
    rows = _nonzero_rows(g, self)
    out = []
    for i in range(h.known_rank(self, "nonzero")):
        row = g.op("Gather", rows, g.constant(i), axis=0)
        row.dtype, row.shape = ir.DataType.INT64, ir.Shape([None])
        out.append(row)
    return out


@onnx_symbolic("aten::one_hot")
def aten_one_hot(g: GraphContext, self: Value, num_classes: int | Value = -1) -> Value:
    """one_hot(Tensor self, int num_classes=-1) -> Tensor

    An Equal against 0..C-1, cast to int64: onnxruntime's OneHot lacks many type
    combinations. num_classes=-1 takes max(self)+1 at run time. A num_classes computed at run
    time (any opset) is used as is, or as max(self)+1 when it is negative.
    """
    rank = h.known_rank(self, "one_hot")
    index = h.cast(g, self, ir.DataType.INT64)
    if not isinstance(num_classes, int):
        given = h.cast(g, num_classes, ir.DataType.INT64)
        inferred = g.op("Add", h.reduce(g, "ReduceMax", index, None, False), g.constant(1))
        depth = g.op("Where", g.op("Less", given, g.constant(0)), inferred, given)
        out = h.cast(g, g.op("Equal", h.unsqueeze(g, index, [rank]), h.iota(g, depth)), ir.DataType.INT64)
        return h.data_dependent(g, out)
    if num_classes < 0:
        depth = g.op("Add", h.reduce(g, "ReduceMax", index, None, False), g.constant(1))
        classes = h.iota(g, depth)
    else:
        classes = h.iota(g, num_classes)
    out = h.cast(g, g.op("Equal", h.unsqueeze(g, index, [rank]), classes), ir.DataType.INT64)
    return out if num_classes >= 0 else h.data_dependent(g, out)


@onnx_symbolic("aten::narrow", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.PARTS)
def aten_narrow(g: GraphContext, self: Value, dim: int, start: int | Value, length: int | Value) -> Value:
    """narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a) (and .Tensor)

    A slice [start, start+length); a negative start counts from the end. Bounds known only
    at run time need Slice-10.
    """
    rank = h.known_rank(self, "narrow")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    if isinstance(start, int) and start < 0:
        if isinstance(size, int):
            start += size
        else:
            start = g.op("Add", g.constant(start), size)
    elif isinstance(start, Value):
        start = h.normalize_index(g, g.op("Reshape", start, g.constant(torch.zeros(0, dtype=torch.int64))), size)
    if isinstance(start, int) and isinstance(length, int):
        return aten_slice(g, self, dim, start, start + length, 1)
    start_v = start if isinstance(start, Value) else g.constant(start)
    length_v = h.cast(g, length, ir.DataType.INT64) if isinstance(length, Value) else g.constant(length)
    return aten_slice(g, self, dim, start_v, g.op("Add", start_v, length_v), 1)
