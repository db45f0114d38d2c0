"""dynamic_axes: shape-reading code stays dynamic and runs at sizes other than the traced ones.

Shape arithmetic on named axes stays in the graph (and folds without them); dynamic_axes beyond
an output's rank are skipped with a warning; a reshape to a shape computed at run time keeps its
rank, and one whose target mixes run-time and export-time sizes (``x.reshape(B, C * K, L)`` with a
dynamic batch B, as timm's VOLO writes before F.fold) keeps the known sizes in its output type:
ONNX's per-node inference gives no dim of a shape it cannot fold, and a later op that needs a
size at export time (F.fold's channels) would refuse the model.
"""

from __future__ import annotations

import io
import math

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import (
    BASE_OPSETS,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_outputs_match,
    export_to_bytes,
    run_model,
)

import exporter


class ShapeReader(torch.nn.Module):
    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.causal = causal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, channels = x.shape
        y = self.linear(x).view(batch * steps, -1).view(-1, steps, channels)
        positions = torch.arange(x.size(1)).float().unsqueeze(-1)
        y = y + positions * 0.1
        if self.causal:
            y = torch.nn.functional.scaled_dot_product_attention(y, y, y, is_causal=True)
        else:
            y = torch.softmax(y @ y.transpose(-1, -2) / math.sqrt(8), -1) @ y
        return y.reshape(batch, -1)[:, : x.shape[-1] * 2]


def _run(model: torch.nn.Module, opset: int, shapes: list[tuple[int, ...]], **kwargs: object) -> object:
    buffer = io.BytesIO()
    onnx_model = exporter.export(
        model,
        (torch.randn(*shapes[0]),),
        buffer,
        opset_version=opset,
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "output": {0: "batch"}},
        **kwargs,
    )
    for shape in shapes:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x)
        assert_outputs_match(run_model(buffer.getvalue(), [x]), want)
    return onnx_model


SHAPES = [(2, 5, 8), (3, 7, 8), (1, 2, 8)]


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_shape_arithmetic_stays_dynamic(opset: int) -> None:
    onnx_model = _run(ShapeReader(causal=False).eval(), opset, SHAPES)
    (inp,) = onnx_model.graph.inputs
    assert [str(d) for d in inp.shape][:2] == ["batch", "seq"]
    assert str(onnx_model.graph.outputs[0].shape[0]) == "batch"


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_causal_mask_from_sequence_length(opset: int) -> None:
    _run(ShapeReader(causal=True).eval(), opset, SHAPES)


def test_causal_mask_with_dynamic_length_below_11_names_opset_11() -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 11"):
        _run(ShapeReader(causal=True).eval(), 9, SHAPES)


def test_without_dynamic_axes_shape_arithmetic_folds() -> None:
    buffer = io.BytesIO()
    onnx_model = exporter.export(ShapeReader(causal=False).eval(), (torch.randn(2, 5, 8),), buffer)
    ops = {n.op_type for n in onnx_model.graph}
    assert not ops & {"Shape", "Gather", "Range", "NonZero"}, ops
    assert [d for d in onnx_model.graph.outputs[0].shape] == [2, 16]


def test_dynamic_batch_in_a_cnn() -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
    ).eval()
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(2, 3, 8, 8),), buffer, dynamic_axes={"input": [0]}, opset_version=13)
    for batch in (1, 5):
        x = torch.randn(batch, 3, 8, 8)
        with torch.no_grad():
            assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


def test_integer_fill_value_with_dynamic_shape() -> None:
    """T5's relative position buckets: full_like(int tensor, 15) with a dynamic size."""

    class Bucket(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = (x * 3).to(torch.long)
            return torch.min(y, torch.full_like(y, 15))

    buffer = io.BytesIO()
    exporter.export(Bucket(), (torch.arange(8.0),), buffer, dynamic_axes={"x": [0]}, opset_version=13)
    for n in (3, 8, 11):
        x = torch.arange(float(n))
        (got,) = run_model(buffer.getvalue(), [x])
        assert got.tolist() == Bucket()(x).tolist()


class SliceToEnd(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x[:, 1:, x.size(2) - 3], x[:, 2:, 1]


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_dynamic_axes_beyond_an_outputs_rank_are_skipped(opset: int) -> None:
    """One dynamic_axes entry names axis 2 of a rank-2 output: torch's exporter names only the
    axes the output has; we warn and skip the rest instead of failing."""
    x = torch.rand(5, 5, 5)
    with pytest.warns(UserWarning, match="names axis 2 of output 'out', which has rank 2"):
        onnx_model = assert_matches_torch(
            SliceToEnd(),
            (x,),
            opset=opset,
            input_names=["x"],
            output_names=["out"],
            dynamic_axes={"x": [0, 1, 2], "out": [0, 1, 2]},
            other_inputs=[(torch.rand(3, 6, 4),)],
        )
    assert [str(d) for d in onnx_model.graph.outputs[0].shape] == ["out_dynamic_axes_1", "out_dynamic_axes_2"]


class ReshapeBySizesThenTranspose(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        shape = x.size()[:3] + (-1,)
        return y.reshape(shape).transpose(1, 2)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_reshape_to_a_run_time_shape_keeps_its_rank(opset: int) -> None:
    """The rank of a reshape to a shape computed at run time is the shape's length, which a
    following transpose needs for its perm (scripted, all axes dynamic)."""
    model = torch.jit.script(ReshapeBySizesThenTranspose())
    assert_matches_torch(
        model,
        (torch.ones(2, 3, 4, 5), torch.randn(3, 4, 5, 2)),
        opset=opset,
        input_names=["x", "y"],
        dynamic_axes={"x": [0, 1, 2, 3], "y": [0, 1, 2, 3]},
        other_inputs=[(torch.ones(4, 2, 3, 1), torch.randn(2, 3, 4, 4))],
    )


# -- reshapes to sizes partly known at export time ------------------------------------------------


class FoldAfterReshape(torch.nn.Module):
    """Blocks of shape (B, C, K, L) regrouped as F.fold's (B, C * K, L) from the traced sizes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, kernel, blocks = x.shape
        cols = x.reshape(batch, channels * kernel, blocks)
        return F.fold(cols, output_size=(5, 6), kernel_size=3, padding=1)


class ReshapeMixed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, kernel, blocks = x.shape
        return x.reshape(batch, channels * kernel, blocks) * 2


DYNAMIC_BATCH = {"input_names": ["x"], "dynamic_axes": {"x": {0: "batch"}}}


@pytest.mark.parametrize("opset", lowering_opsets("aten::col2im", helpers=True))
def test_fold_after_a_reshape_with_a_dynamic_batch(opset: int) -> None:
    assert_matches_torch(
        FoldAfterReshape(),
        (torch.randn(1, 4, 9, 30),),
        opset=opset,
        other_inputs=[(torch.randn(3, 4, 9, 30),)],
        **DYNAMIC_BATCH,
    )


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_reshape_output_keeps_the_sizes_known_at_export(opset: int) -> None:
    x = torch.randn(2, 4, 9, 30)
    assert_matches_torch(ReshapeMixed(), (x,), opset=opset, other_inputs=[(torch.randn(5, 4, 9, 30),)], **DYNAMIC_BATCH)
    _, model = export_to_bytes(ReshapeMixed(), (x,), opset_version=opset, **DYNAMIC_BATCH)
    (mul,) = [node for node in model.graph if node.op_type == "Mul"]
    dims = list(mul.inputs[0].shape)  # the Reshape's output
    assert dims[1:] == [36, 30] and not isinstance(dims[0], int), dims
