"""export(): calling conventions, opsets, initializers, atomic writes."""

from __future__ import annotations

import io
import os

import onnx
import onnx_ir as ir
import pytest
import torch
from conftest import NEWEST, assert_matches_torch, export_to_bytes

import exporter
from exporter import serialization


class TwoInputs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None, scale: float = 1.0) -> torch.Tensor:
        out = self.linear(x) * scale
        if y is not None:
            out = out + y
        return out


def test_args_as_tensor_tuple_and_trailing_kwargs() -> None:
    model = TwoInputs().eval()
    x, y = torch.randn(2, 4), torch.randn(2, 3)
    onnx_model = assert_matches_torch(model, x, opset=17)
    assert [v.name for v in onnx_model.graph.inputs] == ["x"]
    onnx_model = assert_matches_torch(model, (x, y), opset=17)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "y"]
    onnx_model = assert_matches_torch(model, (x, {"y": y}), opset=17)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "y"]
    onnx_model = assert_matches_torch(model, (x, {"scale": 2.0}), opset=17)
    assert [v.name for v in onnx_model.graph.inputs] == ["x"]


def test_script_function_and_script_module() -> None:
    @torch.jit.script
    def scripted(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(a) * b + 1.0

    assert_matches_torch(scripted, (torch.randn(3), torch.randn(3)), opset=13)

    class Module(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(self.linear(x))

    onnx_model = assert_matches_torch(torch.jit.script(Module().eval()), (torch.randn(3, 4),), opset=13)
    assert set(onnx_model.graph.initializers) <= {"linear.weight", "linear.bias", "linear.weight.T"}


def test_returns_the_written_ir_model(tmp_path) -> None:
    path = tmp_path / "m.onnx"
    onnx_model = exporter.export(TwoInputs().eval(), (torch.randn(2, 4),), str(path))
    assert isinstance(onnx_model, ir.Model)
    loaded = onnx.load(str(path))
    onnx.checker.check_model(loaded, full_check=True)
    assert loaded.opset_import[0].version == exporter.DEFAULT_OPSET == 20


def test_path_like_and_file_object(tmp_path) -> None:
    model = TwoInputs().eval()
    exporter.export(model, (torch.randn(2, 4),), tmp_path / "p.onnx")
    assert (tmp_path / "p.onnx").stat().st_size > 0
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(2, 4),), buffer)
    assert onnx.load_from_string(buffer.getvalue()).graph.node


@pytest.mark.parametrize("opset", [8, 0, NEWEST + 1])
def test_opset_out_of_range_is_a_clear_value_error(opset: int) -> None:
    with pytest.raises(ValueError, match=f"opset_version={opset} is not supported.*9 to {NEWEST}"):
        exporter.export(TwoInputs(), (torch.randn(2, 4),), io.BytesIO(), opset_version=opset)


def test_every_opset_from_9_to_newest_is_accepted() -> None:
    model = TwoInputs().eval()
    for opset in range(9, NEWEST + 1):
        _, onnx_model = export_to_bytes(model, (torch.randn(2, 4),), opset_version=opset)
        assert onnx_model.opset_imports[""] == opset


def test_initializers_are_state_dict_keys_and_zero_copy() -> None:
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).eval()
    _, onnx_model = export_to_bytes(model, (torch.randn(1, 3, 8, 8),), do_constant_folding=False)
    names = set(onnx_model.graph.initializers)
    assert names == {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var"}
    weight = onnx_model.graph.initializers["0.weight"].const_value
    assert isinstance(weight, exporter.tensors.TorchTensor)
    assert weight.raw.data_ptr() == model[0].weight.data_ptr()  # no copy until written


def test_tied_weights_appear_once() -> None:
    class Tied(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(10, 4)
            self.head = torch.nn.Linear(4, 10, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(ids))

    onnx_model = assert_matches_torch(Tied().eval(), (torch.tensor([[1, 2, 3]]),), opset=17)
    sources = {v.const_value.raw.data_ptr() for v in onnx_model.graph.initializers.values()}
    assert len(sources) == 1


class Failing(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.special.bessel_j0(x)


def test_failed_export_leaves_existing_file_untouched(tmp_path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"previous contents")
    with pytest.raises(exporter.UnsupportedOperatorError):
        exporter.export(Failing(), (torch.randn(3),), path)
    assert path.read_bytes() == b"previous contents"
    assert os.listdir(tmp_path) == ["model.onnx"]


def test_failed_export_creates_no_file(tmp_path) -> None:
    path = tmp_path / "model.onnx"
    with pytest.raises(exporter.UnsupportedOperatorError):
        exporter.export(Failing(), (torch.randn(3),), path)
    assert os.listdir(tmp_path) == []


def test_write_error_removes_temporary_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "model.onnx"

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(serialization.os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        exporter.export(TwoInputs().eval(), (torch.randn(2, 4),), path)
    assert os.listdir(tmp_path) == []


def test_large_model_uses_external_data(tmp_path, monkeypatch) -> None:
    """The 2 GiB switch, exercised with a lowered threshold (a real 2 GiB model is a slow test)."""
    monkeypatch.setattr(serialization, "EXTERNAL_DATA_THRESHOLD", 1024)
    model = torch.nn.Linear(64, 64).eval()
    path = tmp_path / "big.onnx"
    exporter.export(model, (torch.randn(2, 64),), path)
    assert sorted(os.listdir(tmp_path)) == ["big.onnx", "big.onnx.data"]
    report = exporter.verify(model, (torch.randn(2, 64),), str(path))
    assert report.passed
    with pytest.raises(ValueError, match="external data"):
        exporter.export(model, (torch.randn(2, 64),), io.BytesIO())


def test_model_state_is_unchanged_by_export() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5), torch.nn.BatchNorm1d(4))
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    flags = [m.training for m in model.modules()]
    export_to_bytes(model, (torch.randn(3, 4),))
    assert [m.training for m in model.modules()] == flags
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_input_and_output_names_and_dynamic_axes() -> None:
    model = TwoInputs().eval()
    _, onnx_model = export_to_bytes(
        model,
        (torch.randn(2, 4),),
        input_names=["features"],
        output_names=["scores"],
        dynamic_axes={"features": {0: "batch"}, "scores": [0]},
    )
    (inp,) = onnx_model.graph.inputs
    (out,) = onnx_model.graph.outputs
    assert inp.name == "features" and str(inp.shape[0]) == "batch"
    assert out.name == "scores" and str(out.shape[0]) == "scores_dynamic_axes_1"
    with pytest.warns(UserWarning, match="'nope' is neither an input nor an output"):
        export_to_bytes(model, (torch.randn(2, 4),), dynamic_axes={"nope": [0]})
    with pytest.raises(ValueError, match="input_names has 2 names"):
        export_to_bytes(model, (torch.randn(2, 4),), input_names=["a", "b"])


def test_export_params_false_makes_weights_inputs() -> None:
    _, onnx_model = export_to_bytes(torch.nn.Linear(4, 2), (torch.randn(1, 4),), export_params=False)
    assert not onnx_model.graph.initializers
    assert [v.name for v in onnx_model.graph.inputs] == ["input", "weight", "bias"]


def test_keep_initializers_as_inputs() -> None:
    _, onnx_model = export_to_bytes(torch.nn.Linear(4, 2), (torch.randn(1, 4),), keep_initializers_as_inputs=True)
    assert len(onnx_model.graph.inputs) == 3 and len(onnx_model.graph.initializers) == 2


def test_graph_input_returned_as_output_gets_identity() -> None:
    class PassThrough(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return x, x.contiguous()

    onnx_model = assert_matches_torch(PassThrough(), (torch.randn(2),), opset=13)
    assert [n.op_type for n in onnx_model.graph] == ["Identity", "Identity"]


def test_progress_is_reported_while_weights_are_written(tmp_path) -> None:
    calls = []
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 8)).eval()
    exporter.export(
        model, (torch.randn(1, 64),), tmp_path / "m.onnx", progress=lambda done, total: calls.append((done, total))
    )
    total = sum(p.numel() * 4 for p in model.parameters())
    assert calls and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
