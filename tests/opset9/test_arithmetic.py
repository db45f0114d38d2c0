"""The elementwise batch: math, activations, logical and bitwise ops, elementwise losses.

Each case is traced, exported, run in onnxruntime and compared with eager torch at every
opset where its lowering changes (tests/cases.py) from its first supported one. Inputs include the values where lowerings
usually go wrong: NaN, infinities, signed zeros, ties, negative integers, the extremes of
narrow integer types.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, op_params, run_case
from conftest import NEWEST, Wrap, assert_matches_torch, export_to_bytes, run_model

NAN, INF = float("nan"), float("inf")


def f32(*shape: int, scale: float = 1.0, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: ((torch.randn(*shape) * scale).to(dtype),)


def f32s(count: int, *shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(*shape).to(dtype) for _ in range(count))


def unit(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: ((torch.rand(*shape) * 1.98 - 0.99).to(dtype),)


def ints(
    *shape: int, low: int = -10, high: int = 10, dtype: torch.dtype = torch.int64
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype),)


def int_pair(shape: tuple[int, ...], dtype: torch.dtype, low: int, high: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype), torch.randint(low, high, shape, dtype=dtype))


def full_range(dtype: torch.dtype, count: int = 64) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Two tensors over the whole range of an integer dtype, extremes included."""
    info = torch.iinfo(dtype)

    def make() -> tuple[torch.Tensor, ...]:
        edges = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1, 1], dtype=torch.int64).to(dtype)
        a = torch.cat([edges, torch.randint(info.min, info.max, (count,), dtype=dtype)])
        b = torch.cat([edges.flip(0), torch.randint(info.min, info.max, (count,), dtype=dtype)])
        return a, b

    return make


def bools(count: int = 2, n: int = 8) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.rand(n) > 0.5 for _ in range(count))


def const(*values: list[float], dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.tensor(v, dtype=dtype) for v in values)


SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5, 3e38, -1e-30, 65504.0]
ATAN2_Y = [0.0, -0.0, 0.0, -0.0, INF, -INF, INF, 1.0, -1.0, 2.0, -3.0, NAN, 1.0, 0.0, 5.0]
ATAN2_X = [-0.0, -0.0, 0.0, 0.0, INF, -INF, -INF, 0.0, 0.0, -1.0, -2.0, 1.0, NAN, -4.0, INF]
TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 8388609.0, 16777215.0, -7.5, INF, -INF, NAN, 2.675, 1e10]


def shift_amounts(dtype: torch.dtype, bits: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        info = torch.iinfo(dtype)
        x = torch.cat(
            [
                torch.tensor([info.min, info.max, -1, 1, 0], dtype=torch.int64).to(dtype),
                torch.randint(info.min, info.max, (35,), dtype=dtype),
            ]
        )
        amount = torch.arange(-2, bits + 3, dtype=torch.int64)[: x.numel()]
        amount = torch.cat([amount, torch.randint(0, bits, (x.numel() - amount.numel(),))]).to(dtype)
        return x, amount

    return make


CASES = [
    # unary math
    Case("acos", torch.acos, unit(10)),
    Case("asin", torch.asin, unit(10)),
    Case("atan", torch.atan, f32(10, scale=5)),
    Case("tan", torch.tan, unit(10)),
    Case("acos_int", torch.acos, ints(6, low=-1, high=2)),
    Case("atan_double", torch.atan, f32(10, dtype=torch.float64)),
    Case("asin_half", torch.asin, unit(10, dtype=torch.float16), atol=1e-3, rtol=1e-3),
    Case("atan2", torch.atan2, f32s(2, 4, 5)),
    Case("atan2_special", torch.atan2, const(ATAN2_Y, ATAN2_X)),
    Case("atan2_int", torch.atan2, int_pair((12,), torch.int64, -3, 4)),
    Case("atan2_half", torch.atan2, f32s(2, 10, dtype=torch.float16), atol=2e-3, rtol=2e-3),
    Case("sign", torch.sign, const([-2.0, 0.0, 3.0, NAN, -INF])),
    Case("sign_int32", torch.sign, ints(8, dtype=torch.int32)),
    Case("sign_bool", torch.sign, bools(1)),
    Case("square", torch.square, f32(6)),
    Case("square_int32", torch.square, ints(6, dtype=torch.int32)),
    Case("square_bool", torch.square, bools(1)),
    Case("trunc", torch.trunc, const([-2.7, -0.5, 0.5, 2.7, 1e10, NAN, INF])),
    Case("trunc_int", torch.trunc, ints(5)),
    Case("fix", torch.fix, f32(6, scale=3)),
    Case("log10", torch.log10, lambda: (torch.rand(8) * 100 + 1e-3,)),
    Case("log2", torch.log2, lambda: (torch.tensor([1.0, 2.0, 1024.0, 0.5, 0.0, 3.0]),)),
    Case("log10_int", torch.log10, ints(6, low=1, high=1000)),
    Case("log1p", torch.log1p, const([1e-10, -1e-9, 1e-6, 0.5, -0.5, 3.0, -1.0, INF, NAN, 0.0, 1e30])),
    Case("log1p_double", torch.log1p, const([1e-18, 1e-10, 0.25, 100.0], dtype=torch.float64)),
    Case("log1p_int", torch.log1p, ints(6, low=0, high=100)),
    Case("logit", torch.logit, lambda: (torch.rand(10) * 0.98 + 0.01,)),
    Case("logit_eps", lambda a: torch.logit(a, eps=0.1), const([0.0, 0.05, 0.5, 0.95, 1.0, NAN])),
    Case(
        "logit_eps_double",
        lambda a: torch.logit(a, eps=0.1),
        const([0.0, 0.05, 0.5, 0.95, 1.0, NAN], dtype=torch.float64),
    ),
    Case("hypot", torch.hypot, f32s(2, 3, 4)),
    Case("hypot_special", torch.hypot, const([0.0, INF, NAN, 3e38, 3.0, -0.0], [0.0, NAN, 2.0, 3e38, -4.0, 1e-30])),
    Case(
        "hypot_half_large",
        torch.hypot,
        lambda: (
            torch.tensor([300.0, 1000.0, 0.0, -30000.0], dtype=torch.float16),
            torch.tensor([400.0, -10.0, 0.0, 30000.0], dtype=torch.float16),
        ),
        atol=1e-3,
        rtol=1e-3,
    ),
    Case("lerp_scalar_low", lambda a, b: torch.lerp(a, b, 0.3), f32s(2, 3, 4)),
    Case("lerp_scalar_one", lambda a, b: torch.lerp(a, b, 1.0), f32s(2, 7)),
    Case("lerp_tensor", torch.lerp, lambda: (torch.randn(3, 4), torch.randn(3, 4), torch.rand(4) * 2 - 0.5)),
    Case("lerp_half", lambda a, b: torch.lerp(a, b, 0.75), f32s(2, 6, dtype=torch.float16), atol=1e-3),
    Case("addcmul", lambda a, b, c: torch.addcmul(a, b, c, value=0.5), f32s(3, 2, 3)),
    Case(
        "addcmul_int",
        lambda a, b, c: torch.addcmul(a, b, c, value=3),
        lambda: tuple(torch.randint(-5, 5, (6,)) for _ in range(3)),
    ),
    Case(
        "addcdiv",
        lambda a, b, c: torch.addcdiv(a, b, c, value=2),
        lambda: (torch.randn(2, 3), torch.randn(2, 3), torch.rand(3) + 0.5),
    ),
    Case("fmod", torch.fmod, lambda: (torch.randn(12) * 10, torch.randn(12) * 3)),
    Case("fmod_scalar", lambda a: torch.fmod(a, 1.5), f32(12, scale=5)),
    Case("fmod_int", torch.fmod, lambda: (torch.randint(-20, 20, (16,)), torch.tensor([3, -3, 5, -7] * 4))),
    Case(
        "fmod_int8",
        torch.fmod,
        lambda: (torch.randint(-128, 127, (16,), dtype=torch.int8), torch.tensor([3, -3, 5, -7] * 4, dtype=torch.int8)),
    ),
    Case(
        "fmod_half",
        torch.fmod,
        lambda: (
            torch.tensor([5.5, -5.5, 7.0, -1.0], dtype=torch.float16),
            torch.tensor([2.0, 2.0, -3.0, 0.75], dtype=torch.float16),
        ),
    ),
    Case("round", torch.round, f32(20, scale=5)),
    Case("round_ties", torch.round, const(TIES)),
    Case("round_ties_double", torch.round, const(TIES + [4503599627370497.0, 2.5e15 + 0.5], dtype=torch.float64)),
    Case("round_decimals", lambda a: torch.round(a, decimals=2), f32(10, scale=10)),
    Case(
        "round_decimals_negative", lambda a: torch.round(a, decimals=-2), const([1250.0, 1350.0, -1250.0, 49.0, 151.0])
    ),
    Case("round_half", torch.round, const(TIES[:8], dtype=torch.float16)),
    Case("round_int", torch.round, ints(5)),
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
    Case(
        "prelu_double",
        lambda a, w: F.prelu(a, w),
        lambda: (torch.randn(2, 3, 4, dtype=torch.float64), torch.rand(3, dtype=torch.float64)),
    ),
    Case("rrelu_eval", lambda a: F.rrelu(a, 0.1, 0.3), f32(20)),
    Case("threshold", lambda a: F.threshold(a, 0.5, -3.0), const([NAN, 0.3, 0.5, 0.6, -INF, INF])),
    Case("threshold_int", lambda a: F.threshold(a, -1.5, 100), ints(20)),
    # NaN and inf
    Case("isnan", torch.isnan, const(SPECIAL)),
    Case("isnan_int", torch.isnan, ints(2, 3)),
    Case("isinf", torch.isinf, const(SPECIAL)),
    Case("isinf_half", torch.isinf, const(SPECIAL, dtype=torch.float16)),
    Case("isinf_double", torch.isinf, const(SPECIAL + [1e300], dtype=torch.float64)),
    Case("isinf_bool", torch.isinf, bools(1)),
    Case("isfinite", torch.isfinite, const(SPECIAL)),
    Case("isfinite_int", torch.isfinite, ints(4, dtype=torch.int32)),
    Case("nan_to_num", torch.nan_to_num, const(SPECIAL)),
    Case("nan_to_num_values", lambda a: torch.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-3.0), const(SPECIAL)),
    Case("nan_to_num_half", lambda a: torch.nan_to_num(a, posinf=1e6), const(SPECIAL, dtype=torch.float16)),
    Case("nan_to_num_int", torch.nan_to_num, ints(5)),
    # maximum and minimum
    Case(
        "maximum",
        torch.maximum,
        lambda: (torch.tensor([NAN, 1.0, 2.0, -INF, NAN]), torch.tensor([2.0, NAN, 1.0, 0.0, NAN])),
    ),
    Case(
        "minimum",
        torch.minimum,
        lambda: (torch.tensor([NAN, 1.0, 2.0, -INF, NAN]), torch.tensor([2.0, NAN, 1.0, 0.0, NAN])),
    ),
    Case("maximum_broadcast", torch.maximum, lambda: (torch.randn(3, 4), torch.randn(4))),
    Case("maximum_int", torch.maximum, int_pair((10,), torch.int64, -50, 50)),
    Case("minimum_int32", torch.minimum, int_pair((10,), torch.int32, -50, 50)),
    Case("maximum_int16", torch.maximum, int_pair((10,), torch.int16, -500, 500)),
    Case("minimum_uint8", torch.minimum, int_pair((10,), torch.uint8, 0, 255)),
    Case("maximum_bool", torch.maximum, bools()),
    Case("maximum_half", torch.maximum, f32s(2, 6, dtype=torch.float16)),
    Case("maximum_mixed_dtype", torch.maximum, lambda: (torch.randint(-5, 5, (6,), dtype=torch.int32), torch.randn(6))),
    Case("max_other", torch.max, f32s(2, 3, 4)),
    Case("min_other", torch.min, lambda: (torch.randn(3, 4), torch.randn(1, 4))),
    Case("fmax", torch.fmax, lambda: (torch.tensor([NAN, 1.0, NAN, 3.0]), torch.tensor([2.0, NAN, NAN, 1.0]))),
    Case("fmin", torch.fmin, lambda: (torch.tensor([NAN, 1.0, NAN, 3.0]), torch.tensor([2.0, NAN, NAN, 1.0]))),
    Case("fmin_int", torch.fmin, int_pair((10,), torch.int64, -9, 9)),
    # logical
    Case("logical_and", torch.logical_and, bools()),
    Case(
        "logical_or_mixed", torch.logical_or, lambda: (torch.tensor([0.0, NAN, 2.0, 0.0]), torch.tensor([0, 0, 0, 3]))
    ),
    Case("logical_xor_int", torch.logical_xor, int_pair((10,), torch.int32, -2, 2)),
    Case("logical_not_float", torch.logical_not, const([0.0, -0.0, 1.0, NAN])),
    Case("logical_not_bool", torch.logical_not, bools(1)),
    # bitwise
    Case("and_bool", lambda a, b: a & b, bools()),
    Case("or_bool", lambda a, b: a | b, bools()),
    Case("xor_bool", lambda a, b: a ^ b, bools()),
    Case("not_bool", lambda a: ~a, bools(1)),
    Case("bitwise_ops_int64", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int64)),
    Case(
        "bitwise_ops_int32",
        lambda a, b: (torch.bitwise_and(a, b), torch.bitwise_or(a, b), torch.bitwise_xor(a, b), torch.bitwise_not(a)),
        full_range(torch.int32),
    ),
    Case("bitwise_ops_int16", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int16)),
    Case("bitwise_ops_int8", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int8)),
    Case("bitwise_ops_uint8", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.uint8)),
    Case("bitwise_scalar", lambda a, b: (a & 0xF0, a | -8, b ^ 5, b & 1), full_range(torch.int64)),
    Case("bitwise_scalar_int32", lambda a, b: (a & 0xF0, a | 3, a ^ -1), full_range(torch.int32)),
    Case(
        "bitwise_broadcast_mixed",
        lambda a, b: (a & b, a | b),
        lambda: (torch.randint(-100, 100, (3, 4), dtype=torch.int32), torch.randint(-100, 100, (4,))),
    ),
    Case("bitwise_bool_int_scalar", lambda a: a & 1, bools(1)),
    Case("lshift_int64", lambda a, b: a << b, shift_amounts(torch.int64, 64)),
    Case("rshift_int64", lambda a, b: a >> b, shift_amounts(torch.int64, 64)),
    Case("lshift_int32", lambda a, b: torch.bitwise_left_shift(a, b), shift_amounts(torch.int32, 32)),
    Case("rshift_int32", lambda a, b: torch.bitwise_right_shift(a, b), shift_amounts(torch.int32, 32)),
    Case("shifts_int8", lambda a, b: (a << b, a >> b), shift_amounts(torch.int8, 8)),
    Case("shifts_uint8", lambda a, b: (a << b, a >> b), shift_amounts(torch.uint8, 8)),
    Case("shifts_int16", lambda a, b: (a << b, a >> b), shift_amounts(torch.int16, 16)),
    Case("shift_scalar", lambda a, b: (a << 3, a >> 2, b << 63, b >> 63, a >> 70), full_range(torch.int64)),
    Case("shift_scalar_uint8", lambda a, b: (a << 3, b >> 2), full_range(torch.uint8)),
    # losses
    Case("mse_loss", lambda a, b: torch._C._nn.mse_loss(a, b, 1), f32s(2, 3, 4)),
    Case("mse_loss_sum", lambda a, b: torch._C._nn.mse_loss(a, b, 2), f32s(2, 3, 4)),
    Case("mse_loss_none", lambda a, b: torch._C._nn.mse_loss(a, b, 0), f32s(2, 3, 4)),
    Case(
        "kl_div",
        lambda a, t: F.kl_div(a, t, reduction="batchmean"),
        lambda: (
            F.log_softmax(torch.randn(3, 5), 1),
            torch.cat([torch.zeros(3, 1), F.softmax(torch.randn(3, 4), 1)], 1),
        ),
    ),
    Case(
        "kl_div_none",
        lambda a, t: F.kl_div(a, t, reduction="none"),
        lambda: (torch.randn(3, 5), torch.tensor([[0.0, 0.5, 0.2, 0.3, 0.0]] * 3)),
    ),
    Case("kl_div_mean_log_target", lambda a, t: F.kl_div(a, t, reduction="mean", log_target=True), f32s(2, 3, 5)),
    Case("kl_div_sum", lambda a, t: F.kl_div(a, t, reduction="sum"), lambda: (torch.randn(4), torch.rand(4))),
    Case(
        "bce_logits",
        F.binary_cross_entropy_with_logits,
        lambda: (
            torch.tensor([-200.0, -20.0, -1.0, 0.0, 2.0, 30.0, 200.0]),
            torch.tensor([0.0, 1.0, 0.3, 1.0, 0.0, 1.0, 0.0]),
        ),
    ),
    Case(
        "bce_logits_weights",
        lambda x, t, w, p: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=p, reduction="sum"),
        lambda: (torch.randn(4, 3) * 5, torch.rand(4, 3), torch.rand(3), torch.rand(3) * 3),
    ),
    Case("bce_logits_none", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none"), f32s(2, 2, 5)),
    # in-place forms and ops torch decomposes before tracing
    Case(
        "inplace_float",
        lambda a, b: F.elu(F.hardswish(a.clone().addcmul_(a, b, value=2.0).lerp_(b, 0.5), inplace=True), inplace=True),
        f32s(2, 6),
    ),
    Case(
        "inplace_int",
        lambda a, b: a.clone().bitwise_or_(b).bitwise_and_(b).bitwise_left_shift_(2).bitwise_not_(),
        int_pair((6,), torch.int64, -50, 50),
    ),
    Case("tanhshrink", F.tanhshrink, f32(6, scale=2)),
    # conjugation
    Case("conj_physical", lambda a: torch.conj_physical(a) + 1, f32(4)),
    Case("resolve", lambda a: torch.resolve_neg(torch.resolve_conj(a)) * 2, f32(4)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["glu", "logit_eps", "hardsigmoid", "nan_to_num_values", "kl_div", "mse_loss"]


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class _GluDynamic(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.glu(x, 0)


@pytest.mark.parametrize("opset", [9, 13, 18, NEWEST])
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


class _ScriptedNumbers(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.size(0) // 3
        m = (x.size(0) - 8) // 3  # negative for short inputs: floors, not truncates
        flag = bool(x.sum() > 0)
        return x[:n] * (m + 1), torch.tensor(not flag)


@pytest.mark.parametrize("opset", [10, 13, NEWEST])
def test_floordiv_and_not_on_runtime_numbers(opset: int) -> None:
    """aten::floordiv.int and aten::__not__ on values known only at run time (sizes, bools)."""
    assert_matches_torch(
        torch.jit.script(_ScriptedNumbers()),
        (torch.randn(7, 2),),
        opset=opset,
        other_inputs=[(torch.randn(10, 2),), (-torch.rand(12, 2),)],
        input_names=["x"],
        dynamic_axes={"x": [0]},
    )


@pytest.mark.parametrize("opset", [9, 21, NEWEST])  # from 22 in onnx's reference evaluator (see run_model)
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


@pytest.mark.parametrize(("opset", "native"), [(9, False), (17, False), (18, True), (NEWEST, True)])
def test_integer_bitwise_ops_use_bitwise_nodes_from_18(opset: int, native: bool) -> None:
    model = Wrap(lambda a, b: (a & b, a | b, a ^ b, ~a))
    _, onnx_model = export_to_bytes(model, full_range(torch.int32)(), opset_version=opset)
    op_types = {node.op_type for node in onnx_model.graph}
    bitwise = {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}
    assert (bitwise <= op_types) if native else not (bitwise & op_types)


def test_augmented_bitwise_assignment() -> None:
    def fn(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = a.clone()
        c &= b
        c <<= 2
        c |= 1
        return c, a + 1

    assert_matches_torch(Wrap(fn), int_pair((6,), torch.int64, -50, 50)(), opset=NEWEST)


@pytest.mark.parametrize("opset", [9, 13, NEWEST])
def test_dynamic_batch(opset: int) -> None:
    """Lowerings that build shapes or new axes (isnan of integers, the bit decomposition)
    on an axis known only at run time."""
    model = Wrap(lambda a, b: (torch.isnan(a), torch.isfinite(a), a & b, a ^ 7, a >> b.abs() % 70, torch.maximum(a, b)))
    make = int_pair((5, 3), torch.int64, -1000, 1000)
    assert_matches_torch(
        model,
        make(),
        opset=opset,
        other_inputs=[int_pair((9, 3), torch.int64, -1000, 1000)()],
        input_names=["a", "b"],
        dynamic_axes={"a": [0], "b": [0]},
    )
