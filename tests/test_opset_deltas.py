"""Newer ONNX ops replace the base lowering exactly at the opset that introduced them."""

from __future__ import annotations

import collections

import pytest
import torch
import torch.nn.functional as F
from conftest import NEWEST, Wrap, assert_matches_torch


def _ops(model) -> collections.Counter[str]:  # noqa: ANN001
    return collections.Counter(n.op_type for n in model.graph)


LAYER_NORM = torch.nn.LayerNorm(8).eval()
GROUP_NORM = torch.nn.GroupNorm(2, 4).eval()

# (name, module, inputs, ONNX op that appears from `first`, first)
STRUCTURAL = [
    ("layer_norm", LAYER_NORM, lambda: (torch.randn(2, 3, 8),), "LayerNormalization", 17),
    (
        "layer_norm_no_affine",
        Wrap(lambda x: F.layer_norm(x, (3, 8))),
        lambda: (torch.randn(2, 3, 8),),
        "LayerNormalization",
        17,
    ),
    ("gelu", Wrap(F.gelu), lambda: (torch.randn(4, 5),), "Gelu", 20),
    ("gelu_tanh", Wrap(lambda x: F.gelu(x, approximate="tanh")), lambda: (torch.randn(4, 5),), "Gelu", 20),
    ("mish", Wrap(F.mish), lambda: (torch.randn(4, 5),), "Mish", 18),
    (
        "col2im",
        Wrap(lambda a: F.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1))),
        lambda: (F.unfold(torch.randn(2, 3, 5, 6), (2, 3), padding=1, stride=(2, 1)),),
        "Col2Im",
        18,
    ),
    ("group_norm", GROUP_NORM, lambda: (torch.randn(2, 4, 5),), "GroupNormalization", 21),
    (
        "sdpa",
        Wrap(F.scaled_dot_product_attention),
        lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)),
        "Attention",
        23,
    ),
    (
        "sdpa_causal",
        Wrap(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.2)),
        lambda: (torch.randn(1, 2, 5, 8),) * 3,
        "Attention",
        23,
    ),
    (
        "sdpa_bool_mask",
        Wrap(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.rand(4, 4) > 0.3),
        "Attention",
        23,
    ),
    (
        "sdpa_float_mask",
        Wrap(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 1, 4, 4)),
        "Attention",
        23,
    ),
]


@pytest.mark.parametrize("case", STRUCTURAL, ids=[c[0] for c in STRUCTURAL])
def test_new_op_from_its_opset(case) -> None:  # noqa: ANN001
    name, module, inputs, op_type, first = case
    opsets = sorted({9, first - 1, first, NEWEST})
    for opset in opsets:
        model = assert_matches_torch(module, inputs(), opset=opset, atol=1e-5)
        assert (op_type in _ops(model)) == (opset >= first), (name, opset, _ops(model))


def test_layer_norm_half_matches_torch() -> None:
    module = torch.nn.LayerNorm(16).half().eval()
    assert_matches_torch(module, (torch.randn(2, 16).half(),), opset=17, atol=2e-3, rtol=2e-3)
