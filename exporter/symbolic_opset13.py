"""Opset 13: what changes for the base symbolics.

ONNX changes at opset 13 that this module reacts to:
- Squeeze, Unsqueeze, Split and ReduceSum take their axes as inputs (symbolic_helper
  branches on it); Softmax/LogSoftmax work on one axis (symbolic_helper.softmax).
- QuantizeLinear/DequantizeLinear take per-axis scales: per-channel fake quantization.
- Loop and If carry sequences: a list changed inside run-time control flow becomes a
  loop-carried (or If-returned) sequence. The base prim::Loop/prim::If check the opset
  through runtime_list.CONTROL_FLOW_SEQUENCE_OPSET, since the change is in what the ONNX ops
  accept, not in how the TorchScript node is lowered; below 13 only the scan-output form
  (one append per iteration to an empty list) exists.
"""

from __future__ import annotations

import onnx_ir as ir

from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset10 import quantized_ops

Value = ir.Value


@onnx_symbolic("aten::fake_quantize_per_channel_affine", opset=13)
def aten_fake_quantize_per_channel_affine(
    g: GraphContext,
    self: Value,
    scale: Value,
    zero_point: Value,
    axis: int,
    quant_min: int,
    quant_max: int,
) -> Value:
    """fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min, int quant_max) -> Tensor

    Per-axis QuantizeLinear/DequantizeLinear exist from opset 13. The zero point may be an
    int32 or float tensor in torch; it is converted to the storage type (float zero points
    are rounded, which is what torch's integer path does).
    """
    return quantized_ops.fake_quantize(g, self, scale, zero_point, quant_min, quant_max, axis)
