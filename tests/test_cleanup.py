"""Cleanup after emission (exporter/cleanup/): equal-valued initializers written once, as torch's
exporter does, from the answers capture.equal_weights.EqualWeights computed in the background;
eval BatchNorm folded into the Conv before it under do_constant_folding."""

from __future__ import annotations

import copy
import io

import onnx
import pytest
import torch
from cases import lowering_opsets
from conftest import DEFAULT_OPSET, assert_matches_torch, assert_outputs_match, export_to_bytes, run_model

import exporter
from exporter.capture.equal_weights import EqualWeights
from exporter.capture.equal_weights import module_weights as cleanup_module_weights
from exporter.cleanup.deduplicate import deduplicate_equal_initializers


def _clones(n: int) -> torch.nn.Module:
    """n deep copies of one block: equal weights under n state_dict keys (as TransformerEncoder)."""
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8))
    return torch.nn.Sequential(*[copy.deepcopy(block) for _ in range(n)]).eval()


def _initializer_names(data: bytes) -> list[str]:
    return [t.name for t in onnx.load_from_string(data).graph.initializer]


def _export(model: torch.nn.Module, x: torch.Tensor, **kwargs: object) -> bytes:
    buffer = io.BytesIO()
    exporter.export(model, (x,), buffer, opset_version=17, **kwargs)
    return buffer.getvalue()


def test_equal_weights_are_written_once_and_the_model_still_matches() -> None:
    model, x = _clones(3), torch.randn(2, 8)
    data = _export(model, x)
    names = _initializer_names(data)
    # one Linear weight and bias, one LayerNorm weight and bias: the first layer's keys
    assert sorted(names) == ["0.0.bias", "0.0.weight", "0.1.bias", "0.1.weight"]
    assert_outputs_match(run_model(data, [x]), model(x))


@pytest.mark.filterwarnings("ignore")
def test_as_many_initializers_as_torch_writes() -> None:
    model, x = _clones(4), torch.randn(2, 8)
    ours = _initializer_names(_export(model, x))
    buffer = io.BytesIO()
    torch.onnx.export(model, (x,), buffer, opset_version=17, dynamo=False)  # noqa: TID251 - only to compare
    assert len(ours) == len(_initializer_names(buffer.getvalue()))


def test_weights_equal_only_where_sampled_stay_apart() -> None:
    """The bucket key reads a sample of the elements; the whole tensors decide."""
    model = torch.nn.Sequential(torch.nn.Linear(64, 64, bias=False), torch.nn.Linear(64, 64, bias=False)).eval()
    with torch.no_grad():
        model[1].weight.copy_(model[0].weight)
        model[1].weight[3, 5] += 1.0  # not a sampled element (every 64th of 4096, in either order)
    x = torch.randn(2, 64)
    data = _export(model, x)
    assert len(_initializer_names(data)) == 2  # MatMul's transposed weights, one per layer
    assert_outputs_match(run_model(data, [x]), model(x))


@pytest.mark.parametrize(
    "options",
    [
        {"do_constant_folding": False},
        {"keep_initializers_as_inputs": True},
        {"training": exporter.TrainingMode.TRAINING},
    ],
    ids=["no_folding", "initializers_as_inputs", "training"],
)
def test_kept_apart_where_the_interface_or_training_needs_each(options: dict[str, object]) -> None:
    model, x = _clones(2), torch.randn(2, 8)
    assert len(_initializer_names(_export(model, x, **options))) == 8


def test_the_pass_reports_what_it_removed() -> None:
    model, x = _clones(3), torch.randn(2, 8)
    onnx_model = exporter.export(model, (x,), io.BytesIO(), opset_version=17)
    assert deduplicate_equal_initializers(onnx_model) == 0  # already done by the export
    assert len(onnx_model.graph.initializers) == 4


def test_weights_compared_during_emission_answer_as_torch_equal() -> None:
    """EqualWeights compares the model's weights in a background thread; its answers for views
    of them are torch.equal's, and it says nothing where its comparisons do not decide."""
    torch.manual_seed(0)
    first = torch.randn(6, 4)
    weights = [first, first.clone(), torch.randn(6, 4), torch.randn(3, 8)]
    different = first.clone()
    different[5, 3] += 1.0  # not sampled by the bucket key: only a whole comparison tells
    weights.append(different)
    equal_weights = EqualWeights(weights)
    assert equal_weights.equal(weights[0].t(), weights[1].t()) is True  # transposed views, equal
    assert equal_weights.equal(weights[0], weights[1]) is True
    assert equal_weights.equal(weights[0].t(), weights[4].t()) is False  # every element viewed
    assert equal_weights.equal(weights[0][:2], weights[4][:2]) is None  # a part: not decided
    assert equal_weights.equal(weights[0].t(), weights[1]) is None  # not the same view
    assert equal_weights.equal(torch.ones(6, 4), weights[0]) is None  # not a compared weight


def test_deduplication_with_background_answers_removes_the_same_weights() -> None:
    model, x = _clones(3), torch.randn(2, 8)
    with_answers = exporter.export(model, (x,), io.BytesIO(), opset_version=17, do_constant_folding=False)
    without = exporter.export(model, (x,), io.BytesIO(), opset_version=17, do_constant_folding=False)
    params = [p.detach() for p in model.parameters()]
    assert deduplicate_equal_initializers(with_answers, EqualWeights(params)) == 8
    assert deduplicate_equal_initializers(without) == 8
    assert list(with_answers.graph.initializers) == list(without.graph.initializers)


def test_module_weights_list_its_parameters_and_deduplication_still_removes_the_clones() -> None:
    """For a module, the comparisons start on ``module_weights`` before the capture: that list
    holds its parameters, and the export still writes each cloned layer's weights once."""
    model, x = _clones(3), torch.randn(2, 8)
    weights = cleanup_module_weights(model)
    assert {id(w) for w in weights} == {id(p) for p in model.parameters()}
    onnx_model = exporter.export(model, (x,), io.BytesIO(), opset_version=17)
    assert len(onnx_model.graph.initializers) == 4


def test_a_value_thousands_of_nodes_deep_is_judged_without_recursion() -> None:
    """Whether a value that read a folded input shape (``x.view_as(y)``) is computed from
    constants alone is decided by walking its producers; a recursive walk overflowed Python's
    stack on a 600-op chain (timm's mobilenetv5_300m)."""

    class Deep(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            for _ in range(600):
                x = x * 1.0001 + 0.5
            return x.view_as(y)

    x, y = torch.rand(2, 3), torch.rand(3, 2)
    buffer = io.BytesIO()
    exporter.export(Deep(), (x, y), buffer, opset_version=17)
    onnx_model = onnx.load_from_string(buffer.getvalue())
    assert [i.name for i in onnx_model.graph.input] == ["x", "y"]  # y kept, as torch keeps it
    assert_outputs_match(run_model(buffer.getvalue(), [x, y]), Deep()(x, y))


def test_buffers_a_traced_forward_writes_are_compared_as_it_left_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real trace runs the forward, which may write a buffer in place while the comparisons
    started before the capture read it: those answers are dropped and the weights compared
    again after the capture. Here ``b`` equals ``a`` until the forward changes one element
    that the bucket sample does not read, so only a whole comparison tells them apart."""

    class Counting(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("a", torch.zeros(1000, 100))
            self.register_buffer("b", torch.zeros(1000, 100))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.b[7, 3] += 1.0
            return x + self.a * 2 + self.b * 3

    from exporter.capture import meta_trace

    monkeypatch.setattr(meta_trace, "MODE", "real")  # (a meta trace leaves the buffers as they were)
    for _ in range(4):  # the comparisons race the forward: one run could pass by chance
        model = Counting().eval()
        onnx_model = exporter.export(model, (torch.randn(1000, 100),), io.BytesIO(), opset_version=17)
        assert sorted(onnx_model.graph.initializers) == ["a", "b"]


def test_cancelled_comparisons_answer_nothing() -> None:
    first = torch.randn(6, 4)
    equal_weights = EqualWeights([first, first.clone()])
    equal_weights.cancel()
    assert equal_weights.equal(first, first.clone()) is None


@pytest.mark.parametrize("opset", lowering_opsets("aten::batch_norm", "aten::_convolution"))
def test_conv_batchnorm_folds_in_eval_with_constant_folding(opset: int) -> None:
    model = _conv_batchnorm_model()
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


def test_folded_conv_weights_are_written_a_few_output_channels_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """With chunks of a few channels (4 MiB in use), the file holds the same folded weights."""
    from exporter import serialization

    model = _conv_batchnorm_model()
    x = torch.randn(2, 3, 10, 10)
    whole = export_to_bytes(model, (x,))[0]
    monkeypatch.setattr(serialization, "_CHUNK_BYTES", 200)
    chunked = assert_matches_torch(model, (x,), opset=DEFAULT_OPSET, atol=1e-5)
    assert serialization._computed_in_rows(chunked.graph.initializers["0.weight"].const_value)
    assert export_to_bytes(model, (x,))[0] == whole


def _conv_batchnorm_model() -> torch.nn.Module:
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
    return model
