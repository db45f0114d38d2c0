"""Opset 14: what changes for the base symbolics.

ONNX changes at opset 14 that this module reacts to:
- Trilu appears: tril and triu become one node instead of a mask and Where.
- RNN/LSTM/GRU gain the layout attribute (onnxruntime rejects layout=1, so batch_first keeps
  its Transposes).
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


def _trilu(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    k = (
        g.constant(diagonal)
        if isinstance(diagonal, int)
        else g.op("Reshape", h.cast(g, diagonal, ir.DataType.INT64), g.constant(torch.zeros(0, dtype=torch.int64)))
    )
    return g.op("Trilu", self, k, upper=int(upper))


@onnx_symbolic("aten::tril", opset=14)
def aten_tril_14(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """tril(Tensor self, SymInt diagonal=0) -> Tensor: Trilu with upper=0"""
    return _trilu(g, self, diagonal, upper=False)


@onnx_symbolic("aten::triu", opset=14)
def aten_triu_14(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """triu(Tensor self, SymInt diagonal=0) -> Tensor: Trilu with upper=1"""
    return _trilu(g, self, diagonal, upper=True)
