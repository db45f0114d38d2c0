"""Int lists computed at run time (a shape: one 1-d int64 value) that run-time control flow
changes in place are threaded through the ONNX Loop or If (exporter.control_flow.list_values):
written through an alias (``maxes = shapes[0]``), in nested loops, in a branch. Before, the
item assignment in a body rebound the list to a value local to the body's subgraph, which the
main graph then read: a file failing onnx's check. Exported with dynamic axes and compared
with eager torch on inputs of other sizes, from opset 11, where item writes
(ScatterElements) come, to the newest (no sequences in Loop: the value form needs none).
"""

from __future__ import annotations

import math
from typing import Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import SEQUENCE_OPSETS, assert_matches_torch, dynamic_inputs

IMAGES = dynamic_inputs(a={1: "h", 2: "w"}, b={1: "h2", 2: "w2"})
ROWS = dynamic_inputs(x={0: "n", 1: "m"})


def max_by_axis(the_list: list[list[int]]) -> list[int]:
    # torchvision's GeneralizedRCNNTransform.max_by_axis
    maxes = the_list[0]
    for sublist in the_list[1:]:
        for index, item in enumerate(sublist):
            maxes[index] = max(maxes[index], item)
    return maxes


class BatchShape(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.new_zeros(max_by_axis([list(a.shape), list(b.shape)]))


class PaddedBatch(torch.nn.Module):
    """torchvision's GeneralizedRCNNTransform.batch_images: the batch's shape from the loop,
    rounded up, then each image copied into a zero batch by slices of its own run-time sizes
    (the copies read the batch's rank, which the list threaded through the loop keeps)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return batch_images([a, b], 8.0)


def batch_images(images: list[torch.Tensor], size_divisible: float) -> torch.Tensor:
    max_size = list(max_by_axis([list(img.shape) for img in images]))
    max_size[1] = int(math.ceil(float(max_size[1]) / size_divisible) * size_divisible)
    max_size[2] = int(math.ceil(float(max_size[2]) / size_divisible) * size_divisible)
    batched = images[0].new_full([len(images)] + max_size, 0)
    for i in range(batched.shape[0]):
        img = images[i]
        batched[i, : img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
    return batched


def resized(image: torch.Tensor) -> torch.Tensor:
    # torchvision's _resize_image_and_masks when scripted: the scale from the image's sizes
    im_shape = torch.tensor(image.shape[-2:])
    scale = torch.min(32.0 / torch.min(im_shape).to(torch.float32), 48.0 / torch.max(im_shape).to(torch.float32))
    scale_factor: Optional[float] = None  # noqa: UP045 - TorchScript reads this annotation
    scale_factor = scale.item()
    return F.interpolate(
        image[None], scale_factor=scale_factor, mode="bilinear", recompute_scale_factor=True, align_corners=False
    )[0]


class ResizedPaddedBatch(torch.nn.Module):
    """torchvision's scripted GeneralizedRCNNTransform: each image resized (its sizes computed
    at run time from the scale), then batched as above. The item writes of max_by_axis sit in
    a Loop nested in a Loop; once the main graph read the inner body's ScatterElements after
    the loops (nodes not topologically sorted), until the lists were threaded through them."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        images = [a, b]
        for i in range(len(images)):
            images[i] = resized(images[i])
        return batch_images(images, 32.0)


class ThroughAlias(torch.nn.Module):
    """The list is read after the loop through the outer list, not the name written."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shapes = [list(x.shape), list(x.shape)]
        sizes = shapes[0]
        for i in range(x.size(0)):
            sizes[1] = sizes[1] + i
        return x.new_zeros(shapes[0])


class NestedRunTimeLoops(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sizes = list(x.shape)
        for i in range(x.size(0)):
            for j in range(x.size(1)):
                sizes[(i + j) % 2] = sizes[(i + j) % 2] + 1
        return x.new_zeros(sizes)


class InABranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sizes = list(x.shape)
        if bool(x.sum() > 0):
            sizes[0] = sizes[0] * 2
        else:
            sizes[1] = 1
        return x.new_zeros(sizes)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_max_by_axis_of_two_image_shapes(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(BatchShape()),
        (torch.rand(3, 32, 40), torch.rand(3, 28, 46)),
        opset=opset,
        other_inputs=[(torch.rand(3, 20, 10), torch.rand(3, 25, 5)), (torch.rand(3, 7, 9), torch.rand(3, 8, 8))],
        **IMAGES,
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_images_padded_into_one_batch_of_the_largest_sizes(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(PaddedBatch()),
        (torch.rand(3, 12, 10), torch.rand(3, 9, 14)),
        opset=opset,
        other_inputs=[(torch.rand(3, 5, 17), torch.rand(3, 8, 3)), (torch.rand(3, 16, 16), torch.rand(3, 1, 2))],
        **IMAGES,
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_resized_images_padded_into_one_batch(opset: int, dynamic: bool) -> None:
    assert_matches_torch(
        torch.jit.script(ResizedPaddedBatch()),
        (torch.rand(3, 32, 40), torch.rand(3, 28, 36))
        if not dynamic
        else (torch.rand(3, 32, 40), torch.rand(3, 32, 48)),
        opset=opset,
        # scales of 2 and 1/2: onnx's reference evaluator rounds a computed Resize scale otherwise
        other_inputs=[(torch.rand(3, 16, 20), torch.rand(3, 64, 96))] if dynamic else [],
        **(IMAGES if dynamic else {}),
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_a_list_written_through_an_alias_in_a_run_time_loop(opset: int) -> None:
    model = assert_matches_torch(
        torch.jit.script(ThroughAlias()),
        (torch.rand(3, 4),),
        opset=opset,
        other_inputs=[(torch.rand(1, 2),), (torch.rand(5, 3),)],
        **ROWS,
    )
    (loop,) = [node for node in model.graph if node.op_type == "Loop"]
    assert len(loop.outputs) == 1  # the list's value, carried (no dummy)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_a_list_written_in_nested_run_time_loops(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(NestedRunTimeLoops()),
        (torch.rand(3, 4),),
        opset=opset,
        other_inputs=[(torch.rand(1, 1),), (torch.rand(2, 5),)],
        **ROWS,
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_a_list_written_in_a_run_time_branch(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(InABranch()),
        (torch.rand(3, 4),),
        opset=opset,
        other_inputs=[(-torch.rand(2, 5),), (torch.rand(1, 6),)],
        **ROWS,
    )
