"""Opset 10: what changes for the base symbolics.

ONNX changes at opset 10 that this module reacts to:
- Slice takes starts/ends/axes/steps as inputs (symbolic_helper.slice_static/slice_dynamic
  branch on it); dynamic bounds become possible, and aten::slice with a step,
  aten::flip (step -1), aten::roll of a run-time dim (with Mod) and aten::chunk (and
  unsafe_chunk, prim::ConstantChunk) of a run-time dim slice instead of gathering.
- MaxPool/AveragePool gain ``ceil_mode`` and MaxPool ``dilations`` (pool_attributes).
- Mod appears (integer remainder, fmod).
- QuantizeLinear/DequantizeLinear appear: quantize_per_tensor, dequantize, fake quantization
  and the quantized:: ops of eager-quantized models lower to the QDQ form (see
  exporter/quantization.py); packed weights become int8 constants + DequantizeLinear.
- TopK takes k as an input (symbolic_helper.topk): topk, sort and argsort accept a k (a dim
  size) known only at run time.
- Resize appears (nearest upsampling by factors).

The base symbolics already branch in the helpers where the op signature changed, so only
ops whose lowering itself changes are re-registered here.
"""

from __future__ import annotations

import dataclasses
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
from exporter.runtime_list import RuntimeList
from exporter.symbolic_opset9 import (
    activations,
    convolution,
    indexing,
    normalization,
    shape,
    sorting,
    splitting,
)

Value = ir.Value


@onnx_symbolic("aten::remainder", opset=10)
def aten_remainder(g: GraphContext, self: Value, other: Value) -> Value:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor

    Mod with fmod=0 takes the divisor's sign, which is torch's remainder for integers; floats
    need fmod=1 (and the same sign fix-up as opset 9), so they keep the floor formula.
    """
    if h.is_floating(self):
        quotient = g.op("Floor", g.op("Div", self, other))
        return g.op("Sub", self, g.op("Mul", quotient, other))
    return g.op("Mod", self, other, fmod=0)


@onnx_symbolic("aten::fmod", opset=10)
def aten_fmod_10(g: GraphContext, self: Value, other: Value) -> Value:
    """fmod.Tensor(Tensor self, Tensor other) -> Tensor: Mod with fmod=1 takes the dividend's
    sign (C fmod), exactly, for every dtype."""
    return g.op("Mod", self, h.cast(g, other, self.dtype), fmod=1)


# ============================================================================================
# Quantization (QuantizeLinear/DequantizeLinear appear at opset 10)
# ============================================================================================


def _constant_weight(g: GraphContext, weight: torch.Tensor, transpose: bool = False) -> Value:
    """A quantized torch weight as an int8 constant + DequantizeLinear (float32 result).

    Per-channel weights need DequantizeLinear's axis (opset 13); below it the weight is
    dequantized at export time, which gives the same float values. At opset 10 the weight
    is folded too, so onnxruntime sees no QDQ weight pattern to fuse (see _add_bias).
    """
    if not weight.is_quantized:
        w = weight.detach().float()
        return g.constant(w.t().contiguous() if transpose else w)
    per_channel = weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric)
    if g.opset < 11 or (per_channel and g.opset < 13):
        w = weight.dequantize()
        return g.constant(w.t().contiguous() if transpose else w)
    ints = weight.int_repr()
    storage = ints.dtype
    if transpose:
        ints = ints.t().contiguous()
    q = g.constant(ints)
    if per_channel:
        axis = weight.q_per_channel_axis()
        if transpose:
            axis = 1 - axis
        scale = g.constant(weight.q_per_channel_scales().float())
        zp = g.constant(weight.q_per_channel_zero_points().to(storage))
        out = g.op("DequantizeLinear", q, scale, zp, axis=axis)
    else:
        scale = g.constant(torch.tensor(weight.q_scale(), dtype=torch.float32))
        zp = g.constant(torch.tensor(weight.q_zero_point(), dtype=storage))
        out = g.op("DequantizeLinear", q, scale, zp)
    out.dtype = ir.DataType.FLOAT
    out.shape = ir.Shape(list(ints.shape))
    return out


@dataclasses.dataclass
class _Packed:
    """Unpacked weights of a quantized linear or convolution.convolution, as torch tensors and lists."""

    weight: torch.Tensor
    bias: torch.Tensor | None
    stride: list[int] = dataclasses.field(default_factory=list)
    padding: list[int] = dataclasses.field(default_factory=list)
    dilation: list[int] = dataclasses.field(default_factory=list)
    output_padding: list[int] = dataclasses.field(default_factory=list)
    groups: int = 1
    transposed: bool = False


def _unpack_linear(packed: object) -> _Packed:
    """Linear weights from a _Packed record, a LinearPackedParamsBase object, or its
    serialized state (weight, bias), which is what torch._C._jit_pass_lower_graph returns
    for a module's packed params."""
    if isinstance(packed, _Packed):
        return packed
    if isinstance(packed, torch.ScriptObject):
        weight, bias = torch.ops.quantized.linear_unpack(packed)
        return _Packed(weight, bias)
    if isinstance(packed, tuple) and len(packed) == 2 and isinstance(packed[0], torch.Tensor):
        return _Packed(packed[0], packed[1])
    raise NeedsExportTimeValue(f"expected packed linear weights known at export time, got {type(packed).__name__}")


def _conv_from_config(weight: torch.Tensor, bias: torch.Tensor | None, config: Sequence[int]) -> _Packed:
    """Conv packed-params state: config is [spatial, stride x s, padding x s, dilation x s,
    output_padding x s, groups, flags] (flags bit 0: transposed)."""
    config = [int(c) for c in config]
    s = config[0]
    return _Packed(
        weight,
        bias,
        config[1 : 1 + s],
        config[1 + s : 1 + 2 * s],
        config[1 + 2 * s : 1 + 3 * s],
        config[1 + 3 * s : 1 + 4 * s],
        config[1 + 4 * s],
        bool(config[2 + 4 * s] & 1),
    )


def _unpack_conv_object(packed: object) -> _Packed:
    if isinstance(packed, _Packed):
        return dataclasses.replace(packed)
    if isinstance(packed, torch.ScriptObject):
        weight, bias = packed.unpack()
        return _Packed(
            weight,
            bias,
            list(packed.stride()),
            list(packed.padding()),
            list(packed.dilation()),
            list(packed.output_padding()),
            int(packed.groups()),
            bool(packed.transpose()),
        )
    # serialized state (torch._C._jit_pass_lower_graph turns packed params into it):
    # version "2": ("2", [config tensor, weight], [bias?]); version "3": ("3", config list, [weight, bias?])
    if isinstance(packed, tuple) and packed and packed[0] == "2":
        config, weight = packed[1][0], packed[1][1]
        bias = packed[2][0] if len(packed) > 2 and packed[2] else None
        return _conv_from_config(weight, bias, config.tolist())
    if isinstance(packed, tuple) and packed and packed[0] == "3":
        tensors_ = list(packed[2])
        return _conv_from_config(tensors_[0], tensors_[1] if len(tensors_) > 1 else None, packed[1])
    raise NeedsExportTimeValue(
        f"expected packed convolution.convolution weights known at export time, got {type(packed).__name__}"
    )


def _unpack_conv(packed: object, spatial: int) -> _Packed:
    out = _unpack_conv_object(packed)
    if spatial == 1 and out.weight.dim() == 4:
        # 1-d convolutions are packed as 2-d ones with a unit height
        out.weight = out.weight.squeeze(2)
        out.stride, out.padding, out.dilation = out.stride[-1:], out.padding[-1:], out.dilation[-1:]
        out.output_padding = out.output_padding[-1:]
    return out


def _bias_value(g: GraphContext, bias: torch.Tensor | None) -> Value | None:
    return None if bias is None else g.constant(bias.detach().float())


def _add_bias(g: GraphContext, y: Value, bias: torch.Tensor, trailing: int) -> Value:
    """y + bias, with ``trailing`` unit dims on the bias (channel axis 1 of a convolution.convolution).

    At opset 10 it is y - (-bias), which is the same float: onnxruntime fuses MatMul + Add
    (and Conv's bias input) fed by DequantizeLinear into a quantized bias with a Round node,
    which opset 10 does not have, and the model then fails to load.
    """
    b = bias.detach().float().reshape([-1] + [1] * trailing)
    if g.opset < 11:
        return g.op("Sub", y, g.constant(-b))
    return g.op("Add", y, g.constant(b))


def _quantized_conv(
    g: GraphContext,
    qx: Value,
    packed: object,
    output_scale: float,
    output_zero_point: int,
    spatial: int,
    relu: bool = False,
) -> Value:
    p = _unpack_conv(packed, spatial)
    if p.weight.dim() != spatial + 2:
        raise ValueError(f"expected a {spatial + 2}-d weight, got {p.weight.dim()}-d")
    weight = _constant_weight(g, p.weight)
    output_padding = h.spatial_list(p.output_padding or [0], spatial)
    stride, dilation = h.spatial_list(p.stride, spatial), h.spatial_list(p.dilation, spatial)
    # torch's quantized kernels accept an output padding as large as the stride and dilation,
    # which onnxruntime's ConvTranspose refuses: compute the full result and pad / crop it.
    wide = p.transposed and any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation))
    bias = _bias_value(g, p.bias) if g.opset >= 11 and not wide else None
    y = convolution.convolution(
        g,
        dequantize(g, qx),
        weight,
        bias,
        p.stride,
        [0] * spatial if wide else p.padding,
        p.dilation,
        p.transposed,
        [0] * spatial if wide else output_padding,
        p.groups,
    )
    if wide:
        padding = h.spatial_list(p.padding, spatial)
        grow = [max(o - pad, 0) for o, pad in zip(output_padding, padding)]
        y = h.pad(g, y, [0] * (spatial + 2), [0, 0] + grow, "constant")
        ends = [o - pad if o < pad else 2**62 for o, pad in zip(output_padding, padding)]  # < 0: from the end
        y = h.slice_static(g, y, list(range(2, spatial + 2)), padding, ends)
    if p.bias is not None and bias is None:
        y = _add_bias(g, y, p.bias, spatial)
    if relu:
        y = g.op("Relu", y)
    return requantize_like(g, y, qx, output_scale, output_zero_point)


def _quantized_linear(
    g: GraphContext,
    X: Value,
    W_prepack: object,
    Y_scale_i: float,
    Y_zero_point_i: int,
    relu: bool,  # noqa: N803
) -> Value:
    p = _unpack_linear(W_prepack)
    x = dequantize(g, X)
    weight = _constant_weight(g, p.weight, transpose=True)
    y = g.op("MatMul", x, weight)
    if p.bias is not None:
        y = _add_bias(g, y, p.bias, 0)
    if relu:
        y = g.op("Relu", y)
    return requantize_like(g, y, X, Y_scale_i, Y_zero_point_i)


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
# Packing (traced functions that pack their own weights)
# ============================================================================================


def _export_time_tensor(value: object, what: str) -> torch.Tensor | None:
    if value is None or isinstance(value, torch.Tensor):
        return value
    if isinstance(value, ir.Value) and value.const_value is not None:
        return torch.from_numpy(value.const_value.numpy().copy())
    raise NeedsExportTimeValue(f"{what} must be known at export time, got a value computed at run time")


@onnx_symbolic("quantized::linear_prepack", opset=10)
def quantized_linear_prepack(g: GraphContext, W: object, B: object = None) -> object:  # noqa: N803
    """linear_prepack(Tensor W, Tensor? B=None) -> LinearPackedParamsBase W_prepack

    Packing only reorders the weights for a CPU kernel: the exported graph keeps the
    quantized weights, so this records them for quantized::linear instead of emitting nodes.
    """
    del g
    return _Packed(_export_time_tensor(W, "the weight"), _export_time_tensor(B, "the bias"))


def _conv_prepack(
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    transposed: bool,
) -> _Packed:
    w = _export_time_tensor(weight, "the weight")
    assert w is not None
    spatial = w.dim() - 2

    def spread(values: Sequence[int]) -> list[int]:
        return list(values) * spatial if len(values) == 1 else list(values)

    return _Packed(
        w,
        _export_time_tensor(bias, "the bias"),
        spread(stride),
        spread(padding),
        spread(dilation),
        spread(output_padding) if output_padding else [0] * spatial,
        groups,
        transposed,
    )


@onnx_symbolic("quantized::conv1d_prepack", opset=10)
def quantized_conv1d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv1d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> Conv2dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, [], dilation, groups, False)


@onnx_symbolic("quantized::conv2d_prepack", opset=10)
def quantized_conv2d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> Conv2dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, [], dilation, groups, False)


@onnx_symbolic("quantized::conv3d_prepack", opset=10)
def quantized_conv3d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv3d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> Conv3dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, [], dilation, groups, False)


@onnx_symbolic("quantized::conv_transpose1d_prepack", opset=10)
def quantized_conv_transpose1d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv_transpose1d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> Conv2dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, output_padding, dilation, groups, True)


@onnx_symbolic("quantized::conv_transpose2d_prepack", opset=10)
def quantized_conv_transpose2d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv_transpose2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> Conv2dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, output_padding, dilation, groups, True)


@onnx_symbolic("quantized::conv_transpose3d_prepack", opset=10)
def quantized_conv_transpose3d_prepack(
    g: GraphContext,
    weight: object,
    bias: object,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> object:
    """conv_transpose3d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups) -> Conv3dPackedParamsBase

    Recorded for the convolution.convolution symbolic (see quantized::linear_prepack)."""
    del g
    return _conv_prepack(weight, bias, stride, padding, output_padding, dilation, groups, True)


# ============================================================================================
# Linear and convolution.convolution
# ============================================================================================


@onnx_symbolic("quantized::linear", opset=10)
def quantized_linear(
    g: GraphContext,
    X: Value,
    W_prepack: object,
    Y_scale_i: float,
    Y_zero_point_i: int,  # noqa: N803
) -> Value:
    """linear(Tensor X, LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y

    MatMul on dequantized input and weight plus a float bias: torch quantizes the bias to
    int32 with scale x_scale * w_scale, so results may differ by one output step.
    """
    return _quantized_linear(g, X, W_prepack, Y_scale_i, Y_zero_point_i, relu=False)


@onnx_symbolic("quantized::linear_relu", opset=10)
def quantized_linear_relu(
    g: GraphContext,
    X: Value,
    W_prepack: object,
    Y_scale_i: float,
    Y_zero_point_i: int,  # noqa: N803
) -> Value:
    """linear_relu(Tensor X, LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y"""
    return _quantized_linear(g, X, W_prepack, Y_scale_i, Y_zero_point_i, relu=True)


@onnx_symbolic("quantized::conv1d", opset=10)
def quantized_conv1d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv1d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor

    torch packs 1-d convolutions as 2-d ones of unit height; the weights are squeezed back."""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1)


@onnx_symbolic("quantized::conv1d_relu", opset=10)
def quantized_conv1d_relu(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv1d_relu(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1, relu=True)


@onnx_symbolic("quantized::conv2d.new", opset=10)
def quantized_conv2d_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv2d.new(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor

    Registered for this overload only: the legacy one (stride/padding/... beside the packed
    weight) is reported as unsupported."""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2)


@onnx_symbolic("quantized::conv2d_relu.new", opset=10)
def quantized_conv2d_relu_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv2d_relu.new(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2, relu=True)


@onnx_symbolic("quantized::conv3d.new", opset=10)
def quantized_conv3d_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv3d.new(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3)


@onnx_symbolic("quantized::conv3d_relu.new", opset=10)
def quantized_conv3d_relu_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv3d_relu.new(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3, relu=True)


@onnx_symbolic("quantized::conv_transpose1d", opset=10)
def quantized_conv_transpose1d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose1d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1)


@onnx_symbolic("quantized::conv_transpose2d", opset=10)
def quantized_conv_transpose2d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose2d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2)


@onnx_symbolic("quantized::conv_transpose3d", opset=10)
def quantized_conv_transpose3d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose3d(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3)


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


@onnx_symbolic("aten::topk", opset=10)
def aten_topk_10(
    g: GraphContext,
    self: Value,
    k: int | Value,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)

    TopK takes k as an input, so k may be known only at run time.
    """
    return sorting.topk_before_11(g, self, k, dim, largest, sorted)


@onnx_symbolic("aten::sort", opset=10)
def aten_sort_10(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool | None = None
) -> tuple[Value, Value]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices) (and .stable)

    The whole dim may have a size known only at run time (TopK's k is an input).
    """
    del stable
    return sorting.sort_with(g, self, dim, descending, sorting.topk_before_11)


@onnx_symbolic("aten::argsort", opset=10)
def aten_argsort_10(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False
) -> Value:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor (and .stable): the
    indices of aten::sort"""
    return aten_sort_10(g, self, dim, descending, stable)[1]


@onnx_symbolic("aten::slice", opset=10)
def aten_slice_10(
    g: GraphContext,
    self: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int | Value = 1,
) -> Value:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)

    Slice-10 takes steps, so a strided slice is one Slice at any size.
    """
    return indexing.slice_bounds(g, self, dim, start, end, step)


def _flip_dim_10(g: GraphContext, x: Value, dim: int) -> Value:
    """Reverse one dim: Slice with step -1, at any size."""
    return h.slice_static(g, x, [dim], [-1], [-h.INT64_MAX], [-1])


@onnx_symbolic("aten::flip", opset=10)
def aten_flip_10(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """flip(Tensor self, int[] dims) -> Tensor: Slice with step -1 (any size)."""
    return shape.flip_with(g, self, dims, _flip_dim_10)


def _roll_dim_10(g: GraphContext, x: Value, shift: int | Value, dim: int, size: Value) -> Value:
    """Roll a dim of run-time size or by a run-time shift: Mod with fmod=0 takes the divisor's
    sign, so negative shifts come out right, and Slice takes the run-time split point."""
    size_1d = h.unsqueeze(g, size, [0])
    shift_1d = (
        g.constant([shift]) if isinstance(shift, int) else h.unsqueeze(g, h.cast(g, shift, ir.DataType.INT64), [0])
    )
    split = g.op("Sub", size_1d, g.op("Mod", shift_1d, size_1d, fmod=0))
    axes = g.constant([dim])
    tail = g.op("Slice", x, split, g.constant([h.INT64_MAX]), axes)
    head = g.op("Slice", x, g.constant([0]), split, axes)
    return g.op("Concat", tail, head, axis=dim)


@onnx_symbolic("aten::roll", opset=10)
def aten_roll_10(
    g: GraphContext, self: Value, shifts: Sequence[int] | Sequence[int | Value], dims: Sequence[int] = ()
) -> Value:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor: a dim of run-time size
    rolls with Mod and two run-time Slices."""
    return shape.roll_with(g, self, shifts, dims, _roll_dim_10)


def _slice_piece_10(g: GraphContext, x: Value, start: Value, end: Value, size: Value, dim: int) -> Value:
    """The piece [start, end) of ``dim`` as one Slice with run-time bounds."""
    del size  # Slice clamps the bounds itself
    bounds = [h.unsqueeze(g, start, [0]), h.unsqueeze(g, end, [0]), g.constant([dim])]
    return g.op("Slice", x, *bounds)


@onnx_symbolic("aten::chunk", opset=10)
def aten_chunk_10(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]: a dim of run-time
    size is cut by Slices with run-time bounds."""
    return splitting.chunk_with(g, self, chunks, dim, _slice_piece_10)


@onnx_symbolic("aten::unsafe_chunk", opset=10)
def aten_unsafe_chunk_10(g: GraphContext, self: Value, chunks: int | Value, dim: int = 0) -> list[Value] | RuntimeList:
    """unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]"""
    return splitting.chunk_with(g, self, chunks, dim, _slice_piece_10)


@onnx_symbolic("prim::ConstantChunk", opset=10)
def prim_constant_chunk_10(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantChunk[chunks, dim](Tensor self) -> (Tensor, ...): a dim of run-time size
    is cut by Slices with run-time bounds."""
    return splitting.constant_chunk_with(g, inputs, _slice_piece_10)
