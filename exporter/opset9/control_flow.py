"""Control flow of scripted models: prim::If, prim::Loop, raising, uninitialized values.

ONNX idioms: an ``if`` on a run-time value is an ONNX If, one decided at export time emits only
the branch taken; loops are ONNX Loops with loop-carried values, unrolled when the trip count
is known and the body needs Python state or values known at export time. The engine doing
this lives beside the emitter, in exporter/control_flow/; these registrations call it.
Lists that grow at run time are RuntimeLists (runtime_list.py); None on some run-time path of
an Optional value is an ONNX optional (optionals.py, opset 16).
"""

from __future__ import annotations

from exporter.control_flow.branches import ExampleRaises, emit_if
from exporter.control_flow.loop import emit_loop
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic


@onnx_symbolic("prim::If")
def prim_if(g: GraphContext, *inputs: object) -> object:
    """prim::If(bool cond) with two blocks -> the taken branch inlined, or ONNX If
    (control_flow/branches.py)."""
    (condition,) = inputs
    return emit_if(g, condition)


@onnx_symbolic("prim::Loop")
def prim_loop(g: GraphContext, *inputs: object) -> object:
    """prim::Loop(int max_trip_count, bool cond, *carried) -> ONNX Loop, or an unrolled copy
    (control_flow/loop.py)."""
    trip_count, condition, *carried = inputs
    return emit_loop(g, trip_count, condition, carried)


@onnx_symbolic("prim::RaiseException")
def prim_raise_exception(g: GraphContext, *inputs: object) -> object:
    """prim::RaiseException(str msg, str? cls): only reached in a branch decided at export
    time to raise, which means the example input itself would have raised."""
    raise ExampleRaises(f"the scripted model raises here for the example inputs: {inputs[0]!r}")


@onnx_symbolic("prim::Uninitialized")
def prim_uninitialized(g: GraphContext, *inputs: object) -> object:
    """prim::Uninitialized() -> Any: a placeholder on paths that raise; never read."""
    return None
