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

import dataclasses

import torch

from exporter import tensors
from exporter.passes.common import replace_node, schema_of, walk

__all__ = ["scalar_type_analysis", "promote", "Operand"]

# Ops computed in their output dtype: these operands are cast to it.
_ARITHMETIC: dict[str, tuple[str, ...]] = {
    "aten::add": ("self", "other"),
    "aten::sub": ("self", "other"),
    "aten::rsub": ("self", "other"),
    "aten::mul": ("self", "other"),
    "aten::div": ("self", "other"),
    "aten::true_divide": ("self", "other"),
    "aten::floor_divide": ("self", "other"),
    "aten::remainder": ("self", "other"),
    "aten::fmod": ("self", "other"),
    "aten::maximum": ("self", "other"),
    "aten::minimum": ("self", "other"),
    "aten::max": ("self", "other"),
    "aten::min": ("self", "other"),
    "aten::fmax": ("self", "other"),
    "aten::fmin": ("self", "other"),
    "aten::atan2": ("self", "other"),
    "aten::hypot": ("self", "other"),
    "aten::pow": ("self", "exponent"),
    "aten::where": ("self", "other"),
    "aten::lerp": ("self", "end", "weight"),
    "aten::addcmul": ("self", "tensor1", "tensor2"),
    "aten::addcdiv": ("self", "tensor1", "tensor2"),
    "aten::clamp": ("self", "min", "max"),
    "aten::clamp_min": ("self", "min"),
    "aten::clamp_max": ("self", "max"),
    "aten::clip": ("self", "min", "max"),
    "aten::masked_fill": ("value",),
    "aten::index_put": ("values",),
    "aten::fill": ("value",),
    "aten::logaddexp": ("self", "other"),
    "aten::copysign": ("self", "other"),
    "aten::xlogy": ("self", "other"),
}
# Ops that return bool but compare in the promoted dtype of their operands.
_COMPARISON: dict[str, tuple[str, ...]] = {
    "aten::eq": ("self", "other"),
    "aten::ne": ("self", "other"),
    "aten::lt": ("self", "other"),
    "aten::le": ("self", "other"),
    "aten::gt": ("self", "other"),
    "aten::ge": ("self", "other"),
    "aten::isclose": ("self", "other"),
}
_TENSOR, _ZERO_DIM, _NUMBER = 2, 1, 0


@dataclasses.dataclass(frozen=True)
class Operand:
    """What promotion needs to know of an operand: its dtype and its priority."""

    dtype: torch.dtype
    priority: int  # _TENSOR, _ZERO_DIM or _NUMBER


def _category(dtype: torch.dtype) -> int:
    if dtype == torch.bool:
        return 0
    if dtype.is_complex:
        return 3
    if dtype.is_floating_point:
        return 2
    return 1


def promote(operands: list[Operand]) -> torch.dtype:
    """torch's result type: the highest-priority group decides unless a lower one is of a
    higher category, in which case that category's default (numbers) or dtype wins."""
    result: torch.dtype | None = None
    for priority in (_TENSOR, _ZERO_DIM, _NUMBER):
        group = [o.dtype for o in operands if o.priority == priority]
        if not group:
            continue
        if priority == _NUMBER:
            # Python numbers only contribute their category, at the default dtype.
            group = [_number_dtype(d) for d in group]
        current = group[0]
        for dtype in group[1:]:
            current = torch.promote_types(current, dtype)
        if result is None:
            result = current
        elif _category(current) > _category(result):
            if priority == _NUMBER and result.is_floating_point and current.is_complex:
                result = torch.complex128 if result == torch.float64 else torch.complex64
            else:
                result = current
    if result is None:
        raise ValueError("no operands to promote")
    return result


def _number_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype == torch.bool:
        return torch.bool
    if dtype.is_complex:
        return torch.complex64
    if dtype.is_floating_point:
        return torch.get_default_dtype()
    return torch.int64


def _operand(value: torch._C.Value) -> Operand | None:
    value_type = value.type()
    node = value.node()
    if isinstance(value_type, torch._C.TensorType):
        dtype = value_type.dtype()
        if dtype is None:
            return None
        rank = value_type.dim()
        if node.kind() == "prim::Constant" and rank == 0:
            return Operand(dtype, _NUMBER)
        return Operand(dtype, _ZERO_DIM if rank == 0 else _TENSOR)
    if isinstance(value_type, torch._C.BoolType):
        return Operand(torch.bool, _NUMBER)
    if isinstance(value_type, torch._C.IntType):
        return Operand(torch.int64, _NUMBER)
    if isinstance(value_type, torch._C.FloatType):
        return Operand(torch.float64, _NUMBER)
    if isinstance(value_type, torch._C.NumberType) and node.kind() == "prim::Constant":
        constant = value.toIValue()
        if isinstance(constant, bool):
            return Operand(torch.bool, _NUMBER)
        if isinstance(constant, int):
            return Operand(torch.int64, _NUMBER)
        if isinstance(constant, float):
            return Operand(torch.float64, _NUMBER)
    return None


def _output_dtype(node: torch._C.Node) -> torch.dtype | None:
    outputs = list(node.outputs())
    if len(outputs) != 1:  # max.dim / min.dim: (values, indices), nothing to promote
        return None
    out_type = outputs[0].type()
    if isinstance(out_type, torch._C.TensorType):
        return out_type.dtype()
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
            source_dtype = {torch._C.IntType: torch.int64, torch._C.FloatType: torch.float64,
                            torch._C.BoolType: torch.bool}.get(type(value_type), torch.int64)
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
        names = _ARITHMETIC.get(kind) or _COMPARISON.get(kind)
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
            target = _output_dtype(node) if kind in _ARITHMETIC else None
            if kind in ("aten::masked_fill", "aten::index_put", "aten::fill"):
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


# -- the same promotion at emission time, for graphs whose TorchScript types were incomplete --


def operand_positions(kind: str, schema: torch._C.FunctionSchema) -> list[int]:
    """Positions of the operands that promotion unifies for ``kind`` ([] when none).

    Scalar overloads of binary ops (``aten::add.int(int a, int b)``) name them a and b.
    """
    names = _ARITHMETIC.get(kind) or _COMPARISON.get(kind)
    if names is None:
        return []
    arg_names = [a.name for a in schema.arguments]
    positions = [arg_names.index(n) for n in names if n in arg_names]
    if not positions and arg_names[:2] == ["a", "b"]:
        positions = [0, 1]
    return positions


def emitted_operand(obj: object, ts_value: torch._C.Value) -> Operand | None:
    """Promotion priority of an emitted object: ONNX values by rank, constants as numbers."""
    import onnx_ir as ir

    if isinstance(obj, bool):
        return Operand(torch.bool, _NUMBER)
    if isinstance(obj, int):
        return Operand(torch.int64, _NUMBER)
    if isinstance(obj, float):
        return Operand(torch.float64, _NUMBER)
    if isinstance(obj, torch.Tensor):
        return Operand(obj.dtype, _NUMBER if obj.dim() == 0 else _TENSOR)
    if isinstance(obj, ir.Value):
        if obj.dtype is None:
            return None
        dtype = tensors.to_torch_dtype(obj.dtype)
        if not isinstance(ts_value.type(), torch._C.TensorType):
            return Operand(dtype, _NUMBER)  # a TorchScript int/float/bool computed at run time
        rank = None if obj.shape is None else len(obj.shape)
        return Operand(dtype, _ZERO_DIM if rank == 0 else _TENSOR)
    return None


def emission_target(
    kind: str, node: torch._C.Node, operands: dict[int, Operand], true_division: bool
) -> torch.dtype:
    """The dtype the operands of ``node`` are computed in."""
    if kind in _ARITHMETIC:
        out = _output_dtype(node)
        if kind in ("aten::masked_fill", "aten::index_put", "aten::fill") and 0 in operands:
            return operands[0].dtype
        if out is not None and kind not in ("aten::masked_fill", "aten::index_put", "aten::fill"):
            return out
    target = promote(list(operands.values()))
    if true_division and not (target.is_floating_point or target.is_complex):
        target = torch.get_default_dtype()
    return target
