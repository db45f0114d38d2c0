"""Attention: scaled_dot_product_attention (boolean/additive masks, causal, scale, grouped-query
heads) and the fused nn.TransformerEncoderLayer / nn.MultiheadAttention fast-path kernels.

ONNX idioms: the MatMul/Softmax form at every opset (ONNX ``Attention`` from 23 lives in
symbolic_opset23); the fast-path kernels are unfolded into the same form so they export where
torch's exporter refuses them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.opset9 import activations, linalg, normalization
from exporter.registry import onnx_symbolic

Value = ir.Value


def _transposed_last(g: GraphContext, x: Value) -> Value:
    """x with its last two dims swapped (rank must be known)."""
    rank = h.rank_of(x)
    if rank is None:
        raise NeedsExportTimeValue("transpose of the last two dims needs the rank")
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", x, perm=perm)


# causal_mask(g, query, key): a bool [L, S] mask, true on and below the diagonal
CausalMask = Callable[[GraphContext, Value, Value], Value]


def _causal_mask(g: GraphContext, query: Value, key: Value) -> Value:
    """The causal mask at opset 9 (no Range): static sequence lengths only, a constant
    (torch aligns it top-left). symbolic_opset11 builds it from Range at run time."""
    length = h.dim_size(g, query, -2)
    source = h.dim_size(g, key, -2)
    if isinstance(length, int) and isinstance(source, int):
        return g.constant(torch.ones(length, source, dtype=torch.bool).tril())
    raise NeedsExportTimeValue("is_causal with a sequence length known only at run time needs opset 11")


@onnx_symbolic("aten::scaled_dot_product_attention")
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

    softmax(Q K^T * scale + mask) V from MatMul and Softmax, which every opset has (torch's
    exporter needs opset 14). A bool mask selects, a float mask adds. A query row that sees
    no key (all False, all -inf, or so with is_causal) is 0 as in torch, not Softmax's NaN.
    is_causal needs static sequence lengths before opset 11 (symbolic_opset11).
    """
    if isinstance(is_causal, Value):
        return causal_at_run_time(
            g,
            is_causal,
            attn_mask,
            query,
            lambda sub, mask, causal: aten_scaled_dot_product_attention(
                sub, query, key, value, mask, dropout_p, causal, scale, enable_gqa
            ),
        )
    return scaled_dot_product_attention_with(
        g, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, _causal_mask
    )


def causal_at_run_time(
    g: GraphContext,
    is_causal: Value,
    attn_mask: Value | None,
    query: Value,
    attend: Callable[[GraphContext, Value | None, bool], Value],
) -> Value:
    """Attention whose is_causal is known only at run time (nn.TransformerDecoder compares
    the tgt_mask it is given with a causal mask of the run-time length): an If whose then
    branch attends causally without the mask (None on that path in torch's
    multi_head_attention_forward) and whose else branch attends with the mask (unwrapped when
    it is an ONNX optional). ``attend(sub, mask, causal)`` emits one of them into ``sub``."""

    def with_mask(sub: GraphContext) -> list[Value]:
        mask = attn_mask
        if mask is not None and isinstance(mask.type, ir.OptionalType):
            element = sub.op("OptionalGetElement", mask)
            element.type, element.shape = mask.type.elem_type, mask.shape
            mask = element
        return [attend(sub, mask, False)]

    then_branch = g.build_subgraph([], lambda sub: [attend(sub, None, True)], "causal_branch")
    else_branch = g.build_subgraph([], with_mask, "masked_branch")
    condition = is_causal if h.rank_of(is_causal) == 0 else g.op("Reshape", is_causal, g.constant([]))
    out = g.op("If", h.cast(g, condition, ir.DataType.BOOL), then_branch=then_branch, else_branch=else_branch)
    out.dtype = query.dtype
    rank = h.rank_of(query)
    out.shape = ir.Shape([None] * rank) if rank is not None else None
    return out


def scaled_dot_product_attention_with(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    attn_mask: Value | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
    causal_mask: CausalMask,
) -> Value:
    """aten::scaled_dot_product_attention with ``causal_mask`` building the is_causal mask.

    enable_gqa lets key/value carry fewer heads than query; torch repeats each key/value head
    heads_q/heads_kv times in a row (repeat_interleave on dim -3), here by Unsqueeze + Expand
    + Reshape, then attends as usual.
    """
    if dropout_p > 0 and g.options.training:
        raise ValueError("attention dropout in training mode cannot be exported")
    if enable_gqa:  # key/value carry fewer heads: repeat them, then attend as usual
        heads = h.dim_size(g, query, -3)
        if not isinstance(heads, int):
            raise NeedsExportTimeValue("grouped-query attention needs the query head count at export time")
        key = _repeat_kv_heads(g, key, heads)
        value = _repeat_kv_heads(g, value, heads)
    if scale is None:
        depth = h.dim_size(g, query, -1)
        if isinstance(depth, int):
            scale_value = h.scalar_like(g, 1.0 / math.sqrt(depth), query)
        else:
            scale_value = g.op("Reciprocal", g.op("Sqrt", h.cast_like(g, depth, query)))
    else:
        scale_value = h.scalar_like(g, scale, query)
    scores = g.op("Mul", g.op("MatMul", query, _transposed_last(g, key)), scale_value)
    minus_inf = h.scalar_like(g, float("-inf"), query)
    mask: Value | None = None
    if attn_mask is None:
        if is_causal:  # every row sees key 0: never fully masked
            scores = g.op("Where", causal_mask(g, query, key), scores, minus_inf)
    elif attn_mask.dtype == ir.DataType.BOOL:
        mask = attn_mask
        if is_causal:  # combined on the mask, not on the (larger) scores
            mask = g.op("And", causal_mask(g, query, key), mask)
        scores = g.op("Where", mask, scores, minus_inf)
    else:
        mask = h.cast_like(g, attn_mask, query)
        if is_causal:
            mask = g.op("Where", causal_mask(g, query, key), mask, minus_inf)
        scores = g.op("Add", scores, mask)
    rank = h.rank_of(query)
    weights = h.softmax(g, scores, rank - 1 if rank is not None else -1, rank=rank)
    out = g.op("MatMul", weights, value)
    if mask is None:
        return out
    return _fully_masked_rows_to_zero(g, out, mask)


def _fully_masked_rows_to_zero(g: GraphContext, out: Value, mask: Value) -> Value:
    """0 where a query row can see no key, as torch's scaled_dot_product_attention gives
    (its _safe_softmax zeroes rows whose scores are all -inf); Softmax gives NaN there.

    The test reads the mask, not the scores: one ReduceMax over its last dim ([..., L, 1],
    broadcasting against the [..., L, E] output), and one Where on the output. A bool mask
    sees a key where it is true; an additive mask hides a key only with -inf (torch: a row
    of finfo.min is finite, so it attends uniformly, and Softmax agrees).
    """
    rank = h.rank_of(mask)
    axis = [rank - 1] if rank is not None else [-1]
    zero = h.scalar_like(g, 0.0, out)
    if mask.dtype == ir.DataType.BOOL:
        # ReduceMax takes no bool before opset 20 (and onnxruntime has no bool kernel)
        counts = h.reduce(g, "ReduceMax", h.cast(g, mask, ir.DataType.INT32), axis, True)
        return g.op("Where", h.cast(g, counts, ir.DataType.BOOL), out, zero)
    largest = h.reduce(g, "ReduceMax", mask, axis, True)
    # -inf is the only value below the dtype's lowest (Equal takes no floats before opset 11;
    # a NaN row stays NaN, as in torch)
    lowest = torch.finfo(tensors.to_torch_dtype(mask.dtype)).min
    hidden = g.op("Less", largest, h.scalar_like(g, lowest, mask))
    return g.op("Where", hidden, zero, out)


def _split_equal(g: GraphContext, x: Value, size: int, axis: int) -> tuple[Value, Value, Value]:
    """Three pieces of ``size`` along ``axis``."""
    return h.split_static(g, x, [size] * 3, axis)


def _split_heads(g: GraphContext, x: Value, num_heads: int, head_dim: int) -> Value:
    """[B, T, H*D] -> [B, H, T, D]; Reshape's 0 copies the (possibly dynamic) B and T."""
    shaped = g.op("Reshape", x, g.constant([0, 0, num_heads, head_dim]))
    return g.op("Transpose", shaped, perm=[0, 2, 1, 3])


def _merge_heads(g: GraphContext, x: Value, embed_dim: int) -> Value:
    """[B, H, T, D] -> [B, T, H*D]."""
    moved = g.op("Transpose", x, perm=[0, 2, 1, 3])
    return g.op("Reshape", moved, g.constant([0, 0, embed_dim]))


def _repeat_kv_heads(g: GraphContext, x: Value, heads: int) -> Value:
    """[..., Hkv, S, E] -> [..., heads, S, E], each kv head repeated heads/Hkv times in a row
    (torch's repeat_interleave on dim -3, what enable_gqa does)."""
    rank = h.rank_of(x)
    kv_heads = h.dim_size(g, x, -3)
    if rank is None or not isinstance(kv_heads, int):
        raise NeedsExportTimeValue("grouped-query attention needs the key/value rank and head count at export time")
    if kv_heads == heads:
        return x
    if heads % kv_heads:
        raise ValueError(f"{heads} query heads are not a multiple of {kv_heads} key/value heads")
    group = heads // kv_heads
    expanded = g.op(
        "Expand",
        h.unsqueeze(g, x, [rank - 2]),
        g.constant([1] * (rank - 2) + [group, 1, 1]),
    )
    static = h.static_shape(x)
    if static is not None:
        target = g.constant(static[:-3] + [heads] + static[-2:])
    else:
        shape = g.op("Shape", x)
        parts = []
        if rank > 3:
            parts.append(h.slice_static(g, shape, [0], [0], [rank - 3]))
        parts.append(g.constant([heads]))
        parts.append(h.slice_static(g, shape, [0], [rank - 2], [rank]))
        target = g.op("Concat", *parts, axis=0)
    out = g.op("Reshape", expanded, target)
    if out.shape is None and x.shape is not None:  # later symbolics read the rank
        dims = list(x.shape)
        dims[-3] = heads
        out.shape = ir.Shape(dims)
    out.dtype = x.dtype
    return out


def _masked_softmax_last(g: GraphContext, scores: Value, mask: Value | None, rank: int) -> Value:
    """Softmax over the last dim where ``mask`` (bool, true = drop) removes entries.

    A row with every entry masked is NaN, as torch's CPU _masked_softmax gives (Softmax
    over all -inf is 0/0).
    """
    if mask is not None:
        scores = g.op("Where", mask, h.scalar_like(g, float("-inf"), scores), scores)
    return h.softmax(g, scores, rank - 1, rank=rank)


def _fast_path_mask(g: GraphContext, mask: Value | None, mask_type: int | None) -> Value | None:
    """The fused kernels' mask as a bool that broadcasts against [B, H, L, S] scores.

    mask_type 0 is an [L, S] attention mask, 1 a [B, S] key padding mask, 2 (or None) a
    mask that already broadcasts to the scores. Float masks are turned into bool by the
    kernels (any nonzero entry masks), unlike F.multi_head_attention_forward's additive floats.
    """
    if mask is None:
        return None
    mask = h.cast(g, mask, ir.DataType.BOOL)
    if mask_type == 1:
        mask = h.unsqueeze(g, mask, [1, 2])
    return mask


def _multi_head_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    embed_dim: int,
    num_head: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    mask: Value | None,
    need_weights: bool,
    average_attn_weights: bool,
    mask_type: int | None,
) -> tuple[Value, Value | None]:
    """The math of aten::_native_multi_head_attention on batch-first [B, T, E] inputs."""
    head_dim = embed_dim // num_head
    if query is key and key is value:
        packed = linalg.aten_linear(g, query, qkv_weight, qkv_bias)
        q, k, v = _split_equal(g, packed, embed_dim, 2)
    else:
        weights = _split_equal(g, qkv_weight, embed_dim, 0)
        biases = _split_equal(g, qkv_bias, embed_dim, 0)
        q, k, v = (
            g.op("Add", g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0])), b)
            for x, w, b in zip((query, key, value), weights, biases)
        )
    q = _split_heads(g, q, num_head, head_dim)
    k = _split_heads(g, k, num_head, head_dim)
    v = _split_heads(g, v, num_head, head_dim)
    q = g.op("Mul", q, h.scalar_like(g, 1.0 / math.sqrt(head_dim), query))
    scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    weights = _masked_softmax_last(g, scores, _fast_path_mask(g, mask, mask_type), 4)
    context = _merge_heads(g, g.op("MatMul", weights, v), embed_dim)
    out = linalg.aten_linear(g, context, proj_weight, proj_bias)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = h.reduce(g, "ReduceMean", weights, [1], False)
    return out, weights


@onnx_symbolic("aten::_native_multi_head_attention")
def aten__native_multi_head_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    embed_dim: int,
    num_head: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    mask: Value | None = None,
    need_weights: bool = True,
    average_attn_weights: bool = True,
    mask_type: int | None = None,
) -> tuple[Value, Value]:
    """_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)

    The nn.MultiheadAttention fast path, on batch-first inputs. It lowers to MatMul/Softmax
    so it works from opset 9. The kernel's masks are boolean: float masks are made bool (any
    nonzero entry masks, so a 0/-inf mask works and other additive values do not add), and
    a fully masked row is NaN as in torch. Without need_weights the second output is the
    empty tensor the kernel returns; with it, weights are averaged over heads unless
    average_attn_weights is false.
    """
    out, weights = _multi_head_attention(
        g,
        query,
        key,
        value,
        embed_dim,
        num_head,
        qkv_weight,
        qkv_bias,
        proj_weight,
        proj_bias,
        mask,
        need_weights,
        average_attn_weights,
        mask_type,
    )
    if weights is None:
        weights = g.constant(torch.zeros(0, dtype=tensors.to_torch_dtype(query.dtype)))
    return out, weights


@onnx_symbolic("aten::_transformer_encoder_layer_fwd")
def aten__transformer_encoder_layer_fwd(
    g: GraphContext,
    src: Value,
    embed_dim: int,
    num_heads: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    norm_weight_1: Value,
    norm_bias_1: Value,
    norm_weight_2: Value,
    norm_bias_2: Value,
    ffn_weight_1: Value,
    ffn_bias_1: Value,
    ffn_weight_2: Value,
    ffn_bias_2: Value,
    mask: Value | None = None,
    mask_type: int | None = None,
) -> Value:
    """_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor

    The nn.TransformerEncoderLayer fast path (scripted code calling the layer keeps it): self
    attention as in _native_multi_head_attention, residuals, LayerNorm before (norm_first)
    or after each block, and a relu or exact-gelu feed-forward. Dropout is absent: the
    kernel only runs in inference.
    """

    def norm(x: Value, weight: Value, bias: Value) -> Value:
        return normalization.layer_norm_decomposed(g, x, [-1], weight, bias, eps)

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    attended, _ = _multi_head_attention(
        g,
        x,
        x,
        x,
        embed_dim,
        num_heads,
        qkv_weight,
        qkv_bias,
        proj_weight,
        proj_bias,
        mask,
        False,
        True,
        mask_type,
    )
    x = g.op("Add", attended, src)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    hidden = linalg.aten_linear(g, x, ffn_weight_1, ffn_bias_1)
    hidden = activations.aten_gelu(g, hidden) if use_gelu else g.op("Relu", hidden)
    x = g.op("Add", linalg.aten_linear(g, hidden, ffn_weight_2, ffn_bias_2), residual)
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return x
