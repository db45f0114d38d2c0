"""Quantized linear and convolution layers of eager-quantized models: the prepack ops of
traced functions that pack their own weights, quantized::linear(_relu) and every
quantized::conv*(_relu) / conv_transpose*.

ONNX idioms: packed weights become int8 constants + DequantizeLinear (QuantizeLinear and
DequantizeLinear appear at opset 10) and the layer computes in float on dequantized inputs,
then requantizes (exporter/quantization.py). The weights' form changes with the opset:
folded to float before Round (opset 11: onnxruntime's QDQ fusions insert a Round), per-channel
weights folded before DequantizeLinear's axis (opset 13); the layers are registered at 10, 11
and 13 for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.quantization import dequantize, requantize_like
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import convolution

Value = ir.Value


def _constant_weight(g: GraphContext, weight: torch.Tensor, transpose: bool = False) -> Value:
    """A quantized torch weight as an int8 constant + DequantizeLinear (float32 result).

    Per-channel weights need DequantizeLinear's axis (opset 13); below it the weight is
    dequantized at export time, which gives the same float values. Before Round (opset 11)
    the weight is folded too, so onnxruntime sees no QDQ weight pattern to fuse (see
    _add_bias). The layers using it are registered at 11 and 13 for these changes.
    """
    if not weight.is_quantized:
        w = weight.detach().float()
        return g.constant(w.t().contiguous() if transpose else w)
    per_channel = weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric)
    if not h.has_round(g) or (per_channel and not h.has_per_axis_quantization(g)):
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

    Before Round (opset 11) it is y - (-bias), which is the same float: onnxruntime fuses
    MatMul + Add (and Conv's bias input) fed by DequantizeLinear into a quantized bias with a
    Round node, which opset 10 does not have, and the model then fails to load.
    """
    b = bias.detach().float().reshape([-1] + [1] * trailing)
    if not h.has_round(g):
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
    bias = _bias_value(g, p.bias) if h.has_round(g) and not wide else None
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


@onnx_symbolic("quantized::linear", opset=13)
@onnx_symbolic("quantized::linear", opset=11)
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


@onnx_symbolic("quantized::linear_relu", opset=13)
@onnx_symbolic("quantized::linear_relu", opset=11)
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


@onnx_symbolic("quantized::conv1d", opset=13)
@onnx_symbolic("quantized::conv1d", opset=11)
@onnx_symbolic("quantized::conv1d", opset=10)
def quantized_conv1d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv1d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor

    torch packs 1-d convolutions as 2-d ones of unit height; the weights are squeezed back."""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1)


@onnx_symbolic("quantized::conv1d_relu", opset=13)
@onnx_symbolic("quantized::conv1d_relu", opset=11)
@onnx_symbolic("quantized::conv1d_relu", opset=10)
def quantized_conv1d_relu(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv1d_relu(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1, relu=True)


@onnx_symbolic("quantized::conv2d.new", opset=13)
@onnx_symbolic("quantized::conv2d.new", opset=11)
@onnx_symbolic("quantized::conv2d.new", opset=10)
def quantized_conv2d_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv2d.new(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor

    Registered for this overload only: the legacy one (stride/padding/... beside the packed
    weight) is reported as unsupported."""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2)


@onnx_symbolic("quantized::conv2d_relu.new", opset=13)
@onnx_symbolic("quantized::conv2d_relu.new", opset=11)
@onnx_symbolic("quantized::conv2d_relu.new", opset=10)
def quantized_conv2d_relu_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv2d_relu.new(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2, relu=True)


@onnx_symbolic("quantized::conv3d.new", opset=13)
@onnx_symbolic("quantized::conv3d.new", opset=11)
@onnx_symbolic("quantized::conv3d.new", opset=10)
def quantized_conv3d_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv3d.new(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3)


@onnx_symbolic("quantized::conv3d_relu.new", opset=13)
@onnx_symbolic("quantized::conv3d_relu.new", opset=11)
@onnx_symbolic("quantized::conv3d_relu.new", opset=10)
def quantized_conv3d_relu_new(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv3d_relu.new(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3, relu=True)


@onnx_symbolic("quantized::conv_transpose1d", opset=13)
@onnx_symbolic("quantized::conv_transpose1d", opset=11)
@onnx_symbolic("quantized::conv_transpose1d", opset=10)
def quantized_conv_transpose1d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose1d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 1)


@onnx_symbolic("quantized::conv_transpose2d", opset=13)
@onnx_symbolic("quantized::conv_transpose2d", opset=11)
@onnx_symbolic("quantized::conv_transpose2d", opset=10)
def quantized_conv_transpose2d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose2d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 2)


@onnx_symbolic("quantized::conv_transpose3d", opset=13)
@onnx_symbolic("quantized::conv_transpose3d", opset=11)
@onnx_symbolic("quantized::conv_transpose3d", opset=10)
def quantized_conv_transpose3d(
    g: GraphContext, qx: Value, packed_weight: object, output_scale: float, output_zero_point: int
) -> Value:
    """conv_transpose3d(Tensor qx, Conv3dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor"""
    return _quantized_conv(g, qx, packed_weight, output_scale, output_zero_point, 3)
