"""prim::Loop (exporter.control_flow.loop): an ONNX Loop, or unrolled only where the Loop form
is refused for a value needed at export time; any other failure of the Loop form surfaces."""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from conftest import assert_matches_torch

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
