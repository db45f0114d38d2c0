"""Capabilities found missing by torch's own exporter test suite (issue #17): dynamic_axes
beyond an output's rank, run-time chunk counts, integer arange, and friends. Each test is a
small model of the same kind, compared with eager torch."""

from __future__ import annotations

import onnx
import pytest
import torch
from conftest import assert_matches_torch, assert_outputs_match, export_to_bytes, run_model

from exporter.errors import SymbolicError


class SliceToEnd(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x[:, 1:, x.size(2) - 3], x[:, 2:, 1]


@pytest.mark.parametrize("opset", [9, 13])
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


class ArangeFromSizes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.size()[-2:]
        return torch.arange(0, (2 * (rows - 1) + cols) // x.size(0))


@pytest.mark.parametrize("opset", [9, 13])
@pytest.mark.parametrize("script", [False, True])
def test_arange_with_an_int_start_and_run_time_end_is_int64(opset: int, script: bool) -> None:
    """arange.start(Scalar, Scalar): the int literal start must stay an int (a `float | int`
    parameter tries int first), so the result is int64 as in torch, not float."""
    model = torch.jit.script(ArangeFromSizes()) if script else ArangeFromSizes()
    x = torch.randint(5, (1, 2, 3, 4))
    onnx_model = assert_matches_torch(
        model,
        (x,),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2, 3]},
        other_inputs=[(torch.randint(5, (2, 3, 4, 5)),)],
    )
    assert onnx_model.graph.outputs[0].dtype.name == "INT64"


class FloatOfOneElement(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return torch.tensor([float(x)]), torch.tensor([x.shape[0], int(x)]), torch.tensor([bool(x > 0)])


@pytest.mark.parametrize("opset", [9, 13])
def test_scripted_number_of_a_one_element_tensor_is_0d(opset: int) -> None:
    """float(x)/int(x)/bool(x) of a [1] tensor is a Python number: torch.tensor([float(x)]) has
    shape [1], so the aten::Float/Int/Bool value must be 0-d before the list stacks it."""
    model = torch.jit.script(FloatOfOneElement())
    onnx_model = assert_matches_torch(
        model, (torch.tensor([2.5]),), opset=opset, other_inputs=[(torch.tensor([-3.0]),)]
    )
    assert [list(o.shape) for o in onnx_model.graph.outputs] == [[1], [2], [1]]


class LogSoftmaxDouble(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float64)


@pytest.mark.parametrize("opset", [9, 13])
def test_scripted_if_output_dtype_comes_from_the_taken_branch(opset: int) -> None:
    """functional.log_softmax(dtype=float64) scripted is an If on `dtype is None`; shape
    propagation types its output Float (the other branch), but the branch taken is double."""
    model = torch.jit.script(LogSoftmaxDouble())
    onnx_model = assert_matches_torch(model, (torch.randn(3, 4, 5),), opset=opset)
    assert onnx_model.graph.outputs[0].dtype.name == "DOUBLE"


class ReshapeBySizesThenTranspose(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        shape = x.size()[:3] + (-1,)
        return y.reshape(shape).transpose(1, 2)


@pytest.mark.parametrize("opset", [9, 13])
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


class MixedBitwise(torch.nn.Module):
    def forward(
        self, a: torch.Tensor, b: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return a & 20, torch.bitwise_and(a, b), a | b, a ^ b, b & torch.tensor([1, 2], dtype=torch.int32)


@pytest.mark.parametrize("opset", [13, 18, 20])
@pytest.mark.parametrize("script", [False, True])
def test_bitwise_ops_promote_their_operands(opset: int, script: bool) -> None:
    """uint8 & int8 is int16 in torch; a scripted graph's shape propagation records uint8, so
    the operands are promoted like arithmetic's (a Python int keeps the tensor's dtype)."""
    model = torch.jit.script(MixedBitwise()) if script else MixedBitwise()
    a = torch.randint(0, 255, (3, 4, 2), dtype=torch.uint8)
    b = torch.randint(-128, 127, (3, 4, 2), dtype=torch.int8)
    onnx_model = assert_matches_torch(model, (a, b), opset=opset)
    assert [o.dtype.name for o in onnx_model.graph.outputs] == ["UINT8", "INT16", "INT16", "INT16", "INT32"]


class NestedNones(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, None, tuple[torch.Tensor, None]]]:
        return x, (x + 1, None, (x * 2, None))


@pytest.mark.parametrize("opset", [13, 15, 17])
def test_scripted_none_results_are_empty_optional_outputs(opset: int) -> None:
    """torch's exporter keeps a scripted model's None results as outputs from opset 15 (empty
    optionals, which onnxruntime returns as None) and drops them below, as traces always do."""
    model = torch.jit.script(NestedNones())
    x = torch.randn(3, 4)
    data, onnx_model = export_to_bytes(model, (x,), opset_version=opset)
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    actual = run_model(data, [x])
    if opset >= 15:
        assert [a is None for a in actual] == [False, False, True, False, True]
    else:
        assert len(actual) == 3
    assert_outputs_match(actual, model(x))
    _, traced = export_to_bytes(NestedNones(), (x,), opset_version=opset)
    assert len(traced.graph.outputs) == 3


class InterpolateToRunTimeSize(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        near = torch.nn.functional.interpolate(x, mode="nearest", size=(int(y.size(0)), int(y.size(1))))
        linear = torch.nn.functional.interpolate(x, mode="bilinear", size=(y.size(1), y.size(0)), align_corners=False)
        return near, linear


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_scripted_interpolate_to_a_run_time_size(opset: int) -> None:
    """A scripted F.interpolate whose size is computed from another input's shape: Resize's
    sizes input at run time, with N and C of the input."""
    model = torch.jit.script(InterpolateToRunTimeSize())
    x, y = torch.randn(1, 2, 4, 4), torch.randn(16, 12)
    assert_matches_torch(
        model,
        (x, y),
        opset=opset,
        input_names=["x", "y"],
        dynamic_axes={"x": [0, 1, 2, 3], "y": [0, 1]},
        other_inputs=[(torch.randn(2, 3, 5, 3), torch.randn(7, 9))],
    )


class ChunkReturned(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return torch.chunk(x, 3, dim=1)


class ChunkByRunTimeCount(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return torch.chunk(x, x.size(0), dim=1)


class SplitReturned(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return torch.split(x, 4, dim=1)


class ChunkIterated(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.zeros(x.size(0))
        for piece in torch.chunk(x, x.size(0), dim=1):
            total = total + piece.sum(1)
        return total


@pytest.mark.parametrize("opset", [11, 13, 17])
@pytest.mark.parametrize("module", [ChunkReturned, ChunkByRunTimeCount, SplitReturned, ChunkIterated])
def test_pieces_of_a_run_time_count_are_a_sequence(opset: int, module: type[torch.nn.Module]) -> None:
    """chunk/split pieces that are returned or iterated, not unpacked, of a dim known only at
    run time (or a chunk count computed at run time): their count is only known at run time,
    so they are an ONNX sequence (SplitToSequence, opset 11+) cut as torch cuts them."""
    model = torch.jit.script(module())
    x = torch.randn(3, 18)
    assert_matches_torch(
        model,
        (x,),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "dims"}},
        other_inputs=[(torch.randn(3, n),) for n in (13, 14, 15)] + [(torch.randn(2, 7),)],
    )


def test_pieces_of_a_run_time_count_need_opset_11() -> None:
    model = torch.jit.script(ChunkReturned())
    with pytest.raises(SymbolicError, match="needs its pieces unpacked below opset 11"):
        export_to_bytes(model, (torch.randn(3, 18),), opset_version=10, dynamic_axes={"x": {1: "dims"}})


class ChunkLastDim(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dim = -1

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return torch.chunk(x, 3, dim=self.dim)


@pytest.mark.parametrize("opset", [11, 17])
def test_scripted_chunk_of_a_negative_dim_does_not_crash_shape_propagation(opset: int) -> None:
    """torch's shape propagation aborts the process on aten::chunk with a negative constant
    dim; such a graph is captured with its input types only, and still exports."""
    model = torch.jit.script(ChunkLastDim())
    assert_matches_torch(
        model,
        (torch.randn(1, 18),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "dims"}},
        other_inputs=[(torch.randn(1, 14),)],
    )
