"""Objects of TorchScript classes in scripted models, in the shapes torchvision's detection
models use them (exporter.capture.module_attributes and lowering): an object created in forward and
read back (``ImageList(tensors, image_sizes)`` returned by the transform), a module holding an
object whose attributes are constants (``self.box_coder.weights``), an attribute cached on the
module in forward (``self.scales = ...``), and an item written into an int list computed at run
time (``max_size[1] = ...`` of ``max_by_axis``)."""

from __future__ import annotations

import io
import math
from typing import List, Optional  # noqa: UP035 - for TorchScript's class annotation

import pytest
import torch
from conftest import BASE_OPSETS, FEATURE_OPSETS, SEQUENCE_OPSETS, assert_matches_torch

import exporter


@torch.jit.script
class _ImageList:
    def __init__(self, tensors: torch.Tensor, image_sizes: list[tuple[int, int]]) -> None:
        self.tensors = tensors
        self.image_sizes = image_sizes


class _BoxCoder:
    """A plain Python class a module holds: scripting compiles it as a TorchScript class."""

    def __init__(self, weights: tuple[float, float], clip: float) -> None:
        self.weights = weights
        self.clip = clip

    def decode(self, deltas: torch.Tensor) -> torch.Tensor:
        wx, wy = self.weights
        return torch.clamp(deltas / wx + wy, max=self.clip)


class _Transform(torch.nn.Module):
    """Batch images of different sizes padded to a multiple of 4 (torchvision's batch_images)."""

    def max_by_axis(self, the_list: list[list[int]]) -> list[int]:
        maxes = the_list[0]
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def forward(self, images: list[torch.Tensor]) -> tuple[_ImageList, int]:
        sizes = [list(img.shape) for img in images]
        max_size = self.max_by_axis(sizes)
        stride = 4.0
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
        batched = images[0].new_full([len(images)] + max_size, 0.0)
        for i in range(len(images)):
            img = images[i]
            batched[i, : img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
        image_sizes: list[tuple[int, int]] = []
        for img in images:
            image_sizes.append((img.shape[-2], img.shape[-1]))
        return _ImageList(batched, image_sizes), len(images)


class _Detector(torch.nn.Module):
    __annotations__ = {"scales": Optional[List[float]]}  # noqa: RUF012, UP006, UP045 - TorchScript reads it

    def __init__(self) -> None:
        super().__init__()
        self.transform = _Transform()
        self.conv = torch.nn.Conv2d(3, 2, 3, padding=1)
        self.box_coder = _BoxCoder((2.0, 0.5), 1.5)
        self.scales = None

    def forward(self, images: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        image_list, count = self.transform(images)
        self.scales = [float(s) / 4.0 for s in image_list.image_sizes[0]]
        features = self.box_coder.decode(self.conv(image_list.tensors))
        scales = self.scales
        assert scales is not None
        first = image_list.image_sizes[0]
        return features * scales[0] * count, torch.tensor(first)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_image_list_object_and_box_coder(opset: int) -> None:
    model = torch.jit.script(_Detector().eval())
    images = [torch.randn(3, 10, 13)]
    assert_matches_torch(model, (images,), opset=opset)


class _SetItemOnRunTimeShape(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = list(x.shape)
        size[-1] = int(math.ceil(float(size[-1]) / 4.0) * 4.0)
        size[0] = size[0] + 1
        return x.new_zeros(size)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_item_written_into_run_time_int_list(opset: int) -> None:
    model = torch.jit.script(_SetItemOnRunTimeShape())
    assert_matches_torch(
        model,
        (torch.randn(2, 3, 5),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": {0: "a", 2: "b"}},
        other_inputs=[(torch.randn(3, 3, 9),)],
    )


class _LevelMapper:
    """torchvision's LevelMapper: an object built from the first input, cached on the module."""

    def __init__(self, k_min: int, k_max: int, eps: float = 1e-6) -> None:
        self.k_min = k_min
        self.k_max = k_max
        self.eps = eps

    def __call__(self, boxes: torch.Tensor) -> torch.Tensor:
        levels = torch.floor(torch.log2(boxes.abs() + self.eps))
        return torch.clamp(levels, min=self.k_min, max=self.k_max)


class _LazyCache(torch.nn.Module):
    """MultiScaleRoIAlign: ``if self.scales is None or self.map_levels is None: compute them``;
    exported after a call filled the cache, the check is decided and the object's attributes
    become constants."""

    __annotations__ = {"scales": Optional[List[float]], "map_levels": Optional[_LevelMapper]}  # noqa: RUF012, UP006, UP045

    def __init__(self) -> None:
        super().__init__()
        self.scales = None
        self.map_levels = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.scales is None or self.map_levels is None:
            self.scales = [1.0 / x.shape[-1]]
            self.map_levels = _LevelMapper(int(x.shape[0]), int(x.shape[0]) + 2)
        mapper = self.map_levels
        scales = self.scales
        if mapper is None or scales is None:
            raise ValueError("not set up")
        return mapper(x) * scales[0]


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_lazily_cached_object(opset: int) -> None:
    model = torch.jit.script(_LazyCache())
    x = torch.randn(2, 7) * 10
    model(x)  # fills the cache, as an eager run before export does
    assert_matches_torch(model, (x,), opset=opset)


class _RepeatedList(torch.nn.Module):
    """DefaultBoxGenerator: ``torch.stack((a, b) * len(pairs), dim=-1)`` (list repetition)."""

    def __init__(self) -> None:
        super().__init__()
        self.pairs = [torch.ones(3, 2), torch.ones(2, 2)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = [x, x + 1]
        left = torch.stack(parts * len(self.pairs[0]), dim=-1)
        right = torch.stack(2 * [x], dim=0)
        return left.sum(-1) + right.sum(0)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_list_repetition(opset: int) -> None:
    assert_matches_torch(torch.jit.script(_RepeatedList()), (torch.randn(4),), opset=opset)


@torch.jit.script
class Hypothesis:
    def __init__(self, tokens: torch.Tensor, score: float) -> None:
        self.tokens = tokens
        self.score = score

    def extend(self, token: int, logp: float) -> Hypothesis:
        return Hypothesis(torch.cat([self.tokens, torch.tensor([token])]), self.score + logp)


class ScriptClassDecoder(torch.nn.Module):
    def forward(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hyp = Hypothesis(torch.zeros(1, dtype=torch.long), 0.0)
        logp = torch.log_softmax(logits, -1)
        for t in range(logits.size(0)):
            k = int(logp[t].argmax())
            hyp = hyp.extend(k, float(logp[t, k]))
        return hyp.tokens, torch.tensor(hyp.score)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_script_class_objects(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(ScriptClassDecoder()), (torch.randn(4, 6),), opset=opset, other_inputs=[(torch.randn(4, 6),)]
    )


def test_script_class_object_in_a_run_time_loop_fails_by_name() -> None:
    model = torch.jit.script(ScriptClassDecoder())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "t"}}}
    with pytest.raises(exporter.ExporterError, match=r"prim::Loop.*Hypothesis carried through a loop") as info:
        exporter.export(model, (torch.randn(4, 6),), io.BytesIO(), opset_version=17, **dynamic)
    assert "test_script_objects.py:" in str(info.value)


@torch.jit.script
class Box:
    def __init__(self, lo: torch.Tensor, hi: torch.Tensor) -> None:
        self.lo = lo
        self.hi = hi


class PickBox(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            box = Box(x.min(0)[0], x.max(0)[0])
        else:
            box = Box(x[0], x[-1])
        return box.hi - box.lo


def test_a_script_class_object_chosen_at_run_time_fails_by_name() -> None:
    with pytest.raises(exporter.ExporterError, match=r"prim::If .*test_script_objects.py:\d+.*ScriptObject\(.*Box\)"):
        exporter.export(torch.jit.script(PickBox()), (torch.randn(3, 2),), io.BytesIO(), opset_version=17)
