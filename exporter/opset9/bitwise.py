"""Bitwise ops: and/or/xor/not and shifts on integers and bools.

ONNX idioms: before BitwiseAnd/Or/Xor/Not (opset 18, registered in symbolic_opset18) integer
bitwise ops are decomposed bit by bit in arithmetic (``bitwise_decomposed``); BitShift has
unsigned kernels only, so signed shifts go through multiplication and floor division; the
result dtype comes from the TorchScript node (``result_dtype``).
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion
from exporter.registry import onnx_symbolic

Value = ir.Value


BIT_WIDTHS = {
    ir.DataType.INT8: 8,
    ir.DataType.UINT8: 8,
    ir.DataType.INT16: 16,
    ir.DataType.UINT16: 16,
    ir.DataType.INT32: 32,
    ir.DataType.UINT32: 32,
    ir.DataType.INT64: 64,
}


def compute_dtype(dtype: ir.DataType) -> ir.DataType:
    """The integer dtype onnxruntime has arithmetic kernels for at every opset (int32/int64)
    that holds every value of ``dtype``; casting back truncates, which is the wrap-around torch
    gives for narrow types."""
    if dtype not in BIT_WIDTHS:
        raise TypeError(f"bitwise operations need an integer or bool tensor, got {dtype}")
    return ir.DataType.INT64 if BIT_WIDTHS[dtype] == 64 or dtype == ir.DataType.UINT32 else ir.DataType.INT32


def result_dtype(g: GraphContext, default: ir.DataType | None = None) -> ir.DataType | None:
    """torch's result dtype of the node being emitted (its first output), if typed."""
    if g.node is None or g.node.outputsSize() == 0:
        return default
    out_type = g.node.output().type() if g.node.outputsSize() == 1 else g.node.outputsAt(0).type()
    if isinstance(out_type, torch._C.TensorType):
        dtype = out_type.dtype()
        return tensors.from_torch_dtype(dtype) if dtype is not None else default
    if isinstance(out_type, torch._C.IntType):
        return ir.DataType.INT64
    if isinstance(out_type, torch._C.BoolType):
        return ir.DataType.BOOL
    if isinstance(out_type, torch._C.FloatType):
        return ir.DataType.DOUBLE
    return default


_UNSIGNED = frozenset({ir.DataType.UINT8, ir.DataType.UINT16, ir.DataType.UINT32})


def _int_constant(g: GraphContext, values: list[int] | int, dtype: ir.DataType) -> Value:
    return g.constant(torch.tensor(values, dtype=tensors.to_torch_dtype(dtype)))


def _wrap_signed(value: int, bits: int) -> int:
    """``value`` reduced modulo 2**bits into the signed range (2**63 -> -2**63)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _bitwise_decomposed(g: GraphContext, op: str, a: Value, b: Value) -> Value:
    """Integer and/or/xor before BitwiseAnd/Or/Xor (opset 18), from arithmetic alone.

    The sign bit is handled apart (x < 0) so the rest is non-negative, where the truncating
    integer Div is a floor: bit i of the low part is q_i - 2 * q_(i+1) with q_i = low / 2^i,
    taken for all bit positions at once along a new last axis. Combined bits are summed with
    weights 2^i by a MatMul against the weight vector (distinct powers of two: no overflow;
    onnxruntime's int64 ReduceSum accumulates in double and drops low bits); the combined
    sign bit adds the most negative value.
    """
    out_dtype = a.dtype
    compute = compute_dtype(out_dtype)
    bits = 64 if compute == ir.DataType.INT64 else 32
    a, b = h.cast(g, a, compute), h.cast(g, b, compute)
    zero = _int_constant(g, 0, compute)
    most_negative = _int_constant(g, -(1 << (bits - 1)), compute)
    weights = _int_constant(g, [1 << i for i in range(bits - 1)], compute)
    two = _int_constant(g, 2, compute)

    def low_bits(x: Value) -> Value:
        low = g.op("Where", g.op("Less", x, zero), g.op("Sub", x, most_negative), x)
        rank = h.rank_of(x)
        if rank is None:
            raise NeedsExportTimeValue("integer bitwise ops below opset 18 need the operand ranks")
        quotient = g.op("Div", h.unsqueeze(g, low, [rank]), weights)
        return g.op("Sub", quotient, g.op("Mul", g.op("Div", quotient, two), two))

    bits_a, bits_b = low_bits(a), low_bits(b)
    both = g.op("Mul", bits_a, bits_b)
    if op == "And":
        combined = both
    elif op == "Or":
        combined = g.op("Sub", g.op("Add", bits_a, bits_b), both)
    else:
        combined = g.op("Sub", g.op("Add", bits_a, bits_b), g.op("Add", both, both))
    low_sum = g.op("MatMul", combined, weights)
    sign = g.op(op, g.op("Less", a, zero), g.op("Less", b, zero))
    out = g.op("Add", low_sum, g.op("Mul", h.cast(g, sign, compute), most_negative))
    return h.cast(g, out, out_dtype)


def bitwise_binary(g: GraphContext, op: str, self: Value, other: Value, *, native: bool) -> Value:
    """and/or/xor in torch's result dtype: logical on bool; on integers Bitwise* when
    ``native`` (opset 18), else the arithmetic decomposition. Promotion has unified the
    operands' dtypes (promotion._ARITHMETIC), which then is torch's result dtype."""
    dtype = self.dtype if self.dtype is not None and self.dtype == other.dtype else result_dtype(g, self.dtype)
    dtype = dtype or self.dtype
    a, b = h.cast(g, self, dtype), h.cast(g, other, dtype)
    if dtype == ir.DataType.BOOL:
        return g.op(op, a, b)
    if native:
        return g.op(f"Bitwise{op}", a, b)
    return _bitwise_decomposed(g, op, a, b)


def _bitwise_not(g: GraphContext, x: Value) -> Value:
    """~x before BitwiseNot: -1 - x in two's complement (2^n - 1 - x unsigned), computed in
    int32/int64 where narrow types lack Sub kernels."""
    if x.dtype == ir.DataType.BOOL:
        return g.op("Not", x)
    compute = compute_dtype(x.dtype)
    all_ones = (1 << BIT_WIDTHS[x.dtype]) - 1 if x.dtype in _UNSIGNED else -1
    out = g.op("Sub", _int_constant(g, all_ones, compute), h.cast(g, x, compute))
    return h.cast(g, out, x.dtype)


def _shift(g: GraphContext, self: Value, other: Value, left: bool) -> Value:
    """Shifts as multiplication / floor division by powers of two.

    BitShift (opset 11) only takes unsigned types. torch shifts in the result dtype and gives
    0 (left, or right of a non-negative) or -1 (right of a negative) for amounts that are
    negative or at least the bit width. Powers of two come from a constant table indexed by
    the amount; 2^(n-1) wraps to the most negative value, so x << (n-1) wraps like torch.
    A negative x shifts right as ~((~x) >> s), keeping the division non-negative (truncating
    Div is a floor there).
    """
    dtype = result_dtype(g, self.dtype) or self.dtype
    x = h.cast(g, self, dtype)
    if dtype not in BIT_WIDTHS:
        raise TypeError(f"shifts need an integer tensor, got {dtype}")
    bits = BIT_WIDTHS[dtype]
    compute = compute_dtype(dtype)
    x = h.cast(g, x, compute)
    amount = h.cast(g, other, ir.DataType.INT64)
    zero = _int_constant(g, 0, compute)
    signed = dtype not in _UNSIGNED
    # Usable powers: left shifts use 2^0..2^(n-1); right shifts of the non-negative part need
    # 2^0..2^(n-2) when signed (its values stay below 2^(n-1)), 2^0..2^(n-1) unsigned.
    count = bits if left or not signed else bits - 1
    table = _int_constant(
        g, [_wrap_signed(1 << i, 64 if compute == ir.DataType.INT64 else 32) for i in range(count)], compute
    )
    in_range = g.op(
        "And",
        g.op("Not", g.op("Less", amount, g.constant(0))),
        g.op("Less", amount, g.constant(count)),
    )
    power = g.op("Gather", table, g.op("Where", in_range, amount, g.constant(0)), axis=0)
    if left:
        out = g.op("Where", in_range, g.op("Mul", x, power), zero)
    elif not signed:
        out = g.op("Where", in_range, g.op("Div", x, power), zero)
    else:
        minus_one = _int_constant(g, -1, compute)
        negative = g.op("Less", x, zero)
        magnitude = g.op("Where", negative, g.op("Sub", minus_one, x), x)
        shifted = g.op("Where", in_range, g.op("Div", magnitude, power), zero)
        out = g.op("Where", negative, g.op("Sub", minus_one, shifted), shifted)
    return h.cast(g, out, dtype)


@onnx_symbolic("aten::bitwise_and", promotion=Promotion(("self", "other")))
def aten_bitwise_and(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads)

    And on bool. Integers have no bitwise op before opset 18: see _bitwise_decomposed
    (torch's exporter cannot export integer & and | at any opset). Operands take torch's
    result dtype from the node: these ops are not in scalar type analysis.
    """
    return bitwise_binary(g, "And", self, other, native=False)


@onnx_symbolic("aten::__and__", promotion=Promotion(("self", "other")))
def aten___and__(g: GraphContext, self: Value, other: Value) -> Value:
    """__and__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with And"""
    return bitwise_binary(g, "And", self, other, native=False)


@onnx_symbolic("aten::bitwise_or", promotion=Promotion(("self", "other")))
def aten_bitwise_or(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Or"""
    return bitwise_binary(g, "Or", self, other, native=False)


@onnx_symbolic("aten::__or__", promotion=Promotion(("self", "other")))
def aten___or__(g: GraphContext, self: Value, other: Value) -> Value:
    """__or__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Or"""
    return bitwise_binary(g, "Or", self, other, native=False)


@onnx_symbolic("aten::bitwise_xor", promotion=Promotion(("self", "other")))
def aten_bitwise_xor(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Xor"""
    return bitwise_binary(g, "Xor", self, other, native=False)


@onnx_symbolic("aten::__xor__", promotion=Promotion(("self", "other")))
def aten___xor__(g: GraphContext, self: Value, other: Value) -> Value:
    """__xor__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Xor"""
    return bitwise_binary(g, "Xor", self, other, native=False)


@onnx_symbolic("aten::bitwise_not")
def aten_bitwise_not(g: GraphContext, self: Value) -> Value:
    """bitwise_not(Tensor self) -> Tensor: Not on bool, -1 - x on integers (2^n - 1 - x
    unsigned)"""
    return _bitwise_not(g, self)


@onnx_symbolic("aten::__lshift__")
def aten___lshift__(g: GraphContext, self: Value, other: Value) -> Value:
    """__lshift__.Tensor(Tensor self, Tensor other) -> Tensor: see _shift"""
    return _shift(g, self, other, left=True)


@onnx_symbolic("aten::bitwise_left_shift")
def aten_bitwise_left_shift(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor: see _shift (torch's
    exporter needs opset 11 and is wrong past the bit width)"""
    return _shift(g, self, other, left=True)


@onnx_symbolic("aten::__rshift__")
def aten___rshift__(g: GraphContext, self: Value, other: Value) -> Value:
    """__rshift__.Tensor(Tensor self, Tensor other) -> Tensor: arithmetic shift, see _shift"""
    return _shift(g, self, other, left=False)


@onnx_symbolic("aten::bitwise_right_shift")
def aten_bitwise_right_shift(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor: arithmetic shift,
    see _shift"""
    return _shift(g, self, other, left=False)
