"""The op table for elementwise arithmetic and math (exporter.opset9.arithmetic).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import (
    INF,
    NAN,
    Case,
    bools,
    const,
    f32,
    f32s,
    helper_params,
    int_pair,
    ints,
    lowering_opsets,
    op_params,
    pair,
    positive,
    run_case,
)
from conftest import assert_matches_torch


def unit(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: ((torch.rand(*shape) * 1.98 - 0.99).to(dtype),)


ATAN2_Y = [0.0, -0.0, 0.0, -0.0, INF, -INF, INF, 1.0, -1.0, 2.0, -3.0, NAN, 1.0, 0.0, 5.0]


ATAN2_X = [-0.0, -0.0, 0.0, 0.0, INF, -INF, -INF, 0.0, 0.0, -1.0, -2.0, 1.0, NAN, -4.0, INF]


TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 8388609.0, 16777215.0, -7.5, INF, -INF, NAN, 2.675, 1e10]


@torch.jit.script
def _script_conj(a: torch.Tensor) -> torch.Tensor:
    """Scripted code records aten::conj (a trace of a real tensor records nothing)."""
    return a.conj() * 2


CASES = [
    # elementwise arithmetic
    Case("add", lambda a, b: a + b, pair((2, 3), (3,))),
    Case("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), pair((2, 3), (2, 3))),
    Case("add_scalar_half", lambda a: a + 2, lambda: (torch.randn(4).half(),), atol=1e-3),
    Case("add_int32_float_scalar", lambda a: a + 2.5, ints(5, dtype=torch.int32)),
    Case("add_int32_int64", lambda a, b: a + b, lambda: (torch.arange(4, dtype=torch.int32), torch.arange(4))),
    Case("add_bool", lambda a, b: a + b, lambda: (torch.rand(5) > 0.5, torch.rand(5) > 0.5)),
    Case("sub", lambda a, b: a - b, pair((2, 3), (2, 3))),
    Case("sub_alpha_int", lambda a, b: torch.sub(a, b, alpha=3), pair((4,), (4,), torch.int64)),
    Case("rsub", lambda a: 1 - a, f32(2, 3)),
    Case("mul", lambda a, b: a * b, pair((2, 3), (2, 1))),
    Case("mul_int_scalar", lambda a: a * 3, ints(6)),
    Case("div", lambda a, b: a / b, pair((3,), (3,))),
    Case("div_int_true", lambda a, b: a / b, pair((8,), (8,), torch.int64)),
    Case("div_floor_int", lambda a, b: torch.div(a, b, rounding_mode="floor"), pair((16,), (16,), torch.int64)),
    Case("div_trunc_int", lambda a, b: torch.div(a, b, rounding_mode="trunc"), pair((16,), (16,), torch.int64)),
    Case("div_trunc_float", lambda a, b: torch.div(a, b, rounding_mode="trunc"), pair((16,), (16,))),
    Case("floordiv_int_negative", lambda a, b: a // b, pair((16,), (16,), torch.int64)),
    Case("floordiv_int32_scalar", lambda a: a // 3, ints(12, dtype=torch.int32)),
    Case("floordiv_float", lambda a, b: a // b, pair((16,), (16,))),
    Case("remainder_int_negative", lambda a, b: a % b, pair((16,), (16,), torch.int64)),
    Case("remainder_float", lambda a, b: torch.remainder(a, b), pair((16,), (16,))),
    Case("neg", torch.neg, f32(3)),
    Case("abs", torch.abs, f32(3)),
    Case("abs_int", torch.abs, ints(5)),
    Case("pow_scalar", lambda a: a**2, f32(5)),
    Case("pow_tensor", lambda a, b: torch.pow(a, b), lambda: (torch.rand(5) + 0.5, torch.randn(5))),
    Case("pow_int_keeps_int", lambda a: a**3, ints(6)),
    Case(
        "pow_int32_tensor",
        lambda a, b: a**b,
        lambda: (torch.randint(-4, 4, (6,), dtype=torch.int32), torch.randint(0, 4, (6,), dtype=torch.int32)),
    ),
    Case("sqrt", torch.sqrt, positive(4)),
    Case("rsqrt", torch.rsqrt, positive(4)),
    Case("exp", torch.exp, f32(4)),
    Case("log", torch.log, positive(4)),
    Case("reciprocal", torch.reciprocal, positive(4)),
    Case("floor", torch.floor, f32(6)),
    Case("ceil", torch.ceil, f32(6)),
    Case("erf", torch.erf, f32(6)),
    Case("sin_cos", lambda a: torch.sin(a) + torch.cos(a), f32(6)),
    # casts and creation
    Case("to_float", lambda a: a.to(torch.float32) * 1.5, ints(5)),
    # in-place forms become functional
    Case("inplace_chain", lambda a: a.clone().add_(1).mul_(2).sub_(0.5).div_(3).relu_(), f32(8)),
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
    Case("frac", torch.frac, const([1.5, -1.5, 2.0, -0.25, 1e20, INF, -INF, NAN, -0.0, 3.75])),
    Case("frac_double_half", lambda a: (torch.frac(a.double()), torch.frac(a.half())), f32(8, scale=10.0), atol=1e-2),
    Case(
        "signbit",
        lambda a, i, b: (
            torch.signbit(a),
            torch.signbit(i),
            torch.signbit(i.to(torch.uint8)),
            torch.signbit(b),
            torch.signbit(a.half()),
        ),
        lambda: (
            torch.tensor([-2.0, 0.0, -0.0, 3.0, NAN, INF, -INF, -1e-30]),
            torch.arange(-3, 5),
            torch.tensor([True, False]),
        ),
    ),
    Case(
        "signbit_nan_sign",
        lambda a: (torch.signbit(a), torch.signbit(a.half()), torch.signbit(a.double())),
        lambda: (torch.tensor([NAN, -NAN, -0.0, 0.0, -INF, 2.0]),),
        min_opset=26,
    ),
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
    Case("expm1", torch.expm1, const([1e-10, -1e-9, 1e-6, 0.5, -0.5, 3.0, -30.0, -200.0, 100.0, INF, -INF, NAN, 0.0])),
    Case(
        "expm1_double_int",
        lambda a, b: (torch.expm1(a), torch.expm1(b)),
        lambda: (torch.randn(6).double() * 1e-9, torch.arange(-3, 3)),
    ),
    Case(
        "exp2",
        lambda a, b: (torch.exp2(a), torch.exp2(b)),
        lambda: (torch.tensor([0.0, 1.0, 10.0, -3.0, 0.5, 127.5, INF, -INF, NAN]), torch.arange(-4, 20)),
    ),
    Case(
        "deg2rad_rad2deg",
        lambda a, b: (torch.deg2rad(a), torch.rad2deg(a), torch.deg2rad(b), torch.rad2deg(b)),
        lambda: (torch.randn(5) * 180, torch.arange(-180, 181, 45)),
    ),
    Case(
        "logaddexp",
        lambda a, b: (torch.logaddexp(a, b), torch.logaddexp2(a, b)),
        lambda: (torch.randn(3, 4) * 20, torch.randn(4) * 20),
    ),
    Case(
        "logaddexp_special",
        lambda a, b: (torch.logaddexp(a, b), torch.logaddexp2(a, b)),
        const(
            [INF, -INF, INF, -INF, NAN, 1.0, -1e30, 80.0, 0.0], [INF, -INF, -INF, 3.0, 1.0, NAN, -1e30, 80.0, -200.0]
        ),
    ),
    Case(
        "logaddexp_int_double",
        lambda a, b: (torch.logaddexp(a.double(), b), torch.logaddexp2(a, b.float())),
        int_pair((6,), torch.int64, -50, 50),
    ),
    Case(
        "xlogy",
        lambda x, y: (
            torch.xlogy(x, y),
            torch.special.xlogy(x, y),
            torch.special.xlog1py(x, y),
            torch.xlogy(2.0, y),
            torch.xlogy(x, 3),
        ),
        const(
            [0.0, 0.0, 0.0, 1.0, 2.0, -1.5, NAN, 0.0, 3.0, 1.0], [0.0, NAN, INF, 0.0, 3.0, -1.0, 2.0, -1.0, 1e-9, -1.0]
        ),
    ),
    Case("xlogy_int", lambda x, y: (torch.xlogy(x, y), torch.special.xlog1py(x, y)), int_pair((8,), torch.int64, 0, 5)),
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
    # 8/16-bit integers: no Add/Sub/Mul/Div kernels below opset 14, computed in int32 and wrapped
    *[
        Case(
            f"arithmetic_{str(dtype).split('.')[1]}",
            lambda a, b: (
                a + b,
                a - b,
                a * b,
                3 - a,
                a * 5,
                torch.add(a, b, alpha=2),
                a // b,
                a % b,
                a.div(b, rounding_mode="trunc"),
            ),
            lambda dtype=dtype, low=low: (
                torch.tensor([low, -1 if low else 1, 7, 100, 127, 120, 9], dtype=dtype),
                torch.tensor([3, -2 if low else 2, -4 if low else 4, 3, 2, 127, 1], dtype=dtype),
            ),
        )
        for dtype, low in ((torch.int8, -128), (torch.uint8, 0), (torch.int16, -32768))
    ],
    Case("round", torch.round, f32(20, scale=5)),
    Case("round_ties", torch.round, const(TIES)),
    Case("round_ties_double", torch.round, const(TIES + [4503599627370497.0, 2.5e15 + 0.5], dtype=torch.float64)),
    Case("round_decimals", lambda a: torch.round(a, decimals=2), f32(10, scale=10)),
    Case(
        "round_decimals_negative", lambda a: torch.round(a, decimals=-2), const([1250.0, 1350.0, -1250.0, 49.0, 151.0])
    ),
    Case("round_half", torch.round, const(TIES[:8], dtype=torch.float16)),
    Case("round_int", torch.round, ints(5)),
    # in-place forms and ops torch decomposes before tracing
    Case(
        "inplace_float",
        lambda a, b: F.elu(F.hardswish(a.clone().addcmul_(a, b, value=2.0).lerp_(b, 0.5), inplace=True), inplace=True),
        f32s(2, 6),
    ),
    # conjugation
    Case("conj_physical", lambda a: torch.conj_physical(a) + 1, f32(4)),
    Case("positive", lambda a, b: (torch.positive(a), +b), lambda: (torch.randn(4), torch.randint(-3, 3, (4,)))),
    Case("conj_scripted", _script_conj, f32(4), script=True),
    Case("resolve", lambda a: torch.resolve_neg(torch.resolve_conj(a)) * 2, f32(4)),
    # diff (Whisper)
    # Whisper
    Case("diff", lambda x: torch.diff(x), f32(3, 5)),
    Case("diff_n2_dim0", lambda x: torch.diff(x, n=2, dim=0), f32(5, 4)),
    Case("diff_n0", lambda x: torch.diff(x, n=0), f32(3, 4)),
    Case(
        "diff_prepend_append",
        lambda x, p, a: torch.diff(x, dim=1, prepend=p, append=a),
        lambda: (torch.randn(3, 4), torch.randn(3, 1), torch.randn(3, 2)),
    ),
    Case("diff_bool", lambda x: torch.diff(x > 0), f32(3, 6)),
    Case("diff_int", lambda x: torch.diff(x, n=3), lambda: (torch.randint(-9, 9, (2, 7)),)),
    Case(
        "diff_dynamic_length",
        lambda x: torch.diff(x, n=2),
        f32(2, 6),
        dynamic={"x0": {1: "n"}},
        others=lambda: [(torch.randn(2, 9),)],
        min_opset=10,
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper, and
# narrow integer arithmetic below and above its opset-14 change
HELPER_CASES = ["logit_eps", "arithmetic_int8", "arithmetic_uint8", "diff_prepend_append"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class _ScriptedNumbers(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.size(0) // 3
        m = (x.size(0) - 8) // 3  # negative for short inputs: floors, not truncates
        flag = bool(x.sum() > 0)
        return x[:n] * (m + 1), torch.tensor(not flag)


@pytest.mark.parametrize("opset", lowering_opsets("aten::floordiv", "aten::__not__", helpers=True, min_opset=10))
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
