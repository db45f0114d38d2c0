"""torch's type promotion, as the exporter needs it: the dtype an op's operands are unified to.

ONNX has no implicit casts: ``Add(half, double)`` is invalid, and a Python ``2`` has no dtype
at all. Torch promotes by category (bool < int < float < complex) and by priority (tensors with
dimensions > zero-dim tensors > Python numbers), so ``half_tensor + 2`` stays half and
``int32_tensor + 2.5`` becomes float32.

Two phases apply these rules: the scalar-type-analysis pass (on TorchScript types, before
emission) and the emitter (on emitted values, for scripted graphs whose TorchScript types were
incomplete). The rules live here, in a module of their own, so that neither phase serves the
other: a pass never serves the emitter. Which operands an op promotes, and what it returns, is
declared where the op is registered (op_facts.Promotion, asked through REGISTRY.facts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.op_facts import Promotion, Result
from exporter.ts_graph import schema_of

__all__ = [
    "Operand",
    "TENSOR",
    "ZERO_DIM",
    "NUMBER",
    "promote",
    "output_dtype",
    "operand_positions",
    "emitted_operand",
    "emission_target",
    "computed_dtype",
    "ts_operand",
    "ts_operands",
    "ts_rounds",
]

TENSOR, ZERO_DIM, NUMBER = 2, 1, 0


@dataclasses.dataclass(frozen=True)
class Operand:
    """What promotion needs to know of an operand: its dtype and its priority."""

    dtype: torch.dtype
    priority: int  # TENSOR, ZERO_DIM or NUMBER


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
    for priority in (TENSOR, ZERO_DIM, NUMBER):
        group = [o.dtype for o in operands if o.priority == priority]
        if not group:
            continue
        if priority == NUMBER:
            # Python numbers only contribute their category, at the default dtype.
            group = [_number_dtype(d) for d in group]
        current = group[0]
        for dtype in group[1:]:
            current = torch.promote_types(current, dtype)
        if result is None:
            result = current
        elif _category(current) > _category(result):
            if priority == NUMBER and result.is_floating_point and current.is_complex:
                result = torch.complex128 if result == torch.float64 else torch.complex64
            else:
                result = current
    if result is None:
        raise ValueError("no operands to promote")
    return result


def computed_dtype(rule: Promotion, operands: list[Operand], *, rounds: bool) -> torch.dtype:
    """The dtype torch computes an op of ``rule`` in from its operands: their promotion, made
    the default float dtype for the float-valued ops (atan2 of ints; div, unless ``rounds``:
    a rounding mode is given, and integers divide as integers)."""
    dtype = promote(operands)
    if rule.result is Result.FLOAT and not rounds and not (dtype.is_floating_point or dtype.is_complex):
        return torch.get_default_dtype()
    return dtype


def ts_operand(value: torch._C.Value) -> Operand | None:
    """Promotion dtype and priority of a TorchScript value, from its type (None if unknown). A
    0-d tensor constant is a Python number wrapped by tracing: it promotes as a number."""
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


def ts_operands(node: torch._C.Node, rule: Promotion) -> dict[int, Operand] | None:
    """The operands of ``node`` that ``rule`` promotes, by input position; None when one's
    dtype is unknown or the node has none of them."""
    schema = schema_of(node)
    if schema is None:
        return None
    arg_names = [a.name for a in schema.arguments]
    inputs = list(node.inputs())
    operands = {}
    for position in [arg_names.index(n) for n in rule.operands if n in arg_names]:
        if position >= len(inputs) or inputs[position].type().kind() == "NoneType":
            continue
        operand = ts_operand(inputs[position])
        if operand is None:
            return None
        operands[position] = operand
    return operands or None


def ts_rounds(node: torch._C.Node) -> bool:
    """Whether ``node`` is given a rounding mode (div with ``rounding_mode="floor"``), in a
    TorchScript graph: then integers divide as integers."""
    schema = schema_of(node)
    if schema is None:
        return False
    arg_names = [a.name for a in schema.arguments]
    if "rounding_mode" not in arg_names:
        return False
    return node.inputsAt(arg_names.index("rounding_mode")).toIValue() is not None


def _number_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype == torch.bool:
        return torch.bool
    if dtype.is_complex:
        return torch.complex64
    if dtype.is_floating_point:
        return torch.get_default_dtype()
    return torch.int64


def output_dtype(node: torch._C.Node) -> torch.dtype | None:
    """The dtype TorchScript recorded for the single tensor output of ``node``, if any."""
    outputs = list(node.outputs())
    if len(outputs) != 1:  # max.dim / min.dim: (values, indices), nothing to promote
        return None
    out_type = outputs[0].type()
    if isinstance(out_type, torch._C.TensorType):
        return out_type.dtype()
    return None


# -- emission time: operands are emitted objects, for graphs whose TorchScript types were incomplete --


def operand_positions(rule: Promotion, schema: torch._C.FunctionSchema) -> list[int]:
    """Positions of the operands ``rule`` promotes in ``schema`` ([] when none).

    Scalar overloads of binary ops (``aten::add.int(int a, int b)``) name them a and b.
    """
    arg_names = [a.name for a in schema.arguments]
    positions = [arg_names.index(n) for n in rule.operands if n in arg_names]
    if not positions and arg_names[:2] == ["a", "b"]:
        positions = [0, 1]
    return positions


def emitted_operand(obj: object, ts_value: torch._C.Value) -> Operand | None:
    """Promotion priority of an emitted object: ONNX values by rank, constants as numbers."""
    if isinstance(obj, bool):
        return Operand(torch.bool, NUMBER)
    if isinstance(obj, int):
        return Operand(torch.int64, NUMBER)
    if isinstance(obj, float):
        return Operand(torch.float64, NUMBER)
    if isinstance(obj, torch.Tensor):
        return Operand(obj.dtype, NUMBER if obj.dim() == 0 else TENSOR)
    if isinstance(obj, ir.Value):
        if obj.dtype is None:
            return None
        dtype = tensors.to_torch_dtype(obj.dtype)
        if not isinstance(ts_value.type(), torch._C.TensorType):
            return Operand(dtype, NUMBER)  # a TorchScript int/float/bool computed at run time
        rank = None if obj.shape is None else len(obj.shape)
        return Operand(dtype, ZERO_DIM if rank == 0 else TENSOR)
    return None


def _rounds(schema: torch._C.FunctionSchema, inputs: Sequence[object]) -> bool:
    """Whether a rounding mode is given among the emitted ``inputs`` (see :func:`ts_rounds`)."""
    arg_names = [a.name for a in schema.arguments]
    return "rounding_mode" in arg_names and inputs[arg_names.index("rounding_mode")] is not None


def emission_target(
    node: torch._C.Node,
    rule: Promotion,
    schema: torch._C.FunctionSchema,
    inputs: Sequence[object],
    operands: dict[int, Operand],
) -> torch.dtype:
    """The dtype the operands of ``node`` (emitted as ``inputs``), promoted by ``rule``, are
    computed in."""
    follows_self = rule.result is Result.SELF
    if rule.arithmetic and node.outputsSize() == 1:
        # arithmetic on Python numbers computes a Python float or int: double or int64
        out_type = node.output().type()
        if isinstance(out_type, torch._C.FloatType):
            return torch.float64
        if isinstance(out_type, torch._C.IntType):
            return torch.int64
    computed = computed_dtype(rule, list(operands.values()), rounds=_rounds(schema, inputs))
    if rule.arithmetic:
        out = output_dtype(node)
        if follows_self and 0 in operands:
            return operands[0].dtype
        # a dtype narrower than torch's computed one is shape propagation's guess
        if out is not None and not follows_self and (out == computed or torch.promote_types(computed, out) != computed):
            return out
    return computed
