"""Lists of dicts built in a loop, as torchvision's detection heads return their results
(roi_heads.py: ``for i in range(num_images): result.append({"boxes": ..., "labels": ...,
"scores": ...})``), then returned, iterated or indexed.

Where the trip count is known at export time (the batch dim of a static input, the length of
a list argument, a constant) the loop unrolls and each dict is a Python dict at export time
(exporter/opset9/script_dicts.py), so every consumer resolves while exporting. Where it is
only known at run time (a dynamic batch axis, a number argument), ONNX has no sequence of
maps: the export is refused naming the append, the dict argument and the user's line.
"""

from __future__ import annotations

from typing import Dict, List  # noqa: UP035 - TorchScript reads these annotations

import pytest
import torch
from conftest import NEWEST, assert_matches_torch, export_to_bytes

import exporter

OPSETS = (11, 13, 17, NEWEST)


class Detections(torch.nn.Module):
    """One dict per image, as roi_heads' postprocess returns them."""

    def forward(self, x: torch.Tensor) -> List[Dict[str, torch.Tensor]]:  # noqa: UP006
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        for i in range(x.shape[0]):
            scores = x[i].sigmoid().amax(-1)
            result.append({"boxes": x[i] * 2.0, "labels": x[i].argmax(-1), "scores": scores})
        return result


class IteratedDetections(torch.nn.Module):
    """The dicts read back by iteration and by a loop over their indices (as a transform's
    postprocess rescales each image's boxes)."""

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> tuple[List[torch.Tensor], torch.Tensor]:  # noqa: UP006
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        for i in range(x.size(0)):
            result.append({"boxes": x[i] + float(i), "scores": x[i].sum(-1)})
        for i in range(len(result)):
            result[i]["boxes"] = result[i]["boxes"] * scale
        rows: List[torch.Tensor] = []  # noqa: UP006
        for r in result:
            rows.append(r["boxes"] - r["scores"].unsqueeze(-1))
        return rows, result[-1]["scores"] + result[0]["scores"]


class ListArgumentDetections(torch.nn.Module):
    """The count is the length of a list argument (a batch of differently sized images)."""

    def forward(self, images: List[torch.Tensor]) -> List[Dict[str, torch.Tensor]]:  # noqa: UP006
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        num_images = len(images)
        for i in range(num_images):
            image = images[i]
            result.append({"mean": image.mean(0), "size": torch.tensor(image.shape[0])})
        return result


@pytest.mark.parametrize("opset", OPSETS)
def test_list_of_dicts_over_a_static_batch_is_returned(opset: int) -> None:
    model = torch.jit.script(Detections())
    assert_matches_torch(model, (torch.randn(3, 5, 4),), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_list_of_dicts_over_a_static_batch_is_iterated_and_indexed(opset: int) -> None:
    model = torch.jit.script(IteratedDetections())
    assert_matches_torch(model, (torch.randn(2, 4, 3), torch.tensor(1.5)), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_list_of_dicts_over_a_list_argument(opset: int) -> None:
    model = torch.jit.script(ListArgumentDetections())
    assert_matches_torch(model, ([torch.randn(3, 2), torch.randn(5, 2)],), opset=opset)


class CountArgument(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        for i in range(n):
            result.append({"boxes": x * i, "scores": x.sum(-1) + i})
        return result[-1]["boxes"] + result[0]["scores"].unsqueeze(-1)


@pytest.mark.parametrize("opset", OPSETS)
def test_list_of_dicts_over_a_run_time_count_is_refused(opset: int) -> None:
    """``n`` is an input of the exported graph: the number of dicts is only known at run time."""
    model = torch.jit.script(CountArgument())
    with pytest.raises(exporter.SymbolicError, match=r"aten::append.*test_script_dict_lists\.py:\d+") as caught:
        export_to_bytes(model, (torch.randn(3, 4), 3), opset_version=opset)
    message = str(caught.value)
    assert "result.append(" in message
    assert "el=" in message  # the argument: the dict appended
    assert "cannot hold dicts" in message


def test_list_of_dicts_over_a_dynamic_batch_is_refused() -> None:
    """A dynamic batch axis makes the trip count a run-time value, the loop cannot unroll."""
    model = torch.jit.script(Detections())
    with pytest.raises(exporter.SymbolicError, match=r"aten::append.*cannot hold dicts"):
        export_to_bytes(model, (torch.randn(2, 5, 4),), input_names=["x"], dynamic_axes={"x": {0: "b"}})


class SplitPerImage(torch.nn.Module):
    """roi_heads' shape of it: the predictions of all images split by per-image counts that
    are run-time sizes, then ``num_images = len(boxes)`` dicts: the number of pieces is the
    length of the (export-time) list of counts, so the loop still unrolls."""

    def forward(self, images: List[torch.Tensor], weight: torch.Tensor) -> List[Dict[str, torch.Tensor]]:  # noqa: UP006
        # proposals kept by a data-dependent filter: their counts are only known at run time
        proposals = [p[p[:, 0] > 0] for p in images]
        boxes_per_image = [p.shape[0] for p in proposals]
        logits = torch.cat(proposals, 0) @ weight
        scores = logits.softmax(-1).split(boxes_per_image, 0)
        all_boxes: List[torch.Tensor] = []  # noqa: UP006
        all_scores: List[torch.Tensor] = []  # noqa: UP006
        for boxes, score in zip(proposals, scores):
            keep = score[:, 1] > 0.5
            all_boxes.append(boxes[keep])
            all_scores.append(score[keep, 1])
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        num_images = len(all_boxes)
        for i in range(num_images):
            result.append({"boxes": all_boxes[i], "scores": all_scores[i]})
        return result


@pytest.mark.parametrize("opset", OPSETS)
def test_list_of_dicts_after_a_split_by_run_time_counts(opset: int) -> None:
    model = torch.jit.script(SplitPerImage())
    images = [torch.randn(7, 4), torch.randn(9, 4)]
    others = [([torch.randn(7, 4), torch.randn(9, 4)], torch.randn(4, 2) * 3)]  # other kept counts
    assert_matches_torch(model, (images, torch.randn(4, 2) * 3), opset=opset, other_inputs=others)
