"""A tensor's strides as facts fixed at export (exporter.passes.strides): the memory order of a
dense example, which strides a dynamic axis inside them changes, and meta tensors laid out in
the example's order (so a view of an input has the input's strides, as in eager)."""

from __future__ import annotations

import pytest
import torch

from exporter.passes.strides import dense_order, fixed_strides, laid_out_like


def _contiguous(*sizes: int) -> torch.Tensor:
    return torch.empty(sizes)


LAYOUTS = {
    "contiguous": (_contiguous(2, 32), [1, 0]),
    "transposed": (_contiguous(32, 2).t(), [0, 1]),
    "size_one_dim": (_contiguous(2, 1, 3), [2, 1, 0]),
    "permuted": (_contiguous(2, 3, 4).permute(2, 0, 1), [0, 2, 1]),
    "stepped": (_contiguous(4, 6)[:, ::2], None),
    "expanded": (_contiguous(1, 3).expand(4, 3), None),
    "cropped": (_contiguous(4, 6)[:, :3], None),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_dense_order_is_the_memory_order_of_a_dense_layout(name: str) -> None:
    tensor, order = LAYOUTS[name]
    assert dense_order(tensor.shape, tensor.stride()) == order


@pytest.mark.parametrize(
    ("name", "dynamic", "expected"),
    [
        ("contiguous", {0}, (32, 1)),  # the batch is outside every other dim
        ("contiguous", {1}, (None, 1)),  # the row length is inside dim 0
        ("transposed", {0}, (1, None)),
        ("transposed", {1}, (1, 2)),
        ("size_one_dim", {1}, (None, 3, 1)),  # a size-1 dim named dynamic grows at run time
        ("permuted", {2}, (1, None, 4)),
        ("stepped", set(), None),  # no layout the exported model could assume
    ],
)
def test_a_stride_is_fixed_unless_a_dynamic_axis_lies_inside_it(
    name: str, dynamic: set[int], expected: tuple[int | None, ...] | None
) -> None:
    tensor, _ = LAYOUTS[name]
    assert fixed_strides(tensor.shape, tensor.stride(), dynamic) == expected


@pytest.mark.parametrize("name", ["contiguous", "transposed", "size_one_dim", "permuted"])
def test_a_meta_tensor_laid_out_like_the_example_has_its_strides_at_any_size(name: str) -> None:
    tensor, order = LAYOUTS[name]
    same = laid_out_like(list(tensor.shape), order, torch.float32, "meta")
    assert same.device.type == "meta" and same.shape == tensor.shape and same.stride() == tensor.stride()
    grown = laid_out_like([n + 7 for n in tensor.shape], order, torch.float32, "meta")
    assert dense_order(grown.shape, grown.stride()) == order


def test_without_an_order_a_meta_tensor_is_contiguous() -> None:
    assert laid_out_like([2, 3], None, torch.float16, "meta").stride() == (3, 1)
