"""Opset 21: what changes for the base symbolics.

ONNX changes at opset 21 that this module reacts to:
- GroupNormalization takes per-channel scale and bias (opset 18's took per-group ones, which
  is not torch's group_norm), so group_norm becomes one node from 21 on.
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import normalization
from exporter.symbolic_opset17 import affine_or_default

Value = ir.Value


@onnx_symbolic("aten::group_norm", opset=21)
def aten_group_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    num_groups: int,
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor"""
    if (h.rank_of(input) or 0) < 3:  # GroupNormalization wants spatial dims; (N, C) keeps the base
        return normalization.aten_group_norm(g, input, num_groups, weight, bias, eps)
    channels = h.dim_size(g, input, 1)
    if not isinstance(channels, int):
        raise NeedsExportTimeValue("group_norm needs a static channel count")
    scale = affine_or_default(g, weight, [channels], 1.0, input)
    shift = affine_or_default(g, bias, [channels], 0.0, input)
    return g.op("GroupNormalization", input, scale, shift, num_groups=num_groups, epsilon=eps)
