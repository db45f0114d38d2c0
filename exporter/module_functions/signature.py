"""One module call's nodes as a function would see them: what it takes, what it gives, and a
structure key equal for two calls exactly when one function body computes both.

The key holds the node types in order, how each input is wired (a function input by position,
an output of an earlier node by position) and the attribute names and types; attribute values
are left out, since a value that differs between calls becomes a function attribute (torch's
"inferred" attributes), except inside subgraphs, which are compared whole. torch compares only
node kinds and counts (function_extraction.cpp, IsIdenticalFuncion), which makes one function of
two calls wired differently; here they are two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np
import onnx_ir as ir

from exporter.module_functions.calls import subgraph_nodes

__all__ = ["CallGraph", "describe", "value_key"]

_GRAPH_TYPES = (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS)


@dataclasses.dataclass(eq=False)
class CallGraph:
    """The nodes of one module call (in graph order), the values it reads from outside (others
    first, then weights, each in order of first use, as torch orders them), the values it
    gives to the rest of the graph, and its structure key."""

    nodes: list[ir.Node]
    inputs: list[ir.Value]
    outputs: list[ir.Value]
    structure: Hashable


def describe(
    nodes: list[ir.Node],
    graph_outputs: set[ir.Value],
    owner: Callable[[ir.Node], ir.Node],
    is_weight: Callable[[ir.Value], bool],
) -> CallGraph:
    """``nodes`` (one call's, in graph order) as a :class:`CallGraph`; ``owner`` maps a node
    inside a subgraph to the top-level node holding it."""
    members = set(nodes)
    defined: set[ir.Value] = set()
    for node in nodes:
        defined.update(node.outputs)
        for subgraph in _subgraphs(node):
            for inner in ir.traversal.RecursiveGraphIterator(subgraph):
                defined.update(inner.outputs)
            defined.update(_subgraph_inputs(subgraph))
    read: dict[ir.Value, None] = {}
    for node in nodes:
        for reader in (node, *subgraph_nodes(node)):
            for value in reader.inputs:
                if value is not None and value not in defined:
                    read.setdefault(value)
    inputs = [v for v in read if not is_weight(v)] + [v for v in read if is_weight(v)]
    outputs = [
        value
        for node in nodes
        for value in node.outputs
        if value in graph_outputs or any(owner(user) not in members for user, _ in value.uses())
    ]
    env: dict[ir.Value, Hashable] = {value: ("in", position) for position, value in enumerate(inputs)}
    for index, node in enumerate(nodes):
        for position, value in enumerate(node.outputs):
            env[value] = ("node", index, position)
    structure = (
        tuple(_node_key(node, env, depth=0, values=False) for node in nodes),
        tuple(env[value] for value in outputs),
        len(inputs),
    )
    return CallGraph(nodes, inputs, outputs, structure)


def _subgraphs(node: ir.Node) -> Iterable[ir.Graph]:
    for attribute in node.attributes.values():
        if attribute.type == ir.AttributeType.GRAPH:
            yield attribute.value
        elif attribute.type == ir.AttributeType.GRAPHS:
            yield from attribute.value


def _subgraph_inputs(graph: ir.Graph) -> Iterable[ir.Value]:
    yield from graph.inputs
    for node in ir.traversal.RecursiveGraphIterator(graph):
        for subgraph in _subgraphs(node):
            yield from subgraph.inputs


def _node_key(node: ir.Node, env: dict[ir.Value, Hashable], *, depth: int, values: bool) -> Hashable:
    """A node's type, wiring and attributes (with their values when ``values``: inside subgraphs)."""
    attributes = []
    for name, attribute in sorted(node.attributes.items()):
        if attribute.type == ir.AttributeType.GRAPH:
            detail: Hashable = _graph_key(attribute.value, env, depth + 1)
        elif attribute.type == ir.AttributeType.GRAPHS:
            detail = tuple(_graph_key(graph, env, depth + 1) for graph in attribute.value)
        else:
            detail = value_key(attribute) if values else attribute.ref_attr_name
        attributes.append((name, attribute.type, detail))
    wiring = tuple(None if value is None else env[value] for value in node.inputs)
    return (node.domain, node.op_type, node.overload, len(node.outputs), wiring, tuple(attributes))


def _graph_key(graph: ir.Graph, outer: dict[ir.Value, Hashable], depth: int) -> Hashable:
    env = dict(outer)
    for position, value in enumerate(graph.inputs):
        env[value] = ("sub", depth, "in", position)
    keys = []
    for index, node in enumerate(graph):
        keys.append(_node_key(node, env, depth=depth, values=True))
        for position, value in enumerate(node.outputs):
            env[value] = ("sub", depth, index, position)
    return (tuple(keys), tuple(env[value] for value in graph.outputs))


def value_key(attribute: ir.Attr) -> Hashable:
    """An attribute's value as something to compare and hash (tensors by dtype, shape and bytes)."""
    if attribute.is_ref():
        return ("ref", attribute.ref_attr_name)
    return _hashable(attribute.value)


def _hashable(value: Any) -> Hashable:
    if isinstance(value, ir.TensorProtocol):
        array = value.numpy()
        if value.dtype == ir.DataType.STRING:
            return ("strings", tuple(array.shape), tuple(array.ravel().tolist()))
        return ("tensor", str(value.dtype), tuple(array.shape), np.ascontiguousarray(array).tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, (int, float, str, bytes)) or value is None:
        return value
    return repr(value)
