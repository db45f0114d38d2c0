"""Opset 9: the base set of symbolic functions, one module per op family.

Every later opset inherits the base through the floor rule (the symbolic used for target
opset N is the one registered at the highest opset <= N); ``symbolic_opsetN.py`` holds only
what changes at N. The symbolics live in ``exporter/opset9/``, one module per op family; this
index is the only module that imports that package, and later opsets that fall back to a base
lowering reach it through the family names re-exported here (``symbolic_opset9.normalization``).
A family is imported on first use: by the registry when one of its ops is first looked up
(exporter/symbolic_index.py says which module registers which op), or through this index.

Families:
  activations: ReLU family, sigmoid/tanh, GELU, SiLU, softmax, ELU family, shrink and threshold
      ops, GLU, PReLU, RReLU.
  arithmetic: add/sub/mul/div with torch's rounding modes, pow, exp/log family, trigonometry,
      rounding, lerp/addcmul/addcdiv, fmod/remainder, conjugation of real tensors.
  attention: scaled_dot_product_attention (boolean/additive masks, causal, scale, grouped-query
      heads) and the fused nn.TransformerEncoderLayer / nn.MultiheadAttention fast-path kernels.
  bitwise: and/or/xor/not and shifts on integers and bools.
  control_flow: prim::If, prim::Loop (lists and None threaded through them), raising,
      identity checks, string builtins that fold at export time.
  convolution: every aten convolution entry point (conv1d/2d/3d, transposed, _convolution,
      conv_tbc, padding='same'), and sliding blocks (im2col/unfold, col2im/fold).
  cumulative: cummax/cummin (values and indices), logcumsumexp, cumulative_trapezoid.
  creation: to/type_as, zeros/ones/full/empty and their _like/new_ forms, arange, eye, linspace,
      windows, scalar_tensor/tensor/as_tensor.
  embedding: embedding, embedding_bag (sum/mean/max, offsets, per-sample weights,
      include_last_offset, padding_idx) and embedding_renorm.
  gather_scatter: gather, scatter/scatter_add/scatter_reduce, index_select, take,
      index_fill/index_copy/index_add.
  indexing: slice/select and their scatter forms, advanced indexing (aten::index, index_put),
      masks (masked_select/masked_scatter), nonzero, one_hot, narrow.
  interpolation: upsample_nearest*, F.interpolate as scripted code records it (__interpolate),
      affine_grid_generator.
  linalg: matmul and friends (mm, bmm, addmm, baddbmm, addmv, addr, linear), diagonals and
      triangles, vector products (dot, vdot, mv, inner, outer, cross, tensordot, einsum) and
      distances (cdist, pairwise, cosine similarity).
  logic: eq/ne/lt/le/gt/ge, where, masked_fill, clamp, NaN/inf classification, elementwise
      maximum/minimum, logical ops.
  losses: mse, kl_div, l1, huber, smooth_l1, binary_cross_entropy_with_logits, nll_loss (1-d,
      2-d, N-d) and cross_entropy_loss (class indices or probabilities, label smoothing,
      ignore_index, weights).
  matrix_functions: the inverse (unrolled Gauss-Jordan), matrix_power, multi_dot, vander,
      block_diag.
  normalization: batch_norm, layer_norm (and native_layer_norm), group_norm, instance_norm,
      weight_norm, rms_norm.
  optionals: `x is None` checks, unchecked_cast, and None flowing out of If/Loop as ONNX
      optionals (opset 16).
  order_statistics: quantile and nanquantile (every interpolation mode), mode.
  pooling: max/avg pooling 1d-3d (ceil_mode, count_include_pad, divisor_override), pooling with
      indices, adaptive average and max pooling.
  primitives: Int/Float/Bool conversions, NumToTensor, list and tuple construction and
      unpacking, item, tensor queries (dim, shape, dtype, device, layout) and aliases.
  random_ops: rand/randn/randint (and _like forms), uniform, normal, exponential, bernoulli,
      multinomial, standard gamma and Dirichlet, dropout variants.
  recurrent: LSTM/GRU/RNN layers (bidirectional, multi-layer, proj_size, batch_first), their
      cells, pack_padded_sequence and pad_packed_sequence.
  reductions: sum/mean/prod, all/any, max/min with and without indices, argmax/argmin,
      amax/amin, logsumexp, cumsum/cumprod, var/std (and _mean), vector and matrix norms.
  repeat_pad: repeat/tile/repeat_interleave, expand-like broadcasts, meshgrid, cartesian_prod,
      combinations, as_strided/unfold, constant/reflection/replication/circular padding.
  script_dicts: TorchScript dict builtins (d[k] = v, d[k], get, setdefault, pop, del, update,
      len, keys/values/items) on dicts whose keys are export-time constants.
  script_lists: TorchScript list builtins (len, indexing, append/insert/pop/del, reverse, clear,
      list(), in) on export-time and run-time lists.
  shape: view/reshape/flatten/unflatten, permute/transpose/movedim, squeeze/unsqueeze, expand,
      size, stride, flip, roll, fftshift, pixel_shuffle, channel_shuffle.
  sorting: topk, sort, argsort, msort, bucketize, searchsorted, median, kthvalue,
      unique_consecutive (unique lives in symbolic_opset11).
  script_dicts: TorchScript dict builtins on export-time dicts (constant keys): dict(),
      item assignment and lookup, keys/values/items, len, get, pop, update, copies; list.copy().
  special_functions: copysign, heaviside, sinc, float_power, ldexp, special_entr, isreal.
  splitting: cat/stack/hstack/vstack/column_stack/dstack/atleast_*, split/chunk/tensor_split/
      unbind/hsplit/vsplit/dsplit and the ConstantChunk/ConstantSplit prims.
  statistics: dist, renorm, pdist, cov, corrcoef.
  torchvision_ops: torchvision's custom ops (torchvision::nms, roi_align, roi_pool,
      deform_conv2d), each registered at the opset where ONNX has its op (9, 10/16, 10, 19).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the families, imported on first use by __getattr__ below
    from exporter.opset9 import (
        activations,
        arithmetic,
        attention,
        bitwise,
        control_flow,
        convolution,
        creation,
        cumulative,
        embedding,
        gather_scatter,
        indexing,
        interpolation,
        linalg,
        logic,
        losses,
        matrix_functions,
        normalization,
        optionals,
        order_statistics,
        pooling,
        primitives,
        random_ops,
        recurrent,
        reductions,
        repeat_pad,
        script_dicts,
        script_lists,
        shape,
        sorting,
        special_functions,
        splitting,
        statistics,
        torchvision_ops,
    )

__all__ = [
    "activations",
    "arithmetic",
    "attention",
    "bitwise",
    "control_flow",
    "convolution",
    "creation",
    "cumulative",
    "embedding",
    "gather_scatter",
    "indexing",
    "interpolation",
    "linalg",
    "logic",
    "losses",
    "matrix_functions",
    "normalization",
    "optionals",
    "order_statistics",
    "pooling",
    "primitives",
    "random_ops",
    "recurrent",
    "reductions",
    "repeat_pad",
    "script_dicts",
    "script_lists",
    "shape",
    "sorting",
    "special_functions",
    "splitting",
    "statistics",
    "torchvision_ops",
]


def __getattr__(name: str) -> ModuleType:
    """A family module, imported on first use (``from exporter.symbolic_opset9 import linalg``).

    Families are not imported with this index: the registry imports the family of an op when
    the op is first looked up (exporter/symbolic_index.py), so an export loads only what its
    graph uses.
    """
    if name in __all__:
        return importlib.import_module(f"exporter.opset9.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
