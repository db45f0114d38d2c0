"""TorchScript dict builtins (exporter.opset9.script_dicts), in the shapes torchvision's scripted
models use them: feature maps collected in an OrderedDict and returned, heads writing
``result["out"]``, dict reads, and ``list.copy()`` (swin's shift sizes)."""

from __future__ import annotations

import io
from collections import OrderedDict

import pytest
import torch
from conftest import (
    FEATURE_OPSETS,
    NEWEST,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
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
    """Item 5: Dict[str, Tensor] outputs and prim::dtype."""

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
