"""Attention written by hand and scripted: causal masks combined with key padding masks built
from run-time lengths, an optional key/value cache extended step by step, rotary embeddings
sliced at a run-time offset with ALiBi biases, T5's relative position buckets for run-time
lengths, and ViT position embeddings resized to a run-time patch grid.
"""

from __future__ import annotations

import math
from typing import Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
)


class CausalAttention(torch.nn.Module):
    """Self-attention with a causal mask combined with a key padding mask built from run-time
    lengths, written out (no fused kernel)."""

    def __init__(self, width: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.heads = heads
        self.head_dim = width // heads

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch, steps, width = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (self.head_dim**0.5)
        causal = torch.ones(steps, steps, dtype=torch.bool).triu(1)
        padding = torch.arange(steps)[None, :] >= lengths[:, None]
        blocked = causal[None, None] | padding[:, None, None, :]
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, -1).nan_to_num(0.0)
        y = (weights @ v).transpose(1, 2).reshape(batch, steps, width)
        return self.out(y)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_causal_attention_with_run_time_lengths(opset: int) -> None:
    model = torch.jit.script(CausalAttention().eval())
    dynamic = {"input_names": ["x", "lengths"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "lengths": {0: "b"}}}
    others = [(torch.randn(1, 2, 16), torch.tensor([1])), (torch.randn(3, 9, 16), torch.tensor([9, 4, 1]))]
    assert_matches_torch(
        model, (torch.randn(2, 5, 16), torch.tensor([5, 3])), opset=opset, other_inputs=others, **dynamic
    )


class CachedAttention(torch.nn.Module):
    """Incremental decoding: an optional (key, value) cache from earlier steps is extended
    with this step's keys and values and returned."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.width = width

    def forward(
        self, x: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]] = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        q, k, v = self.qkv(x).split(self.width, dim=-1)
        if past is not None:
            k = torch.cat([past[0], k], dim=1)
            v = torch.cat([past[1], v], dim=1)
        steps, total = q.size(1), k.size(1)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.width)
        offset = total - steps
        allowed = torch.arange(total)[None, :] <= (torch.arange(steps) + offset)[:, None]
        scores = scores.masked_fill(~allowed, float("-inf"))
        return torch.softmax(scores, -1) @ v, (k, v)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_cached_attention(opset: int) -> None:
    model = torch.jit.script(CachedAttention().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 1, 8),), (torch.randn(3, 6, 8),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8),), opset=opset, other_inputs=others, **dynamic)
    past = (torch.randn(2, 4, 8), torch.randn(2, 4, 8))
    dynamic = {
        "input_names": ["x", "past_k", "past_v"],
        "dynamic_axes": {"x": {0: "b", 1: "t"}, "past_k": {0: "b", 1: "p"}, "past_v": {0: "b", 1: "p"}},
    }
    others = [(torch.randn(1, 1, 8), (torch.randn(1, 7, 8), torch.randn(1, 7, 8)))]
    assert_matches_torch(model, (torch.randn(2, 1, 8), past), opset=opset, other_inputs=others, **dynamic)


class RelativeBuckets(torch.nn.Module):
    """T5's relative position buckets for run-time query and key lengths."""

    def __init__(self, buckets: int = 8, max_distance: int = 20) -> None:
        super().__init__()
        self.buckets = buckets
        self.max_distance = max_distance
        self.bias = torch.nn.Embedding(buckets, 2)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        context = torch.arange(q.size(1), dtype=torch.long)[:, None]
        memory = torch.arange(k.size(1), dtype=torch.long)[None, :]
        relative = memory - context
        buckets = self.buckets // 2
        result = (relative > 0).to(torch.long) * buckets
        relative = torch.abs(relative)
        max_exact = buckets // 2
        is_small = relative < max_exact
        large = max_exact + (
            torch.log(relative.float() / max_exact) / math.log(self.max_distance / max_exact) * (buckets - max_exact)
        ).to(torch.long)
        large = torch.min(large, torch.full_like(large, buckets - 1))
        result = result + torch.where(is_small, relative, large)
        return self.bias(result).permute(2, 0, 1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_t5_relative_buckets(opset: int) -> None:
    model = torch.jit.script(RelativeBuckets())
    dynamic = {"input_names": ["q", "k"], "dynamic_axes": {"q": {1: "t"}, "k": {1: "s"}}}
    others = [(torch.randn(1, 1, 2), torch.randn(1, 30, 2)), (torch.randn(1, 25, 2), torch.randn(1, 3, 2))]
    assert_matches_torch(
        model, (torch.randn(1, 5, 2), torch.randn(1, 7, 2)), opset=opset, other_inputs=others, **dynamic
    )


class RotaryAttention(torch.nn.Module):
    """Rotary position embeddings from a cos/sin cache sliced at a run-time position offset (a
    KV-cache decoder's step), rotate-half written with ``chunk`` and ``cat``, and ALiBi-style
    linear biases whose slopes are ``2 ** (-8 * (h + 1) / heads)`` computed with Python floats."""

    def __init__(self, heads: int = 2, dim: int = 8, max_len: int = 64) -> None:
        super().__init__()
        self.heads = heads
        inverse = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        angles = torch.arange(max_len, dtype=torch.float32)[:, None] * inverse[None, :]
        self.register_buffer("cos", torch.cat([angles, angles], -1).cos())
        self.register_buffer("sin", torch.cat([angles, angles], -1).sin())

    def rotate(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        length = x.size(-2)
        cos = self.cos[offset : offset + length]
        sin = self.sin[offset : offset + length]
        first, second = x.chunk(2, -1)
        return x * cos + torch.cat([-second, first], -1) * sin

    def forward(self, q: torch.Tensor, k: torch.Tensor, offset: int) -> torch.Tensor:
        q = self.rotate(q, offset)
        k = self.rotate(k, 0)
        slopes = torch.tensor([2 ** (-8.0 * (h + 1) / self.heads) for h in range(self.heads)])
        distance = torch.arange(k.size(-2))[None, :] - (torch.arange(q.size(-2))[:, None] + offset)
        bias = slopes[:, None, None] * distance.to(torch.float32).clamp(max=0)[None]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + bias
        return scores.softmax(-1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_rotary_attention_with_alibi(opset: int) -> None:
    model = torch.jit.script(RotaryAttention())
    dynamic = dynamic_inputs(q={1: "s"}, k={1: "t"}, offset={})
    others = [(torch.randn(2, 1, 8), torch.randn(2, 9, 8), 8), (torch.randn(2, 6, 8), torch.randn(2, 6, 8), 0)]
    assert_matches_torch(
        model, (torch.randn(2, 3, 8), torch.randn(2, 7, 8), 4), opset=opset, other_inputs=others, **dynamic
    )


class ResizedPositions(torch.nn.Module):
    """ViT-style position embeddings resized to the run-time patch grid (bicubic
    ``F.interpolate`` to a size read from the input), with a ``torch.jit.is_tracing()``
    branch that scripting never takes."""

    def __init__(self, grid: int = 4, dim: int = 6) -> None:
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, 4, stride=4)
        self.positions = torch.nn.Parameter(torch.randn(1, dim, grid, grid))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.patch(image)
        if torch.jit.is_tracing():
            positions = self.positions
        else:
            positions = F.interpolate(self.positions, size=(x.size(2), x.size(3)), mode="bicubic", align_corners=False)
        return (x + positions).flatten(2).transpose(1, 2)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_resized_position_embeddings(opset: int) -> None:
    model = torch.jit.script(ResizedPositions().eval())
    others = [(torch.randn(1, 3, 8, 12),), (torch.randn(2, 3, 24, 20),)]
    assert_matches_torch(
        model,
        (torch.randn(1, 3, 16, 16),),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(image={0: "b", 2: "h", 3: "w"}),
    )
