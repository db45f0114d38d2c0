"""The op table for statistics and distances (exporter.opset9.statistics).

Each case is traced (or scripted), exported, run in onnxruntime and compared with eager torch at
every opset where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
from cases import INF, NAN, Case, f32, f32s, op_params, run_case
from conftest import Wrap, assert_matches_torch

import exporter

P_VALUES = (2.0, 1.0, 0.0, INF, 3.0, 0.5)


@torch.jit.script
def _script_statistics(
    a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.dist(a, b, 3),
        torch.renorm(a, 2, 0, 1.0),
        torch.pdist(a),
        torch.nn.functional.pdist(a, 1.0),
        torch.cov(a, correction=0),
        torch.corrcoef(a),
    )


@torch.jit.script
def _script_cov_weights(x: torch.Tensor, f: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cov(x, fweights=f, aweights=w), torch.cov(x, correction=2, aweights=w)


def _with_special(shape: tuple[int, ...]) -> torch.Tensor:
    x = torch.randn(*shape) * 2
    x.view(-1)[1] = NAN
    x.view(-1)[-2] = INF
    return x


def _pdist_dynamic(p: float) -> Case:
    return Case(
        f"pdist_dynamic_rows_p{p}",
        lambda x: torch.pdist(x, p),
        f32(4, 3),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(7, 3),), (torch.randn(1, 3),), (torch.randn(0, 3),)],
    )


CASES = [
    # dist
    *[Case(f"dist_p{p}", lambda a, b, p=p: torch.dist(a, b, p), f32s(2, 3, 4)) for p in (*P_VALUES, -INF, -1.0)],
    Case("dist_broadcast", lambda a, b: torch.dist(a, b), lambda: (torch.randn(3, 1), torch.randn(4))),
    Case(
        "dist_special",
        lambda a, b: (torch.dist(a, b), torch.dist(a, b, INF)),
        lambda: (_with_special((3, 2)), torch.randn(3, 2)),
    ),
    Case("dist_empty", lambda a, b: (torch.dist(a, b), torch.dist(a, b, 1), torch.dist(a, b, 0)), f32s(2, 0, 3)),
    Case("dist_0d", lambda a, b: torch.dist(a, b), lambda: (torch.tensor(1.5), torch.tensor(-2.0))),
    Case("dist_promotes", lambda a, b: torch.dist(a, b), lambda: (torch.randn(4), torch.randn(4).double())),
    Case("dist_half", lambda a, b: torch.dist(a, b), f32s(2, 5, dtype=torch.float16), atol=2e-3, rtol=2e-3),
    # renorm
    *[
        Case(f"renorm_p{p}", lambda x, p=p: torch.renorm(x, p, 0, 1.5), f32(4, 3, scale=2.0))
        for p in (2.0, 1.0, INF, 0.5)
    ],
    Case("renorm_dims", lambda x: (torch.renorm(x, 2, 1, 2.0), torch.renorm(x, 2, -1, 1.0)), f32(2, 3, 4, scale=2.0)),
    Case("renorm_maxnorm_0", lambda x: torch.renorm(x, 2, 0, 0.0), f32(3, 2)),
    Case(
        "renorm_special",
        lambda x: torch.renorm(x, 2, 0, 1.0),
        lambda: (torch.tensor([[3.0, NAN], [INF, 0.0], [0.3, 0.4]]),),
    ),
    Case(
        "renorm_empty",
        lambda x, y: (torch.renorm(x, 2, 1, 1.0), torch.renorm(y, 2, 0, 1.0)),
        lambda: (torch.randn(0, 3), torch.randn(2, 0)),
    ),
    Case("renorm_double", lambda x: torch.renorm(x, 2, 0, 1.0), f32(3, 4, scale=2.0, dtype=torch.float64)),
    Case(
        "renorm_half",
        lambda x: torch.renorm(x, 2, 1, 1.0),
        f32(2, 3, scale=3.0, dtype=torch.float16),
        atol=2e-3,
        rtol=2e-3,
    ),
    Case(
        "renorm_dynamic",
        lambda x: torch.renorm(x, 2, 1, 1.0),
        f32(3, 4, scale=2.0),
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(5, 2) * 3,)],
    ),
    # pdist
    *[Case(f"pdist_p{p}", lambda x, p=p: torch.pdist(x, p), f32(5, 3)) for p in P_VALUES],
    Case("pdist_special", lambda x: (torch.pdist(x), torch.pdist(x, INF)), lambda: (_with_special((4, 2)),)),
    Case("pdist_one_row", lambda x: torch.pdist(x), f32(1, 3)),
    Case("pdist_no_rows", lambda x: torch.pdist(x), f32(0, 3)),
    Case("pdist_no_columns", lambda x: (torch.pdist(x), torch.pdist(x, INF), torch.pdist(x, 0)), f32(3, 0)),
    Case("pdist_double", lambda x: torch.pdist(x), f32(4, 2, dtype=torch.float64)),
    Case("pdist_forward", lambda x: torch.ops.aten._pdist_forward(x, 1.5), f32(4, 3)),
    *[_pdist_dynamic(p) for p in (2.0, INF)],
    Case(
        "pdist_dynamic_columns",
        lambda x: (torch.pdist(x, INF), torch.pdist(x)),
        f32(3, 2),
        dynamic={"x0": [1]},
        others=lambda: [(torch.randn(3, 5),), (torch.randn(3, 0),)],
    ),
    # cov
    Case("cov", lambda x: (torch.cov(x), torch.cov(x, correction=0), torch.cov(x, correction=3)), f32(3, 6)),
    Case("cov_1d", lambda x: torch.cov(x), f32(5)),
    Case("cov_one_variable", lambda x: torch.cov(x), f32(1, 5)),
    Case("cov_int", lambda x: torch.cov(x), lambda: (torch.randint(-5, 5, (2, 4)),)),
    Case("cov_double", lambda x: torch.cov(x), f32(2, 4, dtype=torch.float64)),
    Case("cov_half", lambda x: torch.cov(x), f32(2, 4, dtype=torch.float16), atol=2e-3, rtol=2e-3),
    Case("cov_special", lambda x: torch.cov(x), lambda: (_with_special((3, 4)),)),
    Case("cov_no_observations", lambda x: torch.cov(x), f32(2, 0)),
    Case("cov_one_observation", lambda x: torch.cov(x), f32(2, 1)),
    Case("cov_no_variables", lambda x: torch.cov(x), f32(0, 3)),
    Case(
        "cov_fweights",
        lambda x, f: (torch.cov(x, fweights=f), torch.cov(x, correction=0, fweights=f)),
        lambda: (torch.randn(2, 4), torch.tensor([1, 2, 0, 3])),
    ),
    Case(
        "cov_aweights",
        lambda x, w: (
            torch.cov(x, aweights=w),
            torch.cov(x, correction=2, aweights=w),
            torch.cov(x, correction=0, aweights=w),
        ),
        lambda: (torch.randn(3, 4), torch.rand(4) + 0.1),
    ),
    Case(
        "cov_both_weights",
        lambda x, f, w: torch.cov(x, correction=2, fweights=f, aweights=w),
        lambda: (torch.randn(2, 4), torch.tensor([1, 2, 1, 3]), torch.tensor([1.0, 2.0, 0.5, 3.0])),
    ),
    Case(
        "cov_int_weights",
        lambda x, f, w: (torch.cov(x, fweights=f), torch.cov(x, aweights=w)),
        lambda: (torch.arange(8).reshape(2, 4), torch.tensor([1, 2, 0, 3]), torch.rand(4).double() + 0.1),
    ),
    Case(
        "cov_aweights_double",
        lambda x, w: torch.cov(x, aweights=w),
        lambda: (torch.randn(2, 4), torch.rand(4).double()),
    ),
    Case(
        "cov_dynamic_observations",
        lambda x: torch.cov(x),
        f32(2, 5),
        dynamic={"x0": [1]},
        others=lambda: [(torch.randn(2, 9),), (torch.randn(2, 1),), (torch.randn(2, 0),)],
    ),
    Case(
        "cov_weights_scripted",
        _script_cov_weights,
        lambda: (torch.randn(3, 4), torch.tensor([2, 1, 1, 3]), torch.rand(4)),
        script=True,
    ),
    # corrcoef
    Case("corrcoef", torch.corrcoef, f32(3, 5)),
    Case("corrcoef_1d", torch.corrcoef, f32(5)),
    Case(
        "corrcoef_constant_row",
        torch.corrcoef,
        lambda: (torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]),),
    ),
    Case("corrcoef_constant_1d", torch.corrcoef, lambda: (torch.ones(4),)),
    Case("corrcoef_int", torch.corrcoef, lambda: (torch.randint(-5, 5, (3, 4)),)),
    Case("corrcoef_special", torch.corrcoef, lambda: (_with_special((3, 4)),)),
    Case(
        "corrcoef_empty",
        lambda x, y: (torch.corrcoef(x), torch.corrcoef(y)),
        lambda: (torch.randn(2, 0), torch.randn(0, 3)),
    ),
    Case("corrcoef_double", torch.corrcoef, f32(2, 6, dtype=torch.float64)),
    Case(
        "corrcoef_dynamic_observations",
        torch.corrcoef,
        f32(3, 5),
        dynamic={"x0": [1]},
        others=lambda: [(torch.randn(3, 8),), (torch.randn(3, 2),)],
    ),
    # every op scripted
    Case("statistics_scripted", _script_statistics, f32s(2, 3, 4), script=True),
]


@pytest.mark.filterwarnings(r"ignore:cov\(\). degrees of freedom")
@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("op", [torch.cov, torch.corrcoef])
def test_cov_refuses_a_dynamic_number_of_variables(op: object) -> None:
    """The result is 0-d for one variable and a matrix otherwise: with the variables' dim
    dynamic the rank is not known at export, so the export is refused naming that dim."""
    with pytest.raises(exporter.ExporterError, match="number of variables"):
        assert_matches_torch(Wrap(op), (torch.randn(3, 4),), opset=17, input_names=["x0"], dynamic_axes={"x0": [0]})
