"""The one flattening of nested tuples and fixed-length lists (exporter.control_flow.flatten),
shared by the subgraph emission and the engine: flatten, then regroup, gives back the
structure TorchScript types describe."""

from __future__ import annotations

import pytest
import torch

from exporter.control_flow.flatten import flatten, regroup

T = torch._C
INT, FLOAT, TENSOR = T.IntType.get(), T.FloatType.get(), T.TensorType.get()
PAIR = T.TupleType([TENSOR, INT])
NESTED = T.TupleType([PAIR, FLOAT])
INTS = T.ListType(INT)


def test_tuples_spread_one_item_each_with_their_types() -> None:
    flat, types = flatten([("a", 1), "b"], [PAIR, TENSOR])
    assert flat == ["a", 1, "b"]
    assert types == [TENSOR, INT, TENSOR]


def test_nested_tuples_spread_to_their_leaves() -> None:
    flat, types = flatten([(("a", 1), 2.0)], [NESTED])
    assert flat == ["a", 1, 2.0]
    assert types == [TENSOR, INT, FLOAT]


def test_an_uninitialized_tuple_is_one_none_per_item() -> None:
    flat, types = flatten([None], [NESTED])
    assert flat == [None, None, None]
    assert types == [TENSOR, INT, FLOAT]


def test_lists_spread_only_when_asked() -> None:
    assert flatten([[1, 2, 3]], [INTS]) == ([[1, 2, 3]], [INTS])
    assert flatten([[1, 2, 3]], [INTS], spread_lists=True) == ([1, 2, 3], [INT, INT, INT])


@pytest.mark.parametrize(
    ("objs", "ts_types", "spread_lists"),
    [
        ([("a", 1), "b"], [PAIR, TENSOR], False),
        ([(("a", 1), 2.0), [4, 5]], [NESTED, INTS], True),
        ([[], "x"], [INTS, TENSOR], True),
        ([[7, 8]], [INTS], False),
    ],
)
def test_regroup_undoes_flatten(objs: list[object], ts_types: list[torch._C.JitType], spread_lists: bool) -> None:
    flat, _ = flatten(objs, ts_types, spread_lists=spread_lists)
    like = objs if spread_lists else ()
    assert regroup(flat, ts_types, like) == objs


def test_regroup_of_too_many_values_is_an_error() -> None:
    with pytest.raises(ValueError, match="left over"):
        regroup(["a", 1, "b"], [PAIR])
