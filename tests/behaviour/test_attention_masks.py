"""Attention masks with fully masked query rows.

torch 2.13's scaled_dot_product_attention returns 0 for a query row that can see no key (its
_safe_softmax zeroes rows whose scores are all -inf): a bool row of False, an additive row of
-inf, or is_causal combined with a padding mask. An additive row of finfo.min is finite, so
torch attends uniformly there. A left-padded batch through a LLaMA-style decoder has such rows.
Every lowering (MatMul/Softmax at every opset, ONNX Attention from 23) must give the same.

nn.MultiheadAttention's fused fast-path kernels (_native_multi_head_attention,
_transformer_encoder_layer_fwd) give NaN for fully masked rows instead; tests/opset9/
test_attention.py covers those (mha_attn_mask_full_row).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable

import hypothesis
import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import DEFAULT_OPSET, Wrap, assert_matches_torch, import_transformers

hypothesis.settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
hypothesis.settings.register_profile("long", max_examples=3000, deadline=None)
hypothesis.settings.register_profile("medium", max_examples=400, deadline=None)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

OPSETS = sorted({*lowering_opsets("aten::scaled_dot_product_attention"), DEFAULT_OPSET})
FMIN = torch.finfo(torch.float32).min


def _bool_rows(rows: int, cols: int, masked: tuple[int, ...], batch: tuple[int, ...] = ()) -> torch.Tensor:
    mask = torch.rand(*batch, rows, cols) > 0.4
    mask[..., 0] = True  # every other row sees a key
    for row in masked:
        mask[..., row % mask.shape[-2], :] = False
    return mask


def _additive(mask: torch.Tensor, fill: float) -> torch.Tensor:
    return torch.zeros(mask.shape).masked_fill(~mask, fill)


def _left_padded(lengths: list[int], total: int) -> torch.Tensor:
    """[B, 1, 1, S] key padding mask of a left-padded batch (True = a real token)."""
    mask = torch.zeros(len(lengths), total, dtype=torch.bool)
    for row, length in enumerate(lengths):
        mask[row, total - length :] = True
    return mask[:, None, None, :]


def _left_padded_causal(lengths: list[int], total: int, fill: float | None) -> torch.Tensor:
    """[B, 1, S, S] causal & padding, as transformers builds it (bool, or additive with fill)."""
    causal = torch.ones(total, total, dtype=torch.bool).tril()
    mask = _left_padded(lengths, total) & causal
    return mask if fill is None else _additive(mask, fill)


def _qkv(q_heads: int = 2, kv_heads: int = 2, length: int = 4, source: int = 4, batch: int = 2):
    return (
        torch.randn(batch, q_heads, length, 8),
        torch.randn(batch, kv_heads, source, 8),
        torch.randn(batch, kv_heads, source, 8),
    )


@dataclasses.dataclass(frozen=True)
class MaskCase:
    name: str
    fn: Callable[..., torch.Tensor]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    # onnxruntime's Attention kernel (1.32) zeroes rows whose scores are all <= finfo.min, where
    # the ONNX spec (onnx's reference evaluator) and torch attend uniformly: from this opset on
    # the case runs in the reference evaluator
    reference_from: int | None = None


def _sdpa(**kwargs: object) -> Callable[..., torch.Tensor]:
    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)

    return fn


CASES = [
    MaskCase("bool_rows_2d", _sdpa(), lambda: (*_qkv(), _bool_rows(4, 4, (1, 3)))),
    MaskCase("bool_rows_4d", _sdpa(), lambda: (*_qkv(), _bool_rows(4, 4, (2,), (2, 1)))),
    MaskCase("bool_cross_attention", _sdpa(), lambda: (*_qkv(length=3, source=5), _bool_rows(3, 5, (0,)))),
    MaskCase("bool_all_rows", _sdpa(), lambda: (*_qkv(), torch.zeros(4, 4, dtype=torch.bool))),
    MaskCase("neg_inf_rows_2d", _sdpa(), lambda: (*_qkv(), _additive(_bool_rows(4, 4, (0, 2)), float("-inf")))),
    MaskCase(
        "neg_inf_rows_4d",
        _sdpa(),
        lambda: (*_qkv(), _additive(_bool_rows(4, 4, (3,), (2, 2)), float("-inf")) + torch.randn(2, 2, 4, 4)),
    ),
    MaskCase("finfo_min_rows", _sdpa(), lambda: (*_qkv(), _additive(_bool_rows(4, 4, (1,)), FMIN)), 23),
    MaskCase(
        "neg_inf_and_finfo_min_row",  # one -inf key, the rest finfo.min: not fully masked
        _sdpa(),
        lambda: (*_qkv(), torch.tensor([[float("-inf"), FMIN, FMIN, FMIN]] + [[0.0] * 4] * 3)),
        23,
    ),
    # [B, 1, 1, S] padding masks (onnxruntime's Attention kernel needs them expanded), one
    # sequence all padding
    MaskCase("key_padding_bool", _sdpa(), lambda: (*_qkv(), _left_padded([0, 3], 4))),
    MaskCase(
        "key_padding_neg_inf_cross",
        _sdpa(),
        lambda: (*_qkv(length=3, source=5), _additive(_left_padded([2, 0], 5), float("-inf"))),
    ),
    MaskCase("causal_left_padded_bool", _sdpa(is_causal=True), lambda: (*_qkv(), _left_padded([4, 2], 4))),
    MaskCase(
        "causal_left_padded_neg_inf",
        _sdpa(is_causal=True),
        lambda: (*_qkv(), _additive(_left_padded([4, 1], 4), float("-inf"))),
    ),
    MaskCase("left_padded_causal_bool", _sdpa(), lambda: (*_qkv(), _left_padded_causal([4, 2], 4, None))),
    MaskCase("left_padded_causal_neg_inf", _sdpa(), lambda: (*_qkv(), _left_padded_causal([3, 4], 4, float("-inf")))),
    MaskCase("left_padded_causal_finfo_min", _sdpa(), lambda: (*_qkv(), _left_padded_causal([3, 4], 4, FMIN)), 23),
    MaskCase(
        "bool_rows_3d",
        _sdpa(),
        lambda: (torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8), _bool_rows(4, 5, (1,), (2,))),
    ),
    MaskCase(
        "neg_inf_rows_3d",  # torch refuses is_causal with a mask for 3-d queries
        _sdpa(),
        lambda: (*(torch.randn(2, 4, 8) for _ in range(3)), _additive(_bool_rows(4, 4, (2,)), float("-inf"))),
    ),
    MaskCase("gqa_bool_rows", _sdpa(enable_gqa=True), lambda: (*_qkv(4, 2), _bool_rows(4, 4, (0,), (2, 1)))),
    MaskCase(
        "gqa_causal_left_padded",
        _sdpa(is_causal=True, enable_gqa=True),
        lambda: (*_qkv(4, 1), _left_padded([1, 3], 4)),
    ),
    MaskCase(
        "gqa_neg_inf_rows_scale",
        _sdpa(enable_gqa=True, scale=0.3),
        lambda: (*_qkv(4, 2), _additive(_bool_rows(4, 4, (3,)), float("-inf"))),
    ),
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fully_masked_rows_match_torch(case: MaskCase, opset: int) -> None:
    args = case.inputs()
    expected = case.fn(*args)
    if case.name != "neg_inf_and_finfo_min_row" and "finfo" not in case.name:
        # the case really has a fully masked row, which torch zeroes
        assert (expected == 0).all(-1).any()
    reference = case.reference_from is not None and opset >= case.reference_from
    assert_matches_torch(Wrap(case.fn), args, opset=opset, reference_evaluator=reference)


@pytest.mark.parametrize("opset", OPSETS)
def test_fully_masked_rows_in_onnxruntime_attention_kernel(opset: int) -> None:
    """Bool and -inf rows run in onnxruntime's Attention kernel itself (not the reference)."""
    fn = _sdpa()
    args = (*_qkv(), _bool_rows(4, 4, (1,), (2, 1)))
    model = assert_matches_torch(Wrap(fn), args, opset=opset)
    ops = {node.op_type for node in model.graph}
    assert ("Attention" in ops) == (opset >= 23)


@pytest.mark.parametrize(
    "opset", sorted({DEFAULT_OPSET, *lowering_opsets("aten::scaled_dot_product_attention", min_opset=DEFAULT_OPSET)})
)
@pytest.mark.parametrize("additive", [False, True])
def test_padding_mask_dynamic_lengths(opset: int, additive: bool) -> None:
    """A [B, 1, 1, S] padding mask with batch and lengths known only at run time."""
    fn = _sdpa()

    def inputs(batch: int, length: int, source: int, lengths: list[int]) -> tuple[torch.Tensor, ...]:
        mask = _left_padded(lengths, source)
        return (
            torch.randn(batch, 2, length, 8),
            torch.randn(batch, 2, source, 8),
            torch.randn(batch, 2, source, 8),
            _additive(mask, float("-inf")) if additive else mask,
        )

    assert_matches_torch(
        Wrap(fn),
        inputs(2, 4, 5, [5, 0]),
        opset=opset,
        input_names=["q", "k", "v", "m"],
        dynamic_axes={
            "q": {0: "b", 2: "l"},
            "k": {0: "b", 2: "s"},
            "v": {0: "b", 2: "s"},
            "m": {0: "b", 3: "s"},
        },
        other_inputs=[inputs(3, 2, 6, [0, 6, 1])],
    )


@hypothesis.given(
    data=st.data(),
    length=st.integers(1, 5),
    source=st.integers(1, 5),
    causal=st.booleans(),
    additive=st.booleans(),
    mask_batch=st.sampled_from(["2d", "4d", "4d_heads_broadcast", "4d_padding"]),
    opset=st.sampled_from(OPSETS),
)
def test_random_masks_property(
    data: st.DataObject, length: int, source: int, causal: bool, additive: bool, mask_batch: str, opset: int
) -> None:
    """Random boolean masks (whole rows False often), bool or as an additive -inf mask, causal
    or not, against eager torch."""
    shape = {
        "2d": (length, source),
        "4d": (2, 2, length, source),
        "4d_heads_broadcast": (2, 1, length, source),
        "4d_padding": (2, 1, 1, source),
    }
    mask_shape = shape[mask_batch]
    cells = math.prod(mask_shape)
    bits = data.draw(st.lists(st.booleans(), min_size=cells, max_size=cells), label="mask")
    mask = torch.tensor(bits, dtype=torch.bool).reshape(mask_shape)
    dead_rows = data.draw(st.lists(st.integers(0, length - 1), max_size=length), label="all-False rows")
    for row in dead_rows:
        mask[..., row % mask.shape[-2], :] = False
    attn_mask = _additive(mask, float("-inf")) if additive else mask
    generator = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16), label="seed"))
    q = torch.randn(2, 2, length, 4, generator=generator)
    k = torch.randn(2, 2, source, 4, generator=generator)
    v = torch.randn(2, 2, source, 4, generator=generator)
    assert_matches_torch(Wrap(_sdpa(is_causal=causal)), (q, k, v, attn_mask), opset=opset)


# ============================================================================================
# A LLaMA-style decoder on a left-padded batch
# ============================================================================================


class TinyDecoder(torch.nn.Module):
    """One LLaMA-style layer (RMSNorm, rotary positions from position_ids, grouped-query sdpa
    with transformers' causal & padding mask, SwiGLU) and an LM head."""

    def __init__(self, vocab: int = 64, hidden: int = 32, heads: int = 4, kv_heads: int = 2) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.q = torch.nn.Linear(hidden, hidden, bias=False)
        self.k = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = torch.nn.Linear(hidden, hidden, bias=False)
        self.up = torch.nn.Linear(hidden, 2 * hidden, bias=False)
        self.down = torch.nn.Linear(hidden, hidden, bias=False)
        self.norm = torch.nn.RMSNorm(hidden, eps=1e-6)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)

    def _rotate(self, x: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        angles = position_ids[:, None, :, None].float() * inv_freq
        cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()
        first, second = x.chunk(2, -1)
        return x * cos + torch.cat([-second, first], -1) * sin

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        batch, length, _ = x.shape
        h = self.norm(x)
        q = self.q(h).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = self._rotate(q, position_ids), self._rotate(k, position_ids)
        causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
        mask = causal[None, None] & attention_mask[:, None, None, :].bool()
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        x = x + self.o(attended.transpose(1, 2).reshape(batch, length, -1))
        gate, up = self.up(self.norm(x)).chunk(2, -1)
        x = x + self.down(F.silu(gate) * up)
        return self.head(self.norm(x))


def _left_padded_batch(vocab: int = 64) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    attention_mask = torch.tensor([[0, 0, 0, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    ids = torch.randint(0, vocab, attention_mask.shape) * attention_mask
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    return ids, attention_mask, position_ids


@pytest.mark.parametrize(
    "opset", sorted({DEFAULT_OPSET, *lowering_opsets("aten::scaled_dot_product_attention", min_opset=DEFAULT_OPSET)})
)
def test_llama_style_decoder_left_padded(opset: int) -> None:
    model = TinyDecoder().eval()
    args = _left_padded_batch()
    with torch.no_grad():
        assert not model(*args).isnan().any()  # eager: padded query rows are 0, not NaN
    assert_matches_torch(model, args, opset=opset, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "opset", sorted({DEFAULT_OPSET, *lowering_opsets("aten::scaled_dot_product_attention", min_opset=DEFAULT_OPSET)})
)
def test_transformers_llama_left_padded(opset: int) -> None:
    transformers = import_transformers()
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
        attn_implementation="sdpa",
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.config.use_cache = False
    ids, attention_mask, position_ids = _left_padded_batch()

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits

    assert_matches_torch(Logits().eval(), (ids, attention_mask, position_ids), opset=opset, rtol=1e-4, atol=1e-4)
