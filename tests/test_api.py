"""export(): calling conventions, opsets, initializers, atomic writes, and the options: input and
output names and nesting, dynamic axes, training modes, verbose and verify, external data,
byte-identical and concurrent exports, node names."""

from __future__ import annotations

import io
import os

import numpy as np
import onnx
import onnx_ir as ir
import pytest
import torch
from conftest import MIN_OPSET, NEWEST, assert_file_matches_torch, assert_matches_torch, export_to_bytes, run_model

import exporter
from exporter import serialization
from exporter.graph_context import GraphContext
from exporter.registry import REGISTRY


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


@pytest.mark.parametrize("out_of_range", [MIN_OPSET - 1, 0, NEWEST + 1])
def test_opset_out_of_range_is_a_clear_value_error(out_of_range: int) -> None:
    with pytest.raises(ValueError, match=f"opset_version={out_of_range} is not supported.*9 to {NEWEST}"):
        exporter.export(TwoInputs(), (torch.randn(2, 4),), io.BytesIO(), opset_version=out_of_range)


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


class Weighted(torch.nn.Module):
    """Initializers over and under 256 bytes, a weight written transposed (linear on a 3-d
    input) and one computed at write time (Conv+BatchNorm folded)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 8)
        self.conv = torch.nn.Conv2d(2, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.scale = torch.nn.Parameter(torch.full((8,), 0.5))  # 32 bytes: stays in the model file

    def forward(self, x: torch.Tensor, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.linear(x) * self.scale, self.bn(self.conv(image))


def _weighted() -> tuple[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    model = Weighted().eval()
    model.bn.running_mean.uniform_(-1, 1)
    model.bn.running_var.uniform_(0.5, 2)
    return model, (torch.randn(2, 3, 16), torch.randn(1, 2, 6, 6))


def test_external_data_true_writes_the_weights_beside_even_a_small_model(tmp_path) -> None:
    """As torch's dynamo exporter lays it out: ``<f>.data``, initializers over 256 bytes in it."""
    model, args = _weighted()
    path = tmp_path / "m.onnx"
    exporter.export(model, args, path, external_data=True)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.onnx.data"]
    proto = onnx.load(str(path), load_external_data=False)
    where = {
        t.name: dict((e.key, e.value) for e in t.external_data)["location"] if t.external_data else None
        for t in proto.graph.initializer
    }
    sizes = {t.name: np.prod(t.dims) * 4 for t in proto.graph.initializer}  # all float32
    assert {name for name, size in sizes.items() if size > 256} == {n for n, w in where.items() if w == "m.onnx.data"}
    assert {name for name, size in sizes.items() if size <= 256} == {n for n, w in where.items() if w is None}
    assert where["scale"] is None and "m.onnx.data" in where.values()
    assert (tmp_path / "m.onnx.data").stat().st_size == sum(size for size in sizes.values() if size > 256)
    assert_file_matches_torch(path, model, [args, (torch.randn(2, 3, 16), torch.randn(1, 2, 6, 6))])


def test_external_data_true_without_weights_leaves_an_empty_data_file(tmp_path) -> None:
    """export_params=False: the weights are inputs; the data file is there, empty, as torch's is."""
    model, args = _weighted()
    path = tmp_path / "m.onnx"
    exporter.export(model, args, path, external_data=True, export_params=False, do_constant_folding=False)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.onnx.data"]
    assert (tmp_path / "m.onnx.data").stat().st_size == 0
    onnx.checker.check_model(str(path), full_check=True)


def test_external_data_false_keeps_the_weights_in_the_file(tmp_path) -> None:
    model, args = _weighted()
    path = tmp_path / "m.onnx"
    exporter.export(model, args, path, external_data=False)
    assert os.listdir(tmp_path) == ["m.onnx"]
    assert_file_matches_torch(path, model, [args])


def test_external_data_false_refuses_a_model_over_2_gib_before_writing(tmp_path, monkeypatch) -> None:
    """Lowered threshold (a real 2 GiB model is a slow test); the file already there stays."""
    monkeypatch.setattr(serialization, "EXTERNAL_DATA_THRESHOLD", 256)
    model, args = _weighted()
    path = tmp_path / "m.onnx"
    path.write_bytes(b"previous model")
    with pytest.raises(ValueError, match=r"external_data=False, but the model's weights \(.* GiB\) exceed 2 GiB"):
        exporter.export(model, args, path, external_data=False)
    assert os.listdir(tmp_path) == ["m.onnx"]
    assert path.read_bytes() == b"previous model"


class RaisesInForward(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("the forward ran")


def test_external_data_with_a_file_object_is_refused_before_the_export_runs() -> None:
    with pytest.raises(TypeError, match="external_data=True needs f to be a file path.*a BytesIO has no place"):
        exporter.export(RaisesInForward(), (torch.randn(2),), io.BytesIO(), external_data=True)
    with pytest.raises(TypeError, match="external_data must be True, False or None, got 'yes'"):
        exporter.export(RaisesInForward(), (torch.randn(2),), io.BytesIO(), external_data="yes")


@pytest.mark.parametrize("failure", ["progress", "rename"])
def test_a_failed_external_write_leaves_nothing_behind(tmp_path, monkeypatch, failure: str) -> None:
    """Stopped while the data file is written, or when the model file replaces its target
    (the data file, already in place, is removed too)."""
    model, args = _weighted()
    path = tmp_path / "m.onnx"
    progress = None
    if failure == "progress":

        def progress(written: int, total: int) -> None:
            raise KeyboardInterrupt

    else:
        replace = os.replace

        def broken_replace(src: str, dst: str) -> None:
            if dst == str(path):
                raise OSError(28, "No space left on device")
            replace(src, dst)

        monkeypatch.setattr(serialization.os, "replace", broken_replace)
    with pytest.raises(KeyboardInterrupt if failure == "progress" else OSError):
        exporter.export(model, args, path, external_data=True, progress=progress)
    assert os.listdir(tmp_path) == []


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


# -- options and input/output structure -----------------------------------------------------------


class Nested(torch.nn.Module):
    def forward(
        self, pair: tuple[torch.Tensor, torch.Tensor], extra: dict[str, torch.Tensor], scale: torch.Tensor | None = None
    ):  # noqa: ANN201
        a, b = pair
        out = a + b * extra["w"]
        if scale is not None:
            out = out * scale
        return {"sum": out, "parts": (a, b.sum())}


def test_nested_inputs_and_outputs_flatten_in_documented_order() -> None:
    """Inputs flatten depth first, dict values in insertion order, named <arg>_<index|key>;
    outputs likewise; None inputs are left out."""
    pair = (torch.randn(3), torch.randn(3))
    extra = {"w": torch.randn(3)}
    # a trailing dict means keyword arguments (torch.onnx.export's rule): end with {} to pass
    # a dict positionally
    data, model = export_to_bytes(Nested(), (pair, extra, {}))
    assert [v.name for v in model.graph.inputs] == ["pair_0", "pair_1", "extra_w"]
    assert [v.name for v in model.graph.outputs] == ["output_0", "output_1", "output_2"]
    got = run_model(data, [pair[0], pair[1], extra["w"]])
    want = Nested()(pair, extra)
    np.testing.assert_allclose(got[0], want["sum"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got[1], want["parts"][0].numpy())
    np.testing.assert_allclose(got[2], want["parts"][1].numpy(), rtol=1e-6)


def test_output_names_count_checked() -> None:
    with pytest.raises(ValueError, match="output_names has 4 names but the model has 3"):
        export_to_bytes(
            Nested(), ((torch.randn(3), torch.randn(3)), {"w": torch.randn(3)}, {}), output_names=list("abcd")
        )


def test_training_mode_dropout_drops_from_opset_12() -> None:
    model = torch.nn.Sequential(torch.nn.Dropout(0.5))
    x = torch.ones(100, 100)
    data, onnx_model = export_to_bytes(model, (x,), training=exporter.TrainingMode.TRAINING, opset_version=13)
    (out,) = run_model(data, [x])
    kept = out != 0
    assert 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(out[kept], 2.0)
    assert model.training  # restored (it was in training mode before)
    with pytest.raises(exporter.SymbolicError, match="opset 12"):
        export_to_bytes(model, (x,), training=exporter.TrainingMode.TRAINING, opset_version=11)


def test_eval_and_preserve_modes() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).train()
    _, onnx_model = export_to_bytes(model, (torch.randn(2, 4),))  # EVAL by default: no Dropout
    assert "Dropout" not in {n.op_type for n in onnx_model.graph}
    _, onnx_model = export_to_bytes(
        model, (torch.randn(2, 4),), training=exporter.TrainingMode.PRESERVE, opset_version=13
    )
    assert "Dropout" in {n.op_type for n in onnx_model.graph}


def test_batch_norm_in_training_mode_uses_batch_statistics() -> None:
    model = torch.nn.BatchNorm1d(4)
    x = torch.randn(8, 4) * 3 + 1
    buffer = io.BytesIO()
    exporter.export(model, (x,), buffer, training=exporter.TrainingMode.TRAINING)
    (got,) = run_model(buffer.getvalue(), [x])
    want = torch.nn.functional.batch_norm(x, None, None, training=True)
    np.testing.assert_allclose(got, want.numpy(), atol=1e-5)


def test_exports_are_byte_identical() -> None:
    model = torch.nn.TransformerEncoderLayer(16, 4, 32).eval()
    x = torch.randn(5, 2, 16)
    first, _ = export_to_bytes(model, (x,))
    second, _ = export_to_bytes(model, (x,))
    assert first == second


def test_verbose_prints_the_graph(capsys) -> None:
    export_to_bytes(torch.nn.ReLU(), (torch.randn(2),), verbose=True)
    assert "Relu" in capsys.readouterr().out


def test_verify_option_refuses_a_wrong_model() -> None:
    def abs_instead(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Abs", self)

    with REGISTRY.scoped_custom("aten::relu", 9, abs_instead):
        with pytest.raises(exporter.VerificationError, match="onnxruntime disagrees"):
            exporter.export(torch.nn.ReLU(), (torch.randn(50),), io.BytesIO(), verify=True)


def test_concurrent_exports_in_threads() -> None:
    import concurrent.futures

    models = [
        (torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval(), (torch.randn(1, 3, 8, 8),), 11),
        (torch.nn.TransformerEncoderLayer(16, 4, 32).eval(), (torch.randn(5, 2, 16),), 17),
        (torch.nn.LSTM(4, 8, 2).eval(), (torch.randn(5, 2, 4),), 20),
    ] * 2

    def run(item):  # noqa: ANN001, ANN202
        model, args, opset = item
        buffer = io.BytesIO()
        exporter.export(model, args, buffer, opset_version=opset)
        return exporter.verify(model, args, buffer.getvalue(), atol=1e-5).passed

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        assert all(pool.map(run, models))


def test_node_names_carry_the_module_path() -> None:
    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.query = torch.nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.query(x))

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attention = Attention()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.attention(x)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.ModuleList([Layer(), Layer()])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layer:
                x = layer(x)
            return x

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.encoder(x)

    _, onnx_model = export_to_bytes(Model(), (torch.randn(2, 3, 4),))
    names = [n.name for n in onnx_model.graph]
    assert "/encoder/layer.0/attention/query/MatMul" in names
    assert "/encoder/layer.1/attention/Relu" in names
    assert set(onnx_model.graph.initializers) >= {
        "encoder.layer.0.attention.query.weight.T",
        "encoder.layer.1.attention.query.bias",
    }
