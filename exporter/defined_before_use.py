"""The last guard before a file is written: every node input is defined earlier in its own
graph or in an enclosing one (a graph input, an initializer, an earlier node's output).

onnx rejects a file that breaks this, and onnxruntime fails to load it; an exporter defect
that leaks a value out of the subgraph that computes it (a list changed in a Loop body and
read after the Loop, without being threaded through it) would otherwise write such a file.
One pass over the nodes, each value looked up in one set of the values in scope: a subgraph
adds its own while it is walked and takes them out after.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx_ir as ir

from exporter.errors import UseBeforeDefinitionError
from exporter.graph_context import TORCH_NODE
from exporter.ts_graph import source_location

__all__ = ["check_defined_before_use"]

_GRAPH_ATTRIBUTES = (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS)


def check_defined_before_use(model: ir.Model) -> None:
    """Raise UseBeforeDefinitionError naming the first node that reads a value not defined
    before it (the node, the value and the source line it was emitted for)."""
    _check(model.graph, set())
    for function in model.functions.values():
        _check(function, set())


def _check(graph: ir.Graph | ir.Function, in_scope: set[ir.Value]) -> None:
    own: list[ir.Value] = [*graph.inputs]
    if isinstance(graph, ir.Graph):
        own.extend(graph.initializers.values())
    in_scope.update(own)
    for node in graph:
        for value in node.inputs:
            if value is not None and value not in in_scope:
                raise _undefined(node, value, graph)
        for attribute in node.attributes.values():
            if attribute.type in _GRAPH_ATTRIBUTES:
                for subgraph in _graphs(attribute):
                    _check(subgraph, in_scope)
        in_scope.update(node.outputs)
        own.extend(node.outputs)
    for value in graph.outputs:
        if value not in in_scope:
            raise _undefined(None, value, graph)
    in_scope.difference_update(own)


def _graphs(attribute: ir.Attr) -> Iterable[ir.Graph]:
    return [attribute.value] if attribute.type == ir.AttributeType.GRAPH else list(attribute.value)


def _undefined(node: ir.Node | None, value: ir.Value, graph: ir.Graph | ir.Function) -> UseBeforeDefinitionError:
    """The error, located at the node reading ``value`` and at the one making it."""
    producer = value.producer()
    location = _source(node)
    if producer is not None:
        location += f"; {value.name!r} is made by {producer.name!r} at {_source(producer)}"
    return UseBeforeDefinitionError(
        node=node.name if node is not None else "<graph output>",
        value=value.name or "<unnamed>",
        graph=graph.name or "<unnamed>",
        location=location,
    )


def _source(node: ir.Node | None) -> str:
    torch_node = node.meta.get(TORCH_NODE) if node is not None else None
    return source_location(torch_node) if torch_node is not None else "unknown location"
