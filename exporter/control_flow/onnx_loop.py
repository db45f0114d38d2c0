"""The ONNX Loop form of prim::Loop: a body subgraph carrying the TorchScript loop's values
and whatever else the body changes, laid out by one record (slots.LoopSlots):

- the loop's own carried values (a tuple or a fixed-length list one value per item),
- run-time lists of enclosing code the body changes, as sequences (opset 13),
- dict items of enclosing code the body writes, one value per key,
- int lists of enclosing code held as one value each that the body changes (list_values.py),
- concat buffers (list_forms.py) and scan outputs,
- a dummy carried value when there is nothing else (Loop-1 wants at least one).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.control_flow import optionals
from exporter.control_flow.carried import body_input, consistent_carried, initial_value, lists_keep_their_length
from exporter.control_flow.flatten import flatten, regroup
from exporter.control_flow.list_forms import list_forms
from exporter.control_flow.list_values import ListValue
from exporter.control_flow.outer_state import RUN_TIME_LOOP, OuterDict, OuterList, as_runtime_list, require_sequences
from exporter.control_flow.results import as_bool_condition, as_list, node_result, typed_like
from exporter.control_flow.slots import OUTER_LIST_VALUES, OUTER_LISTS, LoopSlots, outer_dict_items
from exporter.control_flow.termination import check_loop_ends
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.runtime_list import ConcatItem, RuntimeList, ScanItem

__all__ = ["onnx_loop"]

Value = ir.Value

# The groups of the Loop's carried values and scan outputs (slots.py).
_CARRIED = "carried"
_DUMMY = "dummy"
_SCANS = "scans"


def _concat_buffer(index: int) -> str:
    return f"concat buffer {index}"


def onnx_loop(
    g: GraphContext,
    trip_count: object,
    condition: object,
    carried: list[object],
    changed: list[OuterList],
    dicts: Sequence[OuterDict] = (),
    *,
    held: Sequence[ListValue] = (),
) -> object:
    """prim::Loop as an ONNX Loop. Raises NeedsExportTimeValue where the Loop form cannot
    express the loop (lists below the sequence opset, a condition that is not a bool, a body
    symbolic that needs an export-time value): a loop with a known count is then unrolled."""
    (body,) = list(g.node.blocks())
    count = g.node.outputsSize()
    forms = list_forms(changed, g.node, g.opset)
    if forms.threaded:
        require_sequences(
            g,
            "a list changed inside a loop whose trip count is only known at run time (other than "
            "appending one item per iteration to a list that starts empty)",
        )
    lists = [as_runtime_list(g, entry) for entry in forms.threaded]
    trip = (
        g.constant(trip_count if isinstance(trip_count, int) else h.INT64_MAX)
        if not isinstance(trip_count, Value)
        else h.cast(g, trip_count, ir.DataType.INT64)
    )
    cond = g.constant(bool(condition)) if not isinstance(condition, Value) else as_bool_condition(g, condition)
    own = _own_carried(g, body, carried)
    initial_lists = [runtime_list.sequence_of(g, items) for items in lists]
    iteration = Value(name=g.unique_name("loop_iteration"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
    cond_in = Value(name=g.unique_name("loop_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    carried_in = [body_input(g, v, "loop_carried") for v in own.initial]
    slots = LoopSlots(_CARRIED, own.initial, carried_in)
    lists_in = [items.new_sequence_value(g.unique_name("loop_list")) for items in lists]
    slots.carry(OUTER_LISTS, lists_in, lambda: [items.sequence for items in lists], initial_lists)
    _carry_dicts(g, slots, dicts)
    _carry_list_values(g, slots, held)
    for items, value in zip(lists, lists_in):
        items.sequence = value
    collectors = [ScanItem() for _ in forms.scans]
    prefixes = [list(entry.obj) for entry in forms.scans]  # type: ignore[call-overload]
    for entry, collector in zip(forms.scans, collectors):
        g.replace(entry.obj, collector)
    buffers = [
        ConcatItem(dim, Value(name=g.unique_name("loop_cat_buffer")), Value(name=g.unique_name("loop_cat_sizes")))
        for _, dim in forms.concats
    ]
    for index, ((entry, _), buffer) in enumerate(zip(forms.concats, buffers)):
        g.replace(entry.obj, buffer)
        slots.carry(_concat_buffer(index), [buffer.buffer_in, buffer.sizes_in], functools.partial(_grown, buffer))
    if slots.carried_width() == 0:  # Loop-1 wants a loop-carried value: a dummy passes through
        dummy_in = Value(name=g.unique_name("loop_unused"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
        slots.carry(_DUMMY, [dummy_in], lambda: [dummy_in], [g.constant(False)])
    slots.scan(_SCANS, len(collectors), lambda: [c.item for c in collectors])
    grouped_in = [as_list(v) for v in regroup(carried_in, own.ts_types, own.objects)]
    body_graph = g.subgraph(
        body,
        slots.body_inputs(iteration, cond_in),
        "loop_body",
        params=[iteration, *grouped_in],
        extra_outputs=slots.extra_outputs,
        lists_as_items=own.lists_as_items,
    )
    if len(body_graph.outputs) != slots.body_output_count():  # a carried list changed length: ONNX fixes the count
        raise NeedsExportTimeValue(
            "a list re-assigned in a loop whose trip count is only known at run time must keep its length "
            "(each item is one loop-carried value)"
        )
    if body_graph.outputs[0].dtype != ir.DataType.BOOL:
        raise NeedsExportTimeValue("the loop condition must be a bool")
    check_loop_ends(g, trip_count, condition, body_graph)
    consistent_carried(g, body_graph, slots, _CARRIED)
    if slots.output_count() == slots.width(_DUMMY):  # the Loop would compute nothing
        return None
    for index, buffer in enumerate(buffers):  # the buffers start empty, typed by the items the body appended
        assert buffer.item is not None and buffer.item.dtype is not None
        empty_buffer = g.constant(torch.zeros(0, dtype=tensors.to_torch_dtype(buffer.item.dtype)))
        no_sizes = g.constant(torch.zeros(buffer.sizes_in.shape[0], dtype=torch.int64))
        slots.set_initial(_concat_buffer(index), [empty_buffer, no_sizes])
    values = g.op("Loop", trip, cond, *slots.loop_inputs(), body=body_graph, num_outputs=slots.output_count())
    values = values if isinstance(values, tuple) else (values,)
    typed_like(slots.carried_outputs(values), slots.carried_body_outputs(body_graph))
    for items, value in zip(lists, slots.read(OUTER_LISTS, values)):
        items.set_sequence(value)
    for index, entry in enumerate(dicts):
        entry.update(slots.read(outer_dict_items(index), values))
    for held_list, value, body_output in zip(
        held, slots.read(OUTER_LIST_VALUES, values), slots.read(OUTER_LIST_VALUES, body_graph.outputs[1:])
    ):
        if held_list.kept_shape is not None:
            value.shape = body_output.shape = ir.Shape(held_list.kept_shape)
        held_list.rebind(value)
    for index, buffer in enumerate(buffers):
        grown, sizes = slots.read(_concat_buffer(index), values)
        g.replace(buffer, runtime_list.concatenated(g, buffer, grown, sizes))
    for collector, value, prefix in zip(collectors, slots.read(_SCANS, values), prefixes):
        _bind_scanned(g, collector, value, prefix)
    outputs = slots.read(_CARRIED, values)
    grouped = [as_list(v) for v in regroup(outputs, [v.type() for v in g.node.outputs()], own.objects)]
    return node_result(grouped, count)


@dataclasses.dataclass
class _OwnCarried:
    """The values the TorchScript loop carries itself, as the Loop carries them: ``objects``
    (lists of changing length as run-time lists) of ``ts_types``, and their ONNX initial
    values, one per tuple item (and per list item with ``lists_as_items``)."""

    objects: list[object]
    ts_types: list[torch._C.JitType]
    lists_as_items: bool
    initial: list[Value | None]


def _own_carried(g: GraphContext, body: torch._C.Block, carried: list[object]) -> _OwnCarried:
    # an Optional[T] that starts as None has the Loop output's type (the input's is NoneType)
    ts_types = [
        out.type() if isinstance(out.type(), torch._C.OptionalType) else value.type()
        for value, out in zip(list(g.node.inputs())[2:], g.node.outputs())
    ]
    carried = optionals.optional_where_set_to_none(g, body, carried, ts_types)
    lists_as_items = lists_keep_their_length(body, carried, ts_types)
    if not lists_as_items:  # carried lists whose length may change are ONNX sequences
        require_sequences(g, "a list re-assigned in a loop whose trip count is only known at run time")
        carried = [
            runtime_list.from_items(g, c, runtime_list.SCALAR_LIST_ITEMS.get(t.getElementType().str()))
            if isinstance(c, list) and isinstance(t, torch._C.ListType)
            else c
            for c, t in zip(carried, ts_types)
        ]
    # A carried tuple (the return value of a `return` inside the loop) is one value per item.
    flat, flat_types = flatten(carried, ts_types, spread_lists=True)
    initial = [initial_value(g, c, t) for c, t in zip(flat, flat_types)]
    return _OwnCarried(carried, ts_types, lists_as_items, initial)


def _carry_dicts(g: GraphContext, slots: LoopSlots, dicts: Sequence[OuterDict]) -> None:
    """Each dict key the body writes is one more carried value; it must hold one before the
    loop. While the body is emitted the dict holds the body inputs."""
    initial = [
        [initial_value(g, v, torch._C.TensorType.get()) for v in entry.written(RUN_TIME_LOOP)] for entry in dicts
    ]
    for index, (entry, start) in enumerate(zip(dicts, initial)):
        inputs = [body_input(g, v, "loop_dict_item", tensors_only=True) for v in start]
        slots.carry(outer_dict_items(index), inputs, functools.partial(entry.written, RUN_TIME_LOOP), start)
        entry.update(inputs)


def _carry_list_values(g: GraphContext, slots: LoopSlots, held: Sequence[ListValue]) -> None:
    """Each int list held as one value that the body changes is one more carried value; while
    the body is emitted its names hold the body input."""
    start = [entry.current() for entry in held]
    inputs = [body_input(g, v, "loop_list_value", tensors_only=True) for v in start]
    for entry, value, first in zip(held, inputs, start):
        if entry.keeps_length and first.shape is not None and first.shape.is_static():
            entry.kept_shape = ir.Shape(first.shape)  # its length holds in every iteration
            value.shape = ir.Shape(first.shape)
    slots.carry(OUTER_LIST_VALUES, inputs, lambda: [entry.current() for entry in held], list(start))
    for entry, value in zip(held, inputs):
        entry.rebind(value)


def _grown(buffer: ConcatItem) -> list[object]:
    return [buffer.buffer_out, buffer.sizes_out]


def _bind_scanned(g: GraphContext, collector: ScanItem, value: Value, prefix: list[object]) -> None:
    """The list a scan output holds, for every value that named the list."""
    item = collector.item
    assert item is not None
    value.dtype = item.dtype
    if item.shape is not None:
        value.shape = ir.Shape([None, *item.shape])
    if prefix:  # the items held before the loop go in front of the scanned ones
        value = _scan_with_prefix(g, prefix, value, item)
    scanned = RuntimeList(stacked=value, item_dtype=item.dtype)
    scanned.nested = collector.nested
    g.replace(collector, scanned)


def _scan_with_prefix(g: GraphContext, prefix: list[object], scanned: Value, item: Value) -> Value:
    """``prefix`` (the list's items before the loop) stacked on axis 0 in front of the scan output."""
    parts = [h.unsqueeze(g, runtime_list.item_value(g, v, item.dtype), [0]) for v in prefix]
    joined = g.op("Concat", *parts, scanned, axis=0)
    joined.dtype = scanned.dtype
    joined.shape = scanned.shape
    return joined
