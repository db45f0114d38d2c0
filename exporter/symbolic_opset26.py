"""Opset 26: what changes for the base symbolics.

ONNX changes at opset 26 that this module reacts to:
- BitCast reads a float's bits as an integer of the same width: copysign takes the sign bit
  of a NaN ``other`` as torch does (below 26 a NaN counts as positive), and signbit reads the
  sign of a NaN (below 26 a NaN's sign is invisible: false).
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import arithmetic, special_functions

Value = ir.Value


def _sign_bit(g: GraphContext, x: Value) -> Value:
    """The sign bit of a float, NaN included: its bits as a signed integer are negative.
    float16 and bfloat16 are widened first (h.comparable), which keeps the sign of a NaN."""
    x = h.comparable(g, x)
    integer = ir.DataType.INT64 if x.dtype == ir.DataType.DOUBLE else ir.DataType.INT32
    return g.op("Less", g.op("BitCast", x, to=integer), g.constant(0, integer))


@onnx_symbolic("aten::copysign.Tensor", opset=26, promotion=special_functions.COPYSIGN_PROMOTION)
@onnx_symbolic("aten::copysign.Scalar", opset=26, promotion=special_functions.COPYSIGN_PROMOTION)
def aten_copysign(g: GraphContext, self: Value, other: Value) -> Value:
    """copysign.Tensor(Tensor self, Tensor other) -> Tensor (and .Scalar): the sign bit of
    ``other`` read by BitCast, so a NaN's sign counts, as in torch."""
    return special_functions.copysign(g, self, _sign_bit(g, other))


@onnx_symbolic("aten::copysign", opset=26, promotion=special_functions.COPYSIGN_PROMOTION)
@onnx_symbolic("aten::copysign.int", opset=26)
@onnx_symbolic("aten::copysign.float", opset=26)
@onnx_symbolic("aten::copysign.int_float", opset=26)
@onnx_symbolic("aten::copysign.float_int", opset=26)
def aten_copysign_number(g: GraphContext, a: Value, b: Value) -> Value:
    """copysign.int(int a, int b) -> float (and the other number forms), in double: a NaN
    ``b``'s sign counts, as in Python's math.copysign."""
    a, b = h.cast(g, a, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
    return special_functions.copysign(g, a, _sign_bit(g, b))


@onnx_symbolic("aten::signbit", opset=26)
def aten_signbit(g: GraphContext, self: Value) -> Value:
    """signbit(Tensor self) -> Tensor: a float's sign bit read by BitCast, so a negative NaN
    gives true as in torch; integers and bools as at opset 9."""
    if not h.is_floating(self):
        return arithmetic.aten_signbit(g, self)
    return _sign_bit(g, self)
