"""The op table for comparisons, logical ops, where/clamp and NaN/inf tests (exporter.opset9.logic).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
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
    op_params,
    pair,
    run_case,
)
from conftest import Wrap, assert_matches_torch

SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5, 3e38, -1e-30, 65504.0]


def close_pairs() -> tuple[torch.Tensor, torch.Tensor]:
    """Equal, within and just outside the default tolerances, infinities, NaN against NaN."""
    a = torch.tensor([1.0, 1.0, 1.0, 100.0, INF, INF, -INF, NAN, NAN, 0.0, 1e-9, 3.0])
    b = torch.tensor([1.0, 1.0 + 5e-6, 1.0 + 5e-5, 100.001, INF, -INF, INF, NAN, 1.0, 5e-9, 0.0, INF])
    return a, b


@torch.jit.script
def _script_allclose(a: torch.Tensor, b: torch.Tensor) -> tuple[bool, bool, bool]:
    return torch.allclose(a, b), torch.allclose(a, b, rtol=0.1, atol=0.0, equal_nan=True), torch.allclose(a, a + 1e-7)


CASES = [
    # comparison and selection
    Case(
        "isclose",
        lambda a, b: (
            torch.isclose(a, b),
            torch.isclose(a, b, equal_nan=True),
            torch.isclose(a, b, rtol=0.0, atol=0.0),
            b.isclose(a, rtol=1e-3, atol=1e-2),
        ),
        close_pairs,
    ),
    Case(
        "isclose_int_bool_half",
        lambda a, b: (
            torch.isclose(a, b, rtol=0.3, atol=1.0),
            torch.isclose(a > 0, b > 0),
            torch.isclose(a.half(), b.half()),
        ),
        lambda: (torch.randint(-6, 6, (12,)), torch.randint(-6, 6, (12,))),
    ),
    Case(
        "allclose_scripted",
        _script_allclose,
        close_pairs,
        script=True,
        dynamic={"x0": {0: "n"}, "x1": {0: "n"}},
        others=lambda: [(torch.ones(3), torch.ones(3) + 1e-6), (torch.zeros(0), torch.zeros(0))],
    ),
    Case(
        "isin",
        lambda a, b: (
            torch.isin(a, b),
            torch.isin(a, b, invert=True),
            torch.isin(b, a, assume_unique=True),
            torch.isin(a, b[:0]),
        ),
        lambda: (torch.tensor([[1.0, NAN, 3.0], [INF, -0.0, 2.5]]), torch.tensor([3.0, NAN, 0.0, INF, 7.0])),
    ),
    Case(
        "isin_mixed_scalar",
        lambda a, b: (
            torch.isin(a, b),
            torch.isin(a, 2),
            torch.isin(3, a),
            torch.isin(b, a, invert=True),
            torch.isin(a.to(torch.int8), 300),
        ),
        lambda: (torch.randint(-3, 4, (3, 4)), torch.tensor([1.0, 2.5, -3.0])),
    ),
    Case(
        "isin_dynamic",
        torch.isin,
        lambda: (torch.randint(0, 6, (2, 3)), torch.randint(0, 6, (4,))),
        dynamic={"x0": {0: "a", 1: "b"}, "x1": {0: "n"}},
        others=lambda: [
            (torch.randint(0, 6, (1, 5)), torch.randint(0, 6, (0,))),
            (torch.randint(0, 6, (3, 1)), torch.arange(6)),
        ],
    ),
    Case(
        "eq_float",
        lambda a, b: a == b,
        lambda: (torch.tensor([1.0, 2.0, float("nan"), 4.0]), torch.tensor([1.0, 3.0, float("nan"), 4.0])),
    ),
    Case(
        "ne_float",
        lambda a, b: a != b,
        lambda: (torch.tensor([1.0, 2.0, float("nan")]), torch.tensor([1.0, 3.0, float("nan")])),
    ),
    Case("eq_int_scalar", lambda a: a == 3, ints(10)),
    Case("gt", lambda a, b: a > b, pair((5,), (5,))),
    Case("lt_scalar", lambda a: a < 0.5, f32(5)),
    Case(
        "ge_nan",
        lambda a, b: a >= b,
        lambda: (torch.tensor([1.0, 2.0, float("nan"), 3.0]), torch.tensor([1.0, 3.0, 1.0, 2.0])),
    ),
    Case("le_int", lambda a, b: a <= b, pair((8,), (8,), torch.int64)),
    Case("lt_half", lambda a, b: a < b, pair((5,), (5,), torch.float16)),
    Case("where", lambda c, a, b: torch.where(c > 0, a, b), lambda: (torch.randn(4), torch.randn(4), torch.randn(4))),
    Case("where_scalar", lambda a: torch.where(a > 0, a, 0.0), f32(6)),
    Case("masked_fill", lambda a: a.masked_fill(a > 0, -1.0), f32(3, 4)),
    Case("masked_fill_int", lambda a: a.masked_fill(a > 0, 7), ints(3, 4)),
    Case("clamp", lambda a: torch.clamp(a, -0.5, 0.5), f32(10)),
    Case("clamp_min", lambda a: torch.clamp(a, min=0.1), f32(10)),
    Case("clamp_int", lambda a: torch.clamp(a, -3, 4), ints(10)),
    Case("clamp_tensor", lambda a, lo: torch.clamp(a, min=lo), pair((6,), (6,))),
    Case("inplace_masked_fill", lambda a: a.clone().masked_fill_(a < 0, 0.0).clamp_(max=0.5), f32(8)),
    # NaN and inf
    Case("isnan", torch.isnan, const(SPECIAL)),
    Case("isnan_int", torch.isnan, ints(2, 3)),
    Case("isinf", torch.isinf, const(SPECIAL)),
    Case(
        "isposinf_isneginf",
        lambda a, i: (torch.isposinf(a), torch.isneginf(a), torch.isposinf(i), torch.isneginf(i)),
        lambda: (torch.tensor(SPECIAL), torch.arange(-3, 3)),
    ),
    Case(
        "isposinf_isneginf_half", lambda a: (torch.isposinf(a), torch.isneginf(a)), const(SPECIAL, dtype=torch.float16)
    ),
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
    # Mixtral eager experts: torch.where(mask) is nonzero(as_tuple=True)
    Case("where_condition", lambda x: torch.where(x > 0), f32(3, 4)),
    Case("where_condition_1d", lambda x: torch.where(x > 0)[0] * 2, f32(7)),
    Case("where_condition_float", lambda x: torch.where(x.relu()), f32(2, 3, 4)),
    Case("where_three_args", lambda c, x: torch.where(c > 0, x, x * 2), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
    Case("where_scalar_other", lambda c, x: torch.where(c > 0, x, 0.5), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
    Case("where_scalar_self", lambda c, x: torch.where(c > 0, 1.5, x), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["clamp", "clamp_int", "nan_to_num_values", "isin"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


def test_where_condition_outputs_one_index_tensor_per_dim() -> None:
    x = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    model = assert_matches_torch(Wrap(lambda c: torch.where(c != 0)), (x,), opset=9)
    assert len(model.graph.outputs) == 2
