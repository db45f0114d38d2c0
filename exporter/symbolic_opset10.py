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

from collections.abc import Sequence
from exporter import tensors
import math
import torch
from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import (  # noqa: F401 - helpers of the base lowering
    Value,
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
