"""The op table for shape ops: view, reshape, permute, squeeze, flip, roll (exporter.opset9.shape).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cases import (
    INF,
    NAN,
    Case,
    arange,
    f32,
    helper_params,
    lowering_opsets,
    op_params,
    pair,
    run_case,
    signature_opsets,
    traced_and_scripted,
    typed,
)
from conftest import assert_matches_torch


def fftshifts(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.fft.fftshift(x),
        torch.fft.ifftshift(x),
        torch.fft.fftshift(x, dim=1),
        torch.fft.ifftshift(x, dim=(0, -1)),
        torch.fft.fftshift(x, dim=(1, -2)),
    )


def channel_shuffles(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.channel_shuffle(x, 3), F.channel_shuffle(x, 2), torch.channel_shuffle(x.flatten(2), 6)


CASES = [
    *traced_and_scripted("fftshift", fftshifts, arange(3, 4, 5)),
    Case("fftshift_ints_bools", lambda x: (fftshifts(x), fftshifts(x > 0)), typed(2, 3, 5, dtype=torch.int32)),
    Case(
        "fftshift_nan_empty",
        lambda x, e: (torch.fft.fftshift(x), torch.fft.ifftshift(e), torch.fft.fftshift(e, dim=0)),
        lambda: (torch.tensor([NAN, INF, -INF, 0.0, 1.0]), torch.ones(0, 3)),
    ),
    *traced_and_scripted(
        "fftshift_dynamic",
        fftshifts,
        arange(3, 4, 5),
        dynamic={"x0": {0: "a", 1: "b", 2: "c"}},
        others=lambda: [(torch.randn(2, 5, 1),), (torch.randn(1, 0, 6),)],
    ),
    *traced_and_scripted("channel_shuffle", channel_shuffles, arange(2, 6, 3, 2)),
    Case(
        "channel_shuffle_ints_nan_empty",
        lambda x, e: (
            channel_shuffles(x),
            torch.channel_shuffle(x.float() * NAN, 2),
            channel_shuffles(e),
            torch.channel_shuffle(e[:, :, :0], 3),
        ),
        lambda: (torch.randint(-5, 5, (1, 6, 2, 2), dtype=torch.int8), torch.ones(0, 6, 2, 2)),
    ),
    *traced_and_scripted(
        "channel_shuffle_dynamic",
        channel_shuffles,
        arange(2, 6, 3, 2),
        dynamic={"x0": {0: "n", 1: "c", 2: "h", 3: "w"}},
        others=lambda: [(torch.randn(3, 12, 1, 4),), (torch.randn(1, 6, 0, 2),)],
    ),
    # shape
    Case("view", lambda a: a.view(4, -1), f32(2, 3, 4)),
    Case("view_dynamic_size", lambda a: a.view(a.size(0), -1), f32(2, 3, 4)),
    Case("reshape", lambda a: a.reshape(-1), f32(2, 3)),
    Case("view_as", lambda a, b: a.view_as(b), pair((2, 6), (3, 4))),
    Case("flatten", lambda a: a.flatten(1), f32(2, 3, 4)),
    Case("flatten_middle", lambda a: a.flatten(1, 2), f32(2, 3, 4, 5)),
    Case("unflatten", lambda a: a.unflatten(1, (2, 3)), f32(4, 6)),
    Case("permute", lambda a: a.permute(2, 0, 1), f32(2, 3, 4)),
    Case("transpose", lambda a: a.transpose(-1, 0), f32(2, 3, 4)),
    Case("t", lambda a: a.t(), f32(2, 3)),
    Case("contiguous", lambda a: a.transpose(0, 1).contiguous() + 1, f32(2, 3)),
    Case("unsqueeze", lambda a: a.unsqueeze(-1), f32(2, 3)),
    Case("squeeze", lambda a: a.squeeze(), f32(2, 1, 3, 1)),
    Case("squeeze_dim", lambda a: a.squeeze(1), f32(2, 1, 3)),
    Case("squeeze_noop", lambda a: a.squeeze(0) * 2, f32(2, 1, 3)),
    Case("expand", lambda a: a.expand(4, -1, 3), f32(1, 2, 1)),
    Case("expand_as", lambda a, b: a.expand_as(b), pair((3, 1), (3, 4))),
    Case("size_arith", lambda a: a.new_zeros(a.size(0) * 2, a.size(1)) + 1, f32(2, 3)),
    # reordering
    Case("movedim", lambda a: a.movedim(0, -1), f32(2, 3, 4)),
    Case("movedim_list", lambda a: torch.movedim(a, (0, 1), (2, 0)), f32(2, 3, 4, 5)),
    Case("numpy_T", lambda a: a.T, f32(2, 3, 4)),
    Case("numpy_T_bool", lambda a: a.T, typed(2, 3, dtype=torch.bool)),
    Case("mT_mH_adjoint", lambda a: (a.mT, a.mH, a.adjoint(), torch.adjoint(a[0])), f32(2, 3, 4)),
    Case("mT_int", lambda a: a.mT, typed(3, 2, dtype=torch.int64)),
    Case("ravel", lambda a: (a.ravel(), a.t().ravel(), torch.ravel(a[0, 0])), f32(3, 4)),
    Case("flip", lambda a: a.flip(0, -1), arange(3, 4, 2)),
    Case("flip_int32", lambda a: torch.flip(a, [1]), arange(2, 5, dtype=torch.int32)),
    Case(
        "flip_dynamic",
        lambda a: torch.flip(a, [0]),
        arange(5, 2),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(3, 2),)],
    ),
    Case("roll", lambda a: a.roll(2, 1), arange(3, 5)),
    Case("roll_multi_negative", lambda a: torch.roll(a, (-1, 7), (0, 2)), arange(3, 2, 4)),
    Case(
        "roll_dynamic",
        lambda a: torch.roll(a, (-1, 5), (0, 1)),
        arange(4, 3),
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(2, 7),), (torch.randn(0, 3),)],
    ),
    Case(
        "roll_flat_dynamic",
        lambda a: torch.roll(a, -7),
        arange(4, 3),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(1, 3),)],
    ),
    Case("roll_flat", lambda a: torch.roll(a, 4), arange(3, 5, dtype=torch.int64)),
    Case("pixel_shuffle", lambda a: F.pixel_shuffle(a, 2), arange(2, 8, 3, 2)),
    Case("pixel_shuffle_3d", lambda a: F.pixel_shuffle(a, 3), arange(9, 2, 2, dtype=torch.int64)),
    Case(
        "pixel_shuffle_dynamic",
        lambda a: F.pixel_shuffle(a, 2),
        arange(2, 8, 3, 2),
        dynamic={"x0": [0, 2, 3]},
        others=lambda: [(torch.randn(1, 8, 2, 5),)],
    ),
    Case("pixel_shuffle_dynamic_5d", lambda a: F.pixel_shuffle(a, 2), arange(2, 1, 4, 3, 2), dynamic={"x0": [0, 1, 3]}),
    Case(
        "pixel_unshuffle_dynamic",
        lambda a: F.pixel_unshuffle(a, 2),
        arange(2, 3, 4, 6, dtype=torch.int32),
        dynamic={"x0": [0, 2, 3]},
        others=lambda: [(torch.arange(24, dtype=torch.int32).reshape(1, 3, 2, 4),)],
    ),
    Case("pixel_unshuffle", lambda a: F.pixel_unshuffle(a, 2), arange(2, 3, 4, 6)),
    Case(
        "rot90",
        lambda a: (
            torch.rot90(a),
            torch.rot90(a, 2),
            torch.rot90(a, 3, (1, 2)),
            a.rot90(-1, (2, 0)),
            torch.rot90(a, 4),
            a.rot90(5, (-1, -2)),
        ),
        arange(2, 3, 4),
    ),
    Case("rot90_bool", lambda a: torch.rot90(a, 1, (0, 1)), typed(3, 5, dtype=torch.bool)),
    Case(
        "rot90_dynamic",
        lambda a: (torch.rot90(a), torch.rot90(a, 2, (1, 0)), torch.rot90(a, -1)),
        arange(3, 4),
        dynamic={"x0": {0: "r", 1: "c"}},
        others=lambda: [(torch.arange(10.0).reshape(5, 2),), (torch.ones(1, 1),)],
    ),
    Case("flip_bool", lambda a: a.flip(1), typed(2, 5, dtype=torch.bool)),
    Case("roll_half", lambda a: a.roll(1, 0), typed(4, 2, dtype=torch.float16)),
    Case("movedim_int64", lambda a: a.movedim(2, 0), typed(2, 3, 4, dtype=torch.int64)),
    Case("pixel_shuffle_bool", lambda a: F.pixel_shuffle(a, 2), typed(1, 4, 2, 3, dtype=torch.bool)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["unsqueeze", "squeeze_dim", "flip", "rot90", "roll"]


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class Squeezes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x.squeeze(1), x.squeeze(), x.squeeze(-1) + 1


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("opset", lowering_opsets("aten::squeeze", helpers=True))
def test_squeeze_dynamic_dim(opset: int, scripted: bool) -> None:
    model = torch.jit.script(Squeezes()) if scripted else Squeezes()
    assert_matches_torch(
        model,
        (torch.randn(2, 1, 1),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2]},
        other_inputs=[(torch.randn(2, 3, 3),), (torch.randn(1, 1, 4),), (torch.randn(3, 1, 2),)],
    )


@pytest.mark.parametrize("opset", lowering_opsets("aten::squeeze", helpers=True))
def test_squeeze_static_dim_stays_squeeze(opset: int) -> None:
    onnx_model = assert_matches_torch(Squeezes(), (torch.randn(2, 1, 1),), opset=opset)
    assert "Compress" not in {node.op_type for node in onnx_model.graph}


class EmptyViews(torch.nn.Module):
    """Sizes with a 0 (torch's: a size) of an empty tensor whose own dims differ there."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x.reshape(0, 5) + 1, x.view(0, 3).sum(0), x.reshape(0)


@pytest.mark.parametrize("opset", sorted({*lowering_opsets("aten::view"), *signature_opsets("reshape_keeping_zeros")}))
def test_zero_sizes_are_sizes_not_copies_of_the_input_dim(opset: int) -> None:
    """A 0 in ONNX's Reshape copies the input's dim (here 2) unless allowzero (14); below it
    the empty result is a constant."""
    onnx_model = assert_matches_torch(EmptyViews(), (torch.zeros(2, 0),), opset=opset)
    reshapes = [node for node in onnx_model.graph if node.op_type == "Reshape"]
    if opset >= 14:
        assert all(node.attributes["allowzero"].as_int() == 1 for node in reshapes)
    else:
        assert not reshapes
