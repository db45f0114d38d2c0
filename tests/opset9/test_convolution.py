"""The op table for convolution, transposed convolution, im2col and col2im (exporter.opset9.convolution).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import (
    HELPER_OPSETS,
    Case,
    arange,
    f32,
    graph_kinds,
    lowering_opsets,
    one_torch_thread,
    op_params,
    opsets_for_kinds,
    rand,
    run_case,
    typed,
)
from conftest import assert_matches_torch

# small eager kernels run several times faster single-threaded on a loaded machine
_one_torch_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


@torch.jit.script
def _scripted_conv_transpose1d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2, dilation=2)


@torch.jit.script
def _scripted_conv_transpose2d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)


@torch.jit.script
def _scripted_conv_transpose3d(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose3d(x, w, stride=(1, 2, 2))


CASES = [
    # sliding blocks
    Case("im2col", lambda a: F.unfold(a, (2, 3), padding=1, stride=(2, 1)), f32(2, 3, 5, 6)),
    Case("im2col_dilation", lambda a: F.unfold(a, 2, dilation=2), f32(1, 2, 5, 5)),
    Case("im2col_double", lambda a: F.unfold(a, 2), arange(1, 1, 3, 3, dtype=torch.float64)),
    Case(
        "col2im",
        lambda a: F.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1)),
        lambda: (F.unfold(torch.randn(2, 3, 5, 6), (2, 3), padding=1, stride=(2, 1)),),
    ),
    Case("col2im_double", lambda a: F.fold(a, (3, 4), 2), typed(1, 4, 6, dtype=torch.float64)),
    Case(
        "col2im_double_strided",
        lambda a: F.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1), dilation=(1, 2)),
        typed(2, 12, 12, dtype=torch.float64),
    ),
    Case("col2im_half", lambda a: F.fold(a, (4, 4), 2, stride=2), typed(1, 8, 4, dtype=torch.float16), atol=1e-3),
    Case("col2im_uneven", lambda a: F.fold(a, (5, 5), 2, stride=2), f32(1, 8, 4)),
    Case("col2im_dilation_unbatched", lambda a: F.fold(a, (5, 5), 2, dilation=2), f32(4, 9)),
    # convolution variants
    Case("conv_tbc", lambda x, w, b: torch.conv_tbc(x, w, b, 1), rand((7, 2, 4), (3, 4, 5), (5,))),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class Layers(torch.nn.Module):
    """Module-backed ops: conv, pooling, norms, linear, embedding, dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv1d(3, 4, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(3, 4, 3, padding=1, groups=1, dilation=2)
        self.conv3 = torch.nn.Conv3d(3, 4, 2)
        self.convt = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1)
        self.conv_same = torch.nn.Conv2d(3, 4, 4, padding="same")
        self.bn = torch.nn.BatchNorm2d(4)
        self.ln = torch.nn.LayerNorm([6])
        self.embedding = torch.nn.Embedding(10, 6, padding_idx=0)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(
        self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor, idx: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return (
            self.conv1(x1),
            F.max_pool2d(self.bn(self.conv2(x2)), 2),
            self.conv3(x3),
            self.convt(x2),
            F.avg_pool2d(self.conv_same(x2), 2, count_include_pad=False, padding=1),
            F.adaptive_avg_pool2d(x2, 1),
            F.adaptive_avg_pool2d(x2, (4, 2)),
            self.dropout(self.ln(self.embedding(idx))),
            F.max_pool1d(x1, 2),
        )


def _layer_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 3, 9), torch.randn(2, 3, 8, 8), torch.randn(1, 3, 4, 4, 4), torch.tensor([[0, 3, 9]])


LAYER_OPSETS = sorted(set(opsets_for_kinds(graph_kinds(Layers().eval(), _layer_inputs()))) | set(HELPER_OPSETS))


@pytest.mark.parametrize("opset", LAYER_OPSETS)
def test_layers(opset: int) -> None:
    model = Layers().eval()
    with torch.no_grad():
        model.bn.running_mean.normal_()
        model.bn.running_var.uniform_(0.5, 2.0)
    assert_matches_torch(model, _layer_inputs(), opset=opset, atol=1e-4)


SCRIPTED = [
    ("conv_transpose1d", _scripted_conv_transpose1d, rand((2, 3, 5), (3, 4, 3), (4,)), 9),
    ("conv_transpose2d", _scripted_conv_transpose2d, rand((1, 4, 3, 3), (4, 3, 3, 3), (6,)), 9),
    ("conv_transpose3d", _scripted_conv_transpose3d, rand((1, 2, 2, 3, 3), (2, 3, 2, 2, 2)), 9),
]


@pytest.mark.parametrize("opset", lowering_opsets("aten::_convolution", helpers=True))
@pytest.mark.parametrize(("fn", "inputs", "min_opset"), [s[1:] for s in SCRIPTED], ids=[s[0] for s in SCRIPTED])
def test_scripted(
    fn: torch.jit.ScriptFunction, inputs: Callable[[], tuple[torch.Tensor, ...]], min_opset: int, opset: int
) -> None:
    if opset < min_opset:
        pytest.skip(f"needs opset {min_opset}")
    assert_matches_torch(fn, inputs(), opset=opset, atol=1e-4)
