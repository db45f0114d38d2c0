"""``list(a)``, ``a.copy()`` and ``a[:]`` make a new list in TorchScript: a write through the
copy leaves the original as it was, and a write to the original leaves the copy. Before, the
copy of a list held as one run-time value (a shape with dynamic axes) was that same value, so
item assignment on the copy rebound the original too: a wrong model, no error. Plain
assignment and a list passed to a scripted function still alias.

Each copy form meets each mutation, on the copy and on the original, for lists fixed at
export (Python lists of values), shape lists (one 1-d value) and lists of tensors built in a
run-time loop (ONNX sequences carried by a Loop, from opset 13); compared with eager torch on
inputs of other sizes at the lowest opset taking the list form, the default and the newest.
The int and tensor helpers repeat each other: TorchScript functions take one list type.
"""

from __future__ import annotations

import pytest
import torch
from conftest import (
    BASE_OPSETS,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    NEWEST,
    assert_matches_torch,
    dynamic_inputs,
    export_to_bytes,
)
from torch import Tensor

from exporter.errors import SymbolicError

ROWS = dynamic_inputs(x={0: "n", 1: "m"})
SHAPES = [(torch.rand(3, 4),), (torch.rand(2, 5),), (torch.rand(6, 1),)]
COPY_FORMS = {"list": 0, "copy": 1, "slice": 2}
ALIAS = 3  # ``b = a``: no copy


def copied_ints(a: list[int], form: int) -> list[int]:
    if form == 0:
        return list(a)
    if form == 1:
        return a.copy()
    if form == 2:
        return a[:]
    return a  # ALIAS: the same list


def copied_tensors(a: list[Tensor], form: int) -> list[Tensor]:
    if form == 0:
        return list(a)
    if form == 1:
        return a.copy()
    if form == 2:
        return a[:]
    return a  # ALIAS: the same list


def mutate_ints(items: list[int], kind: str, value: int) -> None:
    if kind == "set_item":
        items[0] = value
    elif kind == "append":
        items.append(value)
    elif kind == "insert":
        items.insert(1, value)
    elif kind == "pop":
        items.pop()
    elif kind == "delete":
        del items[0]
    elif kind == "extend":
        items.extend([value, value + 1])
    elif kind == "clear":
        items.clear()
    elif kind == "reverse":
        items.reverse()
    elif kind == "sort":
        items.sort()


def mutate_tensors(items: list[Tensor], kind: str, value: Tensor) -> None:
    if kind == "set_item":
        items[0] = value
    elif kind == "append":
        items.append(value)
    elif kind == "insert":
        items.insert(1, value)
    elif kind == "pop":
        items.pop()
    elif kind == "delete":
        del items[0]
    elif kind == "extend":
        items.extend([value, value + 1])
    elif kind == "clear":
        items.clear()
    elif kind == "reverse":
        items.reverse()


def ints_of(items: list[int]) -> Tensor:
    """The list's length and items as one tensor (``torch.tensor`` of an empty list is float)."""
    return torch.tensor([len(items)] + items)


def total_of(items: list[Tensor]) -> Tensor:
    """The list's length and its items in order (a weighted sum tells the order apart)."""
    total = torch.zeros(1)
    for i, item in enumerate(items):
        total = total + (i + 1) * item.sum()
    return torch.cat([total, torch.tensor([len(items)], dtype=torch.float)])


class CopyThenMutate(torch.nn.Module):
    """``kind`` applied to the copy (``on_copy``) or to the original; both are returned."""

    __constants__ = ["list_kind", "form", "kind", "on_copy"]

    def __init__(self, list_kind: str, form: int, kind: str, on_copy: bool) -> None:
        super().__init__()
        self.list_kind = list_kind
        self.form = form
        self.kind = kind
        self.on_copy = on_copy

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        if self.list_kind == "shape":
            a = list(x.shape)
        else:
            a = [x.size(1), x.size(0), 3]
        b = copied_ints(a, self.form)
        mutate_ints(b if self.on_copy else a, self.kind, x.size(0) + 5)
        return ints_of(a), ints_of(b)


class CopyTensorsThenMutate(torch.nn.Module):
    """Lists of tensors: fixed at export (``run_time`` False) or built in a run-time loop (a
    sequence)."""

    __constants__ = ["run_time", "form", "kind", "on_copy"]

    def __init__(self, run_time: bool, form: int, kind: str, on_copy: bool) -> None:
        super().__init__()
        self.run_time = run_time
        self.form = form
        self.kind = kind
        self.on_copy = on_copy

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        a: list[Tensor] = [x[0] * 2, x[0] + 1]
        if self.run_time:
            for i in range(x.size(0)):
                a.append(x[i])
        b = copied_tensors(a, self.form)
        mutate_tensors(b if self.on_copy else a, self.kind, x[-1] * 3)
        return total_of(a), total_of(b)


INT_MUTATIONS = ("set_item", "append", "insert", "pop", "delete", "extend", "clear", "reverse", "sort")
TENSOR_MUTATIONS = ("set_item", "append", "insert", "pop", "delete", "extend", "clear", "reverse")
# a list held as one run-time value (a shape) is changed only by these; the others are refused
SHAPE_MUTATIONS = ("set_item", "extend", "pop")
SIDES = {"copy": True, "original": False}


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("kind", INT_MUTATIONS)
@pytest.mark.parametrize("form", COPY_FORMS)
def test_a_copy_of_an_export_time_int_list_is_a_new_list(form: str, kind: str, side: str, opset: int) -> None:
    model = torch.jit.script(CopyThenMutate("items", COPY_FORMS[form], kind, SIDES[side]))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("kind", SHAPE_MUTATIONS)
@pytest.mark.parametrize("form", COPY_FORMS)
def test_a_copy_of_a_shape_list_is_a_new_list(form: str, kind: str, side: str, opset: int) -> None:
    model = torch.jit.script(CopyThenMutate("shape", COPY_FORMS[form], kind, SIDES[side]))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)


@pytest.mark.parametrize("kind", sorted(set(INT_MUTATIONS) - set(SHAPE_MUTATIONS)))
def test_other_mutations_of_a_shape_list_are_refused(kind: str) -> None:
    """Not a copy matter: a list held as one value changes only by item assignment, extend or pop."""
    model = torch.jit.script(CopyThenMutate("shape", COPY_FORMS["list"], kind, True))
    with pytest.raises(SymbolicError, match="Value is not supported"):
        export_to_bytes(model, SHAPES[0], opset_version=NEWEST, **ROWS)


def test_a_shape_list_copy_keeps_its_static_dims() -> None:
    """The copy of ``x.shape`` is a second Shape of ``x``: a static dim read from it stays a
    Python int (no Gather), as from the original."""

    def first_dim_of_copy(x: Tensor) -> Tensor:
        sizes = list(x.shape)
        return torch.arange(list(sizes)[0])

    model = assert_matches_torch(
        torch.jit.script(first_dim_of_copy),
        (torch.rand(4, 3),),
        opset=NEWEST,
        other_inputs=[(torch.rand(4, 7),)],
        **dynamic_inputs(x={1: "m"}),
    )
    assert not [node for node in model.graph if node.op_type == "Gather"]


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("kind", TENSOR_MUTATIONS)
@pytest.mark.parametrize("form", COPY_FORMS)
def test_a_copy_of_an_export_time_tensor_list_is_a_new_list(form: str, kind: str, side: str, opset: int) -> None:
    model = torch.jit.script(CopyTensorsThenMutate(False, COPY_FORMS[form], kind, SIDES[side]))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("kind", TENSOR_MUTATIONS)
@pytest.mark.parametrize("form", COPY_FORMS)
def test_a_copy_of_a_sequence_is_a_new_list(form: str, kind: str, side: str, opset: int) -> None:
    model = torch.jit.script(CopyTensorsThenMutate(True, COPY_FORMS[form], kind, SIDES[side]))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize(
    ("list_kind", "kind"),
    [("items", kind) for kind in INT_MUTATIONS] + [("shape", kind) for kind in SHAPE_MUTATIONS],
)
def test_an_int_list_assigned_to_another_name_is_the_same_list(list_kind: str, kind: str, opset: int) -> None:
    model = torch.jit.script(CopyThenMutate(list_kind, ALIAS, kind, True))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
@pytest.mark.parametrize("kind", TENSOR_MUTATIONS)
def test_a_sequence_assigned_to_another_name_is_the_same_list(kind: str, opset: int) -> None:
    model = torch.jit.script(CopyTensorsThenMutate(True, ALIAS, kind, True))
    assert_matches_torch(model, SHAPES[0], opset=opset, other_inputs=SHAPES[1:], **ROWS)
