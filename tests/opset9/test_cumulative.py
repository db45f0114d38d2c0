"""The op table for running reductions: cummax, cummin, logcumsumexp, cumulative_trapezoid
(exporter.opset9.cumulative).

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
    f32,
    helper_params,
    lowering_opsets,
    lowering_opsets_below,
    op_params,
    run_case,
    traced_and_scripted,
)
from conftest import Wrap, assert_matches_torch, dynamic_inputs

from exporter.errors import SymbolicError

# ties (the latest index wins), NaN (it sticks; a later NaN takes over the index), infinities
RUNS = torch.tensor(
    [
        [1.0, 3.0, 3.0, 2.0, 3.0, 0.0],
        [2.0, NAN, 5.0, NAN, 1.0, 7.0],
        [-INF, -INF, 0.0, INF, INF, -1.0],
        [NAN, 1.0, -2.0, -2.0, 4.0, NAN],
    ]
)


def _trapezoid_dx(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.cumulative_trapezoid(y),
        torch.cumulative_trapezoid(y, dx=0.5, dim=0),
        torch.cumulative_trapezoid(y, dx=2),
    )


def _trapezoid_x(y: torch.Tensor, x: torch.Tensor, xs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x along dim (1-d), of y's shape, and of lower rank (leading dims added)."""
    return (
        torch.cumulative_trapezoid(y, x),
        torch.cumulative_trapezoid(y, xs, dim=1),
        torch.cumulative_trapezoid(y, xs[0]),
    )


def _trapezoid_ints(y: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer y gives float32; y and x promote together."""
    return (
        torch.cumulative_trapezoid(y),
        torch.cumulative_trapezoid(y, x),
        torch.cumulative_trapezoid(y.double(), x, dim=0),
        torch.cumulative_trapezoid(y, x.float(), dim=-1),
    )


def _trapezoid_dim0(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cumulative_trapezoid(y, dim=0), torch.cumulative_trapezoid(y, dx=0.25)


CASES = [
    Case("cummax", lambda a: (torch.cummax(a, 1), torch.cummax(a, 0), a.cummax(-1)), f32(3, 5, 4)),
    Case("cummin", lambda a: (torch.cummin(a, 1), torch.cummin(a, 0)), f32(4, 7)),
    Case(
        "cummax_cummin_ties_nan",
        lambda a: (torch.cummax(a, 1), torch.cummin(a, 1), torch.cummax(a, 0)),
        lambda: (RUNS,),
    ),
    Case(
        "cummax_cummin_ints_bool",
        lambda a, b, c: (torch.cummax(a, 0), torch.cummin(b, 1), torch.cummax(c, 1), torch.cummin(c, 0)),
        lambda: (
            torch.randint(-3, 3, (6, 2)),
            torch.randint(-3, 3, (2, 6), dtype=torch.int8),
            torch.rand(3, 5) > 0.5,
        ),
    ),
    Case(
        "cummax_half_scalar",
        lambda a, s: (torch.cummax(a, 1), torch.cummin(s, 0)),
        lambda: (torch.randn(2, 5).half(), torch.tensor(3.0)),
    ),
    Case(
        "cummax_dynamic_batch",
        lambda a: torch.cummax(a, 1),
        f32(2, 6),
        dynamic={"x0": {0: "b"}},
        others=lambda: [(torch.randn(5, 6),), (torch.randn(1, 6),)],
    ),
    Case("logcumsumexp", lambda a: (torch.logcumsumexp(a, 1), torch.logcumsumexp(a, 0)), f32(4, 9, scale=30.0)),
    Case(
        "logcumsumexp_special",
        lambda a: torch.logcumsumexp(a, 1),
        lambda: (
            torch.tensor([[-INF, -INF, 1.0, -INF, 1e30], [100.0, -100.0, 100.0, NAN, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]),
        ),
    ),
    Case(
        "logcumsumexp_half_double",
        lambda a: (torch.logcumsumexp(a.half(), 0), torch.logcumsumexp(a.double(), 1)),
        f32(5, 3),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case("logcumsumexp_scalar", lambda a: torch.logcumsumexp(a, 0), lambda: (torch.tensor(2.5),)),
    # cumulative_trapezoid: n samples give n - 1 running areas
    *traced_and_scripted("cumulative_trapezoid_dx", _trapezoid_dx, f32(3, 6)),
    *traced_and_scripted(
        "cumulative_trapezoid_x", _trapezoid_x, lambda: (torch.randn(3, 4), torch.randn(4).cumsum(0), torch.randn(3, 4))
    ),
    *traced_and_scripted(
        "cumulative_trapezoid_ints",
        _trapezoid_ints,
        lambda: (torch.randint(-5, 5, (4, 5)), torch.randint(0, 9, (4, 5), dtype=torch.int32)),
    ),
    Case(
        "cumulative_trapezoid_nan_inf",
        lambda y: (torch.cumulative_trapezoid(y), torch.cumulative_trapezoid(y, dim=0)),
        lambda: (RUNS,),
    ),
    Case(
        "cumulative_trapezoid_half",
        lambda y: torch.cumulative_trapezoid(y, dx=0.25),
        f32(3, 6, dtype=torch.float16),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case(
        "cumulative_trapezoid_few_samples",
        lambda a, b: (
            torch.cumulative_trapezoid(a),
            torch.cumulative_trapezoid(b, dim=0),
            torch.cumulative_trapezoid(b),
        ),
        lambda: (torch.randn(3, 1), torch.zeros(0, 2)),
    ),
    *traced_and_scripted(
        "cumulative_trapezoid_dynamic",
        _trapezoid_dim0,
        f32(5, 3),
        min_opset=11,
        dynamic={"x0": {0: "n", 1: "m"}},
        others=lambda: [(torch.randn(2, 7),), (torch.randn(1, 1),)],
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(
    ("case", "opset"), helper_params(CASES, ["cummax_cummin_ties_nan", "logcumsumexp", "cumulative_trapezoid_x"])
)
def test_helper_opsets(case: Case, opset: int) -> None:
    """The scan's Slice takes its bounds as inputs from opset 10."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("opset", lowering_opsets("aten::cummax", "aten::logcumsumexp"))
@pytest.mark.parametrize(
    "fn", [lambda a: torch.cummax(a, 1), lambda a: torch.logcumsumexp(a, 1)], ids=["cummax", "logcumsumexp"]
)
def test_a_run_along_a_dim_known_only_at_run_time_is_refused(fn: object, opset: int) -> None:
    """The scan unrolls over the dim's size: a dynamic one is refused by name."""
    with pytest.raises(SymbolicError, match=r"NeedsExportTimeValue: (cummax/cummin|logcumsumexp)"):
        assert_matches_torch(Wrap(fn), (torch.randn(2, 5),), opset=opset, **dynamic_inputs(x={1: "n"}))


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::cumulative_trapezoid.dx"))
def test_cumulative_trapezoid_of_a_dynamic_dim_names_opset_11(opset: int) -> None:
    """Without CumSum the running sum unrolls over the dim's size: a dynamic one is refused."""
    for fn in (lambda y: torch.cumulative_trapezoid(y), lambda y: torch.cumulative_trapezoid(y, y[0])):
        with pytest.raises(SymbolicError, match="cumsum below opset 11"):
            assert_matches_torch(Wrap(fn), (torch.randn(2, 5),), opset=opset, **dynamic_inputs(x={1: "n"}))
