"""prim::Loop: an ONNX Loop, or the body inlined once per iteration (unrolled).

Loops become ONNX Loop, whose size does not grow with the trip count. A for loop with a trip
count known at export time (up to 256) is unrolled instead when its body changes Python-level
state ONNX cannot carry (lists from outside the loop, dicts, values that start as None), or
when the Loop form is refused with errors.NeedsExportTimeValue: a body symbolic needs a value
that the unrolled body knows (the iteration number, a carried number, a static size). Any other
error from the Loop form is a bug and surfaces; unrolling never hides it.
"""

from __future__ import annotations

import torch

from exporter.control_flow.list_values import ListValue, list_values
from exporter.control_flow.onnx_loop import onnx_loop
from exporter.control_flow.outer_state import OuterDict, OuterList, outer_dicts, outer_lists, remember_run_time_lists
from exporter.control_flow.results import node_result
from exporter.errors import NeedsExportTimeValue, SymbolicError
from exporter.graph_context import GraphContext
from exporter.script_object import ScriptObject
from exporter.ts_graph import static_loop_iterations

__all__ = ["emit_loop", "UNROLL_LIMIT"]

# Loops with a trip count known at export time are unrolled up to this many iterations.
UNROLL_LIMIT = 256


def emit_loop(g: GraphContext, trip_count: object, condition: object, carried: list[object]) -> object:
    """prim::Loop(int max_trip_count, bool cond, *carried) with its body block."""
    (body,) = list(g.node.blocks())
    changed = outer_lists(g, [body])
    held = list_values(g, [body])
    dicts = outer_dicts(g, [body])
    static_for = isinstance(trip_count, int) and condition is True and _is_for_loop(body) and trip_count <= UNROLL_LIMIT
    python_state = _needs_python_state(changed, dicts, carried)
    if static_for:
        assert isinstance(trip_count, int)
        if python_state or trip_count <= 1:
            return _unrolled(g, body, trip_count, carried)
        restore = remember_run_time_lists(changed)
        try:
            return onnx_loop(g, trip_count, condition, carried, changed, held=held)
        except (NeedsExportTimeValue, SymbolicError) as error:
            _restore(held)
            if not _refused(error):
                raise
            restore()  # the unrolled form needs less of ONNX
            return _unrolled(g, body, trip_count, carried)
    if isinstance(trip_count, int) and condition is True and python_state:
        iterations = static_loop_iterations(body, carried, g.lookup, min(trip_count, UNROLL_LIMIT))
        if iterations is not None:
            return _unrolled(g, body, iterations, carried)
    try:
        return onnx_loop(g, trip_count, condition, carried, changed, dicts, held=held)
    except (NeedsExportTimeValue, SymbolicError):
        _restore(held)  # an enclosing loop may still unroll
        raise


def _restore(held: list[ListValue]) -> None:
    """The lists held as values named as before the Loop form was tried."""
    for entry in held:
        entry.restore()


def _needs_python_state(changed: list[OuterList], dicts: list[OuterDict], carried: list[object]) -> bool:
    """Whether the body changes state only Python holds at export time: dicts, export-time
    lists of enclosing code, carried None, lists, tuples, dicts or TorchScript objects."""
    return (
        bool(dicts)
        or any(isinstance(e.obj, list) for e in changed)
        or any(c is None or isinstance(c, (list, tuple, dict, ScriptObject)) for c in carried)
    )


def _refused(error: Exception) -> bool:
    """Whether the Loop form was refused for a value only known at run time: by the engine, or
    by a symbolic of the body (a SymbolicError naming it, caused by the refusal)."""
    if isinstance(error, SymbolicError):
        return isinstance(error.__cause__, NeedsExportTimeValue)
    return isinstance(error, NeedsExportTimeValue)


def _is_for_loop(body: torch._C.Block) -> bool:
    condition = list(body.outputs())[0]
    node = condition.node()
    return node.kind() == "prim::Constant" and node.output().toIValue() is True


def _unrolled(g: GraphContext, body: torch._C.Block, trip_count: int, carried: list[object]) -> object:
    state = list(carried)
    for iteration in range(trip_count):
        outputs = g.inline_block(body, [iteration, *state])
        state = outputs[1:]
    return node_result(state, g.node.outputsSize())
