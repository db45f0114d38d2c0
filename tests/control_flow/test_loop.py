"""prim::Loop (exporter.control_flow.loop): an ONNX Loop, or unrolled only where the Loop form
is refused for a value needed at export time; any other failure of the Loop form surfaces."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import onnx_ir as ir
import pytest
import torch
from conftest import assert_matches_torch

import exporter
from exporter.control_flow import onnx_loop
from exporter.errors import NeedsExportTimeValue, SymbolicError


class _StaticLoop(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(3):
            x = x * 2 + i
        return x


def _op_types(model: ir.Model) -> set[str]:
    return {node.op_type for node in model.graph}


def test_static_loop_exports_as_an_onnx_loop() -> None:
    model = assert_matches_torch(torch.jit.script(_StaticLoop()), (torch.ones(2),), opset=13)
    assert "Loop" in _op_types(model)


def test_a_bug_in_the_onnx_loop_path_is_not_hidden_by_unrolling(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug in the Loop path")

    monkeypatch.setattr(onnx_loop, "typed_like", broken)
    with pytest.raises(SymbolicError, match="bug in the Loop path"):
        assert_matches_torch(torch.jit.script(_StaticLoop()), (torch.ones(2),), opset=13)


def test_a_refused_onnx_loop_still_unrolls(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuses(*args: object, **kwargs: object) -> None:
        raise NeedsExportTimeValue("needs an export-time value")

    monkeypatch.setattr(onnx_loop, "typed_like", refuses)
    model = assert_matches_torch(torch.jit.script(_StaticLoop()), (torch.ones(2),), opset=13)
    assert "Loop" not in _op_types(model)


class _ScaledByIteration(torch.nn.Module):
    """A static-count loop whose body multiplies by the iteration number: a run-time value in
    the ONNX Loop's body, a Python int once unrolled."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(3):
            x = x * i + x
        return x


@pytest.fixture
def custom_mul() -> Iterator[Callable[[Callable[..., object]], None]]:
    """Registers a custom aten::mul symbolic for the test, removed afterwards."""
    registered: list[bool] = []

    def register(symbolic: Callable[..., object]) -> None:
        exporter.register_custom_op_symbolic("aten::mul", symbolic, exporter.MIN_OPSET)
        registered.append(True)

    yield register
    if registered:
        exporter.unregister_custom_op_symbolic("aten::mul", exporter.MIN_OPSET)


def _is_run_time(value: ir.Value) -> bool:
    return value.const_value is None


def _mul_of_export_time_factors(g: exporter.GraphContext, self: ir.Value, other: ir.Value) -> ir.Value:
    """aten::mul for a factor known at export time only; the named refusal otherwise."""
    if _is_run_time(other):
        raise NeedsExportTimeValue("this lowering needs the factor at export time")
    return g.op("Mul", self, other)


@pytest.mark.parametrize("bug", [ValueError, TypeError, KeyError])
def test_a_bug_in_a_body_symbolic_surfaces_naming_the_op(
    bug: type[Exception], custom_mul: Callable[[Callable[..., object]], None]
) -> None:
    """A plain error (not the named refusal) from a symbolic in the body is the symbolic's bug:
    the loop is not unrolled to hide it, though the unrolled body would export."""

    def mul_failing_on_run_time_values(g: exporter.GraphContext, self: ir.Value, other: ir.Value) -> ir.Value:
        if _is_run_time(other):
            raise bug("the symbolic's own bug")
        return g.op("Mul", self, other)

    custom_mul(mul_failing_on_run_time_values)
    with pytest.raises(SymbolicError, match="the symbolic's own bug") as caught:
        assert_matches_torch(torch.jit.script(_ScaledByIteration()), (torch.randn(2, 3),), opset=13)
    assert caught.value.op.startswith("aten::mul")
    assert isinstance(caught.value.__cause__, bug)


def test_a_body_symbolic_refusing_a_run_time_value_unrolls_the_loop(
    custom_mul: Callable[[Callable[..., object]], None],
) -> None:
    custom_mul(_mul_of_export_time_factors)
    model = assert_matches_torch(torch.jit.script(_ScaledByIteration()), (torch.randn(2, 3),), opset=13)
    assert "Loop" not in _op_types(model)


def test_a_run_time_value_for_a_constant_parameter_unrolls_the_loop(
    custom_mul: Callable[[Callable[..., object]], None],
) -> None:
    """A symbolic asking for a Python float (annotation) refuses the iteration number the Loop
    form gives it (arguments.RunTimeArgumentError); the unrolled body gives the number."""

    def mul_by_number(g: exporter.GraphContext, self: ir.Value, other: float) -> ir.Value:
        return g.op("Mul", self, g.constant(torch.tensor(other, dtype=torch.float32)))

    custom_mul(mul_by_number)
    model = assert_matches_torch(torch.jit.script(_ScaledByIteration()), (torch.randn(2, 3),), opset=13)
    assert "Loop" not in _op_types(model)


def test_without_a_known_trip_count_the_refusal_is_reported(
    custom_mul: Callable[[Callable[..., object]], None],
) -> None:
    """Nothing to unroll: the refusal surfaces as the body symbolic's error, naming the op."""

    class ScaledByRow(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for i in range(x.size(0)):
                x = x * i + x
            return x

    custom_mul(_mul_of_export_time_factors)
    with pytest.raises(SymbolicError, match="needs the factor at export time") as caught:
        assert_matches_torch(
            torch.jit.script(ScaledByRow()),
            (torch.randn(2, 3),),
            opset=13,
            input_names=["x"],
            dynamic_axes={"x": {0: "n"}},
        )
    assert caught.value.op.startswith("aten::mul")
