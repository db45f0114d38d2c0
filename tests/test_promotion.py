"""exporter/promotion.py: torch's type promotion, as the emitter applies it to a node's operands
(``emission_target``) where the scripted graph records no dtypes or wrong ones: Python ints
divide into a double, tensors of ints into the default float, floor division stays integer.
"""

from __future__ import annotations

import torch

from exporter import promotion
from exporter.registry import REGISTRY
from exporter.ts_graph import all_nodes, schema_of


def _node(fn: torch.jit.ScriptFunction, kind: str) -> torch._C.Node:
    return next(n for n in all_nodes([fn.graph]) if n.kind() == kind)


def test_true_division_of_integers_computes_in_a_float() -> None:
    """Python ints divide into a Python float, a double; tensors of ints into the default float."""

    @torch.jit.script
    def divide(a: int, b: int) -> float:
        return a / b

    node = _node(divide, "aten::div")
    operands = {
        0: promotion.Operand(torch.int64, promotion.NUMBER),
        1: promotion.Operand(torch.int64, promotion.NUMBER),
    }
    rule = REGISTRY.facts("aten::div", schema_of(node).overload_name).promotion
    assert promotion.emission_target(node, rule, schema_of(node), [7, 2], operands) == torch.float64

    @torch.jit.script
    def divide_tensors(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a / b

    node = _node(divide_tensors, "aten::div")
    operands = {
        0: promotion.Operand(torch.int64, promotion.TENSOR),
        1: promotion.Operand(torch.int64, promotion.TENSOR),
    }
    rule = REGISTRY.facts("aten::div", schema_of(node).overload_name).promotion
    assert promotion.emission_target(node, rule, schema_of(node), [None, None], operands) == torch.get_default_dtype()


def test_floor_rounded_division_stays_integer() -> None:
    @torch.jit.script
    def divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.div(a, b, rounding_mode="floor")

    node = _node(divide, "aten::div")
    schema = schema_of(node)
    operands = {
        0: promotion.Operand(torch.int32, promotion.TENSOR),
        1: promotion.Operand(torch.int64, promotion.TENSOR),
    }
    rule = REGISTRY.facts("aten::div", schema.overload_name).promotion
    # the scripted graph has no dtypes: the target is the promoted operand dtype
    assert promotion.emission_target(node, rule, schema, [None, None, "floor"], operands) == torch.int64
