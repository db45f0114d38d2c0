"""Whole models end to end (a small CNN, an MLP with in-place ops, nn.TransformerEncoderLayer on
its fused and composite paths), compared with onnxruntime within 1e-4."""

from __future__ import annotations

import collections

import pytest
import torch
from conftest import FEATURE_OPSETS, assert_matches_torch


class SmallCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, stride=2),
            torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(inplace=True),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


class InplaceMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        h.relu_()
        h *= 0.5
        h += 1
        h.clamp_(max=2.0)
        h.masked_fill_(h < 0.8, 0.0)
        out = self.fc2(h)
        out.sub_(out.mean(dim=-1, keepdim=True))
        return out


def _with_stats(model: torch.nn.Module) -> torch.nn.Module:
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            with torch.no_grad():
                module.running_mean.normal_(0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model.eval()


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_small_cnn(opset: int) -> None:
    assert_matches_torch(_with_stats(SmallCNN()), (torch.randn(2, 3, 32, 32),), opset=opset, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_mlp_with_inplace_ops(opset: int) -> None:
    assert_matches_torch(InplaceMLP().eval(), (torch.randn(4, 16),), opset=opset, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_layer(opset: int, batch_first: bool) -> None:
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, batch_first=batch_first).eval()
    x = torch.randn(2, 7, 64) if batch_first else torch.randn(7, 2, 64)
    onnx_model = assert_matches_torch(layer, (x,), opset=opset, rtol=1e-4, atol=1e-4)
    ops = collections.Counter(node.op_type for node in onnx_model.graph)
    if opset >= 23:
        assert ops["Attention"] == 1 and ops["Softmax"] == 0
    else:
        assert ops["Softmax"] == 1 and ops["MatMul"] >= 4


def test_transformer_encoder_layer_under_no_grad_takes_composite_path() -> None:
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, batch_first=True).eval()
    with torch.no_grad():
        assert_matches_torch(layer, (torch.randn(2, 5, 32),), opset=17, rtol=1e-4, atol=1e-4)
