"""Optional values in scripted models: Optional arguments given or None (decided at export
time, with ``is None`` branches and isinstance), and None flowing out of an If or a Loop on a
run-time condition, which ONNX holds as an optional value from opset 16 (below it the export
names the opset).
"""

from __future__ import annotations

import math
from typing import Optional

import onnx
import onnx_ir as ir
import pytest
import torch
from conftest import BASE_OPSETS, OPTIONAL_OPSETS, SEQUENCE_OPSETS, assert_matches_torch, export_to_bytes

import exporter


class OptionalIsInstance(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if isinstance(mask, torch.Tensor):
            return x * mask
        return x + 1


def test_isinstance_of_an_optional_argument() -> None:
    """prim::isinstance is decided at export time from what the argument is."""
    model = torch.jit.script(OptionalIsInstance())
    for opset in BASE_OPSETS:
        assert_matches_torch(model, (torch.randn(3), torch.randn(3)), opset=opset)
        assert_matches_torch(model, (torch.randn(3),), opset=opset)


class OptionalArguments(torch.nn.Module):
    """Optional arguments with ``is None`` / ``is not None`` branches: an optional mask, an
    optional bias tensor refined by assignment, an optional float scale with a default from
    the module."""

    def __init__(self) -> None:
        super().__init__()
        self.default_scale = 0.5

    def forward(
        self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        scale: Optional[float] = None
        if x.size(-1) > 4:
            scale = 1.0 / math.sqrt(x.size(-1))
        if scale is None:
            scale = self.default_scale
        y = x * scale
        if mask is not None:
            y = y.masked_fill(~mask, 0.0)
        if bias is None:
            return y.sum(-1)
        return y.sum(-1) + bias


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("given", ["none", "mask", "mask_and_bias"])
def test_optional_arguments(opset: int, given: str) -> None:
    model = torch.jit.script(OptionalArguments())

    def inputs(n: int, width: int) -> tuple:
        x = torch.randn(n, width)
        if given == "none":
            return (x,)
        mask = torch.rand(n, width) > 0.3
        return (x, mask) if given == "mask" else (x, mask, torch.randn(n))

    names = ["x", "mask", "bias"][: len(inputs(1, 1))]
    dynamic = {"input_names": names, "dynamic_axes": {name: {0: "n"} for name in names}}
    assert_matches_torch(model, inputs(3, 6), opset=opset, other_inputs=[inputs(1, 6), inputs(7, 6)], **dynamic)


def test_optional_argument_present_and_absent() -> None:
    model = torch.jit.script(OptionalArg())
    assert_matches_torch(model, (torch.randn(3), torch.randn(3)), opset=13)
    assert_matches_torch(model, (torch.randn(3),), opset=13)


DYNAMIC_ROWS = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}


class OptionalOutput(torch.nn.Module):
    """An Optional[Tensor] output that is None on one run-time path."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        if bool(x.sum() > 0):
            return x * 2
        return None


class OptionalLocal(torch.nn.Module):
    """A local set on one path only, then tested with `is None` and refined."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: Optional[torch.Tensor] = None
        if bool(x.sum() > 0):
            y = x * 2
        if y is None:
            return x - 1
        return y + 1


class OptionalNested(torch.nn.Module):
    """Nested ifs, one of them leaving the optional None, the other unwrapping it."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if bool(x[0, 0] > 0):
            if bool(x[0, 1] > 0):
                y = x + 4
        else:
            y = x.abs()
        if y is not None:
            y = y * 3
        return y


class OptionalLoopCarried(torch.nn.Module):
    """An Optional[Tensor] carried through a loop with a run-time trip count from None."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        best: Optional[torch.Tensor] = None
        for i in range(x.size(0)):
            if best is None:
                best = x[i]
            else:
                best = torch.max(best, x[i]) + 1
        if best is None:
            return torch.zeros(x.size(1))
        return best


class OptionalSetToNoneInLoop(torch.nn.Module):
    """A tensor that a loop with a run-time trip count may turn into None."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x * 2
        for i in range(x.size(0) - 1):
            if bool(x[i, 0] > 0):
                y = None
        return y


OPTIONAL_CASES = [OptionalOutput, OptionalLocal, OptionalNested, OptionalLoopCarried, OptionalSetToNoneInLoop]


class InputOrNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if x.size(0) > 1:
            y = x
        return y


class InputUntilLoopSetsNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        for _ in range(x.size(0) - 2):
            y = None
        return y


@pytest.mark.parametrize("cls", [InputOrNone, InputUntilLoopSetsNone])
def test_optional_output_types_carry_the_element_shape(cls: type) -> None:
    """Both If branches and the graph output are optional(tensor) with the element's shape
    where every path that sets it agrees (the named dynamic dim)."""
    examples = _signed_inputs()
    proto = ir.to_proto(
        assert_matches_torch(torch.jit.script(cls()), examples[0], opset=17, other_inputs=examples[1:], **DYNAMIC_ROWS)
    )
    expected = onnx.helper.make_optional_type_proto(
        onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ("n", 3))
    )
    assert proto.graph.output[0].type == expected
    branch_outputs = [
        attr.g.output[0].type for node in proto.graph.node if node.op_type == "If" for attr in node.attribute
    ]
    assert all(t == expected for t in branch_outputs)


def _signed_inputs() -> list[tuple[torch.Tensor]]:
    both = torch.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    first_only = torch.tensor([[1.0, -2.0, 3.0]])
    return [(both,), (-both,), (first_only,), (torch.randn(5, 3),)]


@pytest.mark.parametrize("opset", OPTIONAL_OPSETS)
@pytest.mark.parametrize("cls", OPTIONAL_CASES)
def test_none_flowing_out_of_if_and_loop(cls: type, opset: int) -> None:
    examples = _signed_inputs()
    assert_matches_torch(torch.jit.script(cls()), examples[0], opset=opset, other_inputs=examples[1:], **DYNAMIC_ROWS)


@pytest.mark.parametrize("cls", OPTIONAL_CASES)
def test_none_out_of_control_flow_below_16_names_the_opset(cls: type) -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 16"):
        export_to_bytes(torch.jit.script(cls()), _signed_inputs()[0], opset_version=15, **DYNAMIC_ROWS)


class OptionalArg(torch.nn.Module):
    def forward(self, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        if bias is None:
            return x * 2
        return x + bias
