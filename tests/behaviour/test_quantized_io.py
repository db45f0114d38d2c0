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
from cases import lowering_opsets
from conftest import assert_matches_torch, export_to_bytes, run_model

import exporter
from exporter.capture.inputs import flatten_inputs
from exporter.tensors import quantized_input_parts, quantized_output_parts

pytestmark = [pytest.mark.filterwarnings("ignore:.*quantize.*deprecated:UserWarning")]

# where the quantized layers' lowering changes (their registrations: 10, 11, 13), and the newest
OPSETS = lowering_opsets("quantized::linear", min_opset=10)


@pytest.fixture(autouse=True)
def _x86_engine():  # noqa: ANN202 - generator fixture
    """torch's x86 quantized kernels (QNNPACK has no 3-d transposed convolution, and its
    sigmoid refuses some output qparams); other modules may leave another engine set."""
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = "x86"
    yield
    torch.backends.quantized.engine = previous


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


class Flatten(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(x)


def test_scripted_layout_op_output() -> None:
    """A scripted graph's types may not say that flatten's result is quantized: it is found
    through the layout op, whose input is quantized, and returned as three outputs."""
    onnx_model = assert_matches_torch(torch.jit.script(Flatten()), (q((1, 2, 3, 4)),), opset=13)
    assert len(onnx_model.graph.outputs) == 3


def test_input_names_count_three_per_quantized_input() -> None:
    _, onnx_model = export_to_bytes(Dequantize(), (q((3,)),), opset_version=13, input_names=["v", "s", "z"])
    assert [v.name for v in onnx_model.graph.inputs] == ["v", "s", "z"]


def test_dynamic_axes_name_the_values_input() -> None:
    """dynamic_axes name a quantized input by its own name: the axes are its values'."""
    onnx_model = assert_matches_torch(
        ReluReshape(), (q((2, 5)),), opset=13, dynamic_axes={"x": {0: "n"}}, other_inputs=[(q((4, 5)),)]
    )
    assert str(onnx_model.graph.inputs[0].shape[0]) == "n"


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


# --------------------------------------------------------------------------------------------
# Quantized modules and ops between quantized inputs and outputs
# --------------------------------------------------------------------------------------------
QNN = torch.ao.nn.quantized


def _with_weights(module: torch.nn.Module, shape: tuple[int, ...], out_channels: int) -> torch.nn.Module:
    torch.manual_seed(0)
    weight = torch.quantize_per_tensor(torch.randn(*shape), 0.5, 0, torch.qint8)
    module.set_weight_bias(weight, torch.arange(out_channels, dtype=torch.float) - out_channels // 2)
    return module


class Call(torch.nn.Module):
    """A function or module of quantized tensors (lambdas cannot be module children)."""

    def __init__(self, fn: object) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> object:
        return self.fn(*args)  # type: ignore[operator]


def _unary(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (x,)


def _image() -> tuple[torch.Tensor, ...]:
    return (torch.quantize_per_tensor(torch.randn(2, 4, 6, 6), 0.5, 128, torch.quint8),)


def _small() -> tuple[torch.Tensor, ...]:
    return (torch.quantize_per_tensor(torch.randn(1, 4, 2, 3), 0.26, 128, torch.quint8),)


def _pair(scale_b: float, zero_point_b: int, rows_b: int = 2) -> object:
    def make() -> tuple[torch.Tensor, ...]:
        return (
            torch.quantize_per_tensor(torch.randn(2, 3), 0.26, 128, torch.quint8),
            torch.quantize_per_tensor(torch.randn(rows_b, 3), scale_b, zero_point_b, torch.quint8),
        )

    return make


IO_CASES: dict[str, tuple[object, object]] = {
    "linear": (
        lambda: _with_weights(QNN.Linear(4, 8), (8, 4), 8),
        lambda: (torch.quantize_per_tensor(torch.randn(4, 4), 0.5, 128, torch.quint8),),
    ),
    "conv2d": (lambda: _with_weights(QNN.Conv2d(4, 6, 3, stride=2), (6, 4, 3, 3), 6), _image),
    "conv2d_relu": (
        lambda: _with_weights(torch.ao.nn.intrinsic.quantized.ConvReLU2d(4, 6, 3), (6, 4, 3, 3), 6),
        _image,
    ),
    "conv_transpose2d": (
        lambda: _with_weights(QNN.ConvTranspose2d(4, 6, 3, output_padding=(0, 1), stride=2), (4, 6, 3, 3), 6),
        _image,
    ),
    # torch's quantized kernels take an output padding as large as the stride (onnxruntime
    # refuses it): the full result is padded and cropped instead
    "conv_transpose3d_wide_output_padding": (
        lambda: _with_weights(
            QNN.ConvTranspose3d(4, 6, [2, 3, 4], output_padding=(0, 1, 2), stride=[3, 1, 2]), (4, 6, 2, 3, 4), 6
        ),
        lambda: (torch.quantize_per_tensor(torch.randn(1, 4, 3, 4, 5), 0.5, 128, torch.quint8),),
    ),
    "conv_transpose2d_wide_output_padding_padded": (
        lambda: _with_weights(
            QNN.ConvTranspose2d(4, 6, 3, padding=(1, 2), output_padding=(1, 3), stride=1), (4, 6, 3, 3), 6
        ),
        _image,
    ),
    "adaptive_avg_pool2d": (lambda: torch.nn.AdaptiveAvgPool2d((3, 2)), _image),
    "relu": (lambda: torch.nn.ReLU(), _small),
    "leaky_relu": (lambda: torch.nn.LeakyReLU(), _small),
    "quantized_leaky_relu": (lambda: QNN.LeakyReLU(2.0, 1), _small),
    "quantized_hardswish": (lambda: QNN.Hardswish(2.0, 1), _small),
    "sigmoid": (lambda: torch.nn.Sigmoid(), _small),
    "quantized_sigmoid": (lambda: QNN.Sigmoid(2.0, 1), _small),
    "hardsigmoid": (lambda: torch.nn.Hardsigmoid(), _small),
    "tanh": (lambda: torch.nn.Tanh(), _small),
    "hardtanh": (lambda: torch.nn.Hardtanh(), _small),
    "transpose": (lambda: Call(lambda x: torch.transpose(x, 0, 1)), _small),
    "expand": (lambda: Call(lambda x: x.expand(2, 4, 2, 3)), _small),
    "view": (lambda: Call(lambda x: x.view(1, 4, 6)), _small),
    "select": (lambda: Call(lambda x: x.select(1, 1)), _small),
    "flatten": (lambda: Call(torch.flatten), _small),
    "as_strided": (lambda: Call(lambda x: torch.as_strided(x, (2, 2), (1, 2))), _small),
    "layer_norm": (
        lambda: QNN.LayerNorm(
            [4, 2, 3], torch.nn.Parameter(torch.ones(4, 2, 3)), torch.nn.Parameter(torch.zeros(4, 2, 3)), 2.0, 1
        ),
        _small,
    ),
    "instance_norm": (
        lambda: QNN.InstanceNorm1d(2, torch.nn.Parameter(torch.ones(4)), torch.nn.Parameter(torch.zeros(4)), 2.0, 1),
        _small,
    ),
    "group_norm": (
        lambda: QNN.GroupNorm(
            2, 4, torch.nn.Parameter(torch.rand(4) + 0.5), torch.nn.Parameter(torch.randn(4)), 2.0, 1
        ),
        _small,
    ),
    "qfunctional_add_mul": (
        lambda: Call(lambda x, y: QNN.QFunctional().mul(QNN.QFunctional().add(x, y), x)),
        _pair(0.26, 128),
    ),
    "quantized_add_mul": (
        lambda: Call(lambda x, y: torch.ops.quantized.mul(torch.ops.quantized.add(x, y, 0.4, 100), x, 0.4, 100)),
        _pair(0.26, 128),
    ),
    "cat_different_qparams": (
        lambda: Call(lambda x, y: QNN.QFunctional().cat((x, y), dim=0)),
        _pair(0.1, 63, rows_b=1),
    ),
    "cat_same_tensor": (lambda: Call(lambda x: QNN.QFunctional().cat((x, x), dim=1)), _small),
    "quantize_two_dtypes": (
        lambda: Call(
            lambda x: (
                torch.quantize_per_tensor(x, 0.2, 0, torch.qint8),
                torch.quantize_per_tensor(x, 0.2, 128, torch.quint8),
            )
        ),
        lambda: (torch.randn(4, 6),),
    ),
    "dequantize_qint8": (
        lambda: Call(torch.dequantize),
        lambda: (torch.quantize_per_tensor(torch.randn(3, 4), 0.2, 0, torch.qint8),),
    ),
}


def _assert_quantized_outputs_match(actual: list[object], expected: object) -> None:
    """Like conftest.assert_outputs_match, but the integer values of a quantized output may
    differ by one step: torch's integer kernels and the QDQ float ops round ties apart."""
    expected_flat: list[tuple[torch.Tensor, bool]] = []
    for leaf in expected if isinstance(expected, tuple) else (expected,):
        parts = quantized_output_parts(leaf)
        expected_flat.extend((part, index == 0 and leaf.is_quantized) for index, part in enumerate(parts))
    assert len(actual) == len(expected_flat), f"{len(actual)} outputs, torch returns {len(expected_flat)}"
    for index, (got, (want, stepped)) in enumerate(zip(actual, expected_flat)):
        want_np = want.numpy()
        assert got.dtype == want_np.dtype and got.shape == want_np.shape, f"output {index}: {got.dtype}{got.shape}"  # type: ignore[union-attr]
        tolerance = 1 if stepped else 1e-6
        diff = abs(got.astype("float64") - want_np.astype("float64"))  # type: ignore[union-attr]
        assert diff.max(initial=0) <= tolerance, f"output {index}: max difference {diff.max()}"


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", sorted(IO_CASES))
def test_quantized_model_io(name: str, opset: int) -> None:
    """Quantized modules and functions with quantized inputs and outputs (as converted
    models are called after QuantStub), traced."""
    make_model, make_inputs = IO_CASES[name]
    torch.manual_seed(0)
    model = make_model()  # type: ignore[operator]
    args = make_inputs()  # type: ignore[operator]
    data, _ = export_to_bytes(model, args, opset_version=opset)
    with torch.no_grad():
        expected = model(*args)
    _assert_quantized_outputs_match(run_model(data, flatten_inputs(args)), expected)
