"""Indexing, gather/scatter, sorting and selection, crossed with the opsets where its lowering changes (tests/cases.py).

Each case is a function of tensors. It is traced, exported, run in onnxruntime and compared
with eager torch at every opset from its first supported one. Duplicate indices appear on
purpose wherever torch defines the result (accumulating ops), since that is where a plain
scatter goes wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, op_params, run_case
from conftest import NEWEST, Wrap, assert_matches_torch

from exporter.errors import ExporterError, UnsupportedOperatorError

Inputs = Callable[[], tuple[torch.Tensor, ...]]


def f32(*shape: int) -> Inputs:
    return lambda: (torch.randn(*shape),)


def ints(*shape: int, low: int = -10, high: int = 10, dtype: torch.dtype = torch.int64) -> Inputs:
    return lambda: (torch.randint(low, high, shape, dtype=dtype),)


def with_index(data: Callable[[], torch.Tensor], index: Callable[[], torch.Tensor]) -> Inputs:
    return lambda: (data(), index())


def distinct(*shape: int) -> torch.Tensor:
    """Floats without ties (sorting cases)."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n).float() - n / 2).reshape(shape) / 3


# index along dim 1 of a [3, 5] tensor with repeats: rows pick with duplicates
DUP_INDEX = torch.tensor([[0, 1, 1, 4], [2, 2, 2, 0], [4, 3, 4, 3]])
SCATTER_INDEX = torch.tensor([[0, 3, 1], [4, 2, 0], [1, 0, 3]])  # a permutation prefix per row


def _put(idx: tuple[object, ...], value: object) -> Callable[[torch.Tensor], torch.Tensor]:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[idx] = value
        return y

    return fn


def _put_mask(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[x > 0] = x[x > 0] * 10
    return y


def _put_mask_scalar(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[x < 0] = 0.0
    return y


def _renorm(max_norm: float, norm_type: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def fn(w: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        w = w.clone()
        torch.embedding_renorm_(w, i, max_norm, norm_type)
        return F.embedding(i, w)

    return fn


CASES = [
    # gather / scatter
    Case("gather_dim1", lambda x, i: torch.gather(x, 1, i), with_index(lambda: torch.randn(3, 5), lambda: DUP_INDEX)),
    Case(
        "gather_dim0_smaller_index",
        lambda x, i: torch.gather(x, 0, i),
        with_index(lambda: torch.randn(4, 3), lambda: torch.tensor([[3, 0], [1, 1]])),
    ),
    Case(
        "gather_dtypes",
        lambda a, b, c, i: (torch.gather(a, -1, i), torch.gather(b, 1, i), torch.gather(c, 1, i)),
        lambda: (
            torch.randint(-50, 50, (3, 5), dtype=torch.int32),
            torch.randn(3, 5).half(),
            torch.rand(3, 5) > 0.5,
            DUP_INDEX,
        ),
    ),
    Case(
        "gather_inf_nan",
        lambda x, i: torch.gather(x, 1, i),
        with_index(lambda: torch.tensor([[float("inf"), 1.0, float("nan"), -2.0, 0.5]] * 3), lambda: DUP_INDEX),
    ),
    Case(
        "scatter_src",
        lambda x, i, s: torch.scatter(x, 1, i, s),
        lambda: (torch.randn(3, 5), SCATTER_INDEX, torch.randn(3, 3)),
    ),
    Case(
        "scatter_src_larger",
        lambda x, i, s: x.scatter(1, i, s),
        lambda: (torch.randn(3, 5), SCATTER_INDEX[:, :2], torch.randn(4, 4)),
    ),
    Case("scatter_value", lambda x, i: x.scatter(0, i, 2.5), lambda: (torch.randn(5, 3), SCATTER_INDEX.t())),
    Case(
        "scatter_int",
        lambda x, i, s: x.scatter(1, i, s),
        lambda: (torch.randint(0, 9, (3, 5)), SCATTER_INDEX, torch.randint(0, 9, (3, 3))),
    ),
    Case("scatter_inplace", lambda x, i: x.clone().scatter_(1, i, -1.0), lambda: (torch.randn(3, 5), SCATTER_INDEX)),
    Case(
        "scatter_reduce_add",
        lambda x, i, s: x.scatter(1, i, s, reduce="add"),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_multiply",
        lambda x, i, s: x.scatter(1, i, s, reduce="multiply"),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_add_dup",
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_add_dim0",
        lambda x, i, s: torch.scatter_add(x, 0, i, s),
        lambda: (torch.zeros(5, 3), DUP_INDEX.t(), torch.randn(4, 3)),
    ),
    Case(
        "scatter_add_small_index",
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: (torch.randn(4, 6), DUP_INDEX[:2], torch.randn(3, 5)),
    ),
    Case(
        "scatter_add_ints",
        lambda a, b, i: (a.scatter_add(1, i, a[:, :4] * 3), b.scatter_add(1, i, b[:, 1:] - 1)),
        lambda: (torch.randint(-5, 5, (3, 5)), torch.randint(-5, 5, (3, 5), dtype=torch.int32), DUP_INDEX),
    ),
    Case(
        "scatter_add_half",
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: (torch.randn(3, 5).half(), DUP_INDEX, torch.randn(3, 4).half()),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case(
        "scatter_add_inf",
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: (torch.zeros(3, 5), DUP_INDEX, torch.tensor([[float("inf"), 1.0, 2.0, 3.0]] * 3)),
    ),
    Case(
        "scatter_reduce_sum",
        lambda x, i, s: x.scatter_reduce(1, i, s, "sum"),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_prod_excl",
        lambda x, i, s: x.scatter_reduce(1, i, s, "prod", include_self=False),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_amax",
        lambda x, i, s: x.scatter_reduce(1, i, s, "amax"),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_amin_excl_int",
        lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False),
        lambda: (torch.randint(-9, 9, (3, 5)), DUP_INDEX, torch.randint(-9, 9, (3, 4))),
    ),
    Case(
        "scatter_reduce_mean",
        lambda x, i, s: x.scatter_reduce(1, i, s, "mean"),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_mean_excl",
        lambda x, i, s: x.scatter_reduce(1, i, s, "mean", include_self=False),
        lambda: (torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)),
    ),
    Case(
        "scatter_reduce_mean_int",
        lambda x, i, s: x.scatter_reduce(1, i, s, "mean"),
        lambda: (torch.randint(-9, 9, (3, 5)), DUP_INDEX, torch.randint(-9, 9, (3, 4))),
    ),
    # index_select / take / index_* updates
    Case(
        "index_select",
        lambda x, i: x.index_select(1, i),
        with_index(lambda: torch.randn(3, 5), lambda: torch.tensor([4, 0, 0, 3])),
    ),
    Case(
        "index_select_int32",
        lambda x, i: torch.index_select(x, 0, i),
        lambda: (torch.randint(0, 9, (4, 2), dtype=torch.int32), torch.tensor([3, 2, 0])),
    ),
    Case("index_select_scalar_index", lambda x: x.index_select(0, torch.tensor(2)), f32(4, 3)),
    Case(
        "take",
        lambda x, i: torch.take(x, i),
        with_index(lambda: torch.randn(3, 4), lambda: torch.tensor([[0, -1], [11, 5]])),
    ),
    Case("index_fill", lambda x, i: x.index_fill(1, i, -3.0), lambda: (torch.randn(3, 5), torch.tensor([1, 4, 1, -2]))),
    Case(
        "index_fill_int", lambda x, i: x.index_fill(0, i, 4), lambda: (torch.randint(0, 3, (4, 2)), torch.tensor([2]))
    ),
    Case(
        "index_fill_bool", lambda x, i: (x > 0).index_fill(0, i, 1), lambda: (torch.randn(4, 2), torch.tensor([2, 0]))
    ),
    Case(
        "index_copy",
        lambda x, i, s: x.index_copy(1, i, s),
        lambda: (torch.randn(3, 5), torch.tensor([4, 0, 2]), torch.randn(3, 3)),
    ),
    Case(
        "index_copy_dim0",
        lambda x, i, s: x.index_copy(0, i, s),
        lambda: (torch.randn(5, 2), torch.tensor([4, 0]), torch.randn(2, 2)),
    ),
    Case(
        "index_add_dup",
        lambda x, i, s: x.index_add(1, i, s, alpha=2.0),
        lambda: (torch.randn(3, 5), torch.tensor([1, 4, 1, 1]), torch.randn(3, 4)),
    ),
    Case(
        "index_add_int",
        lambda x, i, s: x.index_add(0, i, s),
        lambda: (torch.randint(-5, 5, (4, 3)), torch.tensor([0, 0, 3]), torch.randint(-5, 5, (3, 3))),
    ),
    # advanced indexing reads
    Case("index_tensor", lambda x, i: x[i], with_index(lambda: torch.randn(4, 5), lambda: torch.tensor([3, -1, 0, 0]))),
    Case(
        "index_tensor_2d",
        lambda x, i: x[i],
        with_index(lambda: torch.randn(4, 5), lambda: torch.tensor([[3, 1], [0, 2]])),
    ),
    Case(
        "index_second_dim",
        lambda x, i: x[:, i],
        with_index(lambda: torch.randn(4, 5, 2), lambda: torch.tensor([4, -2])),
    ),
    Case(
        "index_two_broadcast",
        lambda x, i, j: x[i, j],
        lambda: (torch.randn(4, 5, 3), torch.tensor([[0], [3]]), torch.tensor([1, -1, 2])),
    ),
    Case(
        "index_two_apart",
        lambda x, i, j: x[i, :, j],
        lambda: (torch.randn(4, 5, 3), torch.tensor([0, 3, 3]), torch.tensor([1, -1, 2])),
    ),
    Case(
        "index_middle_pair",
        lambda x, i, j: x[:, i, j],
        lambda: (torch.randn(2, 4, 5, 3), torch.tensor([0, 3]), torch.tensor([4, 1])),
    ),
    Case("index_mask", lambda x: x[x > 0], f32(4, 5)),
    Case("index_mask_rows", lambda x, m: x[m], lambda: (torch.randn(4, 3), torch.tensor([True, False, True, True]))),
    Case(
        "index_mask_middle",
        lambda x, m: x[:, m],
        lambda: (torch.randn(2, 4, 3), torch.tensor([True, False, True, True])),
    ),
    Case(
        "index_mask_and_int",
        lambda x, m, i: x[m, i],
        lambda: (torch.randn(4, 3), torch.tensor([True, False, True, True]), torch.tensor([0, 2, 2])),
    ),
    Case("index_int32_index", lambda x, i: x[i.int()], lambda: (torch.randn(4, 3), torch.tensor([3, -4, 1]))),
    Case(
        "index_int32_data",
        lambda x, i: x[i],
        lambda: (torch.randint(0, 9, (4, 3), dtype=torch.int32), torch.tensor([1, 1])),
    ),
    Case("index_bool_data", lambda x, i: x[:, i], lambda: (torch.rand(3, 4) > 0.5, torch.tensor([3, 0]))),
    Case("index_half_mask", lambda x: x[x > 0], lambda: (torch.randn(3, 4).half(),)),
    # advanced indexing writes
    Case("index_put_scalar", _put((torch.tensor([0, 2, -1]),), 1.0), f32(4, 3)),
    Case(
        "index_put_none_slice",
        lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v),
        lambda: (torch.randn(3, 5), torch.tensor([4, 0]), torch.randn(3, 2)),
    ),
    Case("index_put_two", _put((torch.tensor([0, 3]), torch.tensor([1, 2])), 7.0), f32(4, 3)),
    Case(
        "index_put_apart",
        lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v),
        lambda: (torch.randn(4, 2, 3), torch.tensor([0, 3]), torch.tensor([1, -1]), torch.randn(2, 2)),
    ),
    Case(
        "index_put_apart_accumulate",
        lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v, True),
        lambda: (torch.randn(4, 2, 3), torch.tensor([0, 0]), torch.tensor([1, -2]), torch.randn(2)),
    ),
    Case("index_put_mask", _put_mask, f32(4, 5)),
    Case("index_put_mask_scalar", _put_mask_scalar, f32(4, 5)),
    Case("index_put_mask_rows", _put((torch.tensor([True, False, True]),), 0.5), f32(3, 4)),
    Case("index_put_int", _put((torch.tensor([1, 1]),), 5), ints(3, 2)),
    Case(
        "index_put_accumulate",
        lambda x, v: torch.index_put(x, (torch.tensor([0, 2, 0, 0]),), v, accumulate=True),
        lambda: (torch.randn(3, 2), torch.randn(4, 2)),
    ),
    Case(
        "index_put_accumulate_two",
        lambda x, v: x.index_put((torch.tensor([1, 1, 0]), torch.tensor([2, 2, 0])), v, accumulate=True),
        lambda: (torch.randn(3, 4), torch.randn(3)),
    ),
    Case(
        "index_put_accumulate_int32",
        lambda x: x.index_put((torch.tensor([0, 0, 3]),), torch.tensor(2, dtype=torch.int32), accumulate=True),
        ints(4, dtype=torch.int32),
    ),
    # masks and nonzero
    Case("masked_select", lambda x: torch.masked_select(x, x > 0.2), f32(3, 4)),
    Case(
        "masked_select_broadcast",
        lambda x, m: x.masked_select(m),
        lambda: (torch.randn(3, 4), torch.tensor([True, False, False, True])),
    ),
    Case(
        "masked_select_mask_bigger", lambda x, m: x.masked_select(m), lambda: (torch.randn(4), torch.rand(3, 4) > 0.5)
    ),
    Case("masked_select_int", lambda x: x.masked_select(x > 0), ints(10)),
    Case(
        "masked_select_bool", lambda x, m: (x > 0).masked_select(m), lambda: (torch.randn(3, 4), torch.rand(3, 4) > 0.5)
    ),
    Case(
        "masked_scatter",
        lambda x, m, s: x.masked_scatter(m, s),
        lambda: (torch.randn(3, 4), torch.rand(3, 4) > 0.5, torch.randn(20)),
    ),
    Case(
        "masked_scatter_broadcast",
        lambda x, m, s: x.masked_scatter(m, s),
        lambda: (torch.randn(3, 4), torch.tensor([True, False, True, True]), torch.randn(4, 4)),
    ),
    Case("nonzero", torch.nonzero, lambda: (torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]),)),
    Case(
        "nonzero_bool_half",
        lambda x, y: ((x > 0).nonzero(), torch.nonzero(y)),
        lambda: (torch.randn(3, 4), torch.tensor([0.0, 1.0, 0.0, 3.0]).half()),
    ),
    Case("nonzero_tuple", lambda x: torch.nonzero(x, as_tuple=True), ints(3, 4, low=-1, high=2)),
    Case("one_hot", lambda x: F.one_hot(x, 6), ints(2, 3, low=0, high=6)),
    Case("one_hot_inferred", lambda x: F.one_hot(x), lambda: (torch.tensor([0, 4, 2]),)),
    # sorting
    Case("sort", lambda x: torch.sort(x), lambda: (distinct(3, 5),)),
    Case("sort_desc_dim0", lambda x: torch.sort(x, 0, descending=True), lambda: (distinct(4, 3),)),
    Case(
        "sort_stable_ties",
        lambda x: torch.sort(x, stable=True),
        lambda: (torch.tensor([3.0, 1.0, 3.0, 1.0, 2.0, 1.0]),),
    ),
    Case(
        "sort_stable_ties_desc",
        lambda x: torch.sort(x, descending=True, stable=True),
        lambda: (torch.tensor([3, 1, 3, 1, 2, 1]),),
    ),
    Case(
        "sort_dtypes",
        lambda a, b, c: (a.sort(), b.sort(-1, True), (c > 0).sort(stable=True)),
        lambda: (torch.randperm(12).to(torch.int32).reshape(3, 4), distinct(2, 6).half(), torch.randn(2, 5)),
    ),
    Case(
        "sort_nan",
        lambda x: torch.cat([torch.sort(x)[0], torch.sort(x, descending=True)[0]]),
        lambda: (torch.tensor([[1.0, float("nan"), -0.5, 2.0, float("inf")]]),),
    ),
    # +inf before NaN, -inf, and ties with both ends: the order must not depend on TopK's NaN rank
    Case(
        "sort_inf_nan",
        lambda x: torch.cat([torch.sort(x)[0], torch.sort(x, descending=True)[0], torch.sort(x)[1].float()]),
        lambda: (torch.tensor([[float("inf"), 1.0, float("nan"), float("-inf"), 3.4e38]]),),
    ),
    Case(
        "topk_nan_inf",
        lambda x: torch.cat([torch.topk(x, 2)[0], torch.topk(x, 2, largest=False)[0]]),
        lambda: (torch.tensor([[float("inf"), 1.0, float("nan"), -2.0]]),),
    ),
    Case(
        "topk_nan",
        lambda x: torch.topk(x, 3),
        lambda: (torch.tensor([[1.0, float("nan"), -0.5, 2.0], [0.0, 1.0, float("nan"), 4.0]]),),
    ),
    Case("argsort", lambda x: torch.argsort(x, dim=1, descending=True), lambda: (distinct(3, 5),)),
    Case("argsort_int", lambda x: x.argsort(), lambda: (torch.randperm(7),)),
    Case("topk", lambda x: torch.topk(x, 2), lambda: (distinct(3, 5),)),
    Case("topk_smallest_dim0", lambda x: torch.topk(x, 3, dim=0, largest=False), lambda: (distinct(5, 2),)),
    Case("topk_int", lambda x: x.topk(2), lambda: (torch.randperm(9).reshape(3, 3),)),
    Case("topk_dynamic_k", lambda x: x.topk(x.size(1) // 2), lambda: (distinct(2, 6),)),
    Case(
        "bucketize",
        lambda x, b: torch.bucketize(x, b),
        lambda: (torch.tensor([[-1.0, 0.0, 0.5], [1.0, 3.0, float("nan")]]), torch.tensor([0.0, 1.0, 2.0])),
    ),
    Case(
        "bucketize_right_int32",
        lambda x, b: torch.bucketize(x, b, right=True, out_int32=True),
        lambda: (torch.tensor([-1.0, 0.0, 0.5, 1.0, 3.0, float("nan")]), torch.tensor([0.0, 1.0, 2.0])),
    ),
    Case(
        "bucketize_int_mixed",
        lambda x, y, b: (torch.bucketize(x, b), torch.bucketize(y, b)),
        lambda: (torch.tensor([0, 2, 5, 9]), torch.tensor([0.5, 2.0, 9.0]), torch.tensor([1, 2, 8])),
    ),
    # unique
    Case("unique", lambda x: torch.unique(x), lambda: (torch.tensor([3, 1, 2, 3, 1, -4]),), min_opset=11),
    Case(
        "unique_all",
        lambda x: torch.unique(x, return_inverse=True, return_counts=True),
        lambda: (torch.tensor([[3, 1], [2, 3], [1, 1]]),),
        min_opset=11,
    ),
    Case(
        "unique_unsorted_float",
        lambda x: torch.unique(x, sorted=False, return_inverse=True),
        lambda: (torch.tensor([2.5, -1.0, 2.5, 0.0]),),
        min_opset=11,
    ),
    Case(
        "unique_private",
        lambda x: torch._unique(x, True, True),
        lambda: (torch.tensor([[3, 1], [2, 3]]),),
        min_opset=11,
    ),
    Case(
        "unique_int32",
        lambda x: torch.unique(x, return_counts=True),
        lambda: (torch.tensor([5, 5, -2, 7], dtype=torch.int32),),
        min_opset=11,
    ),
    Case(
        "unique_bool_half",
        lambda x: (torch.unique(x > 0), torch.unique(x.half(), return_counts=True)),
        lambda: (torch.tensor([0.5, -1.0, 0.5, 2.0]),),
        min_opset=11,
    ),
    Case(
        "unique_dim",
        lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
        lambda: (torch.tensor([[2, 1], [1, 0], [2, 1], [1, 3]]),),
        min_opset=11,
    ),
    Case(
        "unique_dim1",
        lambda x: torch.unique(x, dim=1),
        lambda: (torch.tensor([[2.0, 1.0, 2.0], [1.0, 0.0, 1.0]]),),
        min_opset=11,
    ),
    # embedding bags
    Case(
        "embedding_bag_sum",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4, 4])),
    ),
    Case(
        "embedding_bag_mean",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="mean"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 3, 5])),
    ),
    Case(
        "embedding_bag_max",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 2, 7])),
    ),
    Case(
        "embedding_bag_2d",
        lambda w, i: F.embedding_bag(i, w, mode="mean"),
        lambda: (torch.randn(10, 3), torch.tensor([[1, 2, 4], [5, 4, 3]])),
    ),
    Case(
        "embedding_bag_weights",
        lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 1]), torch.randn(4)),
    ),
    Case(
        "embedding_bag_last_offset_padding",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="sum", include_last_offset=True, padding_idx=2),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 2, 3]), torch.tensor([0, 2, 5, 6])),
    ),
    Case(
        "embedding_bag_half",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
        lambda: (torch.randn(10, 3).half(), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 1])),
        atol=1e-3,
    ),
    Case("embedding_renorm", _renorm(1.0, 2.0), lambda: (torch.randn(6, 4), torch.tensor([[0, 2], [2, 5]]))),
    Case("embedding_renorm_p1", _renorm(0.5, 1.0), lambda: (torch.randn(6, 4), torch.tensor([1, 3]))),
    Case(
        "embedding_renorm_p3_half",
        _renorm(0.7, 3.0),
        lambda: (torch.randn(6, 4).half(), torch.tensor([1, 3, 1])),
        atol=1e-3,
        rtol=1e-3,
    ),
    # diagonals, triangles, narrow
    Case("diagonal", lambda x: (torch.diagonal(x), x.diagonal(5)), f32(3, 4)),
    Case("diagonal_offset_dims", lambda x: torch.diagonal(x, 1, 2, 0), f32(3, 2, 4)),
    Case("diagonal_negative_offset", lambda x: x.diagonal(-2, -2, -1), f32(2, 4, 3)),
    Case("tril", torch.tril, f32(4, 5)),
    Case("triu_offset_batch", lambda x: torch.triu(x, 1), f32(2, 4, 3)),
    Case(
        "tril_triu_ints",
        lambda a, b: (a.tril(-1), b.triu()),
        lambda: (torch.randint(-9, 9, (4, 4)), torch.randint(-9, 9, (3, 3), dtype=torch.int32)),
    ),
    Case(
        "tril_bool_triu_half",
        lambda a, b: ((a > 0).tril(), b.triu(-1)),
        lambda: (torch.randn(3, 4), torch.randn(3, 3).half()),
    ),
    Case("narrow", lambda x: (x.narrow(1, 1, 3), torch.narrow(x, 0, -3, 2)), f32(4, 5)),
    Case("narrow_tensor_start", lambda x: x.narrow(1, torch.tensor(2), 2), f32(3, 5)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "gather_dim1",
    "index_select",
    "index_put_mask",
    "narrow",
    "topk",
    "sort",
    "diagonal_offset_dims",
    "embedding_bag_mean",
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


@pytest.mark.parametrize("opset", [9, 11])
def test_unique_before_opset_11_names_opset_11(opset: int) -> None:
    model = Wrap(lambda x: torch.unique(x))
    if opset >= 11:
        assert_matches_torch(model, (torch.tensor([2, 1, 2]),), opset=opset)
        return
    with pytest.raises(UnsupportedOperatorError, match="11"):
        assert_matches_torch(model, (torch.tensor([2, 1, 2]),), opset=opset)


# Data-dependent sizes: the same export must hold for inputs with other mask counts.
DATA_DEPENDENT = [
    Case("mask_read", lambda x: x[x > 0] * 2, f32(4, 5)),
    Case("masked_select_dd", lambda x: x.masked_select(x > 0) + 1, f32(4, 5)),
    Case("nonzero_dd", lambda x: torch.nonzero(x > 0) + 1, f32(4, 5)),
    Case("mask_put", _put_mask, f32(4, 5)),
    Case("masked_scatter_dd", lambda x, s: x.masked_scatter(x > 0, s), lambda: (torch.randn(4, 5), torch.randn(20))),
]


@pytest.mark.parametrize("opset", [9, 11, NEWEST])
@pytest.mark.parametrize("case", DATA_DEPENDENT, ids=[c.name for c in DATA_DEPENDENT])
def test_data_dependent_sizes(case: Case, opset: int) -> None:
    others = [case.inputs() for _ in range(2)]
    assert_matches_torch(Wrap(case.fn), case.inputs(), opset=opset, other_inputs=others)


# Sizes known only at run time (dynamic_axes): the Shape/Range fallbacks.
DYNAMIC = [
    Case("index_select_dyn", lambda x, i: x.index_select(0, i), lambda: (torch.randn(5, 3), torch.tensor([4, 1, 0]))),
    Case(
        "index_two_dyn",
        lambda x, i, j: x[i, j],
        lambda: (torch.randn(5, 3), torch.tensor([4, -1]), torch.tensor([0, 2])),
    ),
    Case("index_put_dyn", _put((torch.tensor([0, -1]),), 3.0), f32(5, 3)),
    Case(
        "scatter_add_dyn",
        lambda x, i, s: x.scatter_add(0, i, s),
        lambda: (torch.randn(5, 3), torch.tensor([[0, 1, 0], [0, 1, 4]]), torch.randn(2, 3)),
    ),
    Case(
        "index_put_accumulate_dyn",
        lambda x, v: x.index_put((torch.tensor([0, 2, 0]),), v, accumulate=True),
        lambda: (torch.randn(5, 3), torch.randn(3)),
    ),
    Case(
        "scatter_reduce_dyn",
        lambda x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False),
        lambda: (torch.randn(5, 3), torch.tensor([[0, 1, 0], [0, 1, 4]]), torch.randn(2, 3)),
    ),
    Case(
        "index_add_dyn",
        lambda x, i, s: x.index_add(0, i, s),
        lambda: (torch.randn(5, 3), torch.tensor([1, 1]), torch.randn(2, 3)),
    ),
    Case("tril_dyn", lambda x: x.tril(1), f32(5, 3)),
    Case("sort_dyn", lambda x: x.sort(0), lambda: (distinct(5, 3),)),
    Case("one_hot_dyn", lambda x: F.one_hot(x, 7), lambda: (torch.tensor([6, 0, 3, 3, 1]),)),
    Case("take_dyn", lambda x, i: x.take(i), lambda: (torch.randn(5, 3), torch.tensor([0, -1, 7]))),
    Case("narrow_dyn", lambda x: x.narrow(0, -2, 2), f32(5, 3)),
    Case("diagonal_dyn", lambda x: x.diagonal(1), f32(5, 3)),
    Case("diagonal_dyn_batch", lambda x: x.diagonal(-1, 1, 2), f32(2, 5, 3)),
    Case("gather_dyn", lambda x, i: x.gather(1, i), lambda: (torch.randn(5, 3), torch.tensor([[2, 0, 0, 1]] * 5))),
    Case(
        "topk_dyn_nan",
        lambda x: x.topk(2, dim=1),
        lambda: (
            torch.tensor(
                [[1.0, float("nan"), 0.5], [2.0, 0.0, float("nan")], [0.0, 1.0, -1.0], [3.0, 2.0, 0.1], [5.0, 6.0, 0.2]]
            ),
        ),
    ),
]
# Ops that need an op from a later opset once sizes are dynamic.
_DYNAMIC_MIN_OPSET = {"sort_dyn": 10, "narrow_dyn": 10, "gather_dyn": 11, "topk_dyn_nan": 11}


@pytest.mark.parametrize("opset", [9, 11, NEWEST])
@pytest.mark.parametrize("case", DYNAMIC, ids=[c.name for c in DYNAMIC])
def test_dynamic_sizes(case: Case, opset: int) -> None:
    if opset < _DYNAMIC_MIN_OPSET.get(case.name, 9):
        pytest.skip("needs a run-time bound input")
    inputs = case.inputs()
    x = inputs[0]
    bigger = (torch.cat([x, x[:1]]),) + inputs[1:]
    assert_matches_torch(
        Wrap(case.fn),
        inputs,
        opset=opset,
        other_inputs=[bigger],
        input_names=[f"in{i}" for i in range(len(inputs))],
        dynamic_axes={"in0": {0: "n"}},
    )


@pytest.mark.parametrize("opset", [9, 12, 16])
def test_scatter_add_sums_many_duplicates(opset: int) -> None:
    """Every update lands on position 0: a scatter that overwrites gives one of them."""
    index = torch.zeros(2, 6, dtype=torch.int64)
    model = Wrap(lambda x, s: x.scatter_add(1, index, s))
    assert_matches_torch(model, (torch.zeros(2, 3), torch.ones(2, 6)), opset=opset)


def test_gather_dynamic_below_11_is_refused() -> None:
    model = Wrap(lambda x, i: torch.gather(x, 1, i))
    with pytest.raises(ExporterError, match="opset 11"):
        assert_matches_torch(
            model,
            (torch.randn(3, 5), DUP_INDEX),
            opset=10,
            input_names=["x", "i"],
            dynamic_axes={"x": {0: "n"}, "i": {0: "n"}},
        )


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_embedding_max_norm_through_detach(opset: int) -> None:
    """F.embedding(max_norm=...) renormalizes weight.detach() in place; the write must reach weight."""
    model = Wrap(lambda w, i: F.embedding(i, w.clone(), max_norm=1.0))
    assert_matches_torch(model, (torch.randn(6, 4) * 3, torch.tensor([[0, 2], [2, 5]])), opset=opset)


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_index_put_through_slice_view(opset: int) -> None:
    def fn(x: torch.Tensor, i: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[:, i] = v
        return y

    assert_matches_torch(Wrap(fn), (torch.randn(3, 5), torch.tensor([4, 0]), torch.randn(3, 2)), opset=opset)


@torch.jit.script
def _scripted_reads_writes(
    x: torch.Tensor, i: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    y = x.clone()
    y[i] = 1.0
    y[y > 0.5] = 0.0
    return y, x[x > 0], x[i, 0], torch.sort(x, 1)[0], torch.topk(x, 2)[1]


@torch.jit.script
def _scripted_selection(
    x: torch.Tensor, i: torch.Tensor
) -> tuple[
    torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
]:
    return (
        x.index_select(0, i[0]),
        torch.take(x, i),
        x.narrow(1, 1, 2),
        torch.nn.functional.one_hot(i, 5),
        x.masked_select(x > 0),
        x.nonzero(),
        x.scatter_add(1, i, torch.ones_like(x)),
        x.gather(1, i),
    )


@pytest.mark.parametrize("opset", [9, 11, NEWEST])
def test_scripted(opset: int) -> None:
    x, i = torch.randn(4, 5), torch.tensor([[0, 1, 1, 3, 2]] * 4)
    assert_matches_torch(_scripted_reads_writes, (x, i[:, 0]), opset=opset)
    assert_matches_torch(_scripted_selection, (x, i), opset=opset)


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_embedding_bag_module(opset: int) -> None:
    """nn.EmbeddingBag: the weight is an initializer; per-sample weights and offsets are inputs."""
    model = torch.nn.EmbeddingBag(12, 4, mode="sum").eval()
    inputs = (torch.tensor([1, 5, 5, 11, 0, 3]), torch.tensor([0, 2, 2, 5]), torch.rand(6))
    others = [(torch.tensor([2, 2, 7]), torch.tensor([0, 1, 3]), torch.rand(3))]
    assert_matches_torch(
        model,
        inputs,
        opset=opset,
        other_inputs=others,
        input_names=["i", "o", "w"],
        dynamic_axes={"i": [0], "o": [0], "w": [0]},
    )
