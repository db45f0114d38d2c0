"""Scalar type analysis: make every implicit type promotion an explicit dtype.

ONNX has no implicit casts: ``Add(half, double)`` is invalid, and a Python ``2`` has no
dtype at all. Torch promotes by category (bool < int < float < complex) and by priority
(tensors with dimensions > zero-dim tensors > Python numbers), so ``half_tensor + 2`` stays
half and ``int32_tensor + 2.5`` becomes float32. This pass computes the dtype torch computes
in for each arithmetic or comparison node, turns scalar operands into tensor constants of that
dtype, and casts tensor operands that differ, so every symbolic sees operands of one dtype.

In traced graphs Python numbers arrive as 0-dim tensor constants (wrapped numbers); they are
treated as numbers, not as tensors, which is what torch did when it ran them.
"""

from __future__ import annotations

import torch

from exporter import tensors
from exporter.passes.common import replace_node, schema_of, walk
from exporter.promotion import (
    NUMBER,
    TENSOR,
    ZERO_DIM,
    Operand,
    follows_self,
    is_arithmetic,
    operand_names,
    output_dtype,
    promote,
)

__all__ = ["scalar_type_analysis"]


def _operand(value: torch._C.Value) -> Operand | None:
    value_type = value.type()
    node = value.node()
    if isinstance(value_type, torch._C.TensorType):
        dtype = value_type.dtype()
        if dtype is None:
            return None
        rank = value_type.dim()
        if node.kind() == "prim::Constant" and rank == 0:
            return Operand(dtype, NUMBER)
        return Operand(dtype, ZERO_DIM if rank == 0 else TENSOR)
    if isinstance(value_type, torch._C.BoolType):
        return Operand(torch.bool, NUMBER)
    if isinstance(value_type, torch._C.IntType):
        return Operand(torch.int64, NUMBER)
    if isinstance(value_type, torch._C.FloatType):
        return Operand(torch.float64, NUMBER)
    if isinstance(value_type, torch._C.NumberType) and node.kind() == "prim::Constant":
        constant = value.toIValue()
        if isinstance(constant, bool):
            return Operand(torch.bool, NUMBER)
        if isinstance(constant, int):
            return Operand(torch.int64, NUMBER)
        if isinstance(constant, float):
            return Operand(torch.float64, NUMBER)
    return None


def _converted(graph: torch._C.Graph, node: torch._C.Node, value: torch._C.Value, dtype: torch.dtype) -> torch._C.Value:
    """``value`` as a tensor of ``dtype``: a new constant, or a cast inserted before ``node``."""
    value_type = value.type()
    with graph.insert_point_guard(node):
        if value.node().kind() == "prim::Constant":
            constant = value.toIValue()
            if isinstance(constant, torch.Tensor):
                if constant.dtype == dtype:
                    return value
                constant = constant.to(dtype)
            else:
                constant = torch.tensor(constant, dtype=dtype)
            new_value = graph.insertConstant(constant)
            new_value.setType(torch._C.TensorType.create_from_tensor(constant))
            return new_value
        if not isinstance(value_type, torch._C.TensorType):
            as_tensor = graph.insert("prim::NumToTensor", [value])
            as_tensor.node().copyMetadata(node)
            source_dtype = {
                torch._C.IntType: torch.int64,
                torch._C.FloatType: torch.float64,
                torch._C.BoolType: torch.bool,
            }.get(type(value_type), torch.int64)
            as_tensor.setType(torch._C.TensorType.create_from_tensor(torch.tensor(0, dtype=source_dtype)))
            value, value_type = as_tensor, as_tensor.type()
        if value_type.dtype() == dtype:
            return value
        dtype_constant = graph.insertConstant(tensors.DTYPE_TO_SCALAR_TYPE[dtype])
        cast = graph.insert("aten::to", [value, dtype_constant])
        cast.node().copyMetadata(node)
        cast.setType(value_type.with_dtype(dtype))
        return cast


def scalar_type_analysis(graph: torch._C.Graph) -> None:
    for node in walk(graph):
        kind = node.kind()
        names = operand_names(kind)
        if names is None:
            continue
        schema = schema_of(node)
        if schema is None:
            continue
        arg_names = [a.name for a in schema.arguments]
        positions = [arg_names.index(n) for n in names if n in arg_names]
        inputs = list(node.inputs())
        operands = {}
        for position in positions:
            if position >= len(inputs) or inputs[position].type().kind() == "NoneType":
                continue
            operand = _operand(inputs[position])
            if operand is None:
                break
            operands[position] = operand
        else:
            if not operands:
                continue
            target = output_dtype(node) if is_arithmetic(kind) else None
            if follows_self(kind):
                target = _operand(inputs[0]).dtype if _operand(inputs[0]) else target
            if target is None:
                target = promote(list(operands.values()))
            changed = False
            for position in operands:
                new_value = _converted(graph, node, inputs[position], target)
                if new_value is not inputs[position]:
                    inputs[position] = new_value
                    changed = True
            if changed:
                replace_node(graph, node, kind, inputs)
