"""What an If or a Loop gives back to the graph: its outputs typed from the subgraph outputs
they come from, sequences as run-time lists, and the node's result as the emitter binds it."""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.runtime_list import RuntimeList

__all__ = ["as_list", "typed_like", "as_bool_condition", "node_result"]

Value = ir.Value


def as_list(value: object) -> object:
    """An If or Loop output that is an ONNX sequence is the run-time list it holds."""
    if isinstance(value, Value) and isinstance(value.type, ir.SequenceType):
        element = value.type.elem_type
        return RuntimeList(sequence=value, item_dtype=element.dtype if isinstance(element, ir.TensorType) else None)
    if isinstance(value, tuple):
        return tuple(as_list(v) for v in value)
    return value


def typed_like(values: Sequence[Value], graph_outputs: Sequence[Value]) -> None:
    """Type If/Loop results from the subgraph outputs they come from (the shapes may differ
    between branches and iterations, so only the rank is kept)."""
    for value, source in zip(values, graph_outputs):
        if value.type is None and source.type is not None:
            value.type = source.type
        if isinstance(source.type, ir.OptionalType) and value.shape is None:
            # the shape every path that sets the element agrees on (see optionals.element_shape)
            value.shape = source.shape
        elif value.shape is None and source.shape is not None and not isinstance(source.type, ir.SequenceType):
            value.shape = ir.Shape([None] * len(source.shape))


def as_bool_condition(g: GraphContext, condition: Value) -> Value:
    """A run-time condition as If and Loop take it: a bool of rank 0."""
    if h.rank_of(condition) not in (0, None):
        condition = g.op("Reshape", condition, g.constant(torch.tensor([], dtype=torch.int64)))
    return h.cast(g, condition, ir.DataType.BOOL)


def node_result(outputs: Sequence[object], count: int) -> object:
    """The result of a node with ``count`` outputs: None, the one output, or a tuple."""
    if count == 0:
        return None
    return outputs[0] if count == 1 else tuple(outputs)
