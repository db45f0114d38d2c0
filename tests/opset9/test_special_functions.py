"""The op table for elementwise special functions (exporter.opset9.special_functions).

Each case is traced (or scripted), exported, run in onnxruntime and compared with eager torch at
every opset where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import math

import pytest
import torch
from cases import INF, NAN, Case, const, f32, ints, op_params, run_case

SIGNS = [1.0, -0.0, 0.0, -2.0, INF, -INF, 3.5, NAN]
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, -1.0, 0.5, 1e-30, 3.0]


@torch.jit.script
def _script_copysign(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.copysign(a, b), torch.copysign(a, -0.0), torch.copysign(a, 3)


@torch.jit.script
def _script_pointwise(
    a: torch.Tensor, b: torch.Tensor
) -> tuple[
    torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
]:
    return (
        torch.heaviside(a, b),
        torch.sinc(a),
        torch.float_power(a, b),
        torch.float_power(a, 2),
        torch.float_power(2.0, b),
        torch.ldexp(a, b),
        torch.special.entr(a),
        torch.isreal(a),
    )


@torch.jit.script
def _script_number_functions(x: torch.Tensor) -> tuple[float, float, float, float]:
    n = x.size(0)
    m = float(x.size(1)) - 3.5
    return math.copysign(m, -1.0), math.copysign(n, -n), math.copysign(n - 2, m), math.ldexp(m, n - 2)


@torch.jit.script
def _script_ldexp(a: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.ldexp(a, n), torch.ldexp(a.half(), n)


CASES = [
    # copysign
    Case("copysign", torch.copysign, lambda: (torch.randn(3, 4), torch.randn(4))),
    Case("copysign_special", torch.copysign, lambda: (torch.full((8,), 2.0), torch.tensor(SIGNS))),
    Case("copysign_special_magnitudes", torch.copysign, lambda: (torch.tensor(SIGNS), -torch.ones(8))),
    Case("copysign_scalar", lambda a: (torch.copysign(a, -0.0), torch.copysign(a, 2)), f32(5)),
    Case("copysign_int", torch.copysign, lambda: (torch.arange(-3, 3), torch.tensor([1, -1, 0, -5, 2, -2]))),
    Case("copysign_bool", torch.copysign, lambda: (torch.tensor([True, False]), torch.tensor([True, True]))),
    Case(
        "copysign_half_int",
        torch.copysign,
        lambda: (torch.tensor([1.5, -2.0, 0.0]).half(), torch.tensor([-1, 2, -3])),
        atol=1e-3,
    ),
    Case("copysign_double_0d", torch.copysign, lambda: (torch.randn(4).double(), torch.tensor(-1.0))),
    Case("copysign_empty", torch.copysign, lambda: (torch.randn(0, 3), torch.randn(3))),
    Case("copysign_nan_sign", torch.copysign, lambda: (torch.ones(2), torch.tensor([NAN, -NAN])), min_opset=26),
    Case(
        "copysign_nan_sign_half",
        torch.copysign,
        lambda: (torch.ones(2).half(), torch.tensor([NAN, -NAN]).half()),
        min_opset=26,
    ),
    Case(
        "copysign_nan_sign_double",
        lambda a, b: torch.copysign(a, b * 0 * INF),
        lambda: (torch.ones(3).double(), torch.tensor([1.0, -1.0, 0.0]).double()),
        min_opset=26,
    ),
    Case("copysign_scripted", _script_copysign, lambda: (torch.randn(2, 3), torch.tensor(SIGNS[:3])), script=True),
    Case(
        "copysign_ldexp_numbers",
        _script_number_functions,
        lambda: (torch.randn(2, 5),),
        script=True,
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(1, 2),), (torch.randn(4, 3),)],
    ),
    # heaviside
    Case(
        "heaviside", torch.heaviside, lambda: (torch.tensor([-1.5, 0.0, -0.0, 2.0, NAN, INF, -INF]), torch.tensor(0.5))
    ),
    Case("heaviside_broadcast", torch.heaviside, lambda: (torch.randint(-1, 2, (3, 4)).float(), torch.randn(4))),
    Case(
        "heaviside_nan_values", torch.heaviside, lambda: (torch.tensor([0.0, 1.0, -1.0]), torch.tensor([NAN, NAN, NAN]))
    ),
    Case("heaviside_int", torch.heaviside, lambda: (torch.tensor([-3, 0, 4]), torch.tensor([7, 7, 7]))),
    Case(
        "heaviside_int8",
        torch.heaviside,
        lambda: (torch.tensor([-3, 0, 4], dtype=torch.int8), torch.tensor([5], dtype=torch.int8)),
    ),
    Case(
        "heaviside_bool",
        torch.heaviside,
        lambda: (torch.tensor([True, False, False]), torch.tensor([False, True, False])),
    ),
    Case("heaviside_empty", torch.heaviside, lambda: (torch.randn(2, 0), torch.randn(1))),
    # sinc
    Case("sinc", torch.sinc, f32(3, 4, scale=3.0)),
    Case("sinc_special", torch.sinc, const(SPECIAL)),
    Case("sinc_int", torch.sinc, ints(6)),
    Case("sinc_bool", torch.sinc, lambda: (torch.tensor([True, False]),)),
    Case("sinc_half", torch.sinc, f32(6, dtype=torch.float16), atol=1e-3, rtol=1e-3),
    Case("sinc_double", torch.sinc, f32(6, dtype=torch.float64)),
    Case("sinc_empty", torch.sinc, f32(0, 2)),
    # float_power
    Case("float_power", torch.float_power, lambda: (torch.rand(3, 4) + 0.5, torch.randn(4))),
    Case(
        "float_power_scalar", lambda a: (torch.float_power(a, 2), torch.float_power(a, -0.5)), lambda: (torch.rand(5),)
    ),
    Case("float_power_scalar_base", lambda b: torch.float_power(2.0, b), f32(5)),
    Case("float_power_int", torch.float_power, lambda: (torch.tensor([-2, 0, 3]), torch.tensor([3, 0, 2]))),
    Case(
        "float_power_half", torch.float_power, lambda: (torch.rand(4).half() + 1, torch.tensor([2.0, 0.5, -1.0, 3.0]))
    ),
    Case(
        "float_power_special",
        torch.float_power,
        lambda: (torch.tensor([-2.0, 0.0, INF, NAN, 1.0]), torch.tensor([0.5, -1.0, -1.0, 0.0, NAN])),
    ),
    Case("float_power_empty", torch.float_power, lambda: (torch.rand(0), torch.rand(1))),
    # ldexp
    Case("ldexp", torch.ldexp, lambda: (torch.randn(3, 4), torch.randint(-5, 6, (4,)))),
    Case("ldexp_float_exponent", torch.ldexp, lambda: (torch.randn(5), torch.tensor([0.0, 1.0, -2.0, 0.5, 3.0]))),
    Case("ldexp_int_int", torch.ldexp, lambda: (torch.tensor([-2, 0, 3]), torch.tensor([-1, 4, 3]))),
    Case("ldexp_half_float", torch.ldexp, lambda: (torch.tensor([1.5, -2.0]).half(), torch.tensor([2.0, -1.0]))),
    Case("ldexp_half_0d", torch.ldexp, lambda: (torch.tensor([1.5, -2.0]).half(), torch.tensor(3.0))),
    Case("ldexp_double_int", torch.ldexp, lambda: (torch.tensor([1.0, 3.0]).double(), torch.tensor([200, -1100]))),
    Case("ldexp_range", torch.ldexp, lambda: (torch.tensor([2.0**-100, 3.0, 1.0]), torch.tensor([200, -200, 130]))),
    Case(
        "ldexp_special",
        torch.ldexp,
        lambda: (torch.tensor([NAN, INF, -INF, 0.0, -0.0]), torch.tensor([1, -1, 2, 1000, 3])),
    ),
    Case(
        "ldexp_scripted_int_exponent",
        _script_ldexp,
        lambda: (torch.tensor([2.0**-100, 1.5, -3.0]), torch.tensor([120, 3, -2])),
        script=True,
        atol=1e-3,
    ),
    Case("ldexp_empty", torch.ldexp, lambda: (torch.rand(3, 0), torch.randint(0, 3, (1,)))),
    # special_entr
    Case("entr", torch.special.entr, lambda: (torch.rand(3, 4),)),
    Case("entr_special", torch.special.entr, const(SPECIAL)),
    Case("entr_int", torch.special.entr, ints(6, low=-2, high=5)),
    Case("entr_bool", torch.special.entr, lambda: (torch.tensor([True, False]),)),
    Case("entr_half", torch.special.entr, lambda: (torch.rand(6).half(),), atol=1e-3, rtol=1e-3),
    Case("entr_empty", torch.special.entr, f32(0)),
    # isreal
    Case(
        "isreal",
        lambda a, b, c: (torch.isreal(a), torch.isreal(b), torch.isreal(c)),
        lambda: (torch.tensor(SPECIAL), torch.arange(3), torch.rand(2, 0) > 0),
    ),
    Case("isreal_dynamic", torch.isreal, f32(2, 3), dynamic={"x0": [0, 1]}, others=lambda: [(torch.randn(4, 1),)]),
    # every op scripted
    Case(
        "pointwise_scripted",
        _script_pointwise,
        lambda: (torch.tensor([-1.5, 0.0, 2.0, 0.5]), torch.tensor([0.5, 2.0, -1.0, 0.25])),
        script=True,
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)
