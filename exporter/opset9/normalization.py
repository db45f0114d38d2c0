"""Normalization: batch_norm, layer_norm (and native_layer_norm), group_norm, instance_norm,
weight_norm, rms_norm.

ONNX idioms: BatchNormalization in eval; group and instance norm share one
InstanceNormalization kernel; layer_norm and rms_norm are decomposed with Pow(x, 2) below
their ONNX ops (17 and 23) so onnxruntime fuses them into one kernel; half inputs compute in
float32 (``reductions.upcast_half``).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.opset9 import reductions
from exporter.registry import onnx_symbolic

Value = ir.Value


def _channel_param(g: GraphContext, value: Value | None, like: Value, fill: float) -> Value:
    if value is not None:
        return value
    channels = h.dim_size(g, like, 1)
    if not isinstance(channels, int):
        raise NeedsExportTimeValue("batch_norm without affine parameters needs a static channel count")
    return g.constant(torch.full((channels,), fill, dtype=tensors.to_torch_dtype(like.dtype)))


@onnx_symbolic("aten::batch_norm")
def aten_batch_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value | None,
    bias: Value | None,
    running_mean: Value | None,
    running_var: Value | None,
    training: bool,
    momentum: float,
    eps: float,
) -> Value:
    """batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor

    In training mode (or without running statistics) the batch statistics normalize, as in
    torch's forward; the running averages are not updated by an inference graph.
    """
    del momentum
    scale = _channel_param(g, weight, input, 1.0)
    shift = _channel_param(g, bias, input, 0.0)
    if not training and running_mean is not None and running_var is not None:
        return g.op("BatchNormalization", input, scale, shift, running_mean, running_var, epsilon=eps)
    rank = h.rank_of(input)
    if rank is None:
        raise NeedsExportTimeValue("batch_norm with batch statistics needs the input rank")
    axes = [0] + list(range(2, rank))
    mean = h.reduce(g, "ReduceMean", input, axes, True)
    centered = g.op("Sub", input, mean)
    var = h.reduce(g, "ReduceMean", g.op("Mul", centered, centered), axes, True)
    normalized = g.op("Div", centered, g.op("Sqrt", g.op("Add", var, h.scalar_like(g, eps, input))))
    param_shape = g.constant([1, -1] + [1] * (rank - 2))
    return g.op(
        "Add",
        g.op("Mul", normalized, g.op("Reshape", scale, param_shape)),
        g.op("Reshape", shift, param_shape),
    )


def layer_norm_decomposed(
    g: GraphContext,
    input: Value,
    axes: list[int],
    weight: Value | None,
    bias: Value | None,
    eps: float,  # noqa: A002
) -> Value:
    """LayerNorm from primitives; half inputs are normalized in float32 as torch does.

    The variance squares with Pow(centered, 2), not Mul(centered, centered): onnxruntime's
    LayerNormFusion only matches the Pow form and then runs one LayerNormalization kernel.
    """
    x = input
    low_precision = x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
    if low_precision:
        x = h.cast(g, x, ir.DataType.FLOAT)
    mean = h.reduce(g, "ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean)
    square = g.op("Pow", centered, h.scalar_like(g, 2.0, centered))
    var = h.reduce(g, "ReduceMean", square, axes, True)
    eps_value = g.constant(eps, x.dtype if x.dtype is not None else ir.DataType.FLOAT)
    out = g.op("Div", centered, g.op("Sqrt", g.op("Add", var, eps_value)))
    if low_precision:
        out = h.cast(g, out, input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    if bias is not None:
        out = g.op("Add", out, bias)
    return out


@onnx_symbolic("aten::layer_norm")
def aten_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int],
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor"""
    axes = [-(i + 1) for i in range(len(normalized_shape))][::-1]
    return layer_norm_decomposed(g, input, axes, weight, bias, eps)


def _moments(g: GraphContext, x: Value, axes: Sequence[int]) -> tuple[Value, Value]:
    """Mean and biased variance over ``axes`` (kept), from primitives every opset has."""
    mean = h.reduce(g, "ReduceMean", x, list(axes), True)
    centered = g.op("Sub", x, mean)
    var = h.reduce(g, "ReduceMean", g.op("Mul", centered, centered), list(axes), True)
    return mean, var


def _channel_shaped(g: GraphContext, param: Value, rank: int) -> Value:
    """A per-channel [C] parameter reshaped to [C, 1, ...] to broadcast over [N, C, *]."""
    return g.op("Reshape", param, g.constant([-1] + [1] * (rank - 2)))


def _affine(g: GraphContext, x: Value, weight: Value | None, bias: Value | None, rank: int) -> Value:
    if weight is not None:
        x = g.op("Mul", x, h.cast_like(g, _channel_shaped(g, weight, rank), x))
    if bias is not None:
        x = g.op("Add", x, h.cast_like(g, _channel_shaped(g, bias, rank), x))
    return x


@onnx_symbolic("aten::group_norm")
def aten_group_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    num_groups: int,
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor

    InstanceNormalization over the input viewed as [N, G, -1]: its scale and bias have one
    entry per group, and num_groups is an export-time int, so no channel count is needed. One
    kernel instead of the dozen ops of a decomposition (torch's exporter does the same); the
    weight and bias of the channels apply afterwards. Half inputs are normalized in float32.
    """
    rank = h.known_rank(input, "group_norm")
    x = reductions.upcast_half(g, input)
    grouped = g.op("Reshape", x, g.constant([0, num_groups, -1]))
    dtype = tensors.to_torch_dtype(x.dtype) if x.dtype is not None else torch.float32
    normalized = g.op(
        "InstanceNormalization",
        grouped,
        g.constant(torch.ones(num_groups, dtype=dtype)),
        g.constant(torch.zeros(num_groups, dtype=dtype)),
        epsilon=eps,
    )
    out = g.op("Reshape", normalized, h.shape_of(g, input))
    out = h.cast(g, out, input.dtype)
    return _affine(g, out, weight, bias, rank)


@onnx_symbolic("aten::instance_norm")
def aten_instance_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value | None,
    bias: Value | None,
    running_mean: Value | None,
    running_var: Value | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
) -> Value:
    """instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor

    With the input's own statistics this is InstanceNormalization, one kernel, when its
    per-channel scale and bias can be built (the weight and bias given, or the channel count
    static). use_input_stats=False (track_running_stats in eval) normalizes with the running
    statistics, which InstanceNormalization cannot: that path, and a dynamic channel count
    without weights, are decomposed.
    """
    del momentum
    rank = h.known_rank(input, "instance_norm")
    x = reductions.upcast_half(g, input)
    if use_input_stats or running_mean is None or running_var is None:
        channels = h.dim_size(g, input, 1)
        if (weight is not None and bias is not None) or isinstance(channels, int):
            dtype = tensors.to_torch_dtype(x.dtype) if x.dtype is not None else torch.float32
            scale = h.cast_like(g, weight, x) if weight is not None else g.constant(torch.ones(channels, dtype=dtype))
            shift = h.cast_like(g, bias, x) if bias is not None else g.constant(torch.zeros(channels, dtype=dtype))
            out = g.op("InstanceNormalization", x, scale, shift, epsilon=eps)
            return h.cast(g, out, input.dtype)
    eps_value = h.scalar_like(g, eps, x)
    if use_input_stats or running_mean is None or running_var is None:
        mean, var = _moments(g, x, list(range(2, rank)))
    else:
        mean = h.cast_like(g, _channel_shaped(g, running_mean, rank), x)
        var = h.cast_like(g, _channel_shaped(g, running_var, rank), x)
    out = g.op("Div", g.op("Sub", x, mean), g.op("Sqrt", g.op("Add", var, eps_value)))
    out = h.cast(g, out, input.dtype)
    return _affine(g, out, weight, bias, rank)


@onnx_symbolic("aten::native_layer_norm")
def aten_native_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int] | Sequence[Value],
    weight: Value | None,
    bias: Value | None,
    eps: float,
) -> tuple[Value, Value, Value]:
    """native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)

    The mean and reciprocal standard deviation outputs keep the normalized dims as size 1 and
    the input dtype, as torch returns them; half inputs are reduced in float32.
    """
    axes = list(range(-len(normalized_shape), 0))
    x = reductions.upcast_half(g, input)
    mean, var = _moments(g, x, axes)
    rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, h.scalar_like(g, eps, x))))
    out = h.cast(g, g.op("Mul", g.op("Sub", x, mean), rstd), input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    if bias is not None:
        out = g.op("Add", out, bias)
    return out, h.cast(g, mean, input.dtype), h.cast(g, rstd, input.dtype)


@onnx_symbolic("aten::_weight_norm")
def aten__weight_norm(ctx: GraphContext, v: Value, g: Value, dim: int = 0) -> Value:
    """_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor: v * g / ||v|| over every dim but ``dim``

    dim=-1 means the norm of the whole tensor (torch's norm_except_dim), not the last dim.
    The context parameter is named ``ctx`` here because the schema argument is called ``g``.
    """
    rank = h.known_rank(v, "_weight_norm")
    if dim == -1:
        axes = list(range(rank))
    else:
        dim = h.normalize_dim(dim, rank)
        axes = [a for a in range(rank) if a != dim]
    x = reductions.upcast_half(ctx, v)
    square_sum = h.reduce(ctx, "ReduceSumSquare", x, axes, True) if axes else ctx.op("Mul", x, x)
    norm = h.cast(ctx, ctx.op("Sqrt", square_sum), v.dtype)
    return ctx.op("Mul", v, ctx.op("Div", h.cast_like(ctx, g, v), norm))


@onnx_symbolic("aten::rms_norm")
def aten_rms_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int] | Sequence[Value],
    weight: Value | None = None,
    eps: float | None = None,
) -> Value:
    """rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor

    torch upcasts half inputs to float32, and eps=None means the epsilon of that compute type
    (float32's for half, not float16's); the weight multiplies after the cast back. The square
    is Pow(x, 2), not Mul(x, x): onnxruntime's SimplifiedLayerNormFusion only matches Pow, and
    then runs the whole norm as one kernel (it needs the weight; without one nothing fuses).
    """
    axes = list(range(-len(normalized_shape), 0))
    x = reductions.upcast_half(g, input)
    if eps is None:
        eps = float(torch.finfo(tensors.to_torch_dtype(x.dtype)).eps)
    mean_square = h.reduce(g, "ReduceMean", g.op("Pow", x, h.scalar_like(g, 2.0, x)), axes, True)
    rms = g.op("Sqrt", g.op("Add", mean_square, h.scalar_like(g, eps, x)))
    out = h.cast(g, g.op("Div", x, rms), input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    return out
