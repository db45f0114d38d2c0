"""Reductions, norms, statistics, products and losses, crossed with the opsets where its lowering changes (tests/cases.py).

Each case is a function of tensors. It is traced, exported, run in onnxruntime and compared
with eager torch (dtype, shape, values) at every opset where its lowering changes (tests/cases.py) from its first supported one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, op_params, run_case
from conftest import NEWEST, Wrap, assert_matches_torch

from exporter.errors import SymbolicError, UnsupportedOperatorError


def f32(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(*shape).to(dtype),)


def ints(
    *shape: int, dtype: torch.dtype = torch.int64, low: int = -5, high: int = 6
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype),)


def bools(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.rand(*shape) > 0.5,)


def pair(
    a: tuple[int, ...], b: tuple[int, ...], dtype: torch.dtype = torch.float32
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(*a).to(dtype), torch.randn(*b).to(dtype))


def ties() -> tuple[torch.Tensor, ...]:
    """Repeated maxima and minima in every row: the first index must win."""
    return (torch.tensor([[1.0, 3.0, 3.0, -2.0, -2.0], [5.0, 5.0, 0.0, 5.0, 0.0], [-1.0, -1.0, -1.0, -1.0, -1.0]]),)


def classes(n: int, c: int, *extra: int, ignore: int | None = None) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        target = torch.randint(0, c, (n, *extra))
        if ignore is not None:
            target.view(-1)[::3] = ignore
        return torch.randn(n, c, *extra), target

    return make


INF = math.inf
NAN = math.nan


CASES = [
    # all / any
    Case(
        "all_any_float",
        lambda a: (torch.all(a), torch.any(a), torch.all(a, dim=1), torch.any(a, 0)),
        lambda: (torch.tensor([[1.0, 0.0, 2.0], [1.0, 3.0, float("nan")], [1.0, 2.0, -1.0]]),),
    ),
    Case(
        "all_any_bool_dims_keep", lambda a: (torch.all(a, dim=(0, 2), keepdim=True), torch.any(a, -1)), bools(2, 3, 2)
    ),
    Case("all_any_int", lambda a: (torch.all(a), torch.any(a, -1)), ints(4, 3, low=0, high=2)),
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
        ints(3, 5),
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
        ints(3, 4, low=0, high=100),
    ),
    Case("max_min_all_bool", lambda a: (torch.max(a), torch.min(a)), bools(3, 4)),
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
        ints(4, 3),
    ),
    Case("amax_amin", lambda a: (torch.amax(a, (0, 2)), torch.amin(a, -1, keepdim=True), torch.amax(a)), f32(2, 3, 4)),
    Case(
        "amax_amin_narrow",
        lambda a, b: (torch.amax(a), torch.amin(a, 1), torch.amin(b, 1), torch.amax(b, (0, 1))),
        lambda: (torch.randint(0, 255, (3, 4), dtype=torch.uint8), torch.rand(3, 4) > 0.5),
    ),
    Case("aminmax", lambda a: (torch.aminmax(a), torch.aminmax(a, keepdim=True)), f32(3, 4)),
    Case("aminmax_dim_int32", lambda a: torch.aminmax(a, dim=1, keepdim=True), ints(3, 4, dtype=torch.int32)),
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
    Case("prod_int_bool", lambda a: (torch.prod(a, 0), torch.prod(a > 0), torch.prod(a.int(), 1)), ints(3, 4, low=1)),
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
    Case("logsumexp_int", lambda a: torch.logsumexp(a, 0), ints(3, 4)),
    Case("logsumexp_half", lambda a: torch.logsumexp(a, 1), f32(3, 4, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    # cumsum / cumprod
    Case("cumsum_dims", lambda a: (torch.cumsum(a, 1), torch.cumsum(a, 0), torch.cumsum(a, -1)), f32(5, 9, 3)),
    Case(
        "cumsum_int_bool", lambda a: (torch.cumsum(a, 0), torch.cumsum(a > 0, 1), torch.cumsum(a.int(), 1)), ints(6, 3)
    ),
    Case("cumsum_dtype", lambda a: torch.cumsum(a, 1, dtype=torch.float64), f32(3, 4)),
    Case("cumsum_half", lambda a: torch.cumsum(a, 1), f32(3, 5, dtype=torch.float16), atol=1e-2, rtol=1e-2),
    Case("cumsum_inf", lambda a: torch.cumsum(a, 0), lambda: (torch.tensor([1.0, INF, 2.0, -1.0, -INF]),)),
    Case("cumsum_size1", lambda a: torch.cumsum(a, 1), f32(3, 1)),
    Case("cumprod", lambda a: (torch.cumprod(a, 1), torch.cumprod(a, 0)), f32(3, 6)),
    Case("cumprod_int", lambda a: torch.cumprod(a, 0), ints(5, 2, dtype=torch.int32)),
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
    # distances
    Case(
        "cosine_similarity",
        lambda a, b: (F.cosine_similarity(a, b), F.cosine_similarity(a * 0, b)),
        pair((3, 4), (3, 4)),
    ),
    Case("cosine_similarity_dim_bcast", lambda a, b: F.cosine_similarity(a, b, dim=-1), pair((2, 3, 4), (3, 4))),
    Case(
        "pairwise_distance",
        lambda a, b: (
            F.pairwise_distance(a, b),
            F.pairwise_distance(a, b, p=1.0, keepdim=True),
            F.pairwise_distance(a, b, p=INF, eps=0.0),
        ),
        pair((3, 4), (1, 4)),
    ),
    Case(
        "cdist",
        lambda a, b: (
            torch.cdist(a, b),
            torch.cdist(a, b, p=1.0),
            torch.cdist(a, b, p=INF),
            torch.cdist(a, b[0], p=3.0),
        ),
        pair((2, 5, 3), (2, 4, 3)),
    ),
    Case(
        "distances_half",
        lambda a, b: (F.cosine_similarity(a, b), F.pairwise_distance(a, b)),
        pair((3, 4), (3, 4), torch.float16),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case("cdist_large_p0", lambda a, b: torch.cdist(a.round(), b.round(), p=0.0), pair((30, 2), (27, 2))),
    Case(
        "cdist_mm_mode",
        lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
        pair((30, 3), (26, 3)),
        atol=1e-4,
    ),
    # products
    Case("dot_mv", lambda a, b: (torch.dot(a[0], b), torch.mv(a, b)), pair((3, 4), (4,))),
    Case("dot_int", torch.dot, lambda: (torch.randint(-5, 5, (5,)), torch.randint(-5, 5, (5,)))),
    Case("outer", lambda a, b: (torch.outer(a, b), torch.ger(a, b), torch.outer(a > 0, b > 0)), pair((3,), (4,))),
    Case(
        "outer_int32",
        torch.outer,
        lambda: (torch.randint(-5, 5, (3,), dtype=torch.int32), torch.randint(-5, 5, (2,), dtype=torch.int32)),
    ),
    Case(
        "cross",
        lambda a, b: (torch.cross(a, b, dim=1), torch.linalg.cross(a, b), torch.cross(a.t(), b.t())),
        pair((4, 3), (4, 3)),
    ),
    Case(
        "linalg_cross_bcast_dim",
        lambda a, b: (torch.linalg.cross(a, b, dim=0), torch.linalg.cross(a.t(), b.t())),
        pair((3, 4), (3, 1)),
    ),
    Case(
        "linalg_cross_int",
        torch.linalg.cross,
        lambda: (torch.randint(-5, 5, (2, 4, 3)), torch.randint(-5, 5, (2, 4, 3))),
    ),
    Case(
        "tensordot",
        lambda a, b: (torch.tensordot(a, b, dims=([1, 2], [0, 1])), torch.tensordot(a, b, dims=([1], [0]))),
        pair((2, 3, 4), (3, 4, 5)),
    ),
    Case(
        "tensordot_forms",
        lambda a, b: (
            torch.tensordot(a, b, dims=([0, 2], [2, 0])),
            torch.tensordot(a[0], a[1], dims=2),
            torch.tensordot(a[0], b[0, 0], dims=0),
        ),
        pair((2, 3, 4), (4, 5, 2)),
    ),
    Case(
        "tensordot_int",
        lambda a, b: torch.tensordot(a, b, dims=1),
        lambda: (torch.randint(-5, 5, (2, 3)), torch.randint(-5, 5, (3, 4))),
    ),
    Case(
        "einsum",
        lambda a, b: (
            torch.einsum("ij,jk->ik", a[0], b[0]),
            torch.einsum("...ij, ...jk -> ...ik", a, b),
            torch.einsum("bij,bjk", a, b),
            torch.einsum("bij->jb", a),
        ),
        pair((2, 2, 3), (2, 3, 2)),
    ),
    Case(
        "einsum_attention",
        lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1),
        pair((2, 3, 4, 5), (2, 3, 6, 5)),
    ),
    Case(
        "einsum_three_operands",
        lambda a, b, c: (
            torch.einsum("ij,jk,kl->il", a, b, c),
            torch.einsum("i,j,k", a[0], b[0], c[0]),
            torch.einsum("ij,kj,ji->k", a, b.t(), a.t()),
        ),
        lambda: (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 2)),
    ),
    Case(
        "einsum_broadcast_ellipsis",
        lambda a, b: (torch.einsum("...ij,jk->...ik", a, b[0]), torch.einsum("bij,...jk->bik", a, b[:1])),
        pair((2, 2, 3), (2, 3, 2)),
    ),
    Case(
        "einsum_sum_out",
        lambda a: (torch.einsum("ijk->", a), torch.einsum("ijk->ki", a), torch.einsum("ijk", a)),
        f32(2, 3, 4),
    ),
    Case(
        "einsum_int_bool",
        lambda a, b: (torch.einsum("i,j->ij", a, b), torch.einsum("i,i->i", a > 1, a > 0)),
        lambda: (torch.arange(3), torch.arange(4)),
    ),
    Case(
        "einsum_diagonal",
        lambda a: (torch.einsum("bii->b", a), torch.einsum("ii->i", a[0])),
        f32(2, 3, 3),
        min_opset=12,
    ),
    # determinants
    Case("det", lambda a: (torch.det(a[0, :3, :3]), torch.linalg.det(a)), f32(2, 4, 4), min_opset=11, atol=1e-4),
    Case("logdet", torch.logdet, lambda: (torch.eye(3) * 2 + torch.randn(3, 3) * 0.1,), min_opset=11),
    Case("logdet_negative_is_nan", torch.logdet, lambda: (torch.diag(torch.tensor([1.0, -2.0, 3.0])),), min_opset=11),
    # losses
    Case(
        "nll_loss_reductions",
        lambda x, t: (
            F.nll_loss(F.log_softmax(x, 1), t),
            F.nll_loss(x, t, reduction="sum"),
            F.nll_loss(x, t, reduction="none"),
        ),
        classes(5, 4),
    ),
    Case(
        "nll_loss_ignore",
        lambda x, t: (F.nll_loss(x, t), F.nll_loss(x, t, reduction="sum")),
        classes(6, 4, ignore=-100),
    ),
    Case(
        "nll_loss_ignore_in_range",
        lambda x, t: (F.nll_loss(x, t, ignore_index=1, reduction="none"), F.nll_loss(x, t, ignore_index=1)),
        classes(6, 4),
    ),
    Case(
        "nll_loss_weight",
        lambda x, t: F.nll_loss(x, t, weight=torch.tensor([0.5, 2.0, 1.0, 3.0]), ignore_index=2),
        classes(7, 4),
    ),
    Case(
        "nll_loss_2d",
        lambda x, t: (F.nll_loss(x, t), F.nll_loss(x, t, weight=torch.tensor([1.0, 0.0, 2.0]), reduction="none")),
        classes(2, 3, 4, 5, ignore=-100),
    ),
    Case("nll_loss_unbatched", lambda x, t: F.nll_loss(x[0], t[0]), classes(2, 4)),
    Case(
        "nll_loss_neg_inf_elsewhere",
        lambda x, t: F.nll_loss(x, t),
        lambda: (torch.tensor([[-INF, -0.5, -1.0], [-0.1, -INF, -2.0]]), torch.tensor([1, 0])),
    ),
    Case("nll_loss_all_ignored_is_nan", lambda x, t: F.nll_loss(x, t * 0 - 100), classes(3, 4)),
    Case(
        "cross_entropy",
        lambda x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, ignore_index=0, reduction="none")),
        classes(5, 4),
    ),
    Case(
        "cross_entropy_sum_weight",
        lambda x, t: F.cross_entropy(x, t, weight=torch.tensor([1.0, 2.0, 0.5]), reduction="sum"),
        classes(5, 3),
    ),
    Case(
        "cross_entropy_smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2), classes(6, 4, ignore=-100)
    ),
    Case(
        "cross_entropy_smoothing_weight",
        lambda x, t: F.cross_entropy(
            x, t, weight=torch.tensor([1.0, 2.0, 0.5, 1.5]), label_smoothing=0.1, ignore_index=3
        ),
        classes(8, 4),
    ),
    Case(
        "cross_entropy_smoothing_none_2d",
        lambda x, t: (
            F.cross_entropy(x, t, label_smoothing=0.3, reduction="none"),
            F.cross_entropy(x, t, label_smoothing=0.3, reduction="sum"),
        ),
        classes(2, 3, 2, 2, ignore=-100),
    ),
    Case(
        "cross_entropy_probs",
        lambda x, p: (
            F.cross_entropy(x, p.softmax(1)),
            F.cross_entropy(x, p.softmax(1), reduction="sum"),
            F.cross_entropy(x, p.softmax(1), reduction="none"),
        ),
        pair((4, 5), (4, 5)),
    ),
    Case(
        "cross_entropy_probs_weight_smooth",
        lambda x, p: F.cross_entropy(x, p.softmax(1), weight=torch.arange(1.0, 4.0), label_smoothing=0.25),
        pair((2, 3, 4), (2, 3, 4)),
    ),
    Case(
        "losses_unbatched",
        lambda a, t: (
            F.cross_entropy(a[0], t[0], label_smoothing=0.1),
            F.cross_entropy(a[0], a[1].softmax(0)),
            F.cosine_similarity(a[0], a[1], dim=0),
            F.pairwise_distance(a[0], a[1]),
        ),
        lambda: (torch.randn(3, 4), torch.tensor([1, 2, 0])),
    ),
    Case("cross_entropy_half", lambda x, t: F.cross_entropy(x.half(), t), classes(5, 4), atol=1e-2, rtol=1e-2),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "all_any_bool_dims_keep",
    "max_dim",
    "amax_amin",
    "prod_forms",
    "logsumexp",
    "cumsum_dims",
    "var_forms",
    "norm_forms",
    "nll_loss_reductions",
    "cross_entropy_smoothing",
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


@pytest.mark.parametrize("opset", [9, 13, 18, NEWEST])
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


@pytest.mark.parametrize("opset", [9, 10, 11, NEWEST])
def test_cumsum_dynamic_dim(opset: int) -> None:
    """CumSum handles a run-time length from opset 11; the opset-9 scan needs it static."""
    model = Wrap(lambda x: torch.cumsum(x, 0))
    kwargs = dict(input_names=["x"], dynamic_axes={"x": {0: "n"}})
    if opset < 11:
        with pytest.raises(SymbolicError, match="cumsum below opset 11"):
            assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, **kwargs)
    else:
        assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, other_inputs=[(torch.randn(9, 2),)], **kwargs)


@pytest.mark.parametrize(
    ("fn", "inputs", "first_opset"),
    [
        (torch.linalg.det, (torch.randn(3, 3),), 11),
        (torch.logdet, (torch.randn(3, 3),), 11),
    ],
    ids=["linalg_det", "logdet"],
)
def test_unsupported_below_first_opset(
    fn: Callable[..., object], inputs: tuple[torch.Tensor, ...], first_opset: int
) -> None:
    with pytest.raises(UnsupportedOperatorError, match=f"supported from opset {first_opset}"):
        assert_matches_torch(Wrap(fn), inputs, opset=first_opset - 1)


@pytest.mark.parametrize("opset", [9, 11])
def test_einsum_diagonal_below_opset_12_names_it(opset: int) -> None:
    with pytest.raises(SymbolicError, match="opset 12"):
        assert_matches_torch(Wrap(lambda a: torch.einsum("ii->i", a)), (torch.randn(3, 3),), opset=opset)


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


@pytest.mark.parametrize("opset", [9, 13, 18])
def test_scripted_overloads(opset: int) -> None:
    assert_matches_torch(torch.jit.script(Scripted()), (torch.randn(3, 4),), opset=opset)


class ScriptedArgmax(torch.nn.Module):
    def forward(self, a: torch.Tensor):  # noqa: ANN201
        return torch.argmax(a, 1), torch.argmin(a)


def test_scripted_argmax() -> None:
    assert_matches_torch(torch.jit.script(ScriptedArgmax()), (torch.randn(3, 4),), opset=NEWEST)
