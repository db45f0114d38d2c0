"""The op table for sorting and selection: sort, topk, argsort, bucketize, unique (exporter.opset9.sorting).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
from cases import (
    Case,
    distinct,
    f32,
    helper_params,
    lowering_opsets,
    lowering_opsets_below,
    op_params,
    run_case,
    traced_and_scripted,
)
from conftest import SEQUENCE_OPSETS, Wrap, assert_matches_torch, dynamic_inputs

import exporter
from exporter.errors import SymbolicError, UnsupportedOperatorError

NAN, INF = float("nan"), float("inf")
# ties, infinities, NaN among numbers and next to +inf. An all-NaN row of more than 3 elements
# is left out: torch's nanmedian index there is what its selection leaves (sorting.median_with)
MEDIAN_ROWS = torch.tensor(
    [
        [3.0, 1.0, 2.0, 2.0, 0.5],
        [1.0, NAN, 0.0, NAN, 4.0],
        [INF, -INF, 5.0, 5.0, INF],
        [NAN, INF, 1.0, INF, NAN],
        [2.0, 1.0, 2.0, 1.0, -INF],
    ]
)
Pair = tuple[torch.Tensor, torch.Tensor]
Triple = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def _kthvalue(x: torch.Tensor) -> tuple[Pair, Pair, Pair]:
    return torch.kthvalue(x, 2), torch.kthvalue(x, 3, 0, True), x.kthvalue(1, dim=-2)


def _kthvalue_ties(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Among equal values torch's index is its quickselect's choice: compare the values only."""
    return torch.kthvalue(x, 4, 1)[0], torch.kthvalue(x, 1, 0, keepdim=True)[0]


def _kthvalue_nan_inf(x: torch.Tensor) -> tuple[Pair, Pair, Pair]:
    return torch.kthvalue(x, 3, 1), torch.kthvalue(x, 5, 1), torch.kthvalue(x, 4, 1)


def _kthvalue_dtypes(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple[Pair, Pair, Pair]:
    return a.kthvalue(2), b.kthvalue(3, 0), c.kthvalue(2, keepdim=True)


def _kthvalue_0d(x: torch.Tensor) -> tuple[Pair, Pair]:
    return x.kthvalue(1), x.kthvalue(1, 0, True)


def _kthvalue_of_size(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """k from the input's size: a run-time k under dynamic axes."""
    return torch.kthvalue(x, x.size(1) // 2 + 1, 1)


def _msort(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.msort(a), b.msort()


def _unique_consecutive(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.unique_consecutive(x, return_inverse=True, return_counts=True)


def _unique_consecutive_values(x: torch.Tensor) -> torch.Tensor:
    return torch.unique_consecutive(x)


def _unique_consecutive_counts(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.unique_consecutive(x, return_counts=True)


def _unique_consecutive_dims(x: torch.Tensor) -> tuple[Triple, Triple]:
    return (
        torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=0),
        torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=-1),
    )


def _unique_consecutive_inverse(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.unique_consecutive(x, return_inverse=True)


KTH_ROWS = torch.tensor(
    [
        [3.0, NAN, 1.0, INF, NAN],
        [NAN, -INF, 2.0, 0.5, INF],
        [1.0, 2.0, -1.0, 0.0, 3.0],
    ]
)
RUNS = torch.tensor([[1.0, 1.0, NAN, NAN, 2.0], [2.0, INF, INF, -INF, 1.0]])


def _kth_distinct() -> tuple[torch.Tensor, ...]:
    return (distinct(5, 4),)


CASES = [
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
    # median: the lower middle value, the index of the stable order's choice among ties
    Case("median_all", lambda x: torch.median(x), f32(4, 5)),
    Case(
        "median_dim_ties",
        lambda x: (torch.median(x, 1), torch.median(x, 0, keepdim=True), x.median(-1, True)),
        lambda: (torch.randint(0, 3, (5, 8)).float(),),
    ),
    Case(
        "median_nan_inf",
        lambda x: (torch.median(x, 1), torch.median(x)),
        lambda: (MEDIAN_ROWS,),
    ),
    Case(
        "median_int",
        lambda a, b: (a.median(1), b.median(0), a.median()),
        lambda: (torch.randint(-3, 3, (4, 7)), torch.randint(-3, 3, (6, 2), dtype=torch.int32)),
    ),
    Case("median_half", lambda x: (x.median(1), x.median()), lambda: (torch.randint(0, 4, (3, 6)).half(),)),
    Case("median_0d", lambda x: (x.median(), x.median(0)), lambda: (torch.tensor(2.5),)),
    Case(
        "nanmedian",
        lambda x: (torch.nanmedian(x, 1), torch.nanmedian(x), x.nanmedian(0, keepdim=True)),
        lambda: (MEDIAN_ROWS,),
    ),
    Case("nanmedian_int", lambda x: (x.nanmedian(), x.nanmedian(1)), lambda: (torch.randint(-3, 3, (3, 4)),)),
    Case("nanmedian_all_nan", lambda x: (x.nanmedian(1), x.nanmedian()), lambda: (torch.full((2, 3), NAN),)),
    Case(
        "median_dynamic",
        lambda x: (x.median(1), x.nanmedian(0), x.median()),
        lambda: (MEDIAN_ROWS,),
        min_opset=10,
        dynamic={"x0": {0: "rows", 1: "n"}},
        others=lambda: [(torch.randint(0, 3, (3, 6)).float(),), (torch.tensor([[float("nan"), 1.0]]),)],
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
    # kthvalue, msort
    *traced_and_scripted("kthvalue", _kthvalue, _kth_distinct),
    *traced_and_scripted("kthvalue_ties", _kthvalue_ties, lambda: (torch.randint(0, 3, (4, 7)).float(),)),
    *traced_and_scripted("kthvalue_nan_inf", _kthvalue_nan_inf, lambda: (KTH_ROWS,)),
    *traced_and_scripted(
        "kthvalue_dtypes",
        _kthvalue_dtypes,
        lambda: (
            torch.randperm(12).reshape(3, 4),
            torch.randperm(15).to(torch.int32).reshape(5, 3),
            distinct(2, 5).half(),
        ),
    ),
    *traced_and_scripted("kthvalue_0d", _kthvalue_0d, lambda: (torch.tensor(1.5),)),
    Case("kthvalue_empty_rows", lambda x: torch.kthvalue(x, 2, 1), lambda: (torch.zeros(0, 3),)),
    *traced_and_scripted(
        "kthvalue_dynamic",
        _kthvalue_of_size,
        _kth_distinct,
        min_opset=10,
        dynamic={"x0": {0: "rows", 1: "n"}},
        others=lambda: [(distinct(2, 7),), (KTH_ROWS,)],
    ),
    *traced_and_scripted(
        "msort",
        _msort,
        lambda: (torch.tensor([[2.0, NAN], [INF, 1.0], [-1.0, -INF]]), torch.randint(-5, 5, (6,), dtype=torch.int32)),
    ),
    Case("msort_0d_half", lambda x: (x.msort(), x.half().msort()), lambda: (torch.tensor(0.5),)),
    *traced_and_scripted(
        "msort_dynamic",
        _msort,
        lambda: (distinct(4, 3), torch.randperm(5)),
        min_opset=10,
        dynamic={"x0": {0: "n"}, "x1": {0: "m"}},
        others=lambda: [(distinct(2, 3), torch.randperm(9))],
    ),
    # unique_consecutive: NaN starts a run of its own, as in torch
    *traced_and_scripted("unique_consecutive", _unique_consecutive, lambda: (RUNS,)),
    *traced_and_scripted(
        "unique_consecutive_values", _unique_consecutive_values, lambda: (torch.tensor([3, 3, 1, 1, 1, 3, 2]),)
    ),
    *traced_and_scripted(
        "unique_consecutive_counts", _unique_consecutive_counts, lambda: (torch.tensor([True, True, False, True]),)
    ),
    *traced_and_scripted(
        "unique_consecutive_dims",
        _unique_consecutive_dims,
        lambda: (torch.tensor([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 2, 2]], dtype=torch.int32),),
    ),
    Case(
        "unique_consecutive_nan_rows",
        lambda x: torch.unique_consecutive(x.half(), return_counts=True, dim=0),
        lambda: (torch.tensor([[1.0, NAN], [1.0, NAN], [2.0, 2.0], [2.0, 2.0]]),),
    ),
    Case("unique_consecutive_0d", lambda x: _unique_consecutive(x), lambda: (torch.tensor(4),)),
    Case("unique_consecutive_empty", lambda x: _unique_consecutive(x), lambda: (torch.zeros(0, 3),)),
    *traced_and_scripted(
        "unique_consecutive_dynamic",
        _unique_consecutive_inverse,
        lambda: (torch.tensor([[1, 1, 2], [2, 2, 2]]),),
        dynamic={"x0": {0: "rows", 1: "n"}},
        others=lambda: [(torch.tensor([[5, 4, 4, 4, 4, 1, 1]]),), (torch.zeros(0, 2, dtype=torch.int64),)],
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["topk", "sort", "unique_consecutive", "unique_consecutive_dims", "unique_consecutive_dynamic"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_unique2", before_changes=True))
def test_unique_before_opset_11_names_opset_11(opset: int) -> None:
    model = Wrap(lambda x: torch.unique(x))
    if opset >= 11:
        assert_matches_torch(model, (torch.tensor([2, 1, 2]),), opset=opset)
        return
    with pytest.raises(UnsupportedOperatorError, match="11"):
        assert_matches_torch(model, (torch.tensor([2, 1, 2]),), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::median"))
def test_median_of_a_dynamic_dim_names_opset_10(opset: int) -> None:
    """TopK takes k as an attribute at opset 9: the sort under median needs the dim's size."""
    with pytest.raises(SymbolicError, match="needs opset 10"):
        assert_matches_torch(Wrap(lambda x: x.median(1)), (MEDIAN_ROWS,), opset=opset, **dynamic_inputs(x={1: "n"}))


DYNAMIC = [
    Case("sort_dyn", lambda x: x.sort(0), lambda: (distinct(5, 3),)),
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
_DYNAMIC_MIN_OPSET = {"sort_dyn": 10, "topk_dyn_nan": 11}


@pytest.mark.parametrize("opset", lowering_opsets("aten::sort", "aten::topk"))
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


class SearchRows(torch.nn.Module):
    def forward(self, rows: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ordered, order = rows.sort(-1)
        return (
            torch.searchsorted(ordered, values),
            torch.searchsorted(ordered, values, right=True, out_int32=True),
            torch.searchsorted(rows, values, side="right", sorter=order),
        )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_searchsorted_rows(opset: int) -> None:
    model = torch.jit.script(SearchRows())
    dynamic = {
        "input_names": ["rows", "values"],
        "dynamic_axes": {"rows": {0: "b", 1: "n"}, "values": {0: "b", 1: "m"}},
    }
    ties = torch.tensor([[1.0, 2.0, 2.0, 3.0]])
    others = [(ties, torch.tensor([[2.0, 0.0, 9.0]])), (torch.randn(3, 6), torch.randn(3, 2))]
    assert_matches_torch(model, (torch.randn(2, 5), torch.randn(2, 4)), opset=opset, other_inputs=others, **dynamic)


class TopKRunTimeK(torch.nn.Module):
    def forward(self, x: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.topk(x, k)


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("opset", lowering_opsets("aten::topk", before_changes=True))
def test_topk_with_run_time_k(opset: int, scripted: bool) -> None:
    """TopK takes k as an input from opset 10, so a k known only at run time (a tensor argument)
    exports there; the values then come from TopK itself (the read-back by index needs static
    indices before opset 11). Before 10 the export names opset 10."""
    model = torch.jit.script(TopKRunTimeK()) if scripted else TopKRunTimeK()
    x = torch.tensor([[1.0, 5.0, -2.0, 4.0, 0.5], [3.0, -1.0, 2.0, 7.0, 6.0]])
    k = torch.tensor(3, dtype=torch.int32)
    if opset < 10:
        with pytest.raises(exporter.ExporterError, match="opset 10"):
            assert_matches_torch(model, (x, k), opset=opset)
        return
    assert_matches_torch(model, (x, k), opset=opset, other_inputs=[(x, torch.tensor(1, dtype=torch.int32))])


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::kthvalue"))
def test_kthvalue_and_msort_of_a_dynamic_dim_name_opset_10(opset: int) -> None:
    """TopK takes k as an attribute at opset 9: the sort under kthvalue and msort needs the size."""
    for fn in (lambda x: x.kthvalue(2, 1), lambda x: x.msort()):
        with pytest.raises(SymbolicError, match="needs opset 10"):
            assert_matches_torch(Wrap(fn), (distinct(3, 4),), opset=opset, **dynamic_inputs(x={0: "m", 1: "n"}))
