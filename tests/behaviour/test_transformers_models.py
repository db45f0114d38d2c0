"""Tiny transformers models, built from configs where transformers is installed, whose exports
failed in the zoo sweep (bench/zoo_sweep.py): each exercises one construct that also has a small
hand-written test where its behaviour lives.

- SEW-D's XSoftmax, an autograd Function whose own ``symbolic`` is written against torch's
  exporter internals: its forward is traced instead, with a warning (test_autograd_functions.py).
- XLM's attention starts its key/value cache from ``torch.tensor([])``: torch.cat skips 1-D
  empty tensors whatever the others' rank (tests/opset9/test_splitting.py).
- DeepSeek-V3's attention raises while traced, not eagerly: a TracingError names the model's
  source line (test_errors.py).
"""

from __future__ import annotations

import io

import pytest
import torch
from conftest import assert_matches_torch, import_transformers

import exporter
from exporter.errors import TracingError


def _tiny(model_type: str, **overrides: object) -> torch.nn.Module:
    transformers = import_transformers()
    base = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
    config = transformers.AutoConfig.for_model(model_type, **{**base, **overrides})
    torch.manual_seed(0)
    return transformers.AutoModel.from_config(config).eval()


class FirstOutput(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(*args, return_dict=False)[0]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sew_d_xsoftmax() -> None:
    model = _tiny(
        "sew-d",
        conv_dim=[16, 16],
        conv_stride=[5, 2],
        conv_kernel=[10, 3],
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        squeeze_factor=2,
        max_position_embeddings=64,
        position_buckets=16,
    )
    assert_matches_torch(FirstOutput(model), (torch.randn(2, 800),), opset=17, atol=1e-4)


def test_xlm_empty_cache_concat() -> None:
    model = _tiny("xlm", emb_dim=32, n_layers=2, n_heads=4, vocab_size=100)
    ids = torch.randint(3, 100, (2, 8))
    assert_matches_torch(FirstOutput(model), (ids, torch.ones_like(ids)), opset=17, atol=1e-4)


def test_deepseek_v3_tracing_error_names_the_attention_line() -> None:
    model = _tiny(
        "deepseek_v3",
        num_key_value_heads=2,
        vocab_size=100,
        kv_lora_rank=16,
        q_lora_rank=32,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=16,
        head_dim=8,
        first_k_dense_replace=1,
        n_routed_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        n_group=1,
        topk_group=1,
        use_cache=False,
    )
    ids = torch.randint(3, 100, (2, 8))
    with pytest.raises(TracingError, match=r"sdpa_attention\.py:\d+ .*\n  the same inputs run eagerly"):
        exporter.export(FirstOutput(model), (ids, torch.ones_like(ids)), io.BytesIO())
