"""Quantization ops: quantize_per_tensor, dequantize, fake quantization, and the quantized::
elementwise (add, mul, cat), activation and normalization ops of eager-quantized models.

ONNX idioms: QuantizeLinear/DequantizeLinear appear at opset 10; a quantized value is its
integer storage with its scale and zero point remembered (exporter/quantization.py), and each
quantized:: op computes in float on dequantized inputs, then requantizes to its output qparams.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Quantized
from exporter.quantization import (
    QUANTIZED_IR,
    dequantize,
    qparams,
    quantize,
    requantize_like,
    scalar_value,
)
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import activations, normalization

Value = ir.Value


def fake_quantize(
    g: GraphContext,
    x: Value,
    scale: float | Value,
    zero_point: int | Value,
    quant_min: int,
    quant_max: int,
    axis: int | None,
) -> Value:
    """QuantizeLinear + DequantizeLinear with any [quant_min, quant_max] of at most 256 levels.

    The full uint8 and int8 ranges are plain Q/DQ. Other ranges (7-bit [0, 127], 4-bit ...)
    quantize to uint8 with the zero point shifted by -quant_min, so quant_min lands on 0
    and the lower clamp comes for free; the upper clamp is a Min with (quant_max - zp) *
    scale, which is exactly the float torch produces there. (torch's exporter only accepts
    the two full ranges, and (0, 127) at 13.)
    """
    if quant_max - quant_min > 255:
        raise ValueError(f"fake quantization to [{quant_min}, {quant_max}] has more than 256 levels")
    original = x.dtype
    if original != ir.DataType.FLOAT:
        x = h.cast(g, x, ir.DataType.FLOAT)
    if (quant_min, quant_max) == (-128, 127):
        qdtype, shift = ir.DataType.INT8, 0
    else:
        qdtype, shift = ir.DataType.UINT8, quant_min
    full = (quant_min, quant_max) in ((0, 255), (-128, 127))
    rank = h.rank_of(x)
    if axis is None:
        if isinstance(zero_point, ir.Value) or isinstance(scale, ir.Value):
            zp_float = h.cast(g, scalar_value(g, zero_point, ir.DataType.INT32), ir.DataType.FLOAT)
            scale_v = scalar_value(g, scale, ir.DataType.FLOAT)
            shifted = g.op("Sub", zp_float, g.constant(float(shift), ir.DataType.FLOAT))
            upper = g.op("Mul", g.op("Sub", g.constant(float(quant_max), ir.DataType.FLOAT), zp_float), scale_v)
            q = quantize(g, x, scale_v, shifted, qdtype)
        else:
            scale32 = torch.tensor(scale, dtype=torch.float32)
            upper = g.constant(torch.tensor(float(quant_max - zero_point), dtype=torch.float32) * scale32)
            q = quantize(g, x, float(scale32), zero_point - shift, qdtype)
    else:
        if rank is None:
            raise NeedsExportTimeValue("per-channel fake quantization needs the input rank")
        axis = h.normalize_dim(axis, rank)
        assert isinstance(scale, ir.Value) and isinstance(zero_point, ir.Value)
        scale_v = h.cast(g, scale, ir.DataType.FLOAT)
        zp_float = h.cast(g, zero_point, ir.DataType.FLOAT)
        shifted = g.op("Sub", zp_float, g.constant(float(shift), ir.DataType.FLOAT))
        upper = g.op("Mul", g.op("Sub", g.constant(float(quant_max), ir.DataType.FLOAT), zp_float), scale_v)
        trailing = list(range(1, rank - axis))
        if trailing:
            upper = h.unsqueeze(g, upper, trailing)
        q = quantize(g, x, scale_v, shifted, qdtype, axis=axis)
    out = dequantize(g, q)
    if not full:
        out = g.op("Min", out, upper)
    return h.cast(g, out, original) if original != ir.DataType.FLOAT else out


# ============================================================================================
# Quantize / dequantize
# ============================================================================================


@onnx_symbolic("aten::quantize_per_tensor", opset=10)
def aten_quantize_per_tensor(
    g: GraphContext, self: Value, scale: float | Value, zero_point: int | Value, dtype: torch.dtype
) -> Value:
    """quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor (and .tensor_qparams)

    The result is the integer storage (uint8 for quint8, int8 for qint8, int32 for qint32)
    with its scale and zero point remembered for the ops that consume it. torch computes
    x * (1 / scale) where QuantizeLinear divides: results can differ by one step at exact
    ties, both round half to even.
    """
    if dtype not in QUANTIZED_IR:
        raise ValueError(f"quantize_per_tensor to {dtype} (expected quint8, qint8 or qint32)")
    out = quantize(g, self, scale, zero_point, QUANTIZED_IR[dtype])
    return out


@onnx_symbolic("aten::dequantize", opset=10, quantized=Quantized.INTEGERS)
def aten_dequantize(g: GraphContext, self: Value) -> Value:
    """dequantize.self(Tensor self) -> Tensor

    A float tensor is returned unchanged, as torch does; a quantized one (integer storage
    with remembered qparams) goes through DequantizeLinear.
    """
    if h.is_floating(self):
        return self
    return dequantize(g, self)


@onnx_symbolic("aten::dequantize.tensor", opset=10)
def aten_dequantize_tensor(g: GraphContext, qtensor: Value) -> Value:
    """dequantize.tensor(Tensor qtensor) -> Tensor"""
    return aten_dequantize(g, qtensor)


@onnx_symbolic("aten::fake_quantize_per_tensor_affine", opset=10)
def aten_fake_quantize_per_tensor_affine(
    g: GraphContext,
    self: Value,
    scale: float | Value,
    zero_point: int | Value,
    quant_min: int,
    quant_max: int,
) -> Value:
    """fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max) -> Tensor (and .tensor_qparams)

    Any range of at most 256 levels (not only the full uint8/int8 ones) via a shifted zero
    point and an upper clamp; see fake_quantize.
    """
    return fake_quantize(g, self, scale, zero_point, quant_min, quant_max, None)


# ============================================================================================
# Elementwise and concatenation
# ============================================================================================


@onnx_symbolic("quantized::add", opset=10)
def quantized_add(g: GraphContext, qa: Value, qb: Value, scale: float, zero_point: int) -> Value:
    """add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc

    The operands may have different scales: each is dequantized with its own."""
    return requantize_like(g, g.op("Add", dequantize(g, qa), dequantize(g, qb)), qa, scale, zero_point)


@onnx_symbolic("quantized::add_relu", opset=10)
def quantized_add_relu(g: GraphContext, qa: Value, qb: Value, scale: float, zero_point: int) -> Value:
    """add_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc"""
    total = g.op("Add", dequantize(g, qa), dequantize(g, qb))
    return requantize_like(g, g.op("Relu", total), qa, scale, zero_point)


@onnx_symbolic("quantized::mul", opset=10)
def quantized_mul(g: GraphContext, qa: Value, qb: Value, scale: float, zero_point: int) -> Value:
    """mul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc"""
    return requantize_like(g, g.op("Mul", dequantize(g, qa), dequantize(g, qb)), qa, scale, zero_point)


@onnx_symbolic("quantized::cat", opset=10)
def quantized_cat(g: GraphContext, qx: Sequence[Value], dim: int, scale: float | None, zero_point: int | None) -> Value:
    """cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor

    Without output qparams torch keeps those of the first input."""
    if not qx:
        raise ValueError("quantized::cat of an empty list")
    rank = h.rank_of(qx[0])
    axis = h.normalize_dim(dim, rank) if rank is not None else dim
    joined = g.op("Concat", *[dequantize(g, q) for q in qx], axis=axis)
    if scale is None or zero_point is None:
        first_scale, first_zp, first_axis = qparams(qx[0])
        if first_axis is not None:
            raise ValueError("quantized::cat without output qparams of a per-channel input")
        out = quantize(g, joined, first_scale, first_zp, qx[0].dtype)
        return out
    return requantize_like(g, joined, qx[0], scale, zero_point)


# ============================================================================================
# Activations
# ============================================================================================


@onnx_symbolic("quantized::leaky_relu", opset=10)
def quantized_leaky_relu(
    g: GraphContext, qx: Value, negative_slope: float, inplace: bool, output_scale: float, output_zero_point: int
) -> Value:
    """leaky_relu(Tensor qx, Scalar negative_slope, bool inplace, float output_scale, int output_zero_point) -> Tensor

    inplace only concerns torch's memory: the graph value is new either way."""
    del inplace
    y = g.op("LeakyRelu", dequantize(g, qx), alpha=float(negative_slope))
    return requantize_like(g, y, qx, output_scale, output_zero_point)


@onnx_symbolic("quantized::hardswish", opset=10)
def quantized_hardswish(g: GraphContext, input: Value, output_scale: float, output_zero_point: int) -> Value:  # noqa: A002
    """hardswish(Tensor input, float output_scale, int output_zero_point) -> Tensor"""
    return requantize_like(
        g, activations.aten_hardswish(g, dequantize(g, input)), input, output_scale, output_zero_point
    )


@onnx_symbolic("quantized::sigmoid", opset=10)
def quantized_sigmoid(g: GraphContext, qx: Value, output_scale: float, output_zero_point: int) -> Value:
    """sigmoid(Tensor qx, float output_scale, int output_zero_point) -> Tensor"""
    return requantize_like(g, g.op("Sigmoid", dequantize(g, qx)), qx, output_scale, output_zero_point)


# ============================================================================================
# Normalization
# ============================================================================================


@onnx_symbolic("quantized::group_norm", opset=10)
def quantized_group_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    num_groups: int,
    weight: Value | None,
    bias: Value | None,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor

    Normalized in float32 on the dequantized input (torch's kernel also works in float)."""
    y = normalization.aten_group_norm(g, dequantize(g, input), num_groups, weight, bias, eps)
    return requantize_like(g, y, input, output_scale, output_zero_point)


@onnx_symbolic("quantized::instance_norm", opset=10)
def quantized_instance_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value | None,
    bias: Value | None,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """instance_norm(Tensor input, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor

    Always with the input's statistics: the quantized op has no running statistics."""
    y = normalization.aten_instance_norm(g, dequantize(g, input), weight, bias, None, None, True, 0.0, eps)
    return requantize_like(g, y, input, output_scale, output_zero_point)


@onnx_symbolic("quantized::layer_norm", opset=10)
def quantized_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int],
    weight: Value | None,
    bias: Value | None,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, float output_scale, int output_zero_point) -> Tensor"""
    y = normalization.aten_layer_norm(g, dequantize(g, input), normalized_shape, weight, bias, eps)
    return requantize_like(g, y, input, output_scale, output_zero_point)


def _quantized_batch_norm(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
    relu: bool,
) -> Value:
    x = dequantize(g, qx)
    y = normalization.aten_batch_norm(g, x, weight, bias, mean, var, False, 0.0, eps)
    if relu:
        y = g.op("Relu", y)
    return requantize_like(g, y, qx, output_scale, output_zero_point)


@onnx_symbolic("quantized::batch_norm", opset=10)
def quantized_batch_norm(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor

    Inference batch norm (running statistics) on the dequantized input; the 1d/2d/3d and
    _relu variants below differ only in the rank torch checks and the fused Relu."""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, False)


@onnx_symbolic("quantized::batch_norm_relu", opset=10)
def quantized_batch_norm_relu(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, True)


@onnx_symbolic("quantized::batch_norm1d", opset=10)
def quantized_batch_norm1d(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm1d(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, False)


@onnx_symbolic("quantized::batch_norm1d_relu", opset=10)
def quantized_batch_norm1d_relu(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm1d_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, True)


@onnx_symbolic("quantized::batch_norm2d", opset=10)
def quantized_batch_norm2d(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm2d(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, False)


@onnx_symbolic("quantized::batch_norm2d_relu", opset=10)
def quantized_batch_norm2d_relu(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm2d_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, True)


@onnx_symbolic("quantized::batch_norm3d", opset=10)
def quantized_batch_norm3d(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm3d(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, False)


@onnx_symbolic("quantized::batch_norm3d_relu", opset=10)
def quantized_batch_norm3d_relu(
    g: GraphContext,
    qx: Value,
    weight: Value | None,
    bias: Value | None,
    mean: Value,
    var: Value,
    eps: float,
    output_scale: float,
    output_zero_point: int,
) -> Value:
    """batch_norm3d_relu(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_batch_norm(g, qx, weight, bias, mean, var, eps, output_scale, output_zero_point, True)
