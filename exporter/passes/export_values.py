"""What the specialization pass knows about one TorchScript value at export time.

A value is either fully known (:class:`Known`: a number, string, None, device, dtype, or a
container or TorchScript object of such values), a tensor whose dtype, device, layout, rank and
some sizes are known (:class:`TensorFacts`), a list or tuple of known length whose items are
known in part (:class:`Items`), an ``Optional`` whose None-ness is decided at run time
(:class:`MaybeNone`), a value on a path that raises and is never read (:data:`NEVER`), or
nothing at all (:data:`UNKNOWN`). Where two paths meet (the branches of an ``if`` decided at run
time, the iterations of a loop) the facts are merged: what holds on both paths stays.

TorchScript holds dtypes, layouts and memory formats as ints; so do the known values here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import torch

from exporter.passes.strides import dense_order, fixed_strides

__all__ = [
    "Known",
    "TensorFacts",
    "Items",
    "MaybeNone",
    "Unknown",
    "Never",
    "Fact",
    "UNKNOWN",
    "NEVER",
    "merge",
    "merge_all",
    "tensor_facts",
    "as_items",
    "STRIDED",
]

# TorchScript's int for torch.strided (c10::Layout::Strided)
STRIDED = 0


@dataclasses.dataclass(frozen=True, eq=False)
class Known:
    """A value fixed at export time, as TorchScript holds it. Equal only to the same value of
    the same type: ``1``, ``1.0`` and ``True`` are three values to TorchScript."""

    value: object

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Known) and _strictly_equal(self.value, other.value)

    def __hash__(self) -> int:
        return hash(type(self.value))


def _strictly_equal(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_strictly_equal(x, y) for x, y in zip(a, b))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a is b
    if isinstance(a, (bool, int, float, str, torch.device)) or a is None:
        return a == b
    return a is b


@dataclasses.dataclass(frozen=True)
class TensorFacts:
    """A tensor's facts fixed at export time. ``sizes`` is None where the rank is not known, and
    holds None for a size chosen at run time (a dynamic axis, or a size computed from one).
    ``example`` has the sizes of the example inputs' run (the same rank as ``sizes``): what
    meta tensors are made of to learn an op's result, never folded where ``sizes`` has None.
    ``strides`` holds the strides fixed at export (None for one a run-time size changes;
    strides.py), ``order`` the example's dims from the innermost out in memory, which meta
    tensors are laid out in (None: contiguous)."""

    dtype: torch.dtype | None
    device: torch.device | None
    sizes: tuple[int | None, ...] | None
    example: tuple[int, ...] | None
    layout: int | None = STRIDED
    requires_grad: bool | None = None
    strides: tuple[int | None, ...] | None = None
    order: tuple[int, ...] | None = None

    @property
    def rank(self) -> int | None:
        return None if self.sizes is None else len(self.sizes)

    @property
    def static(self) -> bool:
        """Whether every size is fixed at export."""
        return self.sizes is not None and all(size is not None for size in self.sizes)


@dataclasses.dataclass(frozen=True)
class Items:
    """A list or tuple whose length is fixed at export and whose items are known in part
    (``x.shape`` with a dynamic axis). ``made_by_op``: a tensor list an op returned
    (``x.unbind()``), whose length and items torch's exporter reads only at run time: the pass
    unpacks it but does not fold ``len`` or indexing of it (see exporter.input_parity)."""

    items: tuple[Fact, ...]
    is_tuple: bool = False
    made_by_op: bool = False


@dataclasses.dataclass(frozen=True)
class MaybeNone:
    """An ``Optional`` input whose None-ness is decided at run time (an ONNX optional input);
    ``inner`` holds where it is not None."""

    inner: Fact


class Unknown:
    """Nothing is known at export time."""

    def __repr__(self) -> str:
        return "UNKNOWN"


class Never:
    """A value on a path that raises (prim::Uninitialized): never read, so any fact holds."""

    def __repr__(self) -> str:
        return "NEVER"


UNKNOWN = Unknown()
NEVER = Never()

Fact = Known | TensorFacts | Items | MaybeNone | Unknown | Never


def tensor_facts(
    tensor: torch.Tensor, dynamic: frozenset[int] = frozenset(), requires_grad: bool | None = None
) -> TensorFacts:
    """The facts of an example tensor whose axes ``dynamic`` are chosen at run time."""
    sizes = tuple(None if axis in dynamic else int(size) for axis, size in enumerate(tensor.shape))
    example = tuple(int(size) for size in tensor.shape)
    order = dense_order(example, tensor.stride())
    return TensorFacts(
        dtype=tensor.dtype,
        device=tensor.device,
        sizes=sizes,
        example=example,
        requires_grad=requires_grad,
        strides=fixed_strides(example, tensor.stride(), dynamic),
        order=None if order is None else tuple(order),
    )


def as_items(fact: Fact) -> Items | None:
    """A known list or tuple, or Items, as Items (None for anything else)."""
    if isinstance(fact, Items):
        return fact
    if isinstance(fact, Known) and isinstance(fact.value, (list, tuple)):
        return Items(tuple(Known(item) for item in fact.value), is_tuple=isinstance(fact.value, tuple))
    return None


def merge(a: Fact, b: Fact) -> Fact:
    """What holds on both of two paths meeting."""
    if isinstance(a, Never):
        return b
    if isinstance(b, Never) or a == b:
        return a
    if isinstance(a, MaybeNone) or isinstance(b, MaybeNone) or Known(None) in (a, b):
        return _merge_optional(a, b)
    if isinstance(a, TensorFacts) and isinstance(b, TensorFacts):
        return _merge_tensors(a, b)
    items_a, items_b = as_items(a), as_items(b)
    if items_a is not None and items_b is not None:
        if len(items_a.items) != len(items_b.items) or items_a.is_tuple != items_b.is_tuple:
            return UNKNOWN
        return Items(
            tuple(merge(x, y) for x, y in zip(items_a.items, items_b.items)),
            items_a.is_tuple,
            items_a.made_by_op or items_b.made_by_op,
        )
    return UNKNOWN


def _merge_optional(a: Fact, b: Fact) -> Fact:
    """None on one path (or maybe None) and a value on the other: maybe None."""
    inner_a = a.inner if isinstance(a, MaybeNone) else a
    inner_b = b.inner if isinstance(b, MaybeNone) else b
    if inner_a == Known(None):
        return MaybeNone(inner_b)
    if inner_b == Known(None):
        return MaybeNone(inner_a)
    return MaybeNone(merge(inner_a, inner_b))


def _same(a: object, b: object) -> object:
    return a if a == b else None


def _merge_tensors(a: TensorFacts, b: TensorFacts) -> TensorFacts:
    sizes: tuple[int | None, ...] | None = None
    example = None
    strides: tuple[int | None, ...] | None = None
    if a.sizes is not None and b.sizes is not None and len(a.sizes) == len(b.sizes):
        sizes = tuple(x if x == y else None for x, y in zip(a.sizes, b.sizes))
        example = a.example
        if a.strides is not None and b.strides is not None and len(a.strides) == len(b.strides):
            strides = tuple(x if x == y else None for x, y in zip(a.strides, b.strides))
    return TensorFacts(
        dtype=_same(a.dtype, b.dtype),  # type: ignore[arg-type]
        device=_same(a.device, b.device),  # type: ignore[arg-type]
        sizes=sizes,
        example=example,
        layout=_same(a.layout, b.layout),  # type: ignore[arg-type]
        requires_grad=_same(a.requires_grad, b.requires_grad),  # type: ignore[arg-type]
        strides=strides,
        order=a.order if sizes is not None and a.order == b.order else None,
    )


def merge_all(facts: Sequence[Fact]) -> Fact:
    """What holds on every path of ``facts`` (NEVER for none)."""
    result: Fact = NEVER
    for fact in facts:
        result = merge(result, fact)
    return result
