"""Nested tuples and fixed-length lists as one value per item (ONNX If and Loop carry single
values), and back.

One pair of functions, shared by the subgraph emission (a block's outputs) and the engine
(a Loop's carried values, an If's outputs): flattening and regrouping must agree, or values
land in the wrong slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import torch

__all__ = ["flatten", "regroup"]

T = TypeVar("T")


def flatten(
    objs: Sequence[object], ts_types: Sequence[torch._C.JitType], *, spread_lists: bool = False
) -> tuple[list[object], list[torch._C.JitType]]:
    """``objs`` spread like their TorchScript types, with the type of each item: a tuple (or
    None standing for an uninitialized tuple) becomes one object per item. With
    ``spread_lists`` (a Loop carrying a list re-assigned in its body, whose length stays fixed)
    so does an export-time list."""
    flat: list[object] = []
    flat_types: list[torch._C.JitType] = []
    for obj, ts_type in zip(objs, ts_types):
        if isinstance(ts_type, torch._C.TupleType) and (obj is None or isinstance(obj, tuple)):
            elements = list(ts_type.elements())
            items = list(obj) if obj is not None else [None] * len(elements)
            inner, inner_types = flatten(items, elements, spread_lists=spread_lists)
        elif spread_lists and isinstance(ts_type, torch._C.ListType) and isinstance(obj, list):
            inner, inner_types = flatten(obj, [ts_type.getElementType()] * len(obj), spread_lists=True)
        else:
            inner, inner_types = [obj], [ts_type]
        flat.extend(inner)
        flat_types.extend(inner_types)
    return flat, flat_types


def regroup(flat: Sequence[T], ts_types: Sequence[torch._C.JitType], like: Sequence[object] = ()) -> list[object]:
    """The inverse of :func:`flatten`: ``flat`` grouped back into the tuples of ``ts_types``,
    and into lists of the length of the export-time lists in ``like`` (the objects that were
    flattened with ``spread_lists``)."""
    remaining = list(flat)
    grouped = _regroup(remaining, ts_types, like)
    if remaining:
        raise ValueError(f"{len(remaining)} value(s) left over after regrouping")
    return grouped


def _regroup(remaining: list[T], ts_types: Sequence[torch._C.JitType], like: Sequence[object]) -> list[object]:
    grouped: list[object] = []
    for position, ts_type in enumerate(ts_types):
        template = like[position] if position < len(like) else None
        if isinstance(ts_type, torch._C.TupleType):
            inner = list(template) if isinstance(template, tuple) else []
            grouped.append(tuple(_regroup(remaining, list(ts_type.elements()), inner)))
        elif isinstance(ts_type, torch._C.ListType) and isinstance(template, list):
            grouped.append(_regroup(remaining, [ts_type.getElementType()] * len(template), template))
        else:
            grouped.append(remaining.pop(0))
    return grouped
