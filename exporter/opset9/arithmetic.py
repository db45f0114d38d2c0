"""Elementwise arithmetic and math: add/sub/mul/div with torch's rounding modes, pow, exp/log
family, trigonometry, rounding, lerp/addcmul/addcdiv, fmod/remainder, conjugation of real tensors,
diff.

ONNX idioms: integer Div truncates where torch floors, so floor division corrects the quotient
by the remainder's sign (``floor_divide``); ONNX has no Trunc, so trunc is sign(x)*floor(|x|);
onnxruntime lacks double kernels for Acos/Asin/Atan/Tan/Erf (``h.float_kernel``); unary math on
integers takes torch's result dtype from the TorchScript node; 8/16-bit integer arithmetic
below opset 14 (no Add/Sub/Mul/Div kernels) runs in int32 and casts back
(``h.widened_arithmetic``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Promotion, Result
from exporter.opset9 import bitwise, logic
from exporter.registry import onnx_symbolic

Value = ir.Value


def scaled(g: GraphContext, x: Value, alpha: float) -> Value:
    if alpha == 1:
        return x
    return g.op("Mul", x, h.scalar_like(g, alpha, x))


def floor_divide(g: GraphContext, self: Value, other: Value) -> Value:
    """Floor division. ONNX integer Div truncates toward zero; torch floors, so quotients of
    operands with different signs and a remainder are one lower."""
    if h.is_floating(self):
        return g.op("Floor", g.op("Div", self, other))
    quotient = g.op("Div", self, other)
    remainder = g.op("Sub", self, g.op("Mul", quotient, other))
    zero = h.scalar_like(g, 0, self)
    has_remainder = g.op("Not", g.op("Equal", remainder, zero))
    signs_differ = g.op("Xor", g.op("Less", remainder, zero), g.op("Less", other, zero))
    adjust = g.op("And", has_remainder, signs_differ)
    return g.op("Sub", quotient, h.cast(g, adjust, self.dtype))


@onnx_symbolic(
    "aten::add", promotion=Promotion(("self", "other")), torch_folds_constants=True, complex_inputs=ComplexInputs.LINEAR
)
def aten_add(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    if self.dtype == ir.DataType.BOOL:  # bool + bool is logical or in torch
        return g.op("Or", self, other)
    return h.widened_arithmetic(g, lambda a, b: g.op("Add", a, scaled(g, b, alpha)), self, other)


@onnx_symbolic("aten::diff")
def aten_diff(
    g: GraphContext,
    self: Value,
    n: int = 1,
    dim: int = -1,
    prepend: Value | None = None,
    append: Value | None = None,
) -> Value:
    """diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor

    Whisper's decoder without a mask. prepend/append are concatenated along dim, then n times
    x[1:] - x[:-1] by two Slices (bool tensors: logical xor, as torch). Slice ends of -1 and
    INT64_MAX keep it valid for sizes known only at run time.
    """
    if n < 0:
        raise ValueError(f"diff needs n >= 0, got {n}")
    rank = h.known_rank(self, "diff")
    dim = h.normalize_dim(dim, rank)
    parts = [h.cast_like(g, t, self) for t in (prepend, self, append) if t is not None]
    out = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=dim)
    for _ in range(n):
        later = h.slice_static(g, out, [dim], [1], [2**63 - 1])
        earlier = h.slice_static(g, out, [dim], [0], [-1])
        out = g.op("Xor" if self.dtype == ir.DataType.BOOL else "Sub", later, earlier)
    return out


@onnx_symbolic(
    "aten::sub", promotion=Promotion(("self", "other")), torch_folds_constants=True, complex_inputs=ComplexInputs.LINEAR
)
def aten_sub(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    return h.widened_arithmetic(g, lambda a, b: g.op("Sub", a, scaled(g, b, alpha)), self, other)


@onnx_symbolic("aten::rsub", promotion=Promotion(("self", "other")), complex_inputs=ComplexInputs.LINEAR)
def aten_rsub(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor: other - alpha*self"""
    return h.widened_arithmetic(g, lambda a, b: g.op("Sub", b, scaled(g, a, alpha)), self, other)


@onnx_symbolic("aten::mul", promotion=Promotion(("self", "other")), torch_folds_constants=True)
def aten_mul(g: GraphContext, self: Value, other: Value) -> Value:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype == ir.DataType.BOOL:  # bool * bool is logical and in torch
        return g.op("And", self, other)
    return h.widened_arithmetic(g, lambda a, b: g.op("Mul", a, b), self, other)


def _trunc(g: GraphContext, x: Value) -> Value:
    """trunc without the Trunc op (none in ONNX): sign(x) * floor(|x|)."""
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


@onnx_symbolic("aten::div", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_div(g: GraphContext, self: Value, other: Value, rounding_mode: str | None = None) -> Value:
    """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor

    Integer operands arrive cast to float by scalar type analysis for true division.
    """
    return h.widened_arithmetic(g, lambda a, b: _div(g, a, b, rounding_mode), self, other)


def _div(g: GraphContext, self: Value, other: Value, rounding_mode: str | None) -> Value:
    if rounding_mode is None:
        return g.op("Div", self, other)
    if rounding_mode == "floor":
        return floor_divide(g, self, other)
    if rounding_mode == "trunc":
        quotient = g.op("Div", self, other)
        return _trunc(g, quotient) if h.is_floating(self) else quotient
    raise ValueError(f"unknown rounding_mode {rounding_mode!r}")


@onnx_symbolic("aten::true_divide", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_true_divide(g: GraphContext, self: Value, other: Value) -> Value:
    """true_divide.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Div", self, other)


@onnx_symbolic("aten::floor_divide", promotion=Promotion(("self", "other")))
def aten_floor_divide(g: GraphContext, self: Value, other: Value) -> Value:
    """floor_divide(Tensor self, Tensor other) -> Tensor (floors, also for negative ints)"""
    return h.widened_arithmetic(g, lambda a, b: floor_divide(g, a, b), self, other)


@onnx_symbolic("aten::remainder", promotion=Promotion(("self", "other")))
def aten_remainder(g: GraphContext, self: Value, other: Value) -> Value:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor: self - floor(self/other)*other,
    which takes the sign of the divisor like Python's %."""
    return h.widened_arithmetic(g, lambda a, b: g.op("Sub", a, g.op("Mul", floor_divide(g, a, b), b)), self, other)


@onnx_symbolic("aten::neg", complex_inputs=ComplexInputs.PARTS)
def aten_neg(g: GraphContext, self: Value) -> Value:
    """neg(Tensor self) -> Tensor"""
    return g.op("Neg", self)


@onnx_symbolic("aten::abs")
def aten_abs(g: GraphContext, self: Value) -> Value:
    """abs(Tensor self) -> Tensor"""
    return g.op("Abs", self)


@onnx_symbolic("aten::pow", promotion=Promotion(("self", "exponent")))
def aten_pow(g: GraphContext, self: Value, exponent: Value) -> Value:
    """pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor

    Pow before opset 12 takes floats only; integer powers are computed in double and cast
    back so the result keeps torch's integer dtype.
    """
    if h.is_floating(self):
        return g.op("Pow", self, h.cast(g, exponent, self.dtype))
    as_double = g.op("Pow", h.cast(g, self, ir.DataType.DOUBLE), h.cast(g, exponent, ir.DataType.DOUBLE))
    rounded = g.op("Floor", g.op("Add", as_double, g.constant(0.5, ir.DataType.DOUBLE)))
    return g.op("Cast", rounded, to=self.dtype)


@onnx_symbolic("aten::pow.int")
@onnx_symbolic("aten::pow.float")
@onnx_symbolic("aten::pow.int_float")
@onnx_symbolic("aten::pow.float_int")
@onnx_symbolic("aten::pow.Scalar_Scalar")
def aten_pow_number(g: GraphContext, a: Value, b: Value) -> Value:
    """pow.int(int a, int b) -> float (and .float, .int_float, .float_int, .Scalar_Scalar):
    TorchScript's ``**`` on numbers known only at run time. Every one of them is a float in
    TorchScript (``2 ** n`` too), which is double in ONNX: computed there, as Python does."""
    return g.op("Pow", h.cast(g, a, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE))


@onnx_symbolic("aten::pow.int_to_int")
def aten_pow_int_to_int(g: GraphContext, a: Value, b: Value) -> Value:
    """pow.int_to_int(int a, int b) -> int: an integer power (exact in double below 2**53)."""
    return aten_pow(g, h.cast(g, a, ir.DataType.INT64), b)


@onnx_symbolic("aten::sqrt")
def aten_sqrt(g: GraphContext, self: Value) -> Value:
    """sqrt(Tensor self) -> Tensor (also sqrt.int(int a) -> float: ``math.sqrt`` of a size):
    integers compute in torch's float result dtype"""
    return g.op("Sqrt", _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::rsqrt")
def aten_rsqrt(g: GraphContext, self: Value) -> Value:
    """rsqrt(Tensor self) -> Tensor

    Div(1, Sqrt(x)) rather than Reciprocal(Sqrt(x)): onnxruntime's SimplifiedLayerNormFusion
    matches RMSNorm written as x * rsqrt(mean(x^2) + eps) (T5, LLaMA) only in the Div form.
    """
    root = g.op("Sqrt", _as_result_dtype(g, self, floating=True))
    return g.op("Div", h.scalar_like(g, 1.0, root), root)


@onnx_symbolic("aten::reciprocal")
def aten_reciprocal(g: GraphContext, self: Value) -> Value:
    """reciprocal(Tensor self) -> Tensor: integers and bools give torch's float result dtype
    (computed in it), as torch does."""
    return g.op("Reciprocal", _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::exp")
def aten_exp(g: GraphContext, self: Value) -> Value:
    """exp(Tensor self) -> Tensor (also exp.int(int a) -> float: ``math.exp`` of a size):
    integers compute in torch's float result dtype"""
    return g.op("Exp", _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::log")
def aten_log(g: GraphContext, self: Value) -> Value:
    """log(Tensor self) -> Tensor (also log.int(int a) -> float: ``math.log`` of a size):
    integers compute in torch's float result dtype"""
    return g.op("Log", _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::floor")
def aten_floor(g: GraphContext, self: Value) -> Value:
    """floor(Tensor self) -> Tensor; floor.float(float a) -> int (``math.floor(n / 2)`` of a size)
    is an int64, as torch's int (``torch.tensor([math.floor(...)])`` is then int64 too)."""
    rounded = g.op("Floor", self) if h.is_floating(self) else self
    return h.cast(g, rounded, bitwise.result_dtype(g, rounded.dtype) or rounded.dtype)


@onnx_symbolic("aten::ceil")
def aten_ceil(g: GraphContext, self: Value) -> Value:
    """ceil(Tensor self) -> Tensor; ceil.float(float a) -> int (``math.ceil(n / 2)`` of a size)
    is an int64, as torch's int (``torch.tensor([math.ceil(...)])`` is then int64 too)."""
    rounded = g.op("Ceil", self) if h.is_floating(self) else self
    return h.cast(g, rounded, bitwise.result_dtype(g, rounded.dtype) or rounded.dtype)


@onnx_symbolic("aten::erf")
def aten_erf(g: GraphContext, self: Value) -> Value:
    """erf(Tensor self) -> Tensor"""
    return g.op("Erf", self)


@onnx_symbolic("aten::sin")
def aten_sin(g: GraphContext, self: Value) -> Value:
    """sin(Tensor self) -> Tensor"""
    return g.op("Sin", self)


@onnx_symbolic("aten::cos")
def aten_cos(g: GraphContext, self: Value) -> Value:
    """cos(Tensor self) -> Tensor"""
    return g.op("Cos", self)


def _as_result_dtype(g: GraphContext, x: Value, *, floating: bool = False) -> Value:
    """``x`` cast to the node's result dtype: unary math on integers computes in float.
    ``floating``: the op's result is always a float (reciprocal, log, acos...), which a
    scripted graph's shape propagation may have recorded as the integer input dtype."""
    dtype = bitwise.result_dtype(g, x.dtype) or x.dtype
    if (
        floating
        and not tensors.is_floating_dtype(dtype)
        and dtype not in (ir.DataType.COMPLEX64, ir.DataType.COMPLEX128)
    ):
        dtype = tensors.from_torch_dtype(torch.get_default_dtype())
    return h.cast(g, x, dtype)


def _constant_of(x: Value) -> float | int | bool | None:
    """The Python number behind a single-element constant value, else None."""
    if x.const_value is None or x.const_value.size != 1:
        return None
    return x.const_value.numpy().reshape(()).item()


def sign_bit(g: GraphContext, x: Value) -> Value:
    """x < 0 including -0.0 (1 / -0.0 is -inf): the sign bit of a float, false for NaN."""
    zero = h.scalar_like(g, 0.0, x)
    return g.op("Or", g.op("Less", x, zero), g.op("Less", g.op("Reciprocal", x), zero))


def round_half_even(g: GraphContext, x: Value) -> Value:
    """Round half to even without Round (opset 11). f = floor(x) and d = x - f are exact in
    binary floating point (Floor(x + 0.5) is not: it rounds for |x| >= 2^23 in float32); round
    up when d > 0.5, or when d == 0.5 and f is odd."""
    f = g.op("Floor", x)
    d = g.op("Sub", x, f)
    half = h.scalar_like(g, 0.5, x)
    two = h.scalar_like(g, 2.0, x)
    f_is_odd = g.op("Greater", g.op("Sub", f, g.op("Mul", g.op("Floor", g.op("Div", f, two)), two)), half)
    is_tie = g.op("Not", g.op("Or", g.op("Less", d, half), g.op("Greater", d, half)))
    up = g.op("Or", g.op("Greater", d, half), g.op("And", is_tie, f_is_odd))
    return g.op("Add", f, h.cast(g, up, x.dtype))


def _unary_float(g: GraphContext, op_type: str, self: Value) -> Value:
    return h.float_kernel(g, op_type, _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::acos")
def aten_acos(g: GraphContext, self: Value) -> Value:
    """acos(Tensor self) -> Tensor

    Integers compute in torch's float result dtype; double goes through float32 (onnxruntime
    has no double Acos/Asin/Atan/Tan).
    """
    return _unary_float(g, "Acos", self)


@onnx_symbolic("aten::asin")
def aten_asin(g: GraphContext, self: Value) -> Value:
    """asin(Tensor self) -> Tensor (double through float32, as acos)"""
    return _unary_float(g, "Asin", self)


@onnx_symbolic("aten::atan")
def aten_atan(g: GraphContext, self: Value) -> Value:
    """atan(Tensor self) -> Tensor (double through float32, as acos)"""
    return _unary_float(g, "Atan", self)


@onnx_symbolic("aten::tan")
def aten_tan(g: GraphContext, self: Value) -> Value:
    """tan(Tensor self) -> Tensor (double through float32, as acos)"""
    return _unary_float(g, "Tan", self)


@onnx_symbolic("aten::atan2", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_atan2(g: GraphContext, self: Value, other: Value) -> Value:
    """atan2(Tensor self, Tensor other) -> Tensor

    atan(y / x) corrected by +-pi when x is negative. The sign tests (sign_bit) count -0.0
    as negative, as in C's atan2 (torch's exporter tests y > 0 and returns -pi for
    atan2(0, -1)). 0/0 and inf/inf make the ratio NaN: there it is replaced by y (a signed
    zero) and by sign(y) (atan = pi/4) before the quadrant fix-up.
    """
    y, x = self, other
    zero = h.scalar_like(g, 0.0, x)
    ratio = g.op("Div", y, x)
    both_zero = g.op("And", h.equal(g, y, zero), h.equal(g, x, zero))
    ratio = g.op("Where", both_zero, y, ratio)
    both_inf = g.op("And", logic.is_inf(g, y), logic.is_inf(g, x))
    ratio = g.op("Where", both_inf, g.op("Mul", g.op("Sign", y), g.op("Sign", x)), ratio)
    angle = h.float_kernel(g, "Atan", ratio)
    y_negative, x_negative = sign_bit(g, y), sign_bit(g, x)
    pi = h.scalar_like(g, math.pi, x)
    turned = g.op("Where", y_negative, g.op("Sub", angle, pi), g.op("Add", angle, pi))
    return g.op("Where", x_negative, turned, angle)


@onnx_symbolic("aten::frac")
def aten_frac(g: GraphContext, self: Value) -> Value:
    """frac(Tensor self) -> Tensor: x - trunc(x), NaN for infinities as in torch"""
    return g.op("Sub", self, _trunc(g, self))


@onnx_symbolic("aten::signbit")
def aten_signbit(g: GraphContext, self: Value) -> Value:
    """signbit(Tensor self) -> Tensor: x < 0 with -0.0 counted (sign_bit); integers compare,
    bools are never negative. ONNX cannot see the sign of a NaN: a negative NaN gives false
    where torch gives true."""
    if self.dtype == ir.DataType.BOOL:
        return logic.filled_like(g, self, False)
    if not h.is_floating(self):
        x = h.comparable(g, self)
        return g.op("Less", x, h.scalar_like(g, 0, x))
    return sign_bit(g, h.comparable(g, self))


@onnx_symbolic("aten::sign")
def aten_sign(g: GraphContext, self: Value) -> Value:
    """sign(Tensor self) -> Tensor

    torch's sign of NaN is 0; Sign returns NaN. Bool is its own sign.
    """
    if self.dtype == ir.DataType.BOOL:
        return self
    out = g.op("Sign", self)
    if h.is_floating(self):
        out = g.op("Where", g.op("IsNaN", self), h.scalar_like(g, 0.0, self), out)
    return out


@onnx_symbolic("aten::square")
def aten_square(g: GraphContext, self: Value) -> Value:
    """square(Tensor self) -> Tensor (bool squares to int64 in torch)"""
    x = _as_result_dtype(g, self)
    return g.op("Mul", x, x)


@onnx_symbolic("aten::trunc")
def aten_trunc(g: GraphContext, self: Value) -> Value:
    """trunc(Tensor self) -> Tensor (ONNX has no Trunc; integers are already whole)"""
    return _trunc(g, self) if h.is_floating(self) else self


@onnx_symbolic("aten::fix")
def aten_fix(g: GraphContext, self: Value) -> Value:
    """fix(Tensor self) -> Tensor: trunc's alias"""
    return _trunc(g, self) if h.is_floating(self) else self


def _log_base(g: GraphContext, self: Value, base: float) -> Value:
    x = _as_result_dtype(g, self, floating=True)
    return g.op("Div", g.op("Log", x), h.scalar_like(g, math.log(base), x))


@onnx_symbolic("aten::log10")
def aten_log10(g: GraphContext, self: Value) -> Value:
    """log10(Tensor self) -> Tensor"""
    return _log_base(g, self, 10.0)


@onnx_symbolic("aten::log2")
def aten_log2(g: GraphContext, self: Value) -> Value:
    """log2(Tensor self) -> Tensor"""
    return _log_base(g, self, 2.0)


@onnx_symbolic("aten::log1p")
def aten_log1p(g: GraphContext, self: Value) -> Value:
    """log1p(Tensor self) -> Tensor

    Log(1 + x) loses all precision for tiny x (torch's exporter does that); see h.log1p.
    """
    return h.log1p(g, _as_result_dtype(g, self, floating=True))


@onnx_symbolic("aten::expm1")
def aten_expm1(g: GraphContext, self: Value) -> Value:
    """expm1(Tensor self) -> Tensor

    Exp(x) - 1 loses all precision for tiny x; with u = exp(x) rounded, (u - 1) * x / log(u)
    cancels the rounding of u (Kahan). u == 1 means x is below the rounding step (the result
    is x), u - 1 == -1 that it underflowed (-1), an infinite u that it overflowed (inf).
    """
    x = _as_result_dtype(g, self, floating=True)
    one = h.scalar_like(g, 1.0, x)
    u = g.op("Exp", x)
    u_minus_one = g.op("Sub", u, one)
    out = g.op("Div", g.op("Mul", u_minus_one, x), g.op("Log", u))
    out = g.op("Where", h.equal(g, u, one), x, out)
    out = g.op("Where", h.equal(g, u_minus_one, h.scalar_like(g, -1.0, x)), u_minus_one, out)
    return g.op("Where", logic.is_inf(g, u), u, out)


@onnx_symbolic("aten::exp2")
def aten_exp2(g: GraphContext, self: Value) -> Value:
    """exp2(Tensor self) -> Tensor: Pow(2, x), exact at integer x where Exp(x * ln 2) is not"""
    x = _as_result_dtype(g, self, floating=True)
    return g.op("Pow", h.scalar_like(g, 2.0, x), x)


def _times_constant(g: GraphContext, self: Value, factor: float) -> Value:
    x = _as_result_dtype(g, self, floating=True)
    return g.op("Mul", x, h.scalar_like(g, factor, x))


@onnx_symbolic("aten::deg2rad")
def aten_deg2rad(g: GraphContext, self: Value) -> Value:
    """deg2rad(Tensor self) -> Tensor: integers give torch's float result dtype"""
    return _times_constant(g, self, math.pi / 180)


@onnx_symbolic("aten::rad2deg")
def aten_rad2deg(g: GraphContext, self: Value) -> Value:
    """rad2deg(Tensor self) -> Tensor: integers give torch's float result dtype"""
    return _times_constant(g, self, 180 / math.pi)


def log_add_exp(g: GraphContext, a: Value, b: Value, base: float) -> Value:
    """log_base(base^a + base^b) as torch computes it: max + log_base(1 + base^-|a - b|), and
    a itself when a == b is infinite (where a - b is NaN)."""
    larger = g.op("Where", g.op("Greater", a, b), a, b)
    negative_gap = g.op("Neg", g.op("Abs", g.op("Sub", a, b)))
    if base == math.e:
        out = g.op("Add", larger, h.log1p(g, g.op("Exp", negative_gap)))
    else:
        power = g.op("Pow", h.scalar_like(g, base, a), negative_gap)
        out = g.op("Add", larger, g.op("Div", h.log1p(g, power), h.scalar_like(g, math.log(base), a)))
    same_infinity = g.op("And", logic.is_inf(g, a), h.equal(g, a, b))
    return g.op("Where", same_infinity, a, out)


@onnx_symbolic("aten::logaddexp", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_logaddexp(g: GraphContext, self: Value, other: Value) -> Value:
    """logaddexp(Tensor self, Tensor other) -> Tensor (log_add_exp)"""
    return log_add_exp(g, self, other, math.e)


@onnx_symbolic("aten::logaddexp2", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_logaddexp2(g: GraphContext, self: Value, other: Value) -> Value:
    """logaddexp2(Tensor self, Tensor other) -> Tensor (log_add_exp in base 2)"""
    return log_add_exp(g, self, other, 2.0)


def _x_times(g: GraphContext, x: Value, y: Value, log_of_y: Value) -> Value:
    """x * log_of_y, but 0 where x == 0 unless y is NaN (torch's xlogy and xlog1py rule)."""
    zero = h.scalar_like(g, 0.0, x)
    out = g.op("Where", h.equal(g, x, zero), zero, g.op("Mul", x, log_of_y))
    return g.op("Where", g.op("IsNaN", y), y, out)


@onnx_symbolic("aten::xlogy", promotion=Promotion(("self", "other"), Result.FLOAT))
@onnx_symbolic("aten::special_xlogy", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_xlogy(g: GraphContext, self: Value, other: Value) -> Value:
    """xlogy.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar_Self/Scalar_Other
    overloads): x * log(y), 0 where x is 0 and y is not NaN"""
    return _x_times(g, self, other, g.op("Log", other))


@onnx_symbolic("aten::special_xlog1py", promotion=Promotion(("self", "other"), Result.FLOAT))
def aten_special_xlog1py(g: GraphContext, self: Value, other: Value) -> Value:
    """special_xlog1py(Tensor self, Tensor other) -> Tensor (and the scalar overloads):
    x * log1p(y), 0 where x is 0 and y is not NaN"""
    return _x_times(g, self, other, h.log1p(g, other))


@onnx_symbolic("aten::logit")
def aten_logit(g: GraphContext, self: Value, eps: float | None = None) -> Value:
    """logit(Tensor self, float? eps=None) -> Tensor: log(z / (1 - z)), z clamped to
    [eps, 1 - eps] when eps is given.

    The clamp selects with Less/Greater + Where: NaN stays NaN as in torch, and double works
    below opset 11 (onnxruntime's attribute-form Clip is float32-only).
    """
    x = _as_result_dtype(g, self, floating=True)
    if eps is not None:
        low, high = h.scalar_like(g, eps, x), h.scalar_like(g, 1.0 - eps, x)
        x = g.op("Where", g.op("Less", x, low), low, g.op("Where", g.op("Greater", x, high), high, x))
    return g.op("Log", g.op("Div", x, g.op("Sub", h.scalar_like(g, 1.0, x), x)))


@onnx_symbolic("aten::hypot", promotion=Promotion(("self", "other")))
def aten_hypot(g: GraphContext, self: Value, other: Value) -> Value:
    """hypot(Tensor self, Tensor other) -> Tensor

    sqrt(a^2 + b^2) overflows once |a| > 256 in half precision; the scaled form
    big * sqrt(1 + (small/big)^2) does not. 0/0 (both zero) gives 0, and an infinite operand
    gives inf even against NaN, as C's hypot.
    """
    a, b = g.op("Abs", self), g.op("Abs", other)
    a_larger = g.op("Greater", a, b)
    big = g.op("Where", a_larger, a, b)
    small = g.op("Where", a_larger, b, a)
    one = h.scalar_like(g, 1.0, a)
    ratio = g.op("Div", small, big)
    out = g.op("Mul", big, g.op("Sqrt", g.op("Add", one, g.op("Mul", ratio, ratio))))
    out = g.op("Where", h.equal(g, big, h.scalar_like(g, 0.0, a)), big, out)
    any_inf = g.op("Or", logic.is_inf(g, a), logic.is_inf(g, b))
    return g.op("Where", any_inf, h.scalar_like(g, math.inf, a), out)


@onnx_symbolic("aten::lerp", promotion=Promotion(("self", "end", "weight")))
def aten_lerp(g: GraphContext, self: Value, end: Value, weight: Value) -> Value:
    """lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor (and lerp.Scalar)

    torch switches formulas at |weight| = 0.5 so weight 1 returns ``end`` exactly:
    self + w * (end - self) below, end - (end - self) * (1 - w) from there. A constant weight
    picks its formula at export time.
    """
    weight = h.cast(g, weight, self.dtype)
    diff = g.op("Sub", end, self)
    one = h.scalar_like(g, 1.0, self)
    low = g.op("Add", self, g.op("Mul", weight, diff))
    high = g.op("Sub", end, g.op("Mul", diff, g.op("Sub", one, weight)))
    constant = _constant_of(weight)
    if constant is not None:
        return low if abs(constant) < 0.5 else high
    use_low = g.op("Less", g.op("Abs", weight), h.scalar_like(g, 0.5, self))
    return g.op("Where", use_low, low, high)


def _times_value(g: GraphContext, x: Value, value: Value) -> Value:
    if _constant_of(value) == 1:
        return x
    return g.op("Mul", h.cast(g, value, x.dtype), x)


def _addc_operands(g: GraphContext, inputs: tuple[object, ...]) -> tuple[Value, Value, Value, Value]:
    """(self, tensor1, tensor2, value) of addcmul/addcdiv, given raw: scalar type analysis
    turns the Scalar ``value`` into a tensor constant, after which the node matches no
    schema, so these symbolics take their inputs positionally."""
    if len(inputs) != 4:
        raise TypeError(f"expected (self, tensor1, tensor2, value), got {len(inputs)} inputs")
    values = [x if isinstance(x, Value) else g.constant(x) for x in inputs]
    self = values[0]
    return self, values[1], values[2], h.cast(g, values[3], self.dtype)


@onnx_symbolic("aten::addcmul", promotion=Promotion(("self", "tensor1", "tensor2")))
def aten_addcmul(g: GraphContext, *inputs: object) -> Value:
    """addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor:
    self + value * tensor1 * tensor2, multiplied in torch's order (inputs raw: see
    _addc_operands)"""
    self, tensor1, tensor2, value = _addc_operands(g, inputs)
    return g.op("Add", self, g.op("Mul", _times_value(g, tensor1, value), tensor2))


@onnx_symbolic("aten::addcdiv", promotion=Promotion(("self", "tensor1", "tensor2")))
def aten_addcdiv(g: GraphContext, *inputs: object) -> Value:
    """addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor:
    self + value * tensor1 / tensor2 (inputs raw: see _addc_operands)"""
    self, tensor1, tensor2, value = _addc_operands(g, inputs)
    return g.op("Add", self, g.op("Div", _times_value(g, tensor1, value), tensor2))


@onnx_symbolic("aten::fmod", promotion=Promotion(("self", "other")))
def aten_fmod(g: GraphContext, self: Value, other: Value) -> Value:
    """fmod.Tensor(Tensor self, Tensor other) -> Tensor (and fmod.Scalar)

    Before Mod (opset 10): a - trunc(a / b) * b. Exact for integers (ONNX integer Div
    truncates, computed in int32 where narrow types lack Div kernels); for floats it can be
    off by the rounding of a / b when the quotient is large.
    """
    other = h.cast(g, other, self.dtype)
    if h.is_floating(self):
        return g.op("Sub", self, g.op("Mul", _trunc(g, g.op("Div", self, other)), other))
    compute = bitwise.compute_dtype(self.dtype)
    a, b = h.cast(g, self, compute), h.cast(g, other, compute)
    out = g.op("Sub", a, g.op("Mul", g.op("Div", a, b), b))
    return h.cast(g, out, self.dtype)


@onnx_symbolic("aten::round")
def aten_round(g: GraphContext, self: Value, decimals: int = 0) -> Value:
    """round(Tensor self) -> Tensor, round.decimals(Tensor self, *, int decimals) -> Tensor

    Half to even. Before opset 11 (no Round) see round_half_even; symbolic_opset11 uses Round.
    """
    return round_with(g, self, decimals, lambda v: round_half_even(g, v))


def round_with(g: GraphContext, self: Value, decimals: int, rounder: Callable[[Value], Value]) -> Value:
    """aten::round with ``rounder`` rounding half to even. With decimals, torch rounds
    x * 10^d and divides back (x / 10^-d and multiplies back when d < 0)."""
    if not h.is_floating(self):
        return self
    if decimals == 0:
        return rounder(self)
    scale = h.scalar_like(g, 10.0 ** abs(decimals), self)
    if decimals > 0:
        return g.op("Div", rounder(g.op("Mul", self, scale)), scale)
    return g.op("Mul", rounder(g.op("Div", self, scale)), scale)


@onnx_symbolic("aten::floordiv", torch_folds_constants=True)
def aten_floordiv(g: GraphContext, a: Value, b: Value) -> Value:
    """floordiv.int(int a, int b) -> int (and the float overloads): TorchScript's // on
    numbers known only at run time (sizes). Floors for negative integers too; floats and
    mixed operands compute in double like aten::Float."""
    if h.is_floating(a) or h.is_floating(b):
        a, b = h.cast(g, a, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
        return g.op("Floor", g.op("Div", a, b))
    return floor_divide(g, a, h.cast(g, b, a.dtype))


def _real_identity(self: Value) -> Value:
    if self.dtype in (ir.DataType.COMPLEX64, ir.DataType.COMPLEX128):
        raise ValueError("complex tensors have no ONNX representation")
    return self


@onnx_symbolic("aten::_conj")
def aten__conj(g: GraphContext, self: Value) -> Value:
    """_conj(Tensor(a) self) -> Tensor(a): the identity on real tensors"""
    return _real_identity(self)


@onnx_symbolic("aten::conj")
def aten_conj(g: GraphContext, self: Value) -> Value:
    """conj(Tensor(a) self) -> Tensor(a): the identity on real tensors (scripted code records it)"""
    return _real_identity(self)


@onnx_symbolic("aten::positive")
def aten_positive(g: GraphContext, self: Value) -> Value:
    """positive(Tensor(a) self) -> Tensor(a): unary plus, the tensor itself (torch refuses bools)"""
    if self.dtype == ir.DataType.BOOL:
        raise ValueError("positive is not defined for bool tensors")
    return self


@onnx_symbolic("aten::conj_physical")
def aten_conj_physical(g: GraphContext, self: Value) -> Value:
    """conj_physical(Tensor self) -> Tensor: the identity on real tensors"""
    return _real_identity(self)


@onnx_symbolic("aten::resolve_conj")
def aten_resolve_conj(g: GraphContext, self: Value) -> Value:
    """resolve_conj(Tensor(a) self) -> Tensor(a): real tensors never carry the conj bit"""
    return _real_identity(self)


@onnx_symbolic("aten::resolve_neg")
def aten_resolve_neg(g: GraphContext, self: Value) -> Value:
    """resolve_neg(Tensor(a) self) -> Tensor(a): the neg bit only exists on conjugated
    complex views, so real tensors pass through"""
    return _real_identity(self)
