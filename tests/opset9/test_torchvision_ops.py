"""torchvision's operators (exporter.opset9.torchvision_ops): nms, roi_align, roi_pool, deform_conv2d.

torchvision itself is not needed: tests/torchvision_shim.py defines the ``torchvision::*`` schemas
(torchvision's names and argument names) with plain-torch reference kernels when torchvision's
compiled ops are missing, so these models record the same ``torchvision::`` nodes a torchvision
model does. Each case runs at the opsets where its lowering changes (tests/cases.py).
"""

from __future__ import annotations

import io

import pytest
import torch
import torchvision_shim
from cases import Case, lowering_opsets_below, op_params, run_case
from conftest import NEWEST, ORT_COMPLETE_OPSET, assert_matches_torch, export_to_bytes, opsets_from, run_model

import exporter
from exporter.errors import ExporterError
from exporter.registry import REGISTRY

torchvision_shim.define_ops()
ops = torch.ops.torchvision


def boxes_and_scores(n: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Overlapping boxes (x1, y1, x2, y2) in a 20x20 square, with distinct scores (no ties, whose
    order torch and onnxruntime may break differently)."""
    corner = torch.rand(n, 2) * 14
    size = torch.rand(n, 2) * 6 + 1
    scores = torch.randperm(n).to(torch.float32) / n + 0.01
    return torch.cat([corner, corner + size], dim=1).to(dtype), scores.to(dtype)


def features_and_rois(n_rois: int = 5, batch: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """A (batch, 3, 10, 12) feature map and rois (batch index, x1, y1, x2, y2) in image pixels
    (2x the feature map: spatial_scale 0.5), each at least 2 feature pixels wide and high, with
    fractional corners and some reaching past the border."""
    features = torch.randn(batch, 3, 10, 12)
    corner = torch.rand(n_rois, 2) * torch.tensor([20.0, 16.0]) - 1
    size = torch.rand(n_rois, 2) * 8 + 4
    index = torch.randint(0, batch, (n_rois, 1)).to(torch.float32)
    return features, torch.cat([index, corner, corner + size], dim=1)


def _nms(boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    return ops.nms(boxes, scores, 0.4)


def _roi_align(aligned: bool, sampling_ratio: int) -> object:
    def fn(x: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
        return ops.roi_align(x, rois, 0.5, 3, 4, sampling_ratio, aligned)

    return fn


def _roi_pool(x: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
    return ops.roi_pool(x, rois, 0.5, 3, 2)[0]


def _nms_then_gather(boxes: torch.Tensor, scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Detection post-processing's shape: keep = nms(...), then index boxes and scores by it."""
    keep = ops.nms(boxes, scores, 0.5)[:5]
    return boxes[keep], scores[keep]


@torch.jit.script
def _scripted_nms(boxes: torch.Tensor, scores: torch.Tensor, threshold: float) -> torch.Tensor:
    keep = torch.ops.torchvision.nms(boxes, scores, 0.3)
    return keep[scores[keep] > threshold]


CASES = [
    Case("nms", _nms, lambda: boxes_and_scores(30), min_opset=10),
    Case("nms_float64", _nms, lambda: boxes_and_scores(12, torch.float64), min_opset=10),
    Case(
        "nms_dynamic_boxes",
        _nms,
        lambda: boxes_and_scores(30),
        min_opset=10,
        dynamic={"x0": {0: "n"}, "x1": {0: "n"}},
        others=lambda: [boxes_and_scores(7), boxes_and_scores(50)],
    ),
    Case("nms_then_gather", _nms_then_gather, lambda: boxes_and_scores(25), min_opset=10),
    Case(
        "nms_scripted",
        _scripted_nms,
        lambda: (*boxes_and_scores(25), torch.tensor(0.3)),
        min_opset=11,
        script=True,
    ),
    Case("roi_align", _roi_align(False, 2), features_and_rois, min_opset=10),
    Case("roi_align_adaptive", _roi_align(False, -1), features_and_rois, min_opset=10),
    Case("roi_align_aligned", _roi_align(True, 2), features_and_rois, min_opset=10),
    Case("roi_align_aligned_adaptive", _roi_align(True, 0), features_and_rois, min_opset=10),
    Case(
        "roi_align_dynamic_rois",
        _roi_align(True, 2),
        features_and_rois,
        min_opset=10,
        dynamic={"x1": {0: "k"}},
        others=lambda: [features_and_rois(1), features_and_rois(9)],
    ),
    Case("roi_pool", _roi_pool, features_and_rois),
]

# MaxRoiPool-22 (bfloat16 added) has no onnxruntime 1.32 kernel and onnx's reference evaluator
# has no MaxRoiPool at all: from 22 on the export is only checked (test_roi_pool_from_22)
_NO_RUNTIME = {"roi_pool": 22}


@pytest.mark.parametrize(
    ("case", "opset"),
    [p for p in op_params(CASES) if p.values[1] < _NO_RUNTIME.get(p.values[0].name, NEWEST + 1)],
)
def test_torchvision_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize("opset", opsets_from(ORT_COMPLETE_OPSET))
def test_roi_pool_from_22(opset: int) -> None:
    """MaxRoiPool is the lowering at every opset; at 22 and later the file passes onnx's full
    check (no runtime runs MaxRoiPool-22 to compare it); at 21 onnxruntime still runs it."""
    import onnx

    x, rois = features_and_rois()
    data, model = export_to_bytes(_Module(_roi_pool), (x, rois), opset_version=opset)
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    assert [n.op_type for n in model.graph] == ["MaxRoiPool"]
    if opset < _NO_RUNTIME["roi_pool"]:
        assert_matches_torch(_Module(_roi_pool), (x, rois), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets_below("torchvision::roi_align"))
def test_roi_align_aligned_emulated_below_16(opset: int) -> None:
    """Below opset 16 aligned=True is RoiAlign on boxes shifted by -0.5/spatial_scale, which
    matches torchvision at every opset from 10 (the table above runs 10 and 16 on)."""
    x, rois = features_and_rois(6)
    model = assert_matches_torch(_Module(_roi_align(True, 2)), (x, rois), opset=opset)
    node = next(n for n in model.graph if n.op_type == "RoiAlign")
    assert "coordinate_transformation_mode" not in node.attributes


def test_roi_align_16_states_its_mode() -> None:
    """RoiAlign-16 defaults to half_pixel; aligned=False must say output_half_pixel."""
    x, rois = features_and_rois()
    model = assert_matches_torch(_Module(_roi_align(False, 2)), (x, rois), opset=16)
    node = next(n for n in model.graph if n.op_type == "RoiAlign")
    assert node.attributes["coordinate_transformation_mode"].value == "output_half_pixel"


class _Module(torch.nn.Module):
    def __init__(self, fn: object) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> object:
        return self.fn(*args)  # type: ignore[operator]


class _DeformConv(torch.nn.Module):
    """torchvision.ops.DeformConv2d's call: offsets (and the v2 mask) from the input by convs."""

    def __init__(self, use_mask: bool, groups: int = 1, offset_groups: int = 1) -> None:
        super().__init__()
        self.use_mask = use_mask
        self.groups, self.offset_groups = groups, offset_groups
        self.weight = torch.nn.Parameter(torch.randn(6, 4 // groups, 3, 3) * 0.2)
        self.bias = torch.nn.Parameter(torch.randn(6))
        self.offset = torch.nn.Conv2d(4, 2 * offset_groups * 9, 3, padding=1)
        self.mask = torch.nn.Conv2d(4, offset_groups * 9, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        offset = self.offset(x) * 2
        mask = torch.sigmoid(self.mask(x)) if self.use_mask else torch.zeros(0)
        return ops.deform_conv2d(
            x, self.weight, offset, mask, self.bias, 1, 1, 1, 1, 1, 1, self.groups, self.offset_groups, self.use_mask
        )


@pytest.mark.parametrize(
    ("use_mask", "groups", "offset_groups"), [(False, 1, 1), (True, 1, 1), (True, 2, 2)], ids=["v1", "v2", "groups"]
)
def test_deform_conv2d(use_mask: bool, groups: int, offset_groups: int) -> None:
    """DeformConv-19 against the shim's bilinear-sampling reference."""
    model = _DeformConv(use_mask, groups, offset_groups)
    x = torch.randn(2, 4, 7, 8)
    assert_matches_torch(model, (x,), opset=NEWEST if NEWEST >= 19 else 19, atol=1e-4)


def test_deform_conv2d_below_19_is_refused_with_the_opset() -> None:
    with pytest.raises(ExporterError, match="torchvision::deform_conv2d"):
        export_to_bytes(_DeformConv(True), (torch.randn(1, 4, 6, 6),), opset_version=18)


def test_nms_below_10_is_refused_with_the_opset() -> None:
    with pytest.raises(ExporterError, match="torchvision::nms"):
        export_to_bytes(_Module(_nms), boxes_and_scores(5), opset_version=9)


def test_registered_at_the_onnx_opsets() -> None:
    assert REGISTRY.builtin_opsets("torchvision::nms") == (10,)
    assert REGISTRY.builtin_opsets("torchvision::roi_align") == (10, 16)
    assert REGISTRY.builtin_opsets("torchvision::roi_pool") == (9,)
    assert REGISTRY.builtin_opsets("torchvision::deform_conv2d") == (19,)


def test_nms_keeps_torchvision_order_after_export() -> None:
    """The kept indices come in decreasing score order, as torchvision returns them."""
    boxes, scores = boxes_and_scores(40)
    data, _ = export_to_bytes(_Module(_nms), (boxes, scores), opset_version=NEWEST)
    (kept,) = run_model(data, [boxes, scores])
    assert (scores[torch.from_numpy(kept)].diff() < 0).all()
    buffer = io.BytesIO()
    exporter.export(_Module(_nms), (boxes, scores), buffer, opset_version=10)
    assert buffer.getvalue()
