"""A tensor's strides as facts fixed at export, for the specialization's ``x.stride(d)``.

ONNX tensors have no strides: an exported model computes with logical values. A program that
reads strides (julius' ``unfold`` builds an ``as_strided`` view from them) reads layout facts,
which are fixed at export where the example's layout fixes them:

- a dense example input (its elements fill one block of memory, in some order of its dims, as
  a contiguous tensor or a permutation of one does) has strides that are products of the sizes
  of the dims inside it in that order. A dim's stride is fixed where no dynamic axis lies
  inside it: ``x`` of shape (batch, 32) with a dynamic batch has strides (32, 1) for every
  batch; with the last axis dynamic, stride(0) is the run-time length and is not fixed. The
  exported model assumes the example's order (an input given in another layout at run time
  means another program to torch, not to the model);
- an example that is not dense (expanded, sliced with a step) has no strides the model could
  assume: none is fixed;
- an op's result has the strides torch's meta kernel gives it on inputs laid out like the
  examples; where a dynamic size is grown, a stride that changes with it is not fixed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import torch

__all__ = ["dense_order", "fixed_strides", "laid_out_like"]


def dense_order(sizes: Sequence[int], strides: Sequence[int]) -> list[int] | None:
    """The dims of a dense layout from the innermost out (equal strides, as size-1 dims have:
    the later dim inside, as torch makes contiguous strides), or None where the elements do
    not fill one block in an order of the dims (a stride of 0, a step, a gap)."""
    order = sorted(range(len(sizes)), key=lambda d: (strides[d], -d))
    expected = 1
    for d in order:
        if sizes[d] != 1 and strides[d] != expected:
            return None
        expected *= sizes[d]
    return order


def fixed_strides(
    sizes: Sequence[int], strides: Sequence[int], dynamic: Collection[int] = ()
) -> tuple[int | None, ...] | None:
    """The strides of an example of ``sizes`` and ``strides`` fixed at export when the axes
    ``dynamic`` are chosen at run time: None for a dim with a dynamic axis inside it; None
    altogether for a layout that is not dense."""
    order = dense_order(sizes, strides)
    if order is None:
        return None
    fixed: list[int | None] = list(strides)
    inner_dynamic = False
    for d in order:
        if inner_dynamic:
            fixed[d] = None
        inner_dynamic = inner_dynamic or d in dynamic
    return tuple(fixed)


def laid_out_like(
    sizes: Sequence[int], order: Sequence[int] | None, dtype: torch.dtype, device: str | torch.device
) -> torch.Tensor:
    """An empty tensor of ``sizes`` whose dims lie in memory in ``order`` (innermost first, as
    :func:`dense_order` gives it), contiguous where ``order`` is None."""
    if order is None or list(order) == list(range(len(sizes) - 1, -1, -1)):
        return torch.empty(list(sizes), dtype=dtype, device=device)
    outer_first = list(reversed(order))
    stored = torch.empty([sizes[d] for d in outer_first], dtype=dtype, device=device)
    return stored.permute([outer_first.index(d) for d in range(len(sizes))])
