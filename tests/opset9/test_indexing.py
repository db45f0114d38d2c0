"""The op table for indexing: slice, select, advanced indexing, index_put, masks, nonzero, narrow (exporter.opset9.indexing).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import Case, f32, helper_params, ints, lowering_opsets, op_params, run_case, with_index
from conftest import Wrap, assert_matches_torch


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


CASES = [
    # indexing
    Case("slice", lambda a: a[:, 1:3], f32(4, 5)),
    Case("slice_negative", lambda a: a[..., -2:], f32(4, 5)),
    Case("slice_step", lambda a: a[::2], f32(6, 2), min_opset=10),
    Case("select", lambda a: a[1], f32(4, 5)),
    Case("select_negative", lambda a: a[:, -1], f32(4, 5)),
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
    Case("narrow", lambda x: (x.narrow(1, 1, 3), torch.narrow(x, 0, -3, 2)), f32(4, 5)),
    Case("narrow_tensor_start", lambda x: x.narrow(1, torch.tensor(2), 2), f32(3, 5)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["slice", "slice_step", "select_negative", "index_put_mask", "narrow"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


# Data-dependent sizes: the same export must hold for inputs with other mask counts.
DATA_DEPENDENT = [
    Case("mask_read", lambda x: x[x > 0] * 2, f32(4, 5)),
    Case("masked_select_dd", lambda x: x.masked_select(x > 0) + 1, f32(4, 5)),
    Case("nonzero_dd", lambda x: torch.nonzero(x > 0) + 1, f32(4, 5)),
    Case("mask_put", _put_mask, f32(4, 5)),
    Case("masked_scatter_dd", lambda x, s: x.masked_scatter(x > 0, s), lambda: (torch.randn(4, 5), torch.randn(20))),
]


@pytest.mark.parametrize("opset", lowering_opsets("aten::index", "aten::slice", "aten::select", helpers=True))
@pytest.mark.parametrize("case", DATA_DEPENDENT, ids=[c.name for c in DATA_DEPENDENT])
def test_data_dependent_sizes(case: Case, opset: int) -> None:
    others = [case.inputs() for _ in range(2)]
    assert_matches_torch(Wrap(case.fn), case.inputs(), opset=opset, other_inputs=others)


DYNAMIC = [
    Case(
        "index_two_dyn",
        lambda x, i, j: x[i, j],
        lambda: (torch.randn(5, 3), torch.tensor([4, -1]), torch.tensor([0, 2])),
    ),
    Case("index_put_dyn", _put((torch.tensor([0, -1]),), 3.0), f32(5, 3)),
    Case(
        "index_put_accumulate_dyn",
        lambda x, v: x.index_put((torch.tensor([0, 2, 0]),), v, accumulate=True),
        lambda: (torch.randn(5, 3), torch.randn(3)),
    ),
    Case("one_hot_dyn", lambda x: F.one_hot(x, 7), lambda: (torch.tensor([6, 0, 3, 3, 1]),)),
    Case("narrow_dyn", lambda x: x.narrow(0, -2, 2), f32(5, 3)),
]


# Ops that need an op from a later opset once sizes are dynamic.
_DYNAMIC_MIN_OPSET = {"narrow_dyn": 10}


@pytest.mark.parametrize("opset", lowering_opsets("aten::index", "aten::slice", "aten::select", helpers=True))
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


@pytest.mark.parametrize("opset", lowering_opsets("aten::index_put"))
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


@pytest.mark.parametrize("opset", lowering_opsets("aten::__getitem__", "aten::slice", "aten::select"))
def test_scripted(opset: int) -> None:
    x, i = torch.randn(4, 5), torch.tensor([[0, 1, 1, 3, 2]] * 4)
    assert_matches_torch(_scripted_reads_writes, (x, i[:, 0]), opset=opset)
    assert_matches_torch(_scripted_selection, (x, i), opset=opset)
