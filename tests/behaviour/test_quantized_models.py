"""Eager post-training-quantized models (torch.ao.quantization: QuantStub, fused conv+relu,
flatten, linear, DeQuantStub; FloatFunctional add and cat; aten ops on quantized tensors),
exported end to end and compared with eager torch within one output quantization step, for
qnnpack's per-tensor and x86's per-channel weights.
"""

from __future__ import annotations

import pytest
import torch
from cases import lowering_opsets
from conftest import Wrap, assert_matches_torch

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*torch.ao.quantization is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:.*reduce_range will be deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore:.*quantize.*deprecated:UserWarning"),
]


QOPS = torch.ops.quantized


# where the quantized layers' lowering changes (their registrations), and the newest
LAYER_OPSETS = lowering_opsets("quantized::linear", min_opset=10)


def _ptq_model(backend: str) -> torch.nn.Module:
    import torch.ao.quantization as tq

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.relu = torch.nn.ReLU()
            self.fc = torch.nn.Linear(4 * 4 * 4, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(torch.flatten(x, 1)))

    torch.backends.quantized.engine = backend
    model = Net().eval()
    model.qconfig = tq.get_default_qconfig(backend)
    tq.fuse_modules(model, [["conv", "relu"]], inplace=True)
    tq.prepare(model, inplace=True)
    for _ in range(4):
        model(torch.randn(2, 3, 6, 6))
    tq.convert(model, inplace=True)
    return model


@pytest.mark.parametrize("backend", ["qnnpack", "x86"])
def test_ptq_weights(backend: str) -> None:
    """The weights and qparams of an eager post-training-quantized model, run through the
    symbolics (x86 quantizes the weights per channel)."""
    model = _ptq_model(backend)
    conv_w, conv_b = model.conv._packed_params.unpack()
    fc_w, fc_b = QOPS.linear_unpack(model.fc._packed_params._packed_params)
    conv_b, fc_b = conv_b.detach(), fc_b.detach()
    scale_in, zp_in = float(model.quant.scale), int(model.quant.zero_point)

    def fn(x: torch.Tensor) -> torch.Tensor:
        q = torch.quantize_per_tensor(x, scale_in, zp_in, torch.quint8)
        packed = QOPS.conv2d_prepack(conv_w, conv_b, [1, 1], [0, 0], [1, 1], 1)
        y = QOPS.conv2d_relu(q, packed, model.conv.scale, model.conv.zero_point)
        y = QOPS.linear(torch.flatten(y, 1), QOPS.linear_prepack(fc_w, fc_b), model.fc.scale, model.fc.zero_point)
        return y.dequantize()

    x = torch.randn(2, 3, 6, 6)
    for opset in LAYER_OPSETS:
        assert_matches_torch(Wrap(fn), (x,), opset=opset, atol=model.fc.scale * 1.001, rtol=0)


@pytest.mark.parametrize("opset", LAYER_OPSETS)
@pytest.mark.parametrize("backend", ["qnnpack", "x86"])
def test_ptq_model(backend: str, opset: int) -> None:
    """An eager post-training-quantized model (QuantStub, fused conv+relu, flatten, linear,
    DeQuantStub) end to end; x86 quantizes the weights per channel."""
    model = _ptq_model(backend)
    assert_matches_torch(model, (torch.randn(2, 3, 6, 6),), opset=opset, atol=model.fc.scale * 1.001, rtol=0)


class _Fallback(torch.nn.Module):
    """aten ops on quantized tensors: relu, max_pool2d, avg pool, upsample, sigmoid, plus
    FloatFunctional add/cat (quantized::add, quantized::cat)."""

    def __init__(self) -> None:
        import torch.ao.quantization as tq

        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.up = torch.nn.Upsample(scale_factor=2)
        self.avg = torch.nn.AdaptiveAvgPool2d(1)
        self.sigmoid = torch.nn.Sigmoid()
        self.add = torch.ao.nn.quantized.FloatFunctional()
        self.cat = torch.ao.nn.quantized.FloatFunctional()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.conv(self.quant(x)))
        y = self.add.add(self.up(self.pool(y)), y[:, :, :6, :6])
        y = self.cat.cat([self.avg(y), self.sigmoid(self.avg(y))], 1)
        return self.dequant(y)


@pytest.mark.parametrize("opset", LAYER_OPSETS)
def test_ptq_aten_ops_on_quantized(opset: int) -> None:
    import torch.ao.quantization as tq

    torch.backends.quantized.engine = "qnnpack"
    model = _Fallback().eval()
    model.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(model, inplace=True)
    for _ in range(4):
        model(torch.randn(2, 3, 8, 8))
    tq.convert(model, inplace=True)
    assert_matches_torch(model, (torch.randn(2, 3, 8, 8),), opset=opset, atol=model.cat.scale * 1.001, rtol=0)


@pytest.fixture(autouse=True)
def _engine_restored():  # noqa: ANN202 - generator fixture
    """Each test picks the quantized engine its model is converted for; later tests get theirs."""
    previous = torch.backends.quantized.engine
    yield
    torch.backends.quantized.engine = previous
