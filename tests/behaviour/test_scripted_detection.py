"""Detection pre- and post-processing as production code scripts it: resizing and normalising
images, anchors on a run-time feature map, box coders, the proposal matcher, per-class and
batched NMS by IoU matrices, top-k detections, keypoint decoding from heatmaps, and the
per-image proposal filter of torchvision's RPN.

Each program is scripted, exported and compared with eager torch in onnxruntime on input sets
of other sizes and other numbers of kept boxes.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
    dynamic_inputs,
)

import exporter


def _iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


class MultiClassNMS(torch.nn.Module):
    """Per-class NMS with an IoU matrix and an upper-triangular suppression mask, classes
    visited in a loop, kept detections collected in lists and concatenated."""

    def __init__(self, iou_threshold: float = 0.5, score_threshold: float = 0.3) -> None:
        super().__init__()
        self.iou_threshold = iou_threshold
        self.score_threshold = score_threshold

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        kept_boxes: list[torch.Tensor] = []
        kept_scores: list[torch.Tensor] = []
        kept_labels: list[torch.Tensor] = []
        for c in range(scores.size(1)):
            s = scores[:, c]
            candidates = torch.nonzero(s > self.score_threshold).squeeze(1)
            if candidates.numel() == 0:
                continue
            b = boxes[candidates]
            s = s[candidates]
            order = s.argsort(descending=True)
            b = b[order]
            s = s[order]
            iou = _iou(b, b).triu(diagonal=1)
            suppressed = (iou > self.iou_threshold).any(0)
            keep = ~suppressed
            kept_boxes.append(b[keep])
            kept_scores.append(s[keep])
            kept_labels.append(torch.full_like(s[keep], c, dtype=torch.long))
        if len(kept_boxes) == 0:
            return torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.long)
        return torch.cat(kept_boxes), torch.cat(kept_scores), torch.cat(kept_labels)


def _detections(n: int, classes: int, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(n, 2) * 4
    size = torch.rand(n, 2) * 3 + 0.5
    return torch.cat([corner, corner + size], 1), torch.rand(n, classes) * scale


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_multi_class_nms(opset: int) -> None:
    model = torch.jit.script(MultiClassNMS())
    dynamic = {"input_names": ["boxes", "scores"], "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n"}}}
    others = [_detections(3, 3), _detections(25, 3), _detections(5, 3, scale=0.1)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _detections(10, 3), opset=opset, other_inputs=others, **dynamic
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_multi_class_nms_with_a_run_time_class_count(opset: int) -> None:
    """The class loop with ``continue`` has a run-time trip count here: the kept lists are ONNX
    sequences, appended in one branch of the If and passed through the other."""
    model = torch.jit.script(MultiClassNMS())
    dynamic = {"input_names": ["boxes", "scores"], "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n", 1: "c"}}}
    others = [_detections(3, 1), _detections(25, 5), _detections(5, 2, scale=0.1)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _detections(10, 3), opset=opset, other_inputs=others, **dynamic
    )


class AnchorDecoder(torch.nn.Module):
    """Anchor generation on a run-time feature map size, box decoding, clipping and a
    ``torch.where`` cascade that labels anchors as background / ignore / foreground."""

    def __init__(self, stride: int = 8) -> None:
        super().__init__()
        self.stride = stride
        self.register_buffer("sizes", torch.tensor([[16.0, 16.0], [32.0, 16.0], [16.0, 32.0]]))

    def forward(
        self, features: torch.Tensor, deltas: torch.Tensor, gt: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        height, width = features.shape[-2], features.shape[-1]
        ys = (torch.arange(height, dtype=torch.float32) + 0.5) * self.stride
        xs = (torch.arange(width, dtype=torch.float32) + 0.5) * self.stride
        grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
        centers = torch.stack([grid_x.reshape(-1), grid_y.reshape(-1)], 1)
        centers = centers[:, None, :].expand(-1, self.sizes.size(0), 2).reshape(-1, 2)
        wh = self.sizes.repeat(height * width, 1)
        anchors = torch.cat([centers - wh / 2, centers + wh / 2], 1)
        d = deltas.reshape(-1, 4)
        ctr = centers + d[:, :2] * wh
        size = wh * torch.exp(d[:, 2:].clamp(max=4.0))
        boxes = torch.cat([ctr - size / 2, ctr + size / 2], 1)
        boxes = boxes.clamp(min=0.0, max=float(width * self.stride))
        iou = _iou(anchors, gt).max(1)[0]
        labels = torch.where(
            iou >= 0.5, torch.ones_like(iou), torch.where(iou < 0.3, torch.zeros_like(iou), -torch.ones_like(iou))
        )
        return boxes, labels.to(torch.long)


def _anchor_inputs(h: int, w: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gt = torch.tensor([[4.0, 4.0, 30.0, 30.0], [10.0, 0.0, 20.0, 40.0]])
    return torch.randn(1, 2, h, w), torch.randn(h * w * 3, 4) * 0.1, gt


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_anchor_decoder(opset: int) -> None:
    model = torch.jit.script(AnchorDecoder())
    dynamic = {
        "input_names": ["features", "deltas", "gt"],
        "dynamic_axes": {"features": {2: "h", 3: "w"}, "deltas": {0: "a"}, "gt": {0: "g"}},
    }
    others = [_anchor_inputs(2, 5), _anchor_inputs(6, 3)]
    assert_matches_torch(model, _anchor_inputs(4, 4), opset=opset, other_inputs=others, rtol=1e-4, atol=1e-4, **dynamic)


class Preprocess(torch.nn.Module):
    """Detection preprocessing: resize keeping the aspect ratio to a target size, normalise,
    pad to a multiple of 32."""

    def __init__(self, target: int = 64) -> None:
        super().__init__()
        self.target = target
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h, w = image.shape[-2], image.shape[-1]
        scale = min(self.target / h, self.target / w)
        new_h, new_w = int(h * scale), int(w * scale)
        resized = F.interpolate(image, size=(new_h, new_w), mode="bilinear", align_corners=False)
        normalized = (resized - self.mean) / self.std
        pad_h = int(math.ceil(new_h / 32) * 32) - new_h
        pad_w = int(math.ceil(new_w / 32) * 32) - new_w
        return F.pad(normalized, [0, pad_w, 0, pad_h]), torch.tensor([new_h, new_w])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_detection_preprocessing(opset: int) -> None:
    model = torch.jit.script(Preprocess())
    dynamic = {"input_names": ["image"], "dynamic_axes": {"image": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.rand(1, 3, 50, 120),), (torch.rand(2, 3, 200, 90),)]
    assert_matches_torch(
        model, (torch.rand(1, 3, 80, 100),), opset=opset, other_inputs=others, rtol=1e-3, atol=1e-4, **dynamic
    )


class BatchedPostprocess(torch.nn.Module):
    """Per-image detections in a loop over the batch: threshold, class-offset NMS by IoU matrix,
    keep the top-k, pad each image's result to a fixed count and stack."""

    def __init__(self, max_detections: int = 5) -> None:
        super().__init__()
        self.max_detections = max_detections

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        results: list[torch.Tensor] = []
        for i in range(boxes.size(0)):
            best, labels = scores[i].max(1)
            keep = best > 0.2
            b, s, l = boxes[i][keep], best[keep], labels[keep]
            shifted = b + (l.to(b.dtype) * 100.0).unsqueeze(1)
            order = s.argsort(descending=True)
            shifted, b, s, l = shifted[order], b[order], s[order], l[order]
            lt = torch.max(shifted[:, None, :2], shifted[None, :, :2])
            rb = torch.min(shifted[:, None, 2:], shifted[None, :, 2:])
            inter = (rb - lt).clamp(min=0).prod(2)
            area = (shifted[:, 2:] - shifted[:, :2]).prod(1)
            iou = inter / (area[:, None] + area[None, :] - inter)
            survivors = ~((iou.triu(1) > 0.5).any(0))
            det = torch.cat([b[survivors], s[survivors, None], l[survivors, None].to(b.dtype)], 1)
            det = det[: self.max_detections]
            results.append(F.pad(det, [0, 0, 0, self.max_detections - det.size(0)], value=-1.0))
        return torch.stack(results)


def _batch(b: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(b, n, 2) * 10
    return torch.cat([corner, corner + torch.rand(b, n, 2) * 5 + 1], 2), torch.rand(b, n, 3)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_batched_postprocess(opset: int) -> None:
    model = torch.jit.script(BatchedPostprocess())
    dynamic = {
        "input_names": ["boxes", "scores"],
        "dynamic_axes": {"boxes": {0: "b", 1: "n"}, "scores": {0: "b", 1: "n"}},
    }
    assert_matches_torch(model, _batch(2, 8), opset=opset, other_inputs=[_batch(1, 3), _batch(3, 20)], **dynamic)


class BoxCoder(torch.nn.Module):
    """torchvision's box coder written as users script it: weights as Python floats, deltas
    clamped by ``math.log(1000 / 16)``, encode of matched ground truth and decode of predicted
    deltas for every class at once (a view to [N, -1, 4])."""

    def __init__(self, weights: tuple[float, float, float, float] = (10.0, 10.0, 5.0, 5.0)) -> None:
        super().__init__()
        self.weights = weights
        self.clip = math.log(1000.0 / 16)

    def encode(self, reference: torch.Tensor, proposals: torch.Tensor) -> torch.Tensor:
        wx, wy, ww, wh = self.weights
        pw = proposals[:, 2] - proposals[:, 0]
        ph = proposals[:, 3] - proposals[:, 1]
        px = proposals[:, 0] + 0.5 * pw
        py = proposals[:, 1] + 0.5 * ph
        gw = reference[:, 2] - reference[:, 0]
        gh = reference[:, 3] - reference[:, 1]
        gx = reference[:, 0] + 0.5 * gw
        gy = reference[:, 1] + 0.5 * gh
        return torch.stack(
            [wx * (gx - px) / pw, wy * (gy - py) / ph, ww * torch.log(gw / pw), wh * torch.log(gh / ph)], 1
        )

    def forward(self, deltas: torch.Tensor, boxes: torch.Tensor, gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        wx, wy, ww, wh = self.weights
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        d = deltas.reshape(deltas.size(0), -1, 4)
        dx = d[:, :, 0] / wx
        dy = d[:, :, 1] / wy
        dw = (d[:, :, 2] / ww).clamp(max=self.clip)
        dh = (d[:, :, 3] / wh).clamp(max=self.clip)
        x = dx * widths[:, None] + ctr_x[:, None]
        y = dy * heights[:, None] + ctr_y[:, None]
        w = torch.exp(dw) * widths[:, None]
        h = torch.exp(dh) * heights[:, None]
        decoded = torch.stack([x - 0.5 * w, y - 0.5 * h, x + 0.5 * w, y + 0.5 * h], 2).flatten(1)
        return decoded, self.encode(gt, boxes)


def _boxes(n: int) -> torch.Tensor:
    corner = torch.rand(n, 2) * 20
    return torch.cat([corner, corner + torch.rand(n, 2) * 10 + 1], 1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_box_coder(opset: int) -> None:
    model = torch.jit.script(BoxCoder())
    dynamic = dynamic_inputs(deltas={0: "n"}, boxes={0: "n"}, gt={0: "n"})
    others = [(torch.randn(1, 12), _boxes(1), _boxes(1)), (torch.randn(13, 12) * 3, _boxes(13), _boxes(13))]
    assert_matches_torch(model, (torch.randn(5, 12), _boxes(5), _boxes(5)), opset=opset, other_inputs=others, **dynamic)


class Matcher(torch.nn.Module):
    """The proposal matcher of two-stage detectors: an IoU matrix [gt, anchors], the best gt per
    anchor, below/between thresholds marked -1/-2, then low-quality matches restored (each gt's
    best anchors keep their match) through nonzero on an equality with the row maxima."""

    def __init__(self, high: float = 0.6, low: float = 0.3) -> None:
        super().__init__()
        self.high = high
        self.low = low

    def forward(self, gt: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        area_g = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
        area_a = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
        lt = torch.max(gt[:, None, :2], anchors[None, :, :2])
        rb = torch.min(gt[:, None, 2:], anchors[None, :, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, :, 0] * wh[:, :, 1]
        iou = inter / (area_g[:, None] + area_a[None, :] - inter)
        values, matches = iou.max(0)
        all_matches = matches.clone()
        matches[values < self.low] = -1
        matches[(values >= self.low) & (values < self.high)] = -2
        best_per_gt, _ = iou.max(1)
        pairs = torch.nonzero(iou == best_per_gt[:, None])
        update = pairs[:, 1]
        matches[update] = all_matches[update]
        return matches


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_proposal_matcher(opset: int) -> None:
    model = torch.jit.script(Matcher())
    dynamic = dynamic_inputs(gt={0: "g"}, anchors={0: "a"})
    others = [(_boxes(1), _boxes(4)), (_boxes(6), _boxes(40))]
    assert_matches_torch(model, (_boxes(3), _boxes(12)), opset=opset, other_inputs=others, **dynamic)


class KeypointDecoder(torch.nn.Module):
    """Heatmap keypoint decoding (CenterNet / pose heads): the argmax per keypoint map, its x and
    y by integer division and remainder on the flat index, a sub-pixel offset gathered at that
    index, rescaled to the input image by a float stride; scores by sigmoid of the maximum."""

    def __init__(self, stride: float = 4.0) -> None:
        super().__init__()
        self.stride = stride

    def forward(self, heatmaps: torch.Tensor, offsets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, k, h, w = heatmaps.shape
        flat = heatmaps.reshape(n, k, h * w)
        scores, index = flat.max(-1)
        ys = torch.div(index, w, rounding_mode="floor")
        xs = index % w
        off = offsets.reshape(n, 2, h * w)
        dx = off[:, 0].gather(1, index)
        dy = off[:, 1].gather(1, index)
        points = torch.stack([(xs.to(torch.float32) + dx) * self.stride, (ys.to(torch.float32) + dy) * self.stride], -1)
        return points, torch.sigmoid(scores)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_keypoint_decoder(opset: int) -> None:
    model = torch.jit.script(KeypointDecoder())
    dynamic = dynamic_inputs(heatmaps={0: "n", 2: "h", 3: "w"}, offsets={0: "n", 2: "h", 3: "w"})
    others = [(torch.randn(1, 3, 2, 5), torch.rand(1, 2, 2, 5)), (torch.randn(3, 3, 9, 7), torch.rand(3, 2, 9, 7))]
    assert_matches_torch(
        model, (torch.randn(2, 3, 6, 6), torch.rand(2, 2, 6, 6)), opset=opset, other_inputs=others, **dynamic
    )


class TopKDetections(torch.nn.Module):
    """Anchor-free detection output: top-k over all (location, class) scores at once, the class
    and location recovered by ``//`` and ``%`` on the flat index, boxes gathered by location."""

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        self.k = k

    def forward(self, scores: torch.Tensor, boxes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        classes = scores.size(1)
        k = min(self.k, scores.numel())
        top, flat = scores.flatten().topk(k)
        location = flat // classes
        label = flat % classes
        return boxes[location], top, label


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_top_k_detections(opset: int) -> None:
    model = torch.jit.script(TopKDetections())
    dynamic = dynamic_inputs(scores={0: "n"}, boxes={0: "n"})
    others = [(torch.rand(1, 3), _boxes(1)), (torch.rand(30, 3), _boxes(30))]
    assert_matches_torch(model, (torch.rand(8, 3), _boxes(8)), opset=opset, other_inputs=others, **dynamic)


class ProposalFilter(torch.nn.Module):
    """torchvision's RPN ``filter_proposals`` in small: per-level objectness maps of run-time
    sizes flattened and concatenated, split again by the run-time anchor counts, top-k per level
    with ``k = min(limit, count)``, then ``arange(num_images)`` with ``num_images =
    proposals.shape[0]`` (a static dim of a partly dynamic shape) for advanced indexing, and a
    loop zipping the picked rows with the image sizes. The number of images must stay known
    through all of it, so the loop unrolls as it does when traced."""

    def __init__(self, limit: int = 4) -> None:
        super().__init__()
        self.limit = limit

    def forward(
        self, images: list[torch.Tensor], maps: list[torch.Tensor], deltas: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        sizes: list[tuple[int, int]] = [(image.shape[-2], image.shape[-1]) for image in images]
        counts = [m.shape[-2] * m.shape[-1] for m in maps]
        objectness = torch.cat([m.flatten(1) for m in maps], 1)
        proposals = (deltas.reshape(len(images), -1, 2) * 10).view(len(images), -1, 2)
        num_images = proposals.shape[0]
        picks: list[torch.Tensor] = []
        offset = 0
        for level in objectness.split(counts, 1):
            k = min(self.limit, level.shape[1])
            picks.append(level.topk(k, dim=1)[1] + offset)
            offset += level.shape[1]
        top = torch.cat(picks, 1)
        batch_index = torch.arange(num_images)[:, None]
        scores = objectness[batch_index, top].sigmoid()
        picked = proposals[batch_index, top]
        boxes: list[torch.Tensor] = []
        kept: list[torch.Tensor] = []
        for image_boxes, image_scores, size in zip(picked, scores, sizes):
            height, width = size
            boxes.append(torch.stack([image_boxes[:, 0].clamp(0, width), image_boxes[:, 1].clamp(0, height)], 1))
            kept.append(image_scores[image_scores > 0.5])
        return boxes, kept


def _proposal_inputs(side: int) -> tuple:
    maps = [torch.randn(1, 1, side, side), torch.randn(1, 1, side // 2, side // 2 + 1)]
    anchors = sum(m.shape[-2] * m.shape[-1] for m in maps)
    return [torch.randn(3, 4 * side, 5 * side)], maps, torch.randn(1, anchors * 2)


@pytest.mark.parametrize("opset", sorted({*lowering_opsets("aten::topk", min_opset=10), *SEQUENCE_OPSETS}))
def test_rpn_proposal_filter_keeps_the_number_of_images(opset: int) -> None:
    model = torch.jit.script(ProposalFilter())
    names = ["image", "map0", "map1", "deltas"]
    axes = {"image": {1: "h", 2: "w"}, "map0": {2: "h0", 3: "w0"}, "map1": {2: "h1", 3: "w1"}, "deltas": {1: "n"}}
    onnx_model = assert_matches_torch(
        model,
        _proposal_inputs(6),
        opset=opset,
        other_inputs=[_proposal_inputs(4)],
        input_names=names,
        dynamic_axes=axes,
    )
    kinds = {node.op_type for node in onnx_model.graph}
    assert not kinds & {"Loop", "SequenceConstruct", "SequenceInsert", "SequenceAt"}, sorted(kinds)


class GreedyNMS(torch.nn.Module):
    """Greedy non-maximum suppression: visit boxes by score, keep those not suppressed yet."""

    def __init__(self, iou_threshold: float = 0.5, score_threshold: float = 0.05) -> None:
        super().__init__()
        self.iou_threshold = iou_threshold
        self.score_threshold = score_threshold

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        order = scores.argsort(descending=True)
        areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        suppressed = torch.zeros(boxes.size(0), dtype=torch.bool)
        keep: list[int] = []
        for i in range(order.size(0)):
            idx = int(order[i])
            if float(scores[idx]) < self.score_threshold:
                break
            if bool(suppressed[idx]):
                continue
            keep.append(idx)
            top_left = torch.max(boxes[idx, :2], boxes[:, :2])
            bottom_right = torch.min(boxes[idx, 2:], boxes[:, 2:])
            wh = (bottom_right - top_left).clamp(min=0)
            inter = wh[:, 0] * wh[:, 1]
            iou = inter / (areas[idx] + areas - inter)
            suppressed = suppressed | (iou > self.iou_threshold)
        return torch.tensor(keep, dtype=torch.long)


def _scored_boxes(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(n, 2) * 4
    size = torch.rand(n, 2) * 3 + 0.5
    return torch.cat([corner, corner + size], 1), torch.rand(n)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_greedy_nms(opset: int) -> None:
    model = torch.jit.script(GreedyNMS())
    dynamic = {
        "input_names": ["boxes", "scores"],
        "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n"}},
    }
    others = [_scored_boxes(3), _scored_boxes(20), (_scored_boxes(4)[0], torch.zeros(4))]
    if opset < 10:  # argsort with a run-time k (the box count) is a TopK with a run-time k: opset 10
        with pytest.raises(exporter.ExporterError, match="opset 10"):
            assert_matches_torch(model, _scored_boxes(8), opset=opset, other_inputs=others, **dynamic)
        return
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _scored_boxes(8), opset=opset, other_inputs=others, **dynamic
    )
