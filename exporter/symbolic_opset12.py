"""Opset 12: what changes for the base symbolics.

ONNX changes at opset 12 that this module reacts to:
- Einsum appears: einsum becomes one node (equations onnxruntime rejects keep the opset-9
  lowering).
- Dropout takes training_mode as an input: native_dropout in training mode is exportable.
- Clip, Max/Min gain integer kernels (symbolic_helper.clip uses them); LessOrEqual and
  GreaterOrEqual appear.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import linalg

Value = ir.Value


@onnx_symbolic("aten::native_dropout", opset=12)
def aten_native_dropout_12(g: GraphContext, input: Value, p: float, train: bool | None) -> tuple[Value, Value]:  # noqa: A002
    """native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)

    Dropout-12 with training_mode returns the scaled output and the keep mask. p=1 is zeros
    and an all-false mask (Dropout would scale by 1/0).
    """
    if train is False or p == 0:
        return input, h.all_true_like(g, input)
    if p >= 1:
        zeros = g.op("Mul", input, h.scalar_like(g, 0, input))
        return zeros, g.op("ConstantOfShape", h.shape_of(g, input), value=torch.tensor([False]))
    ratio = g.constant(p, input.dtype if h.is_floating(input) else ir.DataType.FLOAT)
    out, mask = g.op("Dropout", input, ratio, g.constant(True), num_outputs=2)
    return out, mask


@onnx_symbolic("aten::einsum", opset=12)
def aten_einsum_12(
    g: GraphContext, equation: str, tensors: Sequence[Value], path: Sequence[int] | None = None
) -> Value:
    """einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor

    The Einsum op, which also takes diagonals. ``path`` is only a contraction-order hint.
    Bool operands (no Einsum kernel) are computed as int32 and turned back into bool. ONNX
    requires an ellipsis in the output when the inputs have one, while torch sums those dims
    away: such equations take the MatMul lowering of opset 9.
    """
    del path
    operands = list(tensors)
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    if arrow and "..." in lhs and "..." not in rhs:
        return linalg.einsum_lowered(g, equation, operands)
    is_bool = operands[0].dtype == ir.DataType.BOOL
    if is_bool:
        operands = [h.cast(g, t, ir.DataType.INT32) for t in operands]
    out = g.op("Einsum", *operands, equation=equation.replace(" ", ""))
    if is_bool:
        out = h.cast(g, out, ir.DataType.BOOL)
    return out


@onnx_symbolic("aten::dropout", opset=12)
def aten_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """dropout(Tensor input, float p, bool train) -> Tensor

    From opset 12 Dropout takes training_mode, so a model exported with
    TrainingMode.TRAINING drops (and rescales by 1/(1-p)) like torch.
    """
    if not train or p == 0:
        return input
    ratio = g.constant(
        p,
        input.dtype
        if input.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.FLOAT16)
        else ir.DataType.FLOAT,
    )
    output, _ = g.op("Dropout", input, ratio, g.constant(True), num_outputs=2)
    return output
