"""Lists in scripted models known at export time: slicing and concatenation (of tensors,
shapes and run-time scalars), items read at a run-time index (ints gathered, tensors and tuples
picked), sorting, equality of size lists, ``tolist()``, ``pad_sequence`` of a fixed list, lists
of tuples built in loops and read at run-time positions, and ``torch.jit.annotate`` on empty
containers. Lists whose length is known only at run time are tests/test_runtime_list.py's.
"""

from __future__ import annotations

from typing import Optional

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    FEATURE_OPSETS,
    OPTIONAL_OPSET,
    OPTIONAL_OPSETS,
    SEQUENCE_OPSET,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
    dynamic_inputs,
)


class SortedScores(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].max()))
        values.sort()
        best: list[int] = []
        for i in range(x.size(0)):
            best.append(int(x[i].argmax()))
        return torch.tensor(values), torch.tensor(best)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_sorted_python_list(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(8, 3),)]
    assert_matches_torch(
        torch.jit.script(SortedScores()), (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


class SortedPair(torch.nn.Module):
    """``l.sort()`` of an export-time list holding run-time numbers."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [float(x[0].max()), float(x[1].min()), float(x.mean())]
        values.sort(reverse=True)
        counts = [int((x > 0).sum()), int((x < 0).sum()), 1]
        counts.sort()
        return torch.tensor(values) + torch.tensor(counts)


@pytest.mark.parametrize("opset", sorted({*lowering_opsets("aten::sort"), *FEATURE_OPSETS}))
def test_sorted_export_time_list(opset: int) -> None:
    others = [(torch.randn(2, 3) + 1,), (torch.randn(2, 3) - 1,)]
    assert_matches_torch(torch.jit.script(SortedPair()), (torch.randn(2, 3),), opset=opset, other_inputs=others)


class ShapeEquality(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        same = x.size() == y.size()
        differ = x.size() != y.size()
        lengths = [x.size(0), 3] == [y.size(0), 3]
        return torch.tensor(same), torch.tensor(differ), torch.tensor(lengths)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_size_list_equality(opset: int) -> None:
    """``x.size() == y.size()`` of run-time sizes is one bool (all items equal)."""
    dynamic = {"input_names": ["x", "y"], "dynamic_axes": {"x": {0: "a", 1: "b"}, "y": {0: "c", 1: "d"}}}
    others = [(torch.randn(2, 3), torch.randn(3, 2)), (torch.randn(4, 1), torch.randn(4, 5))]
    assert_matches_torch(
        torch.jit.script(ShapeEquality()),
        (torch.randn(2, 3), torch.randn(2, 3)),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


class PadThree(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        time_major = torch.nn.utils.rnn.pad_sequence([a, b, c], padding_value=-1.0)
        left = torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_side="left")
        return time_major, left


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_pad_sequence_of_a_fixed_list(opset: int) -> None:
    dynamic = {"input_names": ["a", "b", "c"], "dynamic_axes": {"a": {0: "x"}, "b": {0: "y"}, "c": {0: "z"}}}
    others = [(torch.randn(1, 2), torch.randn(6, 2), torch.randn(3, 2))]
    assert_matches_torch(
        torch.jit.script(PadThree()),
        (torch.randn(2, 2), torch.randn(4, 2), torch.randn(4, 2)),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


class RowsToList(torch.nn.Module):
    """``tolist()`` of 2-d tensors: a list of rows, known at export time or at run time."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows: list[list[float]] = x.tolist()
        ids: list[list[int]] = (x > 0).long().tolist()
        total = 0.0
        for r in rows:
            total += r[0]
        return torch.tensor(rows[0]), torch.tensor(ids[-1]), torch.tensor(total)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("axes", [{}, {0: "n"}, {1: "m"}, {0: "n", 1: "m"}], ids=["static", "rows", "cols", "both"])
def test_tolist_of_a_matrix(opset: int, axes: dict) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": axes}} if axes else {}
    other = torch.randn(5 if 0 in axes else 3, 6 if 1 in axes else 4)
    assert_matches_torch(
        torch.jit.script(RowsToList()), (torch.randn(3, 4),), opset=opset, other_inputs=[(other,)], **dynamic
    )


class ListOfTuples(torch.nn.Module):
    """A ``List[Tuple[Tensor, Tensor]]`` built in a loop over levels, indexed at export-time
    positions (first, last by -1), iterated with tuple unpacking and ``enumerate``."""

    def __init__(self, levels: int = 3) -> None:
        super().__init__()
        self.levels = levels

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pyramid: list[tuple[torch.Tensor, torch.Tensor]] = []
        current = x
        for _ in range(self.levels):
            pyramid.append((current, current.mean(-1)))
            current = F.avg_pool1d(current, 2)
        first, _ = pyramid[0]
        last_features, last_summary = pyramid[-1]
        total = torch.zeros(x.size(0), x.size(1))
        for level, (features, summary) in enumerate(pyramid):
            total = total + summary * (level + 1) + features.amax(-1)
        return total + first.sum(-1), last_features * last_summary.unsqueeze(-1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_tuples_built_in_a_loop(opset: int) -> None:
    model = torch.jit.script(ListOfTuples())
    others = [(torch.randn(1, 2, 8),), (torch.randn(4, 2, 32),)]
    assert_matches_torch(
        model, (torch.randn(2, 2, 16),), opset=opset, other_inputs=others, **dynamic_inputs(x={0: "b", 2: "t"})
    )


class Annotated(torch.nn.Module):
    """``torch.jit.annotate`` on empty containers (a list of tensors, a list of ints, an
    Optional tensor) that are filled in a loop over a run-time count."""

    def forward(self, x: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = torch.jit.annotate(list[torch.Tensor], [])
        lengths = torch.jit.annotate(list[int], [])
        best = torch.jit.annotate(Optional[torch.Tensor], None)
        for i in range(steps):
            y = x * (i + 1)
            outputs.append(y.sum(0))
            lengths.append(i * 2)
            if best is None:
                best = y
            else:
                best = torch.maximum(best, y.flip(0))
        assert best is not None
        return torch.stack(outputs) + torch.tensor(lengths).unsqueeze(1), best


# onnxruntime 1.32 has no kernel for Optional-28 (onnx's reference evaluator cannot run the
# optional carried through a Loop either): the newest opset it runs here is 27
@pytest.mark.parametrize("opset", sorted({SEQUENCE_OPSET, CONTROL_FLOW_SEQUENCE_OPSET, *OPTIONAL_OPSETS}))
def test_jit_annotate_containers(opset: int) -> None:
    """The Optional ``best``, carried through the run-time loop from None, is an ONNX optional
    loop-carried value: Loop carries them from opset 16, and the export below it says so."""
    model = torch.jit.script(Annotated())
    others = [(torch.randn(1, 3), 1), (torch.randn(5, 3), 6)]
    assert_matches_torch_from(
        OPTIONAL_OPSET,
        model,
        (torch.randn(2, 3), 3),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(x={0: "n"}, steps={}),
    )


class PerImageClip(torch.nn.Module):
    """The pattern of torchvision's scripted RPN (rpn.py ``filter_proposals``): image sizes
    collected as a ``List[Tuple[int, int]]``, proposals picked per image by advanced indexing
    with ``arange(num_images)`` (the number of images is then a run-time size), and a loop that
    zips the proposals with the list of tuples: each tuple is read at the loop's run-time
    position."""

    def forward(
        self, images: list[torch.Tensor], boxes: torch.Tensor, scores: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        sizes: list[tuple[int, int]] = []
        for image in images:
            sizes.append((image.shape[-2], image.shape[-1]))
        batch_index = torch.arange(boxes.size(0))[:, None]
        top = scores.topk(3, dim=1)[1]
        picked = boxes[batch_index, top]
        clipped: list[torch.Tensor] = []
        for image_boxes, size in zip(picked, sizes):
            height, width = size
            clipped.append(torch.stack([image_boxes[:, 0].clamp(0, width), image_boxes[:, 1].clamp(0, height)], 1))
        shifted: list[torch.Tensor] = []
        for i in range(picked.size(0)):
            height, width = sizes[i]
            shifted.append(picked[i, :, 2:] - torch.tensor([width, height]))
        return clipped, shifted


def _per_image(batch: int, anchors: int) -> tuple:
    images = [torch.randn(3, 10 + 3 * i, 12 + 5 * i) for i in range(batch)]
    return images, torch.rand(batch, anchors, 4) * 30, torch.rand(batch, anchors)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_list_of_tuples_at_a_run_time_position(opset: int) -> None:
    """The list's length is known at export time (the images are inputs); the loops' trip
    counts are not (the boxes' batch is dynamic): each field of the tuples is picked at the
    loop position, a Gather of the stacked numbers. The per-image results are lists built by
    loops with a run-time trip count: ONNX sequences, from opset 11."""
    model = torch.jit.script(PerImageClip())
    names = ["image0", "image1", "boxes", "scores"]
    dynamic = {"input_names": names, "dynamic_axes": {"boxes": {0: "b", 1: "n"}, "scores": {0: "b", 1: "n"}}}
    images, boxes, scores = _per_image(2, 6)
    other = (images, torch.rand(2, 9, 4) * 30, torch.rand(2, 9))
    assert_matches_torch_from(
        SEQUENCE_OPSET, model, (images, boxes, scores), opset=opset, other_inputs=[other], **dynamic
    )


class SliceTensors(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        items = [x, x + 1, x + 2, x * 2, x * 3]
        tail, head, every_other, backwards = items[1:], items[:-1], items[::2], items[::-2]
        return torch.stack(tail), torch.stack(head), torch.cat(every_other), torch.cat(backwards)


class SliceShape(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = x.size()[1:]
        return x.reshape([-1] + dims[:-1] + [dims[-1]])


class SliceRuntimeScalars(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].sum()))
        return torch.tensor(values[1:]), torch.tensor(values[:-1]), torch.tensor(values[::2])


class SliceScanTensors(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            rows.append(x[i] * 2)
        return torch.stack(rows[1:]), torch.stack(rows[:-1])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_slice_export_time_list(opset: int) -> None:
    if opset < 10:  # a negative step needs Slice-10
        pytest.skip("step -2")
    assert_matches_torch(torch.jit.script(SliceTensors()), (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_slice_export_time_list_forward_steps(opset: int) -> None:
    @torch.jit.script
    def pick(x: torch.Tensor) -> torch.Tensor:
        items = [x, x + 1, x + 2, x * 2]
        return torch.stack(items[1:]) + torch.stack(items[:-1]) + torch.stack(items[::2]).sum(0)

    assert_matches_torch(pick, (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_slice_shape_list(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceShape()),
        (torch.randn(2, 3, 4),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2]},
        other_inputs=[(torch.randn(3, 2, 5),)],
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_slice_runtime_list_of_scalars(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceRuntimeScalars()),
        (torch.randn(5, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 2),)],
    )


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_slice_runtime_list_scan_output(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceScanTensors()),
        (torch.randn(5, 3),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 3),)],
    )


class AddLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = [x, x + 1]
        second = [x * 2]
        empty: list[torch.Tensor] = []
        joined = empty + first + second
        joined.extend(second)
        joined = joined + empty
        return torch.cat(joined)


class AddShapes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape([1] + list(x.shape) + [1])


class AddRuntimeLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].sum()))
        empty: list[float] = []
        both = values + values
        fixed = [1.5] + values + [2.5]
        grown = empty + values
        grown.extend([3.5, 4.5])
        return torch.tensor(both), torch.tensor(fixed), torch.tensor(grown)


class AddScanLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            rows.append(x[i] + 1)
        more: list[torch.Tensor] = []
        for i in range(x.size(0)):
            more.append(x[i] * 3)
        return torch.stack(rows + more)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_add_export_time_lists(opset: int) -> None:
    assert_matches_torch(torch.jit.script(AddLists()), (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_add_shape_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddShapes()),
        (torch.randn(2, 3),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1]},
        other_inputs=[(torch.randn(4, 1),)],
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_add_runtime_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddRuntimeLists()),
        (torch.randn(4, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(1, 2),)],
    )


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_add_scan_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddScanLists()),
        (torch.randn(4, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 2),)],
    )


class ListItemAtRunTimeIndex(torch.nn.Module):
    """An export-time list read at run-time indices (negative too): ints are gathered, tensors
    of different shapes picked by an ONNX sequence (opset 11+) or a chain of Ifs below."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sizes: list[int] = [3, 1, 4, 1, 5]
        k = int(x[0, 0] > 0) * 2 - 1  # -1 or 1
        parts = [x, x[:1] * 2, x.sum(0, keepdim=True) + 1]
        j = int(x.sum() > 0) + 1
        return x * sizes[k] + sizes[j], parts[j] - parts[-j]


# Opset 10 included: onnx's Slice-10 inference types x[:1] of [n, 3] as [n, 3] and onnxruntime's
# buffer planner then failed at run time ("Shape mismatch attempting to re-use buffer").
@pytest.mark.parametrize("opset", lowering_opsets("aten::__getitem__", helpers=True))
def test_list_item_at_a_run_time_index(opset: int) -> None:
    others = [(-torch.rand(4, 3),), (torch.rand(1, 3),), (torch.tensor([[1.0, -9.0, 0.0]]),)]
    assert_matches_torch(
        torch.jit.script(ListItemAtRunTimeIndex()),
        (torch.rand(3, 3),),
        opset=opset,
        other_inputs=others,
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )


class TupleItemAtRunTimeIndex(torch.nn.Module):
    """An export-time list of tuples read at run-time indices (negative too): each field is
    picked at the index, numbers gathered, tensors of different shapes by a sequence or Ifs
    (whose branches hide their sizes from If-1's inference, which takes the then-branch's),
    nested tuples field by field."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pairs: list[tuple[int, float]] = [(3, 0.5), (1, 2.0), (4, -1.0)]
        parts: list[tuple[torch.Tensor, tuple[int, torch.Tensor]]] = [
            (x, (2, x[:1])),
            (x[:1] * 2, (5, x.sum(0, keepdim=True))),
        ]
        k = int(x[0, 0] > 0) * 2 - 1  # -1 or 1
        size, scale = pairs[k]
        tensor, (count, row) = parts[int(x.sum() > 0)]
        return x * size + scale, tensor * count + row


@pytest.mark.parametrize("opset", lowering_opsets("aten::__getitem__", helpers=True))
def test_tuple_item_at_a_run_time_index(opset: int) -> None:
    others = [(-torch.rand(4, 3),), (torch.rand(1, 3),), (torch.tensor([[1.0, -9.0, 0.0]]),)]
    assert_matches_torch(
        torch.jit.script(TupleItemAtRunTimeIndex()),
        (torch.rand(3, 3),),
        opset=opset,
        other_inputs=others,
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )
