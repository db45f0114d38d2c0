"""dynamic_axes: shape-reading code stays dynamic and runs at sizes other than the traced ones."""

from __future__ import annotations

import io
import math

import pytest
import torch
from conftest import assert_outputs_match, run_model

import exporter


class ShapeReader(torch.nn.Module):
    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.causal = causal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, channels = x.shape
        y = self.linear(x).view(batch * steps, -1).view(-1, steps, channels)
        positions = torch.arange(x.size(1)).float().unsqueeze(-1)
        y = y + positions * 0.1
        if self.causal:
            y = torch.nn.functional.scaled_dot_product_attention(y, y, y, is_causal=True)
        else:
            y = torch.softmax(y @ y.transpose(-1, -2) / math.sqrt(8), -1) @ y
        return y.reshape(batch, -1)[:, : x.shape[-1] * 2]


def _run(model: torch.nn.Module, opset: int, shapes: list[tuple[int, ...]], **kwargs: object) -> object:
    buffer = io.BytesIO()
    onnx_model = exporter.export(
        model,
        (torch.randn(*shapes[0]),),
        buffer,
        opset_version=opset,
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "output": {0: "batch"}},
        **kwargs,
    )
    for shape in shapes:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x)
        assert_outputs_match(run_model(buffer.getvalue(), [x]), want)
    return onnx_model


SHAPES = [(2, 5, 8), (3, 7, 8), (1, 2, 8)]


@pytest.mark.parametrize("opset", [9, 11, 13, 17, 20])
def test_shape_arithmetic_stays_dynamic(opset: int) -> None:
    onnx_model = _run(ShapeReader(causal=False).eval(), opset, SHAPES)
    (inp,) = onnx_model.graph.inputs
    assert [str(d) for d in inp.shape][:2] == ["batch", "seq"]
    assert str(onnx_model.graph.outputs[0].shape[0]) == "batch"


@pytest.mark.parametrize("opset", [11, 13, 17, 20])
def test_causal_mask_from_sequence_length(opset: int) -> None:
    _run(ShapeReader(causal=True).eval(), opset, SHAPES)


def test_causal_mask_with_dynamic_length_below_11_names_opset_11() -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 11"):
        _run(ShapeReader(causal=True).eval(), 9, SHAPES)


def test_without_dynamic_axes_shape_arithmetic_folds() -> None:
    buffer = io.BytesIO()
    onnx_model = exporter.export(ShapeReader(causal=False).eval(), (torch.randn(2, 5, 8),), buffer)
    ops = {n.op_type for n in onnx_model.graph}
    assert not ops & {"Shape", "Gather", "Range", "NonZero"}, ops
    assert [d for d in onnx_model.graph.outputs[0].shape] == [2, 16]


def test_dynamic_batch_in_a_cnn() -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
    ).eval()
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(2, 3, 8, 8),), buffer, dynamic_axes={"input": [0]}, opset_version=13)
    for batch in (1, 5):
        x = torch.randn(batch, 3, 8, 8)
        with torch.no_grad():
            assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


def test_integer_fill_value_with_dynamic_shape() -> None:
    """T5's relative position buckets: full_like(int tensor, 15) with a dynamic size."""

    class Bucket(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = (x * 3).to(torch.long)
            return torch.min(y, torch.full_like(y, 15))

    buffer = io.BytesIO()
    exporter.export(Bucket(), (torch.arange(8.0),), buffer, dynamic_axes={"x": [0]}, opset_version=13)
    for n in (3, 8, 11):
        x = torch.arange(float(n))
        (got,) = run_model(buffer.getvalue(), [x])
        assert got.tolist() == Bucket()(x).tolist()
