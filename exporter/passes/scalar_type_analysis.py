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
from exporter.op_facts import Promotion, Result
from exporter.passes.common import replace_node, walk
from exporter.promotion import computed_dtype, output_dtype, promote, ts_operand, ts_operands, ts_rounds
from exporter.registry import REGISTRY, Registry

__all__ = ["scalar_type_analysis"]


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


def scalar_type_analysis(graph: torch._C.Graph, registry: Registry = REGISTRY) -> None:
    """Promote the operands of every node whose op declares a promotion (in ``registry``)."""
    for node in walk(graph):
        rule = registry.node_facts(node).promotion
        if rule is None:
            continue
        kind = node.kind()
        operands = ts_operands(node, rule)
        if operands is None:
            continue
        inputs = list(node.inputs())
        target = output_dtype(node) if rule.arithmetic else None
        if rule.result is Result.SELF:
            target = ts_operand(inputs[0]).dtype if ts_operand(inputs[0]) else target
        elif target is not None:
            target = _corrected_output(
                node, target, computed_dtype(rule, list(operands.values()), rounds=ts_rounds(node))
            )
        if target is None:
            target = _number_result(node, rule) or promote(list(operands.values()))
        changed = False
        for position in operands:
            operand_target = target
            if target.is_complex:
                # complex values are exported as float pairs (exporter/complex_values.py): a complex
                # operand stays as it is, a real one takes the dtype of the result's parts
                operand = operands[position]
                if operand.dtype.is_complex:
                    continue
                operand_target = tensors.complex_part_dtype(target)
            new_value = _converted(graph, node, inputs[position], operand_target)
            if new_value is not inputs[position]:
                inputs[position] = new_value
                changed = True
        if changed:
            replace_node(graph, node, kind, inputs)


def _number_result(node: torch._C.Node, rule: Promotion) -> torch.dtype | None:
    """Arithmetic on Python numbers (``y * 3`` with ``y: float``) computes a Python float or int,
    a double or int64 when it runs in the graph, not the default float dtype of tensors."""
    if not rule.arithmetic or node.outputsSize() != 1:
        return None
    out_type = node.output().type()
    if isinstance(out_type, torch._C.FloatType):
        return torch.float64
    if isinstance(out_type, torch._C.IntType):
        return torch.int64
    return None


def _corrected_output(node: torch._C.Node, recorded: torch.dtype, computed: torch.dtype) -> torch.dtype:
    """The output dtype of an arithmetic node: the recorded one, unless torch computes a wider
    one (``int_tensor / 3`` recorded int64, ``where(c, half, float)`` recorded half). Tracing
    records the dtype torch computed; TorchScript's shape propagation on scripted graphs keeps
    the dtype of ``self`` for these, and an arithmetic result is never narrower than its
    operands' promotion (in-place ops, whose result is, were made functional before). The
    node's type is corrected, so later nodes promote from it."""
    if computed == recorded or torch.promote_types(computed, recorded) != computed:
        return recorded
    output = node.output()
    output.setType(output.type().with_dtype(computed))
    return computed
