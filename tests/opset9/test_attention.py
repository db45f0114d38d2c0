"""The op table for attention: scaled dot-product and the fused multi-head attention nodes (exporter.opset9.attention).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cases import Case, lowering_opsets, op_params, run_case
from conftest import Wrap, assert_matches_torch


def _padding_mask() -> torch.Tensor:
    return torch.tensor([[False] * 5, [False, False, False, True, True]])


def _attn_mask() -> torch.Tensor:
    mask = torch.rand(5, 5) > 0.6
    mask.fill_diagonal_(False)
    return mask


def _x() -> torch.Tensor:
    return torch.randn(2, 5, 16)


def _qkv() -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16)


CASES = [
    # attention
    Case(
        "sdpa",
        F.scaled_dot_product_attention,
        lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)),
    ),
    Case(
        "sdpa_causal",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda: (torch.randn(2, 3, 5, 8),) * 3,
    ),
    Case(
        "sdpa_bool_mask",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.rand(4, 4) > 0.3),
    ),
    Case(
        "sdpa_float_mask_scale",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(4, 4)),
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class EncoderFastPath(torch.nn.Module):
    """Calls the kernel nn.TransformerEncoderLayer's fast path runs, with the layer's weights."""

    def __init__(self, norm_first: bool = False, activation: str = "relu", mask_type: int | None = None) -> None:
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
        )
        self.use_gelu = activation == "gelu"
        self.mask_type = mask_type

    def forward(self, src: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        layer, attn = self.layer, self.layer.self_attn
        return torch._transformer_encoder_layer_fwd(
            src,
            attn.embed_dim,
            attn.num_heads,
            attn.in_proj_weight,
            attn.in_proj_bias,
            attn.out_proj.weight,
            attn.out_proj.bias,
            self.use_gelu,
            layer.norm_first,
            layer.norm1.eps,
            layer.norm1.weight,
            layer.norm1.bias,
            layer.norm2.weight,
            layer.norm2.bias,
            layer.linear1.weight,
            layer.linear1.bias,
            layer.linear2.weight,
            layer.linear2.bias,
            mask,
            None if mask is None else self.mask_type,
        )


class AttentionFastPath(torch.nn.Module):
    """Calls the kernel nn.MultiheadAttention's fast path runs."""

    def __init__(
        self, need_weights: bool = True, average: bool = True, mask_type: int | None = None, self_attention: bool = True
    ) -> None:
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
        self.need_weights, self.average, self.mask_type, self.self_attention = (
            need_weights,
            average,
            mask_type,
            self_attention,
        )

    def forward(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.self_attention:
            key = value = query
        mha = self.mha
        return torch._native_multi_head_attention(
            query,
            key,
            value,
            mha.embed_dim,
            mha.num_heads,
            mha.in_proj_weight,
            mha.in_proj_bias,
            mha.out_proj.weight,
            mha.out_proj.bias,
            mask,
            self.need_weights,
            self.average,
            self.mask_type,
        )


FUSED_CASES = [
    Case("encoder_relu", lambda: EncoderFastPath().eval(), lambda: (_x(),), factory=True),
    Case(
        "mha_key_padding_mask",
        lambda: AttentionFastPath(True, True, 1, False).eval(),
        lambda: (*_qkv(), _padding_mask()),
        factory=True,
    ),
    Case("encoder_norm_first_gelu", lambda: EncoderFastPath(True, "gelu").eval(), lambda: (_x(),), factory=True),
    Case(
        "encoder_key_padding_mask",
        lambda: EncoderFastPath(False, "relu", 1).eval(),
        lambda: (_x(), _padding_mask()),
        factory=True,
    ),
    # nn.TransformerEncoderLayer hands the kernel its padding mask as a float 0/-inf mask
    Case(
        "encoder_float_padding_mask",
        lambda: EncoderFastPath(False, "relu", 1).eval(),
        lambda: (_x(), torch.zeros(2, 5).masked_fill(_padding_mask(), float("-inf"))),
        factory=True,
    ),
    Case(
        "encoder_attn_mask_norm_first",
        lambda: EncoderFastPath(True, "relu", 0).eval(),
        lambda: (_x(), _attn_mask()),
        factory=True,
    ),
    Case(
        "encoder_merged_4d_mask_gelu",
        lambda: EncoderFastPath(False, "gelu", 2).eval(),
        lambda: (_x(), torch.rand(2, 4, 5, 5) > 0.7),
        factory=True,
    ),
    Case("mha_self_need_weights", lambda: AttentionFastPath().eval(), lambda: _qkv()[:1] * 3, factory=True),
    Case("mha_no_weights", lambda: AttentionFastPath(need_weights=False).eval(), lambda: _qkv()[:1] * 3, factory=True),
    Case("mha_separate_qkv_per_head", lambda: AttentionFastPath(True, False, None, False).eval(), _qkv, factory=True),
    # a fully masked row: torch's _masked_softmax gives NaN there, so does Softmax over -inf
    Case(
        "mha_attn_mask_full_row",
        lambda: AttentionFastPath(True, False, 0, False).eval(),
        lambda: (*_qkv(), torch.tensor([[True] * 5] + [[False, True, False, True, False]] * 4)),
        factory=True,
    ),
    # float masks are made bool by the kernel (nonzero masks), not added
    Case(
        "mha_float_mask_is_bool",
        lambda: AttentionFastPath(True, False, 0, False).eval(),
        lambda: (*_qkv(), (torch.rand(5, 5) > 0.6).float() * 3.0),
        factory=True,
    ),
    Case(
        "mha_4d_mask_no_type",
        lambda: AttentionFastPath(True, True, None, False).eval(),
        lambda: (*_qkv(), torch.rand(2, 4, 5, 5) > 0.6),
        factory=True,
    ),
]


FUSED = {c.name: c for c in FUSED_CASES}


@pytest.mark.parametrize(("case", "opset"), op_params(FUSED_CASES))
def test_fused(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_fused_half() -> None:
    model = EncoderFastPath(True, "gelu").eval().half()
    assert_matches_torch(model, (_x().half(),), opset=17, atol=2e-2, rtol=2e-2)


def test_fused_dynamic_batch_and_length() -> None:
    model = AttentionFastPath(True, True, None, True).eval()
    assert_matches_torch(
        model,
        (torch.randn(2, 5, 16),) * 3,
        opset=13,
        other_inputs=[(torch.randn(3, 7, 16),) * 3],
        input_names=["query", "key", "value"],
        dynamic_axes={
            "query": {0: "batch", 1: "length"},
            "key": {0: "batch", 1: "length"},
            "value": {0: "batch", 1: "length"},
        },
    )


@torch.jit.script
def _scripted_attention(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, pw: torch.Tensor, pb: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch._native_multi_head_attention(x, x, x, 16, 4, w, b, pw, pb, mask, True, False, 1)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_native_multi_head_attention", helpers=True))
def test_fused_scripted_function(opset: int) -> None:
    """Scripted code keeps the fused node (nothing disables the fast path there)."""
    assert "aten::_native_multi_head_attention" in str(_scripted_attention.graph)
    args = (
        torch.randn(2, 5, 16),
        torch.randn(48, 16) * 0.2,
        torch.randn(48),
        torch.randn(16, 16) * 0.2,
        torch.randn(16),
        _padding_mask(),
    )
    assert_matches_torch(_scripted_attention, args, opset=opset)


def test_encoder_fast_path_node_is_exported() -> None:
    """The model really records the fused node (the test would be vacuous otherwise)."""
    onnx_model = assert_matches_torch(EncoderFastPath().eval(), (_x(),), opset=9)
    ops = {node.op_type for node in onnx_model.graph}
    assert {"MatMul", "Softmax", "Relu"} <= ops
    graph = torch.jit.trace(EncoderFastPath().eval(), (_x(),), check_trace=False).graph
    assert "aten::_transformer_encoder_layer_fwd" in str(graph)


GQA_CASES = {
    "gqa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        lambda: (torch.randn(2, 8, 5, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4)),
    ),
    "gqa_causal_3d": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        lambda: (torch.randn(6, 5, 4), torch.randn(3, 5, 4), torch.randn(3, 5, 4)),
    ),
    "gqa_mask_scale": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.5, enable_gqa=True),
        lambda: (torch.randn(1, 4, 3, 8), torch.randn(1, 1, 3, 8), torch.randn(1, 1, 3, 8), torch.randn(3, 3)),
    ),
    "gqa_same_heads": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        lambda: (torch.randn(1, 2, 3, 4),) * 3,
    ),
}


GQA = [Case(name, fn, inputs) for name, (fn, inputs) in GQA_CASES.items()]


@pytest.mark.parametrize(("case", "opset"), op_params(GQA))
def test_sdpa_gqa(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::scaled_dot_product_attention"))
def test_sdpa_gqa_dynamic_length(opset: int) -> None:
    fn, _ = GQA_CASES["gqa"]
    args = (torch.randn(2, 8, 5, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4))
    assert_matches_torch(
        Wrap(fn),
        args,
        opset=opset,
        input_names=["q", "k", "v"],
        dynamic_axes={"q": {0: "b", 2: "l"}, "k": {0: "b", 2: "s"}, "v": {0: "b", 2: "s"}},
        other_inputs=[(torch.randn(3, 8, 2, 4), torch.randn(3, 2, 9, 4), torch.randn(3, 2, 9, 4))],
    )
