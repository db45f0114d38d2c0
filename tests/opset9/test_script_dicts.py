"""TorchScript dict builtins (exporter.opset9.script_dicts), in the shapes torchvision's scripted
models use them: feature maps collected in an OrderedDict and returned, heads writing
``result["out"]``, dict reads, and ``list.copy()`` (swin's shift sizes)."""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch
from conftest import NEWEST, assert_matches_torch


class _LayerGetter(torch.nn.ModuleDict):
    """torchvision.models._utils.IntermediateLayerGetter: run children in order, keep some
    outputs in an OrderedDict under new names, return the dict."""

    def __init__(self) -> None:
        super().__init__(
            OrderedDict(
                conv1=torch.nn.Conv2d(3, 4, 3, padding=1),
                relu=torch.nn.ReLU(),
                conv2=torch.nn.Conv2d(4, 6, 3, stride=2, padding=1),
                conv3=torch.nn.Conv2d(6, 8, 3, stride=2, padding=1),
            )
        )
        self.return_layers = {"relu": "low", "conv3": "out"}

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out_name = self.return_layers[name]
                out[out_name] = x
        return out


class _SegmentationHead(torch.nn.Module):
    """torchvision's segmentation models: features from the getter's dict, the result written
    into a fresh dict by key and read back."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = _LayerGetter()
        self.classifier = torch.nn.Conv2d(8, 5, 1)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        input_shape = x.shape[-2:]
        features = self.backbone(x)
        result = OrderedDict()
        y = self.classifier(features["out"])
        result["out"] = torch.nn.functional.interpolate(y, size=input_shape, mode="bilinear", align_corners=False)
        result["low_mean"] = features["low"].mean(dim=1, keepdim=True)
        return result


class _DictBuiltins(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        d: dict[str, torch.Tensor] = {}
        d["a"] = x + 1
        d["b"] = x * 2
        d.update({"c": x - 3})
        e = d.copy()
        e["a"] = x * 0  # the copy is separate
        total = torch.zeros_like(x)
        for value in d.values():
            total = total + value
        for key, value in d.items():
            if key != "b":
                total = total + value
        missing = d.get("z", x.neg())
        popped = d.pop("b")
        return total + e["a"], missing + d.setdefault("q", x), popped * len(d)


class _ListCopy(torch.nn.Module):
    """swin's ``shift_size = self.shift_size.copy()`` then an item write."""

    def __init__(self) -> None:
        super().__init__()
        self.shift = [1, 2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shift = self.shift.copy()
        if x.size(-1) <= 4:
            shift[1] = 0
        return torch.roll(x, shifts=(shift[0], shift[1]), dims=(-2, -1)) + self.shift[1]


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_layer_getter_dict_output(opset: int) -> None:
    model = torch.jit.script(_LayerGetter())
    onnx_model = assert_matches_torch(model, (torch.randn(1, 3, 8, 8),), opset=opset)
    assert [v.name for v in onnx_model.graph.outputs] == ["low", "out"]


@pytest.mark.parametrize("opset", [11, NEWEST])
def test_segmentation_result_dict(opset: int) -> None:
    model = torch.jit.script(_SegmentationHead())
    assert_matches_torch(model, (torch.randn(1, 3, 16, 12),), opset=opset, atol=1e-4)


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_dict_builtins(opset: int) -> None:
    assert_matches_torch(torch.jit.script(_DictBuiltins()), (torch.randn(2, 3),), opset=opset)


@pytest.mark.parametrize("opset", [10, NEWEST])
def test_list_copy(opset: int) -> None:
    assert_matches_torch(torch.jit.script(_ListCopy()), (torch.randn(1, 5, 6),), opset=opset)


class _NamedFeatures(torch.nn.Module):
    """SSDLite's extractor: ``OrderedDict([(str(i), v) for i, v in enumerate(output)])``."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        output = [x, x * 2, x + 1]
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_dict_keyed_by_str_of_loop_index(opset: int) -> None:
    model = torch.jit.script(_NamedFeatures())
    onnx_model = assert_matches_torch(model, (torch.randn(2, 3),), opset=opset)
    assert [v.name for v in onnx_model.graph.outputs] == ["0", "1", "2"]
