"""Elementwise functions from C's math.h and scipy.special beyond plain arithmetic: copysign,
heaviside, sinc, float_power, ldexp, special_entr (entropy), isreal.

ONNX idioms: a float's sign bit (copysign of -0.0) is read without bit casts as
``x < 0 or 1/x < 0`` (1 / -0.0 is -inf), which cannot see the sign of a NaN (BitCast, opset 26,
can: symbolic_opset26); case analyses (sinc at 0, entr below 0, heaviside at 0) are Where over
every branch, so a branch's NaN or inf where it is not taken never leaks. Ops whose torch result
is always a float compute integer and bool inputs in the default float dtype, as torch does.
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import promotion, tensors
from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion, Result
from exporter.opset9 import arithmetic, bitwise, logic, reductions
from exporter.registry import onnx_symbolic

Value = ir.Value

COPYSIGN_PROMOTION = Promotion(("self", "other"), Result.FLOAT)


def _as_float(g: GraphContext, x: Value) -> Value:
    """``x`` in torch's float result dtype: integers and bools become the default float dtype."""
    if h.is_floating(x):
        return x
    if x.dtype in (ir.DataType.COMPLEX64, ir.DataType.COMPLEX128):
        raise ValueError("complex tensors have no ONNX representation")
    return h.cast(g, x, tensors.from_torch_dtype(torch.get_default_dtype()))


def copysign(g: GraphContext, magnitude: Value, negative: Value) -> Value:
    """|magnitude| where ``negative`` is false, -|magnitude| where it is true."""
    size = g.op("Abs", magnitude)
    return g.op("Where", negative, g.op("Neg", size), size)


@onnx_symbolic("aten::copysign.Tensor", promotion=COPYSIGN_PROMOTION)
@onnx_symbolic("aten::copysign.Scalar", promotion=COPYSIGN_PROMOTION)
def aten_copysign(g: GraphContext, self: Value, other: Value) -> Value:
    """copysign.Tensor(Tensor self, Tensor other) -> Tensor (and .Scalar: Scalar other)

    The sign bit of ``other`` counts -0.0 as negative, as torch does; a NaN ``other`` counts
    as positive here (its sign bit needs BitCast, opset 26), while torch reads the bit: a NaN
    made by 0 * inf on x86 carries a negative sign.
    """
    return copysign(g, self, arithmetic.sign_bit(g, h.comparable(g, other)))


@onnx_symbolic("aten::copysign", promotion=COPYSIGN_PROMOTION)
@onnx_symbolic("aten::copysign.int")
@onnx_symbolic("aten::copysign.float")
@onnx_symbolic("aten::copysign.int_float")
@onnx_symbolic("aten::copysign.float_int")
def aten_copysign_number(g: GraphContext, a: Value, b: Value) -> Value:
    """copysign.int(int a, int b) -> float (and .float, .int_float, .float_int, the Scalar
    form): ``math.copysign`` of numbers known only at run time (sizes), a Python float, which
    is double in ONNX."""
    a, b = h.cast(g, a, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
    return copysign(g, a, arithmetic.sign_bit(g, b))


@onnx_symbolic("aten::heaviside")
def aten_heaviside(g: GraphContext, self: Value, values: Value) -> Value:
    """heaviside(Tensor self, Tensor values) -> Tensor

    ``values`` where self == 0, else self > 0 in self's dtype (torch requires one dtype for
    both): NaN is neither zero nor positive, so it gives 0, as torch's kernel does.
    """
    zero = h.scalar_like(g, 0, self)
    positive = h.cast(g, g.op("Greater", h.comparable(g, self), h.comparable(g, zero)), self.dtype)
    return g.op("Where", h.equal(g, self, zero), h.cast_like(g, values, self), positive)


@onnx_symbolic("aten::sinc")
def aten_sinc(g: GraphContext, self: Value) -> Value:
    """sinc(Tensor self) -> Tensor

    sin(pi x) / (pi x), and 1 at x == 0 (-0.0 too); inf gives NaN as in torch. Half inputs
    compute in float32 (torch's opmath type) and round once at the end.
    """
    x = _as_float(g, self)
    work = reductions.upcast_half(g, x)
    scaled = g.op("Mul", work, h.scalar_like(g, math.pi, work))
    ratio = g.op("Div", g.op("Sin", scaled), scaled)
    out = g.op("Where", h.equal(g, work, h.scalar_like(g, 0.0, work)), h.scalar_like(g, 1.0, work), ratio)
    return h.cast(g, out, x.dtype)


@onnx_symbolic("aten::float_power")
def aten_float_power(g: GraphContext, self: Value, exponent: Value) -> Value:
    """float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor (and .Tensor_Scalar,
    .Scalar): pow computed in double whatever the operands' dtypes, which is its result dtype."""
    base = h.cast(g, _as_float(g, self), ir.DataType.DOUBLE)
    return g.op("Pow", base, h.cast(g, _as_float(g, exponent), ir.DataType.DOUBLE))


def _ldexp_dtype(g: GraphContext, self: Value, other: Value) -> ir.DataType:
    """torch's result dtype of ldexp: the promotion of both operands made a float."""
    known = bitwise.result_dtype(g)
    if known is not None:
        return known
    operands = [
        promotion.Operand(
            tensors.to_torch_dtype(x.dtype), promotion.ZERO_DIM if h.rank_of(x) == 0 else promotion.TENSOR
        )
        for x in (self, other)
    ]
    return h.ir_dtype(promotion.computed_dtype(COPYSIGN_PROMOTION, operands, rounds=False))


@onnx_symbolic("aten::ldexp.Tensor")
def aten_ldexp(g: GraphContext, self: Value, other: Value) -> Value:
    """ldexp.Tensor(Tensor self, Tensor other) -> Tensor: self * 2**other

    An integer exponent scales in double and rounds once to the result dtype, as torch does
    (ldexp(2**-100, 200) is finite in float32 although 2**200 is not); a float exponent
    raises 2 in its own dtype (float16 overflows at 2**16, in torch too).
    """
    result = _ldexp_dtype(g, self, other)
    if h.is_floating(other):
        power = g.op("Pow", h.scalar_like(g, 2.0, other), other)
        return g.op("Mul", h.cast(g, self, result), h.cast(g, power, result))
    two = g.constant(2.0, ir.DataType.DOUBLE)
    power = g.op("Pow", two, h.cast(g, other, ir.DataType.DOUBLE))
    return h.cast(g, g.op("Mul", h.cast(g, self, ir.DataType.DOUBLE), power), result)


@onnx_symbolic("aten::ldexp")
def aten_ldexp_number(g: GraphContext, x: Value, i: Value) -> Value:
    """ldexp(float x, int i) -> float: ``math.ldexp`` of numbers known only at run time, in
    double (a Python float)."""
    x = h.cast(g, x, ir.DataType.DOUBLE)
    return g.op("Mul", x, g.op("Pow", h.scalar_like(g, 2.0, x), h.cast(g, i, ir.DataType.DOUBLE)))


@onnx_symbolic("aten::special_entr")
def aten_special_entr(g: GraphContext, self: Value) -> Value:
    """special_entr(Tensor self) -> Tensor

    -x log(x) for x > 0, 0 at 0, -inf below 0; NaN stays NaN (every comparison of it is
    false, so it is picked out first).
    """
    x = _as_float(g, self)
    zero = h.scalar_like(g, 0.0, x)
    entropy = g.op("Neg", g.op("Mul", x, g.op("Log", x)))
    at_or_below_zero = g.op("Where", h.equal(g, x, zero), zero, h.scalar_like(g, -math.inf, x))
    out = g.op("Where", g.op("Greater", x, zero), entropy, at_or_below_zero)
    return g.op("Where", g.op("IsNaN", x), x, out)


@onnx_symbolic("aten::isreal")
def aten_isreal(g: GraphContext, self: Value) -> Value:
    """isreal(Tensor self) -> Tensor: true everywhere for a real tensor (ONNX has no complex
    tensors; a complex one never reaches here)."""
    if self.dtype in (ir.DataType.COMPLEX64, ir.DataType.COMPLEX128):
        raise ValueError("isreal of a complex tensor: complex tensors have no ONNX representation")
    return logic.filled_like(g, self, True)
