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
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import activations, bitwise, convolution

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
