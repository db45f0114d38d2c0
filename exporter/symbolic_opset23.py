"""Opset 23: what changes for the base symbolics.

ONNX changes at opset 23 that this module reacts to:
- Attention appears: scaled_dot_product_attention on 4-D inputs becomes one node (causal,
  bool and float masks, scale, grouped-query heads); other ranks keep the MatMul lowering.
- RMSNormalization appears (rms_norm becomes one node).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import attention, normalization
from exporter.symbolic_opset11 import aten_scaled_dot_product_attention_11

Value = ir.Value


@onnx_symbolic("aten::scaled_dot_product_attention", opset=23)
def aten_scaled_dot_product_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    attn_mask: Value | None = None,
    dropout_p: float = 0.0,
    is_causal: bool | Value = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Value:
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor

    A query row that sees no key (a bool row of False, an additive row of -inf) is 0 in
    Attention, as in torch (the spec's softmax and onnxruntime's kernel agree), so no fix-up
    follows. An additive row of finfo.min is finite: torch and the spec attend uniformly, but
    onnxruntime's kernel (1.32) zeroes it too. A mask with is_causal takes the MatMul form,
    which zeroes fully masked rows itself.
    """
    if isinstance(is_causal, Value):  # known only at run time: an If over both forms
        return attention.causal_at_run_time(
            g,
            is_causal,
            attn_mask,
            query,
            lambda sub, mask, causal: aten_scaled_dot_product_attention(
                sub, query, key, value, mask, dropout_p, causal, scale, enable_gqa
            ),
        )
    if h.rank_of(query) != 4 or h.rank_of(key) != 4 or (attn_mask is not None and is_causal):
        # other ranks keep the MatMul/Softmax lowering
        return aten_scaled_dot_product_attention_11(
            g, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa
        )
    if dropout_p > 0 and g.options.training:
        raise ValueError("attention dropout in training mode cannot be exported")
    attrs: dict[str, object] = {}
    if is_causal:
        attrs["is_causal"] = 1
    if scale is not None:
        attrs["scale"] = float(scale)
    inputs = [query, key, value]
    if attn_mask is not None:
        mask = attn_mask if attn_mask.dtype == ir.DataType.BOOL else h.cast_like(g, attn_mask, query)
        inputs.append(_mask_over_query_and_key(g, mask, query, key))
    return g.op("Attention", *inputs, **attrs)


def _mask_over_query_and_key(g: GraphContext, mask: Value, query: Value, key: Value) -> Value:
    """The mask with its last two dims [L, S]. The spec broadcasts the mask, but onnxruntime's
    Attention kernel (1.32) refuses a mask whose last two dims are not exactly the query and
    key lengths, such as the [B, 1, 1, S] padding mask of a left-padded batch: Expand it
    unless its shape is known to match."""
    want = [query.shape[-2] if query.shape is not None else None, key.shape[-2] if key.shape is not None else None]
    have = list(mask.shape)[-2:] if mask.shape is not None and len(mask.shape) >= 2 else None
    if have is not None and None not in want and have == want:
        return mask
    target = g.list_to_value([h.dim_size(g, query, -2), h.dim_size(g, key, -2)])
    return g.op("Expand", mask, target)


@onnx_symbolic("aten::rms_norm", opset=23)
def aten_rms_norm_23(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int] | Sequence[Value],
    weight: Value | None = None,
    eps: float | None = None,
) -> Value:
    """rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor

    RMSNormalization-23 requires a scale, so a missing weight becomes ones. stash_type is the
    compute type: float32 for float/half (torch's opmath), double for double.
    """
    if weight is None and not all(isinstance(d, int) for d in normalized_shape):
        # no static shape for the ones scale: the decomposition needs none
        return normalization.aten_rms_norm(g, input, normalized_shape, weight, eps)
    torch_dtype = tensors.to_torch_dtype(input.dtype)
    compute = torch.float64 if torch_dtype == torch.float64 else torch.float32
    if eps is None:
        eps = float(torch.finfo(compute).eps)
    scale = weight
    if scale is None:
        scale = g.constant(torch.ones(list(normalized_shape), dtype=torch_dtype))
    return g.op(
        "RMSNormalization",
        input,
        scale,
        axis=-len(normalized_shape),
        epsilon=eps,
        stash_type=tensors.from_torch_dtype(compute),
    )
