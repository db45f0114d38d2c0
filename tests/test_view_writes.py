"""Writes through permuted and transposed views (issue #15 item 3), with static and dynamic sizes.

The write-back of a permute is the inverse permute (no sizes needed), a slice over a whole dim
writes back as itself, and a view written twice is taken again from the written base, so the
second write still reaches it. Patterns from BEiT/Data2Vec's relative position index and
DeBERTa's ``transpose_for_scores``.
"""

from __future__ import annotations

import pytest
import torch
from conftest import NEWEST, assert_matches_torch

OPSETS = [9, 13, 17, NEWEST]
DYNAMIC_OPSETS = [13, 17, NEWEST]


class RelativePositionIndex(torch.nn.Module):
    """BEiT's generate_relative_position_index on the input's trailing (h, w) dims."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2], x.shape[-1]
        coords = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += h - 1
        relative_coords[:, :, 1] += w - 1
        relative_coords[:, :, 0] *= 2 * w - 1
        index = torch.zeros(size=(w * h + 1,) * 2, dtype=torch.int64)
        index[1:, 1:] = relative_coords.sum(-1)
        index[0, 0:] = 7
        index[0:, 0] = 8
        index[0, 0] = 9
        return index + x.sum().long()


class TransposeForScores(torch.nn.Module):
    """DeBERTa-style: view into heads, permute, then write in place through the permuted view."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.clone()
        new_shape = x.size()[:-1] + (2, x.size(-1) // 2)
        y = x.view(new_shape).permute(0, 2, 1, 3)
        y.mul_(2)
        y[:, 0] += 1
        return y, x


class TransposeTwice(torch.nn.Module):
    """One transposed view written twice: the second write goes through a select of it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        z = y.transpose(0, 1)
        z.add_(1)
        z[0] += 3
        return y * z.sum()


class WriteIntoTransposedRow(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.t()[0] = 5.0
        y.t()[1].mul_(3)
        return y


class SliceOfPermute(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.permute(2, 0, 1)[1:, :, :2].add_(10)
        return y


class PermuteOfSlice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        p = y[:, 1:].permute(1, 2, 0)
        p[0] -= 4
        p.mul_(2)
        return y + p.sum()


class ContiguousCopies(torch.nn.Module):
    """contiguous() of a transposed view copies: writes into the copy leave the base alone."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.clone()
        c = y.t().contiguous()
        c.add_(1)
        return y, c


CASES = {
    "relative_position_index": (RelativePositionIndex(), torch.randn(1, 3, 4), torch.randn(1, 5, 2), {1: "h", 2: "w"}),
    "transpose_for_scores": (TransposeForScores(), torch.randn(2, 3, 8), torch.randn(3, 5, 8), {0: "b", 1: "s"}),
    "transpose_twice": (TransposeTwice(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
    "transposed_row": (WriteIntoTransposedRow(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
    "slice_of_permute": (SliceOfPermute(), torch.randn(2, 3, 4), torch.randn(3, 5, 4), {0: "a", 1: "b"}),
    "permute_of_slice": (PermuteOfSlice(), torch.randn(2, 3, 4), torch.randn(3, 5, 6), {0: "a", 1: "b", 2: "c"}),
    "contiguous_copies": (ContiguousCopies(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(CASES))
def test_write_through_permuted_view_static(name: str, opset: int) -> None:
    model, x, _, _ = CASES[name]
    assert_matches_torch(model, (x,), opset=opset)


@pytest.mark.parametrize("opset", DYNAMIC_OPSETS)
@pytest.mark.parametrize("name", list(CASES))
def test_write_through_permuted_view_dynamic(name: str, opset: int) -> None:
    model, x, other, axes = CASES[name]
    assert_matches_torch(model, (x,), opset=opset, other_inputs=[(other,)], input_names=["x"], dynamic_axes={"x": axes})


@pytest.mark.parametrize("name", list(CASES))
def test_write_through_permuted_view_dynamic_opset9(name: str) -> None:
    """At opset 9 too: slice writes into a dim known only at run time keep the untouched parts
    with constant-bound slices (Slice-1 takes no run-time bounds)."""
    model, x, other, axes = CASES[name]
    assert_matches_torch(model, (x,), opset=9, other_inputs=[(other,)], input_names=["x"], dynamic_axes={"x": axes})
