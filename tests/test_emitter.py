"""The emitter's op-independent rules, and the op knowledge that left it for the registry's op facts."""

from __future__ import annotations

import io
import pathlib
import re

import pytest
import torch

import exporter
from exporter import arguments, promotion
from exporter.registry import REGISTRY
from exporter.ts_graph import all_nodes, schema_of


def test_emitter_names_no_op() -> None:
    source = (pathlib.Path(exporter.__file__).parent / "emitter.py").read_text()
    assert re.findall(r'"aten::\w+', source) == []


@pytest.mark.parametrize("name", ["aten::dropout", "aten::feature_dropout", "aten::alpha_dropout"])
def test_dropout_is_registered_as_never_folded(name: str) -> None:
    assert not REGISTRY.facts(name).fold


def test_ordinary_ops_are_foldable() -> None:
    assert REGISTRY.facts("aten::add").fold


def test_eval_dropout_of_a_constant_is_not_folded_away() -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.nn.functional.dropout(torch.ones(2), p=0.5, training=False)

    buffer = io.BytesIO()
    exporter.export(Model().eval(), (torch.ones(2),), buffer, opset_version=13)
    assert buffer.getvalue()


def test_bind_by_name_gives_scalar_operands_the_tensor_names() -> None:
    schema = torch._C.parse_schema("aten::add.int(int a, int b) -> int")
    bound = arguments.bind_by_name(schema, [1, 2], ["self", "other"])
    assert {name: obj for name, (_, obj) in bound.items()} == {"self": 1, "other": 2}


def test_bind_by_name_keeps_names_a_symbolic_asks_for() -> None:
    schema = torch._C.parse_schema("aten::add.int(int a, int b) -> int")
    bound = arguments.bind_by_name(schema, [1, 2], ["a", "b"])
    assert set(bound) == {"a", "b"}


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
