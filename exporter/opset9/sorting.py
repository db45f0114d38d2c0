"""Sorting and selection: topk, sort, argsort, msort, bucketize, searchsorted, median,
kthvalue, unique_consecutive (unique lives in symbolic_opset11).

ONNX idioms: TopK's k is an attribute before opset 10 and it has no NaN ordering rule, so values
are mapped to a total order that places NaN like torch and read back by index (``topk_key``).
The opset 10 and 11 forms of topk/sort/argsort (and of what sorts a whole dim: msort, median,
kthvalue) are registered in symbolic_opset10/11. unique_consecutive needs no sort: a run starts
where an element differs from the one before it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.opset9 import gather_scatter
from exporter.registry import onnx_symbolic

Value = ir.Value


def topk_work(g: GraphContext, x: Value, *, native_integers: bool) -> Value:
    """``x`` in a dtype TopK takes: half widened to float at every opset; integers go through
    double (exact to 2**53) unless ``native_integers`` (TopK takes integers from opset 11),
    then small integers are widened to int64."""
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return h.cast(g, x, ir.DataType.FLOAT)
    if not h.is_floating(x):
        if not native_integers:
            return h.cast(g, x, ir.DataType.DOUBLE)
        if x.dtype not in (ir.DataType.INT32, ir.DataType.INT64):
            return h.cast(g, x, ir.DataType.INT64)
    return x


def topk_key(g: GraphContext, x: Value, work: Value, *, negate: bool, read_back: bool) -> Value:
    """The TopK key for ``work`` (``x`` widened). torch ranks NaN above +inf. onnxruntime's TopK
    has ranked NaN lowest (before 1.32) and highest (1.32), so for floats the key says it
    explicitly: infinities are clamped to the largest finite value (when the values are read
    back by index), NaN becomes +inf (-inf once negated). Without the read-back NaN only moves
    to the right end (and comes out as inf)."""
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
    return key


def set_topk_types(x: Value, key: Value, values: Value, indices: Value, k: int | Value, dim: int) -> None:
    """Give TopK's outputs their shapes and dtypes when ``x``'s shape and k are known."""
    shape = h.static_shape(x)
    if shape is not None and isinstance(k, int):
        shape[dim] = k
        indices.shape, indices.dtype = ir.Shape(shape), ir.DataType.INT64
        values.shape, values.dtype = ir.Shape(shape), key.dtype


def topk_before_11(
    g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool
) -> tuple[Value, Value]:
    """TopK before opset 11: it only finds the largest, sorted, and only takes floats, so the
    smallest are the largest of -x and integers go through double. The values are read back
    by index (see topk_key) only where TopK's outputs have static shapes (``x``'s and k known
    at export time): before opset 11 the read-back gathers with static indices, and with a k
    known only at run time (TopK-10 takes it as an input) the values are TopK's own, NaN
    coming out as inf. Ties come lowest index first."""
    del sorted_  # always sorted
    rank = h.known_rank(x, "topk")
    dim = h.normalize_dim(dim, rank)
    work = topk_work(g, x, native_integers=False)
    negate = not largest
    read_back = h.is_floating(x) and h.static_shape(x) is not None and isinstance(k, int)
    key = topk_key(g, x, work, negate=negate, read_back=read_back)
    values, indices = h.topk(g, key, k, dim)
    if negate:
        values = g.op("Neg", values)
    set_topk_types(x, key, values, indices, k, dim)
    if read_back:
        values = gather_scatter.aten_gather(g, work, dim, indices)
    return h.cast(g, values, x.dtype), indices


def topk_static_k(
    g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool
) -> tuple[Value, Value]:
    """topk_before_11 where TopK takes k as an attribute (opset 9)."""
    if not isinstance(k, int):
        raise NeedsExportTimeValue("topk with k known only at run time needs opset 10")
    return topk_before_11(g, x, k, dim, largest, sorted_)


TopK = Callable[[GraphContext, Value, "int | Value", int, bool, bool], tuple[Value, Value]]


def sort_with(g: GraphContext, self: Value, dim: int, descending: bool, topk: TopK) -> tuple[Value, Value]:
    """aten::sort as a ``topk`` of the whole dim."""
    if h.rank_of(self) == 0:
        return self, g.constant(torch.tensor(0))
    return topk(g, self, h.dim_size(g, self, dim), dim, descending, True)


@onnx_symbolic("aten::topk")
def aten_topk(
    g: GraphContext,
    self: Value,
    k: int | Value,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)

    sorted=False leaves the order unspecified in torch; sorted output satisfies it. TopK takes
    k as an attribute at opset 9 (k must be known at export time), as an input from 10;
    smallest-k, integers and a NaN-safe read-back with dynamic shapes arrive at 11.
    """
    return topk_static_k(g, self, k, dim, largest, sorted)


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
    return sort_with(g, self, dim, descending, topk_static_k)


@onnx_symbolic("aten::argsort")
def aten_argsort(g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False) -> Value:
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


@onnx_symbolic("aten::searchsorted")
def aten_searchsorted(
    g: GraphContext,
    sorted_sequence: Value,
    self: Value,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Value | None = None,
) -> Value:
    """searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor

    bucketize with the arguments swapped when the sequence is 1-d; an N-d sequence (one
    sorted row per leading index of ``self``) compares each row with its own values: the
    values gain a last axis, the rows a second-to-last one. ``sorter`` needs GatherElements
    (symbolic_opset11).
    """
    right = right or side == "right"
    if sorter is not None:
        raise ValueError("searchsorted with a sorter needs opset 11 (GatherElements)")
    if h.rank_of(sorted_sequence) == 1:
        return aten_bucketize(g, self, sorted_sequence, out_int32, right)
    rank = h.known_rank(self, "searchsorted")
    rows = h.unsqueeze(g, sorted_sequence, [rank - 1])
    x, b = self, rows
    if x.dtype != b.dtype:
        x, b = h.cast(g, x, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
    x, b = h.comparable(g, x), h.comparable(g, b)
    column = h.unsqueeze(g, x, [rank])
    below = g.op("Not", g.op("Greater", b, column)) if right else g.op("Less", b, column)
    if not right and h.is_floating(x):
        below = g.op("Or", below, g.op("IsNaN", column))
    count = h.reduce(g, "ReduceSum", h.cast(g, below, ir.DataType.INT64), [rank], False)
    return h.cast(g, count, ir.DataType.INT32 if out_int32 else ir.DataType.INT64)


# -- median ---------------------------------------------------------------------------------------


def median_with(
    g: GraphContext, self: Value, dim: int | None, keepdim: bool, topk: TopK, *, ignore_nan: bool
) -> tuple[Value, Value]:
    """The lower median along ``dim`` (None: of every element, 0-d) and its index, from the
    stable ascending order a ``topk`` of the whole dim gives (NaN last, ties lowest index first).

    torch returns the ((n - 1) // 2)-th smallest element; among equal elements its CPU kernel
    picks the one the stable order puts there (checked on random ties; torch documents no rule).
    median with a NaN in the row returns NaN and the first NaN's index; nanmedian takes the
    lower median of the non-NaN elements. An all-NaN row gives NaN, at index 0 here; torch's
    index there is whatever its selection leaves (0 for rows of up to 3, 2 for 4 or 5, ...): the
    one known divergence. The value is read from the input at the chosen index, so it is exact.
    """
    x, axis = (g.op("Reshape", self, g.constant([-1])), 0) if dim is None else (self, dim)
    rank = h.known_rank(x, "median")
    if rank == 0:
        return self, g.constant(torch.tensor(0))
    axis = h.normalize_dim(axis, rank)
    order = sort_with(g, _median_key(g, x), axis, False, topk)[1]
    size = h.dim_size(g, x, axis)
    position: int | Value = (
        (size - 1) // 2 if isinstance(size, int) else g.op("Div", g.op("Sub", size, g.constant(1)), g.constant(2))
    )
    nan_count = None
    if h.is_floating(x):
        nan_count = h.reduce(g, "ReduceSum", h.cast(g, g.op("IsNaN", x), ir.DataType.INT64), [axis], True)
        size_v = g.constant(size) if isinstance(size, int) else size
        if ignore_nan:
            # the lower median of the first count = n - nan_count sorted elements, 0 when none
            below = g.op("Sub", g.op("Sub", size_v, nan_count), g.constant(1))
            below = g.op("Where", g.op("Less", below, g.constant(0)), g.constant(0), below)
            position = g.op("Div", below, g.constant(2))
        else:
            # the first NaN sorts to n - nan_count
            first_nan = g.op("Sub", size_v, nan_count)
            position_v = g.constant(position) if isinstance(position, int) else position
            position = g.op("Where", g.op("Greater", nan_count, g.constant(0)), first_nan, position_v)
    index = _pick(g, order, position, axis, size, keepdim=True)
    values = _pick_by_index(g, x, index, axis, size)
    if not keepdim:
        index, values = h.squeeze(g, index, [axis]), h.squeeze(g, values, [axis])
    return values, index


def _median_key(g: GraphContext, x: Value) -> Value:
    """A sort key without NaN that orders like torch: NaN above +inf. The floats widen to double,
    where +inf becomes 1e300 (above every float32) and NaN +inf; a double's +inf becomes the
    largest double (a tie with that one value only). TopK's own NaN handling then never
    matters: below opset 11 with sizes known at run time it ties NaN with +inf."""
    if not h.is_floating(x):
        return x
    work = h.cast(g, x, ir.DataType.DOUBLE)
    big = 1e300 if x.dtype != ir.DataType.DOUBLE else torch.finfo(torch.float64).max
    # +inf is what exceeds the largest double (Greater takes doubles at every opset, Equal from 11)
    above = g.op("Greater", work, h.scalar_like(g, torch.finfo(torch.float64).max, work))
    work = g.op("Where", above, h.scalar_like(g, big, work), work)
    return g.op("Where", g.op("IsNaN", work), h.scalar_like(g, math.inf, work), work)


def _one_hot_along(g: GraphContext, position: Value, axis: int, size: int | Value, rank: int) -> Value:
    """A bool mask, true where the position along ``axis`` equals ``position`` (kept dims)."""
    steps = h.iota(g, size)
    steps = g.op("Reshape", steps, g.constant(h.axis_shape(rank, axis))) if rank > 1 else steps
    return g.op("Equal", steps, h.cast(g, position, ir.DataType.INT64))


def _pick(g: GraphContext, x: Value, position: int | Value, axis: int, size: int | Value, *, keepdim: bool) -> Value:
    """x at ``position`` along ``axis`` (one position for every row when an int, else one per
    row in the kept-dims shape): a Gather, or a one-hot mask summed over the axis (every opset
    has it; GatherElements needs 11)."""
    if isinstance(position, int):
        picked = g.op("Gather", x, g.constant([position]), axis=axis)
        return picked if keepdim else h.squeeze(g, picked, [axis])
    mask = _one_hot_along(g, position, axis, size, h.known_rank(x, "median"))
    return h.reduce(g, "ReduceSum", g.op("Where", mask, x, h.scalar_like(g, 0, x)), [axis], keepdim)


def _pick_by_index(g: GraphContext, x: Value, index: Value, axis: int, size: int | Value) -> Value:
    """The elements of ``x`` at ``index`` along ``axis`` (one per row, kept dims): a NaN stays NaN."""
    mask = _one_hot_along(g, index, axis, size, h.known_rank(x, "median"))
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        work = h.cast(g, x, ir.DataType.FLOAT)
    elif not h.is_floating(x) and x.dtype not in (ir.DataType.INT32, ir.DataType.INT64):
        work = h.cast(g, x, ir.DataType.INT64)  # ReduceSum's integer kernels
    else:
        work = x
    picked = h.reduce(g, "ReduceSum", g.op("Where", mask, work, h.scalar_like(g, 0, work)), [axis], True)
    return h.cast(g, picked, x.dtype)


@onnx_symbolic("aten::median")
def aten_median(g: GraphContext, self: Value) -> Value:
    """median(Tensor self) -> Tensor: the lower median of every element (median_with). TopK
    takes k as an attribute at opset 9, so the element count must be known at export time;
    symbolic_opset10/11 lift that and sort integers natively."""
    return median_with(g, self, None, False, topk_static_k, ignore_nan=False)[0]


@onnx_symbolic("aten::median.dim")
def aten_median_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices) (median_with)"""
    return median_with(g, self, dim, keepdim, topk_static_k, ignore_nan=False)


@onnx_symbolic("aten::nanmedian")
def aten_nanmedian(g: GraphContext, self: Value) -> Value:
    """nanmedian(Tensor self) -> Tensor: the lower median of the non-NaN elements (median_with)"""
    return median_with(g, self, None, False, topk_static_k, ignore_nan=True)[0]


@onnx_symbolic("aten::nanmedian.dim")
def aten_nanmedian_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices) (median_with)"""
    return median_with(g, self, dim, keepdim, topk_static_k, ignore_nan=True)


# -- kthvalue, msort ------------------------------------------------------------------------------


def kthvalue_with(
    g: GraphContext, self: Value, k: int | Value, dim: int, keepdim: bool, topk: TopK
) -> tuple[Value, Value]:
    """The k-th smallest element along ``dim`` and its index, from the stable ascending order a
    ``topk`` of the whole dim gives (NaN last, as torch ranks it: the k-th of a row holding NaNs
    past its numbers is NaN, at the first such NaN's index). Among equal values torch's index is
    whichever its quickselect leaves (not the first, not the last); here it is the stable
    order's, so indices agree wherever the k-th value is unique in its row. A 0-d input is its
    own only value (torch accepts only k=1 there)."""
    rank = h.known_rank(self, "kthvalue")
    if rank == 0:
        return self, g.constant(torch.tensor(0))
    axis = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, axis)
    position: int | Value = k - 1 if isinstance(k, int) else g.op("Sub", h.cast(g, k, ir.DataType.INT64), g.constant(1))
    order = sort_with(g, _median_key(g, self), axis, False, topk)[1]
    index = _pick(g, order, position, axis, size, keepdim=True)
    values = _pick_by_index(g, self, index, axis, size)
    if not keepdim:
        index, values = h.squeeze(g, index, [axis]), h.squeeze(g, values, [axis])
    return values, index


@onnx_symbolic("aten::kthvalue")
def aten_kthvalue(
    g: GraphContext, self: Value, k: int | Value, dim: int = -1, keepdim: bool = False
) -> tuple[Value, Value]:
    """kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)

    kthvalue_with; TopK takes k as an attribute at opset 9, so the size of ``dim`` must be known
    at export time (symbolic_opset10 lifts that, symbolic_opset11 sorts integers natively).
    """
    return kthvalue_with(g, self, k, dim, keepdim, topk_static_k)


@onnx_symbolic("aten::msort")
def aten_msort(g: GraphContext, self: Value) -> Value:
    """msort(Tensor self) -> Tensor: the values of sort along dim 0 (aten_sort; NaN last)"""
    return aten_sort(g, self, 0)[0]


# -- unique_consecutive ---------------------------------------------------------------------------


@onnx_symbolic("aten::unique_consecutive")
def aten_unique_consecutive(
    g: GraphContext, self: Value, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> tuple[Value, Value, Value]:
    """unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)

    A run starts where an element (a slice along ``dim``) differs from the one before it, NaN
    differing from everything as in torch: Compress keeps the starts, NonZero finds them, the
    counts are the gaps between starts and the inverse is the running count of starts less one
    (h.exclusive_cumsum: CumSum from opset 11, a triangular mask below). All of it exists at
    opset 9. Without ``dim`` the input is flattened and the inverse has its shape. An output
    not asked for is empty, as in torch.
    """
    rank = h.known_rank(self, "unique_consecutive")
    if dim is None:
        x, axis = g.op("Reshape", self, g.constant([-1])), 0
    else:
        x, axis = self, h.normalize_dim(dim, rank)
    x_rank = h.known_rank(x, "unique_consecutive")
    size = h.dim_size(g, x, axis)
    # the slice before each one (the first compared with itself, then forced to start a run)
    previous = g.op(
        "Concat", h.slice_static(g, x, [axis], [0], [1]), h.slice_static(g, x, [axis], [0], [-1]), axis=axis
    )
    differs = g.op("Not", h.equal(g, x, previous))
    if x_rank > 1:
        others = [a for a in range(x_rank) if a != axis]
        count = h.reduce(g, "ReduceSum", h.cast(g, differs, ir.DataType.INT64), others, False)
        differs = g.op("Greater", count, g.constant(0))
    starts_run = g.op("Or", differs, g.op("Equal", h.iota(g, size), g.constant(0)))
    values = h.data_dependent(g, g.op("Compress", x, starts_run, axis=axis))
    inverse = counts = h.empty_int64(g)
    if return_inverse:
        started = h.cast(g, starts_run, ir.DataType.INT64)
        inverse = g.op("Sub", g.op("Add", h.exclusive_cumsum(g, started), started), g.constant(1))
        if dim is None:
            inverse = g.op("Reshape", inverse, h.shape_of(g, self))
    if return_counts:
        starts = h.squeeze(g, g.op("NonZero", starts_run), [0])
        size_v = g.constant([size]) if isinstance(size, int) else h.reshape(g, size, [1])
        ends = g.op("Concat", h.slice_static(g, starts, [0], [1], [h.INT64_MAX]), size_v, axis=0)
        counts = h.data_dependent(g, g.op("Sub", ends, starts), 2)
    return values, inverse, counts
