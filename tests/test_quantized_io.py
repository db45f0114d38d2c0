"""Quantized tensors as graph inputs and outputs.

A quantized tensor crosses the model boundary as three values, as with torch's exporter: its
integer values (uint8 / int8 / int32), its scale and its zero point. Inputs take the scale as
float64 and the zero point as int64 (0-d); outputs return the scale as float32 and the zero
point in the integer dtype (0-d), the types DequantizeLinear takes. ``exporter.capture.
flatten_inputs`` and ``exporter.tensors.quantized_output_parts`` unpack torch tensors the same way.
"""

from __future__ import annotations

import io

import onnx_ir as ir
import pytest
import torch
from conftest import NEWEST, assert_matches_torch, export_to_bytes, run_model

import exporter
from exporter.capture import flatten_inputs
from exporter.tensors import quantized_input_parts, quantized_output_parts

pytestmark = [pytest.mark.filterwarnings("ignore:.*quantize.*deprecated:UserWarning")]

OPSETS = [10, 13, NEWEST]


def q(
    shape: tuple[int, ...], dtype: torch.dtype = torch.quint8, scale: float = 0.05, zero_point: int = 3
) -> torch.Tensor:
    if dtype == torch.qint8:
        zero_point = -zero_point
    return torch.quantize_per_tensor(torch.randn(*shape), scale, zero_point, dtype)


class Dequantize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.dequantize() * 2


class Quantize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.quantize_per_tensor(x, 0.1, 7, torch.quint8)


class ReluReshape(torch.nn.Module):
    """aten ops on a quantized input, returned quantized: relu keeps the qparams, reshape
    runs on the integers."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.relu(x), x.reshape(-1)


class Passthrough(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def test_input_and_output_parts() -> None:
    x = q((2, 3), scale=0.25, zero_point=4)
    values, scale, zero_point = quantized_input_parts(x)
    assert (values.dtype, scale.dtype, zero_point.dtype) == (torch.uint8, torch.float64, torch.int64)
    assert scale.item() == 0.25 and zero_point.item() == 4 and values.shape == (2, 3)
    assert torch.equal(values, x.int_repr())
    values, scale, zero_point = quantized_output_parts(x)
    assert (values.dtype, scale.dtype, zero_point.dtype) == (torch.uint8, torch.float32, torch.uint8)
    plain = torch.randn(2)
    assert quantized_input_parts(plain) == [plain] and quantized_output_parts(plain) == [plain]


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("opset", OPSETS)
def test_quantized_input(dtype: torch.dtype, opset: int) -> None:
    onnx_model = assert_matches_torch(
        Dequantize(), (q((3, 4), dtype),), opset=opset, other_inputs=[(q((3, 4), dtype, 0.2, 9),)]
    )
    inputs = [(v.name, v.dtype, v.shape.rank()) for v in onnx_model.graph.inputs]
    storage = ir.DataType.UINT8 if dtype == torch.quint8 else ir.DataType.INT8
    assert inputs == [("x", storage, 2), ("x_scale", ir.DataType.DOUBLE, 0), ("x_zero_point", ir.DataType.INT64, 0)]


@pytest.mark.parametrize("opset", OPSETS)
def test_quantized_output(opset: int) -> None:
    onnx_model = assert_matches_torch(Quantize(), (torch.randn(3, 4),), opset=opset)
    assert [v.dtype for v in onnx_model.graph.outputs] == [ir.DataType.UINT8, ir.DataType.FLOAT, ir.DataType.UINT8]
    assert [v.shape.rank() for v in onnx_model.graph.outputs] == [2, 0, 0]


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("opset", OPSETS)
def test_quantized_through_aten_ops(dtype: torch.dtype, opset: int) -> None:
    onnx_model = assert_matches_torch(ReluReshape(), (q((2, 5), dtype),), opset=opset)
    assert len(onnx_model.graph.outputs) == 6


def test_returned_input() -> None:
    """An input returned as is: its values, scale and zero point in the output types."""
    assert_matches_torch(Passthrough(), (q((4,)),), opset=13)


def test_scripted_quantized_input() -> None:
    assert_matches_torch(torch.jit.script(ReluReshape()), (q((2, 5)),), opset=13)


def test_input_names_count_three_per_quantized_input() -> None:
    _, onnx_model = export_to_bytes(Dequantize(), (q((3,)),), opset_version=13, input_names=["v", "s", "z"])
    assert [v.name for v in onnx_model.graph.inputs] == ["v", "s", "z"]


def test_verify_quantized_io() -> None:
    x = q((3, 4))
    buffer = io.BytesIO()
    exporter.export(ReluReshape(), (x,), buffer, opset_version=13)
    report = exporter.verify(ReluReshape(), (x,), buffer.getvalue(), inputs=[(q((3, 4), scale=0.3),)])
    assert report.passed and len(report.outputs) == 12


def test_flatten_inputs_unpacks_quantized() -> None:
    x = q((2,))
    flat = flatten_inputs((x, torch.ones(1)))
    assert [t.dtype for t in flat] == [torch.uint8, torch.float64, torch.int64, torch.float32]


def test_quantized_input_needs_opset_10() -> None:
    with pytest.raises(exporter.UnsupportedOperatorError, match="opset 10"):
        export_to_bytes(ReluReshape(), (q((2, 5)),), opset_version=9)


def test_per_channel_input_is_refused() -> None:
    x = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    with pytest.raises(ValueError, match="per tensor"):
        export_to_bytes(Dequantize(), (x,), opset_version=13)


def test_dropped_quantized_input_positions() -> None:
    """An unused quantized input drops its three graph inputs; the positions refer to the
    unpacked inputs (flatten_inputs), so the runners feed the right ones."""

    class Second(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return y + 1

    args = (q((2,)), torch.randn(2))
    data, onnx_model = export_to_bytes(Second(), args, opset_version=13)
    assert [v.name for v in onnx_model.graph.inputs] == ["y"]
    (out,) = run_model(data, flatten_inputs(args))
    torch.testing.assert_close(torch.from_numpy(out), args[1] + 1)
