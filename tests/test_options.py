"""Export options and input/output structure."""

from __future__ import annotations

import io

import numpy as np
import onnx_ir as ir
import pytest
import torch
from conftest import assert_matches_torch, export_to_bytes, run_model

import exporter
from exporter.graph_context import GraphContext
from exporter.registry import REGISTRY


class Nested(torch.nn.Module):
    def forward(
        self, pair: tuple[torch.Tensor, torch.Tensor], extra: dict[str, torch.Tensor], scale: torch.Tensor | None = None
    ):  # noqa: ANN201
        a, b = pair
        out = a + b * extra["w"]
        if scale is not None:
            out = out * scale
        return {"sum": out, "parts": (a, b.sum())}


def test_nested_inputs_and_outputs_flatten_in_documented_order() -> None:
    """Inputs flatten depth first, dict values in insertion order, named <arg>_<index|key>;
    outputs likewise; None inputs are left out."""
    pair = (torch.randn(3), torch.randn(3))
    extra = {"w": torch.randn(3)}
    # a trailing dict means keyword arguments (torch.onnx.export's rule): end with {} to pass
    # a dict positionally
    data, model = export_to_bytes(Nested(), (pair, extra, {}))
    assert [v.name for v in model.graph.inputs] == ["pair_0", "pair_1", "extra_w"]
    assert [v.name for v in model.graph.outputs] == ["output_0", "output_1", "output_2"]
    got = run_model(data, [pair[0], pair[1], extra["w"]])
    want = Nested()(pair, extra)
    np.testing.assert_allclose(got[0], want["sum"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got[1], want["parts"][0].numpy())
    np.testing.assert_allclose(got[2], want["parts"][1].numpy(), rtol=1e-6)


def test_output_names_count_checked() -> None:
    with pytest.raises(ValueError, match="output_names has 4 names but the model has 3"):
        export_to_bytes(
            Nested(), ((torch.randn(3), torch.randn(3)), {"w": torch.randn(3)}, {}), output_names=list("abcd")
        )


def test_training_mode_dropout_drops_from_opset_12() -> None:
    model = torch.nn.Sequential(torch.nn.Dropout(0.5))
    x = torch.ones(100, 100)
    data, onnx_model = export_to_bytes(model, (x,), training=exporter.TrainingMode.TRAINING, opset_version=13)
    (out,) = run_model(data, [x])
    kept = out != 0
    assert 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(out[kept], 2.0)
    assert model.training  # restored (it was in training mode before)
    with pytest.raises(exporter.SymbolicError, match="opset 12"):
        export_to_bytes(model, (x,), training=exporter.TrainingMode.TRAINING, opset_version=11)


def test_eval_and_preserve_modes() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).train()
    _, onnx_model = export_to_bytes(model, (torch.randn(2, 4),))  # EVAL by default: no Dropout
    assert "Dropout" not in {n.op_type for n in onnx_model.graph}
    _, onnx_model = export_to_bytes(
        model, (torch.randn(2, 4),), training=exporter.TrainingMode.PRESERVE, opset_version=13
    )
    assert "Dropout" in {n.op_type for n in onnx_model.graph}


def test_batch_norm_in_training_mode_uses_batch_statistics() -> None:
    model = torch.nn.BatchNorm1d(4)
    x = torch.randn(8, 4) * 3 + 1
    buffer = io.BytesIO()
    exporter.export(model, (x,), buffer, training=exporter.TrainingMode.TRAINING)
    (got,) = run_model(buffer.getvalue(), [x])
    want = torch.nn.functional.batch_norm(x, None, None, training=True)
    np.testing.assert_allclose(got, want.numpy(), atol=1e-5)


def test_exports_are_byte_identical() -> None:
    model = torch.nn.TransformerEncoderLayer(16, 4, 32).eval()
    x = torch.randn(5, 2, 16)
    first, _ = export_to_bytes(model, (x,))
    second, _ = export_to_bytes(model, (x,))
    assert first == second


def test_verbose_prints_the_graph(capsys) -> None:
    export_to_bytes(torch.nn.ReLU(), (torch.randn(2),), verbose=True)
    assert "Relu" in capsys.readouterr().out


def test_verify_option_refuses_a_wrong_model() -> None:
    def abs_instead(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Abs", self)

    with REGISTRY.scoped_custom("aten::relu", 9, abs_instead):
        with pytest.raises(exporter.VerificationError, match="onnxruntime disagrees"):
            exporter.export(torch.nn.ReLU(), (torch.randn(50),), io.BytesIO(), verify=True)


def test_concurrent_exports_in_threads() -> None:
    import concurrent.futures

    models = [
        (torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval(), (torch.randn(1, 3, 8, 8),), 11),
        (torch.nn.TransformerEncoderLayer(16, 4, 32).eval(), (torch.randn(5, 2, 16),), 17),
        (torch.nn.LSTM(4, 8, 2).eval(), (torch.randn(5, 2, 4),), 20),
    ] * 2

    def run(item):  # noqa: ANN001, ANN202
        model, args, opset = item
        buffer = io.BytesIO()
        exporter.export(model, args, buffer, opset_version=opset)
        return exporter.verify(model, args, buffer.getvalue(), atol=1e-5).passed

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        assert all(pool.map(run, models))


@pytest.mark.parametrize("opset", [9, 17])
def test_conv_batchnorm_folds_in_eval_with_constant_folding(opset: int) -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, bias=False),
        torch.nn.BatchNorm2d(4),
    ).eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.normal_()
                module.running_var.uniform_(0.5, 2)
                module.weight.normal_()
                module.bias.normal_()
    x = torch.randn(2, 3, 10, 10)

    folded = assert_matches_torch(model, (x,), opset=opset, atol=1e-5)
    assert [n.op_type for n in folded.graph] == ["Conv", "Relu", "Conv"]
    assert sorted(folded.graph.initializers) == ["0.bias", "0.weight", "3.weight", "4.bias"]
    kept = assert_matches_torch(model, (x,), opset=opset, atol=1e-5, do_constant_folding=False)
    assert [n.op_type for n in kept.graph].count("BatchNormalization") == 2
    # folded weights are computed while the file is written, one at a time, not held by the
    # model from folding on (for a ResNet-50, as many bytes as its weights)
    weight = folded.graph.initializers["0.weight"].const_value
    assert isinstance(weight, exporter.tensors.DeferredTorchTensor)
    bn = model[1]
    expected = model[0].weight * (bn.weight / torch.sqrt(bn.running_var + bn.eps)).reshape(-1, 1, 1, 1)
    torch.testing.assert_close(torch.from_numpy(weight.numpy()), expected.detach(), atol=1e-6, rtol=0)


def test_node_names_carry_the_module_path() -> None:
    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.query = torch.nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.query(x))

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attention = Attention()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.attention(x)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.ModuleList([Layer(), Layer()])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layer:
                x = layer(x)
            return x

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.encoder(x)

    _, onnx_model = export_to_bytes(Model(), (torch.randn(2, 3, 4),))
    names = [n.name for n in onnx_model.graph]
    assert "/encoder/layer.0/attention/query/MatMul" in names
    assert "/encoder/layer.1/attention/Relu" in names
    assert set(onnx_model.graph.initializers) >= {
        "encoder.layer.0.attention.query.weight.T",
        "encoder.layer.1.attention.query.bias",
    }
