"""torchvision's operators: ``torchvision::nms``, ``roi_align``, ``roi_pool`` and ``deform_conv2d``.

torchvision registers these from its C++ extension and, for torch's exporter, registers symbolics
into torch's registry; this exporter has its own registry, so they live here under the same op
names, bound by the schema names of torchvision's ``TORCH_LIBRARY_FRAGMENT`` definitions. Each
registers at the opset where ONNX gained the op it lowers to:

- roi_pool (9): MaxRoiPool takes torchvision's ``(K, 5)`` rois (batch index first) as they are
  and pools with the same rounded corners and floor/ceil bins. Its argmax output has no ONNX
  counterpart; torchvision's Python wrapper discards it.
- nms (10): NonMaxSuppression over one batch and one class, suppressing at IoU > threshold like
  torchvision, with no limit on kept boxes; its (batch, class, box) triples give the box
  indices, in decreasing score order as torchvision returns them.
- roi_align (10): RoiAlign with batch indices split off the rois; its default
  (output_half_pixel) is torchvision's ``aligned=False``. ``aligned=True`` (torchvision's
  detection models use it) samples half a pixel earlier: from opset 16 that is
  ``coordinate_transformation_mode="half_pixel"``; below, the rois are shifted by
  ``-0.5 / spatial_scale`` before the op, which is exact except that RoiAlign then still
  widens rois smaller than one pixel to one pixel, as torchvision's aligned=False does.
- deform_conv2d (19): DeformConv has torchvision's offset layout ((dy, dx) pairs per kernel
  tap, per offset group) and mask.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value

__all__ = [
    "torchvision_deform_conv2d",
    "torchvision_nms",
    "torchvision_roi_align_10",
    "torchvision_roi_align_16",
    "torchvision_roi_pool",
]

# NonMaxSuppression keeps at most this many boxes per class: no limit (torchvision has none)
_NO_LIMIT = 2**63 - 1


def _float32(g: GraphContext, x: Value) -> Value:
    """NonMaxSuppression is float32-only; float64 (and half) boxes and scores are cast."""
    return x if x.dtype == ir.DataType.FLOAT else h.cast(g, x, ir.DataType.FLOAT)


@onnx_symbolic("torchvision::nms", opset=10)
def torchvision_nms(g: GraphContext, dets: Value, scores: Value, iou_threshold: float) -> Value:
    """nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor

    dets (N, 4) become one batch (1, N, 4) and scores (N,) one batch of one class (1, 1, N);
    the third column of the selected (batch, class, box) triples is the kept box indices.
    """
    boxes = h.unsqueeze(g, _float32(g, dets), [0])
    batch_scores = h.unsqueeze(g, _float32(g, scores), [0, 1])
    selected = g.op(
        "NonMaxSuppression",
        boxes,
        batch_scores,
        g.constant([_NO_LIMIT], ir.DataType.INT64),
        g.constant([iou_threshold], ir.DataType.FLOAT),
    )
    kept = h.squeeze(g, h.gather_constant(g, selected, torch.tensor([2]), axis=1), [1])
    return h.data_dependent(g, kept)


def _split_rois(g: GraphContext, rois: Value) -> tuple[Value, Value]:
    """torchvision's (K, 5) rois -> RoiAlign's (K, 4) boxes and (K,) int64 batch indices."""
    batch_index = h.squeeze(g, h.gather_constant(g, rois, torch.tensor([0]), axis=1), [1])
    boxes = h.gather_constant(g, rois, torch.tensor([1, 2, 3, 4]), axis=1)
    return boxes, h.cast(g, batch_index, ir.DataType.INT64)


def _roi_align(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    boxes: Value,
    batch_index: Value,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    **attrs: object,
) -> Value:
    """RoiAlign averaging ``sampling_ratio`` samples per bin side; torchvision's adaptive
    count (any value <= 0) is ONNX's 0."""
    return g.op(
        "RoiAlign",
        input,
        boxes,
        batch_index,
        mode="avg",
        output_height=pooled_height,
        output_width=pooled_width,
        sampling_ratio=max(sampling_ratio, 0),
        spatial_scale=float(spatial_scale),
        **attrs,
    )


@onnx_symbolic("torchvision::roi_align", opset=10)
def torchvision_roi_align_10(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    rois: Value,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
) -> Value:
    """roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor

    RoiAlign-10 samples at ``roi * spatial_scale`` (torchvision's aligned=False); aligned=True
    samples at ``roi * spatial_scale - 0.5``, so the boxes are shifted by ``0.5 / spatial_scale``
    first (rois under one pixel are still widened to one: see the module docstring).
    """
    boxes, batch_index = _split_rois(g, rois)
    if aligned:
        boxes = g.op("Sub", boxes, h.scalar_like(g, 0.5 / spatial_scale, boxes))
    return _roi_align(g, input, boxes, batch_index, spatial_scale, pooled_height, pooled_width, sampling_ratio)


@onnx_symbolic("torchvision::roi_align", opset=16)
def torchvision_roi_align_16(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    rois: Value,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
) -> Value:
    """roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor

    RoiAlign-16's coordinate_transformation_mode expresses both: half_pixel is aligned=True,
    output_half_pixel aligned=False (stated: the opset-16 default is half_pixel).
    """
    boxes, batch_index = _split_rois(g, rois)
    mode = "half_pixel" if aligned else "output_half_pixel"
    return _roi_align(
        g,
        input,
        boxes,
        batch_index,
        spatial_scale,
        pooled_height,
        pooled_width,
        sampling_ratio,
        coordinate_transformation_mode=mode,
    )


@onnx_symbolic("torchvision::roi_pool", opset=9)
def torchvision_roi_pool(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    rois: Value,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
) -> tuple[Value, None]:
    """roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    SymInt pooled_width) -> (Tensor, Tensor)

    The second output (argmax positions, for the backward pass) has no ONNX counterpart: a
    model that reads it fails where it is used.
    """
    pooled = g.op(
        "MaxRoiPool",
        input,
        rois,
        pooled_shape=[pooled_height, pooled_width],
        spatial_scale=float(spatial_scale),
    )
    return pooled, None


@onnx_symbolic("torchvision::deform_conv2d", opset=19)
def torchvision_deform_conv2d(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    weight: Value,
    offset: Value,
    mask: Value,
    bias: Value,
    stride_h: int,
    stride_w: int,
    pad_h: int,
    pad_w: int,
    dilation_h: int,
    dilation_w: int,
    groups: int,
    offset_groups: int,
    use_mask: bool,
) -> Value:
    """deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias,
    SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h,
    SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor

    DeformConv (opset 19). torchvision passes a zero-size mask when ``use_mask`` is false (v1
    deformable convolution): the mask input is then left out.
    """
    kernel = h.static_shape(weight)
    if kernel is None or len(kernel) != 4:
        raise NeedsExportTimeValue("deform_conv2d needs the weight's shape at export time")
    return g.op(
        "DeformConv",
        input,
        weight,
        offset,
        bias,
        mask if use_mask else None,
        dilations=[dilation_h, dilation_w],
        group=groups,
        kernel_shape=kernel[2:],
        offset_group=offset_groups,
        pads=[pad_h, pad_w, pad_h, pad_w],
        strides=[stride_h, stride_w],
    )
