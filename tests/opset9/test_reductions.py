"""The op table for reductions, cumulative ops and norms (exporter.opset9.reductions).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import INF, NAN, Case, f32, f32s, helper_params, ints, lowering_opsets, op_params, run_case, ties
from conftest import NEWEST, Wrap, assert_matches_torch

from exporter.errors import SymbolicError


def small_ints(
    *shape: int, dtype: torch.dtype = torch.int64, low: int = -5, high: int = 6
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype),)


def rand_bools(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.rand(*shape) > 0.5,)


def histc_edges() -> tuple[torch.Tensor, ...]:
    """Values on the bin edges (min, max, interior edges), outside [min, max] and NaN."""
    x = torch.randn(60)
    x[:8] = torch.tensor([-1.0, 1.0, -0.5, 0.0, 0.5, 1.5, -3.0, float("nan")])
    return (x,)


def expert_indices() -> tuple[torch.Tensor, ...]:
    """Mixtral: top-2 expert indices of 10 tokens over 8 experts, as float for histc."""
    return (torch.randint(0, 8, (10, 2)).float(),)


CASES = [
    # reductions
    Case("mean_all", torch.mean, f32(3, 4)),
    Case("mean_dim", lambda a: a.mean(dim=1), f32(3, 4, 5)),
    Case("mean_dims_keep", lambda a: a.mean(dim=(0, 2), keepdim=True), f32(3, 4, 5)),
    Case("sum_all", torch.sum, f32(3, 4)),
    Case("sum_dim", lambda a: a.sum(-1), f32(3, 4)),
    Case("sum_int32", lambda a: a.sum(0), ints(3, 4, dtype=torch.int32)),
    Case("sum_bool", lambda a: (a > 0).sum(), f32(10)),
    Case("max_other", torch.max, f32s(2, 3, 4)),
    Case("min_other", torch.min, lambda: (torch.randn(3, 4), torch.randn(1, 4))),
    # all / any
    Case(
        "all_any_float",
        lambda a: (torch.all(a), torch.any(a), torch.all(a, dim=1), torch.any(a, 0)),
        lambda: (torch.tensor([[1.0, 0.0, 2.0], [1.0, 3.0, float("nan")], [1.0, 2.0, -1.0]]),),
    ),
    Case(
        "all_any_bool_dims_keep",
        lambda a: (torch.all(a, dim=(0, 2), keepdim=True), torch.any(a, -1)),
        rand_bools(2, 3, 2),
    ),
    Case("all_any_int", lambda a: (torch.all(a), torch.any(a, -1)), small_ints(4, 3, low=0, high=2)),
    Case("all_uint8", lambda a: torch.all(a, 0), lambda: (torch.randint(0, 2, (3, 4), dtype=torch.uint8),)),
    # argmax / argmin
    Case(
        "arg_forms",
        lambda a: (
            torch.argmax(a),
            torch.argmax(a, 1),
            torch.argmax(a, -1, keepdim=True),
            torch.argmax(a, keepdim=True),
            torch.argmin(a, 0),
            torch.argmin(a),
        ),
        f32(3, 4, 2),
    ),
    Case(
        "arg_ties_first", lambda a: (torch.argmax(a, 1), torch.argmin(a, 1), torch.argmax(a), torch.argmin(a, 0)), ties
    ),
    Case(
        "arg_int_dtypes",
        lambda a: (torch.argmax(a, 1), torch.argmin(a.int(), 0), torch.argmax(a.to(torch.int8), 1)),
        small_ints(3, 5),
    ),
    Case(
        "arg_nan",
        lambda a: (torch.argmax(a, 1), torch.argmin(a, 1), torch.argmax(a), torch.argmin(a, 0, keepdim=True)),
        lambda: (torch.tensor([[1.0, NAN, 3.0, NAN], [2.0, 1.0, 0.0, 5.0], [-INF, NAN, INF, 0.0]]),),
    ),
    Case("arg_half", lambda a: (torch.argmax(a, 1), torch.argmin(a)), f32(3, 5, dtype=torch.float16)),
    # max / min / amax / amin / aminmax
    Case("max_min_all", lambda a: (torch.max(a), torch.min(a)), f32(3, 4)),
    Case(
        "max_min_nan",
        lambda a: (
            torch.max(a),
            torch.min(a[1:]),
            torch.amax(a, 1),
            torch.amin(a, 0),
            torch.aminmax(a, dim=1)[0],
            torch.linalg.vector_norm(a, INF, 1),
            torch.linalg.matrix_norm(a, INF),
        ),
        lambda: (torch.tensor([[1.0, NAN, 3.0], [2.0, 1.0, 0.0], [-INF, 4.0, NAN]]),),
    ),
    Case(
        "max_min_all_int",
        lambda a: (torch.max(a), torch.min(a.int()), torch.max(a.to(torch.int8)), torch.min(a.to(torch.uint8))),
        small_ints(3, 4, low=0, high=100),
    ),
    Case("max_min_all_bool", lambda a: (torch.max(a), torch.min(a)), rand_bools(3, 4)),
    Case("max_dim", lambda a: (torch.max(a, 1), torch.min(a, -1, keepdim=True)), f32(2, 3, 4)),
    Case("max_min_dim_ties", lambda a: (torch.max(a, 1), torch.min(a, 1)), ties),
    Case(
        "max_min_dim_nan",
        lambda a: (torch.max(a, 1), torch.min(a, 0)),
        lambda: (torch.tensor([[1.0, NAN, 3.0, NAN], [2.0, 1.0, 0.0, 5.0], [-INF, 2.0, INF, 0.0]]),),
    ),
    Case(
        "max_min_dim_dtypes",
        lambda a: (torch.min(a, 0), torch.max(a.to(torch.int8), 1), torch.max(a.half(), 0)),
        small_ints(4, 3),
    ),
    Case("amax_amin", lambda a: (torch.amax(a, (0, 2)), torch.amin(a, -1, keepdim=True), torch.amax(a)), f32(2, 3, 4)),
    Case(
        "amax_amin_narrow",
        lambda a, b: (torch.amax(a), torch.amin(a, 1), torch.amin(b, 1), torch.amax(b, (0, 1))),
        lambda: (torch.randint(0, 255, (3, 4), dtype=torch.uint8), torch.rand(3, 4) > 0.5),
    ),
    Case("aminmax", lambda a: (torch.aminmax(a), torch.aminmax(a, keepdim=True)), f32(3, 4)),
    Case("aminmax_dim_int32", lambda a: torch.aminmax(a, dim=1, keepdim=True), small_ints(3, 4, dtype=torch.int32)),
    Case(
        "zero_dim_inputs",
        lambda a: (
            torch.max(a[0, 0]),
            torch.all(a[0, 0]),
            torch.cumsum(a[0, 0], 0),
            torch.prod(a[0, 0]),
            torch.linalg.vector_norm(a[0, 0]),
            torch.var(a, dim=None, correction=0, keepdim=True),
        ),
        f32(3, 4),
    ),
    # prod
    Case(
        "prod_forms",
        lambda a: (torch.prod(a), torch.prod(a, 1), torch.prod(a, -1, keepdim=True)),
        lambda: (torch.rand(2, 3) + 0.5,),
    ),
    Case(
        "prod_int_bool",
        lambda a: (torch.prod(a, 0), torch.prod(a > 0), torch.prod(a.int(), 1)),
        small_ints(3, 4, low=1),
    ),
    Case("prod_dtype", lambda a: torch.prod(a, 1, dtype=torch.float64), f32(3, 4)),
    Case("prod_half", lambda a: torch.prod(a, 1), lambda: ((torch.rand(3, 4) + 0.5).half(),), atol=1e-2, rtol=1e-2),
    # logsumexp
    Case(
        "logsumexp",
        lambda a: (torch.logsumexp(a, 1), torch.logsumexp(a, (0, 2), keepdim=True), torch.logsumexp(a * 1000, -1)),
        f32(2, 3, 4),
    ),
    Case(
        "logsumexp_infinite",
        lambda a: torch.logsumexp(a, 1),
        lambda: (torch.tensor([[-INF, -INF], [INF, 1.0], [0.0, -INF]]),),
    ),
    Case("logsumexp_int", lambda a: torch.logsumexp(a, 0), small_ints(3, 4)),
    Case("logsumexp_half", lambda a: torch.logsumexp(a, 1), f32(3, 4, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    # NaN-skipping sums and means, nonzero counts
    Case(
        "nansum_nanmean",
        lambda a: (
            torch.nansum(a),
            torch.nansum(a, 1),
            a.nansum((0, 1), keepdim=True),
            torch.nanmean(a),
            torch.nanmean(a, 0),
            a.nanmean(-1, True),
        ),
        lambda: (torch.tensor([[1.0, NAN, 3.0], [NAN, NAN, NAN], [INF, 2.0, -1.0], [0.5, -0.5, NAN]]),),
    ),
    Case(
        "nansum_nanmean_dtype_int",
        lambda a, b: (
            torch.nansum(a, 1, dtype=torch.float64),
            torch.nanmean(a, 1, dtype=torch.float64),
            torch.nansum(b, 0),
            b.nansum(),
        ),
        lambda: (torch.tensor([[NAN, 1.5], [2.0, 3.0]]), torch.randint(-5, 5, (3, 4), dtype=torch.int32)),
    ),
    Case(
        "nansum_nanmean_dynamic",
        lambda a: (torch.nansum(a, 1), torch.nanmean(a, 1)),
        lambda: (torch.tensor([[1.0, NAN, 3.0], [NAN, NAN, NAN]]),),
        dynamic={"x0": {0: "b", 1: "n"}},
        others=lambda: [(torch.full((3, 1), NAN),), (torch.randn(1, 5),)],
    ),
    Case(
        "count_nonzero",
        lambda a, b, c: (
            torch.count_nonzero(a),
            torch.count_nonzero(a, 1),
            torch.count_nonzero(a, (0, 1)),
            b.count_nonzero(0),
            c.count_nonzero(-1),
        ),
        lambda: (
            torch.tensor([[0.0, NAN, -0.0], [INF, 2.0, 0.0]]),
            torch.randint(-1, 2, (4, 3), dtype=torch.int8),
            torch.rand(2, 5) > 0.5,
        ),
    ),
    # cumsum / cumprod
    # trapezoid / trapz: samples dx apart, or at x (1-d along dim, same shape, lower rank)
    Case(
        "trapezoid_dx",
        lambda y: (torch.trapezoid(y), torch.trapezoid(y, dx=0.5, dim=0), torch.trapz(y, dx=2.0, dim=1)),
        f32(3, 4, 5),
    ),
    Case(
        "trapezoid_x",
        lambda y, x, xs: (torch.trapezoid(y, x), torch.trapz(y, xs, dim=1), torch.trapezoid(y, xs[0])),
        lambda: (torch.randn(3, 4), torch.rand(4).cumsum(0), torch.rand(3, 4).cumsum(1)),
    ),
    Case(
        "trapezoid_ints",
        lambda y, x: (torch.trapezoid(y), torch.trapezoid(y, x), torch.trapezoid(y.double(), x, dim=0)),
        lambda: (torch.randint(-5, 5, (4, 4)), torch.randint(0, 9, (4,))),
    ),
    Case("trapezoid_half", lambda y: torch.trapezoid(y, dx=0.25), f32(3, 6, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    Case(
        "trapezoid_dynamic",
        lambda y, x: (torch.trapezoid(y, dim=0), torch.trapezoid(y, x)),
        lambda: (torch.randn(3, 4), torch.rand(4)),
        dynamic={"x0": {0: "a", 1: "n"}, "x1": {0: "n"}},
        # one sample and none: the integral is 0
        others=lambda: [
            (torch.randn(1, 1), torch.rand(1)),
            (torch.randn(2, 0), torch.rand(0)),
            (torch.randn(5, 7), torch.rand(7)),
        ],
    ),
    Case("cumsum_dims", lambda a: (torch.cumsum(a, 1), torch.cumsum(a, 0), torch.cumsum(a, -1)), f32(5, 9, 3)),
    Case(
        "cumsum_int_bool",
        lambda a: (torch.cumsum(a, 0), torch.cumsum(a > 0, 1), torch.cumsum(a.int(), 1)),
        small_ints(6, 3),
    ),
    Case("cumsum_dtype", lambda a: torch.cumsum(a, 1, dtype=torch.float64), f32(3, 4)),
    Case("cumsum_half", lambda a: torch.cumsum(a, 1), f32(3, 5, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    Case("cumsum_inf", lambda a: torch.cumsum(a, 0), lambda: (torch.tensor([1.0, INF, 2.0, -1.0, -INF]),)),
    Case("cumsum_size1", lambda a: torch.cumsum(a, 1), f32(3, 1)),
    Case("cumprod", lambda a: (torch.cumprod(a, 1), torch.cumprod(a, 0)), f32(3, 6)),
    Case("cumprod_int", lambda a: torch.cumprod(a, 0), small_ints(5, 2, dtype=torch.int32)),
    Case("cumprod_zero_negative", lambda a: torch.cumprod(a, 0), lambda: (torch.tensor([-2.0, 3.0, 0.0, -1.0, 5.0]),)),
    # numel
    Case("numel", lambda a: a * a.numel(), f32(2, 3)),
    # var / std
    Case(
        "var_forms",
        lambda a: (torch.var(a), torch.var(a, unbiased=False), torch.var(a, 1), torch.var(a, (0, 2), keepdim=True)),
        f32(2, 3, 4),
    ),
    Case(
        "var_corrections",
        lambda a: (torch.var(a, 1, correction=0), torch.var(a, -1, correction=2), torch.var(a, 0, correction=4)),
        f32(3, 5),
    ),
    Case(
        "var_zero_divisor", lambda a: (torch.var(a, 1), torch.var(a * 0, 1), torch.var(a, 0, correction=3)), f32(3, 1)
    ),
    Case(
        "std_forms",
        lambda a: (torch.std(a), torch.std(a, 0, unbiased=False), torch.std(a, -1, correction=1.5, keepdim=True)),
        f32(2, 3, 4),
    ),
    Case("std_half", lambda a: torch.std(a, 1), f32(3, 8, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    Case("var_mean", lambda a: (torch.var_mean(a, 1), torch.var_mean(a)), f32(3, 4)),
    Case(
        "std_mean",
        lambda a: (torch.std_mean(a, (0, 1), correction=0, keepdim=True), torch.std_mean(a, 1, unbiased=True)),
        f32(2, 3, 4),
    ),
    # norms
    Case(
        "norm_forms",
        lambda a: (
            torch.norm(a),
            torch.norm(a, p=1, dim=1),
            torch.norm(a, p=INF, dim=-1, keepdim=True),
            torch.norm(a, p=-INF, dim=0),
            torch.norm(a, p=3, dim=(0, 1)),
        ),
        f32(3, 4),
    ),
    Case("norm_p0", lambda a: torch.norm(a, p=0, dim=1), lambda: (torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, -3.0]]),)),
    Case("norm_fro_dims", lambda a: torch.norm(a, p="fro", dim=(1, 2)), f32(2, 3, 4)),
    Case("norm_dtype", lambda a: torch.norm(a, dim=1, dtype=torch.float64), f32(3, 4)),
    Case("norm_half", lambda a: torch.norm(a, dim=1), f32(3, 8, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    Case(
        "vector_norm",
        lambda a: (
            torch.linalg.vector_norm(a, ord=2.5, dim=-1),
            torch.linalg.vector_norm(a),
            torch.linalg.vector_norm(a.abs() + 0.1, ord=-1, dim=1),
        ),
        f32(2, 3, 4),
    ),
    Case(
        "matrix_norm",
        lambda a: (
            torch.linalg.matrix_norm(a),
            torch.linalg.matrix_norm(a, ord=1),
            torch.linalg.matrix_norm(a, ord=-1, keepdim=True),
            torch.linalg.matrix_norm(a, ord=INF),
            torch.linalg.matrix_norm(a, ord=-INF, dim=(0, 2)),
        ),
        f32(2, 3, 4),
    ),
    Case(
        "linalg_norm",
        lambda a: (
            torch.linalg.norm(a),
            torch.linalg.norm(a, ord=1, dim=1),
            torch.linalg.norm(a, ord="fro", dim=(0, 1)),
            torch.linalg.norm(a[0], ord=INF),
            torch.linalg.norm(a[0, 0], ord=3),
        ),
        f32(3, 4, 2),
    ),
    # bincount: sizes from the data (max + 1, at least minlength), so other inputs check them
    Case(
        "bincount",
        lambda a: (torch.bincount(a), torch.bincount(a, minlength=9)),
        small_ints(7, low=0, high=5),
        dynamic={"x0": {0: "n"}},
        others=lambda: [(torch.tensor([6, 6, 0]),), (torch.zeros(0, dtype=torch.int64),)],
    ),
    Case(
        "bincount_weights",
        lambda a, w: (torch.bincount(a, w), torch.bincount(a, w.double(), 3), torch.bincount(a, (w * 4).long())),
        lambda: (torch.randint(0, 4, (6,)), torch.rand(6)),
        dynamic={"x0": {0: "n"}, "x1": {0: "n"}},
        others=lambda: [(torch.tensor([5, 1]), torch.tensor([0.5, 2.0]))],
    ),
    # histc (Mixtral: tokens per expert)
    # Mixtral: tokens per expert
    Case("histc_data_range", lambda x: torch.histc(x, bins=5), f32(40)),
    Case("histc_given_range", lambda x: torch.histc(x, bins=4, min=-1, max=1), histc_edges),
    Case("histc_experts", lambda x: torch.histc(x, bins=8, min=0, max=7), expert_indices),
    Case("histc_constant_input", lambda x: torch.histc(x * 0 + 2, bins=3), f32(2, 3)),
    Case("histc_min_equals_max", lambda x: torch.histc(x, bins=4, min=1, max=1), f32(30)),
    Case("histc_double", lambda x: torch.histc(x, bins=6), f32(25, dtype=torch.float64)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "sum_dim",
    "nansum_nanmean",
    "count_nonzero",
    "mean_dims_keep",
    "all_any_bool_dims_keep",
    "max_dim",
    "amax_amin",
    "prod_forms",
    "logsumexp",
    "cumsum_dims",
    "var_forms",
    "norm_forms",
    "histc_data_range",
    "histc_given_range",
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class Dynamic(torch.nn.Module):
    """Reductions over a batch dim whose size is only known at run time."""

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            torch.var(x, 0),
            torch.std(x, (0, 2), correction=2, keepdim=True),
            torch.var_mean(x)[0],
            x.numel() * torch.ones(1),
            torch.tensordot(x, x, dims=([0, 1], [0, 1])),
            torch.tensordot(x, x[0], dims=([2], [1])),
            torch.norm(x, dim=0),
            torch.cumsum(x, 2),
            torch.argmax(x, keepdim=True),
            F.cross_entropy(x[:, :, 0], t, label_smoothing=0.1),
            F.cross_entropy(x[:, :, 0], x[:, :, 1].softmax(1)),
            torch.einsum("bij,bkj->bik", x, x),
            torch.max(x),
            torch.logsumexp(x, 0),
        )


@pytest.mark.parametrize("opset", lowering_opsets("aten::sum", "aten::mean", helpers=True))
def test_dynamic_batch(opset: int) -> None:
    def make(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(n, 3, 4), torch.randint(0, 3, (n,))

    assert_matches_torch(
        Dynamic(),
        make(5),
        opset=opset,
        other_inputs=[make(2), make(7)],
        input_names=["x", "t"],
        dynamic_axes={"x": {0: "n"}, "t": {0: "n"}},
    )


@pytest.mark.parametrize("opset", lowering_opsets("aten::cumsum", before_changes=True))
def test_cumsum_dynamic_dim(opset: int) -> None:
    """CumSum handles a run-time length from opset 11; the opset-9 scan needs it static."""
    model = Wrap(lambda x: torch.cumsum(x, 0))
    kwargs = dict(input_names=["x"], dynamic_axes={"x": {0: "n"}})
    if opset < 11:
        with pytest.raises(SymbolicError, match="cumsum below opset 11"):
            assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, **kwargs)
    else:
        assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, other_inputs=[(torch.randn(9, 2),)], **kwargs)


@pytest.mark.parametrize("ord", ["nuc", 2.0, -2.0])
def test_matrix_norm_needing_singular_values_is_refused(ord: str | float) -> None:  # noqa: A002
    with pytest.raises(SymbolicError, match="singular values"):
        assert_matches_torch(Wrap(lambda a: torch.linalg.matrix_norm(a, ord=ord)), (torch.randn(3, 3),), opset=NEWEST)


class Scripted(torch.nn.Module):
    """Scripting keeps the aten::norm / std.correction / var.dim overloads tracing rewrites."""

    def forward(self, a: torch.Tensor):  # noqa: ANN201 - TorchScript infers the tuple type
        return (
            a.norm(p=2.0, dim=[1]),
            a.norm(1.0, [0], True, dtype=torch.float64),
            torch.std(a, dim=[1], correction=0),
            torch.var(a, [0], False, True),
            torch.var_mean(a, [1]),
            a.sum(1).cumsum(0),
            torch.amax(a, [0]),
            torch.prod(a, 1),
            torch.logsumexp(a, [1]),
            torch.all(a > 0, 1),
            torch.tensordot(a, a, [[0], [0]]),
            torch.linalg.vector_norm(a, 3.0, [1]),
            torch.linalg.matrix_norm(a, 1.0),
            torch.linalg.norm(a),
            torch.linalg.cross(a[:, :3], a[:, 1:]),
        )


@pytest.mark.parametrize("opset", lowering_opsets("aten::sum", "aten::mean", helpers=True))
def test_scripted_overloads(opset: int) -> None:
    assert_matches_torch(torch.jit.script(Scripted()), (torch.randn(3, 4),), opset=opset)


class ScriptedArgmax(torch.nn.Module):
    def forward(self, a: torch.Tensor):  # noqa: ANN201
        return torch.argmax(a, 1), torch.argmin(a)


def test_scripted_argmax() -> None:
    assert_matches_torch(torch.jit.script(ScriptedArgmax()), (torch.randn(3, 4),), opset=NEWEST)


class _ScriptedNorms(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return (
            torch.norm(x, p="fro", dim=0, keepdim=False),
            torch.norm(x, p="fro", dim=(0, 1), keepdim=True),
            torch.norm(x, p=1, dim=-1),
        )


@pytest.mark.parametrize("opset", lowering_opsets("aten::norm", "aten::linalg_vector_norm", helpers=True))
def test_scripted_torch_norm(opset: int) -> None:
    """torch.norm's scripted body holds nuclear_norm (no ONNX lowering) in branches for other
    arguments; export decides them, so the norms asked for export."""
    assert_matches_torch(torch.jit.script(_ScriptedNorms()), (torch.randn(4, 2, 3),), opset=opset)
