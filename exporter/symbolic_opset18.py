"""Opset 18: what changes for the base symbolics.

ONNX changes at opset 18 that this module reacts to:
- Every Reduce* op takes its axes as an input (symbolic_helper.reduce branches on it).
- Mish appears; BitwiseAnd/Or/Xor/Not appear (integer bitwise ops become single nodes).
- Split takes num_outputs; Col2Im appears (col2im/F.fold becomes one node for float32).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter import symbolic_opset11
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import activations, bitwise, convolution, interpolation

Value = ir.Value


@onnx_symbolic("aten::mish", opset=18)
def aten_mish(g: GraphContext, self: Value) -> Value:
    """mish(Tensor self) -> Tensor: one Mish node instead of x * tanh(softplus(x)).

    onnxruntime's Mish has float/float16 kernels only; other dtypes keep the base lowering.
    """
    if self.dtype not in (ir.DataType.FLOAT, ir.DataType.FLOAT16):
        return activations.aten_mish(g, self)
    return g.op("Mish", self)


@onnx_symbolic("aten::bitwise_and", opset=18)
def aten_bitwise_and_18(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor: And on bool, BitwiseAnd on integers"""
    return bitwise.bitwise_binary(g, "And", self, other, native=True)


@onnx_symbolic("aten::__and__", opset=18)
def aten___and___18(g: GraphContext, self: Value, other: Value) -> Value:
    """__and__.Tensor(Tensor self, Tensor other) -> Tensor: And on bool, BitwiseAnd on integers"""
    return bitwise.bitwise_binary(g, "And", self, other, native=True)


@onnx_symbolic("aten::bitwise_or", opset=18)
def aten_bitwise_or_18(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor: Or on bool, BitwiseOr on integers"""
    return bitwise.bitwise_binary(g, "Or", self, other, native=True)


@onnx_symbolic("aten::__or__", opset=18)
def aten___or___18(g: GraphContext, self: Value, other: Value) -> Value:
    """__or__.Tensor(Tensor self, Tensor other) -> Tensor: Or on bool, BitwiseOr on integers"""
    return bitwise.bitwise_binary(g, "Or", self, other, native=True)


@onnx_symbolic("aten::bitwise_xor", opset=18)
def aten_bitwise_xor_18(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor: Xor on bool, BitwiseXor on integers"""
    return bitwise.bitwise_binary(g, "Xor", self, other, native=True)


@onnx_symbolic("aten::__xor__", opset=18)
def aten___xor___18(g: GraphContext, self: Value, other: Value) -> Value:
    """__xor__.Tensor(Tensor self, Tensor other) -> Tensor: Xor on bool, BitwiseXor on integers"""
    return bitwise.bitwise_binary(g, "Xor", self, other, native=True)


@onnx_symbolic("aten::bitwise_not", opset=18)
def aten_bitwise_not_18(g: GraphContext, self: Value) -> Value:
    """bitwise_not(Tensor self) -> Tensor: Not on bool, BitwiseNot on integers"""
    if self.dtype == ir.DataType.BOOL:
        return g.op("Not", self)
    return g.op("BitwiseNot", self)


@onnx_symbolic("aten::col2im", opset=18)
def aten_col2im(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Value:
    """col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    One Col2Im node for float32 batched input; onnxruntime's Col2Im has a float kernel only,
    so other dtypes and unbatched [C*k, L] input keep the base ConvTranspose lowering.
    """
    if self.dtype != ir.DataType.FLOAT or h.rank_of(self) != 3:
        return convolution.aten_col2im(g, self, output_size, kernel_size, dilation, padding, stride)
    pads = list(padding) * 2 if len(padding) == 2 else list(padding) * 4
    return g.op(
        "Col2Im",
        self,
        g.constant(list(output_size)),
        g.constant(list(kernel_size)),
        dilations=list(dilation),
        pads=pads,
        strides=list(stride),
    )


def _antialias_18(
    g: GraphContext,
    x: Value,
    mode: str,
    output_size: Sequence[int | Value] | Value | None,
    scales: Sequence[float | None] | None,
    align_corners: bool,
) -> Value:
    """Antialiased interpolation: the exact constant MatMuls (interpolation.antialias_matmul)
    when the spatial sizes are known at export time, else Resize-18 with ``antialias``, which
    samples as torch's antialiased kernels do for half-pixel coordinates (timm's ViTs with
    dynamic_img_size resample their position embedding to a grid known only at run time)."""
    try:
        sizes: list[int] | None = interpolation.export_time_sizes(output_size)
        static_out = True
    except ValueError:
        sizes, static_out = None, False
    shape = x.shape
    static_in = shape is not None and len(shape) == 4 and all(isinstance(d, int) for d in list(shape)[2:])
    if static_in and static_out:
        return interpolation.antialias_matmul(g, x, mode, sizes, scales, align_corners)
    if align_corners:
        raise NeedsExportTimeValue(
            "interpolate(antialias=True, align_corners=True) needs the spatial sizes at export time "
            "(Resize's antialias samples half-pixel coordinates only)"
        )
    return symbolic_opset11._resize(g, x, mode, output_size, scales, False, antialias=True)


@onnx_symbolic("aten::_upsample_bilinear2d_aa", opset=18)
def aten__upsample_bilinear2d_aa(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    From opset 18 also with sizes known only at run time (Resize antialias; see _antialias_18).
    """
    return _antialias_18(g, self, "linear", output_size, interpolation.given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::_upsample_bilinear2d_aa.vec", opset=18)
def aten__upsample_bilinear2d_aa_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _antialias_18(g, input, "linear", output_size, scale_factors, align_corners)


@onnx_symbolic("aten::_upsample_bicubic2d_aa", opset=18)
def aten__upsample_bicubic2d_aa(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int | Value] | Value,
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> Value:
    """_upsample_bicubic2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor

    From opset 18 also with sizes known only at run time (Resize antialias; see _antialias_18).
    """
    return _antialias_18(g, self, "cubic", output_size, interpolation.given_scales(scales_h, scales_w), align_corners)


@onnx_symbolic("aten::_upsample_bicubic2d_aa.vec", opset=18)
def aten__upsample_bicubic2d_aa_vec(
    g: GraphContext,
    input: Value,  # noqa: A002
    output_size: Sequence[int | Value] | Value | None,
    align_corners: bool,
    scale_factors: Sequence[float] | None,
) -> Value:
    """_upsample_bicubic2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _antialias_18(g, input, "cubic", output_size, scale_factors, align_corners)
