"""The op table for normalization layers: batch, layer, group, instance and RMS norm (exporter.opset9.normalization).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import (
    HALF,
    Case,
    helper_params,
    last_before_change,
    lowering_opsets,
    one_torch_thread,
    op_params,
    op_types,
    rand,
    run_case,
)
from conftest import Wrap, assert_matches_torch

# small eager kernels run several times faster single-threaded on a loaded machine
_one_torch_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


CASES = [
    # group_norm
    Case("group_norm", lambda x: F.group_norm(x, 3), rand((2, 6, 5, 4))),
    Case("group_norm_affine", lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), rand((2, 6, 7), (6,), (6,))),
    Case("group_norm_rank2", lambda x, w: F.group_norm(x, 3, w), rand((4, 6), (6,))),
    Case("group_norm_half", lambda x: F.group_norm(x, 2), rand((2, 4, 3, 3), dtype=torch.float16), **HALF),
    # instance_norm
    Case("instance_norm", lambda x: F.instance_norm(x), rand((2, 3, 5, 4))),
    Case(
        "instance_norm_affine",
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
        rand((2, 3, 7), (3,), (3,)),
    ),
    Case(
        "instance_norm_running_stats",
        lambda x, w, b, m: F.instance_norm(x, m, m.abs() + 0.5, w, b, use_input_stats=False),
        rand((2, 3, 4, 4), (3,), (3,), (3,)),
    ),
    Case(
        "instance_norm_running_no_affine",
        lambda x, m: F.instance_norm(x, m, m.abs() + 0.5, use_input_stats=False),
        rand((2, 3, 2, 2, 2), (3,)),
    ),
    Case("instance_norm_half", lambda x: F.instance_norm(x), rand((2, 3, 6), dtype=torch.float16), **HALF),
    # native_layer_norm (three outputs)
    Case("native_layer_norm", lambda x, w, b: torch.native_layer_norm(x, [4], w, b, 1e-5), rand((2, 3, 4), (4,), (4,))),
    Case(
        "native_layer_norm_2d_no_affine",
        lambda x: torch.native_layer_norm(x, [3, 4], None, None, 1e-3),
        rand((2, 3, 4)),
    ),
    Case(
        "native_layer_norm_half",
        lambda x: torch.native_layer_norm(x, [8], None, None, 1e-5),
        rand((2, 8), dtype=torch.float16),
        **HALF,
    ),
    # _weight_norm
    Case("weight_norm_dim0", lambda v, m: torch._weight_norm(v, m, 0), rand((4, 3, 2), (4, 1, 1))),
    Case("weight_norm_whole", lambda v, m: torch._weight_norm(v, m, -1), rand((4, 3), ())),
    # rms_norm (decomposed, RMSNormalization from 23)
    Case("rms_norm", lambda x: F.rms_norm(x, [5]), rand((2, 3, 5))),
    Case("rms_norm_weight_eps", lambda x, w: F.rms_norm(x, [3, 5], w, eps=1e-3), rand((2, 3, 5), (3, 5))),
    Case("rms_norm_half", lambda x, w: F.rms_norm(x, [6], w), rand((3, 6), (6,), dtype=torch.float16), **HALF),
    Case("rms_norm_double", lambda x: F.rms_norm(x, [6]), rand((3, 6), dtype=torch.float64)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["group_norm", "instance_norm", "rms_norm"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


DYNAMIC = [
    ("group_norm", lambda x: F.group_norm(x, 3), 9),
    ("instance_norm", lambda x: F.instance_norm(x), 9),
    ("rms_norm", lambda x: F.rms_norm(x, [x.shape[-1]]), 9),
]


@pytest.mark.parametrize(
    "opset", lowering_opsets("aten::layer_norm", "aten::group_norm", "aten::instance_norm", helpers=True)
)
@pytest.mark.parametrize(("fn", "min_opset"), [d[1:] for d in DYNAMIC], ids=[d[0] for d in DYNAMIC])
def test_dynamic_shapes(fn: Callable[..., object], min_opset: int, opset: int) -> None:
    if opset < min_opset:
        pytest.skip(f"needs opset {min_opset}")
    assert_matches_torch(
        Wrap(fn),
        (torch.randn(2, 6, 5, 6),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 2, 3]},
        other_inputs=[(torch.randn(1, 6, 7, 3),)],
    )


def test_rms_norm_uses_rmsnormalization_from_23() -> None:
    model, args = Wrap(lambda x: F.rms_norm(x, [4])), (torch.randn(2, 4),)
    assert "RMSNormalization" not in op_types(model, args, 22)
    assert "RMSNormalization" in op_types(model, args, 23)
    assert_matches_torch(model, args, opset=22)
    assert_matches_torch(model, args, opset=23)


class Layers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv2d(3, 6, 3, padding=1))
        self.group = torch.nn.GroupNorm(3, 6)
        self.instance = torch.nn.InstanceNorm2d(6, affine=True, track_running_stats=True)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.deconv = torch.nn.ConvTranspose2d(6, 2, 3, stride=2, padding=1, output_padding=1)
        self.pool = torch.nn.AdaptiveMaxPool2d((5, 3))
        self.dropout = torch.nn.AlphaDropout(0.3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.instance(self.group(self.conv(x)))
        return self.pool(self.deconv(self.up(y))), self.dropout(y)


@pytest.mark.parametrize(
    "opset",
    lowering_opsets("aten::batch_norm", "aten::layer_norm", "aten::group_norm", "aten::instance_norm", helpers=True),
)
def test_layers(opset: int) -> None:
    model = Layers().eval()
    with torch.no_grad():
        model.instance.running_mean.normal_()
        model.instance.running_var.uniform_(0.5, 2.0)
    assert_matches_torch(model, (torch.randn(2, 3, 6, 5),), opset=opset, atol=1e-4)


@pytest.mark.parametrize(
    "opset",
    lowering_opsets(
        "aten::group_norm", "aten::instance_norm", helpers=True, max_opset=last_before_change("aten::group_norm")
    ),
)
@pytest.mark.parametrize(
    "fn",
    [lambda x: F.group_norm(x, 3), lambda x: F.instance_norm(x), lambda x, w=torch.rand(6): F.group_norm(x, 2, w, w)],
    ids=["group_norm", "instance_norm", "group_norm_affine"],
)
def test_norms_use_one_instance_normalization(fn: Callable[..., object], opset: int) -> None:
    """GroupNorm and InstanceNorm statistics are one InstanceNormalization kernel (as in
    torch's exporter), not a decomposition into a dozen reductions and elementwise ops."""
    model = assert_matches_torch(Wrap(fn), (torch.randn(2, 6, 5, 4),), opset=opset)
    ops = collections.Counter(n.op_type for n in model.graph if n.op_type != "Constant")
    assert ops["InstanceNormalization"] == 1, ops
    assert not {"ReduceMean", "Sqrt", "Pow"} & set(ops), ops
