"""Opset 10: what changes for the base symbolics.

ONNX changes at opset 10 that this module reacts to:
- Slice takes starts/ends/axes/steps as inputs (symbolic_helper.slice_static branches on it);
  dynamic bounds become possible, handled in the base ``aten::slice``.
- MaxPool/AveragePool gain ``ceil_mode`` and MaxPool ``dilations`` (pool_attributes).
- Mod, TopK with k as input, Resize, ThresholdedRelu, QuantizeLinear/DequantizeLinear appear.

The base symbolics already branch in the helpers where the op signature changed, so only
ops whose lowering itself changes are re-registered here.
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

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
