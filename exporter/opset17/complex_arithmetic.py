"""Complex arithmetic: the ops whose meaning on complex tensors is their own (abs, angle, conj,
mul/div of two complex tensors, reciprocal, pow, sqrt, constant padding), and the ops that make or
unmake one (view_as_real, view_as_complex, complex, polar; full, zeros, ones and their _like
forms of a complex dtype).

ONNX idioms: ONNX has no complex tensors; a complex intermediate is a ComplexValue, a float
tensor with a trailing dim of 2 as DFT writes it (exporter/complex_values.py). Every symbolic
here takes one with ``complex_inputs=ComplexInputs.OWN`` and hands a real input to the base
symbolic, so its lowering of real tensors is unchanged. They start at opset 17 with DFT and
STFT, where complex values first arise in an export (fft, stft).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.complex_values import ComplexValue, imag_part, paired, real_part
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Promotion, Result
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import arithmetic, creation, logic, repeat_pad

Value = ir.Value

OWN = ComplexInputs.OWN


def _parts(g: GraphContext, z: ComplexValue) -> tuple[Value, Value]:
    return real_part(g, z), imag_part(g, z)


def _as_real_operand(g: GraphContext, x: Value, like: ComplexValue) -> Value:
    """A real operand of a complex op, in the dtype of the complex value's parts."""
    return x if x.dtype == like.dtype else h.cast(g, x, like.dtype)


def _operand_parts(g: GraphContext, x: ComplexValue | Value, like: ComplexValue) -> tuple[Value, Value]:
    """The parts of an operand of a complex op: a real one is (x, 0), as torch promotes it, so
    infinities and NaNs meet the zero imaginary part as they do in torch ((1 + inf i) * 2 is
    nan + inf i there)."""
    if isinstance(x, ComplexValue):
        return _parts(g, x)
    real = _as_real_operand(g, x, like)
    return real, h.scalar_like(g, 0.0, real)


def _multiply(g: GraphContext, a: tuple[Value, Value], b: tuple[Value, Value]) -> ComplexValue:
    (ar, ai), (br, bi) = a, b
    real = g.op("Sub", g.op("Mul", ar, br), g.op("Mul", ai, bi))
    imag = g.op("Add", g.op("Mul", ar, bi), g.op("Mul", ai, br))
    return paired(g, real, imag)


def _divide(g: GraphContext, a: Value, b: Value, c: Value, d: Value) -> ComplexValue:
    """(a + ib) / (c + id) scaled by the larger of |c|, |d| first (Smith's method, as c10::complex
    divides), so squares never overflow; 0 / 0 divides each part by zero as torch does."""
    abs_c, abs_d = g.op("Abs", c), g.op("Abs", d)
    c_larger = g.op("Not", g.op("Less", abs_c, abs_d))
    # c larger: rat = d / c, scl = 1 / (c + d rat); real (a + b rat) scl, imag (b - a rat) scl
    rat_c = g.op("Div", d, c)
    scl_c = g.op("Reciprocal", g.op("Add", c, g.op("Mul", d, rat_c)))
    real_c = g.op("Mul", g.op("Add", a, g.op("Mul", b, rat_c)), scl_c)
    imag_c = g.op("Mul", g.op("Sub", b, g.op("Mul", a, rat_c)), scl_c)
    # d larger: rat = c / d, scl = 1 / (d + c rat); real (a rat + b) scl, imag (b rat - a) scl
    rat_d = g.op("Div", c, d)
    scl_d = g.op("Reciprocal", g.op("Add", d, g.op("Mul", c, rat_d)))
    real_d = g.op("Mul", g.op("Add", g.op("Mul", a, rat_d), b), scl_d)
    imag_d = g.op("Mul", g.op("Sub", g.op("Mul", b, rat_d), a), scl_d)
    zero = h.scalar_like(g, 0.0, c)
    both_zero = g.op("And", h.equal(g, abs_c, zero), h.equal(g, abs_d, zero))
    real = g.op("Where", both_zero, g.op("Div", a, abs_c), g.op("Where", c_larger, real_c, real_d))
    imag = g.op("Where", both_zero, g.op("Div", b, abs_d), g.op("Where", c_larger, imag_c, imag_d))
    return paired(g, real, imag)


def _reciprocal(g: GraphContext, z: ComplexValue) -> ComplexValue:
    c, d = _parts(g, z)
    one, zero = h.scalar_like(g, 1.0, c), h.scalar_like(g, 0.0, c)
    return _divide(g, one, zero, c, d)


def _larger_and_ratio(g: GraphContext, z: ComplexValue) -> tuple[Value, Value, Value, Value]:
    """(max(|re|, |im|), min / max (0 where both are 0), |re|, |im|): |z| = max sqrt(1 + ratio^2)."""
    re, im = _parts(g, z)
    a, b = g.op("Abs", re), g.op("Abs", im)
    larger, smaller = g.op("Max", a, b), g.op("Min", a, b)
    zero = h.scalar_like(g, 0.0, a)
    ratio = g.op("Where", g.op("Greater", larger, zero), g.op("Div", smaller, larger), zero)
    return larger, ratio, a, b


def _modulus(g: GraphContext, z: ComplexValue) -> Value:
    """|z| as hypot computes it: max * sqrt(1 + (min / max)^2), so squares never overflow;
    inf when either part is infinite (even with a NaN other part), else NaN when one is NaN."""
    larger, ratio, a, b = _larger_and_ratio(g, z)
    one = h.scalar_like(g, 1.0, a)
    modulus = g.op("Mul", larger, g.op("Sqrt", g.op("Add", one, g.op("Mul", ratio, ratio))))
    any_nan = g.op("Or", g.op("IsNaN", a), g.op("IsNaN", b))
    modulus = g.op("Where", any_nan, h.scalar_like(g, math.nan, a), modulus)
    any_inf = g.op("Or", logic.is_inf(g, a), logic.is_inf(g, b))
    return g.op("Where", any_inf, h.scalar_like(g, math.inf, a), modulus)


def _modulus_to_the(g: GraphContext, z: ComplexValue, p: float) -> Value:
    """|z|^p as exp(p log|z|), log|z| = log max + log1p(ratio^2) / 2: finite wherever the result
    is, also where |z| itself overflows (|3e38 + 3e38i|^0.5 in float32)."""
    larger, ratio, a, _ = _larger_and_ratio(g, z)
    log_modulus = g.op(
        "Add", g.op("Log", larger), g.op("Mul", h.log1p(g, g.op("Mul", ratio, ratio)), h.scalar_like(g, 0.5, a))
    )
    return g.op("Exp", g.op("Mul", log_modulus, h.scalar_like(g, p, a)))


def _square_root(g: GraphContext, z: ComplexValue) -> ComplexValue:
    """The principal square root as C's csqrt computes it: t = sqrt((|x| + |z|) / 2),
    then (t, y / 2t) for x >= 0 and (|y| / 2t, t with y's sign) for x < 0, so a negative real
    number's root has an exact zero real part (the polar form's cos(pi / 2) is not 0 in float);
    sqrt(0 + yi) is (0, y) for y = +-0, sqrt(x + inf i) inf + inf i."""
    x, y = _parts(g, z)
    larger, ratio, abs_x, abs_y = _larger_and_ratio(g, z)
    quarter, one = h.scalar_like(g, 0.25, x), h.scalar_like(g, 1.0, x)
    quarter_modulus = g.op(
        "Mul", g.op("Mul", larger, quarter), g.op("Sqrt", g.op("Add", one, g.op("Mul", ratio, ratio)))
    )
    # t = sqrt(2) sqrt(|x| / 4 + |z| / 4): quarters, so the sum stays finite for every finite z
    quarter_sum = g.op("Add", g.op("Mul", abs_x, quarter), quarter_modulus)
    t = g.op("Mul", g.op("Sqrt", quarter_sum), h.scalar_like(g, math.sqrt(2.0), x))
    other = g.op("Div", abs_y, g.op("Add", t, t))  # |y| / 2t
    zero_root = h.equal(g, t, h.scalar_like(g, 0.0, t))
    y_negative = arithmetic.sign_bit(g, y)
    signed_other = g.op("Where", y_negative, g.op("Neg", other), other)
    signed_t = g.op("Where", y_negative, g.op("Neg", t), t)
    x_negative = g.op("Less", x, h.scalar_like(g, 0.0, x))
    real = g.op("Where", x_negative, other, t)
    imag = g.op("Where", x_negative, signed_t, signed_other)
    real, imag = g.op("Where", zero_root, t, real), g.op("Where", zero_root, y, imag)
    # C's special cases: sqrt(+inf + NaN i) is inf + NaN i, sqrt(-inf + NaN i) NaN + inf i
    x_infinite_y_nan = g.op("And", logic.is_inf(g, x), g.op("IsNaN", y))
    x_positive = g.op("Greater", x, h.scalar_like(g, 0.0, x))
    real = g.op("Where", x_infinite_y_nan, g.op("Where", x_positive, x, y), real)
    imag = g.op("Where", x_infinite_y_nan, g.op("Where", x_positive, y, abs_x), imag)
    y_infinite = logic.is_inf(g, y)  # sqrt(x + inf i) is inf + inf i for every x, NaN too
    return paired(g, g.op("Where", y_infinite, abs_y, real), g.op("Where", y_infinite, y, imag))


def _argument(g: GraphContext, z: ComplexValue) -> Value:
    """arg(z) = atan2(imag, real), with C's atan2 at every quadrant, signed zeros and infinities."""
    re, im = _parts(g, z)
    return arithmetic.aten_atan2(g, im, re)


@onnx_symbolic("aten::abs", opset=17, complex_inputs=OWN)
def aten_abs(g: GraphContext, self: ComplexValue | Value) -> Value:
    """abs(Tensor self) -> Tensor: the modulus of a complex tensor (hypot of its parts)"""
    if isinstance(self, ComplexValue):
        return _modulus(g, self)
    return arithmetic.aten_abs(g, self)


@onnx_symbolic("aten::angle", opset=17, complex_inputs=OWN)
def aten_angle(g: GraphContext, self: ComplexValue | Value) -> Value:
    """angle(Tensor self) -> Tensor

    The argument of a complex tensor (atan2(imag, real), in (-pi, pi]); of a real one pi where
    it is negative, 0 elsewhere, NaN for NaN, as torch. Registered with the complex ops: real
    tensors before opset 17 have no angle here either.
    """
    if isinstance(self, ComplexValue):
        return _argument(g, self)
    x = self if h.is_floating(self) else h.cast(g, self, ir.DataType.FLOAT)
    zero = h.scalar_like(g, 0.0, x)
    angle = g.op("Where", g.op("Less", x, zero), h.scalar_like(g, math.pi, x), zero)
    return g.op("Where", g.op("IsNaN", x), x, angle)


def _conjugate(g: GraphContext, z: ComplexValue) -> ComplexValue:
    signs = torch.tensor([1.0, -1.0], dtype=tensors.to_torch_dtype(z.dtype))
    return ComplexValue(g.op("Mul", z.value, g.constant(signs)))


@onnx_symbolic("aten::conj", opset=17, complex_inputs=OWN)
@onnx_symbolic("aten::_conj", opset=17, complex_inputs=OWN)
@onnx_symbolic("aten::conj_physical", opset=17, complex_inputs=OWN)
def aten_conj(g: GraphContext, self: ComplexValue | Value) -> ComplexValue | Value:
    """conj(Tensor(a) self) -> Tensor(a) (and _conj, as a trace records it, and conj_physical):
    the imaginary parts negated; a real tensor is its own conjugate"""
    if isinstance(self, ComplexValue):
        return _conjugate(g, self)
    return arithmetic.aten_conj(g, self)


@onnx_symbolic("aten::resolve_conj", opset=17, complex_inputs=OWN)
@onnx_symbolic("aten::resolve_neg", opset=17, complex_inputs=OWN)
def aten_resolve_conj(g: GraphContext, self: ComplexValue | Value) -> ComplexValue | Value:
    """resolve_conj(Tensor(a) self) -> Tensor(a) (and resolve_neg): the pairs are always
    materialized, there is no lazy conjugate or negative bit to resolve"""
    if isinstance(self, ComplexValue):
        return self
    return arithmetic.aten_resolve_conj(g, self)


@onnx_symbolic("aten::mul", opset=17, promotion=Promotion(("self", "other")), complex_inputs=OWN)
def aten_mul(g: GraphContext, self: ComplexValue | Value, other: ComplexValue | Value) -> ComplexValue | Value:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor

    (a + ib)(c + id) = (ac - bd) + i(ad + bc), a real operand counting as c + 0i as torch
    promotes it (julius' FFT convolution: ``x_f * w_f.conj()``, GriffinLim's ``specgram * angles``).
    """
    like = self if isinstance(self, ComplexValue) else other
    if not isinstance(like, ComplexValue):
        return arithmetic.aten_mul(g, self, other)
    return _multiply(g, _operand_parts(g, self, like), _operand_parts(g, other, like))


@onnx_symbolic("aten::div", opset=17, promotion=Promotion(("self", "other"), Result.FLOAT), complex_inputs=OWN)
def aten_div(
    g: GraphContext, self: ComplexValue | Value, other: ComplexValue | Value, rounding_mode: str | None = None
) -> ComplexValue | Value:
    """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor

    As c10::complex divides (Smith's scaling), a real operand counting as c + 0i as torch
    promotes it (torchaudio's normalized spectrogram, GriffinLim's ``angles / (|angles| + eps)``).
    torch has no rounding modes for complex tensors.
    """
    like = self if isinstance(self, ComplexValue) else other
    if not isinstance(like, ComplexValue):
        return arithmetic.aten_div(g, self, other, rounding_mode)
    if rounding_mode is not None:
        raise ValueError(f"div with rounding_mode={rounding_mode!r} is not defined for complex tensors")
    a, b = _operand_parts(g, self, like)
    c, d = _operand_parts(g, other, like)
    return _divide(g, a, b, c, d)


@onnx_symbolic("aten::reciprocal", opset=17, complex_inputs=OWN)
def aten_reciprocal(g: GraphContext, self: ComplexValue | Value) -> ComplexValue | Value:
    """reciprocal(Tensor self) -> Tensor: 1 / z as complex division divides (``2.0 / z``)"""
    if isinstance(self, ComplexValue):
        return _reciprocal(g, self)
    return arithmetic.aten_reciprocal(g, self)


def _exponent_of(exponent: Value) -> float:
    """A real exponent known at export time (refused otherwise)."""
    if isinstance(exponent, ComplexValue) or exponent.const_value is None or exponent.const_value.size != 1:
        raise ValueError(
            "pow of a complex tensor is supported by a real exponent known at export time (a Python number), "
            "not by a tensor or a complex exponent"
        )
    return float(exponent.const_value.numpy().item())


def _integer_power(g: GraphContext, z: ComplexValue, n: int) -> ComplexValue:
    """z ** n by repeated squaring (what torch computes for 2 and 3 too), 1 for n = 0."""
    if n == 0:
        one = torch.tensor([1.0, 0.0], dtype=tensors.to_torch_dtype(z.dtype))
        return ComplexValue(g.op("Expand", g.constant(one), g.op("Shape", z.value)))
    result: ComplexValue | None = None
    base = z
    count = abs(n)
    while count:
        if count & 1:
            result = base if result is None else _multiply(g, _parts(g, result), _parts(g, base))
        count >>= 1
        if count:
            base = _multiply(g, _parts(g, base), _parts(g, base))
    assert result is not None
    return _reciprocal(g, result) if n < 0 else result


@onnx_symbolic("aten::pow", opset=17, promotion=Promotion(("self", "exponent")), complex_inputs=OWN)
def aten_pow(g: GraphContext, self: ComplexValue | Value, exponent: ComplexValue | Value) -> ComplexValue | Value:
    """pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor (and .Tensor_Scalar)

    A complex tensor to a real power known at export time: an integer power by repeated
    multiplication (as torch, also for infinite and NaN parts), another one in polar form
    |z|^p (cos p arg z + i sin p arg z), torch's exp(p log z) for finite z and results (|z| is
    taken in the log domain, so |z|^p is finite where it is). Where a part is infinite or the
    result overflows, C's cpow/csqrt have special cases the polar form does not reproduce
    (sqrt(-inf) is inf i there, -inf + inf i here). A negative non-integer power is refused: at z = 0 the
    parts torch gives (exp of an infinite logarithm) are not matched by the polar form.
    """
    if not isinstance(self, ComplexValue):
        if isinstance(exponent, ComplexValue):
            raise ValueError("pow with a complex exponent is not supported")
        return arithmetic.aten_pow(g, self, exponent)
    p = _exponent_of(exponent)
    if p == int(p):
        return _integer_power(g, self, int(p))
    if p == 0.5:  # torch's pow takes the square root here
        return _square_root(g, self)
    if p < 0:
        raise ValueError(f"pow of a complex tensor by the negative non-integer {p} is not supported")
    magnitude = _modulus_to_the(g, self, p)
    angle = g.op("Mul", _argument(g, self), h.scalar_like(g, p, self.value))
    return paired(g, g.op("Mul", magnitude, g.op("Cos", angle)), g.op("Mul", magnitude, g.op("Sin", angle)))


@onnx_symbolic("aten::sqrt", opset=17, complex_inputs=OWN)
def aten_sqrt(g: GraphContext, self: ComplexValue | Value) -> ComplexValue | Value:
    """sqrt(Tensor self) -> Tensor: the principal square root of a complex tensor, as csqrt"""
    if isinstance(self, ComplexValue):
        return _square_root(g, self)
    return arithmetic.aten_sqrt(g, self)


@onnx_symbolic("aten::view_as_real", opset=17, complex_inputs=OWN)
def aten_view_as_real(g: GraphContext, self: ComplexValue | Value) -> Value:
    """view_as_real(Tensor(a) self) -> Tensor(a): the pairs themselves (a last dim of 2)"""
    if not isinstance(self, ComplexValue):
        raise ValueError("view_as_real is only defined for complex tensors (torch refuses a real one)")
    return self.value


@onnx_symbolic("aten::view_as_complex", opset=17)
def aten_view_as_complex(g: GraphContext, self: Value) -> ComplexValue:
    """view_as_complex(Tensor(a) self) -> Tensor(a): a float [..., 2] tensor read as complex"""
    last = h.static_shape(self)
    if last is not None and (not last or last[-1] != 2):
        raise ValueError(f"view_as_complex needs a last dim of size 2, got shape {last}")
    if not h.is_floating(self):
        raise ValueError(f"view_as_complex needs a float tensor, got {self.dtype}")
    return ComplexValue(self)


@onnx_symbolic("aten::complex", opset=17)
def aten_complex(g: GraphContext, real: Value, imag: Value) -> ComplexValue:
    """complex(Tensor real, Tensor imag) -> Tensor: the pairs, broadcast as torch does"""
    if real.dtype != imag.dtype or not h.is_floating(real):
        raise ValueError(f"complex needs real and imag of one float dtype, got {real.dtype} and {imag.dtype}")
    return paired(g, real, imag)


@onnx_symbolic("aten::polar", opset=17)
def aten_polar(g: GraphContext, abs: Value, angle: Value) -> ComplexValue:  # noqa: A002 - the schema's name
    """polar(Tensor abs, Tensor angle) -> Tensor: abs (cos angle + i sin angle)"""
    return paired(g, g.op("Mul", abs, g.op("Cos", angle)), g.op("Mul", abs, g.op("Sin", angle)))


def _zero_fill(value: float | int | bool | None) -> float | int | bool | None:
    return None if value is None else type(value)(0)


@onnx_symbolic("aten::constant_pad_nd", opset=17, complex_inputs=OWN)
def aten_constant_pad_nd(
    g: GraphContext,
    self: ComplexValue | Value,
    pad: Sequence[int] | Sequence[int | Value] | Value,
    value: float | int | bool = 0,
) -> ComplexValue | Value:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor: a complex tensor's
    real parts are padded with value, its imaginary parts with 0 (a real fill value)"""
    if not isinstance(self, ComplexValue):
        return repeat_pad.aten_constant_pad_nd(g, self, pad, value)
    re, im = _parts(g, self)
    return paired(
        g,
        repeat_pad.aten_constant_pad_nd(g, re, pad, value),
        repeat_pad.aten_constant_pad_nd(g, im, pad, _zero_fill(value)),
    )


@onnx_symbolic("aten::pad", opset=17, complex_inputs=OWN)
def aten_pad(
    g: GraphContext,
    self: ComplexValue | Value,
    pad: Sequence[int] | Sequence[int | Value] | Value,
    mode: str = "constant",
    value: float | None = None,
) -> ComplexValue | Value:
    """pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor: each
    part padded alike (reflect, replicate and circular move elements), the imaginary parts
    with 0 where a constant fill value is given"""
    if not isinstance(self, ComplexValue):
        return repeat_pad.aten_pad(g, self, pad, mode, value)
    re, im = _parts(g, self)
    return paired(
        g, repeat_pad.aten_pad(g, re, pad, mode, value), repeat_pad.aten_pad(g, im, pad, mode, _zero_fill(value))
    )


# -- complex tensors made by the creation ops (GriffinLim's ``torch.full(size, 1, dtype=complex64)``)


def _filled_complex(
    g: GraphContext,
    fill: bool | int | float | Value,
    dtype: torch.dtype,
    make: Callable[[bool | int | float | Value, torch.dtype], Value],
) -> ComplexValue:
    """A complex tensor of ``dtype`` filled with a real ``fill``: ``make(fill, part dtype)`` builds
    each part with the base symbolic (the imaginary one filled with 0)."""
    part = tensors.complex_part_dtype(dtype)
    return paired(g, make(fill, part), make(0, part))


@onnx_symbolic("aten::full", opset=17)
def aten_full(
    g: GraphContext,
    size: Sequence[int] | Value,
    fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> ComplexValue | Value:
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor: of a complex
    dtype, the pairs (fill_value, 0)"""
    if dtype is None or not dtype.is_complex:
        return creation.aten_full(g, size, fill_value, dtype)
    return _filled_complex(g, fill_value, dtype, lambda fill, part: creation.aten_full(g, size, fill, part))


@onnx_symbolic("aten::zeros", opset=17)
def aten_zeros(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> ComplexValue | Value:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor: of a complex dtype, zero pairs"""
    if dtype is None or not dtype.is_complex:
        return creation.aten_zeros(g, size, dtype)
    return aten_full(g, size, 0, dtype)


@onnx_symbolic("aten::ones", opset=17)
def aten_ones(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> ComplexValue | Value:
    """ones(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor: of a complex dtype, the pairs (1, 0)"""
    if dtype is None or not dtype.is_complex:
        return creation.aten_ones(g, size, dtype)
    return aten_full(g, size, 1, dtype)


def _full_like(
    g: GraphContext, self: ComplexValue | Value, fill: bool | int | float | Value, dtype: torch.dtype | None
) -> ComplexValue | Value:
    """full_like of a complex tensor, or of a real one with a complex dtype: (fill, 0) pairs."""
    like = real_part(g, self) if isinstance(self, ComplexValue) else self
    if dtype is None and isinstance(self, ComplexValue):
        dtype = torch.complex128 if self.dtype == ir.DataType.DOUBLE else torch.complex64
    if dtype is None or not dtype.is_complex:
        return creation.aten_full_like(g, like, fill, dtype)
    return _filled_complex(g, fill, dtype, lambda value, part: creation.aten_full_like(g, like, value, part))


@onnx_symbolic("aten::full_like", opset=17, complex_inputs=OWN)
def aten_full_like(
    g: GraphContext,
    self: ComplexValue | Value,
    fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> ComplexValue | Value:
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor: complex
    (a complex self or dtype) as the pairs (fill_value, 0)"""
    return _full_like(g, self, fill_value, dtype)


@onnx_symbolic("aten::zeros_like", opset=17, complex_inputs=OWN)
def aten_zeros_like(
    g: GraphContext, self: ComplexValue | Value, dtype: torch.dtype | None = None
) -> ComplexValue | Value:
    """zeros_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor (GriffinLim's first tprev)"""
    return _full_like(g, self, 0, dtype)


@onnx_symbolic("aten::ones_like", opset=17, complex_inputs=OWN)
def aten_ones_like(
    g: GraphContext, self: ComplexValue | Value, dtype: torch.dtype | None = None
) -> ComplexValue | Value:
    """ones_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor: complex ones are (1, 0)"""
    return _full_like(g, self, 1, dtype)
