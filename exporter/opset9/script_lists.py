"""TorchScript list builtins of scripted models: len, indexing (also at an index computed at run
time), append/insert/pop/del/item assignment, reverse, sort, clear, list() copies and ``in``.

ONNX idioms: a list is a Python list at export time wherever its length is fixed, so most
builtins act on it while the graph is emitted; lists whose length is only known at run time
are RuntimeLists (runtime_list.py): Loop scan outputs or ONNX sequences. An export-time list
read at a run-time index is gathered (scalars), or picked through a sequence or a chain of Ifs
(tensors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Quantized, SequenceRead
from exporter.opset9 import sorting
from exporter.registry import onnx_symbolic
from exporter.runtime_list import ConcatItem, RuntimeList, ScanItem

Value = ir.Value


@onnx_symbolic("aten::len.t", torch_sequence_read=SequenceRead.LENGTH)
def aten_len_t(g: GraphContext, a: object) -> object:
    """len.t(t[] a) -> int: lists are Python lists at export time."""
    if isinstance(a, (list, tuple)):
        return len(a)
    if isinstance(a, RuntimeList):
        return runtime_list.length(g, a)
    if isinstance(a, Value):  # a shape computed at run time
        return h.dim_size(g, a, 0)
    raise TypeError(f"len of {type(a).__name__}")


# pick(g, tensors, index): the item at a non-negative run-time index of an export-time list of tensors
PickTensor = Callable[[GraphContext, Sequence[Value], Value], object]


@onnx_symbolic("aten::__getitem__", torch_sequence_read=SequenceRead.ITEM, quantized=Quantized.INTEGERS)
def aten___getitem__(g: GraphContext, list: object, idx: object) -> object:  # noqa: A002 - schema name
    """__getitem__.t(t[](a) list, int idx) -> t(*): lists are Python lists at export time.

    Tensors of such a list at an index known only at run time may differ in shape: a chain of
    Ifs picks one (symbolic_opset11 uses an ONNX sequence).
    """
    return getitem_with(g, list, idx, _pick_by_if)


def getitem_with(g: GraphContext, list: object, idx: object, pick_tensor: PickTensor) -> object:  # noqa: A002
    """aten::__getitem__; ``pick_tensor`` picks from an export-time list of tensors at a run-time index."""
    if isinstance(list, (tuple, type([]))) and isinstance(idx, int):
        return list[idx]
    if isinstance(list, RuntimeList) and isinstance(idx, (int, Value)):
        return runtime_list.at(g, list, idx)
    if isinstance(list, Value) and isinstance(idx, (int, Value)):  # a shape list computed at run time
        known = h.shape_item(list, idx) if isinstance(idx, int) else None
        if known is not None:
            return known
        index = g.constant(idx) if isinstance(idx, int) else h.cast(g, idx, ir.DataType.INT64)
        return g.op("Gather", list, h.normalize_index(g, index, h.dim_size(g, list, 0)), axis=0)
    if isinstance(list, (tuple, type([]))) and isinstance(idx, Value):
        return _item_at_run_time_index(g, list, idx, pick_tensor)
    raise ValueError(f"indexing a {type(list).__name__} with {type(idx).__name__} is not supported")


def _item_at_run_time_index(g: GraphContext, items: Sequence[object], index: Value, pick_tensor: PickTensor) -> object:
    """``items[i]`` of an export-time list at an index known only at run time.

    Scalars (ints, floats, bools, 0-d values) are stacked and gathered; tensors, which may
    differ in shape, are picked by ``pick_tensor``.
    """
    if not items:
        raise IndexError("list index out of range (the list is empty)")
    return _item_at_non_negative_index(
        g, items, h.normalize_index(g, h.cast(g, index, ir.DataType.INT64), len(items)), pick_tensor
    )


def _item_at_non_negative_index(
    g: GraphContext, items: Sequence[object], index: Value, pick_tensor: PickTensor
) -> object:
    """:func:`_item_at_run_time_index` at an index already made non-negative.

    Tuples (``List[Tuple[int, int]]`` of image sizes, ``List[Tuple[Tensor, Tensor]]``) are
    picked field by field: the item at ``i`` is the tuple of each field's item at ``i``, so
    the fields may be numbers, tensors or tuples again, each lowered as above.
    """
    first = items[0]
    if isinstance(first, (tuple, type([]))) and all(
        type(v) is type(first) and len(v) == len(first)
        for v in items  # type: ignore[arg-type]
    ):
        fields = [_item_at_non_negative_index(g, [v[j] for v in items], index, pick_tensor) for j in range(len(first))]  # type: ignore[index]
        return tuple(fields) if isinstance(first, tuple) else fields
    if all(isinstance(v, (bool, int, float)) or (isinstance(v, Value) and h.rank_of(v) == 0) for v in items):
        values = [v if isinstance(v, Value) else None for v in items]
        kinds = {v.dtype for v in values if v is not None} | {
            runtime_list.SCALAR_LIST_ITEMS[type(v).__name__] for v in items if not isinstance(v, Value)
        }
        dtype = (
            ir.DataType.DOUBLE
            if any(k is not None and tensors.is_floating_dtype(k) for k in kinds)
            else (ir.DataType.BOOL if kinds == {ir.DataType.BOOL} else ir.DataType.INT64)
        )
        stacked = runtime_list.list_item_value(g, list(items), dtype)
        return g.op("Gather", stacked, index, axis=0)
    if not all(isinstance(v, Value) for v in items):
        found = sorted({type(v).__name__ for v in items})
        raise NeedsExportTimeValue(
            f"indexing a list of mixed items ({', '.join(found)}) at an index computed at run time is not "
            "supported: its items must be all numbers, all tensors, or tuples of one length"
        )
    return pick_tensor(g, items, index)  # type: ignore[arg-type]


def _pick_by_if(g: GraphContext, items: Sequence[Value], index: Value) -> Value:
    """The tensor at a run-time index by a chain of Ifs on ``i == k``: any opset's If can
    return it whatever its shape."""
    chosen: Value = items[-1]
    for position in range(len(items) - 2, -1, -1):
        item, later = items[position], chosen
        then_branch = g.build_subgraph([], lambda sub, item=item: [_sized_at_run_time(sub, item)], "then_branch")
        else_branch = g.build_subgraph([], lambda sub, later=later: [_sized_at_run_time(sub, later)], "else_branch")
        for branch in (then_branch, else_branch):  # the sizes differ between branches: keep the rank only
            (output,) = branch.outputs
            if output.shape is not None:
                output.shape = ir.Shape([None] * len(output.shape))
        chosen = g.op(
            "If", g.op("Equal", index, g.constant(position)), then_branch=then_branch, else_branch=else_branch
        )
        chosen.dtype = item.dtype  # type: ignore[union-attr]
        rank = h.rank_of(item)  # type: ignore[arg-type]
        if rank is not None and rank == h.rank_of(later):
            chosen.shape = ir.Shape([None] * rank)
    return chosen


def _sized_at_run_time(g: GraphContext, item: Value) -> Value:
    """``item`` as a branch output whose sizes no shape inference can take from ``item``:
    onnx's If-1 (below opset 11) types its output as the then-branch's, so an Identity of an
    [n, 3] tensor would type the picked [1, 3] one as [n, 3], and onnxruntime's buffer
    planner then reuses an [n, 3] buffer for it ("Shape mismatch attempting to re-use
    buffer"). A Reshape to its own run-time shape keeps the values and hides the sizes."""
    out = g.op("Reshape", item, g.op("Shape", item))
    rank = h.rank_of(item)
    out.shape = ir.Shape([None] * rank) if rank is not None else None
    return out


@onnx_symbolic("aten::append", mutates_list=True)
def aten_append(g: GraphContext, self: object, el: object) -> object:
    """append.t(t[](a!) self, t(c -> *) el) -> t[](a!): grows the export-time list, or the
    run-time one (a sequence, the item of a loop's scan output, or a buffer concatenated in
    the loop)."""
    if isinstance(self, ScanItem):
        if isinstance(el, (list, tuple)):
            self.nested = True
            el = runtime_list.list_item_value(g, el, None)
        elif isinstance(el, dict):
            raise TypeError(runtime_list.DICT_ITEMS_REFUSAL)
        elif not isinstance(el, Value):
            el = g.constant(el)
        self.item = el
        return self
    if isinstance(self, ConcatItem):
        runtime_list.concat_step(g, self, el)
        return self
    if isinstance(self, RuntimeList):
        return runtime_list.append(g, self, el)
    if not isinstance(self, list):
        raise ValueError(f"append to {type(self).__name__} is not supported")
    self.append(el)
    return self


@onnx_symbolic("aten::__contains__")
def aten___contains__(g: GraphContext, *inputs: object) -> object:
    """__contains__.*(list or dict, item) -> bool: decided on export-time containers."""
    container, item = inputs
    if isinstance(container, RuntimeList):
        raise NeedsExportTimeValue("`in` on a list whose length is only known at run time is not supported")
    if isinstance(item, Value) or any(
        isinstance(v, Value) for v in (container if isinstance(container, (list, tuple)) else [])
    ):
        raise NeedsExportTimeValue("`in` on values computed at run time is not supported")
    return item in container


def _export_time_list(g: GraphContext, value: object, what: str) -> list:  # type: ignore[type-arg]
    if not isinstance(value, list):
        raise ValueError(f"{what} on {type(value).__name__} is not supported")
    return value


@onnx_symbolic("aten::list.t")
def aten_list_t(g: GraphContext, l: object) -> object:  # noqa: E741 - schema name
    """list.t(t[] l) -> t[]: a copy, so later mutation of either list stays separate."""
    if isinstance(l, RuntimeList):
        return runtime_list.copy(l)
    if isinstance(l, Value):  # a shape computed at run time: one 1-d int64 value
        return value_list_copy(g, l)
    return list(_export_time_list(g, l, "list()"))


def value_list_copy(g: GraphContext, items: Value) -> Value:
    """A copy of an int list held as one run-time value, as a value of its own.

    The value itself is immutable, but item assignment rebinds every name holding it
    (GraphContext.replace): a copy sharing it would be rewritten with the original, a wrong
    model. The emitter tells lists apart only by the object bound, so the copy needs a new
    value: a second Shape of the same tensor where the list is one (its static dims stay
    known to h.shape_item), else an Identity.
    """
    producer = items.producer()
    if producer is not None and producer.op_type == "Shape" and producer.domain == "" and not producer.attributes:
        (source,) = producer.inputs
        if source is not None:
            return g.op("Shape", source)
    return g.op("Identity", items)


@onnx_symbolic("aten::_set_item.t", mutates_list=True)
def aten__set_item_t(g: GraphContext, l: object, idx: int | Value, el: object) -> object:  # noqa: E741
    """_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!): `l[idx] = el`; at an index
    computed at run time the list becomes an ONNX sequence (opset 11)."""
    if isinstance(l, RuntimeList):
        runtime_list.set_item(g, l, idx, el)
        return l
    if isinstance(l, Value):
        # an int list computed at run time (a shape, ``max_by_axis`` of image sizes) is a 1-d
        # value: the item is scattered in, and every name bound to the list follows
        updated = _scatter_into(g, l, idx, el)
        g.replace(l, updated)
        return updated
    if not isinstance(idx, int):
        # which item changes is known only at run time: the list becomes a run-time one (a
        # sequence), and every name bound to it follows
        converted = runtime_list.from_items(
            g, _export_time_list(g, l, "item assignment"), runtime_list.list_item_dtype([g.node.inputsAt(0)])
        )
        g.replace(l, converted)
        runtime_list.set_item(g, converted, idx, el)
        return converted
    items = _export_time_list(g, l, "item assignment")
    items[idx] = el
    return items


def _scatter_into(g: GraphContext, values: Value, idx: int | Value, el: object) -> Value:
    """``values`` (1-d) with the item at ``idx`` (negative counts from the end) set to ``el``."""
    index = g.constant([idx]) if isinstance(idx, int) else g.op("Reshape", idx, g.constant([1]))
    index = h.normalize_index(g, index, h.dim_size(g, values, 0))
    item = el if isinstance(el, Value) else g.constant([el])
    item = h.cast(g, g.op("Reshape", item, g.constant([1])), values.dtype)
    return h.scatter_elements(g, values, index, item, axis=0)


@onnx_symbolic("aten::insert.t", mutates_list=True)
def aten_insert_t(g: GraphContext, self: object, idx: int | Value, el: object) -> object:
    """insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()"""
    if isinstance(self, RuntimeList):
        runtime_list.insert(g, self, idx, el)
        return None
    if not isinstance(idx, int):
        raise NeedsExportTimeValue(
            "inserting into an export-time list at an index computed at run time is not supported"
        )
    _export_time_list(g, self, "insert").insert(idx, el)
    return None


@onnx_symbolic("aten::pop.t", mutates_list=True, torch_sequence_read=SequenceRead.REMOVED_ITEM)
def aten_pop_t(g: GraphContext, self: object, idx: int | Value = -1) -> object:
    """pop.t(t[](a!) self, int idx=-1) -> t(*)"""
    if isinstance(self, RuntimeList):
        return runtime_list.pop(g, self, idx)
    if not isinstance(idx, int):
        raise NeedsExportTimeValue("popping from an export-time list at an index computed at run time is not supported")
    if isinstance(self, Value):
        return _pop_from_value(g, self, idx)
    return _export_time_list(g, self, "pop").pop(idx)


def _pop_from_value(g: GraphContext, values: Value, idx: int) -> int | Value:
    """``values.pop(idx)`` of an int list held as one 1-d value (``list(x.shape)`` with a
    dynamic axis, julius' ``shape.pop(-1)``): the item is read as ``__getitem__`` reads it (a
    static dim stays an int), and every name bound to the list follows the rest (Gather of the
    other positions), which needs the list's length at export."""
    shape = h.static_shape(values)
    if shape is None or len(shape) != 1:
        raise NeedsExportTimeValue("popping from a list computed at run time needs its length at export")
    (length,) = shape
    if not -length <= idx < length:
        raise IndexError(f"pop index {idx} out of range for a list of {length} items")
    position = idx % length
    item = getitem_with(g, values, position, _pick_by_if)
    rest = h.gather_constant(g, values, torch.tensor([i for i in range(length) if i != position]), 0)
    g.replace(values, rest)
    return item


@onnx_symbolic("aten::Delete.t", mutates_list=True)
def aten_delete_t(g: GraphContext, self: object, idx: int | Value) -> object:
    """Delete.t(t[](a!) self, int idx) -> (): `del l[idx]`"""
    if isinstance(self, RuntimeList):
        runtime_list.delete(g, self, idx)
        return None
    if not isinstance(idx, int):
        raise NeedsExportTimeValue(
            "deleting from an export-time list at an index computed at run time is not supported"
        )
    del _export_time_list(g, self, "del")[idx]
    return None


@onnx_symbolic("aten::reverse", mutates_list=True)
def aten_reverse(g: GraphContext, self: object) -> object:
    """reverse.t(t[](a!) self) -> (): in place, at export time or on the run-time list."""
    if isinstance(self, RuntimeList):
        runtime_list.reverse(g, self)
        return None
    _export_time_list(g, self, "reverse").reverse()
    return None


@onnx_symbolic("aten::clear.t", mutates_list=True)
def aten_clear_t(g: GraphContext, self: object) -> object:
    """clear.t(t[](a!) self) -> ()"""
    if isinstance(self, RuntimeList):
        runtime_list.clear(g, self)
        return None
    _export_time_list(g, self, "clear").clear()
    return None


@onnx_symbolic("aten::sort.int")
@onnx_symbolic("aten::sort.float")
@onnx_symbolic("aten::sort.bool")
def aten_sort_list(g: GraphContext, self: object, reverse: bool = False) -> None:
    """sort.int(int[](a!) self, bool reverse=False) -> (): ``l.sort()`` in place. Numbers known at
    export time sort in Python; otherwise the stacked items go through a TopK of the whole
    list (k is the run-time length from opset 10; symbolic_opset11 finds the smallest directly),
    and the list holds the sorted values."""
    return sort_list_with(g, self, reverse, sorting.topk_before_11)


def sort_list_with(g: GraphContext, self: object, reverse: bool, topk: sorting.TopK) -> None:
    """aten::sort.int/.float/.bool with ``topk`` for the numbers known only at run time."""
    if isinstance(self, list) and all(isinstance(v, (bool, int, float)) for v in self):
        self.sort(reverse=reverse)
        return None
    if isinstance(self, list):
        dtype = runtime_list.list_item_dtype([g.node.inputsAt(0)])
        stacked = runtime_list.list_item_value(g, self, dtype)
    elif isinstance(self, RuntimeList):
        stacked = runtime_list.tensor_of(g, self)
    else:
        raise ValueError(f"sort of {type(self).__name__} is not supported")
    dtype = stacked.dtype
    work = h.cast(g, stacked, ir.DataType.INT64) if dtype == ir.DataType.BOOL else stacked
    count = len(self) if isinstance(self, list) else h.dim_size(g, work, 0)
    values, _ = topk(g, work, count, 0, reverse, True)
    values = h.cast(g, values, dtype)  # type: ignore[arg-type]
    values.dtype, values.shape = dtype, ir.Shape([None])
    if isinstance(self, list):
        self[:] = [g.op("Gather", values, g.constant(i), axis=0) for i in range(len(self))]
        return None
    sorted_items = RuntimeList(stacked=values, item_dtype=dtype)
    sorted_items.item_rank = 0
    runtime_list.assign(self, sorted_items)
    return None


@onnx_symbolic("aten::mul.left_t")
def aten_mul_left_t(g: GraphContext, l: object, n: int) -> object:  # noqa: E741 - schema name
    """mul.left_t(t[] l, int n) -> t[]: ``l * n`` of an export-time list (torchvision's
    DefaultBoxGenerator stacks ``(shift_x, shift_y) * len(wh_pairs)``)."""
    return list(_export_time_list(g, l, "list repetition")) * n


@onnx_symbolic("aten::mul.right_")
def aten_mul_right(g: GraphContext, n: int, l: object) -> object:  # noqa: E741 - schema name
    """mul.right_(int n, t[] l) -> t[]: ``n * l``"""
    return list(_export_time_list(g, l, "list repetition")) * n
