"""Cleanup after emission: equal-valued initializers written once, as torch's exporter does."""

from __future__ import annotations

import copy
import io

import onnx
import pytest
import torch
from conftest import assert_outputs_match, run_model

import exporter
from exporter.cleanup import deduplicate_equal_initializers


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
