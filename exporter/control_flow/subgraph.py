"""A TorchScript block emitted as an ONNX subgraph (an If branch, a Loop body).

The block's nodes are emitted by the emitter, in a scope nested in the current one
(:class:`BlockScope`, the engine's one way into the emitter); this module makes what the block
returns legal ONNX subgraph outputs: one value per tuple item, Python numbers as constants,
lists as sequences, None as an empty optional or a placeholder, and a copy of any value not
produced inside the subgraph (ONNX wants every subgraph output made there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter.complex_values import holds_complex
from exporter.control_flow.flatten import flatten
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import OPTIONAL_OPSET, GraphBuilder, GraphContext
from exporter.runtime_list import RuntimeList

__all__ = ["BlockScope", "emit_subgraph", "pass_through"]


class BlockScope(Protocol):
    """What the engine needs of the emitter to emit a block somewhere else than in place."""

    def nested(self, builder: GraphBuilder) -> BlockScope:
        """A scope emitting into ``builder`` (a subgraph's) that sees this scope's values."""
        ...

    def inline_block(self, block: torch._C.Block, inputs: Sequence[Any]) -> list[Any]:
        """Bind the block's parameters to ``inputs``, emit its nodes; what its outputs became."""
        ...


def emit_subgraph(
    scope: BlockScope,
    parent: GraphBuilder,
    block: torch._C.Block,
    graph_inputs: Sequence[ir.Value],
    name: str,
    params: Sequence[Any],
    extra_outputs: Callable[[], Sequence[Any]] | None,
    lists_as_items: bool,
) -> ir.Graph:
    """``block`` as an ONNX subgraph taking ``graph_inputs``, its parameters bound to ``params``
    (a Loop body's iteration number and carried values, tuples and lists of them as such).

    Values of enclosing graphs are referenced directly (ONNX outer-scope capture).
    ``extra_outputs``, called once the block is emitted, gives outputs beyond the block's own
    (what the engine threads: lists and dicts the block changed, scan outputs). A list the block
    returns is an ONNX sequence (opset 13); with ``lists_as_items`` (a Loop carrying a list of
    fixed length) an export-time list is one output per item.
    """
    graph = ir.Graph(list(graph_inputs), [], nodes=[], name=name)
    builder = GraphBuilder(graph, parent.options, parent=parent)
    child = scope.nested(builder)
    returned = child.inline_block(block, params)
    results, kinds = flatten(returned, _output_types(block), spread_lists=lists_as_items)
    if extra_outputs is not None:
        results.extend(extra_outputs())
    context = GraphContext(builder, block.owningNode(), emitter=child)
    for position, obj in enumerate(results):
        kind = kinds[position] if position < len(kinds) else None
        graph.outputs.append(_subgraph_output(context, builder, obj, kind))
    return graph


def _output_types(block: torch._C.Block) -> list[torch._C.JitType]:
    """An If branch's outputs are typed by the If's (a branch returning None of an
    Optional[T]) and a Loop body's carried outputs by the Loop's (None for a carried Optional[T])."""
    owner = block.owningNode()
    own = [v.type() for v in block.outputs()]
    if owner is not None and owner.kind() == "prim::If":
        return [v.type() for v in owner.outputs()]
    if owner is not None and owner.kind() == "prim::Loop":
        return own[:1] + [v.type() for v in owner.outputs()]
    return own


def _subgraph_output(g: GraphContext, builder: GraphBuilder, obj: Any, kind: torch._C.JitType | None) -> ir.Value:
    """One output of the subgraph ``builder`` builds, for ``obj`` of TorchScript type ``kind``
    (None: an output the engine added)."""
    graph = builder.graph
    if isinstance(obj, float) and isinstance(kind, torch._C.FloatType):
        obj = builder.constant(obj, ir.DataType.DOUBLE)  # a Python float is a double in TorchScript
    if isinstance(kind, torch._C.ListType) and (isinstance(obj, (RuntimeList, list)) or obj is None):
        obj = list_output(g, obj, kind)
    if isinstance(obj, RuntimeList):
        raise TypeError("a branch or loop body returns a list whose length is only known at run time")
    if not isinstance(obj, ir.Value):
        if obj is None and isinstance(kind, torch._C.OptionalType):
            # None for an Optional[T] the other path sets: an empty ONNX optional,
            # typed by the If once the other branch is known (ONNX Optional, opset 15/16)
            return empty_optional(builder)
        if obj is None and kind is not None and not isinstance(kind, torch._C.NoneType):
            # prim::Uninitialized on a path that never reads it (a `return` inside a
            # loop): a zero placeholder, cast by the If to the other branch's dtype
            obj = pass_through(builder, builder.constant(torch.zeros(())))
            obj.meta["uninitialized"] = True
        if obj is None:
            raise TypeError("a branch or loop body returns None where ONNX needs a tensor")
        if holds_complex(obj):
            raise TypeError(
                "a branch or loop body decided at run time returns a complex tensor: ONNX If and Loop carry real "
                "tensors (return torch.view_as_real(z) from it and torch.view_as_complex the result)"
            )
        if not isinstance(obj, (bool, int, float, torch.Tensor, ir.Value)):
            # a dict or an object of a TorchScript class chosen at run time
            raise TypeError(
                f"a branch or loop body decided at run time returns {obj!r}: ONNX If and Loop carry "
                "tensors, sequences and optionals only (build it after the branch, from values chosen in it)"
            )
        obj = builder.constant(obj) if not isinstance(obj, ir.Value) else obj
    if isinstance(obj.type, ir.SequenceType) and obj in graph.inputs and obj not in graph.outputs:
        return obj  # a Loop-carried list the body left alone
    if obj.producer() is None or obj.producer().graph is not graph or obj in graph.outputs:
        return pass_through(builder, obj)
    return obj


def pass_through(builder: GraphBuilder, value: ir.Value) -> ir.Value:
    """A copy of ``value`` made inside a subgraph, which ONNX requires for outputs.

    Identity takes sequences only from opset 14; before that a Loop with no iteration
    returns its initial value, of any type.
    """
    if not isinstance(value.type, ir.SequenceType) or builder.options.opset >= 14:
        (copied,) = builder.add_node("Identity", [value], {})
        copied.type = value.type
        return copied
    iteration = ir.Value(
        name=builder.unique_name("pass_iteration"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([])
    )
    condition = ir.Value(
        name=builder.unique_name("pass_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([])
    )
    carried = ir.Value(name=builder.unique_name("pass_value"), type=value.type)
    body = ir.Graph([iteration, condition, carried], [], nodes=[], name=builder.unique_name("pass_body"))
    body_builder = GraphBuilder(body, builder.options, parent=builder)
    (condition_out,) = body_builder.add_node("Identity", [condition], {})
    body.outputs.extend([condition_out, carried])
    (copied,) = builder.add_node(
        "Loop", [builder.constant(0), builder.constant(False), value], {"body": body}, infer_types=False
    )
    copied.type = value.type
    return copied


def list_output(g: GraphContext, obj: Any, kind: torch._C.ListType) -> ir.Value:
    """A list a branch or loop body returns, as the ONNX sequence If and Loop carry from
    opset 13. None (prim::Uninitialized: a path that never reads it) is an empty sequence
    whose item dtype the If takes from the other branch."""
    if g.opset < runtime_list.CONTROL_FLOW_SEQUENCE_OPSET:
        raise NeedsExportTimeValue(
            f"a list returned by a branch or loop body needs opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} "
            f"or higher: ONNX If and Loop carry sequences from opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} "
            f"(exporting at opset {g.opset})"
        )
    item_dtype = runtime_list.SCALAR_LIST_ITEMS.get(kind.getElementType().str())
    if obj is None:
        empty = g.op("SequenceEmpty", dtype=item_dtype or ir.DataType.FLOAT)
        empty.type = ir.SequenceType(ir.TensorType(item_dtype or ir.DataType.FLOAT))
        empty.meta["uninitialized"] = True
        return empty
    items = obj if isinstance(obj, RuntimeList) else runtime_list.from_items(g, obj, item_dtype)
    return runtime_list.sequence_of(g, items)


def empty_optional(builder: GraphBuilder) -> ir.Value:
    """An empty optional standing for ``None`` on one path of an ``Optional[T]``; its element
    type is a placeholder that the engine sets from the other path."""
    if builder.options.opset < OPTIONAL_OPSET:
        raise NeedsExportTimeValue(
            f"None on one path of an Optional value needs opset {OPTIONAL_OPSET} or higher: ONNX If and "
            f"Loop carry optional values from opset {OPTIONAL_OPSET} (exporting at opset {builder.options.opset})"
        )
    (value,) = builder.add_node(
        "Optional",
        [],
        {
            "type": ir.AttrTypeProto("type", ir.TypeAndShape(ir.TensorType(ir.DataType.FLOAT), None)),
        },
        infer_types=False,
    )
    value.type = ir.OptionalType(ir.TensorType(ir.DataType.FLOAT))
    value.meta["empty_optional"] = True
    return value
