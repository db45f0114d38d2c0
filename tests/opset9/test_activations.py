"""The op table for activation functions (exporter.opset9.activations).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cases import INF, NAN, Case, const, f32, helper_params, ints, lowering_opsets, op_params, run_case
from conftest import ORT_COMPLETE_OPSET, Wrap, assert_matches_torch, export_to_bytes, run_model

CASES = [
    # activations
    Case("relu", torch.relu, f32(2, 3)),
    Case("relu6", F.relu6, lambda: (torch.randn(20) * 5,)),
    Case("leaky_relu", lambda a: F.leaky_relu(a, 0.2), f32(8)),
    Case("hardtanh", lambda a: F.hardtanh(a, -0.5, 0.5), f32(8)),
    Case("sigmoid", torch.sigmoid, f32(2, 3)),
    Case("tanh", torch.tanh, f32(2, 3)),
    Case("silu", F.silu, f32(2, 3)),
    Case("gelu", F.gelu, f32(2, 3)),
    Case("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), f32(2, 3)),
    Case("softmax_last", lambda a: torch.softmax(a, -1), f32(2, 3, 4)),
    Case("softmax_middle", lambda a: torch.softmax(a, 1), f32(2, 3, 4)),
    Case("softmax_dtype", lambda a: torch.softmax(a, 0, dtype=torch.float64), f32(3, 2)),
    Case("log_softmax", lambda a: F.log_softmax(a, 1), f32(2, 3, 4)),
    # activations
    Case("log_sigmoid", F.logsigmoid, const([-200.0, -20.0, -1.0, 0.0, 1.0, 20.0, 90.0, NAN])),
    Case("log_sigmoid_half", F.logsigmoid, f32(8, scale=5, dtype=torch.float16), atol=1e-3, rtol=1e-3),
    Case("elu", F.elu, f32(10, scale=3)),
    Case("elu_alpha", lambda a: F.elu(a, alpha=0.5), f32(10, scale=3)),
    Case("elu_scales", lambda a: torch.ops.aten.elu(a, 1.5, 2.0, 0.5), f32(10, scale=3)),
    Case("elu_double", F.elu, f32(10, scale=3, dtype=torch.float64)),
    Case("selu", F.selu, f32(10, scale=3)),
    Case("celu", lambda a: F.celu(a, alpha=2.0), f32(10, scale=3)),
    Case("celu_default", F.celu, f32(10, scale=3)),
    Case("hardshrink", F.hardshrink, const([NAN, 0.3, -0.5, 0.5, -2.0, 0.51, INF])),
    Case("hardshrink_lambd", lambda a: F.hardshrink(a, 1.0), f32(10, scale=2)),
    Case("softshrink", lambda a: F.softshrink(a, 0.7), const([NAN, 0.3, -0.5, 0.7, -2.0, 1.5, -INF])),
    Case("hardsigmoid", F.hardsigmoid, f32(12, scale=4)),
    Case("hardsigmoid_double", F.hardsigmoid, f32(12, scale=4, dtype=torch.float64)),
    Case("hardswish", F.hardswish, f32(12, scale=4)),
    Case("mish", F.mish, const([-100.0, -5.0, -0.5, 0.0, 0.5, 5.0, 30.0, 100.0])),
    Case("mish_double", F.mish, f32(8, scale=4, dtype=torch.float64)),
    Case("softplus", F.softplus, const([-100.0, -5.0, 0.0, 5.0, 19.0, 21.0, 100.0])),
    Case("softplus_beta", lambda a: F.softplus(a, beta=2.0, threshold=5.0), f32(12, scale=4)),
    Case("glu", F.glu, f32(3, 8)),
    Case("glu_dim0", lambda a: F.glu(a, 0), f32(4, 3)),
    Case("prelu_channels", lambda a, w: F.prelu(a, w), lambda: (torch.randn(2, 3, 4, 5), torch.rand(3))),
    Case("prelu_single", lambda a, w: F.prelu(a, w), lambda: (torch.randn(2, 3, 4), torch.rand(1))),
    Case("prelu_2d", lambda a, w: F.prelu(a, w), lambda: (torch.randn(4, 3), torch.rand(3))),
    Case("prelu_0d", lambda a, w: F.prelu(a, w), lambda: (torch.tensor(-1.5), torch.rand(1))),
    Case("prelu_1d", lambda a, w: F.prelu(a, w), lambda: (torch.randn(5), torch.rand(1))),
    Case(
        "prelu_double",
        lambda a, w: F.prelu(a, w),
        lambda: (torch.randn(2, 3, 4, dtype=torch.float64), torch.rand(3, dtype=torch.float64)),
    ),
    Case("rrelu_eval", lambda a: F.rrelu(a, 0.1, 0.3), f32(20)),
    Case("threshold", lambda a: F.threshold(a, 0.5, -3.0), const([NAN, 0.3, 0.5, 0.6, -INF, INF])),
    Case("threshold_int", lambda a: F.threshold(a, -1.5, 100), ints(20)),
    Case("tanhshrink", F.tanhshrink, f32(6, scale=2)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["softmax_middle", "glu", "hardsigmoid"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class _GluDynamic(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.glu(x, 0)


@pytest.mark.parametrize("opset", lowering_opsets("aten::glu", helpers=True))
def test_glu_dynamic_axis(opset: int) -> None:
    """Splitting an axis known only at run time: from opset 18 Split needs num_outputs."""
    assert_matches_torch(
        _GluDynamic(),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=[(torch.randn(10, 3),)],
        input_names=["x"],
        dynamic_axes={"x": [0]},
    )


@pytest.mark.parametrize(
    "opset", sorted({*lowering_opsets("aten::rrelu"), ORT_COMPLETE_OPSET})
)  # from 22 in onnx's reference evaluator (see run_model)
def test_rrelu_training_statistics(opset: int) -> None:
    """Training-mode rrelu draws a slope in [lower, upper] per negative element."""
    from exporter import TrainingMode

    model = Wrap(lambda x: F.rrelu(x, 0.1, 0.3, training=True))
    x = -torch.ones(200, 50)
    data, _ = export_to_bytes(model, (x,), opset_version=opset, training=TrainingMode.TRAINING)
    (out,) = run_model(data, [x])
    slopes = -torch.from_numpy(out)
    assert slopes.shape == x.shape and slopes.dtype == torch.float32
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6
    assert abs(slopes.mean().item() - 0.2) < 0.01
    assert abs(slopes.var().item() - 0.2**2 / 12) < 0.001  # uniform on a width-0.2 interval
    positive = torch.rand(200, 50) + 0.1
    (kept,) = run_model(data, [positive])
    assert torch.equal(torch.from_numpy(kept), positive)
