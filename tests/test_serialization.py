"""serialization.write_model: weights streamed from torch memory, copies staged in reused buffers."""

from __future__ import annotations

import io
import time

import onnx
import onnx_ir as ir
import pytest
import torch

from exporter import serialization, tensors


def _model_with(weights: dict[str, tensors.TorchTensor]) -> ir.Model:
    graph = ir.Graph([], [], nodes=[], name="weights", opset_imports={"": 18})
    for name, tensor in weights.items():
        value = ir.Value(name=name, shape=ir.Shape(tensor.shape), type=ir.TensorType(tensor.dtype), const_value=tensor)
        graph.register_initializer(value)
        graph.outputs.append(value)
    return ir.Model(graph, ir_version=8)


class _SlowStream(io.BytesIO):
    """A stream that takes its time, so the next weight is prepared while one is written."""

    def write(self, data: bytes) -> int:  # type: ignore[override]
        time.sleep(0.005)
        return super().write(data)


def _expected_bytes(tensor: tensors.TorchTensor) -> bytes:
    return tensor.raw.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes()


@pytest.mark.parametrize("chunk_bytes", [4 * 1024 * 1024, 1000, 64], ids=["whole", "chunks", "rows"])
def test_transposed_weights_are_written_as_their_transposes(chunk_bytes: int, monkeypatch) -> None:
    """Transposed views of several sizes and dtypes, between contiguous and computed weights:
    each is staged (whole, or in chunks of rows when larger than a chunk) in one of two
    buffers taken in turn while the previous piece is written, so a buffer refilled too early
    would show as another piece's bytes."""
    monkeypatch.setattr(serialization, "_CHUNK_BYTES", chunk_bytes)
    generator = torch.Generator().manual_seed(0)

    def transposed(rows: int, cols: int, dtype: torch.dtype = torch.float32) -> tensors.TorchTensor:
        return tensors.TorchTensor(torch.randn(rows, cols, generator=generator).to(dtype).t())

    weights = {
        "a.T": transposed(300, 200),
        "b": tensors.TorchTensor(torch.randn(50, 40, generator=generator)),
        "c.T": transposed(64, 32),
        "d.T": transposed(128, 96, torch.bfloat16),
        "e.T": transposed(17, 5, torch.float16),
        "f": tensors.DeferredTorchTensor(lambda: torch.full((3, 4), 2.5), torch.Size([3, 4]), torch.float32),
        "g.T": transposed(7, 300),
        "h.permuted": tensors.TorchTensor(torch.randn(4, 5, 6, generator=generator).permute(2, 0, 1)),
        "i.T": tensors.TorchTensor(torch.randint(0, 2, (9, 11), generator=generator).bool().t()),
    }
    stream = _SlowStream()
    serialization.write_model(_model_with(weights), stream)
    proto = onnx.load_from_string(stream.getvalue())
    written = {t.name: t for t in proto.graph.initializer}
    assert set(written) == set(weights)
    for name, tensor in weights.items():
        assert list(written[name].dims) == list(tensor.shape), name
        assert written[name].raw_data == _expected_bytes(tensor), name


def test_staging_buffers_are_sized_by_the_largest_copied_weight() -> None:
    """Two buffers for views needing a copy; contiguous and computed weights need none."""
    views = [tensors.TorchTensor(torch.zeros(8, 16).t()), tensors.TorchTensor(torch.zeros(32, 4).t())]
    staging = serialization._Staging([*views, tensors.TorchTensor(torch.zeros(1000))])
    assert [b.numel() for b in staging._buffers] == [512, 512]
    assert staging._gathered.numel() == 0  # both fit in one chunk: copied whole
    assert serialization._Staging([tensors.TorchTensor(torch.zeros(1000))])._buffers == []


def test_a_lone_transposed_weight_in_chunks_is_written_whole(monkeypatch) -> None:
    """The only weight needing a copy, staged in several chunks: each chunk is prepared while
    the previous one is written, so it needs the second buffer (with one, the next chunk was
    copied over the chunk being written: timm's cspnet head was corrupted in 4 of 9 exports)."""
    monkeypatch.setattr(serialization, "_CHUNK_BYTES", 1000)
    weight = tensors.TorchTensor(torch.randn(40, 30, generator=torch.Generator().manual_seed(1)).t())
    assert len(serialization._Staging([weight])._buffers) == 2
    stream = _SlowStream()
    serialization.write_model(_model_with({"w.T": weight, "b": tensors.TorchTensor(torch.ones(7))}), stream)
    written = {t.name: t for t in onnx.load_from_string(stream.getvalue()).graph.initializer}
    assert written["w.T"].raw_data == _expected_bytes(weight)


@pytest.mark.parametrize("chunk_bytes", [4 * 1024 * 1024, 1000], ids=["whole", "chunks"])
def test_external_data_is_laid_out_as_onnx_ir_saves_it(chunk_bytes: int, tmp_path, monkeypatch) -> None:
    """The data file and the initializer entries are those of onnx_ir.save (which torch's dynamo
    exporter calls): over 256 bytes packed densely in graph order, the rest inline; transposed
    weights go through the staging buffers into the data file."""
    monkeypatch.setattr(serialization, "_CHUNK_BYTES", chunk_bytes)
    generator = torch.Generator().manual_seed(0)
    weights = {
        "a.T": tensors.TorchTensor(torch.randn(300, 200, generator=generator).t()),
        "small": tensors.TorchTensor(torch.randn(8, generator=generator)),
        "b": tensors.TorchTensor(torch.randn(50, 40, generator=generator).to(torch.bfloat16)),
        "c": tensors.DeferredTorchTensor(lambda: torch.full((30, 4), 2.5), torch.Size([30, 4]), torch.float32),
        "edge": tensors.TorchTensor(torch.randn(64, generator=generator)),  # 256 bytes: inline
        "d.T": tensors.TorchTensor(torch.randn(7, 300, generator=generator).t()),
    }
    model_stream, data_stream = _SlowStream(), _SlowStream()
    external = serialization.ExternalData(data_stream, "m.onnx.data")
    serialization.write_model(_model_with(weights), model_stream, external=external)
    ir.save(_model_with(weights), tmp_path / "m.onnx", external_data="m.onnx.data")
    assert data_stream.getvalue() == (tmp_path / "m.onnx.data").read_bytes()
    ours = onnx.load_from_string(model_stream.getvalue()).graph.initializer
    theirs = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False).graph.initializer
    assert [(t.name, t.data_location, list(t.external_data), t.raw_data) for t in ours] == [
        (t.name, t.data_location, list(t.external_data), t.raw_data) for t in theirs
    ]
    assert [t.name for t in ours if not t.external_data] == ["small", "edge"]


def test_weights_computed_in_rows_are_written_through_the_buffers(monkeypatch) -> None:
    """A computed weight larger than a chunk is computed a few rows at a time into the staging
    buffers (uneven last chunk included), beside a transposed weight taking the same buffers."""
    monkeypatch.setattr(serialization, "_CHUNK_BYTES", 1000)
    generator = torch.Generator().manual_seed(2)
    source = torch.randn(23, 3, 5, 5, generator=generator)
    factor = torch.rand(23, 1, 1, 1, generator=generator)
    calls: list[tuple[int, int]] = []

    def compute_rows(start: int, stop: int, out: torch.Tensor) -> torch.Tensor:
        calls.append((start, stop))
        return torch.mul(source[start:stop], factor[start:stop], out=out)

    folded = tensors.DeferredTorchTensor(
        lambda: source * factor, source.shape, torch.float32, name="w", compute_rows=compute_rows
    )
    transposed = tensors.TorchTensor(torch.randn(40, 30, generator=generator).t())
    assert len(serialization._Staging([folded])._buffers) == 2
    stream = _SlowStream()
    serialization.write_model(_model_with({"w": folded, "t.T": transposed}), stream)
    written = {t.name: t for t in onnx.load_from_string(stream.getvalue()).graph.initializer}
    assert written["w"].raw_data == _expected_bytes(tensors.TorchTensor(source * factor))
    assert written["t.T"].raw_data == _expected_bytes(transposed)
    assert calls == [(0, 3), (3, 6), (6, 9), (9, 12), (12, 15), (15, 18), (18, 21), (21, 23)]
