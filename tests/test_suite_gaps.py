"""Capabilities found missing by torch's own exporter test suite (issue #17): dynamic_axes
beyond an output's rank, run-time chunk counts, integer arange, and friends. Each test is a
small model of the same kind, compared with eager torch."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_matches_torch


class SliceToEnd(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x[:, 1:, x.size(2) - 3], x[:, 2:, 1]


@pytest.mark.parametrize("opset", [9, 13])
def test_dynamic_axes_beyond_an_outputs_rank_are_skipped(opset: int) -> None:
    """One dynamic_axes entry names axis 2 of a rank-2 output: torch's exporter names only the
    axes the output has; we warn and skip the rest instead of failing."""
    x = torch.rand(5, 5, 5)
    with pytest.warns(UserWarning, match="names axis 2 of output 'out', which has rank 2"):
        onnx_model = assert_matches_torch(
            SliceToEnd(),
            (x,),
            opset=opset,
            input_names=["x"],
            output_names=["out"],
            dynamic_axes={"x": [0, 1, 2], "out": [0, 1, 2]},
            other_inputs=[(torch.rand(3, 6, 4),)],
        )
    assert [str(d) for d in onnx_model.graph.outputs[0].shape] == ["out_dynamic_axes_1", "out_dynamic_axes_2"]
