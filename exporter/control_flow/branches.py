"""prim::If: the branch taken when the condition is known at export time, else an ONNX If.

A branch that only raises (a scripted argument check) cannot be expressed in ONNX; the other
branch is taken, as it is for every input the model accepts. So is a branch on a run-time
condition that turns out to raise once its own static conditions are decided (``if
len(size) == 5:`` on a run-time list, then a check of the input's static shape that fails).
Lists and dicts of enclosing code a branch changes are threaded through the If (outer_state.py).
"""

from __future__ import annotations

import functools

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter.control_flow import optionals
from exporter.control_flow.branch_types import (
    learned_sequence_types,
    same_branch_dtypes,
    shaped_placeholders,
    type_sources,
    typed_sequence_placeholders,
)
from exporter.control_flow.flatten import flatten, regroup
from exporter.control_flow.list_values import list_values
from exporter.control_flow.outer_state import as_runtime_list, outer_dicts, outer_lists, require_sequences
from exporter.control_flow.results import as_bool_condition, as_list, node_result, typed_like
from exporter.control_flow.slots import OUTER_LIST_VALUES, OUTER_LISTS, Slots, outer_dict_items
from exporter.errors import SymbolicError
from exporter.graph_context import GraphContext

__all__ = ["emit_if", "ExampleRaises"]

Value = ir.Value

# The groups of an ONNX If's outputs (slots.py): the If's own (flattened), then the lists and
# dicts of enclosing code the branches change.
_OUTPUTS = "outputs"
_WHERE = "an `if` on a value computed at run time"


class ExampleRaises(ValueError):
    """prim::RaiseException reached where every condition before it was decided at export time."""


def _raises(block: torch._C.Block) -> bool:
    return any(node.kind() == "prim::RaiseException" for node in block.nodes())


def _raised_here(error: SymbolicError) -> bool:
    """Whether emitting a block failed only because it raises for every input consistent with
    what is known at export time (a nested argument check decided by static shapes)."""
    return isinstance(error.__cause__, ExampleRaises)


def emit_if(g: GraphContext, condition: object) -> object:
    """prim::If(bool cond) with two blocks: the taken branch inlined, or an ONNX If."""
    then_block, else_block = list(g.node.blocks())
    count = g.node.outputsSize()
    if isinstance(condition, (bool, int)) or (isinstance(condition, torch.Tensor) and condition.numel() == 1):
        return node_result(g.inline_block(then_block if bool(condition) else else_block), count)
    if _raises(then_block) or _raises(else_block):
        result = g.inline_block(else_block if _raises(then_block) else then_block)
        if isinstance(condition, Value):  # torch keeps the check (an If), so its inputs stay
            g.keep_inputs_of(condition)
        return node_result(result, count)
    assert isinstance(condition, Value)
    return _onnx_if(g, condition, then_block, else_block, count)


def _onnx_if(
    g: GraphContext, condition: Value, then_block: torch._C.Block, else_block: torch._C.Block, count: int
) -> object:
    blocks = [then_block, else_block]
    changed = outer_lists(g, blocks)
    if changed:
        require_sequences(g, "a list changed inside an `if` on a value computed at run time")
    lists = [as_runtime_list(g, entry) for entry in changed]
    before = [runtime_list.sequence_of(g, items) for items in lists]
    dicts = outer_dicts(g, blocks)
    held = list_values(g, blocks)
    output_types = [v.type() for v in g.node.outputs()]
    _, flat_types = flatten([None] * len(output_types), output_types)
    slots = Slots(_OUTPUTS, len(flat_types))
    slots.add(OUTER_LISTS, len(lists), lambda: [items.sequence for items in lists])
    for index, entry in enumerate(dicts):
        slots.add(outer_dict_items(index), len(entry.keys), functools.partial(entry.written, _WHERE))
    slots.add(OUTER_LIST_VALUES, len(held), lambda: [entry.current() for entry in held])

    def start_from_before() -> None:  # each branch starts from the state before the If
        for items, value in zip(lists, before):
            items.sequence = value
        for entry in dicts:
            entry.restore()
        for held_list in held:
            held_list.restore()

    branches = []
    for block, name in ((then_block, "then_branch"), (else_block, "else_branch")):
        start_from_before()
        try:
            branches.append(g.subgraph(block, [], name, extra_outputs=slots.extra_outputs))
        except SymbolicError as error:
            if not _raised_here(error):
                raise
            start_from_before()
            result = g.inline_block(else_block if block is then_block else then_block)
            g.keep_inputs_of(condition)  # torch keeps the check (an If), so its inputs stay
            return node_result(result, count)
    learned_sequence_types(branches, [(items, slots.index(OUTER_LISTS, i)) for i, items in enumerate(lists)])
    shaped_placeholders(g, branches)
    typed_sequence_placeholders(branches)
    optional_shapes = optionals.optional_branches(g, branches, flat_types, optionals.absent_in_branch(condition))
    same_branch_dtypes(g, branches, flat_types)
    if slots.output_count() == 0:
        return None
    values = g.op(
        "If",
        as_bool_condition(g, condition),
        then_branch=branches[0],
        else_branch=branches[1],
        num_outputs=slots.output_count(),
    )
    values = values if isinstance(values, tuple) else (values,)
    typed_like(values, type_sources(branches))
    for position, shape in optional_shapes.items():
        values[position].shape = shape
    for items, value in zip(lists, slots.read(OUTER_LISTS, values)):
        items.set_sequence(value)
    for index, entry in enumerate(dicts):
        entry.update(slots.read(outer_dict_items(index), values))
    for held_list, value in zip(held, slots.read(OUTER_LIST_VALUES, values)):
        held_list.rebind(value)
    grouped = [as_list(v) for v in regroup(slots.read(_OUTPUTS, values), output_types)]
    return node_result(grouped, count)
