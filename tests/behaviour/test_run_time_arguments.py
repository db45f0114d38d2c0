"""Arguments computed at run time where ops used to demand constants: chunk counts, split sizes,
one_hot classes, pad amounts, slice steps and bounds, squeeze dims, top-k's k, roll shifts,
'same' padding from run-time sizes, negative indices on dynamic dims, and baddbmm's beta and
alpha. Scripted models take Python numbers as 0-d graph inputs, so these values reach the
lowering as graph values; where an ONNX op takes one only as an input from some opset, below it
the export names that opset."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import FEATURE_OPSETS, SEQUENCE_OPSETS, assert_matches_torch, export_to_bytes

import exporter

DYNAMIC_ROWS = {"input_names": ["x", "n"], "dynamic_axes": {"x": {0: "rows"}}}


class Chunk(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int):
        a, b, c = x.chunk(n)
        return a, b, c


class Split(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int):
        a, b, c = x.split(n)
        return a, b, c


class SplitList(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int):
        return x.split(n)


class OneHot(torch.nn.Module):
    def forward(self, i: torch.Tensor, n: int):
        return F.one_hot(i, n)


class Pad(torch.nn.Module):
    def __init__(self, mode: str = "constant") -> None:
        super().__init__()
        self.mode = mode

    def forward(self, x: torch.Tensor, p: int):
        return F.pad(x, [p, 1, 0, p], mode=self.mode)


class SliceStep(torch.nn.Module):
    def forward(self, x: torch.Tensor, s: int):
        return x[1::s]


class Baddbmm(torch.nn.Module):
    def forward(self, i: torch.Tensor, a: torch.Tensor, b: torch.Tensor, beta: float, alpha: float):
        return torch.baddbmm(i, a, b, beta=beta, alpha=alpha)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_chunk_runtime_chunks(opset: int) -> None:
    x = torch.randn(6, 4)
    assert_matches_torch(
        torch.jit.script(Chunk()), (x, 3), opset=opset, other_inputs=[(torch.randn(7, 4), 3)], **DYNAMIC_ROWS
    )


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_split_runtime_size(opset: int) -> None:
    m = torch.jit.script(Split())
    assert_matches_torch(m, (torch.randn(6, 4), 2), opset=opset, other_inputs=[(torch.randn(8, 4), 3)], **DYNAMIC_ROWS)


def test_split_runtime_size_needs_unpacked_pieces_below_opset_11() -> None:
    with pytest.raises(exporter.SymbolicError, match="split_size"):
        export_to_bytes(torch.jit.script(SplitList()), (torch.randn(6, 4), 2), opset_version=10)


def test_split_runtime_size_pieces_not_unpacked_are_a_sequence() -> None:
    """From opset 11 the pieces of a run-time count are a sequence (SplitToSequence)."""
    m = torch.jit.script(SplitList())
    assert_matches_torch(m, (torch.randn(6, 4), 2), opset=13, other_inputs=[(torch.randn(7, 4), 3)], **DYNAMIC_ROWS)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_one_hot_runtime_num_classes(opset: int) -> None:
    i = torch.tensor([0, 2, 1])
    assert_matches_torch(torch.jit.script(OneHot()), (i, 4), opset=opset, other_inputs=[(i, 3), (i, -1)])


@pytest.mark.parametrize("opset", lowering_opsets("aten::pad", "aten::constant_pad_nd", helpers=True, min_opset=11))
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
def test_pad_runtime_amounts(opset: int, mode: str) -> None:
    x = torch.randn(1, 5, 6)
    assert_matches_torch(torch.jit.script(Pad(mode)), (x, 2), opset=opset, other_inputs=[(x, 1)])


def test_pad_runtime_amounts_need_opset_11() -> None:
    with pytest.raises(exporter.SymbolicError, match="argument 'pad' computed at run time needs opset 11"):
        export_to_bytes(torch.jit.script(Pad()), (torch.randn(5, 6), 2), opset_version=9)


@pytest.mark.parametrize("opset", lowering_opsets("aten::slice", helpers=True))
def test_slice_runtime_step(opset: int) -> None:
    """Slice-1 takes no step: below opset 10 a Gather of the computed positions."""
    x = torch.randn(7, 3)
    assert_matches_torch(torch.jit.script(SliceStep()), (x, 2), opset=opset, other_inputs=[(x, 3), (x, 9)])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_baddbmm_runtime_beta_alpha(opset: int) -> None:
    args = (torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    assert_matches_torch(torch.jit.script(Baddbmm()), (*args, 0.5, 2.0), opset=opset, other_inputs=[(*args, 0.0, -1.0)])


# --- dims, split sizes and steps computed in the graph (scripted models) ----------------------


class RunTimeDims(torch.nn.Module):
    """squeeze/unsqueeze at dims computed from the data: torch squeezes only a dim of size 1."""

    def forward(self, x: torch.Tensor, d: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        picked = int(x.sum() > 0) - 1  # -1 or 0
        up = x.unsqueeze(d)
        return up * 2, up.squeeze(d) + 1, x.unsqueeze(picked).squeeze(picked - 1)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_squeeze_and_unsqueeze_at_run_time_dims(opset: int) -> None:
    others = [(torch.randn(1, 3) - 5, 0), (torch.randn(5, 3) + 5, -1), (torch.randn(2, 3), -3)]
    assert_matches_torch(
        torch.jit.script(RunTimeDims()), (torch.randn(4, 3), 1), opset=opset, other_inputs=others, **DYNAMIC_ROWS
    )


class RunTimeSplitSizes(torch.nn.Module):
    """split_with_sizes by sizes computed from a run-time dim."""

    def forward(self, x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n = x.size(0)
        a, b, c = torch.split(x, [k, n // 2 - k, n - n // 2])
        return a * 1, b * 2, c * 3


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_split_with_run_time_sizes(opset: int) -> None:
    others = [(torch.randn(2, 3), 0), (torch.randn(9, 3), 3)]
    assert_matches_torch(
        torch.jit.script(RunTimeSplitSizes()), (torch.randn(6, 3), 1), opset=opset, other_inputs=others, **DYNAMIC_ROWS
    )


class RunTimeSliceScatter(torch.nn.Module):
    """slice_scatter/select_scatter with bounds and a step computed at run time, a negative
    index on a dynamic dim: Scatter at computed positions (iota is NonZero below opset 11)."""

    def forward(self, x: torch.Tensor, s: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        n = x.size(0)
        tail = torch.slice_scatter(x, x[:2] * 0 - 1, 0, n - 2, n)
        column = torch.slice_scatter(x, x[:, :1] * 0 + 5, 1, -2, -1)
        strided = torch.slice_scatter(x, x[1::s] * 10, 0, 1, n, s)
        last = torch.select_scatter(x, x[0] * 7, 0, -1)
        return tail, column, strided, last


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_slice_scatter_with_run_time_bounds_and_step(opset: int) -> None:
    others = [(torch.randn(2, 3), 1), (torch.randn(9, 3), 3)]
    assert_matches_torch(
        torch.jit.script(RunTimeSliceScatter()),
        (torch.randn(6, 3), 2),
        opset=opset,
        other_inputs=others,
        **DYNAMIC_ROWS,
    )


class UniqueTopK(torch.nn.Module):
    def forward(
        self, ids: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        uniq, inverse, counts = torch.unique(ids, sorted=True, return_inverse=True, return_counts=True)
        k = min(3, scores.size(0))
        top, where = scores.topk(k)
        return uniq, inverse, counts, ids[where] + top.long()


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_unique_and_topk_with_run_time_k(opset: int) -> None:
    model = torch.jit.script(UniqueTopK())
    dynamic = {"input_names": ["ids", "scores"], "dynamic_axes": {"ids": {0: "n"}, "scores": {0: "n"}}}
    others = [(torch.tensor([4, 4]), torch.rand(2)), (torch.randint(0, 5, (9,)), torch.rand(9))]
    assert_matches_torch(model, (torch.randint(0, 5, (6,)), torch.rand(6)), opset=opset, other_inputs=others, **dynamic)


class SamePaddingConv(torch.nn.Module):
    """TensorFlow-style 'same' padding computed from run-time sizes (EfficientNet ports)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ih, iw = x.shape[-2:]
        kh, kw = 3, 3
        sh, sw = 2, 2
        pad_h = max((math.ceil(ih / sh) - 1) * sh + kh - ih, 0)
        pad_w = max((math.ceil(iw / sw) - 1) * sw + kw - iw, 0)
        x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        y = self.conv(x)
        return F.interpolate(y, size=(ih, iw), mode="nearest")


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_same_padding_conv(opset: int) -> None:
    model = torch.jit.script(SamePaddingConv().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 7, 5),), (torch.randn(2, 3, 12, 9),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, **dynamic)


class RollByArgument(torch.nn.Module):
    def forward(self, x: torch.Tensor, shift: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.roll(x, shifts=shift, dims=1), torch.roll(x, shifts=[shift, 1], dims=[0, 1])


@pytest.mark.parametrize("opset", lowering_opsets("aten::roll", helpers=True))
def test_roll_by_a_run_time_shift(opset: int) -> None:
    """The Gather form (opset 9) and the Mod + Slice form (10) take a shift computed at run
    time, on dims of static and of run-time size."""
    dynamic = {"input_names": ["x", "shift"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(2, 4), -7), (torch.randn(5, 4), 0)]
    assert_matches_torch(
        torch.jit.script(RollByArgument()), (torch.randn(3, 4), 2), opset=opset, other_inputs=others, **dynamic
    )


class DynamicIndexing(torch.nn.Module):
    """Negative and run-time indices, bounds and steps on a dynamic dim: Gather-1 takes no
    negative index and Slice-1 neither run-time bounds nor steps, so below opsets 11/10 they
    become a Gather of ``size + i`` or of the computed positions."""

    def forward(
        self, x: torch.Tensor, k: torch.Tensor
    ) -> tuple[
        torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
    ]:
        i = int(k[0])
        lo = int(k[1])
        step = int(k[2])
        return (
            x[-1],
            x[:, -2],
            x[i],
            x[lo:],
            x[lo:-1],
            x[:lo],
            x[1::step],
            x[lo::2],
        )


@pytest.mark.parametrize("opset", lowering_opsets("aten::slice", "aten::select", "aten::index", helpers=True))
def test_negative_and_run_time_indices_on_a_dynamic_dim(opset: int) -> None:
    model = torch.jit.script(DynamicIndexing())
    dynamic = {"input_names": ["x", "k"], "dynamic_axes": {"x": {0: "n"}}}
    others = [
        (torch.randn(2, 3), torch.tensor([1, -5, 3])),
        (torch.randn(9, 3), torch.tensor([-9, 20, 1])),
        (torch.randn(4, 3), torch.tensor([0, -2, 5])),
    ]
    assert_matches_torch(
        model, (torch.randn(6, 3), torch.tensor([-2, 2, 2])), opset=opset, other_inputs=others, **dynamic
    )
