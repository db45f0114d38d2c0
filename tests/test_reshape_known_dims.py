"""A reshape whose target mixes run-time and export-time sizes (``x.reshape(B, C * K, L)`` with a
dynamic batch B, as timm's VOLO writes before F.fold) keeps the known sizes in its output type:
ONNX's per-node inference gives no dim of a shape it cannot fold, and a later op that needs a
size at export time (F.fold's channels) would refuse the model."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_matches_torch, export_to_bytes


class FoldAfterReshape(torch.nn.Module):
    """Blocks of shape (B, C, K, L) regrouped as F.fold's (B, C * K, L) from the traced sizes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, kernel, blocks = x.shape
        cols = x.reshape(batch, channels * kernel, blocks)
        return F.fold(cols, output_size=(5, 6), kernel_size=3, padding=1)


class ReshapeMixed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, kernel, blocks = x.shape
        return x.reshape(batch, channels * kernel, blocks) * 2


DYNAMIC_BATCH = {"input_names": ["x"], "dynamic_axes": {"x": {0: "batch"}}}


@pytest.mark.parametrize("opset", [9, 13, 17, 18])
def test_fold_after_a_reshape_with_a_dynamic_batch(opset: int) -> None:
    assert_matches_torch(
        FoldAfterReshape(),
        (torch.randn(1, 4, 9, 30),),
        opset=opset,
        other_inputs=[(torch.randn(3, 4, 9, 30),)],
        **DYNAMIC_BATCH,
    )


@pytest.mark.parametrize("opset", [9, 17])
def test_reshape_output_keeps_the_sizes_known_at_export(opset: int) -> None:
    x = torch.randn(2, 4, 9, 30)
    assert_matches_torch(ReshapeMixed(), (x,), opset=opset, other_inputs=[(torch.randn(5, 4, 9, 30),)], **DYNAMIC_BATCH)
    _, model = export_to_bytes(ReshapeMixed(), (x,), opset_version=opset, **DYNAMIC_BATCH)
    (mul,) = [node for node in model.graph if node.op_type == "Mul"]
    dims = list(mul.inputs[0].shape)  # the Reshape's output
    assert dims[1:] == [36, 30] and not isinstance(dims[0], int), dims
