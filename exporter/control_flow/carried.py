"""A Loop's carried values: what they start from, how they enter the body, and one type
through it (ONNX Loop wants each carried value to keep its type).

TorchScript carries Python numbers (a float is a double), None placeholders for values set
on some path only (prim::Uninitialized: a ``return`` inside the loop), None of an
``Optional[T]`` and lists; ONNX carries tensors, sequences and optionals.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter.complex_values import holds_complex
from exporter.control_flow import optionals
from exporter.control_flow.slots import LoopSlots
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import OPTIONAL_OPSET, GraphContext
from exporter.runtime_list import RuntimeList
from exporter.script_object import ScriptObject

__all__ = ["initial_value", "body_input", "consistent_carried", "lists_keep_their_length"]

Value = ir.Value


def initial_value(g: GraphContext, obj: object, ts_type: torch._C.JitType) -> Value | None:
    """A loop-carried initial value as ONNX: a Python float is a double in TorchScript (the body's
    float() and scalar arithmetic compute in double), so it starts as one; a value that is
    None here (prim::Uninitialized: a `return` inside the loop) is a placeholder typed later."""
    if isinstance(obj, Value):
        return obj
    if isinstance(obj, RuntimeList):  # a carried list whose length may change: its sequence
        return runtime_list.sequence_of(g, obj)
    if obj is None and isinstance(ts_type, torch._C.OptionalType):
        if g.opset < OPTIONAL_OPSET:
            raise NeedsExportTimeValue(
                f"an Optional value carried through a loop from None needs opset {OPTIONAL_OPSET} or higher: "
                f"ONNX Loop carries optional values from opset {OPTIONAL_OPSET} (exporting at opset {g.opset})"
            )
        # an Optional[T] starting as None: an empty ONNX optional, typed once the body is known
        empty = g.op("Optional", type=ir.AttrTypeProto("type", ir.TypeAndShape(ir.TensorType(ir.DataType.FLOAT), None)))
        empty.type = ir.OptionalType(ir.TensorType(ir.DataType.FLOAT))
        empty.meta["empty_optional"] = True
        return empty
    if obj is None:
        return None
    if holds_complex(obj):  # a ComplexValue, or a complex constant folded at export
        raise NeedsExportTimeValue(
            "a complex tensor carried through a loop whose trip count is only known at run time is not supported: "
            "ONNX Loop carries real tensors (a loop with a known trip count is unrolled; carry torch.view_as_real(z) "
            "and rebuild it with torch.view_as_complex in the body)"
        )
    if isinstance(obj, (dict, ScriptObject)):
        what = f"an object of TorchScript class {obj.class_name}" if isinstance(obj, ScriptObject) else "a dict"
        raise NeedsExportTimeValue(
            f"{what} carried through a loop whose trip count is only known at run time is not supported: ONNX "
            "Loop carries tensors, sequences and optionals only (a loop with a known trip count is unrolled)"
        )
    if isinstance(obj, float) or (isinstance(ts_type, torch._C.FloatType) and isinstance(obj, (int, float))):
        return g.constant(float(obj), ir.DataType.DOUBLE)
    return g.constant(obj)


def body_input(g: GraphContext, start: Value | None, name: str, *, tensors_only: bool = False) -> Value:
    """The body input of a value carried from ``start``: its type (an optional's, a
    sequence's, else a tensor of its dtype; only the latter with ``tensors_only``) and rank,
    sizes unknown (they may change from one iteration to the next)."""
    if start is None:
        value_type = None
    elif not tensors_only and (optionals.is_optional(start) or isinstance(start.type, ir.SequenceType)):
        value_type = start.type
    else:
        value_type = ir.TensorType(start.dtype) if start.dtype is not None else None
    shape = ir.Shape([None] * len(start.shape)) if start is not None and start.shape is not None else None
    return Value(name=g.unique_name(name), type=value_type, shape=shape)


def consistent_carried(g: GraphContext, body: ir.Graph, slots: LoopSlots, group: str) -> None:
    """ONNX Loop needs each carried value of ``group`` to keep one type. A value whose type
    changes in the body (a Python float accumulator updated from float32 arithmetic) is cast
    back to the type it came in with; a placeholder for a value only set on some path
    (prim::Uninitialized, a `return` inside the loop) takes the type the body gives it,
    starting as a zero. Sets the group's initial values."""
    result: list[Value | None] = []
    for item, (value_in, start) in enumerate(zip(slots.inputs(group), slots.initial(group))):
        index = slots.body_index(group, item)
        output = body.outputs[index]
        if optionals.is_optional(start):
            optionals.optional_carried(g, body, index, value_in, start)  # type: ignore[arg-type]
            result.append(start)
            continue
        if start is None:
            if output.dtype is None:
                raise TypeError("a loop-carried value set only on some paths has no known type")
            start = g.constant(torch.zeros((), dtype=tensors.to_torch_dtype(output.dtype)))
            value_in.type = ir.TensorType(output.dtype)
        elif (
            not isinstance(value_in.type, ir.SequenceType)
            and value_in.dtype is not None
            and output.dtype is not None
            and output.dtype != value_in.dtype
        ):
            cast = ir.node("Cast", [output], attributes={"to": value_in.dtype})
            cast.outputs[0].name = g.unique_name("loop_carried_cast")
            cast.outputs[0].type = ir.TensorType(value_in.dtype)
            cast.outputs[0].shape = output.shape
            body.append(cast)
            body.outputs[index] = cast.outputs[0]
        result.append(start)
    slots.set_initial(group, result)


def lists_keep_their_length(
    body: torch._C.Block, carried: Sequence[object], ts_types: Sequence[torch._C.JitType]
) -> bool:
    """Whether every export-time list the loop carries comes back from the body as a list
    literal of the same length (or unchanged): then each item is one loop-carried value,
    at any opset; otherwise the lists are carried as ONNX sequences."""
    params = list(body.inputs())[1:]
    outputs = list(body.outputs())[1:]
    for obj, ts_type, param, output in zip(carried, ts_types, params, outputs):
        if not (isinstance(obj, list) and isinstance(ts_type, torch._C.ListType)):
            continue
        if output == param:
            continue
        node = output.node()
        if node.kind() != "prim::ListConstruct" or node.inputsSize() != len(obj):
            return False
    return True
