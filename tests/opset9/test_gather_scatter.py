"""The op table for gather, scatter, index_select/add/fill/copy and take (exporter.opset9.gather_scatter).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
from cases import (
    Case,
    case_opsets,
    f32,
    helper_params,
    lowering_opsets,
    lowering_opsets_below,
    op_params,
    run_case,
    signature_opsets,
    with_index,
)
from conftest import Wrap, assert_matches_torch

from exporter.errors import ExporterError

# index along dim 1 of a [3, 5] tensor with repeats: rows pick with duplicates
DUP_INDEX = torch.tensor([[0, 1, 1, 4], [2, 2, 2, 0], [4, 3, 4, 3]])


SCATTER_INDEX = torch.tensor([[0, 3, 1], [4, 2, 0], [1, 0, 3]])  # a permutation prefix per row


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
    Case(
        "take_along_dim",
        lambda a, i, j: (
            torch.take_along_dim(a, i, 1),
            torch.take_along_dim(a, j),
            torch.take_along_dim(a, a.argsort(1), -1),
        ),
        lambda: (torch.randn(3, 4), torch.randint(0, 4, (3, 6)), torch.randint(0, 12, (2, 5))),
    ),
    Case(
        "take_along_dim_broadcast",
        lambda a, i: (torch.take_along_dim(a, i, 1), torch.take_along_dim(a.transpose(0, 2), i.transpose(0, 2), 1)),
        lambda: (torch.arange(24).reshape(2, 3, 4), torch.randint(0, 3, (1, 5, 1))),
    ),
    Case(
        "take_along_dim_sorted",
        lambda a: torch.take_along_dim(a, a.argsort(dim=0, descending=True), 0),
        f32(5, 3),
    ),
    Case(
        "take_along_dim_dynamic",
        lambda a, i: (torch.take_along_dim(a, i, 1), torch.take_along_dim(a, i)),
        lambda: (torch.randn(3, 4), torch.randint(0, 4, (1, 2))),
        min_opset=11,
        dynamic={"x0": {0: "b", 1: "n"}, "x1": {1: "k"}},
        others=lambda: [(torch.randn(2, 6), torch.randint(0, 6, (1, 7)))],
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["gather_dim1", "index_select"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


DYNAMIC = [
    Case("index_select_dyn", lambda x, i: x.index_select(0, i), lambda: (torch.randn(5, 3), torch.tensor([4, 1, 0]))),
    Case(
        "scatter_add_dyn",
        lambda x, i, s: x.scatter_add(0, i, s),
        lambda: (torch.randn(5, 3), torch.tensor([[0, 1, 0], [0, 1, 4]]), torch.randn(2, 3)),
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
    Case("take_dyn", lambda x, i: x.take(i), lambda: (torch.randn(5, 3), torch.tensor([0, -1, 7]))),
    Case("gather_dyn", lambda x, i: x.gather(1, i), lambda: (torch.randn(5, 3), torch.tensor([[2, 0, 0, 1]] * 5))),
]


# Ops that need an op from a later opset once sizes are dynamic.
_DYNAMIC_MIN_OPSET = {"gather_dyn": 11}


@pytest.mark.parametrize(
    ("case", "opset"),
    # where the case's ops change (the registry), and where Pad takes run-time pads (11, 13)
    [
        pytest.param(c, opset, id=f"{c.name}-{opset}")
        for c in DYNAMIC
        for opset in sorted({*case_opsets(c), *signature_opsets("pad_run_time")})
    ],
)
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


@pytest.mark.parametrize("opset", lowering_opsets("aten::scatter_add", before_changes=True))
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


@pytest.mark.parametrize("opset", lowering_opsets("aten::index_add", helpers=True))
def test_index_add_with_every_size_dynamic(opset: int) -> None:
    """torch requires index_add's source to match self on every dim but ``dim``, so the one-hot
    lowering (below 16) needs no static sizes to know the index covers them."""
    model = Wrap(lambda x, i, s: torch.index_add(x, 1, i, s, alpha=2))
    args = (torch.ones(5, 4, 3), torch.tensor([0, 3, 3]), torch.randn(5, 3, 3))
    assert_matches_torch(
        model,
        args,
        opset=opset,
        other_inputs=[(torch.ones(2, 6, 1), torch.tensor([5, 0]), torch.randn(2, 2, 1))],
        input_names=["x", "i", "s"],
        dynamic_axes={"x": [0, 1, 2], "i": [0], "s": [0, 1, 2]},
    )


# from Pad-11 (run-time pads), and before and at each opset where scatter_reduce changes
@pytest.mark.parametrize(
    "opset",
    sorted(
        {
            *lowering_opsets("aten::scatter_reduce", before_changes=True, min_opset=11),
            *signature_opsets("pad_run_time"),
        }
    ),
)
@pytest.mark.parametrize("reduce", ["sum", "amax"])
def test_reducing_scatter_with_an_index_smaller_on_a_run_time_dim(opset: int, reduce: str) -> None:
    """Below ScatterElements' own reduction (16; 18 for amax), the one-hot lowering pads an
    index narrower than self on another dim with -1 (matching no position) up to self's
    run-time size: Pad-11 takes run-time pads."""
    model = Wrap(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=False))
    index = torch.tensor([[0, 1, 0], [0, 1, 4]])
    assert_matches_torch(
        model,
        (torch.randn(5, 4), index, torch.randn(2, 3)),
        opset=opset,
        other_inputs=[(torch.randn(6, 7), index, torch.randn(2, 3))],
        input_names=["x", "i", "s"],
        dynamic_axes={"x": {0: "n", 1: "m"}},
    )


def test_reducing_scatter_with_a_run_time_index_size_below_11_is_refused() -> None:
    model = Wrap(lambda x, i, s: x.scatter_reduce(0, i, s, "amax"))
    args = (torch.randn(5, 4), torch.tensor([[0, 1, 0], [0, 1, 4]]), torch.randn(2, 3))
    with pytest.raises(ExporterError, match=r"aten::scatter_reduce.*static sizes below opset 11"):
        assert_matches_torch(model, args, opset=10, input_names=["x"], dynamic_axes={"x": {1: "m"}})


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::take_along_dim"))
def test_take_along_dim_on_run_time_sizes_below_11_names_opset_11(opset: int) -> None:
    """Below GatherElements, the gather folds the sizes into constant positions."""
    model = Wrap(lambda a, i: torch.take_along_dim(a, i, 1))
    args = (torch.randn(3, 4), torch.randint(0, 4, (3, 2)))
    with pytest.raises(ExporterError, match=r"aten::take_along_dim.*needs opset 11"):
        assert_matches_torch(model, args, opset=opset, input_names=["a"], dynamic_axes={"a": {0: "b"}})
