"""Capture of scripted models (exporter/capture/script.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import BASE_OPSETS, assert_matches_torch

import exporter
from exporter.capture import Captured, capture


def test_captured_has_no_eager_outputs_field() -> None:
    assert "outputs" not in {f.name for f in dataclasses.fields(Captured)}


def test_scripted_module_params_keep_state_dict_names() -> None:
    captured = capture(torch.jit.script(torch.nn.Linear(2, 3)), (torch.ones(1, 2),))
    assert captured.input_names == ["input"]
    assert sorted(captured.param_names) == ["bias", "weight"]


def test_scripted_keyword_and_default_arguments_are_bound() -> None:
    @torch.jit.script
    def scale(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
        return x * factor

    captured = capture(scale, (torch.ones(2),))
    assert len(list(captured.graph.inputs())) == 1  # the float became a constant


def test_scripted_unknown_keyword_is_an_error() -> None:
    @torch.jit.script
    def identity(x: torch.Tensor) -> torch.Tensor:
        return x

    with pytest.raises(TypeError, match="unexpected keyword"):
        capture(identity, (torch.ones(2), {"y": 1}))


def test_scripted_model_that_raises_on_the_example_is_reported() -> None:
    @torch.jit.script
    def checks(x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError("wants rank 3")
        return x

    with pytest.raises(ValueError, match="raised on the example inputs"):
        capture(checks, (torch.ones(2),))


class _ConvNoBiasNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, kernel_size=1, bias=False)  # bias is a None parameter
        self.norm = torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x))


@pytest.mark.parametrize("training", [False, True], ids=["eval", "training"])
@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_scripted_module_with_none_parameter_and_training_flag(opset: int, training: bool) -> None:
    """A frozen scripted module keeps a None parameter (Conv2d(bias=False)) and, in training
    mode, its bool ``training`` as attributes; both are read as constants, not graph inputs."""
    module = _ConvNoBiasNorm().train(training)
    mode = exporter.TrainingMode.TRAINING if training else exporter.TrainingMode.EVAL
    model = torch.jit.script(module)
    x = torch.randn(2, 3, 5, 5)
    # training-mode batch norm uses the batch statistics, the same in torch and ONNX
    assert_matches_torch(model, (x,), opset=opset, training=mode, rtol=1e-3, atol=1e-5)


def _scripted_encoder() -> torch.jit.ScriptModule:
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    return torch.jit.script(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval())


@pytest.mark.parametrize("when", ["export inside", "ran before"])
def test_scripted_model_exports_whatever_the_graph_executor_optimization(when: str) -> None:
    """torch inlines a callee from a graph it builds and caches on first use, optimized only if
    the graph executor optimizes then; with ``torch.jit.optimized_execution(False)`` (around the
    export, or around the model's first runs) its calls stayed nested and lowering failed ("the
    only valid use of a module is looking up an attribute", "Couldn't find method:
    'merge_masks'")."""
    import warnings

    model = _scripted_encoder()
    x, mask = torch.randn(2, 5, 16), torch.zeros(2, 5, dtype=torch.bool)
    mask[1, 3:] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if when == "ran before":
            with torch.jit.optimized_execution(False), torch.no_grad():
                model(x, None, mask)
                model(x, None, mask)
            assert_matches_torch(model, (x, None, mask), opset=17, rtol=1e-4, atol=1e-5)
        else:
            with torch.jit.optimized_execution(False):
                assert_matches_torch(model, (x, None, mask), opset=17, rtol=1e-4, atol=1e-5)
