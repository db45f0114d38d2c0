"""A Loop that cannot end is an export error, never a file.

An ONNX Loop stops when its trip count runs out or its condition turns false. A TorchScript
``while`` loop has no trip count (INT64_MAX), so it ends only by its condition; a condition the
body computes from nothing that changes between iterations (values fixed before the loop, or a
fact like a rank that the exported graph fixed) is the same on every iteration, and a model that
enters such a loop never returns (onnxruntime spins forever). The rank-matching ``while
x.dim() != y.dim()`` loop of library code was one: the specialization pass now unrolls it, and
what is left to this check is a loop whose condition depends on run-time values alone.
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.errors import EndlessLoopError
from exporter.graph_context import GraphContext, upstream_values

__all__ = ["check_loop_ends"]


def check_loop_ends(g: GraphContext, trip_count: object, condition: object, body: ir.Graph) -> None:
    """Raise EndlessLoopError if the Loop built from ``g.node`` may start (``condition`` is not
    False), has no trip count, and its body's condition (output 0) cannot change from one
    iteration to the next: it is computed from neither the iteration number nor a carried
    value (nor the body's condition input passed through, which never changes either)."""
    if condition is False or not _unbounded(trip_count):
        return
    again = body.outputs[0]
    if again.const_value is not None and not bool(again.const_value.numpy().item()):
        return  # false after the first iteration
    if _changes(again, _varying_inputs(body)):
        return
    raise EndlessLoopError(
        f"the loop at {g.source_location} would never end: it has no trip count (a `while` loop) and its condition "
        "is the same on every iteration of the exported graph (it depends only on values computed before the loop, "
        "or on a rank or size the export fixed), so a model entering the loop would never return. Compute the "
        "condition from values the loop changes, or write a `for` loop over a count"
    )


def _unbounded(trip_count: object) -> bool:
    return trip_count is None or (isinstance(trip_count, int) and trip_count >= h.INT64_MAX)


def _varying_inputs(body: ir.Graph) -> set[int]:
    """The body inputs that change between iterations: the iteration number and the carried
    values (not the condition input, which is only the last condition passed back)."""
    return {id(value) for index, value in enumerate(body.inputs) if index != 1}


def _changes(value: ir.Value, varying: set[int]) -> bool:
    """Whether ``value`` is computed from a varying body input. A node with subgraphs (an If
    inside the body) may read any of them by name: it counts as varying."""
    for current in upstream_values(value):
        if id(current) in varying:
            return True
        producer = current.producer()
        if producer is not None and any(attr.type in _GRAPH_ATTRS for attr in producer.attributes.values()):
            return True
    return False


_GRAPH_ATTRS = frozenset({ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS})
