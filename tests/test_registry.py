"""The registry (exporter/registry.py): the floor rule, registrations refused at import
(duplicates, bad names, opsets below 9, unannotated parameters), lookup by overload then bare
name, custom symbolics that win from their opset up and can be removed, and every built-in's
argument spec."""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from conftest import assert_matches_torch

import exporter
from exporter.arguments import ParamSpec
from exporter.graph_context import GraphContext
from exporter.registry import REGISTRY, Registry, pick


@pytest.mark.parametrize(
    ("available", "target", "expected"),
    [
        ((9, 10, 16), 15, 10),
        ((9, 10, 16), 16, 16),
        ((9, 10, 16), 9, 9),
        ((9, 10, 16), 26, 16),
        ((17,), 16, None),
        ((), 20, None),
        ((11, 9), 10, 9),
    ],
)
def test_floor_rule(available: tuple[int, ...], target: int, expected: int | None) -> None:
    assert pick(target, available) == expected


def _relu(g: GraphContext, self: ir.Value) -> ir.Value:
    return g.op("Relu", self)


def test_duplicate_registration_is_an_error() -> None:
    registry = Registry()
    registry.register("aten::relu", 9, _relu)
    with pytest.raises(ValueError, match="already registered at opset 9"):
        registry.register("aten::relu", 9, _relu)


@pytest.mark.parametrize("name", ["relu", "aten:relu", "aten::", "::relu", "aten::relu.a.b"])
def test_bad_op_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid op name"):
        Registry().register(name, 9, _relu)


def test_opset_below_9_is_refused() -> None:
    with pytest.raises(ValueError, match="opset 9 or higher"):
        Registry().register("aten::relu", 8, _relu)


def test_unannotated_parameter_is_refused() -> None:
    def bad(g, self):  # noqa: ANN001, ANN202
        return g.op("Relu", self)

    with pytest.raises(TypeError, match="needs an annotation"):
        Registry().register_custom("aten::relu", 9, bad)  # at registration for custom ones
    with pytest.raises(TypeError, match="needs an annotation"):
        Registry().register("aten::relu", 9, bad).params  # noqa: B018 - read on first use for built-ins


def test_lookup_prefers_overload_then_bare_name() -> None:
    registry = Registry()

    def generic(g: GraphContext, self: ir.Value) -> ir.Value:
        return self

    def specific(g: GraphContext, self: ir.Value) -> ir.Value:
        return self

    registry.register("aten::max", 9, generic)
    registry.register("aten::max.dim", 11, specific)
    assert registry.lookup("aten::max", 12, "dim").function.__wrapped__ is specific
    assert registry.lookup("aten::max", 10, "dim").function.__wrapped__ is generic
    assert registry.lookup("aten::max", 12, "other").function.__wrapped__ is generic


def test_custom_symbolic_wins_over_a_builtin_registered_higher() -> None:
    registry = Registry()

    def builtin(g: GraphContext, self: ir.Value) -> ir.Value:
        return self

    def custom(g: GraphContext, self: ir.Value) -> ir.Value:
        return self

    registry.register("aten::gelu", 20, builtin)
    registry.register_custom("aten::gelu", 9, custom)
    for target in (9, 15, 20, 26):
        assert registry.lookup("aten::gelu", target).function.__wrapped__ is custom
    registry.unregister_custom("aten::gelu", 9)
    assert registry.lookup("aten::gelu", 20).function.__wrapped__ is builtin
    assert registry.lookup("aten::gelu", 19) is None


def test_unregister_unknown_custom_symbolic_raises() -> None:
    with pytest.raises(KeyError):
        Registry().unregister_custom("aten::relu", 9)


class _Relu(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def test_custom_symbolic_is_used_in_export_and_can_be_removed() -> None:
    def relu_as_clip(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Max", self, g.constant(torch.tensor(0.0)))

    exporter.register_custom_op_symbolic("aten::relu", relu_as_clip, 13)
    try:
        model = assert_matches_torch(_Relu(), (torch.randn(3, 4),), opset=17)
        assert [n.op_type for n in model.graph] == ["Constant", "Max"]
        # below the custom opset the built-in applies
        model = assert_matches_torch(_Relu(), (torch.randn(3, 4),), opset=12)
        assert [n.op_type for n in model.graph] == ["Relu"]
    finally:
        exporter.unregister_custom_op_symbolic("aten::relu", 13)
    model = assert_matches_torch(_Relu(), (torch.randn(3, 4),), opset=17)
    assert [n.op_type for n in model.graph] == ["Relu"]


def test_custom_domain_op_and_custom_opsets() -> None:
    class MyOp(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.softplus(x)

    def softplus(g: GraphContext, self: ir.Value, beta: float = 1.0, threshold: float = 20.0) -> ir.Value:
        return g.op("MySoftplus", self, domain="com.example", beta=beta)

    with REGISTRY.scoped_custom("aten::softplus", 9, softplus):
        data = exporter.export(MyOp(), (torch.randn(2),), __import__("io").BytesIO(), custom_opsets={"com.example": 3})
    assert data.opset_imports["com.example"] == 3
    assert [n.op_type for n in data.graph] == ["MySoftplus"]


def test_every_builtin_symbolic_has_a_readable_spec_and_wraps() -> None:
    """Specs are read lazily (import stays fast); this reads all of them, so an annotation
    the argument conversion does not know fails here rather than at a user's export."""
    count = 0
    for name in REGISTRY.names():
        for opset in REGISTRY.builtin_opsets(name):
            entry = REGISTRY._builtin[name][opset]
            params = entry.params  # reading the spec raises on an annotation arguments.py does not know
            assert all(isinstance(p, ParamSpec) for p in params)
            assert callable(entry.function)
            count += 1
    assert count > 400


def test_reading_a_spec_with_an_unknown_annotation_fails() -> None:
    """The check above reads every spec; this shows that reading one can fail."""
    registry = Registry()

    def symbolic(g: GraphContext, self: ir.Value, scale: complex) -> ir.Value:
        return self

    registry.register("aten::relu", 9, symbolic)
    with pytest.raises(TypeError, match="parameter 'scale' has annotation"):
        registry._builtin["aten::relu"][9].params  # noqa: B018 - evaluated for its checks
