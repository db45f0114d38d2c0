"""Lists whose length is only known at run time: an ONNX sequence, or a Loop's stacked scan output.

A TorchScript list is a Python list at export time wherever its length is fixed: the emitter
inlines the branch taken and unrolls loops with a known trip count, so ``append`` just grows
that Python list. A list appended to in a Loop with a run-time trip count, or in a branch
chosen at run time, has a length only known at run time. It then takes one of two forms:

- ``stacked``: a tensor whose axis 0 indexes the list. A loop body that appends exactly one
  item per iteration to a list that starts empty emits that item as a Loop *scan output*,
  which ONNX stacks. It works from opset 9, needs no sequence op, and is what a loop feeding
  ``torch.stack`` should become anyway.
- ``sequence``: an ONNX ``seq(tensor)`` value. The Sequence* ops exist from opset 11, but Loop
  and If only carry sequences from opset 13, so lists changed inside run-time control flow
  need opset 13 unless the scan form fits.
- ``concatenated``: below opset 13, a list built like a scan output but read only by
  ``torch.cat`` (its items may differ in size along the cat dim, which a scan output cannot
  stack) is concatenated inside the loop: a loop-carried flat buffer grows by each item
  (:class:`ConcatItem`), and the result is that buffer reshaped after the loop.

One ``RuntimeList`` object is shared by every TorchScript value that aliases the list, so an
in-place ``append`` updates them all, as it does in TorchScript.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext

__all__ = [
    "RuntimeList",
    "ScanItem",
    "ConcatItem",
    "concat_step",
    "concatenated",
    "from_items",
    "list_item_dtype",
    "list_item_value",
    "item_value",
    "sequence_of",
    "append",
    "insert",
    "pop",
    "set_item",
    "delete",
    "clear",
    "copy",
    "length",
    "at",
    "stack",
    "cat",
    "tensor_of",
    "reverse",
    "slice_list",
    "concat",
    "assign",
    "SEQUENCE_OPSET",
    "SCALAR_LIST_ITEMS",
    "CONTROL_FLOW_SEQUENCE_OPSET",
    "DICT_ITEMS_REFUSAL",
]

Value = ir.Value

# Item dtypes of scalar lists as the graph holds them (a TorchScript float is a double).
SCALAR_LIST_ITEMS = {"int": ir.DataType.INT64, "float": ir.DataType.DOUBLE, "bool": ir.DataType.BOOL}

# Sequence* ops appear in opset 11; Loop and If accept sequence values from opset 13.
SEQUENCE_OPSET = 11
CONTROL_FLOW_SEQUENCE_OPSET = 13

# Why a run-time list of dicts (torchvision's per-image detections over a dynamic batch) is
# refused: a dict is a Python dict at export time (script_dicts.py), and ONNX has no sequence
# of maps. With the count known at export time the loop unrolls and no run-time list is made.
DICT_ITEMS_REFUSAL = (
    "a list whose length is only known at run time (built in a loop with a run-time trip count, or in a "
    "branch chosen at run time) cannot hold dicts: ONNX has no sequence of maps. Make the count known at "
    "export time (a static input shape: the loop then unrolls and the dicts resolve while exporting), or "
    "keep one list per field"
)


class RuntimeList:
    """A list whose items live in the ONNX graph and whose length is known at run time."""

    def __init__(
        self,
        *,
        sequence: Value | None = None,
        stacked: Value | None = None,
        item_dtype: ir.DataType | None = None,
        concatenated: tuple[Value, int] | None = None,
    ) -> None:
        self.sequence = sequence
        self.stacked = stacked
        self.item_dtype = item_dtype
        # (the items concatenated along dim, dim): the only form of the list is torch.cat's result
        self.concatenated = concatenated
        self.item_rank: int | None = None
        # The items are lists of scalars (``List[List[int]]``), each held as a 1-d tensor.
        self.nested = False
        if stacked is not None and stacked.shape is not None:
            self.item_rank = len(stacked.shape) - 1
        # SequenceEmpty nodes and sequence values made before any item was seen: they get
        # their dtype when the first item is appended (in a loop body emitted later).
        self._untyped_empty: list[ir.Node] = []
        self._untyped_values: list[Value] = []

    def __repr__(self) -> str:
        form = "stacked" if self.stacked is not None and self.sequence is None else "sequence"
        dtype = self.item_dtype.name if self.item_dtype is not None else "?"
        return f"RuntimeList({form}, items {dtype})"

    def sequence_type(self) -> ir.SequenceType:
        # Until an item is seen, FLOAT: SequenceEmpty's own default, corrected when learned.
        return ir.SequenceType(ir.TensorType(self.item_dtype or ir.DataType.FLOAT))

    def new_sequence_value(self, name: str) -> Value:
        """A sequence-typed value for a subgraph input (a Loop-carried list)."""
        value = Value(name=name, type=self.sequence_type())
        if self.item_dtype is None:
            self._untyped_values.append(value)
        return value

    def set_sequence(self, value: Value) -> None:
        """Make ``value`` (a sequence) the list's one form: an op changed the list, or an If or
        Loop gave its new value."""
        self.sequence = value
        self.stacked = None  # the stacked form no longer holds every item
        value.type = self.sequence_type()
        if self.item_dtype is None:
            self._untyped_values.append(value)

    def _learn(self, item: Value, source: object = None) -> None:
        """Record the item dtype (typing what was made before it was known) and rank;
        ``source`` (what the item was made from) tells a list of lists."""
        if isinstance(source, (list, tuple)):
            self.nested = True
        if self.item_rank is None and item.shape is not None:
            self.item_rank = len(item.shape)
        dtype = item.dtype
        if dtype is None or self.item_dtype is not None:
            return
        self.item_dtype = dtype
        for node in self._untyped_empty:
            node.attributes["dtype"] = ir.AttrInt64("dtype", int(dtype))
        for value in self._untyped_values:
            value.type = self.sequence_type()
        self._untyped_empty.clear()
        self._untyped_values.clear()

    def _typed(self, value: Value, rank_offset: int | None) -> Value:
        """Give an item-derived output the item dtype and, if known, its rank."""
        value.dtype = self.item_dtype
        rank = self.item_rank
        if rank_offset is not None and rank is not None and value.shape is None:
            value.shape = ir.Shape([None] * (rank + rank_offset))
        return value


class ScanItem:
    """Stands for an empty list while its loop body is emitted: the body's single
    ``append`` records the item, which becomes a Loop scan output (the stacked form).
    ``nested``: the item appended was a list (a row of a list of lists)."""

    def __init__(self) -> None:
        self.item: Value | None = None
        self.nested = False

    def __repr__(self) -> str:
        return "ScanItem()"


class ConcatItem:
    """Stands for an empty list while its loop body is emitted, when the list is read only by
    ``torch.cat(list, dim)`` after the loop and Loop cannot carry a sequence (below opset 13).
    The body's single ``append`` (:func:`concat_step`) grows a loop-carried flat buffer by the
    item, moved so that ``dim`` leads, and outputs the moved item's other sizes; items may so
    differ in size along ``dim`` (a scan output would need them equal).

    ``buffer_in`` and ``sizes_in`` are the body inputs the control-flow symbolic made for the
    two loop-carried values; ``buffer_out`` and ``sizes_out`` what the append computed."""

    def __init__(self, dim: int, buffer_in: Value, sizes_in: Value) -> None:
        self.dim = dim
        self.buffer_in = buffer_in
        self.sizes_in = sizes_in
        self.item: Value | None = None
        self.buffer_out: Value | None = None
        self.sizes_out: Value | None = None

    def __repr__(self) -> str:
        return f"ConcatItem(dim={self.dim})"


def _to_front(dim: int, rank: int) -> list[int]:
    """The permutation moving axis ``dim`` to the front."""
    return [dim] + [axis for axis in range(rank) if axis != dim]


def concat_step(g: GraphContext, into: ConcatItem, item: Any) -> None:
    """The body's ``append(item)`` to a list concatenated in the loop (see :class:`ConcatItem`)."""
    if not isinstance(item, Value):
        item = g.constant(item)
    rank = h.rank_of(item)
    if rank is None or rank == 0:
        raise NeedsExportTimeValue(
            "concatenating the items of a list built in a loop needs their rank (and 0-d items cannot be)"
        )
    dim = h.normalize_dim(into.dim, rank)
    moved = item if dim == 0 else g.op("Transpose", item, perm=_to_front(dim, rank))
    into.buffer_in.type = ir.TensorType(item.dtype) if item.dtype is not None else None
    into.buffer_in.shape = ir.Shape([None])
    into.sizes_in.type = ir.TensorType(ir.DataType.INT64)
    into.sizes_in.shape = ir.Shape([rank - 1])
    into.buffer_out = g.op("Concat", into.buffer_in, h.reshape(g, moved, [-1]), axis=0)
    into.sizes_out = h.slice_static(g, g.op("Shape", moved), [0], [1], [h.INT64_MAX])
    into.item = item


def concatenated(g: GraphContext, into: ConcatItem, buffer: Value, sizes: Value) -> RuntimeList:
    """The list after the loop: the flat buffer Loop returned, reshaped to the moved items'
    sizes with the concatenated dim first, then that dim moved back."""
    item = into.item
    assert item is not None and item.shape is not None
    rank = len(item.shape)
    dim = h.normalize_dim(into.dim, rank)
    moved = g.op("Reshape", buffer, g.op("Concat", g.constant([-1]), sizes, axis=0))
    inverse = sorted(range(rank), key=_to_front(dim, rank).__getitem__)
    result = moved if dim == 0 else g.op("Transpose", moved, perm=inverse)
    result.dtype = item.dtype
    result.shape = ir.Shape([None] * rank)
    found = RuntimeList(item_dtype=item.dtype, concatenated=(result, dim))
    found.item_rank = rank
    return found


def _require(g: GraphContext, opset: int, what: str) -> None:
    if g.opset < opset:
        raise NeedsExportTimeValue(f"{what} needs opset {opset} or higher (exporting at opset {g.opset})")


def item_value(g: GraphContext, item: Any, dtype: ir.DataType | None) -> Value:
    """An ONNX value for one list item. Scalars take the list's item dtype; tensors must
    already have it, since ONNX sequences hold one dtype."""
    if isinstance(item, Value):
        if dtype is not None and item.dtype is not None and item.dtype != dtype:
            if h.rank_of(item) == 0:
                return h.cast(g, item, dtype)
            raise NeedsExportTimeValue(
                f"a list computed at run time holds one dtype in ONNX; got {item.dtype.name} after {dtype.name} items"
            )
        return item
    if isinstance(item, (list, tuple)):
        return list_item_value(g, item, dtype)
    if isinstance(item, (bool, int, float, torch.Tensor)):
        torch_dtype = tensors.to_torch_dtype(dtype) if dtype is not None else None
        if isinstance(item, float) and torch_dtype is None:
            torch_dtype = torch.float64  # a TorchScript float is a double
        value = torch.as_tensor(item, dtype=torch_dtype)
        return g.constant(value)
    if isinstance(item, dict):
        raise TypeError(DICT_ITEMS_REFUSAL)
    raise TypeError(f"a list computed at run time cannot hold {type(item).__name__} items")


def list_item_value(g: GraphContext, item: list[Any] | tuple[Any, ...], dtype: ir.DataType | None) -> Value:
    """A list of scalars (an item of a list of lists) as the 1-d tensor that holds it: each
    scalar in the list's item dtype, else the widest of bool < int64 < double (TorchScript's
    int and float)."""
    if dtype is None:
        kinds = {v.dtype if isinstance(v, Value) else tensors.from_torch_dtype(torch.as_tensor(v).dtype) for v in item}
        if any(k is not None and tensors.is_floating_dtype(k) for k in kinds):
            dtype = ir.DataType.DOUBLE
        elif kinds <= {ir.DataType.BOOL}:
            dtype = ir.DataType.BOOL
        else:
            dtype = ir.DataType.INT64
    if all(not isinstance(v, Value) for v in item):
        return g.constant(torch.tensor(list(item), dtype=tensors.to_torch_dtype(dtype)).reshape(-1))
    parts = [h.unsqueeze(g, item_value(g, v, dtype), [0]) for v in item]
    joined = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)
    joined.dtype = dtype
    joined.shape = ir.Shape([len(parts)])
    return joined


def list_item_dtype(values: Sequence[torch._C.Value]) -> ir.DataType | None:
    """The item dtype of a list of Python scalars, from its TorchScript type (int[] -> INT64)."""
    for value in values:
        ts_type = value.type()
        if isinstance(ts_type, torch._C.ListType):
            return SCALAR_LIST_ITEMS.get(ts_type.getElementType().str())
    return None


def from_items(g: GraphContext, items: list[Any], item_dtype: ir.DataType | None = None) -> RuntimeList:
    """The sequence form of an export-time Python list (its items may be run-time values).
    ``item_dtype``, when the list's type tells it (int[] -> INT64), types an empty list up front."""
    _require(g, SEQUENCE_OPSET, "a list whose length is only known at run time (an ONNX sequence)")
    result = RuntimeList(item_dtype=item_dtype)
    if not items and item_dtype is not None:
        result.set_sequence(g.op("SequenceEmpty", dtype=item_dtype))
        return result
    if not items:
        sequence = g.op("SequenceEmpty")  # dtype attribute: set when an item is appended
        result._untyped_empty.append(sequence.producer())
        result.set_sequence(sequence)
        return result
    values = []
    for item in items:
        value = item_value(g, item, result.item_dtype)
        result._learn(value, item)
        values.append(value)
    result.set_sequence(g.op("SequenceConstruct", *values))
    return result


def sequence_of(g: GraphContext, items: RuntimeList) -> Value:
    """The list as an ONNX sequence, splitting the stacked form if need be."""
    if items.sequence is not None:
        return items.sequence
    assert items.stacked is not None
    _require(g, SEQUENCE_OPSET, "this use of a list built by a loop with a run-time trip count")
    split = g.op("SplitToSequence", items.stacked, axis=0, keepdims=0)
    items.set_sequence(split)
    items.stacked = None
    return split


def _index_value(g: GraphContext, index: int | Value) -> Value:
    if isinstance(index, Value):
        return h.cast(g, index, ir.DataType.INT64)
    return g.constant(index)


def append(g: GraphContext, items: RuntimeList, item: Any) -> RuntimeList:
    """``items.append(item)``: SequenceInsert at the end."""
    sequence = sequence_of(g, items)
    value = item_value(g, item, items.item_dtype)
    items._learn(value, item)
    items.set_sequence(g.op("SequenceInsert", sequence, value))
    return items


def insert(g: GraphContext, items: RuntimeList, index: int | Value, item: Any) -> None:
    """``items.insert(index, item)``"""
    sequence = sequence_of(g, items)
    value = item_value(g, item, items.item_dtype)
    items._learn(value, item)
    items.set_sequence(g.op("SequenceInsert", sequence, value, _index_value(g, index)))


def _non_negative_position(g: GraphContext, items: RuntimeList, index: int | Value) -> Value:
    """A non-negative position: erasing then inserting at ``-1`` would land one place early."""
    if isinstance(index, int) and index >= 0:
        return g.constant(index)
    index_value = _index_value(g, index)
    if isinstance(index, int):
        return g.op("Add", length(g, items), index_value)
    negative = g.op("Less", index_value, g.constant(0))
    return h.where(g, negative, g.op("Add", length(g, items), index_value), index_value)


def pop(g: GraphContext, items: RuntimeList, index: int | Value = -1) -> Value:
    """``items.pop(index)``: the item, and the sequence without it."""
    sequence = sequence_of(g, items)
    position = _index_value(g, index)
    item = items._typed(g.op("SequenceAt", sequence, position), 0)
    items.set_sequence(g.op("SequenceErase", sequence, position))
    return item


def set_item(g: GraphContext, items: RuntimeList, index: int | Value, item: Any) -> None:
    """``items[index] = item``: erase, then insert at the same position."""
    sequence = sequence_of(g, items)
    position = _non_negative_position(g, items, index)
    value = item_value(g, item, items.item_dtype)
    erased = g.op("SequenceErase", sequence, position)
    items.set_sequence(g.op("SequenceInsert", erased, value, position))


def delete(g: GraphContext, items: RuntimeList, index: int | Value) -> None:
    """``del items[index]``"""
    items.set_sequence(g.op("SequenceErase", sequence_of(g, items), _index_value(g, index)))


def clear(g: GraphContext, items: RuntimeList) -> None:
    """``items.clear()``"""
    sequence = g.op("SequenceEmpty", dtype=items.item_dtype) if items.item_dtype is not None else g.op("SequenceEmpty")
    if items.item_dtype is None:
        items._untyped_empty.append(sequence.producer())
    items.set_sequence(sequence)


def copy(items: RuntimeList) -> RuntimeList:
    """``list(items)``: a new list object over the same (immutable) ONNX value."""
    duplicate = RuntimeList(sequence=items.sequence, stacked=items.stacked, item_dtype=items.item_dtype)
    duplicate.item_rank = items.item_rank
    duplicate.nested = items.nested
    duplicate._untyped_empty = items._untyped_empty
    duplicate._untyped_values = items._untyped_values
    return duplicate


def length(g: GraphContext, items: RuntimeList) -> int | Value:
    """``len(items)``: a 0-d int64 value."""
    if items.sequence is None:
        assert items.stacked is not None
        return h.dim_size(g, items.stacked, 0)
    count = g.op("SequenceLength", items.sequence)
    count.dtype = ir.DataType.INT64
    count.shape = ir.Shape([])
    return count


def at(g: GraphContext, items: RuntimeList, index: int | Value) -> Value | RuntimeList:
    """``items[index]`` (negative indices count from the end in both forms); an item of a
    list of lists is itself a list (its 1-d tensor in the stacked form)."""
    item = _item_at(g, items, index)
    if not items.nested:
        return item
    inner = RuntimeList(stacked=item, item_dtype=item.dtype)
    inner.item_rank = 0
    return inner


def _item_at(g: GraphContext, items: RuntimeList, index: int | Value) -> Value:
    if items.sequence is None:
        assert items.stacked is not None
        item = g.op("Gather", items.stacked, _index_value(g, index), axis=0)
        if items.stacked.shape is not None:
            item.shape = ir.Shape(list(items.stacked.shape)[1:])
    else:  # onnxruntime refuses some negative SequenceAt positions ("Invalid sequence index"): count from the end
        item = g.op("SequenceAt", items.sequence, _non_negative_position(g, items, index))
    return items._typed(item, 0)


def _moved_to(g: GraphContext, stacked: Value, dim: int) -> Value:
    """The stacked tensor with its list axis moved from 0 to ``dim``."""
    if dim == 0:
        return stacked
    rank = h.rank_of(stacked)
    assert rank is not None
    perm = list(range(1, rank))
    perm.insert(dim, 0)
    return g.op("Transpose", stacked, perm=perm)


def stack(g: GraphContext, items: RuntimeList, dim: int) -> Value:
    """``torch.stack(items, dim)``"""
    if items.sequence is None:
        rank = items.item_rank
        if rank is None:
            raise NeedsExportTimeValue("stacking a list built in a loop needs the rank of its items")
        return _moved_to(g, items.stacked, h.normalize_dim(dim, rank + 1))  # type: ignore[arg-type]
    return items._typed(g.op("ConcatFromSequence", items.sequence, axis=dim, new_axis=1), 1)


def cat(g: GraphContext, items: RuntimeList, dim: int) -> Value:
    """``torch.cat(items, dim)``. The stacked form below opset 11 merges the list axis into
    ``dim`` with a Reshape, since there is no ConcatFromSequence."""
    if items.concatenated is not None:
        result, concatenated_dim = items.concatenated
        if h.normalize_dim(dim, items.item_rank) != concatenated_dim:
            raise ValueError(f"the list was concatenated along dim {concatenated_dim} in its loop, not {dim}")
        return result
    if items.sequence is not None or g.opset >= SEQUENCE_OPSET:
        return items._typed(g.op("ConcatFromSequence", sequence_of(g, items), axis=dim, new_axis=0), 0)
    rank = items.item_rank
    if rank is None:
        raise NeedsExportTimeValue("concatenating a list built in a loop needs the rank of its items")
    dim = h.normalize_dim(dim, rank)
    moved = _moved_to(g, items.stacked, dim)  # type: ignore[arg-type]
    shape = g.op("Shape", moved)
    before = h.slice_static(g, shape, [0], [0], [dim])
    merged = g.op(
        "Mul", h.slice_static(g, shape, [0], [dim], [dim + 1]), h.slice_static(g, shape, [0], [dim + 1], [dim + 2])
    )
    after = h.slice_static(g, shape, [0], [dim + 2], [h.INT64_MAX])
    return g.op("Reshape", moved, g.op("Concat", before, merged, after, axis=0))


def tensor_of(g: GraphContext, items: RuntimeList) -> Value:
    """``torch.tensor(items)`` for a list of scalars: a 1-d tensor of the items (in the item dtype).

    ConcatFromSequence refuses an empty sequence, so a 0-d placeholder goes first and is
    sliced off again: the list may well be empty at run time.
    """
    if items.sequence is None:
        assert items.stacked is not None
        return items.stacked
    if items.nested:  # rows of one length, as torch.tensor needs (an empty list fails at run time)
        return items._typed(g.op("ConcatFromSequence", items.sequence, axis=0, new_axis=1), 1)
    if items.item_rank not in (None, 0):
        raise NeedsExportTimeValue(
            "torch.tensor of a list computed at run time needs scalar items or lists of them (a list of "
            "ints/floats/bools); use torch.stack for a list of tensors"
        )
    dtype = items.item_dtype or ir.DataType.FLOAT
    placeholder = g.constant(torch.zeros((), dtype=tensors.to_torch_dtype(dtype)))
    padded = g.op("SequenceInsert", items.sequence, placeholder, g.constant(0))
    joined = g.op("ConcatFromSequence", padded, axis=0, new_axis=1)
    joined.dtype = dtype
    joined.shape = ir.Shape([None])
    result = h.slice_static(g, joined, [0], [1], [h.INT64_MAX])
    result.dtype = dtype
    return result


def _reversed_sequence(g: GraphContext, items: RuntimeList) -> Value:
    """A sequence of tensors (of any shapes) reversed: a Loop over the positions inserting
    each item at the front of a new sequence. Loop carries sequences from opset 13."""
    _require(
        g, CONTROL_FLOW_SEQUENCE_OPSET, "reverse() of a list of tensors computed at run time (a Loop over a sequence)"
    )
    source = items.sequence
    assert source is not None
    count = length(g, items)
    empty = g.op("SequenceEmpty", dtype=items.item_dtype or ir.DataType.FLOAT)
    empty.type = items.sequence_type()
    iteration = Value(name=g.unique_name("reverse_position"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
    condition = Value(name=g.unique_name("reverse_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    carried = Value(name=g.unique_name("reverse_items"), type=items.sequence_type())

    def body(sub: GraphContext) -> list[Value]:
        item = items._typed(sub.op("SequenceAt", source, iteration), 0)
        front = sub.op("SequenceInsert", carried, item, sub.constant(0))
        front.type = items.sequence_type()
        return [sub.op("Identity", condition), front]

    graph = g.build_subgraph([iteration, condition, carried], body, "reverse_body")
    result = g.op("Loop", h.cast(g, count, ir.DataType.INT64), g.constant(True), empty, body=graph)
    result.type = items.sequence_type()
    return result


def reverse(g: GraphContext, items: RuntimeList) -> None:
    """``items.reverse()`` in place: a Gather of the reversed positions over the stacked form.
    A sequence of scalars is stacked first (``tensor_of``) and split again (SplitToSequence);
    a sequence of tensors, whose shapes may differ, is rebuilt back to front by a Loop."""
    if items.sequence is not None and items.item_rank not in (None, 0):
        items.set_sequence(_reversed_sequence(g, items))
        return
    stacked = tensor_of(g, items)
    count = h.dim_size(g, stacked, 0)
    positions = g.op("Sub", g.op("Sub", h.cast(g, count, ir.DataType.INT64), g.constant(1)), h.iota(g, count))
    reversed_items = g.op("Gather", stacked, positions, axis=0)
    reversed_items.dtype = stacked.dtype
    if stacked.shape is not None:
        reversed_items.shape = ir.Shape([None, *list(stacked.shape)[1:]])
    if items.item_rank is None:
        items.item_rank = 0
    if items.sequence is None:
        items.stacked = reversed_items
    else:  # keep the sequence form: Loop/If carry the list as a sequence
        items.set_sequence(g.op("SplitToSequence", reversed_items, axis=0, keepdims=0))


def _scalar_stack(g: GraphContext, items: RuntimeList) -> Value | None:
    """The items stacked along axis 0 when that needs no loop: the stacked form, a sequence
    of scalars (``tensor_of``) or of tensors of one shape (ConcatFromSequence: items of
    different shapes fail at run time); None when the item rank is unknown."""
    if items.sequence is None:
        return items.stacked
    if items.item_rank == 0:
        return tensor_of(g, items)
    if items.item_rank is not None and g.opset >= SEQUENCE_OPSET:  # items of one shape, as torch.stack needs
        return items._typed(g.op("ConcatFromSequence", items.sequence, axis=0, new_axis=1), 1)
    return None


def _stacked_list(stacked: Value, like: RuntimeList) -> RuntimeList:
    result = RuntimeList(stacked=stacked, item_dtype=like.item_dtype)
    result.item_rank = like.item_rank
    result.nested = like.nested
    stacked.dtype = like.item_dtype
    if like.item_rank is not None and stacked.shape is None:
        stacked.shape = ir.Shape([None] * (like.item_rank + 1))
    return result


def slice_list(
    g: GraphContext, items: RuntimeList, start: int | Value | None, end: int | Value | None, step: int
) -> RuntimeList:
    """``items[start:end:step]``: a Slice of the stacked items (Python's clamping and negative
    bounds are Slice's own). A sequence of tensors has no loop-free form and is refused."""
    stacked = _scalar_stack(g, items)
    if stacked is None:
        raise NeedsExportTimeValue("slicing a list of tensors whose length is only known at run time is not supported")
    if step == 0:
        raise ValueError("list slice step cannot be zero")
    first = start if start is not None else (h.INT64_MAX if step < 0 else 0)
    last = end if end is not None else (-h.INT64_MAX - 1 if step < 0 else h.INT64_MAX)
    if isinstance(first, int) and isinstance(last, int):
        sliced = h.slice_static(g, stacked, [0], [first], [last], [step])
    else:
        sliced = h.slice_dynamic(g, stacked, 0, first, last, step)
    return _stacked_list(sliced, items)


def concat(g: GraphContext, first: RuntimeList | list[Any], second: RuntimeList | list[Any]) -> RuntimeList:
    """``first + second`` where at least one list is only known at run time: a new list.

    An export-time side is inserted item by item into the other's sequence; two run-time
    lists are concatenated along their stacked axis (scan outputs, or lists of scalars)."""
    if isinstance(first, list) and not first:
        assert isinstance(second, RuntimeList)
        return copy(second)
    if isinstance(second, list) and not second:
        assert isinstance(first, RuntimeList)
        return copy(first)
    if isinstance(second, list):
        assert isinstance(first, RuntimeList)
        result = copy(first)
        for item in second:
            append(g, result, item)
        return result
    if isinstance(first, list):
        result = copy(second)
        for position, item in enumerate(first):
            insert(g, result, position, item)
        return result
    a, b = _scalar_stack(g, first), _scalar_stack(g, second)
    if a is None or b is None:
        raise NeedsExportTimeValue(
            "concatenating lists of tensors whose lengths are only known at run time needs their item rank"
        )
    if first.item_dtype is not None and b.dtype is not None and b.dtype != first.item_dtype:
        b = h.cast(g, b, first.item_dtype)
    return _stacked_list(g.op("Concat", a, b, axis=0), first)


def assign(target: RuntimeList, source: RuntimeList) -> None:
    """Make ``target`` hold what ``source`` holds (an in-place update such as ``extend``)."""
    target.sequence, target.stacked = source.sequence, source.stacked
    target.item_dtype = target.item_dtype or source.item_dtype
    target.item_rank = source.item_rank if source.item_rank is not None else target.item_rank
