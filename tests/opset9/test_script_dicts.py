"""TorchScript dicts (exporter.opset9.script_dicts): a dict is a Python dict at export time, its
keys constants, its values graph values.

The builtins in the shapes torchvision's scripted models use them: feature maps collected in an
OrderedDict and returned, heads writing ``result["out"]``, dict reads, and ``list.copy()``
(swin's shift sizes); dicts built item by item, ``Dict[str, Tensor]`` inputs and outputs; items
written inside an If or a Loop on run-time values (threaded through them, control_flow/
outer_state.py), and the dicts ONNX cannot hold refused naming the op and the line.

Lists of dicts built in a loop, as torchvision's detection heads return their results
(roi_heads.py: ``for i in range(num_images): result.append({"boxes": ..., "labels": ...,
"scores": ...})``), then returned, iterated or indexed: where the trip count is known at export
time (the batch dim of a static input, the length of a list argument, a constant) the loop
unrolls and every consumer resolves while exporting; where it is only known at run time (a
dynamic batch axis, a number argument), ONNX has no sequence of maps: the export is refused
naming the append, the dict argument and the user's line.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from typing import Dict, List  # noqa: UP035 - TorchScript reads these annotations

import pytest
import torch
from cases import lowering_opsets
from conftest import (
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
    export_to_bytes,
)

import exporter


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


@pytest.mark.parametrize("opset", lowering_opsets("aten::_set_item"))
def test_layer_getter_dict_output(opset: int) -> None:
    model = torch.jit.script(_LayerGetter())
    onnx_model = assert_matches_torch(model, (torch.randn(1, 3, 8, 8),), opset=opset)
    assert [v.name for v in onnx_model.graph.outputs] == ["low", "out"]


@pytest.mark.parametrize("opset", lowering_opsets("aten::upsample_bilinear2d", min_opset=11))
def test_segmentation_result_dict(opset: int) -> None:
    model = torch.jit.script(_SegmentationHead())
    assert_matches_torch(model, (torch.randn(1, 3, 16, 12),), opset=opset, atol=1e-4)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_set_item"))
def test_dict_builtins(opset: int) -> None:
    assert_matches_torch(torch.jit.script(_DictBuiltins()), (torch.randn(2, 3),), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::slice", min_opset=10))
def test_list_copy(opset: int) -> None:
    assert_matches_torch(torch.jit.script(_ListCopy()), (torch.randn(1, 5, 6),), opset=opset)


class _NamedFeatures(torch.nn.Module):
    """SSDLite's extractor: ``OrderedDict([(str(i), v) for i, v in enumerate(output)])``."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        output = [x, x * 2, x + 1]
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


@pytest.mark.parametrize("opset", lowering_opsets("aten::_set_item"))
def test_dict_keyed_by_str_of_loop_index(opset: int) -> None:
    model = torch.jit.script(_NamedFeatures())
    onnx_model = assert_matches_torch(model, (torch.randn(2, 3),), opset=opset)
    assert [v.name for v in onnx_model.graph.outputs] == ["0", "1", "2"]


class DictBuilder(torch.nn.Module):
    """Dicts built item by item, read back, iterated (keys/values/items), copied and merged."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        out["double"] = x * 2
        out["shifted"] = x + 1
        if "double" in out:
            out["diff"] = out["double"] - out["shifted"]
        out["count"] = torch.tensor(len(out))
        total = torch.zeros_like(x)
        for key in out.keys():
            if key != "count":
                total = total + out[key]
        for key, value in out.items():
            total = total + value.float().sum()
        for value in out.values():
            total = total + value.float().mean()
        extra = out.copy()
        extra.update({"total": total})
        extra["fallback"] = out.get("missing", x)
        extra["defaulted"] = extra.setdefault("double", x * 0)
        extra.pop("shifted")
        del extra["diff"]
        return extra


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_dict_built_item_by_item(opset: int) -> None:
    model = torch.jit.script(DictBuilder())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    onnx_model = assert_matches_torch(
        model, (torch.randn(3, 4),), opset=opset, other_inputs=[(torch.randn(5, 4),)], **dynamic
    )
    assert [v.name for v in onnx_model.graph.outputs] == ["double", "count", "total", "fallback", "defaulted"]


class DictInControlFlow(torch.nn.Module):
    """Dict items written in an ``if`` on a run-time value and in a loop with a run-time trip
    count: each written key is one value threaded through the If or Loop."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {"acc": x[0] * 0}
        counts: dict[str, int] = {"positive": 0}
        if bool(x.sum() > 0):
            out["sign"] = torch.ones(1)
            out["acc"] = out["acc"] + 1
        else:
            out["sign"] = -torch.ones(1)
        for i in range(x.size(0)):
            out["acc"] = out["acc"] + x[i]
            if bool(x[i, 0] > 0):
                counts["positive"] = counts["positive"] + 1
        out["positive"] = torch.tensor(counts["positive"])
        return out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_dict_items_written_in_run_time_control_flow(opset: int) -> None:
    model = torch.jit.script(DictInControlFlow())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 4) - 3,), (torch.randn(7, 4) + 0.5,)]
    assert_matches_torch(model, (torch.randn(3, 4),), opset=opset, other_inputs=others, **dynamic)


class KeyOnOnePath(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        if bool(x.sum() > 0):
            out["positive"] = x
        return out


class PopInBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {"a": x, "b": x * 2}
        if bool(x.sum() > 0):
            out.pop("a")
        return out


class RunTimeKey(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[int, torch.Tensor]:
        out: dict[int, torch.Tensor] = {}
        out[int(x.argmax())] = x
        return out


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (KeyOnOnePath(), r"prim::If.*out\[\"positive\"\] = x|dict key 'positive' is set on some paths"),
        (PopInBranch(), r"aten::pop on a dict inside an `if` on a value computed at run time"),
        (RunTimeKey(), r"aten::_set_item.*key computed at run time"),
    ],
)
def test_dicts_onnx_cannot_hold_fail_naming_op_and_line(model: torch.nn.Module, message: str) -> None:
    with pytest.raises(exporter.ExporterError, match=message) as info:
        exporter.export(torch.jit.script(model), (torch.randn(3),), io.BytesIO(), opset_version=17)
    assert "test_script_dicts.py:" in str(info.value)


class StringKeyedHeads(torch.nn.Module):
    """Multi-task heads over a ``Dict[str, Tensor]`` input: features looked up by key, an
    optional key tested with ``in``, heads in a ModuleDict iterated by ``items()``, and a
    ``Dict[str, Tensor]`` result."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3), "reg": torch.nn.Linear(4, 2)})

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        x = features["image"]
        if "text" in features:
            x = x + features["text"]
        out = torch.jit.annotate(dict[str, torch.Tensor], {})
        for name, head in self.heads.items():
            out[name] = head(x)
        out["norm"] = torch.linalg.vector_norm(x, dim=1)
        return out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_string_keyed_dict_input_and_output(opset: int) -> None:
    model = torch.jit.script(StringKeyedHeads().eval())
    # a trailing dict is keyword arguments in torch's convention: an empty one after the features
    args = ({"image": torch.randn(2, 4), "text": torch.randn(2, 4)}, {})
    others = [({"image": torch.randn(5, 4), "text": torch.randn(5, 4)}, {})]
    assert_matches_torch(
        model, args, opset=opset, other_inputs=others, **dynamic_inputs(features_image={0: "n"}, features_text={0: "n"})
    )


class DictOutputs(torch.nn.Module):
    """Dict[str, Tensor] outputs and prim::dtype."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        counts = torch.zeros(x.size(0), dtype=x.dtype)
        if bool(x.sum() > 0):
            counts = counts + 1
        return {"scores": x * 2, "counts": counts, "index": x.argmax(1)}


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_dict_outputs_and_dtype_of_a_tensor(opset: int) -> None:
    model = torch.jit.script(DictOutputs())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    onnx_model = assert_matches_torch(
        model, (torch.randn(3, 4) + 2,), opset=opset, other_inputs=[(torch.randn(5, 4) - 2,)], **dynamic
    )
    assert [v.name for v in onnx_model.graph.outputs] == ["scores", "counts", "index"]


class DictMutation(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d: dict[str, torch.Tensor] = {}
        d["a"] = x
        return d["a"] * 2


def test_dict_mutation_exports() -> None:
    """Dicts with constant keys are Python dicts at export time; the dicts ONNX cannot hold
    fail by name (test_dicts_onnx_cannot_hold_fail_naming_op_and_line)."""
    assert_matches_torch(torch.jit.script(DictMutation()), (torch.randn(2),), opset=13)


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


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_dicts_over_a_static_batch_is_returned(opset: int) -> None:
    model = torch.jit.script(Detections())
    assert_matches_torch(model, (torch.randn(3, 5, 4),), opset=opset)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_dicts_over_a_static_batch_is_iterated_and_indexed(opset: int) -> None:
    model = torch.jit.script(IteratedDetections())
    assert_matches_torch(model, (torch.randn(2, 4, 3), torch.tensor(1.5)), opset=opset)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_dicts_over_a_list_argument(opset: int) -> None:
    model = torch.jit.script(ListArgumentDetections())
    assert_matches_torch(model, ([torch.randn(3, 2), torch.randn(5, 2)],), opset=opset)


class CountArgument(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        result: List[Dict[str, torch.Tensor]] = []  # noqa: UP006
        for i in range(n):
            result.append({"boxes": x * i, "scores": x.sum(-1) + i})
        return result[-1]["boxes"] + result[0]["scores"].unsqueeze(-1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_dicts_over_a_run_time_count_is_refused(opset: int) -> None:
    """``n`` is an input of the exported graph: the number of dicts is only known at run time."""
    model = torch.jit.script(CountArgument())
    with pytest.raises(exporter.SymbolicError, match=r"aten::append.*test_script_dicts\.py:\d+") as caught:
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


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_dicts_after_a_split_by_run_time_counts(opset: int) -> None:
    model = torch.jit.script(SplitPerImage())
    images = [torch.randn(7, 4), torch.randn(9, 4)]
    others = [([torch.randn(7, 4), torch.randn(9, 4)], torch.randn(4, 2) * 3)]  # other kept counts
    assert_matches_torch(model, (images, torch.randn(4, 2) * 3), opset=opset, other_inputs=others)
