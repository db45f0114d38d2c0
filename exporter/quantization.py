"""Quantized values: their side table and the QDQ wrapping of float symbolics.

Quantized tensors become uint8/int8 (qint32: int32) ONNX values; their scale and zero point
live in the value's ``meta`` (``quantized_scale``, ``quantized_zero_point``,
``quantized_axis``) so the next quantized op can dequantize them. Quantized ops are lowered
in "QDQ" form (DequantizeLinear -> the float op -> QuantizeLinear), which onnxruntime runs
as is and fuses into its integer kernels. The emitter uses :func:`around_dequantized` so
that plain aten ops of an eager-quantized model (relu, pooling, upsample, sigmoid ...) run
on dequantized values and are requantized as torch does; an op declares at its registration
when it runs on the integers instead, or which output qparams torch fixes for it
(op_facts.OpFacts.quantized).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.op_facts import FixedQParams, Quantized

__all__ = ["around_dequantized", "QUANTIZED_STORAGE", "QUANTIZED_META", "quantized_input", "output_parts"]

Value = ir.Value

# ============================================================================================
# Helpers
# ============================================================================================

_SCALE = "quantized_scale"
_ZERO_POINT = "quantized_zero_point"
_AXIS = "quantized_axis"
# Set by the emitter on values whose TorchScript type is a quantized tensor.
QUANTIZED_META = "quantized"

QUANTIZED_STORAGE = {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}
QUANTIZED_IR = {
    torch.quint8: ir.DataType.UINT8,
    torch.qint8: ir.DataType.INT8,
    torch.qint32: ir.DataType.INT32,
}
_QUANT_RANGES = {
    ir.DataType.UINT8: (0, 255),
    ir.DataType.INT8: (-128, 127),
    ir.DataType.INT32: (-(2**31), 2**31 - 1),
}
# ONNX ops that only move or select elements: their output carries the input's qparams.
_LAYOUT_OPS = frozenset(
    {
        "Identity",
        "Reshape",
        "Flatten",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Slice",
        "Gather",
        "Expand",
        "Tile",
        "MaxPool",
        "Split",
        "DepthToSpace",
        "SpaceToDepth",
        "GatherElements",
    }
)


def scalar_value(g: GraphContext, value: float | int | Value, dtype: ir.DataType) -> Value:
    """A 0-d tensor of ``dtype`` (QuantizeLinear-10 wants scalar scale and zero point)."""
    if not isinstance(value, ir.Value):
        return g.constant(torch.tensor(value, dtype=torch.float64), dtype)
    if value.const_value is not None:
        return g.constant(torch.from_numpy(value.const_value.numpy().copy()).reshape(()), dtype)
    if value.shape is not None and value.shape.rank() == 0:
        flat = value
    else:
        flat = g.op("Reshape", value, g.constant(torch.empty(0, dtype=torch.int64)))
    if dtype != ir.DataType.FLOAT and h.is_floating(flat):
        if g.opset < 11:
            raise ValueError("a float zero point computed at run time needs opset 11 (Round)")
        flat = g.op("Round", flat)  # torch rounds a float zero point
    return h.cast(g, flat, dtype)


def _mark(value: Value, scale: Value, zero_point: Value, axis: int | None) -> Value:
    value.meta[_SCALE] = scale
    value.meta[_ZERO_POINT] = zero_point
    value.meta[_AXIS] = axis
    return value


def quantized_input(g: GraphContext, value: Value, scale: Value, zero_point: Value) -> Value:
    """A quantized graph input: its integer values ``value`` with the scale (float64) and zero
    point (int64) graph inputs beside it, cast to the types DequantizeLinear takes."""
    assert value.dtype is not None
    _mark(value, h.cast(g, scale, ir.DataType.FLOAT), h.cast(g, zero_point, value.dtype), None)
    value.meta[QUANTIZED_META] = True
    return value


def output_parts(g: GraphContext, value: Value) -> list[Value]:
    """The graph outputs for a result: a quantized tensor is three, its integer values, its
    scale (float32, 0-d) and zero point (0-d, of the integer dtype), as torch's exporter
    returns it (and tensors.quantized_output_parts unpacks torch's result); others are one."""
    found = _find_qparams(value)
    if found is None and value.meta.get(QUANTIZED_META):
        qparams(value)  # raises: torch says quantized, but the scale and zero point are unknown
    if found is None:
        # Not quantized, or a scripted graph whose types do not say: a value a layout op made
        # from a quantized one is quantized too (its qparams are found through the layout op).
        return [value]
    scale, zero_point, axis = found
    if axis is not None:
        raise ValueError(
            "cannot return a per-channel quantized tensor: it has no single scale and zero point "
            "to return beside it (dequantize it in the model)"
        )
    return [value, scale, zero_point]


def qparams(q: Value) -> tuple[Value, Value, int | None]:
    """Scale, zero point and axis of a quantized value, looking through layout-only ops
    (flatten, reshape, max_pool ... run on the integers and keep the quantization)."""
    value: Value | None = q
    while value is not None:
        if _SCALE in value.meta:
            if value is not q and value.meta[_AXIS] is not None:
                break  # a layout op may move or drop the per-channel axis
            q.meta[_SCALE] = value.meta[_SCALE]
            q.meta[_ZERO_POINT] = value.meta[_ZERO_POINT]
            q.meta[_AXIS] = value.meta[_AXIS]
            return value.meta[_SCALE], value.meta[_ZERO_POINT], value.meta[_AXIS]
        producer = value.producer()
        if producer is None or producer.op_type not in _LAYOUT_OPS or not producer.inputs:
            break
        value = producer.inputs[0]
    raise ValueError(
        f"the scale and zero point of quantized value {q.name!r} are unknown (it is not the "
        "output of a quantized op or of a layout op applied to one)"
    )


def quantize(
    g: GraphContext,
    x: Value,
    scale: float | Value,
    zero_point: int | Value,
    qdtype: ir.DataType,
    axis: int | None = None,
) -> Value:
    """QuantizeLinear to uint8/int8; qint32 (no QuantizeLinear type before opset 21 has it,
    and none has int32) is round(x / scale) + zero_point clamped, from opset 11 (Round)."""
    if x.dtype != ir.DataType.FLOAT:
        x = h.cast(g, x, ir.DataType.FLOAT)  # QuantizeLinear < 19 only takes float32
    if axis is None:
        scale_v = scalar_value(g, scale, ir.DataType.FLOAT)
        zp_v = scalar_value(g, zero_point, qdtype)
    else:
        assert isinstance(scale, ir.Value) and isinstance(zero_point, ir.Value)
        scale_v, zp_v = h.cast(g, scale, ir.DataType.FLOAT), h.cast(g, zero_point, qdtype)
    if qdtype in (ir.DataType.UINT8, ir.DataType.INT8):
        attrs = {"axis": axis} if axis is not None else {}
        out = g.op("QuantizeLinear", x, scale_v, zp_v, **attrs)
    elif qdtype == ir.DataType.INT32 and axis is None:
        if g.opset < 11:
            raise ValueError("quantizing to qint32 needs opset 11 (Round); QuantizeLinear has no int32")
        rounded = g.op("Round", g.op("Div", x, scale_v))
        shifted = g.op("Add", rounded, h.cast(g, zp_v, ir.DataType.FLOAT))
        low, high = _QUANT_RANGES[ir.DataType.INT32]
        # float32 cannot hold 2**31 - 1: clamp in double so the cast cannot overflow
        wide = h.cast(g, shifted, ir.DataType.DOUBLE)
        clamped = g.op(
            "Min",
            g.op("Max", wide, g.constant(float(low), ir.DataType.DOUBLE)),
            g.constant(float(high), ir.DataType.DOUBLE),
        )
        out = h.cast(g, clamped, ir.DataType.INT32)
    else:
        raise ValueError(f"cannot quantize to {qdtype.name}")
    out.dtype = qdtype
    if x.shape is not None:
        out.shape = ir.Shape(list(x.shape))
    return _mark(out, scale_v, zp_v, axis)


def dequantize(g: GraphContext, q: Value) -> Value:
    """DequantizeLinear with the value's remembered scale and zero point (float32 result)."""
    scale, zero_point, axis = qparams(q)
    attrs = {"axis": axis} if axis is not None else {}
    out = g.op("DequantizeLinear", q, scale, zero_point, **attrs)
    out.dtype = ir.DataType.FLOAT
    if q.shape is not None:
        out.shape = ir.Shape(list(q.shape))
    return out


def requantize_like(g: GraphContext, x: Value, like: Value, scale: float, zero_point: int) -> Value:
    """Quantize a float result to the storage dtype of ``like`` with the op's output qparams."""
    if like.dtype not in (ir.DataType.UINT8, ir.DataType.INT8, ir.DataType.INT32):
        raise ValueError(f"expected a quantized input, got a {like.dtype} tensor")
    out = quantize(g, x, scale, zero_point, like.dtype)
    return out


def _find_qparams(value: object) -> tuple[Value, Value, int | None] | None:
    if not isinstance(value, ir.Value) or value.dtype not in _QUANT_RANGES:
        return None
    try:
        return qparams(value)
    except ValueError:
        return None


def around_dequantized(
    g: GraphContext, rule: Quantized | FixedQParams, inputs: Sequence[object], call: object
) -> object | None:
    """Run a float symbolic on quantized tensors: dequantize them, call, requantize.

    For the emitter: aten ops in an eager-quantized model (relu, max_pool2d, avg_pool,
    upsample, sigmoid ...) receive quantized tensors; their float symbolics would compute on
    the raw integers (Relu on uint8 ignores the zero point; MaxPool has no uint8 kernel before
    opset 12). The results are quantized with the first quantized input's qparams, as torch
    keeps them, or with the fixed qparams torch uses for sigmoid/hardsigmoid/tanh. ``rule`` is
    what the op declares (op_facts.OpFacts.quantized). Returns None when no input is quantized
    (or the op runs on the integers as is): the caller then calls the symbolic itself.
    """
    node = g.node
    if node is None or g.opset < 10 or not node.kind().startswith("aten::") or rule is Quantized.INTEGERS:
        return None
    found = [(i, q) for i, obj in enumerate(inputs) if (q := _find_qparams(obj)) is not None]
    if not found:
        return None
    first_index, (scale, zero_point, axis) = found[0]
    storage = inputs[first_index].dtype  # type: ignore[union-attr]
    new_inputs = list(inputs)
    for index, _ in found:
        new_inputs[index] = dequantize(g, inputs[index])  # type: ignore[arg-type]
    result = call(new_inputs)  # type: ignore[operator]
    fixed = _fixed_qparams(rule, storage)
    outputs = list(node.outputs())
    results = list(result) if isinstance(result, (tuple, list)) and len(outputs) > 1 else [result]
    requantized = []
    for ts_value, obj in zip(outputs, results):
        ts_type = ts_value.type()
        ts_dtype = ts_type.dtype() if isinstance(ts_type, torch._C.TensorType) else None
        wants_quantized = ts_dtype in QUANTIZED_STORAGE or (ts_dtype is not None and h.ir_dtype(ts_dtype) == storage)
        if isinstance(obj, ir.Value) and h.is_floating(obj) and wants_quantized:
            if fixed is not None:
                obj = quantize(g, obj, fixed[0], fixed[1], storage)
            elif axis is None:
                obj = quantize(g, obj, scale, zero_point, storage)
            else:
                raise ValueError(f"{node.kind()} on a per-channel quantized tensor")
        requantized.append(obj)
    return requantized[0] if len(outputs) <= 1 else tuple(requantized)


def _fixed_qparams(rule: Quantized | FixedQParams, storage: ir.DataType) -> tuple[float, int] | None:
    """The (scale, zero point) torch fixes for results of ``storage`` dtype, if the op fixes them."""
    if not isinstance(rule, FixedQParams):
        return None
    return {ir.DataType.UINT8: rule.uint8, ir.DataType.INT8: rule.int8}.get(storage)
