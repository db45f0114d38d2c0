"""Making the two branches of an ONNX If agree on the type of each output.

ONNX If needs one type per output, where TorchScript lets a branch leave a value unset
(prim::Uninitialized on a path that raises or returns early), return a Python float (a
double) against a tensor, or start a list empty that the other branch fills.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.runtime_list import RuntimeList

__all__ = [
    "typed_sequence_placeholders",
    "learned_sequence_types",
    "shaped_placeholders",
    "same_branch_dtypes",
    "type_sources",
]

Value = ir.Value


def _output_pairs(branches: Sequence[ir.Graph]) -> list[tuple[Value, Value]]:
    then_graph, else_graph = branches
    return list(zip(then_graph.outputs, else_graph.outputs))


def typed_sequence_placeholders(branches: Sequence[ir.Graph]) -> None:
    """An empty sequence standing for a list only one branch sets (prim::Uninitialized)
    takes the other branch's item dtype: ONNX If needs one type per output."""
    for a, b in _output_pairs(branches):
        for mine, other in ((a, b), (b, a)):
            if not mine.meta.get("uninitialized") or not isinstance(mine.type, ir.SequenceType):
                continue
            if not isinstance(other.type, ir.SequenceType) or other.meta.get("uninitialized"):
                continue
            element = other.type.elem_type
            mine.producer().attributes["dtype"] = ir.AttrInt64("dtype", int(element.dtype))
            mine.type = ir.SequenceType(element)


def learned_sequence_types(branches: Sequence[ir.Graph], lists: Sequence[tuple[RuntimeList, int]]) -> None:
    """A list threaded through an If (with its position among the branch outputs) that starts
    empty learns its item dtype from the first append, which may come in the second branch:
    the first branch's pass-through copy of the empty sequence takes that dtype too (ONNX If
    needs one type per output)."""
    for items, position in lists:
        if items.item_dtype is None:
            continue
        for graph in branches:
            output = graph.outputs[position]
            if not isinstance(output.type, ir.SequenceType):
                continue
            output.type = items.sequence_type()
            producer = output.producer()
            if producer is not None and producer.op_type == "Loop":  # the copy below opset 14
                for carried in producer.attributes["body"].value.inputs[2:]:
                    carried.type = items.sequence_type()


def _cast_output(g: GraphContext, graph: ir.Graph, position: int, dtype: ir.DataType) -> None:
    output = graph.outputs[position]
    cast = ir.node("Cast", [output], attributes={"to": dtype})
    cast.outputs[0].name = g.unique_name("branch_cast")
    cast.outputs[0].type = ir.TensorType(dtype)
    cast.outputs[0].shape = output.shape
    if output.meta.get("uninitialized"):
        cast.outputs[0].meta["uninitialized"] = True
        cast.outputs[0].shape = None  # a placeholder: the other path gives the real shape
    graph.append(cast)
    graph.outputs[position] = cast.outputs[0]


def shaped_placeholders(g: GraphContext, branches: Sequence[ir.Graph]) -> None:
    """A placeholder for a value only one branch sets (prim::Uninitialized) takes the other
    branch's dtype and rank (ONNX If inference wants one rank): zeros of its static dims, 1 elsewhere."""
    for position, (a, b) in enumerate(_output_pairs(branches)):
        for graph, mine, other in ((branches[0], a, b), (branches[1], b, a)):
            if not mine.meta.get("uninitialized") or other.meta.get("uninitialized"):
                continue
            if other.dtype is None or other.shape is None or isinstance(other.type, ir.SequenceType):
                continue
            dims = [d if isinstance(d, int) else 1 for d in other.shape]
            zeros = torch.zeros(dims, dtype=tensors.to_torch_dtype(other.dtype))
            node = ir.node("Constant", [], attributes={"value": ir.tensor(zeros.numpy(), name=g.unique_name("unset"))})
            node.outputs[0].name = g.unique_name("unset")
            node.outputs[0].type = ir.TensorType(other.dtype)
            node.outputs[0].shape = ir.Shape(dims)
            node.outputs[0].meta["uninitialized"] = True
            graph.append(node)
            graph.outputs[position] = node.outputs[0]


def same_branch_dtypes(g: GraphContext, branches: Sequence[ir.Graph], ts_types: Sequence[torch._C.JitType]) -> None:
    """ONNX If needs both branches to give each output one dtype: a Python float is a double
    (TorchScript's float); otherwise the else branch follows the then branch. ``ts_types``:
    the TorchScript types of the first outputs (the If's own, flattened)."""
    then_graph, else_graph = branches
    for position, ts_type in enumerate(ts_types):
        if position >= min(len(then_graph.outputs), len(else_graph.outputs)):
            break
        then_dtype, else_dtype = then_graph.outputs[position].dtype, else_graph.outputs[position].dtype
        if then_dtype is None or else_dtype is None or then_dtype == else_dtype:
            continue
        if then_graph.outputs[position].meta.get("uninitialized"):
            _cast_output(g, then_graph, position, else_dtype)
        elif isinstance(ts_type, torch._C.FloatType):
            for graph in branches:
                if graph.outputs[position].dtype != ir.DataType.DOUBLE:
                    _cast_output(g, graph, position, ir.DataType.DOUBLE)
        else:
            _cast_output(g, else_graph, position, then_dtype)


def type_sources(branches: Sequence[ir.Graph]) -> list[Value]:
    """The branch output each If output is typed from: the then branch's, unless it is a
    placeholder for a value set on the other path only (prim::Uninitialized), which says
    nothing of its rank."""
    return [a if not a.meta.get("uninitialized") else b for a, b in _output_pairs(branches)]
