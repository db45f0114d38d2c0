"""Opset 9: the base set of symbolic functions.

Every later opset module inherits these through the floor rule and only re-registers what
changes. Families are grouped under headings; each docstring starts with the TorchScript
schema it implements, then says why the lowering is what it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value
_INT64_MAX = 9223372036854775807


# ============================================================================================
# Elementwise arithmetic
# ============================================================================================


def _scaled(g: GraphContext, x: Value, alpha: float) -> Value:
    if alpha == 1:
        return x
    return g.op("Mul", x, h.scalar_like(g, alpha, x))


@onnx_symbolic("aten::add")
def aten_add(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    if self.dtype == ir.DataType.BOOL:  # bool + bool is logical or in torch
        return g.op("Or", self, other)
    return g.op("Add", self, _scaled(g, other, alpha))


@onnx_symbolic("aten::sub")
def aten_sub(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    return g.op("Sub", self, _scaled(g, other, alpha))


@onnx_symbolic("aten::rsub")
def aten_rsub(g: GraphContext, self: Value, other: Value, alpha: float = 1) -> Value:
    """rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor: other - alpha*self"""
    return g.op("Sub", other, _scaled(g, self, alpha))


@onnx_symbolic("aten::mul")
def aten_mul(g: GraphContext, self: Value, other: Value) -> Value:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype == ir.DataType.BOOL:  # bool * bool is logical and in torch
        return g.op("And", self, other)
    return g.op("Mul", self, other)


def _floor_divide(g: GraphContext, self: Value, other: Value) -> Value:
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


def _trunc(g: GraphContext, x: Value) -> Value:
    """trunc without the Trunc op (none in ONNX): sign(x) * floor(|x|)."""
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


@onnx_symbolic("aten::div")
def aten_div(
    g: GraphContext, self: Value, other: Value, rounding_mode: str | None = None
) -> Value:
    """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor

    Integer operands arrive cast to float by scalar type analysis for true division.
    """
    if rounding_mode is None:
        return g.op("Div", self, other)
    if rounding_mode == "floor":
        return _floor_divide(g, self, other)
    if rounding_mode == "trunc":
        quotient = g.op("Div", self, other)
        return _trunc(g, quotient) if h.is_floating(self) else quotient
    raise ValueError(f"unknown rounding_mode {rounding_mode!r}")


@onnx_symbolic("aten::true_divide")
def aten_true_divide(g: GraphContext, self: Value, other: Value) -> Value:
    """true_divide.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Div", self, other)


@onnx_symbolic("aten::floor_divide")
def aten_floor_divide(g: GraphContext, self: Value, other: Value) -> Value:
    """floor_divide(Tensor self, Tensor other) -> Tensor (floors, also for negative ints)"""
    return _floor_divide(g, self, other)


@onnx_symbolic("aten::remainder")
def aten_remainder(g: GraphContext, self: Value, other: Value) -> Value:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor: self - floor(self/other)*other,
    which takes the sign of the divisor like Python's %."""
    return g.op("Sub", self, g.op("Mul", _floor_divide(g, self, other), other))


@onnx_symbolic("aten::neg")
def aten_neg(g: GraphContext, self: Value) -> Value:
    """neg(Tensor self) -> Tensor"""
    return g.op("Neg", self)


@onnx_symbolic("aten::abs")
def aten_abs(g: GraphContext, self: Value) -> Value:
    """abs(Tensor self) -> Tensor"""
    return g.op("Abs", self)


@onnx_symbolic("aten::pow")
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


@onnx_symbolic("aten::sqrt")
def aten_sqrt(g: GraphContext, self: Value) -> Value:
    """sqrt(Tensor self) -> Tensor"""
    return g.op("Sqrt", self)


@onnx_symbolic("aten::rsqrt")
def aten_rsqrt(g: GraphContext, self: Value) -> Value:
    """rsqrt(Tensor self) -> Tensor"""
    return g.op("Reciprocal", g.op("Sqrt", self))


@onnx_symbolic("aten::reciprocal")
def aten_reciprocal(g: GraphContext, self: Value) -> Value:
    """reciprocal(Tensor self) -> Tensor"""
    return g.op("Reciprocal", self)


@onnx_symbolic("aten::exp")
def aten_exp(g: GraphContext, self: Value) -> Value:
    """exp(Tensor self) -> Tensor"""
    return g.op("Exp", self)


@onnx_symbolic("aten::log")
def aten_log(g: GraphContext, self: Value) -> Value:
    """log(Tensor self) -> Tensor"""
    return g.op("Log", self)


@onnx_symbolic("aten::floor")
def aten_floor(g: GraphContext, self: Value) -> Value:
    """floor(Tensor self) -> Tensor"""
    return g.op("Floor", self) if h.is_floating(self) else self


@onnx_symbolic("aten::ceil")
def aten_ceil(g: GraphContext, self: Value) -> Value:
    """ceil(Tensor self) -> Tensor"""
    return g.op("Ceil", self) if h.is_floating(self) else self


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


# ============================================================================================
# Activations
# ============================================================================================


@onnx_symbolic("aten::relu")
def aten_relu(g: GraphContext, self: Value) -> Value:
    """relu(Tensor self) -> Tensor"""
    return g.op("Relu", self)


@onnx_symbolic("aten::relu6")
def aten_relu6(g: GraphContext, self: Value) -> Value:
    """relu6(Tensor self) -> Tensor"""
    return h.clip(g, self, 0.0, 6.0)


@onnx_symbolic("aten::leaky_relu")
def aten_leaky_relu(g: GraphContext, self: Value, negative_slope: float = 0.01) -> Value:
    """leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor"""
    return g.op("LeakyRelu", self, alpha=negative_slope)


@onnx_symbolic("aten::hardtanh")
def aten_hardtanh(g: GraphContext, self: Value, min_val: float = -1.0, max_val: float = 1.0) -> Value:
    """hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"""
    return h.clip(g, self, min_val, max_val)


@onnx_symbolic("aten::sigmoid")
def aten_sigmoid(g: GraphContext, self: Value) -> Value:
    """sigmoid(Tensor self) -> Tensor"""
    return g.op("Sigmoid", self)


@onnx_symbolic("aten::tanh")
def aten_tanh(g: GraphContext, self: Value) -> Value:
    """tanh(Tensor self) -> Tensor"""
    return g.op("Tanh", self)


@onnx_symbolic("aten::silu")
def aten_silu(g: GraphContext, self: Value) -> Value:
    """silu(Tensor self) -> Tensor: x * sigmoid(x)"""
    return g.op("Mul", self, g.op("Sigmoid", self))


@onnx_symbolic("aten::gelu")
def aten_gelu(g: GraphContext, self: Value, approximate: str = "none") -> Value:
    """gelu(Tensor self, *, str approximate='none') -> Tensor

    Exact: x/2 * (1 + erf(x/sqrt(2))). Tanh: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
    """
    half = g.op("Mul", self, h.scalar_like(g, 0.5, self))
    one = h.scalar_like(g, 1.0, self)
    if approximate == "none":
        inner = g.op("Erf", g.op("Mul", self, h.scalar_like(g, 1 / math.sqrt(2), self)))
    elif approximate == "tanh":
        cube = g.op("Mul", g.op("Mul", self, self), self)
        poly = g.op("Add", self, g.op("Mul", cube, h.scalar_like(g, 0.044715, self)))
        inner = g.op("Tanh", g.op("Mul", poly, h.scalar_like(g, math.sqrt(2 / math.pi), self)))
    else:
        raise ValueError(f"unknown gelu approximation {approximate!r}")
    return g.op("Mul", half, g.op("Add", inner, one))


@onnx_symbolic("aten::softmax")
def aten_softmax(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    x = h.cast(g, self, h.ir_dtype(dtype)) if dtype is not None else self
    return h.softmax(g, x, dim)


@onnx_symbolic("aten::log_softmax")
def aten_log_softmax(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    x = h.cast(g, self, h.ir_dtype(dtype)) if dtype is not None else self
    return h.softmax(g, x, dim, log=True)


@onnx_symbolic("aten::_log_softmax")
def aten__log_softmax(g: GraphContext, self: Value, dim: int, half_to_float: bool) -> Value:
    """_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    x = h.cast(g, self, ir.DataType.FLOAT) if half_to_float else self
    return h.softmax(g, x, dim, log=True)


# ============================================================================================
# Comparison and selection
# ============================================================================================


def _comparable(g: GraphContext, x: Value) -> Value:
    """Comparison ops before opset 11/13 lack small integer and half kernels: widen them."""
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return h.cast(g, x, ir.DataType.FLOAT)
    if x.dtype in (ir.DataType.INT8, ir.DataType.INT16, ir.DataType.UINT8, ir.DataType.UINT16):
        return h.cast(g, x, ir.DataType.INT32)
    return x


def _any_nan(g: GraphContext, a: Value, b: Value) -> Value:
    return g.op("Or", g.op("IsNaN", a), g.op("IsNaN", b))


def _equal(g: GraphContext, a: Value, b: Value) -> Value:
    """Equal. Equal-7 has no float kernel, so floats compare as neither less nor greater
    (and not NaN, which equals nothing)."""
    a, b = _comparable(g, a), _comparable(g, b)
    if g.opset >= 11 or not h.is_floating(a):
        return g.op("Equal", a, b)
    ordered = g.op("Or", g.op("Less", a, b), g.op("Greater", a, b))
    return g.op("Not", g.op("Or", ordered, _any_nan(g, a, b)))


@onnx_symbolic("aten::eq")
def aten_eq(g: GraphContext, self: Value, other: Value) -> Value:
    """eq.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _equal(g, self, other)


@onnx_symbolic("aten::ne")
def aten_ne(g: GraphContext, self: Value, other: Value) -> Value:
    """ne.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Not", _equal(g, self, other))


def _bool_operands(g: GraphContext, a: Value, b: Value) -> tuple[Value, Value]:
    if a.dtype == ir.DataType.BOOL:
        return h.cast(g, a, ir.DataType.INT32), h.cast(g, b, ir.DataType.INT32)
    return _comparable(g, a), _comparable(g, b)


@onnx_symbolic("aten::gt")
def aten_gt(g: GraphContext, self: Value, other: Value) -> Value:
    """gt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Greater", *_bool_operands(g, self, other))


@onnx_symbolic("aten::lt")
def aten_lt(g: GraphContext, self: Value, other: Value) -> Value:
    """lt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Less", *_bool_operands(g, self, other))


def _or_equal(g: GraphContext, strict_op: str, a: Value, b: Value) -> Value:
    """a <= b as not(a > b), except that NaN compares false (torch semantics)."""
    a, b = _bool_operands(g, a, b)
    opposite = "Greater" if strict_op == "Less" else "Less"
    result = g.op("Not", g.op(opposite, a, b))
    if h.is_floating(a):
        result = g.op("And", result, g.op("Not", _any_nan(g, a, b)))
    return result


@onnx_symbolic("aten::ge")
def aten_ge(g: GraphContext, self: Value, other: Value) -> Value:
    """ge.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _or_equal(g, "Greater", self, other)


@onnx_symbolic("aten::le")
def aten_le(g: GraphContext, self: Value, other: Value) -> Value:
    """le.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _or_equal(g, "Less", self, other)


@onnx_symbolic("aten::where")
def aten_where(g: GraphContext, condition: Value, self: Value, other: Value) -> Value:
    """where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"""
    return h.where(g, h.cast(g, condition, ir.DataType.BOOL), self, other)


@onnx_symbolic("aten::masked_fill")
def aten_masked_fill(g: GraphContext, self: Value, mask: Value, value: Value) -> Value:
    """masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor"""
    return h.where(g, h.cast(g, mask, ir.DataType.BOOL), h.cast(g, value, self.dtype), self)


@onnx_symbolic("aten::clamp")
def aten_clamp(g: GraphContext, self: Value, min: float | Value | None = None, max: float | Value | None = None) -> Value:  # noqa: A002 - schema names
    """clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"""
    return h.clip(g, self, min, max)


@onnx_symbolic("aten::clamp_min")
def aten_clamp_min(g: GraphContext, self: Value, min: float | Value) -> Value:  # noqa: A002
    """clamp_min(Tensor self, Scalar min) -> Tensor"""
    return h.clip(g, self, min, None)


@onnx_symbolic("aten::clamp_max")
def aten_clamp_max(g: GraphContext, self: Value, max: float | Value) -> Value:  # noqa: A002
    """clamp_max(Tensor self, Scalar max) -> Tensor"""
    return h.clip(g, self, None, max)


# ============================================================================================
# Reductions
# ============================================================================================


def _reduce_dims(dim: Sequence[int] | None) -> list[int] | None:
    return None if dim is None or len(dim) == 0 else list(dim)


@onnx_symbolic("aten::mean")
def aten_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    x = h.cast(g, self, h.ir_dtype(dtype)) if dtype is not None else self
    return h.reduce(g, "ReduceMean", x, _reduce_dims(dim), keepdim)


@onnx_symbolic("aten::sum")
def aten_sum(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    Bool and integer sums accumulate in int64, as torch does.
    """
    if dtype is not None:
        x = h.cast(g, self, h.ir_dtype(dtype))
    elif not h.is_floating(self):
        x = h.cast(g, self, ir.DataType.INT64)
    else:
        x = self
    return h.reduce(g, "ReduceSum", x, _reduce_dims(dim), keepdim)


# ============================================================================================
# Matrix products
# ============================================================================================


def _transposed_weight(g: GraphContext, weight: Value) -> Value:
    """W^T for a 2-D weight. An initializer is transposed at export time (a lazy view over
    the same storage, no copy until written), so the graph has no Transpose node."""
    tensor = weight.const_value
    if isinstance(tensor, tensors.TorchTensor) and weight.is_initializer():
        return g.transposed_initializer(weight)
    return g.op("Transpose", weight, perm=[1, 0])


@onnx_symbolic("aten::matmul")
def aten_matmul(g: GraphContext, self: Value, other: Value) -> Value:
    """matmul(Tensor self, Tensor other) -> Tensor"""
    return g.op("MatMul", self, other)


@onnx_symbolic("aten::mm")
def aten_mm(g: GraphContext, self: Value, mat2: Value) -> Value:
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    return g.op("MatMul", self, mat2)


@onnx_symbolic("aten::bmm")
def aten_bmm(g: GraphContext, self: Value, mat2: Value) -> Value:
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    return g.op("MatMul", self, mat2)


@onnx_symbolic("aten::addmm")
def aten_addmm(
    g: GraphContext, self: Value, mat1: Value, mat2: Value, beta: float = 1, alpha: float = 1
) -> Value:
    """addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    if h.is_floating(mat1):
        return g.op("Gemm", mat1, mat2, self, alpha=float(alpha), beta=float(beta))
    product = _scaled(g, g.op("MatMul", mat1, mat2), alpha)
    return g.op("Add", product, _scaled(g, self, beta))


@onnx_symbolic("aten::baddbmm")
def aten_baddbmm(
    g: GraphContext, self: Value, batch1: Value, batch2: Value, beta: float = 1, alpha: float = 1
) -> Value:
    """baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    product = _scaled(g, g.op("MatMul", batch1, batch2), alpha)
    if beta == 0:
        return product
    return g.op("Add", product, _scaled(g, self, beta))


@onnx_symbolic("aten::linear")
def aten_linear(g: GraphContext, input: Value, weight: Value, bias: Value | None = None) -> Value:  # noqa: A002
    """linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor

    2-D inputs with a bias take one Gemm (transB folds the transpose); other ranks take a
    MatMul against the weight transposed at export time.
    """
    if h.rank_of(input) == 2 and bias is not None and h.is_floating(input):
        return g.op("Gemm", input, weight, bias, transB=1)
    out = g.op("MatMul", input, _transposed_weight(g, weight))
    if bias is not None:
        out = g.op("Add", out, bias)
    return out


# ============================================================================================
# Shape and layout
# ============================================================================================


def _shape_value(g: GraphContext, size: Sequence[int] | Value) -> Value:
    return size if isinstance(size, Value) else g.constant(list(size))


@onnx_symbolic("aten::view")
def aten_view(g: GraphContext, self: Value, size: Sequence[int] | Value) -> Value:
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return g.op("Reshape", self, _shape_value(g, size))


@onnx_symbolic("aten::reshape")
def aten_reshape(g: GraphContext, self: Value, shape: Sequence[int] | Value) -> Value:
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return g.op("Reshape", self, _shape_value(g, shape))


@onnx_symbolic("aten::view_as")
def aten_view_as(g: GraphContext, self: Value, other: Value) -> Value:
    """view_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Reshape", self, h.shape_of(g, other))


@onnx_symbolic("aten::reshape_as")
def aten_reshape_as(g: GraphContext, self: Value, other: Value) -> Value:
    """reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Reshape", self, h.shape_of(g, other))


@onnx_symbolic("aten::flatten")
def aten_flatten(g: GraphContext, self: Value, start_dim: int = 0, end_dim: int = -1) -> Value:
    """flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"""
    rank = h.rank_of(self)
    if rank is None:
        raise ValueError("flatten needs the input rank")
    if rank == 0:
        return g.op("Reshape", self, g.constant([1]))
    start = h.normalize_dim(start_dim, rank)
    end = h.normalize_dim(end_dim, rank)
    if start == end:
        return self
    shape = h.static_shape(self)
    if shape is not None:
        flat = math.prod(shape[start : end + 1])
        return g.op("Reshape", self, g.constant(shape[:start] + [flat] + shape[end + 1 :]))
    if end == rank - 1 and start == 1:
        return g.op("Flatten", self, axis=1)
    parts = []
    full = g.op("Shape", self)
    if start > 0:
        parts.append(h.slice_static(g, full, [0], [0], [start]))
    parts.append(g.constant([-1]))
    if end < rank - 1:
        parts.append(h.slice_static(g, full, [0], [end + 1], [_INT64_MAX]))
    return g.op("Reshape", self, g.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0])


@onnx_symbolic("aten::unflatten")
def aten_unflatten(g: GraphContext, self: Value, dim: int, sizes: Sequence[int]) -> Value:
    """unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    shape = h.static_shape(self)
    if shape is not None:
        return g.op("Reshape", self, g.constant(shape[:dim] + list(sizes) + shape[dim + 1 :]))
    full = g.op("Shape", self)
    parts = []
    if dim > 0:
        parts.append(h.slice_static(g, full, [0], [0], [dim]))
    parts.append(g.constant(list(sizes)))
    if rank is not None and dim < rank - 1:
        parts.append(h.slice_static(g, full, [0], [dim + 1], [_INT64_MAX]))
    return g.op("Reshape", self, g.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0])


@onnx_symbolic("aten::permute")
def aten_permute(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    rank = len(dims)
    perm = [h.normalize_dim(d, rank) for d in dims]
    if perm == list(range(rank)):
        return self
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::transpose")
def aten_transpose(g: GraphContext, self: Value, dim0: int, dim1: int) -> Value:
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    rank = h.rank_of(self)
    if rank is None:
        raise ValueError("transpose needs the input rank")
    a, b = h.normalize_dim(dim0, rank), h.normalize_dim(dim1, rank)
    if a == b:
        return self
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::t")
def aten_t(g: GraphContext, self: Value) -> Value:
    """t(Tensor(a) self) -> Tensor(a)"""
    if (h.rank_of(self) or 0) < 2:
        return self
    return g.op("Transpose", self, perm=[1, 0])


@onnx_symbolic("aten::contiguous")
def aten_contiguous(g: GraphContext, self: Value) -> Value:
    """contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a): layout only"""
    return self


@onnx_symbolic("aten::clone")
def aten_clone(g: GraphContext, self: Value) -> Value:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return self


@onnx_symbolic("aten::detach")
def aten_detach(g: GraphContext, self: Value) -> Value:
    """detach(Tensor(a) self) -> Tensor(a)"""
    return self


@onnx_symbolic("aten::unsqueeze")
def aten_unsqueeze(g: GraphContext, self: Value, dim: int) -> Value:
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
    rank = h.rank_of(self)
    if dim < 0:
        if rank is None:
            raise ValueError("unsqueeze with a negative dim needs the input rank")
        dim += rank + 1
    return h.unsqueeze(g, self, [dim])


@onnx_symbolic("aten::squeeze")
def aten_squeeze(g: GraphContext, self: Value, dim: Sequence[int] | None = None) -> Value:
    """squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a); squeeze.dim; squeeze()

    torch leaves a dim that is not of size 1 alone; ONNX Squeeze would fail on it, so such
    dims are dropped from the axes when the shape is known.
    """
    if dim is None:
        shape = h.static_shape(self)
        if shape is not None:
            axes = [i for i, s in enumerate(shape) if s == 1]
            return h.squeeze(g, self, axes) if axes else self
        return h.squeeze(g, self, None)
    rank = h.rank_of(self)
    axes = [h.normalize_dim(d, rank) for d in dim]
    if self.shape is not None:
        axes = [a for a in axes if not (isinstance(self.shape[a], int) and self.shape[a] != 1)]
    if not axes:
        return self
    return h.squeeze(g, self, axes)


@onnx_symbolic("aten::cat")
def aten_cat(g: GraphContext, tensors: Sequence[Value], dim: int = 0) -> Value:  # noqa: F811
    """cat(Tensor[] tensors, int dim=0) -> Tensor"""
    if len(tensors) == 1:
        return tensors[0]
    return g.op("Concat", *tensors, axis=dim)


@onnx_symbolic("aten::stack")
def aten_stack(g: GraphContext, tensors: Sequence[Value], dim: int = 0) -> Value:  # noqa: F811
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    rank = h.rank_of(tensors[0])
    if dim < 0:
        if rank is None:
            raise ValueError("stack with a negative dim needs the input rank")
        dim += rank + 1
    parts = [h.unsqueeze(g, t, [dim]) for t in tensors]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=dim)


@onnx_symbolic("aten::expand")
def aten_expand(g: GraphContext, self: Value, size: Sequence[int] | Value, implicit: bool = False) -> Value:
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)

    torch's -1 keeps a dim; Expand broadcasts, so a 1 there does the same.
    """
    del implicit
    if isinstance(size, Value):
        ones = g.op("ConstantOfShape", g.op("Shape", size), value=torch.tensor([1]))
        is_keep = g.op("Equal", size, g.constant(-1))
        return g.op("Expand", self, g.op("Where", is_keep, ones, size))
    target = [1 if s == -1 else s for s in size]
    shape = h.static_shape(self)
    if shape is not None and len(shape) == len(target) and all(t in (1, s) for t, s in zip(target, shape)):
        return self
    return g.op("Expand", self, g.constant(target))


@onnx_symbolic("aten::expand_as")
def aten_expand_as(g: GraphContext, self: Value, other: Value) -> Value:
    """expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return g.op("Expand", self, h.shape_of(g, other))


@onnx_symbolic("aten::size")
def aten_size(g: GraphContext, self: Value, dim: int | None = None) -> int | Value | list[int]:
    """size.int(Tensor self, int dim) -> int; size(Tensor self) -> int[]

    A static dim is returned as a Python int, so shape arithmetic folds away.
    """
    if dim is None:
        shape = h.static_shape(self)
        return shape if shape is not None else g.op("Shape", self)
    return h.dim_size(g, self, dim)


# ============================================================================================
# Indexing
# ============================================================================================


@onnx_symbolic("aten::slice")
def aten_slice(
    g: GraphContext,
    self: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int = 1,
) -> Value:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"""
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    if isinstance(start, int) and isinstance(end, int):
        size = self.shape[dim] if self.shape is not None else None
        if step == 1 and start in (0,) and isinstance(size, int) and end >= size:
            return self
        if step != 1 and g.opset < 10:
            # Slice-1 has no steps: gather the selected positions instead (static sizes only)
            if not isinstance(size, int):
                raise ValueError("a strided slice of a dynamic dim needs opset 10 or higher")
            positions = list(range(size))[slice(start, end, step)]
            return g.op("Gather", self, g.constant(positions), axis=dim)
        return h.slice_static(g, self, [dim], [start], [end], [step])
    if g.opset < 10:
        raise ValueError("slicing with bounds computed at run time needs opset 10 or higher")
    bounds = [g.list_to_value([start]), g.list_to_value([end]), g.constant([dim])]
    if step != 1:
        bounds.append(g.constant([step]))
    return g.op("Slice", self, *bounds)


@onnx_symbolic("aten::select")
def aten_select(g: GraphContext, self: Value, dim: int, index: int | Value) -> Value:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)

    Gather before opset 11 does not take negative indices: they are made positive here.
    """
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    if isinstance(index, int):
        if index < 0:
            size = h.dim_size(g, self, dim)
            if isinstance(size, int):
                index += size
            elif g.opset < 11:
                raise ValueError("a negative index on a dynamic dim needs opset 11")
        return g.op("Gather", self, g.constant(index), axis=dim)
    return g.op("Gather", self, h.cast(g, index, ir.DataType.INT64), axis=dim)


def _scatter_elements(g: GraphContext, data: Value, indices: Value, updates: Value, axis: int) -> Value:
    """ScatterElements (Scatter before opset 11: same semantics, older name)."""
    return g.op("ScatterElements" if g.opset >= 11 else "Scatter", data, indices, updates, axis=axis)


@onnx_symbolic("aten::slice_scatter")
def aten_slice_scatter(
    g: GraphContext,
    self: Value,
    src: Value,
    dim: int = 0,
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int = 1,
) -> Value:
    """slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor

    The functional form of a write into a slice (``y[:, 1:3] = v``). With static bounds and
    step 1 it is a Concat of the untouched parts around ``src`` (a full slice is ``src``
    itself); other steps scatter along ``dim`` with indices folded at export time.
    """
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    size = self.shape[dim] if self.shape is not None else None
    src = h.cast(g, src, self.dtype) if self.dtype is not None else src
    if isinstance(size, int) and not isinstance(start, Value) and not isinstance(end, Value):
        lo = 0 if start is None else (start + size if start < 0 else start)
        hi = size if end is None else (end + size if end < 0 else end)
        lo, hi = max(0, min(lo, size)), max(0, min(hi, size))
        if step == 1:
            if lo == 0 and hi >= size:
                return src
            parts = []
            if lo > 0:
                parts.append(h.slice_static(g, self, [dim], [0], [lo]))
            parts.append(src)
            if hi < size:
                parts.append(h.slice_static(g, self, [dim], [hi], [size]))
            return g.op("Concat", *parts, axis=dim)
        src_shape = h.static_shape(src)
        if src_shape is None:
            raise ValueError("slice_scatter with a step needs a source of static shape")
        positions = torch.arange(lo, hi, step)[: src_shape[dim]]
        view = [1] * len(src_shape)
        view[dim] = len(positions)
        indices = positions.reshape(view).expand(src_shape).contiguous()
        return _scatter_elements(g, self, g.constant(indices), src, dim)
    if g.opset < 11:
        raise ValueError("slice_scatter with bounds known only at run time needs opset 11 or higher")
    first = g.list_to_value([0 if start is None else start])
    count = g.op("Gather", g.op("Shape", src), g.constant([dim]), axis=0)
    positions = g.op(
        "Range",
        h.squeeze(g, first, [0]),
        h.squeeze(g, g.op("Add", first, g.op("Mul", count, g.constant([step]))), [0]),
        g.constant(step),
    )
    shape = [1] * (rank or 1)
    shape[dim] = -1
    indices = g.op("Expand", g.op("Reshape", positions, g.constant(shape)), g.op("Shape", src))
    return _scatter_elements(g, self, indices, src, dim)


@onnx_symbolic("aten::select_scatter")
def aten_select_scatter(g: GraphContext, self: Value, src: Value, dim: int, index: int | Value) -> Value:
    """select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor

    The functional form of ``y[i] = v`` / ``y[i].add_(1)``: a one-element slice_scatter.
    """
    rank = h.rank_of(self)
    dim = h.normalize_dim(dim, rank)
    expanded = h.unsqueeze(g, src, [dim])
    if isinstance(index, int):
        size = self.shape[dim] if self.shape is not None else None
        if index < 0:
            if not isinstance(size, int):
                raise ValueError("a negative index on a dynamic dim is not supported here")
            index += size
        return aten_slice_scatter(g, self, expanded, dim, index, index + 1, 1)
    return aten_slice_scatter(g, self, expanded, dim, index, g.op("Add", h.cast(g, index, ir.DataType.INT64), g.constant(1)), 1)


@onnx_symbolic("aten::embedding")
def aten_embedding(
    g: GraphContext,
    weight: Value,
    indices: Value,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Value:
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor

    padding_idx, scale_grad_by_freq and sparse only affect gradients.
    """
    del padding_idx, scale_grad_by_freq, sparse
    return g.op("Gather", weight, indices, axis=0)


# ============================================================================================
# Casts and creation
# ============================================================================================


def _cast_to(g: GraphContext, self: Value, dtype: torch.dtype | None) -> Value:
    if dtype is None:
        return self
    return h.cast(g, self, h.ir_dtype(dtype))


@onnx_symbolic("aten::to.dtype")
def aten_to_dtype(g: GraphContext, self: Value, dtype: torch.dtype, copy: bool = False) -> Value:
    """to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    del copy
    return _cast_to(g, self, dtype)


@onnx_symbolic("aten::to.device")
def aten_to_device(g: GraphContext, self: Value, dtype: torch.dtype, copy: bool = False) -> Value:
    """to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    del copy
    return _cast_to(g, self, dtype)


@onnx_symbolic("aten::to.other")
def aten_to_other(g: GraphContext, self: Value, other: Value, copy: bool = False) -> Value:
    """to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    del copy
    return h.cast_like(g, self, other)


@onnx_symbolic("aten::to.prim_Device")
def aten_to_prim_device(g: GraphContext, self: Value, dtype: torch.dtype | None = None, copy: bool = False) -> Value:
    """to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)"""
    del copy
    return _cast_to(g, self, dtype)


@onnx_symbolic("aten::to.prim_dtype")
def aten_to_prim_dtype(g: GraphContext, self: Value, dtype: torch.dtype | None = None, copy: bool = False) -> Value:
    """to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)"""
    del copy
    return _cast_to(g, self, dtype)


@onnx_symbolic("aten::type_as")
def aten_type_as(g: GraphContext, self: Value, other: Value) -> Value:
    """type_as(Tensor self, Tensor other) -> Tensor"""
    return h.cast_like(g, self, other)


def _creation_dtype(dtype: torch.dtype | None, fill: float | int | bool | None = None) -> ir.DataType:
    if dtype is not None:
        return h.ir_dtype(dtype)
    if isinstance(fill, bool):
        return ir.DataType.BOOL
    if isinstance(fill, int):
        return ir.DataType.INT64
    return h.ir_dtype(torch.get_default_dtype())


def _filled(g: GraphContext, shape: Value, value: float | int | bool | Value, dtype: ir.DataType) -> Value:
    """A tensor of ``shape`` filled with ``value``: ConstantOfShape, or Expand for run-time values."""
    if isinstance(value, Value):
        return g.op("Expand", h.cast(g, value, dtype), shape)
    return g.op(
        "ConstantOfShape", shape, value=torch.tensor([value], dtype=tensors.to_torch_dtype(dtype))
    )


@onnx_symbolic("aten::zeros")
def aten_zeros(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _filled(g, _shape_value(g, size), 0, _creation_dtype(dtype))


@onnx_symbolic("aten::ones")
def aten_ones(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """ones(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, _shape_value(g, size), 1, _creation_dtype(dtype))


@onnx_symbolic("aten::full")
def aten_full(
    g: GraphContext,
    size: Sequence[int] | Value,
    fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> Value:
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    fill = None if isinstance(fill_value, Value) else fill_value
    return _filled(g, _shape_value(g, size), fill_value, _creation_dtype(dtype, fill))


@onnx_symbolic("aten::zeros_like")
def aten_zeros_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None) -> Value:
    """zeros_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_of(g, self), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::ones_like")
def aten_ones_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None) -> Value:
    """ones_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_of(g, self), 1, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::full_like")
def aten_full_like(
    g: GraphContext, self: Value, fill_value: bool | int | float | Value, dtype: torch.dtype | None = None
) -> Value:
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_of(g, self), fill_value, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_zeros")
def aten_new_zeros(g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, _shape_value(g, size), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_ones")
def aten_new_ones(g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, _shape_value(g, size), 1, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_full")
def aten_new_full(
    g: GraphContext, self: Value, size: Sequence[int] | Value, fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> Value:
    """new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, _shape_value(g, size), fill_value, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_empty")
def aten_new_empty(g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor (zeros:
    the values are unspecified in torch)"""
    return _filled(g, _shape_value(g, size), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::empty")
def aten_empty(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor (zeros)"""
    return _filled(g, _shape_value(g, size), 0, _creation_dtype(dtype))


@onnx_symbolic("aten::empty_like")
def aten_empty_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None) -> Value:
    """empty_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor (zeros)"""
    return _filled(g, h.shape_of(g, self), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::zero")
def aten_zero(g: GraphContext, self: Value) -> Value:
    """zero(Tensor self) -> Tensor (from zero_)"""
    return _filled(g, h.shape_of(g, self), 0, self.dtype)


@onnx_symbolic("aten::fill")
def aten_fill(g: GraphContext, self: Value, value: Value) -> Value:
    """fill.Tensor(Tensor self, Tensor value) -> Tensor (from fill_)"""
    return _filled(g, h.shape_of(g, self), value, self.dtype)


@onnx_symbolic("aten::copy")
def aten_copy(g: GraphContext, self: Value, src: Value, non_blocking: bool = False) -> Value:
    """copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor (from copy_):
    src broadcast to self's shape in self's dtype."""
    del non_blocking
    source = h.cast(g, src, self.dtype)
    target_shape = h.static_shape(self)
    if target_shape is not None and h.static_shape(source) == target_shape:
        return source
    return g.op("Expand", source, h.shape_of(g, self))


def _arange(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value,
    dtype: torch.dtype | None,
) -> Value:
    """arange with bounds known only at run time (constant bounds were folded in torch).

    Range only exists from opset 11; below it, NonZero over a ones vector of the element
    count yields 0..n-1, which is scaled and shifted.
    """
    is_float = any(isinstance(v, float) or (isinstance(v, Value) and h.is_floating(v)) for v in (start, end, step))
    out_dtype = h.ir_dtype(dtype) if dtype is not None else (h.ir_dtype(torch.get_default_dtype()) if is_float else ir.DataType.INT64)
    compute = ir.DataType.DOUBLE if is_float or tensors.is_floating(out_dtype) else ir.DataType.INT64

    def as_value(v: float | int | Value) -> Value:
        return h.cast(g, v, compute) if isinstance(v, Value) else g.constant(v, compute)

    start_v, end_v, step_v = as_value(start), as_value(end), as_value(step)
    if g.opset >= 11:
        return h.cast(g, g.op("Range", start_v, end_v, step_v), out_dtype)
    count = g.op("Div", g.op("Sub", end_v, start_v), step_v)
    if compute == ir.DataType.DOUBLE:
        count = g.op("Ceil", count)
    count = h.cast(g, count, ir.DataType.INT64)
    ones = g.op("ConstantOfShape", h.unsqueeze(g, count, [0]), value=torch.tensor([1], dtype=torch.int64))
    indices = h.squeeze(g, g.op("NonZero", ones), [0])
    values = g.op("Add", g.op("Mul", h.cast(g, indices, compute), step_v), start_v)
    return h.cast(g, values, out_dtype)


@onnx_symbolic("aten::arange")
def aten_arange(g: GraphContext, end: float | int | Value, dtype: torch.dtype | None = None) -> Value:
    """arange(Scalar end, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _arange(g, 0, end, 1, dtype)


@onnx_symbolic("aten::arange.start")
def aten_arange_start(
    g: GraphContext, start: float | int | Value, end: float | int | Value, dtype: torch.dtype | None = None
) -> Value:
    """arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _arange(g, start, end, 1, dtype)


@onnx_symbolic("aten::arange.start_step")
def aten_arange_start_step(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value = 1,
    dtype: torch.dtype | None = None,
) -> Value:
    """arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _arange(g, start, end, step, dtype)


# ============================================================================================
# Normalization
# ============================================================================================


def _channel_param(g: GraphContext, value: Value | None, like: Value, fill: float) -> Value:
    if value is not None:
        return value
    channels = h.dim_size(g, like, 1)
    if not isinstance(channels, int):
        raise ValueError("batch_norm without affine parameters needs a static channel count")
    return g.constant(torch.full((channels,), fill, dtype=tensors.to_torch_dtype(like.dtype)))


@onnx_symbolic("aten::batch_norm")
def aten_batch_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value | None,
    bias: Value | None,
    running_mean: Value | None,
    running_var: Value | None,
    training: bool,
    momentum: float,
    eps: float,
) -> Value:
    """batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor

    In training mode (or without running statistics) the batch statistics normalize, as in
    torch's forward; the running averages are not updated by an inference graph.
    """
    del momentum
    scale = _channel_param(g, weight, input, 1.0)
    shift = _channel_param(g, bias, input, 0.0)
    if not training and running_mean is not None and running_var is not None:
        return g.op("BatchNormalization", input, scale, shift, running_mean, running_var, epsilon=eps)
    rank = h.rank_of(input)
    if rank is None:
        raise ValueError("batch_norm with batch statistics needs the input rank")
    axes = [0] + list(range(2, rank))
    mean = h.reduce(g, "ReduceMean", input, axes, True)
    centered = g.op("Sub", input, mean)
    var = h.reduce(g, "ReduceMean", g.op("Mul", centered, centered), axes, True)
    normalized = g.op("Div", centered, g.op("Sqrt", g.op("Add", var, h.scalar_like(g, eps, input))))
    param_shape = g.constant([1, -1] + [1] * (rank - 2))
    return g.op(
        "Add",
        g.op("Mul", normalized, g.op("Reshape", scale, param_shape)),
        g.op("Reshape", shift, param_shape),
    )


def layer_norm_decomposed(
    g: GraphContext, input: Value, axes: list[int], weight: Value | None, bias: Value | None, eps: float  # noqa: A002
) -> Value:
    """LayerNorm from primitives; half inputs are normalized in float32 as torch does."""
    x = input
    low_precision = x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
    if low_precision:
        x = h.cast(g, x, ir.DataType.FLOAT)
    mean = h.reduce(g, "ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean)
    var = h.reduce(g, "ReduceMean", g.op("Mul", centered, centered), axes, True)
    eps_value = g.constant(eps, x.dtype if x.dtype is not None else ir.DataType.FLOAT)
    out = g.op("Div", centered, g.op("Sqrt", g.op("Add", var, eps_value)))
    if low_precision:
        out = h.cast(g, out, input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    if bias is not None:
        out = g.op("Add", out, bias)
    return out


@onnx_symbolic("aten::layer_norm")
def aten_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int],
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor"""
    axes = [-(i + 1) for i in range(len(normalized_shape))][::-1]
    return layer_norm_decomposed(g, input, axes, weight, bias, eps)


@onnx_symbolic("aten::dropout")
def aten_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """dropout(Tensor input, float p, bool train) -> Tensor

    Identity in eval. Training-mode dropout below opset 12 has no ONNX form that drops
    (Dropout-7..10 is an identity at inference), so it is refused rather than exported silent.
    """
    if not train or p == 0:
        return input
    raise ValueError("dropout in training mode needs opset 12 or higher (Dropout with training_mode)")


@onnx_symbolic("aten::feature_dropout")
def aten_feature_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """feature_dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    raise ValueError("feature dropout in training mode cannot be exported")


# ============================================================================================
# Convolution and pooling
# ============================================================================================


def _pads(padding: Sequence[int], spatial: int) -> list[int]:
    padding = list(padding) if len(padding) == spatial else list(padding) * spatial
    return padding + padding


def _spatial_list(values: Sequence[int], spatial: int) -> list[int]:
    return list(values) * spatial if len(values) == 1 else list(values)


def convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int] | str,
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Value:
    """Conv / ConvTranspose from torch's convolution arguments."""
    kernel = h.static_shape(weight)
    if kernel is None:
        raise ValueError("convolution needs a weight of static shape")
    spatial = len(kernel) - 2
    attrs: dict[str, object] = {
        "kernel_shape": kernel[2:],
        "strides": _spatial_list(stride, spatial),
        "dilations": _spatial_list(dilation, spatial),
        "group": groups,
    }
    if isinstance(padding, str):
        if padding == "valid":
            attrs["pads"] = [0] * (2 * spatial)
        elif padding == "same":
            pads_begin, pads_end = [], []
            for k, d in zip(kernel[2:], attrs["dilations"]):  # type: ignore[arg-type]
                total = d * (k - 1)
                pads_begin.append(total // 2)
                pads_end.append(total - total // 2)
            attrs["pads"] = pads_begin + pads_end
        else:
            raise ValueError(f"unknown padding mode {padding!r}")
    else:
        attrs["pads"] = _pads(padding, spatial)
    inputs = [input, weight] + ([bias] if bias is not None else [])
    if transposed:
        if any(output_padding):
            attrs["output_padding"] = _spatial_list(output_padding, spatial)
        return g.op("ConvTranspose", *inputs, **attrs)
    return g.op("Conv", *inputs, **attrs)


@onnx_symbolic("aten::_convolution")
def aten__convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    benchmark: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
) -> Value:
    """_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor"""
    del benchmark, deterministic, allow_tf32
    return convolution(g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@onnx_symbolic("aten::convolution")
def aten_convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Value:
    """convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor"""
    return convolution(g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@onnx_symbolic("aten::_convolution_mode")
def aten__convolution_mode(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: str,
    dilation: Sequence[int],
    groups: int,
) -> Value:
    """_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, SymInt[] dilation, SymInt groups) -> Tensor

    padding='same' pads the extra element at the end, as torch does for even kernels.
    """
    return convolution(g, input, weight, bias, stride, padding, dilation, False, [0], groups)


def _conv_nd(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int] | str,
    dilation: Sequence[int],
    groups: int,
) -> Value:
    return convolution(g, input, weight, bias, stride, padding, dilation, False, [0], groups)


@onnx_symbolic("aten::conv1d")
def aten_conv1d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] | str = (0,), dilation: Sequence[int] = (1,), groups: int = 1,
) -> Value:
    """conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("aten::conv2d")
def aten_conv2d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] | str = (0,), dilation: Sequence[int] = (1,), groups: int = 1,
) -> Value:
    """conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("aten::conv3d")
def aten_conv3d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] | str = (0,), dilation: Sequence[int] = (1,), groups: int = 1,
) -> Value:
    """conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


def pool_attributes(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int] | None,
    ceil_mode: bool,
) -> dict[str, object]:
    """Attributes of MaxPool/AveragePool; ceil_mode and dilations only exist from opset 10."""
    spatial = (h.rank_of(x) or len(kernel_size) + 2) - 2
    kernel = _spatial_list(kernel_size, spatial)
    attrs: dict[str, object] = {
        "kernel_shape": kernel,
        "strides": _spatial_list(stride, spatial) if stride else kernel,
        "pads": _pads(padding, spatial),
    }
    dilations = _spatial_list(dilation, spatial) if dilation else [1] * spatial
    if g.opset >= 10:
        attrs["ceil_mode"] = int(ceil_mode)
        if any(d != 1 for d in dilations):
            attrs["dilations"] = dilations
    else:
        if ceil_mode:
            raise ValueError("pooling with ceil_mode=True needs opset 10 or higher")
        if any(d != 1 for d in dilations):
            raise ValueError("pooling with dilation needs opset 10 or higher")
    return attrs


def _max_pool(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool) -> Value:
    return g.op("MaxPool", self, **pool_attributes(g, self, kernel_size, stride, padding, dilation, ceil_mode))


@onnx_symbolic("aten::max_pool1d")
def aten_max_pool1d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode)


@onnx_symbolic("aten::max_pool2d")
def aten_max_pool2d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode)


@onnx_symbolic("aten::max_pool3d")
def aten_max_pool3d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode)


def _avg_pool(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], ceil_mode: bool, count_include_pad: bool, divisor_override: int | None) -> Value:
    if divisor_override is not None:
        raise ValueError("avg_pool with divisor_override has no ONNX equivalent")
    attrs = pool_attributes(g, self, kernel_size, stride, padding, None, ceil_mode)
    return g.op("AveragePool", self, count_include_pad=int(count_include_pad), **attrs)


@onnx_symbolic("aten::avg_pool1d")
def aten_avg_pool1d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True) -> Value:
    """avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@onnx_symbolic("aten::avg_pool2d")
def aten_avg_pool2d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Value:
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@onnx_symbolic("aten::avg_pool3d")
def aten_avg_pool3d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Value:
    """avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_avg_pool(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """Adaptive average pooling: global when the output is all ones, else a plain
    AveragePool when every input dim divides evenly by the output dim."""
    spatial = len(output_size)
    if all(s == 1 for s in output_size):
        return g.op("GlobalAveragePool", self)
    shape = h.static_shape(self)
    if shape is None:
        raise ValueError("adaptive_avg_pool with an output other than 1 needs static input sizes")
    in_sizes = shape[-spatial:]
    out_sizes = [o if o is not None else i for o, i in zip(output_size, in_sizes)]
    if any(i % o for i, o in zip(in_sizes, out_sizes)):
        raise ValueError(
            f"adaptive_avg_pool from {in_sizes} to {out_sizes}: sizes that do not divide evenly "
            "are not supported yet"
        )
    kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
    return g.op("AveragePool", self, kernel_shape=kernel, strides=kernel)


@onnx_symbolic("aten::adaptive_avg_pool1d")
def aten_adaptive_avg_pool1d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_avg_pool2d")
def aten_adaptive_avg_pool2d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_avg_pool3d")
def aten_adaptive_avg_pool3d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


# ============================================================================================
# Attention
# ============================================================================================


def _causal_mask(g: GraphContext, query: Value, key: Value) -> Value:
    """A bool [L, S] mask, true on and below the diagonal (torch aligns it top-left)."""
    length = h.dim_size(g, query, -2)
    source = h.dim_size(g, key, -2)
    if isinstance(length, int) and isinstance(source, int):
        return g.constant(torch.ones(length, source, dtype=torch.bool).tril())
    if g.opset < 11:
        raise ValueError("is_causal with a sequence length known only at run time needs opset 11")

    def positions(size: int | Value) -> Value:
        end = size if isinstance(size, Value) else g.constant(size)
        return g.op("Range", g.constant(0), end, g.constant(1))

    rows = h.unsqueeze(g, positions(length), [1])
    return g.op("Not", g.op("Less", rows, positions(source)))


@onnx_symbolic("aten::scaled_dot_product_attention")
def aten_scaled_dot_product_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    attn_mask: Value | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Value:
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor

    softmax(Q K^T * scale + mask) V from MatMul and Softmax, which every opset has (torch's
    exporter needs opset 14). A bool mask selects, a float mask adds.
    """
    if dropout_p > 0 and g.options.training:
        raise ValueError("attention dropout in training mode cannot be exported")
    if enable_gqa:
        raise ValueError("scaled_dot_product_attention with enable_gqa=True is not supported yet")
    if scale is None:
        depth = h.dim_size(g, query, -1)
        if isinstance(depth, int):
            scale_value = h.scalar_like(g, 1.0 / math.sqrt(depth), query)
        else:
            scale_value = g.op("Reciprocal", g.op("Sqrt", h.cast_like(g, depth, query)))
    else:
        scale_value = h.scalar_like(g, scale, query)
    scores = g.op("Mul", g.op("MatMul", query, h.matmul_transposed_last(g, key)), scale_value)
    minus_inf = h.scalar_like(g, float("-inf"), query)
    if is_causal:
        scores = g.op("Where", _causal_mask(g, query, key), scores, minus_inf)
    if attn_mask is not None:
        if attn_mask.dtype == ir.DataType.BOOL:
            scores = g.op("Where", attn_mask, scores, minus_inf)
        else:
            scores = g.op("Add", scores, h.cast_like(g, attn_mask, query))
    rank = h.rank_of(query)
    weights = h.softmax(g, scores, rank - 1 if rank is not None else -1, rank=rank)
    return g.op("MatMul", weights, value)


# ============================================================================================
# Scalars and TorchScript primitives
# ============================================================================================


@onnx_symbolic("aten::Int")
def aten_int(g: GraphContext, a: Value) -> Value:
    """Int.Tensor(Tensor a) -> int: a 0-d int64 value when only known at run time"""
    return h.cast(g, a, ir.DataType.INT64)


@onnx_symbolic("aten::Float")
def aten_float(g: GraphContext, a: Value) -> Value:
    """Float.Tensor(Tensor a) -> float"""
    return h.cast(g, a, ir.DataType.DOUBLE)


@onnx_symbolic("aten::Bool")
def aten_bool(g: GraphContext, a: Value) -> Value:
    """Bool.Tensor(Tensor a) -> bool"""
    return h.cast(g, a, ir.DataType.BOOL)


@onnx_symbolic("aten::ScalarImplicit")
def aten_scalar_implicit(g: GraphContext, a: Value) -> Value:
    """ScalarImplicit(Tensor a) -> Scalar"""
    return a


@onnx_symbolic("prim::NumToTensor")
def prim_num_to_tensor(g: GraphContext, *inputs: object) -> object:
    """prim::NumToTensor(Scalar a) -> Tensor"""
    (a,) = inputs
    if isinstance(a, (bool, int, float)):
        return torch.tensor(a)
    return a


@onnx_symbolic("prim::ListConstruct")
def prim_list_construct(g: GraphContext, *inputs: object) -> object:
    """prim::ListConstruct(...) -> list: kept as a Python list; symbolics convert it as
    their annotation asks (a constant int list, a run-time shape, a list of tensors)."""
    return list(inputs)


@onnx_symbolic("prim::TupleConstruct")
def prim_tuple_construct(g: GraphContext, *inputs: object) -> object:
    """prim::TupleConstruct(...) -> tuple"""
    return tuple(inputs)


def _unpack(g: GraphContext, packed: object) -> object:
    count = g.node.outputsSize() if g.node is not None else 0
    if isinstance(packed, (list, tuple)):
        if len(packed) != count:
            raise ValueError(f"unpacking {len(packed)} items into {count} values")
        return tuple(packed) if count != 1 else packed[0]
    if isinstance(packed, Value):  # a run-time shape: one 0-d value per dim
        items = tuple(g.op("Gather", packed, g.constant(i), axis=0) for i in range(count))
        return items if count != 1 else items[0]
    raise TypeError(f"cannot unpack {type(packed).__name__}")


@onnx_symbolic("prim::ListUnpack")
def prim_list_unpack(g: GraphContext, *inputs: object) -> object:
    """prim::ListUnpack(list) -> (...)"""
    return _unpack(g, inputs[0])


@onnx_symbolic("prim::TupleUnpack")
def prim_tuple_unpack(g: GraphContext, *inputs: object) -> object:
    """prim::TupleUnpack(tuple) -> (...)"""
    return _unpack(g, inputs[0])


# ============================================================================================
# Control flow and TorchScript builtins (scripted models)
# ============================================================================================

_UNROLL_LIMIT = 256


def _raises(block: torch._C.Block) -> bool:
    return any(node.kind() == "prim::RaiseException" for node in block.nodes())


def _as_bool_value(g: GraphContext, condition: Value) -> Value:
    if h.rank_of(condition) not in (0, None):
        condition = g.op("Reshape", condition, g.constant(torch.tensor([], dtype=torch.int64)))
    return h.cast(g, condition, ir.DataType.BOOL)


@onnx_symbolic("prim::If")
def prim_if(g: GraphContext, *inputs: object) -> object:
    """prim::If(bool cond) with two blocks -> ONNX If.

    A condition known at export time emits only the taken branch. A branch that only raises
    (a scripted argument check) cannot be expressed in ONNX; the other branch is taken, as
    it is for every input the model accepts.
    """
    (condition,) = inputs
    then_block, else_block = list(g.node.blocks())
    outputs = g.node.outputsSize()
    if isinstance(condition, (bool, int)) or (isinstance(condition, torch.Tensor) and condition.numel() == 1):
        taken = then_block if bool(condition) else else_block
        result = g.inline_block(taken)
    elif _raises(then_block) or _raises(else_block):
        result = g.inline_block(else_block if _raises(then_block) else then_block)
    else:
        assert isinstance(condition, Value)
        then_graph = g.subgraph(then_block, [], "then_branch")
        else_graph = g.subgraph(else_block, [], "else_branch")
        if outputs == 0:
            return None
        values = g.op(
            "If", _as_bool_value(g, condition), then_branch=then_graph, else_branch=else_graph, num_outputs=outputs
        )
        return values
    if outputs == 0:
        return None
    return result[0] if outputs == 1 else tuple(result)


def _is_for_loop(body: torch._C.Block) -> bool:
    condition = list(body.outputs())[0]
    node = condition.node()
    return node.kind() == "prim::Constant" and node.output().toIValue() is True


@onnx_symbolic("prim::Loop")
def prim_loop(g: GraphContext, *inputs: object) -> object:
    """prim::Loop(int max_trip_count, bool cond, *carried) -> ONNX Loop, or an unrolled copy.

    A for loop with a trip count known at export time is unrolled (up to 256 iterations):
    lists appended to, values changing shape between iterations and Python-level state all
    stay exact, and the graph has no Loop to schedule. Otherwise the body becomes an ONNX
    Loop whose carried values are the loop's.
    """
    trip_count, condition, *carried = inputs
    (body,) = list(g.node.blocks())
    count = g.node.outputsSize()
    if (
        isinstance(trip_count, int)
        and condition is True
        and _is_for_loop(body)
        and trip_count <= _UNROLL_LIMIT
    ):
        state = list(carried)
        for iteration in range(trip_count):
            outputs = g.inline_block(body, [iteration, *state])
            state = outputs[1:]
        return state[0] if count == 1 else (tuple(state) if count else None)
    if any(isinstance(c, (list, tuple)) for c in carried):
        raise ValueError(
            "a loop that carries a list needs a trip count known at export time (it is then unrolled)"
        )
    trip = g.constant(trip_count if isinstance(trip_count, int) else _INT64_MAX) if not isinstance(trip_count, Value) else h.cast(g, trip_count, ir.DataType.INT64)
    cond = g.constant(bool(condition)) if not isinstance(condition, Value) else _as_bool_value(g, condition)
    initial = [c if isinstance(c, Value) else g.constant(c) for c in carried]
    iteration = ir.Value(name=g.unique_name("loop_iteration"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
    cond_in = ir.Value(name=g.unique_name("loop_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    carried_in = [
        ir.Value(
            name=g.unique_name("loop_carried"),
            type=ir.TensorType(v.dtype) if v.dtype is not None else None,
            shape=ir.Shape([None] * len(v.shape)) if v.shape is not None else None,
        )
        for v in initial
    ]
    body_graph = g.subgraph(body, [iteration, *carried_in], "loop_body")
    # ONNX's body takes (iteration, condition, carried...); TorchScript's takes (iteration, carried...).
    body_graph.inputs.insert(1, cond_in)
    if body_graph.outputs[0].dtype != ir.DataType.BOOL:
        raise ValueError("the loop condition must be a bool")
    if count == 0:
        return None
    results = g.op("Loop", trip, cond, *initial, body=body_graph, num_outputs=count)
    return results if count > 1 else results


@onnx_symbolic("prim::RaiseException")
def prim_raise_exception(g: GraphContext, *inputs: object) -> object:
    """prim::RaiseException(str msg, str? cls): only reached in a branch decided at export
    time to raise, which means the example input itself would have raised."""
    raise ValueError(f"the scripted model raises here for the example inputs: {inputs[0]!r}")


@onnx_symbolic("prim::Uninitialized")
def prim_uninitialized(g: GraphContext, *inputs: object) -> object:
    """prim::Uninitialized() -> Any: a placeholder on paths that raise; never read."""
    return None


@onnx_symbolic("prim::unchecked_cast")
def prim_unchecked_cast(g: GraphContext, *inputs: object) -> object:
    """prim::unchecked_cast(t x) -> t: a type refinement (Optional[T] -> T), no computation."""
    return inputs[0]


def _identical(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a is b


@onnx_symbolic("aten::__is__")
def aten___is__(g: GraphContext, self: object, obj: object) -> object:
    """__is__(t1 self, t2 obj) -> bool: `x is None` is decided at export time, since a value
    in the exported graph is either always present or always absent."""
    return _identical(self, obj)


@onnx_symbolic("aten::__isnot__")
def aten___isnot__(g: GraphContext, self: object, obj: object) -> object:
    """__isnot__(t1 self, t2 obj) -> bool"""
    return not _identical(self, obj)


@onnx_symbolic("aten::len.t")
def aten_len_t(g: GraphContext, a: object) -> object:
    """len.t(t[] a) -> int: lists are Python lists at export time."""
    if isinstance(a, (list, tuple)):
        return len(a)
    if isinstance(a, Value):  # a shape computed at run time
        return h.dim_size(g, a, 0)
    raise TypeError(f"len of {type(a).__name__}")


@onnx_symbolic("aten::len.Tensor")
def aten_len_tensor(g: GraphContext, t: Value) -> object:
    """len.Tensor(Tensor t) -> int"""
    return h.dim_size(g, t, 0)


@onnx_symbolic("aten::__getitem__")
def aten___getitem__(g: GraphContext, list: object, idx: object) -> object:  # noqa: A002 - schema name
    """__getitem__.t(t[](a) list, int idx) -> t(*): lists are Python lists at export time."""
    if isinstance(list, (tuple, type([]))) and isinstance(idx, int):
        return list[idx]
    if isinstance(list, Value) and isinstance(idx, int):  # a shape list computed at run time
        return g.op("Gather", list, g.constant(idx), axis=0)
    raise ValueError("indexing a list with an index computed at run time is not supported")


@onnx_symbolic("aten::append")
def aten_append(g: GraphContext, self: object, el: object) -> object:
    """append.t(t[](a!) self, t(c -> *) el) -> t[](a!): mutates the export-time list."""
    if not isinstance(self, list):
        raise ValueError("append to a list built at run time is not supported")
    self.append(el)
    return self


@onnx_symbolic("aten::__range_length")
def aten___range_length(g: GraphContext, lo: int | Value, hi: int | Value, step: int | Value) -> object:
    """__range_length(int lo, int hi, int step) -> int: trip count of range(lo, hi, step)."""
    values = [v if isinstance(v, Value) else g.constant(v) for v in (lo, hi, step)]
    lo_v, hi_v, step_v = (h.cast(g, v, ir.DataType.INT64) for v in values)
    span = g.op("Sub", hi_v, lo_v)
    # ceil(span / step) for positive steps, clamped at 0
    count = g.op("Div", g.op("Sub", g.op("Add", span, step_v), g.constant(1)), step_v)
    return g.op("Max", count, g.constant(0)) if g.opset >= 12 else g.op("Where", g.op("Less", count, g.constant(0)), g.constant(0), count)


@onnx_symbolic("aten::__derive_index")
def aten___derive_index(g: GraphContext, index: int | Value, start: int | Value, step: int | Value) -> object:
    """__derive_index(int index, int start, int step) -> int: start + index * step."""
    values = [v if isinstance(v, Value) else g.constant(v) for v in (index, start, step)]
    index_v, start_v, step_v = (h.cast(g, v, ir.DataType.INT64) for v in values)
    return g.op("Add", start_v, g.op("Mul", index_v, step_v))


# -- export-time facts: what scripted library code asks about its environment ----------------
# nn.TransformerEncoderLayer and nn.MultiheadAttention, scripted, check devices, autocast,
# grad mode and nesting before choosing a fused path. In an exported inference graph these
# are constants: CPU, no autocast, no grad, not nested. The composite path is then taken.


@onnx_symbolic("aten::is_autocast_enabled")
def aten_is_autocast_enabled(g: GraphContext) -> object:
    """is_autocast_enabled() -> bool: an exported graph never autocasts."""
    return False


@onnx_symbolic("aten::is_grad_enabled")
def aten_is_grad_enabled(g: GraphContext) -> object:
    """is_grad_enabled() -> bool: an exported graph computes no gradients."""
    return False


@onnx_symbolic("prim::requires_grad")
def prim_requires_grad(g: GraphContext, *inputs: object) -> object:
    """prim::requires_grad(Tensor a) -> bool"""
    return False


@onnx_symbolic("prim::is_nested")
def prim_is_nested(g: GraphContext, *inputs: object) -> object:
    """prim::is_nested(Tensor a) -> bool: nested tensors have no ONNX form."""
    return False


@onnx_symbolic("prim::type")
def prim_type(g: GraphContext, *inputs: object) -> object:
    """prim::type(Device self) -> str: the device type; ONNX graphs are device independent."""
    (device,) = inputs
    return device.type if isinstance(device, torch.device) else "cpu"


@onnx_symbolic("aten::warn")
def aten_warn(g: GraphContext, *inputs: object) -> object:
    """warn(str message, int stacklevel=2) -> (): warnings are dropped from the graph."""
    return None


@onnx_symbolic("aten::format")
def aten_format(g: GraphContext, *inputs: object) -> object:
    """format(str self, ...) -> str: strings only feed messages; a run-time value prints as '?'."""
    template, *values = inputs
    try:
        return str(template).format(*("?" if isinstance(v, Value) else v for v in values))
    except (IndexError, KeyError, ValueError):
        return str(template)


@onnx_symbolic("aten::__contains__")
def aten___contains__(g: GraphContext, *inputs: object) -> object:
    """__contains__.*(list or dict, item) -> bool: decided on export-time containers."""
    container, item = inputs
    if isinstance(item, Value) or any(isinstance(v, Value) for v in (container if isinstance(container, (list, tuple)) else [])):
        raise ValueError("`in` on values computed at run time is not supported")
    return item in container


@onnx_symbolic("prim::TupleIndex")
def prim_tuple_index(g: GraphContext, *inputs: object) -> object:
    """prim::TupleIndex(Any tup, int i) -> Any"""
    container, index = inputs
    if not isinstance(index, int):
        raise ValueError("indexing a tuple with a run-time index is not supported")
    return container[index]


@onnx_symbolic("aten::len.str")
def aten_len_str(g: GraphContext, s: str) -> object:
    """len.str(str s) -> int"""
    return len(s)
