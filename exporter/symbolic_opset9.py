"""Opset 9: the base set of symbolic functions.

Every later opset module inherits these through the floor rule and only re-registers what
changes. Families are grouped under headings; each docstring starts with the TorchScript
schema it implements, then says why the lowering is what it is.

Contents (search for the heading):
  core:     Elementwise arithmetic, Activations, Comparison and selection, Reductions,
            Matrix products, Shape and layout, Indexing, Casts and creation, Normalization,
            Convolution and pooling, Attention, Scalars and TorchScript primitives,
            Control flow and TorchScript builtins
  families: Elementwise math, activations, logical and bitwise ops; Indexing, gather/scatter,
            sorting and selection; Normalization, convolution and pooling variants,
            interpolation; Attention fast paths and random ops; Shape manipulation, padding
            and creation; Reductions, norms, statistics and losses; Recurrent layers
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList, ScanItem

Value = ir.Value
_INT64_MAX = h.INT64_MAX


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
    """rsqrt(Tensor self) -> Tensor

    Div(1, Sqrt(x)) rather than Reciprocal(Sqrt(x)): onnxruntime's SimplifiedLayerNormFusion
    matches RMSNorm written as x * rsqrt(mean(x^2) + eps) (T5, LLaMA) only in the Div form.
    """
    root = g.op("Sqrt", self)
    return g.op("Div", h.scalar_like(g, 1.0, root), root)


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
    The node shapes are the ones onnxruntime's GeluFusion and FastGeluFusion recognise, so each
    GELU runs as one fused kernel: the exact form must divide by sqrt(2) (a Mul by 1/sqrt(2) is
    not matched) and the tanh form must cube with Pow(x, 3) (Mul(Mul(x, x), x) is not matched).
    """
    half = g.op("Mul", self, h.scalar_like(g, 0.5, self))
    one = h.scalar_like(g, 1.0, self)
    if approximate == "none":
        inner = g.op("Erf", g.op("Div", self, h.scalar_like(g, math.sqrt(2), self)))
    elif approximate == "tanh":
        cube = g.op("Pow", self, h.scalar_like(g, 3.0, self))
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
def aten_cat(g: GraphContext, tensors: Sequence[Value] | RuntimeList, dim: int = 0) -> Value:  # noqa: F811
    """cat(Tensor[] tensors, int dim=0) -> Tensor"""
    if isinstance(tensors, RuntimeList):
        return runtime_list.cat(g, tensors, dim)
    if len(tensors) == 1:
        return tensors[0]
    return g.op("Concat", *tensors, axis=dim)


@onnx_symbolic("aten::stack")
def aten_stack(g: GraphContext, tensors: Sequence[Value] | RuntimeList, dim: int = 0) -> Value:  # noqa: F811
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    if isinstance(tensors, RuntimeList):
        return runtime_list.stack(g, tensors, dim)
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


@onnx_symbolic("aten::to.dtype_layout")
def aten_to_dtype_layout(g: GraphContext, self: Value, dtype: torch.dtype | None = None, copy: bool = False) -> Value:
    """to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
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
    """LayerNorm from primitives; half inputs are normalized in float32 as torch does.

    The variance squares with Pow(centered, 2), not Mul(centered, centered): onnxruntime's
    LayerNormFusion only matches the Pow form and then runs one LayerNormalization kernel.
    """
    x = input
    low_precision = x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)
    if low_precision:
        x = h.cast(g, x, ir.DataType.FLOAT)
    mean = h.reduce(g, "ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean)
    square = g.op("Pow", centered, h.scalar_like(g, 2.0, centered))
    var = h.reduce(g, "ReduceMean", square, axes, True)
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


def _max_pool(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool, spatial: int) -> Value:
    """MaxPool, also for unbatched [C, *spatial] inputs (a batch dim is added and removed) and
    integer inputs (MaxPool has no integer kernels before opset 12: computed in double)."""
    x, added = _batched(g, self, spatial)
    compute = _pool_dtype(g, x)
    pooled = g.op("MaxPool", h.cast(g, x, compute), **pool_attributes(g, x, kernel_size, stride, padding, dilation, ceil_mode))
    (out,) = _unbatched(g, (pooled,), added)
    return h.cast(g, out, self.dtype) if self.dtype is not None else out


@onnx_symbolic("aten::max_pool1d")
def aten_max_pool1d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 1)


@onnx_symbolic("aten::max_pool2d")
def aten_max_pool2d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 2)


@onnx_symbolic("aten::max_pool3d")
def aten_max_pool3d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Value:
    """max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 3)


def _avg_pool(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], ceil_mode: bool, count_include_pad: bool, divisor_override: int | None, spatial: int) -> Value:
    """AveragePool, also for unbatched [C, *spatial] inputs."""
    if divisor_override is not None:
        raise ValueError("avg_pool with divisor_override has no ONNX equivalent")
    x, added = _batched(g, self, spatial)
    attrs = pool_attributes(g, x, kernel_size, stride, padding, None, ceil_mode)
    (out,) = _unbatched(g, (g.op("AveragePool", x, count_include_pad=int(count_include_pad), **attrs),), added)
    return out


@onnx_symbolic("aten::avg_pool1d")
def aten_avg_pool1d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True) -> Value:
    """avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


@onnx_symbolic("aten::avg_pool2d")
def aten_avg_pool2d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Value:
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@onnx_symbolic("aten::avg_pool3d")
def aten_avg_pool3d(g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,), ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Value:
    """avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _adaptive_avg_pool(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """Adaptive average pooling with torch's exact windows (see adaptive_avg_pool below)."""
    return adaptive_avg_pool(g, self, output_size)


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
    if enable_gqa:  # key/value carry fewer heads: repeat them, then attend as usual
        return aten_scaled_dot_product_attention_gqa(
            g, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa
        )
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
    if isinstance(packed, RuntimeList):  # the count is fixed by the TorchScript node
        items = tuple(runtime_list.at(g, packed, i) for i in range(count))
        return items if count != 1 else items[0]
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


# -- lists changed inside run-time control flow ------------------------------------------
# A list is a Python list while its length is fixed at export time. A loop or branch that
# decides at run time whether or how often a list grows turns it into a RuntimeList (see
# runtime_list.py): a Loop scan output when the body appends one item per iteration to an
# empty list, else an ONNX sequence threaded through the Loop or If (opset 13).

# Ops that change a list in place.
_LIST_MUTATIONS = frozenset({"aten::append", "aten::insert", "aten::pop", "aten::_set_item", "aten::Delete", "aten::clear", "aten::extend"})


def _inside(block: torch._C.Block, node: torch._C.Node) -> bool:
    """Whether ``node`` lies in ``block`` or a block nested in it."""
    owner: torch._C.Block | None = node.owningBlock()
    while owner is not None:
        if owner == block:
            return True
        parent = owner.owningNode()
        owner = parent.owningBlock() if parent is not None else None
    return False


def _nodes_within(blocks: Sequence[torch._C.Block]) -> list[torch._C.Node]:
    found = []
    for block in blocks:
        for node in block.nodes():
            found.append(node)
            found.extend(_nodes_within(list(node.blocks())))
    return found


class _OuterList:
    """A list defined before a control-flow node and used inside its blocks."""

    def __init__(self, obj: object) -> None:
        self.obj = obj
        self.uses: list[torch._C.Node] = []
        self.values: list[torch._C.Value] = []
        self.mutated = False


def _outer_lists(g: GraphContext, blocks: Sequence[torch._C.Block]) -> list[_OuterList]:
    """The lists (export-time or run-time) from enclosing code that ``blocks`` change, each
    with all of its uses inside them: these must be threaded through the If or Loop."""
    # Most blocks change no list: searching for the mutating ops in C++ first is much
    # cheaper than walking every node in Python.
    if not any(block.findAllNodes(kind, True) for kind in _LIST_MUTATIONS for block in blocks):
        return []
    found: dict[int, _OuterList] = {}
    for node in _nodes_within(blocks):
        for position, value in enumerate(node.inputs()):
            if not isinstance(value.type(), torch._C.ListType):
                continue
            if any(_inside(block, value.node()) for block in blocks):
                continue
            obj = g.lookup(value)
            if not isinstance(obj, (list, RuntimeList)):
                continue
            entry = found.setdefault(id(obj), _OuterList(obj))
            entry.uses.append(node)
            if value not in entry.values:
                entry.values.append(value)
            if position == 0 and node.kind() in _LIST_MUTATIONS:
                entry.mutated = True
    return [entry for entry in found.values() if entry.mutated]


def _as_runtime_list(g: GraphContext, entry: _OuterList) -> RuntimeList:
    if isinstance(entry.obj, RuntimeList):
        return entry.obj
    assert isinstance(entry.obj, list)
    converted = runtime_list.from_items(g, entry.obj)
    g.replace(entry.obj, converted)
    return converted


def _sequences_in_control_flow(g: GraphContext, what: str) -> None:
    if g.opset < runtime_list.CONTROL_FLOW_SEQUENCE_OPSET:
        raise ValueError(
            f"{what} needs opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} or higher: ONNX Loop and If "
            f"carry sequences from opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} (exporting at opset {g.opset})"
        )


def _threaded_values(lists: Sequence[RuntimeList]) -> list[Value]:
    return [items.sequence for items in lists]  # type: ignore[misc]


@onnx_symbolic("prim::If")
def prim_if(g: GraphContext, *inputs: object) -> object:
    """prim::If(bool cond) with two blocks -> ONNX If.

    A condition known at export time emits only the taken branch. A branch that only raises
    (a scripted argument check) cannot be expressed in ONNX; the other branch is taken, as
    it is for every input the model accepts. Lists a branch changes become sequences that
    the If returns (opset 13).
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
        changed = _outer_lists(g, [then_block, else_block])
        if changed:
            _sequences_in_control_flow(g, "a list changed inside an `if` on a value computed at run time")
        lists = [_as_runtime_list(g, entry) for entry in changed]
        before = [runtime_list.sequence_of(g, items) for items in lists]
        branches = []
        for block, name in ((then_block, "then_branch"), (else_block, "else_branch")):
            for items, value in zip(lists, before):
                items.sequence = value
            branches.append(g.subgraph(block, [], name, extra_outputs=lambda: _threaded_values(lists)))
        count = outputs + len(lists)
        if count == 0:
            return None
        values = g.op(
            "If", _as_bool_value(g, condition), then_branch=branches[0], else_branch=branches[1], num_outputs=count
        )
        values = values if isinstance(values, tuple) else (values,)
        _typed_like(values, branches[0].outputs)
        for items, value in zip(lists, values[outputs:]):
            items._set_sequence(value)
        if outputs == 0:
            return None
        return values[0] if outputs == 1 else values[:outputs]
    if outputs == 0:
        return None
    return result[0] if outputs == 1 else tuple(result)


def _typed_like(values: Sequence[Value], graph_outputs: Sequence[Value]) -> None:
    """Type If/Loop results from the subgraph outputs they come from (the shapes may differ
    between branches and iterations, so only the rank is kept)."""
    for value, source in zip(values, graph_outputs):
        if value.type is None and source.type is not None:
            value.type = source.type
        if value.shape is None and source.shape is not None and not isinstance(source.type, ir.SequenceType):
            value.shape = ir.Shape([None] * len(source.shape))


def _is_for_loop(body: torch._C.Block) -> bool:
    condition = list(body.outputs())[0]
    node = condition.node()
    return node.kind() == "prim::Constant" and node.output().toIValue() is True


def _unrolled_loop(g: GraphContext, body: torch._C.Block, trip_count: int, carried: list[object], count: int) -> object:
    state = list(carried)
    for iteration in range(trip_count):
        outputs = g.inline_block(body, [iteration, *state])
        state = outputs[1:]
    return state[0] if count == 1 else (tuple(state) if count else None)


def _is_scan(entry: _OuterList, body: torch._C.Block) -> bool:
    """An empty list the body only appends to, once per iteration: a Loop scan output."""
    if not isinstance(entry.obj, list) or entry.obj or len(entry.uses) != 1:
        return False
    (use,) = entry.uses
    return use.kind() == "aten::append" and use.owningBlock() == body and not use.output().uses()


def _later_uses(entry: _OuterList, node: torch._C.Node) -> list[str]:
    return [use.user.kind() for value in entry.values for use in value.uses() if use.user != node and not _inside_node(node, use.user)]


def _inside_node(node: torch._C.Node, other: torch._C.Node) -> bool:
    return any(_inside(block, other) for block in node.blocks())


def _onnx_loop(
    g: GraphContext, body: torch._C.Block, trip_count: object, condition: object, carried: list[object], count: int, changed: list[_OuterList]
) -> object:
    sequences_allowed = g.opset >= runtime_list.CONTROL_FLOW_SEQUENCE_OPSET
    scans: list[_OuterList] = []
    threaded: list[_OuterList] = []
    for entry in changed:
        # A scan output needs items of one shape, which torch.stack guarantees; with
        # sequences available, lists used any other way stay sequences.
        stacked_only = set(_later_uses(entry, g.node)) <= {"aten::stack", "aten::len"}
        if _is_scan(entry, body) and (stacked_only or not sequences_allowed):
            scans.append(entry)
        else:
            threaded.append(entry)
    if threaded:
        _sequences_in_control_flow(
            g,
            "a list changed inside a loop whose trip count is only known at run time (other than "
            "appending one item per iteration to a list that starts empty)",
        )
    lists = [_as_runtime_list(g, entry) for entry in threaded]
    trip = g.constant(trip_count if isinstance(trip_count, int) else _INT64_MAX) if not isinstance(trip_count, Value) else h.cast(g, trip_count, ir.DataType.INT64)
    cond = g.constant(bool(condition)) if not isinstance(condition, Value) else _as_bool_value(g, condition)
    initial = [c if isinstance(c, Value) else g.constant(c) for c in carried]
    initial_lists = [runtime_list.sequence_of(g, items) for items in lists]
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
    lists_in = [items.new_sequence_value(g.unique_name("loop_list")) for items in lists]
    for items, value in zip(lists, lists_in):
        items.sequence = value
    collectors = [runtime_list.ScanItem() for _ in scans]
    for entry, collector in zip(scans, collectors):
        g.replace(entry.obj, collector)
    # Loop-1 wants at least one loop-carried value: a loop that only has scan outputs passes
    # a dummy one through.
    dummy = [g.constant(False)] if not initial and not initial_lists else []
    dummy_in = [ir.Value(name=g.unique_name("loop_unused"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
                for _ in dummy]

    def extra_outputs() -> list[object]:
        return [*_threaded_values(lists), *dummy_in, *(c.item for c in collectors)]

    body_graph = g.subgraph(body, [iteration, *carried_in, *lists_in, *dummy_in], "loop_body", extra_outputs)
    # ONNX's body takes (iteration, condition, carried...); TorchScript's takes (iteration, carried...).
    body_graph.inputs.insert(1, cond_in)
    if body_graph.outputs[0].dtype != ir.DataType.BOOL:
        raise ValueError("the loop condition must be a bool")
    if count + len(lists) + len(scans) == 0:
        return None
    total = count + len(lists) + len(dummy) + len(scans)
    values = g.op("Loop", trip, cond, *initial, *initial_lists, *dummy, body=body_graph, num_outputs=total)
    values = values if isinstance(values, tuple) else (values,)
    _typed_like(values[: total - len(scans)], body_graph.outputs[1:])
    for items, value in zip(lists, values[count:]):
        items._set_sequence(value)
    for entry, collector, value in zip(scans, collectors, values[count + len(lists) + len(dummy):]):
        item = collector.item
        assert item is not None
        value.dtype = item.dtype
        if item.shape is not None:
            value.shape = ir.Shape([None, *item.shape])
        g.replace(collector, RuntimeList(stacked=value, item_dtype=item.dtype))
    if count == 0:
        return None
    return values[0] if count == 1 else values[:count]


@onnx_symbolic("prim::Loop")
def prim_loop(g: GraphContext, *inputs: object) -> object:
    """prim::Loop(int max_trip_count, bool cond, *carried) -> ONNX Loop, or an unrolled copy.

    Loops become ONNX Loop, whose size does not grow with the trip count. A for loop with a
    trip count known at export time (up to 256) is unrolled instead when its body changes
    Python-level state ONNX cannot carry: lists from outside the loop, values that start as
    None, or a body that only exports with its iteration number known (the Loop attempt
    failed). With a run-time trip count, lists the body appends to become a scan output or
    a loop-carried sequence (see runtime_list.py).
    """
    trip_count, condition, *carried = inputs
    (body,) = list(g.node.blocks())
    count = g.node.outputsSize()
    changed = _outer_lists(g, [body])
    static_for = isinstance(trip_count, int) and condition is True and _is_for_loop(body) and trip_count <= _UNROLL_LIMIT
    if static_for:
        needs_python_state = any(isinstance(e.obj, list) for e in changed) or any(
            c is None or isinstance(c, (list, tuple)) for c in carried
        )
        if needs_python_state or trip_count <= 1:
            return _unrolled_loop(g, body, trip_count, carried, count)
        saved = [(e.obj, e.obj.sequence, e.obj.stacked) for e in changed if isinstance(e.obj, RuntimeList)]
        try:
            return _onnx_loop(g, body, trip_count, condition, carried, count, changed)
        except Exception:  # noqa: BLE001 - the unrolled form needs less of ONNX
            for items, sequence, stacked in saved:
                items.sequence, items.stacked = sequence, stacked
            return _unrolled_loop(g, body, trip_count, carried, count)
    if any(isinstance(c, (list, tuple)) for c in carried):
        raise ValueError("a list re-assigned in a loop whose trip count is only known at run time is not supported")
    return _onnx_loop(g, body, trip_count, condition, carried, count, changed)


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
    if isinstance(a, RuntimeList):
        return runtime_list.length(g, a)
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
    if isinstance(list, RuntimeList) and isinstance(idx, (int, Value)):
        return runtime_list.at(g, list, idx)
    if isinstance(list, Value) and isinstance(idx, int):  # a shape list computed at run time
        return g.op("Gather", list, g.constant(idx), axis=0)
    raise ValueError("indexing a list with an index computed at run time is not supported")


@onnx_symbolic("aten::append")
def aten_append(g: GraphContext, self: object, el: object) -> object:
    """append.t(t[](a!) self, t(c -> *) el) -> t[](a!): grows the export-time list, or the
    run-time one (a sequence, or the item of a loop's scan output)."""
    if isinstance(self, ScanItem):
        if not isinstance(el, Value):
            el = g.constant(el)
        self.item = el
        return self
    if isinstance(self, RuntimeList):
        return runtime_list.append(g, self, el)
    if not isinstance(self, list):
        raise ValueError(f"append to {type(self).__name__} is not supported")
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
    if isinstance(container, RuntimeList):
        raise ValueError("`in` on a list whose length is only known at run time is not supported")
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


# -- lists: Python lists at export time, RuntimeLists where their length is a run-time value -


def _export_time_list(g: GraphContext, value: object, what: str) -> list:  # type: ignore[type-arg]
    if not isinstance(value, list):
        raise ValueError(f"{what} on {type(value).__name__} is not supported")
    return value


@onnx_symbolic("aten::list.t")
def aten_list_t(g: GraphContext, l: object) -> object:  # noqa: E741 - schema name
    """list.t(t[] l) -> t[]: a copy, so later mutation of either list stays separate."""
    if isinstance(l, RuntimeList):
        return runtime_list.copy(l)
    return list(_export_time_list(g, l, "list()"))


@onnx_symbolic("aten::_set_item.t")
def aten__set_item_t(g: GraphContext, l: object, idx: int | Value, el: object) -> object:  # noqa: E741
    """_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!): `l[idx] = el`"""
    if isinstance(l, RuntimeList):
        runtime_list.set_item(g, l, idx, el)
        return l
    if not isinstance(idx, int):
        raise ValueError("assigning to an export-time list at an index computed at run time is not supported")
    items = _export_time_list(g, l, "item assignment")
    items[idx] = el
    return items


@onnx_symbolic("aten::insert.t")
def aten_insert_t(g: GraphContext, self: object, idx: int | Value, el: object) -> object:
    """insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()"""
    if isinstance(self, RuntimeList):
        runtime_list.insert(g, self, idx, el)
        return None
    if not isinstance(idx, int):
        raise ValueError("inserting into an export-time list at an index computed at run time is not supported")
    _export_time_list(g, self, "insert").insert(idx, el)
    return None


@onnx_symbolic("aten::pop.t")
def aten_pop_t(g: GraphContext, self: object, idx: int | Value = -1) -> object:
    """pop.t(t[](a!) self, int idx=-1) -> t(*)"""
    if isinstance(self, RuntimeList):
        return runtime_list.pop(g, self, idx)
    if not isinstance(idx, int):
        raise ValueError("popping from an export-time list at an index computed at run time is not supported")
    return _export_time_list(g, self, "pop").pop(idx)


@onnx_symbolic("aten::Delete.t")
def aten_delete_t(g: GraphContext, self: object, idx: int | Value) -> object:
    """Delete.t(t[](a!) self, int idx) -> (): `del l[idx]`"""
    if isinstance(self, RuntimeList):
        runtime_list.delete(g, self, idx)
        return None
    if not isinstance(idx, int):
        raise ValueError("deleting from an export-time list at an index computed at run time is not supported")
    del _export_time_list(g, self, "del")[idx]
    return None


@onnx_symbolic("aten::clear.t")
def aten_clear_t(g: GraphContext, self: object) -> object:
    """clear.t(t[](a!) self) -> ()"""
    if isinstance(self, RuntimeList):
        runtime_list.clear(g, self)
        return None
    _export_time_list(g, self, "clear").clear()
    return None


@onnx_symbolic("aten::item")
def aten_item(g: GraphContext, self: Value) -> object:
    """item(Tensor self) -> Scalar: a 0-d value; constants were folded to numbers already."""
    if h.rank_of(self) not in (0, None):
        return g.op("Reshape", self, g.constant(torch.tensor([], dtype=torch.int64)))
    return self


# ============================================================================================
# Elementwise math, activations, logical and bitwise ops
# ============================================================================================
# Elementwise math, activations, logical and bitwise ops, and the elementwise losses. Everything
# here is registered at opset 9 unless ONNX gained a better-suited op later (fmod, round and the
# Bitwise* ops are re-registered where they appear).
#
# Recurring constraints:
# - onnxruntime lacks double kernels for Acos/Asin/Atan/Tan/Elu/Selu/Softplus/HardSigmoid/Erf,
#   so those compute in float32 (``_float_kernel``); PRelu only has float/half kernels.
# - Ops absent from scalar type analysis (unary math on integers, logical and bitwise ops,
#   shifts) take torch's result dtype from the TorchScript node (``_out_dtype``).
# - Equal has no float kernel before opset 11 and Max/Min no integer one before 12, so the
#   helpers here compare through the opset 9 idioms instead.

_FLOAT32_ONLY_KERNELS = (ir.DataType.DOUBLE, ir.DataType.BFLOAT16)


# ============================================================================================
# Helpers
# ============================================================================================


def _out_dtype(g: GraphContext, default: ir.DataType | None = None) -> ir.DataType | None:
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


def _as_result_dtype(g: GraphContext, x: Value) -> Value:
    """``x`` cast to the node's result dtype: unary math on integers computes in float."""
    return h.cast(g, x, _out_dtype(g, x.dtype) or x.dtype)


def _float_kernel(g: GraphContext, op_type: str, x: Value, **attrs: object) -> Value:
    """``op_type`` on ``x``, through float32 for dtypes onnxruntime has no kernel for."""
    if x.dtype in _FLOAT32_ONLY_KERNELS:
        out = g.op(op_type, h.cast(g, x, ir.DataType.FLOAT), **attrs)
        return g.op("Cast", out, to=x.dtype)
    return g.op(op_type, x, **attrs)


def _constant_of(x: Value) -> float | int | bool | None:
    """The Python number behind a single-element constant value, else None."""
    if x.const_value is None or x.const_value.size != 1:
        return None
    return x.const_value.numpy().reshape(()).item()


def _filled_like(g: GraphContext, x: Value, value: bool) -> Value:
    """A bool tensor of ``x``'s shape filled with ``value`` (isnan of an integer tensor...)."""
    return g.op("ConstantOfShape", h.shape_of(g, x), value=torch.tensor([value]))


def _largest_finite(g: GraphContext, x: Value) -> Value:
    return h.scalar_like(g, torch.finfo(tensors.to_torch_dtype(x.dtype)).max, x)


def _is_inf(g: GraphContext, x: Value) -> Value:
    """|x| > the largest finite value. Needs no IsInf (opset 10, and without a float16 kernel
    in onnxruntime before opset 20) and is false for NaN, as isinf is."""
    if not h.is_floating(x):
        return _filled_like(g, x, False)
    return g.op("Greater", g.op("Abs", x), _largest_finite(g, x))


def _is_nan(g: GraphContext, x: Value) -> Value:
    if not h.is_floating(x):
        return _filled_like(g, x, False)
    return g.op("IsNaN", x)


def _sign_bit(g: GraphContext, x: Value) -> Value:
    """x < 0 including -0.0 (1 / -0.0 is -inf): the sign bit of a float, false for NaN."""
    zero = h.scalar_like(g, 0.0, x)
    return g.op("Or", g.op("Less", x, zero), g.op("Less", g.op("Reciprocal", x), zero))


def _keep_nan(g: GraphContext, x: Value, out: Value) -> Value:
    """``out`` where ``x`` is a number, NaN where it is NaN (ops that map NaN to a number)."""
    if not h.is_floating(x):
        return out
    return g.op("Where", g.op("IsNaN", x), x, out)


def _log1p(g: GraphContext, x: Value) -> Value:
    """log(1 + x) accurate for tiny x (Log(1 + x) returns 0 for |x| < 1e-8 in float32).

    Kahan's trick: with u = 1 + x rounded, log(u) * x / (u - 1) cancels the rounding of u.
    u == 1 means x is below the rounding step, where log1p(x) == x; x / (u - 1) is inf/inf
    only for x = inf, where the factor is 1.
    """
    one = h.scalar_like(g, 1.0, x)
    u = g.op("Add", x, one)
    factor = g.op("Div", x, g.op("Sub", u, one))
    factor = g.op("Where", g.op("IsNaN", factor), one, factor)
    out = g.op("Mul", g.op("Log", u), factor)
    return g.op("Where", _equal(g, u, one), x, out)


def _softplus(g: GraphContext, x: Value) -> Value:
    """log(1 + exp(x)) without overflow. onnxruntime's Softplus is stable for float and half;
    other dtypes use relu(x) + log1p(exp(-|x|))."""
    if x.dtype in (ir.DataType.FLOAT, ir.DataType.FLOAT16):
        return g.op("Softplus", x)
    tail = _log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x))))
    return g.op("Add", g.op("Relu", x), tail)


def _pick(g: GraphContext, a: Value, b: Value, larger: bool) -> Value:
    """max(a, b) / min(a, b) with torch's NaN propagation. Max/Min ignore or mishandle NaN
    depending on the kernel and have no integer kernels before opset 12 (Greater + Where
    there); narrow integers compute in int32 (no int16 Max or Where kernels)."""
    if a.dtype == ir.DataType.BOOL:
        return g.op("Or" if larger else "And", a, b)
    if not h.is_floating(a):
        compute = _compute_dtype(a.dtype)
        wide_a, wide_b = h.cast(g, a, compute), h.cast(g, b, compute)
        if g.opset >= 12:
            out = g.op("Max" if larger else "Min", wide_a, wide_b)
        else:
            out = g.op("Where", g.op("Greater" if larger else "Less", wide_a, wide_b), wide_a, wide_b)
        return h.cast(g, out, a.dtype)
    picked = g.op("Max" if larger else "Min", a, b)
    return g.op("Where", g.op("IsNaN", a), a, g.op("Where", g.op("IsNaN", b), b, picked))


def _pick_ignoring_nan(g: GraphContext, a: Value, b: Value, larger: bool) -> Value:
    """fmax/fmin: a NaN operand loses to a number (NaN only when both are NaN)."""
    if not h.is_floating(a):
        return _pick(g, a, b, larger)
    picked = g.op("Max" if larger else "Min", a, b)
    return g.op("Where", g.op("IsNaN", a), b, g.op("Where", g.op("IsNaN", b), a, picked))


def _reduction(g: GraphContext, loss: Value, reduction: int) -> Value:
    """torch's loss reduction enum: 0 none, 1 mean, 2 sum (over every element)."""
    if reduction == 0:
        return loss
    if reduction == 1:
        return h.reduce(g, "ReduceMean", loss, None, False)
    if reduction == 2:
        return h.reduce(g, "ReduceSum", loss, None, False)
    raise ValueError(f"unknown loss reduction {reduction}")


def _round_half_even(g: GraphContext, x: Value) -> Value:
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


def _halves(g: GraphContext, x: Value, dim: int) -> tuple[Value, Value]:
    """``x`` split in two equal halves along ``dim``."""
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        sizes = [size // 2, size // 2]
        if g.opset >= 13:
            return g.op("Split", x, g.constant(sizes), axis=dim, num_outputs=2)
        return g.op("Split", x, axis=dim, split=sizes, num_outputs=2)
    if g.opset >= 18:
        # g.op's own num_outputs keyword hides the attribute of that name; pass it as an Attr.
        return g.op("Split", x, axis=dim, num_outputs=2, outputs_attr=ir.AttrInt64("num_outputs", 2))
    return g.op("Split", x, axis=dim, num_outputs=2)


# -- integer bit manipulation --------------------------------------------------------------

_BIT_WIDTHS = {
    ir.DataType.INT8: 8,
    ir.DataType.UINT8: 8,
    ir.DataType.INT16: 16,
    ir.DataType.UINT16: 16,
    ir.DataType.INT32: 32,
    ir.DataType.UINT32: 32,
    ir.DataType.INT64: 64,
}
_UNSIGNED = frozenset({ir.DataType.UINT8, ir.DataType.UINT16, ir.DataType.UINT32})


def _compute_dtype(dtype: ir.DataType) -> ir.DataType:
    """The integer dtype onnxruntime has arithmetic kernels for at every opset (int32/int64)
    that holds every value of ``dtype``; casting back truncates, which is the wrap-around torch
    gives for narrow types."""
    if dtype not in _BIT_WIDTHS:
        raise TypeError(f"bitwise operations need an integer or bool tensor, got {dtype}")
    return ir.DataType.INT64 if _BIT_WIDTHS[dtype] == 64 or dtype == ir.DataType.UINT32 else ir.DataType.INT32


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
    compute = _compute_dtype(out_dtype)
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
            raise ValueError("integer bitwise ops below opset 18 need the operand ranks")
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


def _bitwise_binary(g: GraphContext, op: str, self: Value, other: Value, *, native: bool) -> Value:
    """and/or/xor in torch's result dtype: logical on bool; on integers Bitwise* when
    ``native`` (opset 18), else the arithmetic decomposition."""
    dtype = _out_dtype(g, self.dtype) or self.dtype
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
    compute = _compute_dtype(x.dtype)
    all_ones = (1 << _BIT_WIDTHS[x.dtype]) - 1 if x.dtype in _UNSIGNED else -1
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
    dtype = _out_dtype(g, self.dtype) or self.dtype
    x = h.cast(g, self, dtype)
    if dtype not in _BIT_WIDTHS:
        raise TypeError(f"shifts need an integer tensor, got {dtype}")
    bits = _BIT_WIDTHS[dtype]
    compute = _compute_dtype(dtype)
    x = h.cast(g, x, compute)
    amount = h.cast(g, other, ir.DataType.INT64)
    zero = _int_constant(g, 0, compute)
    signed = dtype not in _UNSIGNED
    # Usable powers: left shifts use 2^0..2^(n-1); right shifts of the non-negative part need
    # 2^0..2^(n-2) when signed (its values stay below 2^(n-1)), 2^0..2^(n-1) unsigned.
    count = bits if left or not signed else bits - 1
    table = _int_constant(g, [_wrap_signed(1 << i, 64 if compute == ir.DataType.INT64 else 32) for i in range(count)], compute)
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


# ============================================================================================
# Elementwise math
# ============================================================================================


def _unary_float(g: GraphContext, op_type: str, self: Value) -> Value:
    return _float_kernel(g, op_type, _as_result_dtype(g, self))


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


@onnx_symbolic("aten::atan2")
def aten_atan2(g: GraphContext, self: Value, other: Value) -> Value:
    """atan2(Tensor self, Tensor other) -> Tensor

    atan(y / x) corrected by +-pi when x is negative. The sign tests (_sign_bit) count -0.0
    as negative, as in C's atan2 (torch's exporter tests y > 0 and returns -pi for
    atan2(0, -1)). 0/0 and inf/inf make the ratio NaN: there it is replaced by y (a signed
    zero) and by sign(y) (atan = pi/4) before the quadrant fix-up.
    """
    y, x = self, other
    zero = h.scalar_like(g, 0.0, x)
    ratio = g.op("Div", y, x)
    both_zero = g.op("And", _equal(g, y, zero), _equal(g, x, zero))
    ratio = g.op("Where", both_zero, y, ratio)
    both_inf = g.op("And", _is_inf(g, y), _is_inf(g, x))
    ratio = g.op("Where", both_inf, g.op("Mul", g.op("Sign", y), g.op("Sign", x)), ratio)
    angle = _float_kernel(g, "Atan", ratio)
    y_negative, x_negative = _sign_bit(g, y), _sign_bit(g, x)
    pi = h.scalar_like(g, math.pi, x)
    turned = g.op("Where", y_negative, g.op("Sub", angle, pi), g.op("Add", angle, pi))
    return g.op("Where", x_negative, turned, angle)


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
    x = _as_result_dtype(g, self)
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

    Log(1 + x) loses all precision for tiny x (torch's exporter does that); see _log1p.
    """
    return _log1p(g, _as_result_dtype(g, self))


@onnx_symbolic("aten::logit")
def aten_logit(g: GraphContext, self: Value, eps: float | None = None) -> Value:
    """logit(Tensor self, float? eps=None) -> Tensor: log(z / (1 - z)), z clamped to
    [eps, 1 - eps] when eps is given.

    The clamp selects with Less/Greater + Where: NaN stays NaN as in torch, and double works
    below opset 11 (onnxruntime's attribute-form Clip is float32-only).
    """
    x = _as_result_dtype(g, self)
    if eps is not None:
        low, high = h.scalar_like(g, eps, x), h.scalar_like(g, 1.0 - eps, x)
        x = g.op("Where", g.op("Less", x, low), low, g.op("Where", g.op("Greater", x, high), high, x))
    return g.op("Log", g.op("Div", x, g.op("Sub", h.scalar_like(g, 1.0, x), x)))


@onnx_symbolic("aten::hypot")
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
    out = g.op("Where", _equal(g, big, h.scalar_like(g, 0.0, a)), big, out)
    any_inf = g.op("Or", _is_inf(g, a), _is_inf(g, b))
    return g.op("Where", any_inf, h.scalar_like(g, math.inf, a), out)


@onnx_symbolic("aten::lerp")
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


@onnx_symbolic("aten::addcmul")
def aten_addcmul(g: GraphContext, *inputs: object) -> Value:
    """addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor:
    self + value * tensor1 * tensor2, multiplied in torch's order (inputs raw: see
    _addc_operands)"""
    self, tensor1, tensor2, value = _addc_operands(g, inputs)
    return g.op("Add", self, g.op("Mul", _times_value(g, tensor1, value), tensor2))


@onnx_symbolic("aten::addcdiv")
def aten_addcdiv(g: GraphContext, *inputs: object) -> Value:
    """addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor:
    self + value * tensor1 / tensor2 (inputs raw: see _addc_operands)"""
    self, tensor1, tensor2, value = _addc_operands(g, inputs)
    return g.op("Add", self, g.op("Div", _times_value(g, tensor1, value), tensor2))


@onnx_symbolic("aten::fmod")
def aten_fmod(g: GraphContext, self: Value, other: Value) -> Value:
    """fmod.Tensor(Tensor self, Tensor other) -> Tensor (and fmod.Scalar)

    Before Mod (opset 10): a - trunc(a / b) * b. Exact for integers (ONNX integer Div
    truncates, computed in int32 where narrow types lack Div kernels); for floats it can be
    off by the rounding of a / b when the quotient is large.
    """
    other = h.cast(g, other, self.dtype)
    if h.is_floating(self):
        return g.op("Sub", self, g.op("Mul", _trunc(g, g.op("Div", self, other)), other))
    compute = _compute_dtype(self.dtype)
    a, b = h.cast(g, self, compute), h.cast(g, other, compute)
    out = g.op("Sub", a, g.op("Mul", g.op("Div", a, b), b))
    return h.cast(g, out, self.dtype)


@onnx_symbolic("aten::round")
def aten_round(g: GraphContext, self: Value, decimals: int = 0) -> Value:
    """round(Tensor self) -> Tensor, round.decimals(Tensor self, *, int decimals) -> Tensor

    Half to even. Below opset 11 (no Round) see _round_half_even. With decimals, torch
    rounds x * 10^d and divides back (x / 10^-d and multiplies back when d < 0).
    """
    if not h.is_floating(self):
        return self
    rounder = (lambda v: g.op("Round", v)) if g.opset >= 11 else (lambda v: _round_half_even(g, v))
    if decimals == 0:
        return rounder(self)
    scale = h.scalar_like(g, 10.0 ** abs(decimals), self)
    if decimals > 0:
        return g.op("Div", rounder(g.op("Mul", self, scale)), scale)
    return g.op("Mul", rounder(g.op("Div", self, scale)), scale)


@onnx_symbolic("aten::floordiv")
def aten_floordiv(g: GraphContext, a: Value, b: Value) -> Value:
    """floordiv.int(int a, int b) -> int (and the float overloads): TorchScript's // on
    numbers known only at run time (sizes). Floors for negative integers too; floats and
    mixed operands compute in double like aten::Float."""
    if h.is_floating(a) or h.is_floating(b):
        a, b = h.cast(g, a, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
        return g.op("Floor", g.op("Div", a, b))
    return _floor_divide(g, a, h.cast(g, b, a.dtype))


# ============================================================================================
# Activations
# ============================================================================================


@onnx_symbolic("aten::log_sigmoid")
def aten_log_sigmoid(g: GraphContext, self: Value) -> Value:
    """log_sigmoid(Tensor self) -> Tensor

    min(x, 0) - log1p(exp(-|x|)): Log(Sigmoid(x)) (torch's exporter) is -inf once sigmoid
    underflows (x < -88 in float32).
    """
    x = self
    negative_part = g.op("Neg", g.op("Relu", g.op("Neg", x)))
    return g.op("Sub", negative_part, _log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x)))))


@onnx_symbolic("aten::elu")
def aten_elu(g: GraphContext, self: Value, alpha: float = 1, scale: float = 1, input_scale: float = 1) -> Value:
    """elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor

    torch applies input_scale to the negative branch only (x > 0 ? scale * x :
    scale * alpha * (exp(x * input_scale) - 1)), which Elu cannot express; Elu is used when
    input_scale is 1.
    """
    x = self
    if input_scale == 1:
        out = _float_kernel(g, "Elu", x, alpha=float(alpha))
        return out if scale == 1 else g.op("Mul", out, h.scalar_like(g, scale, x))
    one = h.scalar_like(g, 1.0, x)
    expm1 = g.op("Sub", g.op("Exp", g.op("Mul", x, h.scalar_like(g, input_scale, x))), one)
    negative = g.op("Mul", expm1, h.scalar_like(g, alpha * scale, x))
    positive = g.op("Mul", x, h.scalar_like(g, scale, x))
    return g.op("Where", g.op("Greater", x, h.scalar_like(g, 0.0, x)), positive, negative)


@onnx_symbolic("aten::selu")
def aten_selu(g: GraphContext, self: Value) -> Value:
    """selu(Tensor self) -> Tensor: Selu's default alpha/gamma are torch's constants"""
    return _float_kernel(g, "Selu", self)


@onnx_symbolic("aten::celu")
def aten_celu(g: GraphContext, self: Value, alpha: float = 1.0) -> Value:
    """celu(Tensor self, Scalar alpha=1.) -> Tensor

    alpha * elu(x / alpha): the same function from Elu (opset 6), where Celu needs opset 12
    and only takes float32.
    """
    if alpha == 1:
        return _float_kernel(g, "Elu", self, alpha=1.0)
    a = h.scalar_like(g, alpha, self)
    return g.op("Mul", _float_kernel(g, "Elu", g.op("Div", self, a), alpha=1.0), a)


@onnx_symbolic("aten::hardshrink")
def aten_hardshrink(g: GraphContext, self: Value, lambd: float = 0.5) -> Value:
    """hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor: Shrink with bias 0 (Shrink maps
    NaN to 0; torch keeps it)"""
    return _keep_nan(g, self, g.op("Shrink", self, lambd=float(lambd), bias=0.0))


@onnx_symbolic("aten::softshrink")
def aten_softshrink(g: GraphContext, self: Value, lambd: float = 0.5) -> Value:
    """softshrink(Tensor self, Scalar lambd=0.5) -> Tensor: Shrink with bias lambd (NaN kept
    as in hardshrink)"""
    return _keep_nan(g, self, g.op("Shrink", self, lambd=float(lambd), bias=float(lambd)))


def _hardsigmoid(g: GraphContext, x: Value) -> Value:
    return _float_kernel(g, "HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)


@onnx_symbolic("aten::hardsigmoid")
def aten_hardsigmoid(g: GraphContext, self: Value) -> Value:
    """hardsigmoid(Tensor self) -> Tensor: relu6(x + 3) / 6 is HardSigmoid(1/6, 1/2)"""
    return _hardsigmoid(g, self)


@onnx_symbolic("aten::hardswish")
def aten_hardswish(g: GraphContext, self: Value) -> Value:
    """hardswish(Tensor self) -> Tensor: x * hardsigmoid(x) (HardSwish, opset 14, only has a
    float32 kernel)"""
    return g.op("Mul", self, _hardsigmoid(g, self))


@onnx_symbolic("aten::mish")
def aten_mish(g: GraphContext, self: Value) -> Value:
    """mish(Tensor self) -> Tensor: x * tanh(softplus(x)) (Mish is opset 18)"""
    return g.op("Mul", self, g.op("Tanh", _softplus(g, self)))


@onnx_symbolic("aten::softplus")
def aten_softplus(g: GraphContext, self: Value, beta: float = 1, threshold: float = 20) -> Value:
    """softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor

    torch returns x itself where beta * x > threshold (Softplus alone differs there by
    log1p(exp(-beta x)) / beta).
    """
    x = self
    scaled = x if beta == 1 else g.op("Mul", x, h.scalar_like(g, beta, x))
    soft = _softplus(g, scaled)
    if beta != 1:
        soft = g.op("Div", soft, h.scalar_like(g, beta, x))
    return g.op("Where", g.op("Greater", scaled, h.scalar_like(g, threshold, x)), x, soft)


@onnx_symbolic("aten::glu")
def aten_glu(g: GraphContext, self: Value, dim: int = -1) -> Value:
    """glu(Tensor self, int dim=-1) -> Tensor: a * sigmoid(b) for the two halves along dim.

    Static sizes split by size; a dynamic axis splits equally, which from opset 18 needs the
    num_outputs attribute.
    """
    first, second = _halves(g, self, h.normalize_dim(dim, h.rank_of(self)))
    return g.op("Mul", first, g.op("Sigmoid", second))


@onnx_symbolic("aten::prelu")
def aten_prelu(g: GraphContext, self: Value, weight: Value) -> Value:
    """prelu(Tensor self, Tensor weight) -> Tensor

    torch's weight runs along dim 1; PRelu broadcasts from the right, so a per-channel
    weight gets trailing unit axes. onnxruntime has PRelu for float and half only: other
    dtypes select with Where.
    """
    rank = h.rank_of(self)
    w_rank = h.rank_of(weight)
    if rank is not None and rank >= 3 and w_rank == 1:
        weight = h.unsqueeze(g, weight, list(range(1, rank - 1)))
    if self.dtype in (ir.DataType.FLOAT, ir.DataType.FLOAT16):
        return g.op("PRelu", self, weight)
    scaled = g.op("Mul", self, weight)
    return g.op("Where", g.op("Less", self, h.scalar_like(g, 0.0, self)), scaled, self)


@onnx_symbolic("aten::rrelu")
def aten_rrelu(
    g: GraphContext,
    self: Value,
    lower: float = 0.125,
    upper: float = 1.0 / 3.0,
    training: bool = False,
) -> Value:
    """rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor

    Evaluation: leaky relu with the mean slope (lower + upper) / 2. Training: a fresh
    uniform slope per negative element (RandomUniformLike, drawn in float32 for half since
    onnxruntime has no half kernel).
    """
    if not training:
        return _float_kernel(g, "LeakyRelu", self, alpha=(lower + upper) / 2)
    like = h.cast(g, self, ir.DataType.FLOAT) if self.dtype != ir.DataType.DOUBLE else self
    slope = g.op("RandomUniformLike", like, low=float(lower), high=float(upper))
    slope = h.cast(g, slope, self.dtype)
    negative = g.op("Not", g.op("Greater", self, h.scalar_like(g, 0.0, self)))
    return g.op("Where", negative, g.op("Mul", self, slope), self)


@onnx_symbolic("aten::threshold")
def aten_threshold(g: GraphContext, self: Value, threshold: float, value: float) -> Value:
    """threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor: x <= threshold ?
    value : x, so NaN stays. Integer inputs compare against floor(threshold), the same test
    for whole numbers."""
    bound = threshold if h.is_floating(self) else math.floor(threshold)
    keep = g.op("Greater", self, h.scalar_like(g, bound, self))
    if h.is_floating(self):
        keep = g.op("Or", keep, g.op("IsNaN", self))
    return g.op("Where", keep, self, h.scalar_like(g, value, self))


# ============================================================================================
# Classification (NaN, inf)
# ============================================================================================


@onnx_symbolic("aten::isnan")
def aten_isnan(g: GraphContext, self: Value) -> Value:
    """isnan(Tensor self) -> Tensor (integers and bools are never NaN)"""
    return _is_nan(g, self)


@onnx_symbolic("aten::isinf")
def aten_isinf(g: GraphContext, self: Value) -> Value:
    """isinf(Tensor self) -> Tensor: |x| > max finite, at opset 9 (IsInf is opset 10)"""
    return _is_inf(g, self)


@onnx_symbolic("aten::isfinite")
def aten_isfinite(g: GraphContext, self: Value) -> Value:
    """isfinite(Tensor self) -> Tensor: |x| <= max finite, false for NaN"""
    if not h.is_floating(self):
        return _filled_like(g, self, True)
    return g.op("Not", g.op("Or", g.op("IsNaN", self), _is_inf(g, self)))


@onnx_symbolic("aten::nan_to_num")
def aten_nan_to_num(
    g: GraphContext,
    self: Value,
    nan: float | None = None,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Value:
    """nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor

    Infinities are the values beyond the dtype's finite range, so no IsInf (opset 10) is
    needed; defaults are 0 and the dtype's largest and lowest finite values.
    """
    if not h.is_floating(self):
        return self
    info = torch.finfo(tensors.to_torch_dtype(self.dtype))
    x = self
    out = g.op("Where", g.op("IsNaN", x), h.scalar_like(g, 0.0 if nan is None else nan, x), x)
    top = _largest_finite(g, x)
    out = g.op("Where", g.op("Greater", x, top), h.scalar_like(g, info.max if posinf is None else posinf, x), out)
    bottom = h.scalar_like(g, info.min, x)
    return g.op("Where", g.op("Less", x, bottom), h.scalar_like(g, info.min if neginf is None else neginf, x), out)


# ============================================================================================
# Maximum and minimum
# ============================================================================================


@onnx_symbolic("aten::maximum")
def aten_maximum(g: GraphContext, self: Value, other: Value) -> Value:
    """maximum(Tensor self, Tensor other) -> Tensor (NaN propagates, as in torch)"""
    return _pick(g, self, other, larger=True)


@onnx_symbolic("aten::minimum")
def aten_minimum(g: GraphContext, self: Value, other: Value) -> Value:
    """minimum(Tensor self, Tensor other) -> Tensor (NaN propagates, as in torch)"""
    return _pick(g, self, other, larger=False)


@onnx_symbolic("aten::max.other")
def aten_max_other(g: GraphContext, self: Value, other: Value) -> Value:
    """max.other(Tensor self, Tensor other) -> Tensor: maximum"""
    return _pick(g, self, other, larger=True)


@onnx_symbolic("aten::min.other")
def aten_min_other(g: GraphContext, self: Value, other: Value) -> Value:
    """min.other(Tensor self, Tensor other) -> Tensor: minimum"""
    return _pick(g, self, other, larger=False)


@onnx_symbolic("aten::fmax")
def aten_fmax(g: GraphContext, self: Value, other: Value) -> Value:
    """fmax(Tensor self, Tensor other) -> Tensor: a NaN operand yields the other one"""
    return _pick_ignoring_nan(g, self, other, larger=True)


@onnx_symbolic("aten::fmin")
def aten_fmin(g: GraphContext, self: Value, other: Value) -> Value:
    """fmin(Tensor self, Tensor other) -> Tensor: a NaN operand yields the other one"""
    return _pick_ignoring_nan(g, self, other, larger=False)


# ============================================================================================
# Logical
# ============================================================================================


def _truth(g: GraphContext, x: Value) -> Value:
    """Nonzero is true (NaN included); Cast to bool does exactly that."""
    return h.cast(g, x, ir.DataType.BOOL)


@onnx_symbolic("aten::logical_and")
def aten_logical_and(g: GraphContext, self: Value, other: Value) -> Value:
    """logical_and(Tensor self, Tensor other) -> Tensor (operands of any dtype)"""
    return g.op("And", _truth(g, self), _truth(g, other))


@onnx_symbolic("aten::logical_or")
def aten_logical_or(g: GraphContext, self: Value, other: Value) -> Value:
    """logical_or(Tensor self, Tensor other) -> Tensor (operands of any dtype)"""
    return g.op("Or", _truth(g, self), _truth(g, other))


@onnx_symbolic("aten::logical_xor")
def aten_logical_xor(g: GraphContext, self: Value, other: Value) -> Value:
    """logical_xor(Tensor self, Tensor other) -> Tensor (operands of any dtype)"""
    return g.op("Xor", _truth(g, self), _truth(g, other))


@onnx_symbolic("aten::logical_not")
def aten_logical_not(g: GraphContext, self: Value) -> Value:
    """logical_not(Tensor self) -> Tensor (operand of any dtype)"""
    return g.op("Not", _truth(g, self))


@onnx_symbolic("aten::__not__")
def aten___not__(g: GraphContext, self: Value) -> Value:
    """__not__(bool self) -> bool: TorchScript's ``not`` on a run-time bool"""
    return g.op("Not", _truth(g, self))


# ============================================================================================
# Bitwise
# ============================================================================================


@onnx_symbolic("aten::bitwise_and")
def aten_bitwise_and(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads)

    And on bool. Integers have no bitwise op before opset 18: see _bitwise_decomposed
    (torch's exporter cannot export integer & and | at any opset). Operands take torch's
    result dtype from the node: these ops are not in scalar type analysis.
    """
    return _bitwise_binary(g, "And", self, other, native=False)


@onnx_symbolic("aten::__and__")
def aten___and__(g: GraphContext, self: Value, other: Value) -> Value:
    """__and__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with And"""
    return _bitwise_binary(g, "And", self, other, native=False)


@onnx_symbolic("aten::bitwise_or")
def aten_bitwise_or(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Or"""
    return _bitwise_binary(g, "Or", self, other, native=False)


@onnx_symbolic("aten::__or__")
def aten___or__(g: GraphContext, self: Value, other: Value) -> Value:
    """__or__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Or"""
    return _bitwise_binary(g, "Or", self, other, native=False)


@onnx_symbolic("aten::bitwise_xor")
def aten_bitwise_xor(g: GraphContext, self: Value, other: Value) -> Value:
    """bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Xor"""
    return _bitwise_binary(g, "Xor", self, other, native=False)


@onnx_symbolic("aten::__xor__")
def aten___xor__(g: GraphContext, self: Value, other: Value) -> Value:
    """__xor__.Tensor(Tensor self, Tensor other) -> Tensor (and the Scalar overloads): as bitwise_and, with Xor"""
    return _bitwise_binary(g, "Xor", self, other, native=False)


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


# ============================================================================================
# Elementwise losses
# ============================================================================================


@onnx_symbolic("aten::mse_loss")
def aten_mse_loss(g: GraphContext, self: Value, target: Value, reduction: int = 1) -> Value:
    """mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor"""
    diff = g.op("Sub", self, target)
    return _reduction(g, g.op("Mul", diff, diff), reduction)


@onnx_symbolic("aten::kl_div")
def aten_kl_div(
    g: GraphContext, self: Value, target: Value, reduction: int = 1, log_target: bool = False
) -> Value:
    """kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor

    target * (log(target) - input) with xlogy's convention: a zero target contributes 0,
    not NaN. 'batchmean' arrives as sum followed by a division in the graph.
    """
    if log_target:
        loss = g.op("Mul", g.op("Exp", target), g.op("Sub", target, self))
    else:
        zero = h.scalar_like(g, 0.0, target)
        xlogx = g.op("Where", _equal(g, target, zero), zero, g.op("Mul", target, g.op("Log", target)))
        loss = g.op("Sub", xlogx, g.op("Mul", target, self))
    return _reduction(g, loss, reduction)


@onnx_symbolic("aten::binary_cross_entropy_with_logits")
def aten_binary_cross_entropy_with_logits(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    pos_weight: Value | None = None,
    reduction: int = 1,
) -> Value:
    """binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=Mean) -> Tensor

    (1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x), with softplus(-x) as
    relu(-x) + log1p(exp(-|x|)): no Log(Sigmoid) that underflows for large |x|, so it is
    exact at opset 9 (torch's exporter needs 12).
    """
    x = self
    one = h.scalar_like(g, 1.0, x)
    softplus_neg = g.op(
        "Add", g.op("Relu", g.op("Neg", x)), _log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x))))
    )
    if pos_weight is not None:
        log_weight = g.op("Add", g.op("Mul", g.op("Sub", pos_weight, one), target), one)
        softplus_neg = g.op("Mul", log_weight, softplus_neg)
    loss = g.op("Add", g.op("Mul", g.op("Sub", one, target), x), softplus_neg)
    if weight is not None:
        loss = g.op("Mul", loss, weight)
    return _reduction(g, loss, reduction)


# ============================================================================================
# Conjugation (real tensors only)
# ============================================================================================


def _real_identity(self: Value) -> Value:
    if self.dtype in (ir.DataType.COMPLEX64, ir.DataType.COMPLEX128):
        raise ValueError("complex tensors have no ONNX representation")
    return self


@onnx_symbolic("aten::_conj")
def aten__conj(g: GraphContext, self: Value) -> Value:
    """_conj(Tensor(a) self) -> Tensor(a): the identity on real tensors"""
    return _real_identity(self)


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


# ============================================================================================
# Indexing, gather/scatter, sorting and selection
# ============================================================================================
# Gather/scatter, advanced indexing, sorting and selection. Opset 9 lacks GatherElements,
# ScatterElements (it has Scatter), GatherND, Range, CumSum, Unique and Trilu, and no scatter
# sums repeated indices before ScatterElements-16; the lowerings below stay exact at every
# opset from 9 on wherever that is possible, and say so where it is not.
_INT64 = ir.DataType.INT64
_BOOL = ir.DataType.BOOL


# ============================================================================================
# Helpers
# ============================================================================================


def _rank(x: Value, what: str) -> int:
    rank = h.rank_of(x)
    if rank is None:
        raise ValueError(f"{what} needs the input rank")
    return rank


def _mul_sizes(g: GraphContext, a: int | Value, b: int | Value) -> int | Value:
    """Product of two dim sizes, folded when both are known."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    a_v = a if isinstance(a, Value) else g.constant(a)
    b_v = b if isinstance(b, Value) else g.constant(b)
    return g.op("Mul", h.cast(g, a_v, _INT64), h.cast(g, b_v, _INT64))


def _prod_sizes(g: GraphContext, sizes: Sequence[int | Value]) -> int | Value:
    out: int | Value = 1
    for size in sizes:
        out = _mul_sizes(g, out, size)
    return out


def _sizes(g: GraphContext, x: Value, what: str) -> list[int | Value]:
    """Every dim size of ``x``: ints where static, 0-d int64 values where dynamic."""
    return [h.dim_size(g, x, i) for i in range(_rank(x, what))]


def _shape_value_indexing(g: GraphContext, sizes: Sequence[int | Value]) -> Value:
    return g.list_to_value(list(sizes)) if sizes else g.constant(torch.zeros(0, dtype=torch.int64))


def _arange_indexing(g: GraphContext, n: int | Value) -> Value:
    """0..n-1 as int64. Range only exists from opset 11; below it a ones vector of length n
    goes through NonZero, whose output row is exactly 0..n-1."""
    if isinstance(n, int):
        return g.constant(torch.arange(n, dtype=torch.int64))
    n = h.cast(g, n, _INT64)
    if g.opset >= 11:
        return g.op("Range", g.constant(0), g.op("Reshape", n, g.constant(torch.zeros(0, dtype=torch.int64))), g.constant(1))
    ones = g.op("ConstantOfShape", g.op("Reshape", n, g.constant([1])), value=torch.tensor([1], dtype=torch.int64))
    return h.squeeze(g, g.op("NonZero", ones), [0])


def _normalize_index(g: GraphContext, index: Value, size: int | Value) -> Value:
    """int64 indices with negatives wrapped by ``size``. Gather, Scatter and linearized
    positions below opset 11 only accept indices in [0, size); constants fold here."""
    index = h.cast(g, index, _INT64)
    const = index.const_value
    if const is not None:
        array = torch.as_tensor(const.numpy())
        if bool((array >= 0).all()):
            return index
        if isinstance(size, int):
            return g.constant(torch.where(array < 0, array + size, array))
    size_v = g.constant(size) if isinstance(size, int) else h.cast(g, size, _INT64)
    negative = g.op("Less", index, g.constant(0))
    return g.op("Where", negative, g.op("Add", index, size_v), index)


def _axis_shape(rank: int, axis: int) -> list[int]:
    """Reshape target putting a 1-D tensor on ``axis`` of a rank-``rank`` tensor."""
    return [1] * axis + [-1] + [1] * (rank - axis - 1)


def _accumulator(dtype: ir.DataType | None) -> ir.DataType | None:
    """A dtype ReduceSum/Max/Prod have kernels for at every opset, holding ``dtype`` exactly."""
    if dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return ir.DataType.FLOAT
    if dtype in (ir.DataType.BOOL, ir.DataType.INT8, ir.DataType.INT16, ir.DataType.UINT8, ir.DataType.UINT16):
        return ir.DataType.INT32
    return dtype


def _identity(reduction: str, dtype: ir.DataType) -> float | int | bool:
    """The neutral element of a reduction in ``dtype``."""
    if reduction == "sum":
        return 0
    if reduction == "prod":
        return 1
    torch_dtype = tensors.to_torch_dtype(dtype)
    if torch_dtype.is_floating_point:
        return -math.inf if reduction == "amax" else math.inf
    info = torch.iinfo(torch_dtype)
    return info.min if reduction == "amax" else info.max


def _combine(g: GraphContext, reduction: str, a: Value, b: Value) -> Value:
    """a (op) b elementwise. Max/Min before opset 12 only take floats; integers compare."""
    if reduction == "sum":
        return g.op("Add", a, b)
    if reduction == "prod":
        return g.op("Mul", a, b)
    if h.is_floating(a) or g.opset >= 12:
        return g.op("Max" if reduction == "amax" else "Min", a, b)
    pick_a = g.op("Greater" if reduction == "amax" else "Less", a, b)
    return g.op("Where", pick_a, a, b)


_REDUCE_OP = {"sum": "ReduceSum", "prod": "ReduceProd", "amax": "ReduceMax", "amin": "ReduceMin"}
_SCATTER_REDUCTION = {"sum": ("add", 16), "prod": ("mul", 16), "amax": ("max", 18), "amin": ("min", 18)}


def _pad_to(g: GraphContext, x: Value, target: Sequence[int], skip_axis: int, fill: float | int) -> Value:
    """Extend ``x`` (static shape) with ``fill`` up to ``target`` on every axis but ``skip_axis``."""
    shape = h.static_shape(x)
    assert shape is not None
    for axis, (have, want) in enumerate(zip(shape, target)):
        if axis == skip_axis or have >= want:
            continue
        block_shape = list(shape)
        block_shape[axis] = want - have
        block = torch.full(block_shape, fill, dtype=tensors.to_torch_dtype(x.dtype))
        x = g.op("Concat", x, g.constant(block), axis=axis)
        shape[axis] = want
        x.shape = ir.Shape(shape)
    return x


def _scatter_reduce_onehot(
    g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduction: str
) -> Value:
    """Scatter with a reduction that combines repeated indices, without a reducing scatter.

    For self [.., N, ..] and index/src [.., M, ..], an [.., M, N, ..] match of each index
    against 0..N-1 selects src (Where, so an inf in src cannot leak into other positions as
    0*inf would) or the reduction's identity; reducing over M gives each target's combined
    update, which is folded into self. Index dims other than ``dim`` smaller than self's are
    padded with -1, which matches no position. Memory is size(src) * N.
    """
    rank = _rank(self, "scatter with a reduction")
    index = h.cast(g, index, _INT64)
    self_shape, index_shape = h.static_shape(self), h.static_shape(index)
    if self_shape is not None and index_shape is not None and any(
        a != dim and i != s for a, (i, s) in enumerate(zip(index_shape, self_shape))
    ):
        index = _pad_to(g, index, self_shape, dim, -1)
        src = _pad_to(g, src, self_shape, dim, 0)
    elif self.shape is not None and index.shape is not None:
        for axis, (i, n) in enumerate(zip(index.shape, self.shape)):
            if axis != dim and i != n and (not isinstance(i, int) or not isinstance(n, int) or i == 1):
                raise ValueError(
                    "a reducing scatter whose index may be smaller than the input on other dims "
                    "needs static sizes below opset 16 (18 for amax/amin)"
                )
    acc = _accumulator(self.dtype)
    assert acc is not None
    src_acc, self_acc = h.cast(g, src, acc), h.cast(g, self, acc)
    positions = g.op("Reshape", _arange_indexing(g, h.dim_size(g, self, dim)), g.constant(_axis_shape(rank + 1, dim + 1)))
    match = g.op("Equal", h.unsqueeze(g, index, [dim + 1]), positions)
    identity = g.constant(torch.tensor(_identity(reduction, acc), dtype=tensors.to_torch_dtype(acc)))
    picked = g.op("Where", match, h.unsqueeze(g, src_acc, [dim + 1]), identity)
    combined = h.reduce(g, _REDUCE_OP[reduction], picked, [dim], False)
    combined.dtype = acc
    return h.cast(g, _combine(g, reduction, self_acc, combined), self.dtype)


def _scatter(g: GraphContext, data: Value, index: Value, updates: Value, axis: int) -> Value:
    """ScatterElements (opset 11) or its predecessor Scatter, which has the same semantics.
    Callers pass indices in [0, size): torch rejects negative ones for scatter, index_copy
    and index_add, and the indexing positions are wrapped already."""
    if g.opset < 11:
        return g.op("Scatter", data, h.cast(g, index, _INT64), updates, axis=axis)
    return g.op("ScatterElements", data, h.cast(g, index, _INT64), updates, axis=axis)


def _scatter_reduce(g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduction: str) -> Value:
    """Scatter combining repeated indices: ScatterElements' reduction where it exists (add/mul
    from 16, max/min from 18), else the one-hot lowering."""
    name, since = _SCATTER_REDUCTION[reduction]
    if g.opset >= since:
        # onnxruntime has no half kernels for reducing ScatterElements: reduce in float
        acc = ir.DataType.FLOAT if self.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16) else self.dtype
        out = g.op(
            "ScatterElements", h.cast(g, self, acc), h.cast(g, index, _INT64), h.cast(g, src, acc), axis=dim, reduction=name
        )
        return h.cast(g, out, self.dtype)
    return _scatter_reduce_onehot(g, self, dim, index, h.cast(g, src, self.dtype), reduction)


def _fit_to_index(g: GraphContext, src: Value, index: Value) -> Value:
    """src cut to index's shape: torch reads only that corner, ScatterElements needs equal shapes."""
    src_shape, index_shape = h.static_shape(src), h.static_shape(index)
    if src_shape is not None and index_shape is not None:
        if src_shape == index_shape:
            return src
        axes = list(range(len(index_shape)))
        return h.slice_static(g, src, axes, [0] * len(axes), index_shape)
    if g.opset < 10:
        return src  # dynamic corner cut needs Slice-10; torch's usual use has equal shapes
    rank = _rank(index, "scatter")
    return g.op("Slice", src, g.constant([0] * rank), g.op("Shape", index), g.constant(list(range(rank))))


def _along(g: GraphContext, index: Value, dim: int, like: Value) -> Value:
    """A 1-D index of ``dim`` (index_copy/index_add) expanded to the shape of ``like``."""
    rank = _rank(like, "index_add/index_copy")
    flat = h.cast(g, g.op("Reshape", index, g.constant([-1])), _INT64)
    placed = g.op("Reshape", flat, g.constant(_axis_shape(rank, dim)))
    return g.op("Expand", placed, h.shape_of(g, like))


def _data_dependent(g: GraphContext, value: Value, output: int = 0) -> Value:
    """Mark a value whose sizes depend on the data (NonZero, Unique) as dynamic, so the traced
    example's sizes are not stamped on it and folded into later shape arithmetic."""
    rank = h.rank_of(value)
    if rank is None and g.node is not None:
        ts_type = g.node.outputsAt(output).type()
        if isinstance(ts_type, torch._C.TensorType):
            rank = ts_type.dim()
    if rank is not None:
        value.shape = ir.Shape([None] * rank)
    return value


def _flat_nonzero(g: GraphContext, mask: Value) -> Value:
    """Row-major positions of the true elements of ``mask`` as a 1-D int64 tensor."""
    flat = g.op("Reshape", h.cast(g, mask, _BOOL), g.constant([-1]))
    return h.squeeze(g, g.op("NonZero", flat), [0])


def _empty_int64(g: GraphContext) -> Value:
    return g.constant(torch.zeros(0, dtype=torch.int64))


# ============================================================================================
# Gather and scatter
# ============================================================================================


@onnx_symbolic("aten::gather")
def aten_gather(g: GraphContext, self: Value, dim: int, index: Value, sparse_grad: bool = False) -> Value:
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor

    GatherElements from opset 11. Before it (static sizes), each index becomes a position in
    the flattened input (the other coordinates are the index's own, folded into a constant),
    read with one Gather: exact for every dtype, unlike a one-hot product (0*inf is NaN, and
    there is no integer MatMul).
    """
    del sparse_grad
    rank = _rank(self, "gather")
    dim = h.normalize_dim(dim, rank)
    index = h.cast(g, index, _INT64)
    if g.opset >= 11:
        return g.op("GatherElements", self, index, axis=dim)
    self_shape, index_shape = h.static_shape(self), h.static_shape(index)
    if self_shape is None or index_shape is None:
        raise ValueError("gather on sizes known only at run time needs opset 11 (GatherElements)")
    strides = [math.prod(self_shape[a + 1 :]) for a in range(rank)]
    base = torch.zeros(index_shape, dtype=torch.int64)
    for axis in range(rank):
        if axis != dim:
            base = base + torch.arange(index_shape[axis]).view(_axis_shape(rank, axis)) * strides[axis]
    positions = g.op("Add", g.op("Mul", index, g.constant(strides[dim])), g.constant(base))
    return g.op("Gather", g.op("Reshape", self, g.constant([-1])), positions, axis=0)


@onnx_symbolic("aten::scatter")
def aten_scatter(
    g: GraphContext,
    self: Value,
    dim: int,
    index: Value,
    src: Value | None = None,
    value: Value | None = None,
    reduce: str | None = None,
) -> Value:
    """scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor (and .value, .reduce, .value_reduce)

    Scatter at opset 9-10, ScatterElements from 11. reduce='add'/'multiply' must combine
    repeated indices: ScatterElements' reduction from 16, the one-hot lowering before.
    """
    rank = _rank(self, "scatter")
    dim = h.normalize_dim(dim, rank)
    if src is not None:
        updates = h.cast(g, _fit_to_index(g, src, index), self.dtype)
    elif value is not None:
        updates = g.op("Expand", h.cast(g, value, self.dtype), h.shape_of(g, index))
    else:
        raise ValueError("scatter needs src or value")
    if reduce is None:
        return _scatter(g, self, index, updates, dim)
    reductions = {"add": "sum", "multiply": "prod"}
    if reduce not in reductions:
        raise ValueError(f"unknown scatter reduce {reduce!r}")
    return _scatter_reduce(g, self, dim, index, updates, reductions[reduce])


@onnx_symbolic("aten::scatter_add")
def aten_scatter_add(g: GraphContext, self: Value, dim: int, index: Value, src: Value) -> Value:
    """scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor

    Repeated indices add up. A plain scatter keeps one of them (torch's exporter below
    opset 16 does that), so before ScatterElements-16's reduction='add' the sums go through
    the one-hot lowering.
    """
    rank = _rank(self, "scatter_add")
    dim = h.normalize_dim(dim, rank)
    return _scatter_reduce(g, self, dim, index, _fit_to_index(g, src, index), "sum")


@onnx_symbolic("aten::scatter_reduce")
def aten_scatter_reduce(
    g: GraphContext, self: Value, dim: int, index: Value, src: Value, reduce: str, include_self: bool = True
) -> Value:
    """scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor

    ScatterElements reduces from opset 16 (add/mul; max/min from 18); before that the
    one-hot lowering combines repeated indices, so every opset from 9 works (torch's exporter
    needs 16). include_self=False first overwrites every target with the reduction's
    identity; mean divides a sum by a scattered count (flooring for integers, as torch does)
    and leaves untouched positions as they were.
    """
    rank = _rank(self, "scatter_reduce")
    dim = h.normalize_dim(dim, rank)
    src = h.cast(g, _fit_to_index(g, src, index), self.dtype)
    index = h.cast(g, index, _INT64)
    index_shape = h.shape_of(g, index)
    if reduce == "mean":
        zero = h.scalar_like(g, 0, self)
        one = h.scalar_like(g, 1, self)
        base = self if include_self else _scatter(g, self, index, g.op("Expand", zero, index_shape), dim)
        total = _scatter_reduce(g, base, dim, index, src, "sum")
        start = g.op("Expand", one if include_self else zero, h.shape_of(g, self))
        counts = _scatter_reduce(g, start, dim, index, g.op("Expand", one, index_shape), "sum")
        if include_self:
            return g.op("Div", total, counts) if h.is_floating(self) else _floor_divide(g, total, counts)
        untouched = g.op("Not", g.op("Greater", _comparable(g, counts), _comparable(g, zero)))  # counts >= 0
        safe = g.op("Where", untouched, one, counts)
        mean = g.op("Div", total, safe) if h.is_floating(self) else _floor_divide(g, total, safe)
        return g.op("Where", untouched, self, mean)
    if reduce not in _REDUCE_OP:
        raise ValueError(f"unknown scatter_reduce reduction {reduce!r}")
    data = self
    if not include_self:
        identity = g.constant(torch.tensor(_identity(reduce, self.dtype), dtype=tensors.to_torch_dtype(self.dtype)))
        data = _scatter(g, self, index, g.op("Expand", identity, index_shape), dim)
    return _scatter_reduce(g, data, dim, index, src, reduce)


# ============================================================================================
# Index-based selection and updates
# ============================================================================================


@onnx_symbolic("aten::index_select")
def aten_index_select(g: GraphContext, self: Value, dim: int, index: Value) -> Value:
    """index_select(Tensor self, int dim, Tensor index) -> Tensor

    A 0-d index selects a dim of size 1 (the dim stays), as in torch.
    """
    rank = _rank(self, "index_select")
    dim = h.normalize_dim(dim, rank) if rank > 0 else 0
    if rank == 0:
        return self
    index = h.cast(g, index, _INT64)
    if h.rank_of(index) == 0:
        index = g.op("Reshape", index, g.constant([1]))
    return g.op("Gather", self, index, axis=dim)


@onnx_symbolic("aten::take")
def aten_take(g: GraphContext, self: Value, index: Value) -> Value:
    """take(Tensor self, Tensor index) -> Tensor: a Gather from the flattened input."""
    numel = _prod_sizes(g, _sizes(g, self, "take"))
    flat = g.op("Reshape", self, g.constant([-1]))
    return g.op("Gather", flat, _normalize_index(g, index, numel), axis=0)


@onnx_symbolic("aten::index_fill")
def aten_index_fill(g: GraphContext, self: Value, dim: int, index: Value, value: Value) -> Value:
    """index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor (and .int_Scalar)

    A Where over a bool vector of the selected positions along ``dim`` (any match of the
    index against 0..N-1): no scatter needed, so every opset handles it alike.
    """
    rank = _rank(self, "index_fill")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    flat = _normalize_index(g, g.op("Reshape", index, g.constant([-1])), size)
    match = g.op("Equal", h.unsqueeze(g, flat, [1]), h.unsqueeze(g, _arange_indexing(g, size), [0]))
    hits = h.reduce(g, "ReduceMax", h.cast(g, match, ir.DataType.INT32), [0], False)
    selected = g.op("Reshape", h.cast(g, hits, _BOOL), g.constant(_axis_shape(rank, dim)))
    return h.where(g, selected, h.cast(g, value, self.dtype), self)


@onnx_symbolic("aten::index_copy")
def aten_index_copy(g: GraphContext, self: Value, dim: int, index: Value, source: Value) -> Value:
    """index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor: a scatter with
    the 1-D index spread over source's shape."""
    rank = _rank(self, "index_copy")
    dim = h.normalize_dim(dim, rank)
    positions = _along(g, index, dim, source)
    return _scatter(g, self, positions, h.cast(g, source, self.dtype), dim)


@onnx_symbolic("aten::index_add")
def aten_index_add(
    g: GraphContext, self: Value, dim: int, index: Value, source: Value, alpha: float = 1
) -> Value:
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor

    Repeated indices add up at every opset: ScatterElements' reduction='add' from 16, the
    one-hot lowering before.
    """
    rank = _rank(self, "index_add")
    dim = h.normalize_dim(dim, rank)
    source = h.cast(g, source, self.dtype)
    if alpha != 1:
        source = g.op("Mul", source, h.scalar_like(g, alpha, source))
    positions = _along(g, index, dim, source)
    return _scatter_reduce(g, self, dim, positions, source, "sum")


# ============================================================================================
# Advanced indexing: aten::index and aten::index_put
# ============================================================================================


def _index_items(g: GraphContext, indices: object) -> list[Value | None]:
    """The Tensor?[] argument: None entries are full slices; constants become values."""
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"expected a list of optional index tensors, got {type(indices).__name__}")
    items: list[Value | None] = []
    for item in indices:
        if item is None or isinstance(item, Value):
            items.append(item)
        elif isinstance(item, torch.Tensor):
            items.append(g.constant(item))
        else:
            raise TypeError(f"unsupported index entry {item!r}")
    return items


class _Arranged:
    """``data`` viewed so that every indexed dim sits in one merged axis ``axis``.

    Advanced indices that are adjacent stay in place; otherwise they move to the front, as
    torch does. Each index becomes a position in the merged axis: a bool mask over k dims is
    its row-major NonZero positions over them, integer indices are wrapped and scaled by the
    sizes of the indexed dims after them; broadcasting the terms broadcasts the indices.
    """

    def __init__(self, g: GraphContext, data: Value, indices: Sequence[Value | None]) -> None:
        rank = _rank(data, "advanced indexing")
        entries: list[tuple[list[int], Value]] = []
        self.has_mask = False
        dim = 0
        for item in indices:
            if item is None:
                dim += 1
                continue
            if item.dtype in (_BOOL, ir.DataType.UINT8):
                k = _rank(item, "a boolean mask index")
                entries.append((list(range(dim, dim + k)), _flat_nonzero(g, item)))
                self.has_mask = True
                dim += k
            else:
                entries.append(([dim], _normalize_index(g, item, h.dim_size(g, data, dim))))
                dim += 1
        if dim > rank:
            raise ValueError(f"too many indices for a tensor of rank {rank}")
        indexed = [d for dims, _ in entries for d in dims]
        if indexed == list(range(indexed[0], indexed[-1] + 1)):
            self.order = list(range(rank))
            self.axis = indexed[0]
            view = data
        else:
            self.order = indexed + [d for d in range(rank) if d not in indexed]
            self.axis = 0
            view = g.op("Transpose", data, perm=self.order)
        all_sizes = [h.dim_size(g, data, d) for d in range(rank)]
        self.sizes = [all_sizes[d] for d in self.order]
        self.count = len(indexed)
        position: Value | None = None
        stride: int | Value = 1
        for dims, index in reversed(entries):
            term = index if isinstance(stride, int) and stride == 1 else g.op(
                "Mul", index, stride if isinstance(stride, Value) else g.constant(stride)
            )
            position = term if position is None else g.op("Add", term, position)
            stride = _mul_sizes(g, stride, _prod_sizes(g, [all_sizes[d] for d in dims]))
        assert position is not None
        self.position = position
        if self.count > 1:
            merged = [*self.sizes[: self.axis], _prod_sizes(g, self.sizes[self.axis : self.axis + self.count]), *self.sizes[self.axis + self.count :]]
            view = g.op("Reshape", view, _shape_value_indexing(g, merged))
            static = all(isinstance(m, int) for m in merged)
            view.shape = ir.Shape(merged if static else [None] * len(merged))
            view.dtype = data.dtype
            self.merged_rank = len(merged)
        else:
            self.merged_rank = rank
        self.view = view

    def restore(self, g: GraphContext, merged: Value) -> Value:
        """The inverse of the arrangement for a tensor shaped like the merged view."""
        out = merged
        if self.count > 1:
            out = g.op("Reshape", out, _shape_value_indexing(g, self.sizes))
        if self.order != sorted(self.order):
            inverse = [self.order.index(d) for d in range(len(self.order))]
            out = g.op("Transpose", out, perm=inverse)
        return out


@onnx_symbolic("aten::index")
def aten_index(g: GraphContext, self: Value, indices: object) -> Value:
    """index.Tensor(Tensor self, Tensor?[] indices) -> Tensor

    One Gather on a view where the indexed dims are merged into one axis (see _Arranged):
    boolean masks, several broadcast index tensors and None slices all reduce to it, at
    every opset (GatherND only arrives at 11 and cannot express masks or slices anyway).
    """
    items = _index_items(g, indices)
    if all(item is None for item in items):
        return self
    arranged = _Arranged(g, self, items)
    out = g.op("Gather", arranged.view, arranged.position, axis=arranged.axis)
    return _data_dependent(g, out) if arranged.has_mask else out


@onnx_symbolic("aten::index_put")
def aten_index_put(
    g: GraphContext, self: Value, indices: object, values: Value, accumulate: bool = False
) -> Value:
    """index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor

    Also the functional form of ``x[idx] = v`` and ``x[mask] = v``. On the merged view (see
    aten::index), the positions are flattened to one axis with the values broadcast to the
    indexed result, then scattered; accumulate=True sums repeated positions (reduction='add'
    from opset 16, the one-hot lowering before).
    """
    items = _index_items(g, indices)
    values = h.cast(g, values, self.dtype)
    if all(item is None for item in items):
        return g.op("Expand", values, h.shape_of(g, self))
    arranged = _Arranged(g, self, items)
    axis, view = arranged.axis, arranged.view
    before = arranged.sizes[: axis]
    after = arranged.sizes[axis + arranged.count :]
    flat_position = g.op("Reshape", arranged.position, g.constant([-1]))
    selected = h.dim_size(g, flat_position, 0)
    result_shape = g.op("Concat", _shape_value_indexing(g, before), g.op("Shape", arranged.position), _shape_value_indexing(g, after), axis=0)
    target = _shape_value_indexing(g, [*before, selected, *after])
    updates = g.op("Reshape", g.op("Expand", values, result_shape), target)
    placed = g.op("Reshape", flat_position, g.constant(_axis_shape(arranged.merged_rank, axis)))
    positions = g.op("Expand", placed, target)
    if accumulate:
        out = _scatter_reduce(g, view, axis, positions, updates, "sum")
    else:
        out = _scatter(g, view, positions, updates, axis)
    return arranged.restore(g, out)


# ============================================================================================
# Masks and nonzero
# ============================================================================================


@onnx_symbolic("aten::masked_select")
def aten_masked_select(g: GraphContext, self: Value, mask: Value) -> Value:
    """masked_select(Tensor self, Tensor mask) -> Tensor

    self and mask broadcast against each other (a Where broadcasts both), then the flat true
    positions are gathered; NonZero and Gather make it expressible from opset 9.
    """
    mask = h.cast(g, mask, _BOOL)
    broadcast = h.where(g, mask, self, self)
    full_mask = g.op("Expand", mask, g.op("Shape", broadcast))
    flat = g.op("Reshape", broadcast, g.constant([-1]))
    return _data_dependent(g, g.op("Gather", flat, _flat_nonzero(g, full_mask), axis=0))


@onnx_symbolic("aten::masked_scatter")
def aten_masked_scatter(g: GraphContext, self: Value, mask: Value, source: Value) -> Value:
    """masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor

    The i-th true position (row-major, mask broadcast to self) takes source's i-th element:
    the first n flat source elements are scattered onto the flat true positions. Opset 9
    suffices (NonZero, Gather, Scatter); no CumSum is needed.
    """
    shape = h.shape_of(g, self)
    mask = g.op("Expand", h.cast(g, mask, _BOOL), shape)
    positions = _flat_nonzero(g, mask)
    count = h.dim_size(g, positions, 0)
    updates = g.op("Gather", g.op("Reshape", h.cast(g, source, self.dtype), g.constant([-1])), _arange_indexing(g, count), axis=0)
    flat = g.op("Reshape", self, g.constant([-1]))
    return g.op("Reshape", _scatter(g, flat, positions, updates, 0), shape)


def _nonzero_rows(g: GraphContext, self: Value) -> Value:
    x = self
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, x, ir.DataType.FLOAT)
    return g.op("NonZero", x)


@onnx_symbolic("aten::nonzero")
def aten_nonzero(g: GraphContext, self: Value) -> Value:
    """nonzero(Tensor self) -> Tensor: [n, rank], NonZero's [rank, n] transposed"""
    return _data_dependent(g, g.op("Transpose", _nonzero_rows(g, self), perm=[1, 0]))


@onnx_symbolic("aten::nonzero_numpy")
def aten_nonzero_numpy(g: GraphContext, self: Value) -> list[Value]:
    """nonzero_numpy(Tensor self) -> Tensor[] (nonzero(as_tuple=True)): one row per dim"""
    rows = _nonzero_rows(g, self)
    out = []
    for i in range(_rank(self, "nonzero")):
        row = g.op("Gather", rows, g.constant(i), axis=0)
        row.dtype, row.shape = _INT64, ir.Shape([None])
        out.append(row)
    return out


@onnx_symbolic("aten::one_hot")
def aten_one_hot(g: GraphContext, self: Value, num_classes: int = -1) -> Value:
    """one_hot(Tensor self, int num_classes=-1) -> Tensor

    An Equal against 0..C-1, cast to int64: onnxruntime's OneHot lacks many type
    combinations. num_classes=-1 takes max(self)+1 at run time.
    """
    rank = _rank(self, "one_hot")
    index = h.cast(g, self, _INT64)
    if num_classes < 0:
        depth = g.op("Add", h.reduce(g, "ReduceMax", index, None, False), g.constant(1))
        classes = _arange_indexing(g, depth)
    else:
        classes = _arange_indexing(g, num_classes)
    out = h.cast(g, g.op("Equal", h.unsqueeze(g, index, [rank]), classes), _INT64)
    return out if num_classes >= 0 else _data_dependent(g, out)


# ============================================================================================
# Sorting and top-k
# ============================================================================================


def _topk(
    g: GraphContext, x: Value, k: int | Value, dim: int, largest: bool, sorted_: bool
) -> tuple[Value, Value]:
    """TopK. It takes k as an attribute at opset 9, as an input from 10; smallest-k and
    unsorted output arrive at 11, so before that the smallest are the largest of -x. TopK
    before 11 only takes floats (integers go through double, exact to 2**53); half and
    small integers are widened at every opset. Ties come lowest index first."""
    rank = _rank(x, "topk")
    dim = h.normalize_dim(dim, rank)
    work = x
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        work = h.cast(g, x, ir.DataType.FLOAT)
    elif not h.is_floating(x):
        if g.opset < 11:
            work = h.cast(g, x, ir.DataType.DOUBLE)
        elif x.dtype not in (ir.DataType.INT32, _INT64):
            work = h.cast(g, x, _INT64)
    negate = not largest and g.opset < 11
    shape = h.static_shape(x)
    # torch ranks NaN above +inf. onnxruntime's TopK has ranked NaN lowest (before 1.32) and
    # highest (1.32), so for floats the key says it explicitly: infinities are clamped to the
    # largest finite value, NaN becomes +inf (-inf once negated), and the values are read back
    # by index. Below opset 11 that read-back needs static shapes; without them NaN only moves
    # to the right end (and comes out as inf).
    read_back = h.is_floating(x) and (g.opset >= 11 or shape is not None)
    key = work
    if h.is_floating(x):
        if read_back:
            finite_max = torch.finfo(tensors.to_torch_dtype(work.dtype)).max
            key = g.op("Min", work, h.scalar_like(g, finite_max, work))
        nan_key = math.inf if not negate else -math.inf
        key = g.op("Neg", key) if negate else key
        key = g.op("Where", g.op("IsNaN", work), h.scalar_like(g, nan_key, work), key)
    elif negate:
        key = g.op("Neg", work)
    if g.opset < 10:
        if not isinstance(k, int):
            raise ValueError("topk with k known only at run time needs opset 10")
        values, indices = g.op("TopK", key, axis=dim, k=k, num_outputs=2)
    else:
        attrs = {"largest": int(largest), "sorted": int(sorted_)} if g.opset >= 11 else {}
        values, indices = g.op("TopK", key, g.list_to_value([k]), axis=dim, num_outputs=2, **attrs)
    if negate:
        values = g.op("Neg", values)
    if shape is not None and isinstance(k, int):
        shape[dim] = k
        indices.shape, indices.dtype = ir.Shape(shape), _INT64
        values.shape, values.dtype = ir.Shape(shape), key.dtype
    if read_back:
        if g.opset >= 11:
            values = g.op("GatherElements", work, indices, axis=dim)
        else:
            values = aten_gather(g, work, dim, indices)
    return h.cast(g, values, x.dtype), indices


@onnx_symbolic("aten::topk")
def aten_topk(
    g: GraphContext, self: Value, k: int | Value, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
) -> tuple[Value, Value]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)

    sorted=False leaves the order unspecified in torch; sorted output satisfies it.
    """
    return _topk(g, self, k, dim, largest, sorted)


@onnx_symbolic("aten::sort")
def aten_sort(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool | None = None
) -> tuple[Value, Value]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices) (and .stable)

    A TopK of the whole dim; its ties come lowest index first, which is the stable order.
    NaN sorts last ascending and first descending, as in torch (below opset 11 with sizes
    known only at run time, a NaN value comes out as inf, in its place).
    """
    del stable
    if h.rank_of(self) == 0:
        return self, g.constant(torch.tensor(0))
    return _topk(g, self, h.dim_size(g, self, dim), dim, descending, True)


@onnx_symbolic("aten::argsort")
def aten_argsort(
    g: GraphContext, self: Value, dim: int = -1, descending: bool = False, stable: bool = False
) -> Value:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor (and .stable): the
    indices of aten::sort"""
    return aten_sort(g, self, dim, descending, stable)[1]


@onnx_symbolic("aten::bucketize")
def aten_bucketize(
    g: GraphContext, self: Value, boundaries: Value, out_int32: bool = False, right: bool = False
) -> Value:
    """bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor (and .Scalar)

    The bucket is a count of boundaries below x (right=False: b < x; right=True: b <= x),
    from a broadcast comparison against the sorted boundaries. NaN sorts after everything,
    as in torch, so it lands in the last bucket.
    """
    x, b = self, boundaries
    if x.dtype != b.dtype:
        x, b = h.cast(g, x, ir.DataType.DOUBLE), h.cast(g, b, ir.DataType.DOUBLE)
    x, b = _comparable(g, x), _comparable(g, b)
    rank = _rank(self, "bucketize")
    column = h.unsqueeze(g, x, [rank])
    if right:
        below = g.op("Not", g.op("Greater", b, column))
    else:
        below = g.op("Less", b, column)
        if h.is_floating(x):
            below = g.op("Or", below, g.op("IsNaN", column))
    count = h.reduce(g, "ReduceSum", h.cast(g, below, _INT64), [rank], False)
    return h.cast(g, count, ir.DataType.INT32 if out_int32 else _INT64)


# ============================================================================================
# Unique
# ============================================================================================


def _unique_input(g: GraphContext, x: Value) -> Value:
    """onnxruntime's Unique has float, double, int8, int64 and string kernels only."""
    if x.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE, ir.DataType.INT8, _INT64):
        return x
    if h.is_floating(x):
        return h.cast(g, x, ir.DataType.FLOAT)
    return h.cast(g, x, _INT64)


# ============================================================================================
# Embedding bags
# ============================================================================================


def _embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    mode: int,
    per_sample_weights: Value | None,
    include_last_offset: bool,
    padding_idx: int | None,
) -> tuple[Value, Value, Value, Value]:
    """Bags from a [bags, L] membership matrix: bag b holds positions offsets[b] <= j < end[b].
    Sum and mean are a MatMul of the membership with the gathered rows (finite weights
    assumed: a 0*inf would spread NaN to other bags); max is a ReduceMax over rows masked to
    -inf. Empty bags are 0, as in torch. Only the first output is computed: the others are
    backward helpers and come back empty."""
    if h.rank_of(indices) != 1:
        raise ValueError("embedding_bag expects 1-D indices with offsets")
    indices = h.cast(g, indices, _INT64)
    offsets = h.cast(g, offsets, _INT64)
    length = h.dim_size(g, indices, 0)
    starts = h.slice_static(g, offsets, [0], [0], [-1]) if include_last_offset else offsets
    tail = h.slice_static(g, offsets, [0], [1], [_INT64_MAX])
    ends = tail if include_last_offset else g.op("Concat", tail, g.list_to_value([length]), axis=0)
    positions = h.unsqueeze(g, _arange_indexing(g, length), [0])  # [1, L]
    starts, ends = h.unsqueeze(g, starts, [1]), h.unsqueeze(g, ends, [1])  # [B, 1]
    member = g.op("And", g.op("Not", g.op("Less", positions, starts)), g.op("Less", positions, ends))
    if padding_idx is not None and padding_idx >= 0:
        kept = g.op("Not", g.op("Equal", indices, g.constant(padding_idx)))
        member = g.op("And", member, h.unsqueeze(g, kept, [0]))
    rows = g.op("Gather", weight, indices, axis=0)  # [L, D]
    if per_sample_weights is not None:
        if mode != 0:
            raise ValueError("embedding_bag per_sample_weights only work with mode='sum'")
        rows = g.op("Mul", rows, h.unsqueeze(g, h.cast(g, per_sample_weights, weight.dtype), [1]))
    work = ir.DataType.FLOAT if weight.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16) else weight.dtype
    rows = h.cast(g, rows, work)
    counts = h.reduce(g, "ReduceSum", h.cast(g, member, work), [1], True)  # [B, 1]
    if mode in (0, 1):
        out = g.op("MatMul", h.cast(g, member, work), rows)
        if mode == 1:
            one = g.constant(torch.tensor(1, dtype=tensors.to_torch_dtype(work)))
            out = g.op("Div", out, g.op("Max", counts, one))
    elif mode == 2:
        minus_inf = g.constant(torch.tensor(-math.inf, dtype=tensors.to_torch_dtype(work)))
        picked = g.op("Where", h.unsqueeze(g, member, [2]), h.unsqueeze(g, rows, [0]), minus_inf)
        out = h.reduce(g, "ReduceMax", picked, [1], False)
        zero = g.constant(torch.tensor(0, dtype=tensors.to_torch_dtype(work)))
        out = g.op("Where", g.op("Greater", counts, zero), out, zero)
    else:
        raise ValueError(f"unknown embedding_bag mode {mode}")
    empty = _empty_int64(g)
    return h.cast(g, out, weight.dtype), empty, empty, empty


@onnx_symbolic("aten::embedding_bag")
def aten_embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Value | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Value, Value, Value, Value]:
    """embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)

    Mode 0 sum, 1 mean, 2 max; scale_grad_by_freq and sparse only affect gradients. Every
    opset (no Loop): see _embedding_bag.
    """
    del scale_grad_by_freq, sparse
    return _embedding_bag(g, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


@onnx_symbolic("aten::_embedding_bag")
def aten__embedding_bag(
    g: GraphContext,
    weight: Value,
    indices: Value,
    offsets: Value,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Value | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
) -> tuple[Value, Value, Value, Value]:
    """_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)

    padding_idx=-1 means none here (the public op has already made a given one positive).
    """
    del scale_grad_by_freq, sparse
    return _embedding_bag(g, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)


@onnx_symbolic("aten::embedding_renorm")
def aten_embedding_renorm(g: GraphContext, self: Value, indices: Value, max_norm: float, norm_type: float) -> Value:
    """embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor

    (from embedding_renorm_, which F.embedding(max_norm=...) applies to the weight.) Rows
    that are referenced and whose norm exceeds max_norm are scaled by max_norm/(norm+1e-7),
    torch's formula; a bool vector of referenced rows replaces the scatter, so opset 9 works.
    """
    rank = _rank(self, "embedding_renorm")
    if rank != 2:
        raise ValueError("embedding_renorm expects a 2-D weight")
    x = self
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, x, ir.DataType.FLOAT)
    magnitude = g.op("Abs", x)
    if norm_type == math.inf:
        norm = h.reduce(g, "ReduceMax", magnitude, [1], True)
    elif norm_type == 1:
        norm = h.reduce(g, "ReduceSum", magnitude, [1], True)
    elif norm_type == 2:
        norm = g.op("Sqrt", h.reduce(g, "ReduceSum", g.op("Mul", x, x), [1], True))
    else:
        powered = g.op("Pow", magnitude, h.scalar_like(g, norm_type, x))
        norm = g.op("Pow", h.reduce(g, "ReduceSum", powered, [1], True), h.scalar_like(g, 1.0 / norm_type, x))
    norm.dtype = x.dtype
    rows = h.dim_size(g, self, 0)
    flat = _normalize_index(g, g.op("Reshape", indices, g.constant([-1])), rows)
    match = g.op("Equal", h.unsqueeze(g, flat, [1]), h.unsqueeze(g, _arange_indexing(g, rows), [0]))
    used = h.cast(g, h.reduce(g, "ReduceMax", h.cast(g, match, ir.DataType.INT32), [0], False), _BOOL)
    limit = h.scalar_like(g, max_norm, x)
    scale = g.op("Div", limit, g.op("Add", norm, h.scalar_like(g, 1e-7, x)))
    renorm = g.op("And", h.unsqueeze(g, used, [1]), g.op("Greater", norm, limit))
    out = g.op("Where", renorm, g.op("Mul", x, scale), x)
    return h.cast(g, out, self.dtype)


# ============================================================================================
# Diagonals and triangles
# ============================================================================================


@onnx_symbolic("aten::diagonal")
def aten_diagonal(g: GraphContext, self: Value, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Value:
    """diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)

    The two dims move last and merge; the diagonal is a Gather of positions in the merged
    dim (constant for static sizes, computed otherwise), so every opset works. The diagonal
    comes last, as in torch.
    """
    rank = _rank(self, "diagonal")
    d1, d2 = h.normalize_dim(dim1, rank), h.normalize_dim(dim2, rank)
    rows, cols = h.dim_size(g, self, d1), h.dim_size(g, self, d2)
    rest = [a for a in range(rank) if a not in (d1, d2)]
    perm = rest + [d1, d2]
    x = self if perm == list(range(rank)) else g.op("Transpose", self, perm=perm)
    batch = [h.dim_size(g, self, a) for a in rest]
    x = g.op("Reshape", x, _shape_value_indexing(g, [*batch, _mul_sizes(g, rows, cols)]))
    first_row, first_col = max(0, -offset), max(0, offset)
    if isinstance(rows, int) and isinstance(cols, int):
        length = max(0, min(rows - first_row, cols - first_col))
        positions = g.constant(torch.tensor([(first_row + i) * cols + first_col + i for i in range(length)], dtype=torch.int64))
    else:
        # the same arithmetic at run time; Max/Min lack int64 kernels before opset 12
        def as_value(size: int | Value) -> Value:
            return g.constant(size) if isinstance(size, int) else h.cast(g, size, _INT64)

        rows_left = g.op("Sub", as_value(rows), g.constant(first_row))
        cols_left = g.op("Sub", as_value(cols), g.constant(first_col))
        shorter = g.op("Where", g.op("Less", rows_left, cols_left), rows_left, cols_left)
        zero = g.constant(0)
        length_v = g.op("Where", g.op("Less", shorter, zero), zero, shorter)
        steps = _arange_indexing(g, length_v)
        row_start = g.op("Mul", g.op("Add", steps, g.constant(first_row)), as_value(cols))
        positions = g.op("Add", row_start, g.op("Add", steps, g.constant(first_col)))
    return g.op("Gather", x, positions, axis=len(rest))


def _triangle_mask(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    """Bool mask of the kept triangle over the last two dims: col - row <= k (lower) or >= k
    (upper). A constant when the sizes and k are static."""
    rows, cols = h.dim_size(g, self, -2), h.dim_size(g, self, -1)
    if isinstance(rows, int) and isinstance(cols, int) and isinstance(diagonal, int):
        ones = torch.ones(rows, cols, dtype=torch.bool)
        return g.constant(ones.triu(diagonal) if upper else ones.tril(diagonal))
    offset = g.op("Sub", h.unsqueeze(g, _arange_indexing(g, cols), [0]), h.unsqueeze(g, _arange_indexing(g, rows), [1]))
    k = g.list_to_value([diagonal])
    return g.op("Not", g.op("Less" if upper else "Greater", offset, k))


def _triangle(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    if _rank(self, "tril/triu") < 2:
        raise ValueError("tril/triu need at least 2 dims")
    zero = h.scalar_like(g, False if self.dtype == _BOOL else 0, self)
    return h.where(g, _triangle_mask(g, self, diagonal, upper), self, zero)


@onnx_symbolic("aten::tril")
def aten_tril(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """tril(Tensor self, SymInt diagonal=0) -> Tensor

    Trilu arrives at opset 14; before it a mask (constant for static sizes) selects.
    """
    return _triangle(g, self, diagonal, upper=False)


@onnx_symbolic("aten::triu")
def aten_triu(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """triu(Tensor self, SymInt diagonal=0) -> Tensor (a mask before Trilu-14, see tril)"""
    return _triangle(g, self, diagonal, upper=True)


def _trilu(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    k = g.constant(diagonal) if isinstance(diagonal, int) else g.op("Reshape", h.cast(g, diagonal, _INT64), g.constant(torch.zeros(0, dtype=torch.int64)))
    return g.op("Trilu", self, k, upper=int(upper))


# ============================================================================================
# Narrow
# ============================================================================================


@onnx_symbolic("aten::narrow")
def aten_narrow(g: GraphContext, self: Value, dim: int, start: int | Value, length: int | Value) -> Value:
    """narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a) (and .Tensor)

    A slice [start, start+length); a negative start counts from the end. Bounds known only
    at run time need Slice-10.
    """
    rank = _rank(self, "narrow")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    if isinstance(start, int) and start < 0:
        if isinstance(size, int):
            start += size
        else:
            start = g.op("Add", g.constant(start), size)
    elif isinstance(start, Value):
        start = _normalize_index(g, g.op("Reshape", start, g.constant(torch.zeros(0, dtype=torch.int64))), size)
    if isinstance(start, int) and isinstance(length, int):
        return aten_slice(g, self, dim, start, start + length, 1)
    start_v = start if isinstance(start, Value) else g.constant(start)
    length_v = h.cast(g, length, _INT64) if isinstance(length, Value) else g.constant(length)
    return aten_slice(g, self, dim, start_v, g.op("Add", start_v, length_v), 1)


# ============================================================================================
# Normalization, convolution and pooling variants, interpolation
# ============================================================================================
# Normalization layers, convolution variants, pooling with indices, adaptive pooling with
# sizes that do not divide, interpolation, dropout variants, grid sampling and affine grids.

_LOW_PRECISION = (ir.DataType.FLOAT16, ir.DataType.BFLOAT16)


# ============================================================================================
# Helpers
# ============================================================================================



def _batched(g: GraphContext, x: Value, spatial: int) -> tuple[Value, bool]:
    """torch pools accept unbatched [C, *spatial] inputs; ONNX pools need [N, C, *spatial]."""
    rank = _rank(x, "pooling")
    if rank == spatial + 1:
        out = h.unsqueeze(g, x, [0])
        out.shape = ir.Shape([1] + list(x.shape))  # type: ignore[arg-type]
        out.dtype = x.dtype
        return out, True
    return x, False


def _unbatched(g: GraphContext, outputs: tuple[Value, ...], added: bool) -> tuple[Value, ...]:
    return tuple(h.squeeze(g, o, [0]) for o in outputs) if added else outputs


def _upcast(g: GraphContext, x: Value) -> Value:
    """float16/bfloat16 statistics are computed in float32, as torch does (opmath type)."""
    return h.cast(g, x, ir.DataType.FLOAT) if x.dtype in _LOW_PRECISION else x


def _moments(g: GraphContext, x: Value, axes: Sequence[int]) -> tuple[Value, Value]:
    """Mean and biased variance over ``axes`` (kept), from primitives every opset has."""
    mean = h.reduce(g, "ReduceMean", x, list(axes), True)
    centered = g.op("Sub", x, mean)
    var = h.reduce(g, "ReduceMean", g.op("Mul", centered, centered), list(axes), True)
    return mean, var


def _channel_shaped(g: GraphContext, param: Value, rank: int) -> Value:
    """A per-channel [C] parameter reshaped to [C, 1, ...] to broadcast over [N, C, *]."""
    return g.op("Reshape", param, g.constant([-1] + [1] * (rank - 2)))


def _affine(g: GraphContext, x: Value, weight: Value | None, bias: Value | None, rank: int) -> Value:
    if weight is not None:
        x = g.op("Mul", x, h.cast_like(g, _channel_shaped(g, weight, rank), x))
    if bias is not None:
        x = g.op("Add", x, h.cast_like(g, _channel_shaped(g, bias, rank), x))
    return x


def _adaptive_windows(in_size: int, out_size: int) -> list[tuple[int, int]]:
    """torch's adaptive pooling windows: [floor(i*in/out), ceil((i+1)*in/out))."""
    return [((i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)) for i in range(out_size)]


def _adaptive_sizes(x: Value, output_size: Sequence[int | None], what: str) -> tuple[list[int], list[int]]:
    spatial = len(output_size)
    shape = x.shape
    if shape is None or any(not isinstance(d, int) for d in list(shape)[-spatial:]):
        raise ValueError(f"{what} needs static spatial input sizes")
    in_sizes = [int(d) for d in list(shape)[-spatial:]]
    out_sizes = [int(o) if o is not None else i for o, i in zip(output_size, in_sizes)]
    return in_sizes, out_sizes


def _apply_on_axis(g: GraphContext, x: Value, axis: int, rank: int, matrix: Value) -> Value:
    """MatMul ``matrix`` [in, out] into ``axis`` of ``x`` (moved last and back)."""
    if axis == rank - 1:
        return g.op("MatMul", x, matrix)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = g.op("Transpose", x, perm=perm)
    return g.op("Transpose", g.op("MatMul", moved, matrix), perm=perm)


def pool_ceil_padding(in_size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """Extra end padding that makes a floor-mode pool produce torch's ceil_mode output size.

    torch: out = ceil((in + 2p - d(k-1) - 1) / s) + 1, minus one when the last window would
    start inside the end padding. Opset 9 has no ceil_mode; padding the end explicitly gives
    the same windows with floor rounding (MaxPool ignores padded cells, indices skip them), so
    static sizes use it at every opset and only dynamic ones need ceil_mode (opset 10).
    """
    span = in_size + 2 * pad - dilation * (kernel - 1) - 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= in_size + pad:
        out -= 1
    needed = (out - 1) * stride + dilation * (kernel - 1) + 1
    return max(0, needed - (in_size + 2 * pad))


def _pool_geometry(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    spatial: int,
) -> dict[str, object]:
    kernel = _spatial_list(kernel_size, spatial)
    strides = _spatial_list(stride, spatial) if stride else list(kernel)
    dilations = _spatial_list(dilation, spatial) if dilation else [1] * spatial
    pads = _pads(padding, spatial)
    attrs: dict[str, object] = {"kernel_shape": kernel, "strides": strides}
    if ceil_mode:
        shape = h.static_shape(x)
        extra = None
        if shape is not None:
            extra = [pool_ceil_padding(shape[2 + i], kernel[i], strides[i], pads[i], dilations[i]) for i in range(spatial)]
            if any(pads[spatial + i] + extra[i] >= kernel[i] for i in range(spatial)):
                extra = None  # onnxruntime wants pads smaller than the kernel
        if extra is not None:
            for i in range(spatial):
                pads[spatial + i] += extra[i]
        elif g.opset >= 10:
            attrs["ceil_mode"] = 1
        else:
            raise ValueError("pooling with ceil_mode=True and dynamic sizes needs opset 10 or higher")
    attrs["pads"] = pads
    if any(d != 1 for d in dilations):
        if g.opset < 10:
            raise ValueError("pooling with dilation needs opset 10 or higher")
        attrs["dilations"] = dilations
    return attrs


def _per_channel_offsets(g: GraphContext, x: Value, spatial: int) -> Value:
    """ONNX MaxPool indices count over the whole tensor (N and C included); torch counts
    within each (n, c) plane. These are the start offsets of each plane, [N, C, 1, ...]."""
    shape = h.static_shape(x)
    if shape is not None:
        plane = math.prod(shape[2:])
        offsets = torch.arange(shape[0] * shape[1], dtype=torch.int64) * plane
        return g.constant(offsets.reshape(shape[0], shape[1], *([1] * spatial)))
    _, positions = g.op(
        "MaxPool", x, num_outputs=2, kernel_shape=[1] * spatial, strides=[1] * spatial
    )
    axes = list(range(2, 2 + spatial))
    return h.slice_static(g, positions, axes, [0] * spatial, [1] * spatial)


def _pool_dtype(g: GraphContext, x: Value) -> ir.DataType:
    """The dtype MaxPool runs in. torch pools int32/int64/uint8 too; MaxPool takes floats,
    and int8/uint8 only from opset 12, so other integers go through double (exact below 2**53)."""
    dtype = x.dtype if x.dtype is not None else ir.DataType.FLOAT
    if tensors.is_floating(dtype):
        return dtype
    if dtype in (ir.DataType.INT8, ir.DataType.UINT8) and g.opset >= 12:
        return dtype
    return ir.DataType.DOUBLE


def max_pool_with_indices(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    spatial: int,
) -> tuple[Value, Value]:
    """MaxPool with its Indices output, rebased to torch's per-plane flattened indices."""
    x, added = _batched(g, x, spatial)
    attrs = _pool_geometry(g, x, kernel_size, stride, padding, dilation, ceil_mode, spatial)
    source = h.cast(g, x, _pool_dtype(g, x))
    values, flat = g.op("MaxPool", source, num_outputs=2, storage_order=0, **attrs)
    values = h.cast(g, values, x.dtype) if x.dtype is not None else values
    indices = g.op("Sub", flat, _per_channel_offsets(g, source, spatial))
    return _unbatched(g, (values, indices), added)  # type: ignore[return-value]


def _adaptive_max_pool_gather(
    g: GraphContext, x: Value, in_sizes: list[int], out_sizes: list[int]
) -> tuple[Value, Value]:
    """Adaptive max pooling for any sizes: each spatial axis is gathered into [out, K]
    windows (K the widest window; shorter ones repeat their last element, which never changes
    the max nor the first argmax), then ReduceMax/ArgMax run over the flattened windows."""
    spatial = len(in_sizes)
    windows = [_adaptive_windows(i, o) for i, o in zip(in_sizes, out_sizes)]
    widths = [max(e - s for s, e in w) for w in windows]
    y = x
    for j in reversed(range(spatial)):  # last axis first keeps earlier axis numbers valid
        idx = [[min(s + k, e - 1) for k in range(widths[j])] for s, e in windows[j]]
        y = g.op("Gather", y, g.constant(idx), axis=2 + j)
    # y: [N, C, O0, K0, O1, K1, ...] -> [N, C, O0, O1, ..., K0, K1, ...]
    perm = [0, 1] + [2 + 2 * j for j in range(spatial)] + [3 + 2 * j for j in range(spatial)]
    y = g.op("Transpose", y, perm=perm)
    y = g.op("Reshape", y, g.constant([0, 0] + out_sizes + [-1]))
    values = h.reduce(g, "ReduceMax", y, [-1], False)
    arg = g.op("ArgMax", y, axis=-1, keepdims=0)
    strides = [math.prod(in_sizes[j + 1:]) for j in range(spatial)]
    base = torch.zeros(out_sizes, dtype=torch.int64)
    for j in range(spatial):
        starts = torch.tensor([s for s, _ in windows[j]], dtype=torch.int64) * strides[j]
        base = base + starts.reshape([-1] + [1] * (spatial - 1 - j))
    index = g.constant(base)
    remaining = arg
    for j in reversed(range(spatial)):
        width = g.constant(widths[j])
        quotient = g.op("Div", remaining, width)
        k = g.op("Sub", remaining, g.op("Mul", quotient, width))
        index = g.op("Add", index, g.op("Mul", k, g.constant(strides[j])))
        remaining = quotient
    return values, index


def _adaptive_max_pool(g: GraphContext, x: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    spatial = len(output_size)
    in_sizes, out_sizes = _adaptive_sizes(x, output_size, "adaptive_max_pool")
    if all(i % o == 0 for i, o in zip(in_sizes, out_sizes)):
        kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
        return max_pool_with_indices(g, x, kernel, kernel, [0], [1], False, spatial)
    x, added = _batched(g, x, spatial)
    return _unbatched(g, _adaptive_max_pool_gather(g, x, in_sizes, out_sizes), added)  # type: ignore[return-value]


def adaptive_avg_pool(g: GraphContext, self: Value, output_size: Sequence[int | None]) -> Value:
    """Adaptive average pooling with torch's exact windows for any sizes.

    Global or evenly dividing sizes become GlobalAveragePool/AveragePool. Otherwise each
    spatial axis is averaged separately by a constant [in, out] matrix (a window average over
    a box is the product of per-axis window averages), which MatMul supports at every opset.
    """
    spatial = len(output_size)
    if all(s == 1 for s in output_size) or all(
        i % o == 0 for i, o in zip(*_adaptive_sizes(self, output_size, "adaptive_avg_pool"))
    ):
        x, added = _batched(g, self, spatial)
        if all(s == 1 for s in output_size):
            out = g.op("GlobalAveragePool", x)
        else:
            in_sizes, out_sizes = _adaptive_sizes(self, output_size, "adaptive_avg_pool")
            kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
            out = g.op("AveragePool", x, kernel_shape=kernel, strides=kernel)
        return _unbatched(g, (out,), added)[0]
    in_sizes, out_sizes = _adaptive_sizes(self, output_size, "adaptive_avg_pool")
    rank = _rank(self, "adaptive_avg_pool")
    torch_dtype = tensors.to_torch_dtype(self.dtype)
    out = self
    for j in range(spatial):
        if in_sizes[j] == out_sizes[j]:
            continue
        matrix = torch.zeros(in_sizes[j], out_sizes[j], dtype=torch.float64)
        for o, (s, e) in enumerate(_adaptive_windows(in_sizes[j], out_sizes[j])):
            matrix[s:e, o] = 1.0 / (e - s)
        out = _apply_on_axis(g, out, rank - spatial + j, rank, g.constant(matrix.to(torch_dtype)))
    return out


def _nearest_sources(in_size: int, out_size: int, scale: float | None) -> list[int]:
    """torch's nearest source index min(floor(dst * s), in - 1), in float32 like torch, with
    s = 1/scale_factor when a factor was given, else in/out."""
    if scale is not None and scale > 0:
        step = torch.tensor(1.0 / scale, dtype=torch.float32)
    else:
        step = torch.tensor(in_size, dtype=torch.float32) / torch.tensor(out_size, dtype=torch.float32)
    dst = torch.arange(out_size, dtype=torch.float32)
    return torch.clamp(torch.floor(dst * step).to(torch.int64), max=in_size - 1).tolist()


def _nearest_gather(
    g: GraphContext,
    x: Value,
    in_sizes: list[int],
    out_sizes: list[int] | None,
    scales: list[float] | None,
) -> Value:
    """Nearest interpolation as one Gather per resized axis with constant source indices.
    Exact torch indices for any ratio (Upsample-9 refuses scales below 1 in onnxruntime)."""
    spatial = len(in_sizes)
    out = x
    for j in range(spatial):
        scale = scales[j] if scales is not None else None
        size = out_sizes[j] if out_sizes is not None else int(math.floor(in_sizes[j] * scale))  # type: ignore[operator]
        sources = _nearest_sources(in_sizes[j], size, scale)
        if sources == list(range(in_sizes[j])):
            continue
        out = g.op("Gather", out, g.constant(sources), axis=2 + j)
    return out


def _resize_sizes(g: GraphContext, x: Value, out_sizes: list[int]) -> Value:
    """Full-rank sizes input of Resize: N and C from the input, then the spatial sizes."""
    shape = h.static_shape(x)
    if shape is not None:
        return g.constant(shape[:2] + out_sizes)
    leading = h.slice_static(g, g.op("Shape", x), [0], [0], [2])
    return g.op("Concat", leading, g.constant(out_sizes), axis=0)


def _interpolation_args(
    x: Value, output_size: Sequence[int] | None, scales: Sequence[float | None] | None
) -> tuple[list[int] | None, list[float] | None]:
    """Per-spatial-axis output sizes and scale factors (either may be None)."""
    spatial = _rank(x, "interpolation") - 2
    scale_list: list[float] | None = None
    if scales is not None and len(scales) > 0 and all(s is not None for s in scales):
        scale_list = [float(s) for s in _spatial_list(scales, spatial)]  # type: ignore[arg-type]
    out_sizes: list[int] | None = None
    if output_size is not None and len(output_size) > 0:
        out_sizes = _spatial_list(output_size, spatial)
    if out_sizes is None and scale_list is None:
        raise ValueError("interpolation needs either an output size or scale factors")
    return out_sizes, scale_list


def _nearest_opset9(
    g: GraphContext, x: Value, output_size: Sequence[int] | None, scales: Sequence[float | None] | None
) -> Value:
    """Nearest upsampling before Resize-11.

    With static sizes, one Gather per axis with torch's own source indices: exact for any
    ratio, downsampling included (onnxruntime's Upsample refuses scales below 1). With dynamic
    sizes, Upsample-9 (Resize-10 at opset 10, where Upsample is deprecated) by scale factors,
    which samples floor(dst / scale) like torch.
    """
    out_sizes, scale_list = _interpolation_args(x, output_size, scales)
    shape = h.static_shape(x)
    if shape is not None:
        return _nearest_gather(g, x, shape[2:], out_sizes, scale_list)
    if out_sizes is not None or scale_list is None or any(s < 1 for s in scale_list):
        raise ValueError(
            "nearest interpolation with dynamic input sizes needs opset 11 or higher unless "
            "it upsamples by scale factors (Upsample/Resize-10 take scales >= 1 only)"
        )
    op_type = "Upsample" if g.opset == 9 else "Resize"
    return g.op(op_type, x, g.constant([1.0, 1.0] + scale_list, ir.DataType.FLOAT), mode="nearest")


def _linear_needs_opset_11(mode: str) -> ValueError:
    return ValueError(
        f"{mode} interpolation needs opset 11 or higher: Upsample-9 and Resize-10 only have "
        "asymmetric coordinates, which differ from torch's half-pixel/align_corners sampling"
    )


def _resize(
    g: GraphContext,
    x: Value,
    mode: str,
    output_size: Sequence[int] | None,
    scales: Sequence[float | None] | None,
    align_corners: bool | None,
) -> Value:
    """Resize-11+ with torch's sampling; ``mode`` is nearest, linear or cubic.

    torch's nearest source is floor(dst * in/out), or floor(dst / scale) when a factor was
    given: asymmetric + floor. Linear with align_corners=False is half_pixel (torch clamps
    negative sources to 0, as onnxruntime does; pytorch_half_pixel would differ for an output
    of size 1), align_corners=True is 'align_corners'. Cubic uses torch's A=-0.75.
    """
    out_sizes, scale_list = _interpolation_args(x, output_size, scales)
    attrs: dict[str, object] = {}
    if mode == "nearest":
        attrs.update(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        attrs["mode"] = mode
        attrs["coordinate_transformation_mode"] = "align_corners" if align_corners else "half_pixel"
        if mode == "cubic":
            attrs["cubic_coeff_a"] = -0.75
    if out_sizes is not None and scale_list is not None:
        # both given (the non-vec overloads): torch samples with the scales, so keep them
        # when they produce the requested size, which is the usual case
        shape = h.static_shape(x)
        if shape is not None and all(
            math.floor(i * sc) == o for i, sc, o in zip(shape[2:], scale_list, out_sizes)
        ):
            out_sizes = None
    empty = g.constant(torch.empty(0, dtype=torch.float32))  # roi (and scales with sizes)
    if out_sizes is not None:
        inputs = [empty, empty, _resize_sizes(g, x, out_sizes)]
    else:
        assert scale_list is not None
        inputs = [empty, g.constant([1.0, 1.0] + scale_list, ir.DataType.FLOAT)]
    return g.op("Resize", x, *inputs, **attrs)


_GRID_MODES_16 = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_MODES_20 = {0: "linear", 1: "nearest", 2: "cubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _linspace_coords(steps: int, align_corners: bool) -> torch.Tensor:
    """Normalized pixel centers of affine_grid along one axis (a single step is 0)."""
    if steps <= 1:
        return torch.zeros(max(steps, 0), dtype=torch.float64)
    coords = torch.linspace(-1.0, 1.0, steps, dtype=torch.float64)
    if not align_corners:
        coords = coords * (steps - 1) / steps
    return coords


# ============================================================================================
# Normalization
# ============================================================================================


@onnx_symbolic("aten::group_norm")
def aten_group_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    num_groups: int,
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor

    InstanceNormalization over the input viewed as [N, G, -1]: its scale and bias have one
    entry per group, and num_groups is an export-time int, so no channel count is needed. One
    kernel instead of the dozen ops of a decomposition (torch's exporter does the same); the
    weight and bias of the channels apply afterwards. Half inputs are normalized in float32.
    """
    rank = _rank(input, "group_norm")
    x = _upcast(g, input)
    grouped = g.op("Reshape", x, g.constant([0, num_groups, -1]))
    dtype = tensors.to_torch_dtype(x.dtype) if x.dtype is not None else torch.float32
    normalized = g.op(
        "InstanceNormalization",
        grouped,
        g.constant(torch.ones(num_groups, dtype=dtype)),
        g.constant(torch.zeros(num_groups, dtype=dtype)),
        epsilon=eps,
    )
    out = g.op("Reshape", normalized, h.shape_of(g, input))
    out = h.cast(g, out, input.dtype)
    return _affine(g, out, weight, bias, rank)


@onnx_symbolic("aten::instance_norm")
def aten_instance_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value | None,
    bias: Value | None,
    running_mean: Value | None,
    running_var: Value | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
) -> Value:
    """instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor

    With the input's own statistics this is InstanceNormalization, one kernel, when its
    per-channel scale and bias can be built (the weight and bias given, or the channel count
    static). use_input_stats=False (track_running_stats in eval) normalizes with the running
    statistics, which InstanceNormalization cannot: that path, and a dynamic channel count
    without weights, are decomposed.
    """
    del momentum
    rank = _rank(input, "instance_norm")
    x = _upcast(g, input)
    if use_input_stats or running_mean is None or running_var is None:
        channels = h.dim_size(g, input, 1)
        if (weight is not None and bias is not None) or isinstance(channels, int):
            dtype = tensors.to_torch_dtype(x.dtype) if x.dtype is not None else torch.float32
            scale = h.cast_like(g, weight, x) if weight is not None else g.constant(torch.ones(channels, dtype=dtype))
            shift = h.cast_like(g, bias, x) if bias is not None else g.constant(torch.zeros(channels, dtype=dtype))
            out = g.op("InstanceNormalization", x, scale, shift, epsilon=eps)
            return h.cast(g, out, input.dtype)
    eps_value = h.scalar_like(g, eps, x)
    if use_input_stats or running_mean is None or running_var is None:
        mean, var = _moments(g, x, list(range(2, rank)))
    else:
        mean = h.cast_like(g, _channel_shaped(g, running_mean, rank), x)
        var = h.cast_like(g, _channel_shaped(g, running_var, rank), x)
    out = g.op("Div", g.op("Sub", x, mean), g.op("Sqrt", g.op("Add", var, eps_value)))
    out = h.cast(g, out, input.dtype)
    return _affine(g, out, weight, bias, rank)


@onnx_symbolic("aten::native_layer_norm")
def aten_native_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int] | Sequence[Value],
    weight: Value | None,
    bias: Value | None,
    eps: float,
) -> tuple[Value, Value, Value]:
    """native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)

    The mean and reciprocal standard deviation outputs keep the normalized dims as size 1 and
    the input dtype, as torch returns them; half inputs are reduced in float32.
    """
    axes = list(range(-len(normalized_shape), 0))
    x = _upcast(g, input)
    mean, var = _moments(g, x, axes)
    rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, h.scalar_like(g, eps, x))))
    out = h.cast(g, g.op("Mul", g.op("Sub", x, mean), rstd), input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    if bias is not None:
        out = g.op("Add", out, bias)
    return out, h.cast(g, mean, input.dtype), h.cast(g, rstd, input.dtype)


@onnx_symbolic("aten::_weight_norm")
def aten__weight_norm(ctx: GraphContext, v: Value, g: Value, dim: int = 0) -> Value:
    """_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor: v * g / ||v|| over every dim but ``dim``

    dim=-1 means the norm of the whole tensor (torch's norm_except_dim), not the last dim.
    The context parameter is named ``ctx`` here because the schema argument is called ``g``.
    """
    rank = _rank(v, "_weight_norm")
    if dim == -1:
        axes = list(range(rank))
    else:
        dim = h.normalize_dim(dim, rank)
        axes = [a for a in range(rank) if a != dim]
    x = _upcast(ctx, v)
    square_sum = h.reduce(ctx, "ReduceSumSquare", x, axes, True) if axes else ctx.op("Mul", x, x)
    norm = h.cast(ctx, ctx.op("Sqrt", square_sum), v.dtype)
    return ctx.op("Mul", v, ctx.op("Div", h.cast_like(ctx, g, v), norm))


@onnx_symbolic("aten::rms_norm")
def aten_rms_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int] | Sequence[Value],
    weight: Value | None = None,
    eps: float | None = None,
) -> Value:
    """rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor

    torch upcasts half inputs to float32, and eps=None means the epsilon of that compute type
    (float32's for half, not float16's); the weight multiplies after the cast back. The square
    is Pow(x, 2), not Mul(x, x): onnxruntime's SimplifiedLayerNormFusion only matches Pow, and
    then runs the whole norm as one kernel (it needs the weight; without one nothing fuses).
    """
    axes = list(range(-len(normalized_shape), 0))
    x = _upcast(g, input)
    if eps is None:
        eps = float(torch.finfo(tensors.to_torch_dtype(x.dtype)).eps)
    mean_square = h.reduce(g, "ReduceMean", g.op("Pow", x, h.scalar_like(g, 2.0, x)), axes, True)
    rms = g.op("Sqrt", g.op("Add", mean_square, h.scalar_like(g, eps, x)))
    out = h.cast(g, g.op("Div", x, rms), input.dtype)
    if weight is not None:
        out = g.op("Mul", out, weight)
    return out


# ============================================================================================
# Convolution variants
# ============================================================================================


@onnx_symbolic("aten::conv_tbc")
def aten_conv_tbc(g: GraphContext, self: Value, weight: Value, bias: Value, pad: int = 0) -> Value:
    """conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor

    Time-batch-channel layout: input [T, B, C] and weight [K, Cin, Cout] are transposed to
    Conv's [B, C, T] / [Cout, Cin, K] and the result back to [T, B, Cout].
    """
    kernel = h.static_shape(weight)
    if kernel is None:
        raise ValueError("conv_tbc needs a weight of static shape")
    x = g.op("Transpose", self, perm=[1, 2, 0])
    w = g.op("Transpose", weight, perm=[2, 1, 0])
    out = g.op("Conv", x, w, bias, kernel_shape=[kernel[0]], pads=[pad, pad], strides=[1], dilations=[1])
    return g.op("Transpose", out, perm=[2, 0, 1])


def _conv_transpose(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
    dilation: Sequence[int],
) -> Value:
    return convolution(g, input, weight, bias, stride, padding, dilation, True, output_padding, groups)


@onnx_symbolic("aten::conv_transpose1d")
def aten_conv_transpose1d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] = (0,), output_padding: Sequence[int] = (0,),
    groups: int = 1, dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor

    Scripted models call this directly (traced ones record _convolution); note the schema
    puts output_padding and groups before dilation.
    """
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


@onnx_symbolic("aten::conv_transpose2d")
def aten_conv_transpose2d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] = (0,), output_padding: Sequence[int] = (0,),
    groups: int = 1, dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor"""
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


@onnx_symbolic("aten::conv_transpose3d")
def aten_conv_transpose3d(
    g: GraphContext, input: Value, weight: Value, bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,), padding: Sequence[int] = (0,), output_padding: Sequence[int] = (0,),
    groups: int = 1, dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor"""
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ============================================================================================
# Pooling with indices and adaptive pooling
# ============================================================================================


@onnx_symbolic("aten::max_pool1d_with_indices")
def aten_max_pool1d_with_indices(
    g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (),
    padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)

    Indices are flattened per (n, c) plane in torch but over the whole tensor in ONNX, so
    the plane offsets are subtracted. ceil_mode with static sizes is explicit end padding,
    which is exact at opset 9 too.
    """
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 1)


@onnx_symbolic("aten::max_pool2d_with_indices")
def aten_max_pool2d_with_indices(
    g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (),
    padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 2)


@onnx_symbolic("aten::max_pool3d_with_indices")
def aten_max_pool3d_with_indices(
    g: GraphContext, self: Value, kernel_size: Sequence[int], stride: Sequence[int] = (),
    padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 3)


@onnx_symbolic("aten::adaptive_max_pool1d")
def aten_adaptive_max_pool1d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)

    Evenly dividing sizes are a MaxPool; others gather torch's overlapping windows
    (start floor(i*in/out), end ceil((i+1)*in/out)). Spatial sizes must be static.
    """
    return _adaptive_max_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_max_pool2d")
def aten_adaptive_max_pool2d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_max_pool3d")
def aten_adaptive_max_pool3d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(g, self, output_size)


def aten_adaptive_avg_pool_general(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool{1,2,3}d(Tensor self, SymInt[n] output_size) -> Tensor

    Not registered: aten::adaptive_avg_pool* belong to symbolic_opset9.py. This is the
    drop-in replacement for its _adaptive_avg_pool, exact for sizes that do not divide.
    """
    return adaptive_avg_pool(g, self, output_size)


# ============================================================================================
# Interpolation
# ============================================================================================


def _scales(*scales: float | None) -> list[float] | None:
    """Per-axis scales of the non-vec overloads, used only when all are given."""
    if any(s is None for s in scales):
        return None
    return [float(s) for s in scales]  # type: ignore[arg-type]


@onnx_symbolic("aten::upsample_nearest1d")
def aten_upsample_nearest1d(g: GraphContext, self: Value, output_size: Sequence[int], scales: float | None = None) -> Value:
    """upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor

    Given scales decide the sampling (torch uses 1/scale, not in/out); the size the shape.
    """
    return _nearest_opset9(g, self, output_size, _scales(scales))


@onnx_symbolic("aten::upsample_nearest1d.vec")
def aten_upsample_nearest1d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor (what tracing records)"""
    return _nearest_opset9(g, input, output_size, scale_factors)


@onnx_symbolic("aten::upsample_nearest2d")
def aten_upsample_nearest2d(g: GraphContext, self: Value, output_size: Sequence[int], scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _nearest_opset9(g, self, output_size, _scales(scales_h, scales_w))


@onnx_symbolic("aten::upsample_nearest2d.vec")
def aten_upsample_nearest2d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _nearest_opset9(g, input, output_size, scale_factors)


@onnx_symbolic("aten::upsample_nearest3d")
def aten_upsample_nearest3d(g: GraphContext, self: Value, output_size: Sequence[int], scales_d: float | None = None, scales_h: float | None = None, scales_w: float | None = None) -> Value:
    """upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _nearest_opset9(g, self, output_size, _scales(scales_d, scales_h, scales_w))


@onnx_symbolic("aten::upsample_nearest3d.vec")
def aten_upsample_nearest3d_vec(g: GraphContext, input: Value, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> Value:  # noqa: A002
    """upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _nearest_opset9(g, input, output_size, scale_factors)


_INTERPOLATE_MODES = {
    "nearest": "nearest",
    "linear": "linear",
    "bilinear": "linear",
    "trilinear": "linear",
    "bicubic": "cubic",
}


def _interpolate_args(
    input: Value,  # noqa: A002
    size: Sequence[int] | None,
    scale_factor: Sequence[float] | None,
    mode: str,
    recompute_scale_factor: bool | None,
    antialias: bool,
) -> tuple[str, Sequence[int] | None, Sequence[float] | None]:
    """F.interpolate's arguments as (ONNX-ish mode, size, scales). recompute_scale_factor=True
    makes torch derive the output size and then sample with in/out, not the given factor."""
    if antialias:
        raise ValueError("interpolate with antialias=True is not supported")
    if mode not in _INTERPOLATE_MODES:
        raise ValueError(f"interpolate mode {mode!r} is not supported")
    if recompute_scale_factor and scale_factor is not None and size is None:
        shape = h.static_shape(input)
        if shape is None:
            raise ValueError("recompute_scale_factor=True needs static input sizes")
        factors = _spatial_list(scale_factor, len(shape) - 2)
        size = [int(math.floor(i * f)) for i, f in zip(shape[2:], factors)]
        scale_factor = None
    return _INTERPOLATE_MODES[mode], size, scale_factor


@onnx_symbolic("aten::__interpolate")
def aten___interpolate(
    g: GraphContext,
    input: Value,  # noqa: A002
    size: Sequence[int] | None = None,
    scale_factor: Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Value:
    """__interpolate(Tensor input, int? size=None, float? scale_factor=None, str mode="nearest", bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor (and the size_list/scale_list overloads)

    Scripted F.interpolate after function substitution. Nearest only below opset 11 (see
    upsample_linear1d for why linear and cubic need 11).
    """
    onnx_mode, size, scale_factor = _interpolate_args(input, size, scale_factor, mode, recompute_scale_factor, antialias)
    if onnx_mode != "nearest":
        raise _linear_needs_opset_11(mode)
    return _nearest_opset9(g, input, size, scale_factor)


# ============================================================================================
# Dropout variants
# ============================================================================================


@onnx_symbolic("aten::alpha_dropout")
def aten_alpha_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """alpha_dropout(Tensor input, float p, bool train) -> Tensor

    Identity in eval. In training it sets dropped units to SELU's negative saturation and
    renormalizes, which no ONNX op does, so it is refused.
    """
    if not train or p == 0:
        return input
    raise ValueError("alpha_dropout in training mode cannot be exported")


@onnx_symbolic("aten::feature_alpha_dropout")
def aten_feature_alpha_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor (identity in eval)"""
    if not train or p == 0:
        return input
    raise ValueError("feature_alpha_dropout in training mode cannot be exported")


def _all_true_like(g: GraphContext, x: Value) -> Value:
    return g.op("ConstantOfShape", h.shape_of(g, x), value=torch.tensor([True]))


@onnx_symbolic("aten::native_dropout")
def aten_native_dropout(g: GraphContext, input: Value, p: float, train: bool | None) -> tuple[Value, Value]:  # noqa: A002
    """native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)

    train=None means training (torch drops). Eval returns the input and an all-true mask;
    a dropping Dropout (training_mode) needs opset 12.
    """
    if train is False or p == 0:
        return input, _all_true_like(g, input)
    raise ValueError("native_dropout in training mode needs opset 12 or higher (Dropout with training_mode)")


@onnx_symbolic("aten::affine_grid_generator")
def aten_affine_grid_generator(g: GraphContext, theta: Value, size: Sequence[int], align_corners: bool) -> Value:
    """affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor

    Before AffineGrid (opset 20) the grid is a constant base grid of homogeneous pixel
    coordinates times theta^T, one MatMul; the size must be static.
    """
    spatial = len(size) - 2
    if spatial not in (2, 3):
        raise ValueError(f"affine_grid_generator needs a 4-D or 5-D size, got {list(size)}")
    dims = list(size[2:])  # (H, W) or (D, H, W)
    axes = [_linspace_coords(n, align_corners) for n in reversed(dims)]  # x (W) first
    mesh = torch.meshgrid(*reversed(axes), indexing="ij")  # over (D,) H, W
    coords = [mesh[spatial - 1 - i] for i in range(spatial)]  # x, y(, z)
    base = torch.stack(coords + [torch.ones(dims, dtype=torch.float64)], dim=-1)
    base = base.reshape(-1, spatial + 1).to(tensors.to_torch_dtype(theta.dtype))
    rows = g.op("MatMul", g.constant(base), g.op("Transpose", theta, perm=[0, 2, 1]))
    return g.op("Reshape", rows, g.constant([size[0]] + dims + [spatial]))


# ============================================================================================
# Attention fast paths and random ops
# ============================================================================================
# Fused transformer kernels (the nn.TransformerEncoderLayer / nn.MultiheadAttention fast path),
# grouped-query attention, random sampling ops and STFT. Random ops become ONNX RandomUniform
# / RandomNormal (and their *Like forms) and Multinomial; everything else (integers,
# Bernoulli, exponential, gamma, sampling without replacement) is derived from uniform or
# normal noise by an exact transform.


# ============================================================================================
# Helpers
# ============================================================================================


def _target_dtype(dtype: torch.dtype | None, default: ir.DataType | None = None) -> ir.DataType:
    """The ONNX dtype of a factory's result: ``dtype``, else ``default``, else torch's default."""
    if dtype is not None:
        return h.ir_dtype(dtype)
    if default is not None:
        return default
    return h.ir_dtype(torch.get_default_dtype())


def _generation_dtype(target: ir.DataType) -> ir.DataType:
    """The dtype random noise is drawn in: double for double results, float otherwise.

    onnxruntime's RandomUniform/RandomNormal(/Like) kernels only exist for float and double,
    so half and bfloat16 (and integer results derived from noise) are drawn in float and cast.
    """
    return ir.DataType.DOUBLE if target == ir.DataType.DOUBLE else ir.DataType.FLOAT


def _random(
    g: GraphContext,
    kind: str,
    target: ir.DataType,
    *,
    shape: Sequence[int] | Value | None = None,
    like: Value | None = None,
    **attrs: float,
) -> Value:
    """Noise of ``kind`` ("Uniform" or "Normal") with a static ``shape``, a run-time shape
    (a 1-D int64 value) or the shape of ``like``, cast to ``target``.

    A static shape takes Random<kind> with the shape as an attribute; otherwise
    Random<kind>Like runs on a template of the drawing dtype (only the template's shape is read).
    """
    gen = _generation_dtype(target)
    if shape is None and like is not None:
        shape = h.static_shape(like)
    if shape is not None and not isinstance(shape, Value):
        out = g.op(f"Random{kind}", dtype=gen, shape=[int(s) for s in shape], **attrs)
        out.shape = ir.Shape(list(shape))
    else:
        if isinstance(shape, Value):
            template = g.op("ConstantOfShape", shape, value=torch.zeros(1, dtype=tensors.to_torch_dtype(gen)))
        else:
            assert like is not None
            template = h.cast(g, like, gen)
        out = g.op(f"Random{kind}Like", template, dtype=gen, **attrs)
    out.dtype = gen
    return h.cast(g, out, target)


def _uniform_like(g: GraphContext, like: Value) -> Value:
    """U[0, 1) noise with the shape of ``like``, in the drawing dtype for like's dtype."""
    return _random(g, "Uniform", _generation_dtype(like.dtype), like=like, low=0.0, high=1.0)


def _size_arg(size: Sequence[int] | Value) -> Sequence[int] | Value:
    if isinstance(size, Value) and size.dtype not in (None, ir.DataType.INT64):
        raise TypeError(f"size must be int64, got {size.dtype}")
    return size


def _raw_float(obj: object, what: str) -> float:
    """A Python float from a raw (unconverted) emitted input that must be a constant."""
    if isinstance(obj, torch.Tensor) and obj.numel() == 1:
        obj = obj.item()
    if isinstance(obj, Value) and obj.const_value is not None and obj.const_value.size == 1:
        obj = obj.const_value.numpy().item()
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj)
    raise TypeError(f"{what} must be a constant number, got {obj!r}")


def _raw_tensor(g: GraphContext, obj: object, what: str) -> Value:
    if isinstance(obj, Value):
        return obj
    if isinstance(obj, torch.Tensor):
        return g.constant(obj)
    raise TypeError(f"{what} must be a tensor, got {obj!r}")


def _check_no_generator(generator: object) -> None:
    if generator is not None:
        raise ValueError("an explicit torch.Generator cannot be exported; ONNX random ops seed themselves")


def _affine_attention_random(g: GraphContext, x: Value, scale: float | Value, shift: float | Value) -> Value:
    """x * scale + shift with scalars made in x's dtype (skipping identities)."""
    if not (isinstance(scale, float) and scale == 1.0):
        scale_v = h.cast_like(g, scale, x) if isinstance(scale, Value) else h.scalar_like(g, scale, x)
        x = g.op("Mul", x, scale_v)
    if not (isinstance(shift, float) and shift == 0.0):
        shift_v = h.cast_like(g, shift, x) if isinstance(shift, Value) else h.scalar_like(g, shift, x)
        x = g.op("Add", x, shift_v)
    return x


def _split_equal(g: GraphContext, x: Value, size: int, axis: int) -> tuple[Value, Value, Value]:
    """Three pieces of ``size`` along ``axis``; Split takes the sizes as an input from 13."""
    if g.opset >= 13:
        return g.op("Split", x, g.constant([size] * 3), axis=axis, num_outputs=3)
    return g.op("Split", x, axis=axis, split=[size] * 3, num_outputs=3)


def _split_heads(g: GraphContext, x: Value, num_heads: int, head_dim: int) -> Value:
    """[B, T, H*D] -> [B, H, T, D]; Reshape's 0 copies the (possibly dynamic) B and T."""
    shaped = g.op("Reshape", x, g.constant([0, 0, num_heads, head_dim]))
    return g.op("Transpose", shaped, perm=[0, 2, 1, 3])


def _merge_heads(g: GraphContext, x: Value, embed_dim: int) -> Value:
    """[B, H, T, D] -> [B, T, H*D]."""
    moved = g.op("Transpose", x, perm=[0, 2, 1, 3])
    return g.op("Reshape", moved, g.constant([0, 0, embed_dim]))


def _repeat_kv_heads(g: GraphContext, x: Value, heads: int) -> Value:
    """[..., Hkv, S, E] -> [..., heads, S, E], each kv head repeated heads/Hkv times in a row
    (torch's repeat_interleave on dim -3, what enable_gqa does)."""
    rank = h.rank_of(x)
    kv_heads = h.dim_size(g, x, -3)
    if rank is None or not isinstance(kv_heads, int):
        raise ValueError("grouped-query attention needs the key/value rank and head count at export time")
    if kv_heads == heads:
        return x
    if heads % kv_heads:
        raise ValueError(f"{heads} query heads are not a multiple of {kv_heads} key/value heads")
    group = heads // kv_heads
    expanded = g.op(
        "Expand",
        h.unsqueeze(g, x, [rank - 2]),
        g.constant([1] * (rank - 2) + [group, 1, 1]),
    )
    static = h.static_shape(x)
    if static is not None:
        target = g.constant(static[:-3] + [heads] + static[-2:])
    else:
        shape = g.op("Shape", x)
        parts = []
        if rank > 3:
            parts.append(h.slice_static(g, shape, [0], [0], [rank - 3]))
        parts.append(g.constant([heads]))
        parts.append(h.slice_static(g, shape, [0], [rank - 2], [rank]))
        target = g.op("Concat", *parts, axis=0)
    out = g.op("Reshape", expanded, target)
    if out.shape is None and x.shape is not None:  # later symbolics read the rank
        dims = list(x.shape)
        dims[-3] = heads
        out.shape = ir.Shape(dims)
    out.dtype = x.dtype
    return out


def _masked_softmax_last(g: GraphContext, scores: Value, mask: Value | None, rank: int) -> Value:
    """Softmax over the last dim where ``mask`` (bool, true = drop) removes entries.

    A row with every entry masked is NaN, as torch's CPU _masked_softmax gives (Softmax
    over all -inf is 0/0).
    """
    if mask is not None:
        scores = g.op("Where", mask, h.scalar_like(g, float("-inf"), scores), scores)
    return h.softmax(g, scores, rank - 1, rank=rank)


def _fast_path_mask(g: GraphContext, mask: Value | None, mask_type: int | None) -> Value | None:
    """The fused kernels' mask as a bool that broadcasts against [B, H, L, S] scores.

    mask_type 0 is an [L, S] attention mask, 1 a [B, S] key padding mask, 2 (or None) a
    mask that already broadcasts to the scores. Float masks are turned into bool by the
    kernels (any nonzero entry masks), unlike F.multi_head_attention_forward's additive floats.
    """
    if mask is None:
        return None
    mask = h.cast(g, mask, ir.DataType.BOOL)
    if mask_type == 1:
        mask = h.unsqueeze(g, mask, [1, 2])
    return mask


def _multi_head_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    embed_dim: int,
    num_head: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    mask: Value | None,
    need_weights: bool,
    average_attn_weights: bool,
    mask_type: int | None,
) -> tuple[Value, Value | None]:
    """The math of aten::_native_multi_head_attention on batch-first [B, T, E] inputs."""
    head_dim = embed_dim // num_head
    if query is key and key is value:
        packed = aten_linear(g, query, qkv_weight, qkv_bias)
        q, k, v = _split_equal(g, packed, embed_dim, 2)
    else:
        weights = _split_equal(g, qkv_weight, embed_dim, 0)
        biases = _split_equal(g, qkv_bias, embed_dim, 0)
        q, k, v = (
            g.op("Add", g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0])), b)
            for x, w, b in zip((query, key, value), weights, biases)
        )
    q = _split_heads(g, q, num_head, head_dim)
    k = _split_heads(g, k, num_head, head_dim)
    v = _split_heads(g, v, num_head, head_dim)
    q = g.op("Mul", q, h.scalar_like(g, 1.0 / math.sqrt(head_dim), query))
    scores = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2]))
    weights = _masked_softmax_last(g, scores, _fast_path_mask(g, mask, mask_type), 4)
    context = _merge_heads(g, g.op("MatMul", weights, v), embed_dim)
    out = aten_linear(g, context, proj_weight, proj_bias)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = h.reduce(g, "ReduceMean", weights, [1], False)
    return out, weights


def _randint(
    g: GraphContext,
    low: int | Value,
    high: int | Value,
    target: ir.DataType,
    *,
    shape: Sequence[int] | Value | None = None,
    like: Value | None = None,
) -> Value:
    """Integers uniform in [low, high): floor(low + U * (high - low)) with U in [0, 1) drawn
    in double (fine-grained enough for any int32 range), clamped below high against rounding."""
    u = _random(g, "Uniform", ir.DataType.DOUBLE, shape=shape, like=like, low=0.0, high=1.0)

    def as_double(x: int | Value) -> Value:
        if isinstance(x, Value):
            return h.cast(g, x, ir.DataType.DOUBLE)
        return g.constant(float(x), ir.DataType.DOUBLE)

    low_d, high_d = as_double(low), as_double(high)
    span = g.op("Sub", high_d, low_d)
    drawn = g.op("Floor", g.op("Add", g.op("Mul", u, span), low_d))
    drawn = g.op("Min", drawn, g.op("Sub", high_d, g.constant(1.0, ir.DataType.DOUBLE)))
    return h.cast(g, drawn, target)


# Exclusive upper bound of Tensor.random_() without bounds: every integer the dtype holds
# exactly (floats: up to 2**mantissa digits, inclusive).
_RANDOM_DEFAULT_END = {
    ir.DataType.FLOAT: 2**24 + 1,
    ir.DataType.DOUBLE: 2**53 + 1,
    ir.DataType.FLOAT16: 2**11 + 1,
    ir.DataType.BFLOAT16: 2**8 + 1,
    ir.DataType.BOOL: 2,
    ir.DataType.UINT8: 2**8,
    ir.DataType.INT8: 2**7,
    ir.DataType.INT16: 2**15,
    ir.DataType.INT32: 2**31,
    ir.DataType.INT64: 2**63,
}


# Integers come from a double RandomUniform whose resolution runtimes do not promise (the
# ONNX spec says nothing of it); ranges wider than this are refused rather than risk values
# that can never be drawn.
_RANDOM_MAX_SPAN = 2**32


def _bernoulli_by_uniform(g: GraphContext, self: Value, prob: Value | float) -> Value:
    """1 with probability ``prob``: U < p for U uniform in [0, 1) (U < 0 never, U < 1 always)."""
    u = _uniform_like(g, self)
    p = h.cast(g, prob, u.dtype) if isinstance(prob, Value) else g.constant(prob, u.dtype)
    return h.cast(g, g.op("Less", u, p), self.dtype)


def _normal(
    g: GraphContext, mean: float | Value, std: float | Value, like: Value, target: ir.DataType
) -> Value:
    """N(mean, std^2) noise shaped like ``like``, drawn in float/double and cast to ``target``."""
    noise = _random(g, "Normal", _generation_dtype(target), like=like, mean=0.0, scale=1.0)
    return h.cast(g, _affine_attention_random(g, noise, std, mean), target)


# Marsaglia-Tsang proposals drawn per element. Each is accepted with probability above 0.95
# (for shape >= 1, which boosting guarantees), so all 8 are rejected with probability below
# 0.05**8 ~ 4e-11; that element then takes the mode d, a negligible bias.
_GAMMA_PROPOSALS = 8


def _standard_gamma_draw(g: GraphContext, alpha: Value) -> Value:
    """Gamma(alpha, 1) samples of alpha's shape and dtype, by Marsaglia-Tsang rejection
    unrolled over a fixed number of proposals (ONNX has no loop-free rejection sampler)."""
    shape = h.static_shape(alpha)
    rank = h.rank_of(alpha)
    if rank is None:
        raise ValueError("_standard_gamma needs the rank of its input")
    work = _generation_dtype(alpha.dtype)
    a = h.cast(g, alpha, work)
    one = g.constant(1.0, work)
    small = g.op("Less", a, one)
    # shape < 1: draw Gamma(shape + 1) and scale by U^(1/shape) (Marsaglia-Tsang's boost)
    boosted = g.op("Where", small, g.op("Add", a, one), a)
    d = g.op("Sub", boosted, g.constant(1.0 / 3.0, work))
    c = g.op("Reciprocal", g.op("Sqrt", g.op("Mul", d, g.constant(9.0, work))))
    if shape is not None:
        draws: dict[str, object] = {"shape": [_GAMMA_PROPOSALS] + shape}
    else:
        ones = g.constant([1] * rank)
        reps = g.op("Concat", g.constant([_GAMMA_PROPOSALS]), ones, axis=0)
        draws = {"like": g.op("Expand", h.unsqueeze(g, a, [0]), reps)}
    normals = _random(g, "Normal", work, mean=0.0, scale=1.0, **draws)  # type: ignore[arg-type]
    uniforms = _random(g, "Uniform", work, low=0.0, high=1.0, **draws)  # type: ignore[arg-type]
    zero = g.constant(0.0, work)
    half = g.constant(0.5, work)
    out = d
    for k in reversed(range(_GAMMA_PROPOSALS)):
        index = g.constant(k)
        x = g.op("Gather", normals, index, axis=0)
        u = g.op("Gather", uniforms, index, axis=0)
        base = g.op("Add", one, g.op("Mul", c, x))
        v = g.op("Mul", g.op("Mul", base, base), base)
        positive = g.op("Greater", v, zero)
        safe_v = g.op("Where", positive, v, one)
        # accept when log u < x^2/2 + d - d v + d log v
        bound = g.op(
            "Add",
            g.op("Mul", half, g.op("Mul", x, x)),
            g.op("Mul", d, g.op("Add", g.op("Sub", one, safe_v), g.op("Log", safe_v))),
        )
        accepted = g.op("And", positive, g.op("Less", g.op("Log", u), bound))
        out = g.op("Where", accepted, g.op("Mul", d, safe_v), out)
    boost_u = _random(g, "Uniform", work, like=a, low=0.0, high=1.0)
    scale = g.op("Pow", boost_u, g.op("Reciprocal", a))
    out = g.op("Where", small, g.op("Mul", out, scale), out)
    # torch never returns exact zeros (it clamps to the smallest normal number)
    tiny = float(torch.finfo(tensors.to_torch_dtype(alpha.dtype)).tiny)
    out = g.op("Max", out, g.constant(tiny, work))
    return h.cast(g, out, alpha.dtype)


def _stft(
    g: GraphContext,
    self: Value,
    n_fft: int,
    hop_length: int | None,
    win_length: int | None,
    window: Value | None,
    normalized: bool,
    onesided: bool | None,
    return_complex: bool | None,
) -> Value:
    if return_complex:
        raise ValueError(
            "stft with return_complex=True makes a complex tensor, which ONNX export does not support; "
            "use return_complex=False (real and imaginary parts in a last dim of 2)"
        )
    if self.dtype not in (ir.DataType.FLOAT, ir.DataType.DOUBLE):
        raise ValueError(f"stft of a {self.dtype} signal is not supported (float or double only)")
    rank = h.rank_of(self)
    if rank not in (1, 2):
        raise ValueError(f"stft takes a 1-D or batched 2-D signal, got rank {rank}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    torch_dtype = tensors.to_torch_dtype(self.dtype)
    left = (n_fft - win) // 2
    if window is None:
        ones = torch.ones(win, dtype=torch_dtype)
        full_window = g.constant(torch.nn.functional.pad(ones, (left, n_fft - win - left)))
    elif win == n_fft:
        full_window = h.cast(g, window, self.dtype)
    else:  # torch centres a shorter window in the frame with zeros
        full_window = g.op(
            "Pad", h.cast(g, window, self.dtype), g.constant([left, n_fft - win - left])
        )
    signal = h.unsqueeze(g, self, [0, 2] if rank == 1 else [2])
    if onesided is None:
        onesided = True
    out = g.op("STFT", signal, g.constant(hop), full_window, g.constant(n_fft), onesided=int(onesided))
    if normalized:
        out = g.op("Mul", out, h.scalar_like(g, 1.0 / math.sqrt(n_fft), self))
    out = g.op("Transpose", out, perm=[0, 2, 1, 3])  # [batch, frames, bins, 2] -> [batch, bins, frames, 2]
    return h.squeeze(g, out, [0]) if rank == 1 else out


# ============================================================================================
# Fused transformer kernels
# ============================================================================================


@onnx_symbolic("aten::_native_multi_head_attention")
def aten__native_multi_head_attention(
    g: GraphContext,
    query: Value,
    key: Value,
    value: Value,
    embed_dim: int,
    num_head: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    mask: Value | None = None,
    need_weights: bool = True,
    average_attn_weights: bool = True,
    mask_type: int | None = None,
) -> tuple[Value, Value]:
    """_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)

    The nn.MultiheadAttention fast path, on batch-first inputs. It lowers to MatMul/Softmax
    so it works from opset 9. The kernel's masks are boolean: float masks are made bool (any
    nonzero entry masks, so a 0/-inf mask works and other additive values do not add), and
    a fully masked row is NaN as in torch. Without need_weights the second output is the
    empty tensor the kernel returns; with it, weights are averaged over heads unless
    average_attn_weights is false.
    """
    out, weights = _multi_head_attention(
        g, query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
        mask, need_weights, average_attn_weights, mask_type,
    )
    if weights is None:
        weights = g.constant(torch.zeros(0, dtype=tensors.to_torch_dtype(query.dtype)))
    return out, weights


@onnx_symbolic("aten::_transformer_encoder_layer_fwd")
def aten__transformer_encoder_layer_fwd(
    g: GraphContext,
    src: Value,
    embed_dim: int,
    num_heads: int,
    qkv_weight: Value,
    qkv_bias: Value,
    proj_weight: Value,
    proj_bias: Value,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    norm_weight_1: Value,
    norm_bias_1: Value,
    norm_weight_2: Value,
    norm_bias_2: Value,
    ffn_weight_1: Value,
    ffn_bias_1: Value,
    ffn_weight_2: Value,
    ffn_bias_2: Value,
    mask: Value | None = None,
    mask_type: int | None = None,
) -> Value:
    """_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor

    The nn.TransformerEncoderLayer fast path (scripted code calling the layer keeps it): self
    attention as in _native_multi_head_attention, residuals, LayerNorm before (norm_first)
    or after each block, and a relu or exact-gelu feed-forward. Dropout is absent: the
    kernel only runs in inference.
    """
    def norm(x: Value, weight: Value, bias: Value) -> Value:
        return layer_norm_decomposed(g, x, [-1], weight, bias, eps)

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    attended, _ = _multi_head_attention(
        g, x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
        mask, False, True, mask_type,
    )
    x = g.op("Add", attended, src)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    hidden = aten_linear(g, x, ffn_weight_1, ffn_bias_1)
    hidden = aten_gelu(g, hidden) if use_gelu else g.op("Relu", hidden)
    x = g.op("Add", aten_linear(g, hidden, ffn_weight_2, ffn_bias_2), residual)
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return x


# ============================================================================================
# Attention extras
# ============================================================================================


def aten_scaled_dot_product_attention_gqa(
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

    enable_gqa lets key/value carry fewer heads than query; torch
    repeats each key/value head heads_q/heads_kv times in a row (repeat_interleave on dim
    -3), here by Unsqueeze + Expand + Reshape, then attends as usual.
    """
    if enable_gqa:
        heads = h.dim_size(g, query, -3)
        if not isinstance(heads, int):
            raise ValueError("grouped-query attention needs the query head count at export time")
        key = _repeat_kv_heads(g, key, heads)
        value = _repeat_kv_heads(g, value, heads)
    return aten_scaled_dot_product_attention(
        g, query, key, value, attn_mask, dropout_p, is_causal, scale, False
    )


# ============================================================================================
# Random factories
# ============================================================================================


@onnx_symbolic("aten::rand")
def aten_rand(
    g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor (and .generator)

    RandomUniform when the size is static, else RandomUniformLike on ConstantOfShape(size).
    """
    _check_no_generator(generator)
    return _random(g, "Uniform", _target_dtype(dtype), shape=_size_arg(size), low=0.0, high=1.0)


@onnx_symbolic("aten::randn")
def aten_randn(
    g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor (and .generator)"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype), shape=_size_arg(size), mean=0.0, scale=1.0)


@onnx_symbolic("aten::rand_like")
def aten_rand_like(
    g: GraphContext, self: Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor (and .generator)

    The result dtype is ``dtype`` or self's; RandomUniformLike's own dtype attribute only
    takes float types, so the noise is drawn in float/double and cast.
    """
    _check_no_generator(generator)
    return _random(g, "Uniform", _target_dtype(dtype, self.dtype), like=self, low=0.0, high=1.0)


@onnx_symbolic("aten::randn_like")
def aten_randn_like(
    g: GraphContext, self: Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor (and .generator)"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype, self.dtype), like=self, mean=0.0, scale=1.0)


@onnx_symbolic("aten::randint")
def aten_randint(
    g: GraphContext,
    high: int | Value,
    size: Sequence[int] | Value,
    low: int | Value = 0,
    dtype: torch.dtype | None = torch.int64,
    generator: object = None,
) -> Value:
    """randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, ...) -> Tensor (and .low, .generator, .low_generator)

    ONNX has no integer sampler: uniform noise in double, scaled, floored and cast.
    """
    _check_no_generator(generator)
    return _randint(g, low, high, _target_dtype(dtype, ir.DataType.INT64), shape=_size_arg(size))


@onnx_symbolic("aten::randint_like")
def aten_randint_like(
    g: GraphContext,
    self: Value,
    high: int | Value,
    low: int | Value = 0,
    dtype: torch.dtype | None = None,
    generator: object = None,
) -> Value:
    """randint_like(Tensor self, SymInt high, *, ScalarType? dtype=None, ...) -> Tensor (and .Tensor, .low_dtype and their generator forms)"""
    _check_no_generator(generator)
    if isinstance(high, Value) and h.rank_of(high) not in (None, 0) and high.shape is not None and any(
        d != 1 for d in high.shape
    ):
        raise ValueError("randint_like with a non-scalar high tensor is not supported")
    if isinstance(high, Value) and h.rank_of(high):
        high = g.op("Reshape", high, g.constant([], ir.DataType.INT64))
    return _randint(g, low, high, _target_dtype(dtype, self.dtype), like=self)


# ============================================================================================
# Random draws shaped like a tensor
# ============================================================================================


@onnx_symbolic("aten::random")
def aten_random(g: GraphContext, *inputs: object) -> Value:
    """random(Tensor self, *, Generator? generator=None) -> Tensor (and .to(self, int to), .from(self, int from, int? to))

    Integers uniform in [from, to) in self's dtype, from uniform noise like randint. Takes
    its inputs positionally: ``from`` is a Python keyword. Ranges over 2**32 values (the
    unbounded form on int32/int64/double) are refused: the noise cannot reach every value.
    """
    self_obj, *bounds, generator = inputs
    _check_no_generator(generator)
    self = _raw_tensor(g, self_obj, "self")
    default_end = _RANDOM_DEFAULT_END.get(self.dtype) if self.dtype is not None else None
    if len(bounds) == 2:
        low, high = int(_raw_float(bounds[0], "from")), bounds[1]
        high = default_end if high is None else int(_raw_float(high, "to"))
    else:
        low, high = 0, (int(_raw_float(bounds[0], "to")) if bounds else default_end)
    if high is None:
        raise ValueError(f"random_ on {self.dtype} needs explicit bounds")
    if high - low > _RANDOM_MAX_SPAN:
        raise ValueError(
            f"random_ over {high - low} values cannot be drawn exactly; give from/to spanning at most 2**32"
        )
    return _randint(g, low, high, self.dtype, like=self)


@onnx_symbolic("aten::uniform")
def aten_uniform(g: GraphContext, *inputs: object) -> Value:
    """uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) -> Tensor

    Takes its inputs positionally: the schema's ``from`` is a Python keyword, so it cannot
    be a parameter name.
    """
    self_obj, low, high, *rest = list(inputs) + [None] * (4 - len(inputs))
    _check_no_generator(rest[0] if rest else None)
    self = _raw_tensor(g, self_obj, "self")
    return _random(
        g, "Uniform", self.dtype, like=self, low=_raw_float(low, "from"), high=_raw_float(high, "to")
    )


@onnx_symbolic("aten::exponential")
def aten_exponential(g: GraphContext, self: Value, lambd: float = 1.0, generator: object = None) -> Value:
    """exponential(Tensor self, float lambd=1., *, Generator? generator=None) -> Tensor

    Inverse CDF: -log(1 - U) / lambd; 1 - U lies in (0, 1], so the log is finite.
    """
    _check_no_generator(generator)
    u = _uniform_like(g, self)
    one = h.scalar_like(g, 1.0, u)
    drawn = g.op("Neg", g.op("Log", g.op("Sub", one, u)))
    return h.cast(g, _affine_attention_random(g, drawn, 1.0 / lambd, 0.0), self.dtype)


@onnx_symbolic("aten::bernoulli")
def aten_bernoulli(
    g: GraphContext, self: Value, p: float | Value | None = None, generator: object = None
) -> Value:
    """bernoulli(Tensor self, *, Generator? generator=None) -> Tensor (and .p with a float p, .Tensor with a tensor p)

    A uniform draw compared with the probability, at every opset. ONNX Bernoulli (opset 15)
    is not used: onnxruntime's CPU kernel (1.31) returns 1 with probability 1 - p, and it
    only takes a probability tensor of the output's shape anyway. The result keeps self's
    dtype (torch fills self's shape and dtype with 0/1).
    """
    _check_no_generator(generator)
    return _bernoulli_by_uniform(g, self, self if p is None else p)


@onnx_symbolic("aten::multinomial")
def aten_multinomial(
    g: GraphContext, self: Value, num_samples: int, replacement: bool = False, generator: object = None
) -> Value:
    """multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor

    ONNX Multinomial draws with replacement from unnormalized log-probabilities, so it gets
    log(self). Without replacement (and more than one sample) it cannot be used: the
    Gumbel-top-k trick (top k of log p + Gumbel noise) draws k distinct categories with the
    same distribution, in the order sequential sampling would pick them.
    """
    _check_no_generator(generator)
    rank = h.rank_of(self)
    if rank not in (1, 2):
        raise ValueError(f"multinomial takes a 1-D or 2-D input, got rank {rank}")
    floating = self.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE)
    probs = self if floating else h.cast(g, self, ir.DataType.FLOAT)
    logits = g.op("Log", probs)
    if rank == 1:
        logits = h.unsqueeze(g, logits, [0])
    if replacement or num_samples == 1:
        # onnxruntime's Multinomial takes float only
        logits = h.cast(g, logits, ir.DataType.FLOAT)
        out = g.op("Multinomial", logits, sample_size=num_samples, dtype=ir.DataType.INT64)
    else:
        u = _uniform_like(g, logits)
        gumbel = g.op("Neg", g.op("Log", g.op("Neg", g.op("Log", u))))
        keys = g.op("Add", logits, gumbel)
        if g.opset >= 10:
            _, out = g.op("TopK", keys, g.constant([num_samples]), axis=-1, num_outputs=2)
        else:
            _, out = g.op("TopK", keys, k=num_samples, axis=-1, num_outputs=2)
    return h.squeeze(g, out, [0]) if rank == 1 else out


@onnx_symbolic("aten::normal.Tensor_float")
def aten_normal_tensor_float(
    g: GraphContext, mean: Value, std: float = 1.0, generator: object = None
) -> Value:
    """normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor"""
    _check_no_generator(generator)
    return _normal(g, mean, std, mean, mean.dtype)


@onnx_symbolic("aten::normal.float_Tensor")
def aten_normal_float_tensor(g: GraphContext, mean: float, std: Value, generator: object = None) -> Value:
    """normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _check_no_generator(generator)
    return _normal(g, mean, std, std, std.dtype)


@onnx_symbolic("aten::normal.Tensor_Tensor")
def aten_normal_tensor_tensor(g: GraphContext, mean: Value, std: Value, generator: object = None) -> Value:
    """normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor

    The noise takes the broadcast shape of mean and std; mean + std serves as the shape
    template (RandomNormalLike reads only its shape, so its values never matter).
    """
    _check_no_generator(generator)
    template = g.op("Add", mean, h.cast(g, std, mean.dtype))
    return _normal(g, mean, std, template, mean.dtype)


@onnx_symbolic("aten::normal.float_float")
def aten_normal_float_float(
    g: GraphContext,
    mean: float,
    std: float,
    size: Sequence[int] | Value,
    dtype: torch.dtype | None = None,
    generator: object = None,
) -> Value:
    """normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, ...) -> Tensor"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype), shape=_size_arg(size), mean=mean, scale=std)


@onnx_symbolic("aten::normal_functional")
def aten_normal_functional(
    g: GraphContext, self: Value, mean: float = 0.0, std: float = 1.0, generator: object = None
) -> Value:
    """normal_functional(Tensor self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor

    The functional form of Tensor.normal_: noise of self's shape and dtype. (The in-place
    pass must map aten::normal_ here: aten::normal has no (self, mean, std) overload.)
    """
    _check_no_generator(generator)
    return _normal(g, mean, std, self, self.dtype)


# ============================================================================================
# Gamma and Dirichlet
# ============================================================================================


@onnx_symbolic("aten::_standard_gamma")
def aten__standard_gamma(g: GraphContext, self: Value, generator: object = None) -> Value:
    """_standard_gamma(Tensor self, Generator? generator=None) -> Tensor

    ONNX has no gamma sampler and no cheap loop: Marsaglia-Tsang rejection sampling is
    unrolled over 8 proposals per element drawn from RandomNormal/RandomUniform, the first
    accepted one kept (see _GAMMA_PROPOSALS for the failure odds).
    """
    _check_no_generator(generator)
    return _standard_gamma_draw(g, self)


@onnx_symbolic("aten::_sample_dirichlet")
def aten__sample_dirichlet(g: GraphContext, self: Value, generator: object = None) -> Value:
    """_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor

    Gamma(alpha_i) samples normalized over the last dim.
    """
    _check_no_generator(generator)
    rank = h.rank_of(self)
    if rank is None:
        raise ValueError("_sample_dirichlet needs the rank of its input")
    gamma = h.cast(g, _standard_gamma_draw(g, self), _generation_dtype(self.dtype))
    total = h.reduce(g, "ReduceSum", gamma, [rank - 1], True)
    return h.cast(g, g.op("Div", gamma, total), self.dtype)


# ============================================================================================
# Shape manipulation, padding and creation
# ============================================================================================
# Splitting, reordering, repeating, padding and creating tensors. Most lowerings use the sizes
# known at export time (TorchScript carries them for traced graphs): they turn into constant
# Split sizes, Gather indices or Reshape targets that every opset and every onnxruntime
# kernel accepts, whatever the dtype. Where a size is only known at run time, the symbolic
# uses Shape arithmetic or says which opset it needs.


# ============================================================================================
# Helpers
# ============================================================================================


def _static_dim(x: Value, dim: int, what: str) -> int:
    """The export-time size of ``dim`` or a clear error naming the op."""
    rank = h.rank_of(x)
    dim = h.normalize_dim(dim, rank)
    if x.shape is None or not isinstance(x.shape[dim], int):
        raise ValueError(f"{what} needs the size of dim {dim} at export time")
    return int(x.shape[dim])


def _need_rank(x: Value, what: str) -> int:
    rank = h.rank_of(x)
    if rank is None:
        raise ValueError(f"{what} needs the input rank")
    return rank


def _split_static(g: GraphContext, x: Value, sizes: Sequence[int], dim: int) -> list[Value]:
    """Split ``x`` along ``dim`` into pieces of the given export-time sizes.

    Split takes the sizes as an attribute before opset 13 and as an input from 13 (at 18
    the num_outputs attribute is the alternative to sizes, not needed with them).
    """
    sizes = [int(s) for s in sizes]
    if len(sizes) == 1:
        return [x]
    if g.opset >= 13:
        out = g.op("Split", x, g.constant(sizes), axis=dim, num_outputs=len(sizes))
    else:
        out = g.op("Split", x, axis=dim, split=sizes, num_outputs=len(sizes))
    return list(out)


def _split_sizes(total: int, split_size: int) -> list[int]:
    """torch.split by a size: full pieces and a shorter last one (one empty piece for 0)."""
    if split_size <= 0:
        raise ValueError(f"split_size must be positive, got {split_size}")
    if total == 0:
        return [0]
    sizes = [split_size] * (total // split_size)
    if total % split_size:
        sizes.append(total % split_size)
    return sizes


def _chunk_sizes(total: int, chunks: int) -> list[int]:
    """torch.chunk: pieces of ceil(total/chunks), so fewer than ``chunks`` may come out."""
    if chunks <= 0:
        raise ValueError(f"chunks must be positive, got {chunks}")
    return _split_sizes(total, max(1, math.ceil(total / chunks)))


def _pad_lists(pad: Sequence[int], rank: int) -> tuple[list[int], list[int]]:
    """torch pads (last dim first, begin/end pairs) as full-rank begin and end lists."""
    if len(pad) % 2:
        raise ValueError(f"pad needs begin/end pairs, got {list(pad)}")
    if len(pad) // 2 > rank:
        raise ValueError(f"pad {list(pad)} has more dims than the input rank {rank}")
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = int(pad[2 * i])
        ends[rank - 1 - i] = int(pad[2 * i + 1])
    return begins, ends


def _onnx_pad(
    g: GraphContext,
    x: Value,
    begins: Sequence[int],
    ends: Sequence[int],
    mode: str,
    value: float | int | bool = 0,
) -> Value:
    """ONNX Pad from full-rank begin/end lists (negative entries crop, as in torch).

    Pad-2 (opsets 9-10) takes pads and value as attributes and has float kernels only, Pad-11
    takes them as inputs and adds integers, Pad-13 adds bool. Other dtypes pass through a
    wider type and back: integers through double (exact below 2**53), bool through int32.
    """
    if not any(begins) and not any(ends):
        return x
    dtype = x.dtype
    work = x
    if g.opset < 11 and not h.is_floating(x):
        work = h.cast(g, x, ir.DataType.DOUBLE)
    elif g.opset < 13 and dtype == ir.DataType.BOOL:
        work = h.cast(g, x, ir.DataType.INT32)
    if g.opset < 11:
        attrs: dict[str, object] = {"pads": list(begins) + list(ends), "mode": mode}
        if mode == "constant":
            attrs["value"] = float(value)
        out = g.op("Pad", work, **attrs)
    else:
        fill = h.scalar_like(g, value, work) if mode == "constant" else None
        out = g.op("Pad", work, g.constant(list(begins) + list(ends)), fill, mode=mode)
    return h.cast(g, out, dtype) if work is not x else out


def _circular_pad(g: GraphContext, x: Value, begins: Sequence[int], ends: Sequence[int]) -> Value:
    """Circular padding: each dim gets its own tail in front and its head behind (Slice with
    negative starts needs no sizes). torch crops first for negative pads; so does this."""
    out = x
    for dim, (b, e) in enumerate(zip(begins, ends)):
        if b < 0 or e < 0:
            out = h.slice_static(g, out, [dim], [max(-b, 0)], [e if e < 0 else _INT64_MAX])
        parts = []
        if b > 0:
            parts.append(h.slice_static(g, out, [dim], [-b], [_INT64_MAX]))
        parts.append(out)
        if e > 0:
            parts.append(h.slice_static(g, out, [dim], [0], [e]))
        if len(parts) > 1:
            out = g.op("Concat", *parts, axis=dim)
    return out


def _torch_pad(
    g: GraphContext, x: Value, pad: Sequence[int], mode: str, value: float | int | bool = 0
) -> Value:
    rank = _need_rank(x, f"{mode} padding")
    begins, ends = _pad_lists(pad, rank)
    if mode == "circular":
        return _circular_pad(g, x, begins, ends)
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}.get(mode)
    if onnx_mode is None:
        raise ValueError(f"unknown padding mode {mode!r}")
    return _onnx_pad(g, x, begins, ends, onnx_mode, value)


def _reshape(g: GraphContext, x: Value, shape: Sequence[int]) -> Value:
    return g.op("Reshape", x, g.constant([int(s) for s in shape]))


def _gather_const(g: GraphContext, x: Value, indices: torch.Tensor, axis: int) -> Value:
    return g.op("Gather", x, g.constant(indices.to(torch.int64)), axis=axis)


def _flip_dim(g: GraphContext, x: Value, dim: int) -> Value:
    """Reverse one dim: Slice with step -1 from opset 10; Slice-1 has no steps, so opset 9
    gathers reversed indices (constant, or from the run-time size)."""
    if g.opset >= 10:
        return h.slice_static(g, x, [dim], [-1], [-_INT64_MAX], [-1])
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        return _gather_const(g, x, torch.arange(size - 1, -1, -1), dim)
    last = g.op("Sub", size, g.constant(1))
    return g.op("Gather", x, g.op("Sub", last, _arange(g, 0, size, 1, torch.int64)), axis=dim)


def _atleast(g: GraphContext, x: Value, ndim: int) -> Value:
    rank = _need_rank(x, f"atleast_{ndim}d")
    if rank >= ndim:
        return x
    if ndim == 3 and rank == 1:
        return h.unsqueeze(g, x, [0, 2])
    if ndim == 3 and rank == 2:
        return h.unsqueeze(g, x, [2])
    return h.unsqueeze(g, x, list(range(ndim - rank)))


def _const_ints(obj: object) -> list[int] | None:
    """A constant int list behind an argument (Python list, constant tensor or value)."""
    if isinstance(obj, Value):
        if obj.const_value is None:
            return None
        obj = torch.from_numpy(obj.const_value.numpy().copy())
    if isinstance(obj, torch.Tensor):
        return [int(v) for v in obj.reshape(-1).tolist()]
    if isinstance(obj, (list, tuple)) and all(isinstance(v, int) for v in obj):
        return [int(v) for v in obj]
    if isinstance(obj, int):
        return [obj]
    return None


def _output_count(g: GraphContext) -> int | None:
    """How many items a list-returning node yields, when a prim::ListUnpack consumes it."""
    if g.node is None or g.node.outputsSize() != 1:
        return None
    uses = g.node.output().uses()
    if len(uses) == 1 and uses[0].user.kind() == "prim::ListUnpack":
        return uses[0].user.outputsSize()
    return None


# ============================================================================================
# Splitting
# ============================================================================================


def _split_by(
    g: GraphContext, self: Value, split: int | Sequence[int], dim: int, count: int | None = None
) -> list[Value]:
    """split by a size or by sizes. By a size along a dim known only at run time, piece i is
    the constant slice [i*size, (i+1)*size) (Slice clamps the last one); how many pieces
    there are is read from the ListUnpack (or the node's outputs) since ONNX needs it fixed."""
    rank = _need_rank(self, "split")
    dim = h.normalize_dim(dim, rank)
    if not isinstance(split, int):
        return _split_static(g, self, split, dim)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return _split_static(g, self, _split_sizes(size, split), dim)
    count = _output_count(g) if count is None else count
    if count is None:
        raise ValueError("split of a dynamic dim needs its pieces unpacked (the count must be static)")
    # the last piece is open-ended: it takes whatever the run-time dim leaves
    ends = [(i + 1) * split for i in range(count - 1)] + [_INT64_MAX]
    return [h.slice_static(g, self, [dim], [i * split], [ends[i]]) for i in range(count)]


@onnx_symbolic("aten::split")
def aten_split(
    g: GraphContext,
    self: Value,
    split_size: int | Sequence[int] | None = None,
    split_sizes: Sequence[int] | None = None,
    dim: int = 0,
) -> list[Value]:
    """split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]; split.sizes; split(self, int[] split_sizes, dim)

    Sizes must be known at export time: the number of ONNX outputs is fixed in the graph.
    A split_size covering the whole dim yields the input itself.
    """
    split = split_size if split_size is not None else split_sizes
    if split is None:
        raise ValueError("split needs split_size or split_sizes")
    return _split_by(g, self, split, dim)


@onnx_symbolic("aten::split_with_sizes")
def aten_split_with_sizes(
    g: GraphContext, self: Value, split_sizes: Sequence[int], dim: int = 0
) -> list[Value]:
    """split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]"""
    return _split_by(g, self, list(split_sizes), dim)


@onnx_symbolic("aten::unsafe_split")
def aten_unsafe_split(g: GraphContext, self: Value, split_size: int, dim: int = 0) -> list[Value]:
    """unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[] (split
    without view tracking; the values are the same)"""
    return _split_by(g, self, split_size, dim)


@onnx_symbolic("aten::unsafe_split_with_sizes")
def aten_unsafe_split_with_sizes(
    g: GraphContext, self: Value, split_sizes: Sequence[int], dim: int = 0
) -> list[Value]:
    """unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"""
    return _split_by(g, self, list(split_sizes), dim)


def _chunk(g: GraphContext, self: Value, chunks: int, dim: int) -> list[Value]:
    rank = _need_rank(self, "chunk")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return _split_static(g, self, _chunk_sizes(size, chunks), dim)
    return _chunk_dynamic(g, self, chunks, dim, size, _output_count(g))


def _chunk_dynamic(
    g: GraphContext, x: Value, chunks: int, dim: int, size: Value, count: int | None
) -> list[Value]:
    """chunk of a dim known only at run time: the piece size ceil(size/chunks) is computed
    in the graph and each piece sliced (gathered at opset 9, whose Slice has no run-time
    bounds). How many pieces come out must still be fixed: it is read from the ListUnpack
    that consumes them."""
    if count is None:
        raise ValueError("chunk of a dynamic dim needs its pieces unpacked (the count must be static)")
    piece = g.op("Div", g.op("Add", size, g.constant(chunks - 1)), g.constant(chunks))

    def at_most_size(v: Value) -> Value:
        return g.op("Where", g.op("Less", v, size), v, size)

    pieces = []
    for i in range(count):
        start = g.op("Mul", piece, g.constant(i))
        end = g.op("Mul", piece, g.constant(i + 1))
        if g.opset >= 10:
            bounds = [h.unsqueeze(g, start, [0]), h.unsqueeze(g, end, [0]), g.constant([dim])]
            pieces.append(g.op("Slice", x, *bounds))
        else:  # Slice-1 takes constant bounds only: gather the clamped index range instead
            index = _arange(g, at_most_size(start), at_most_size(end), 1, torch.int64)
            pieces.append(g.op("Gather", x, index, axis=dim))
    return pieces


@onnx_symbolic("aten::chunk")
def aten_chunk(g: GraphContext, self: Value, chunks: int, dim: int = 0) -> list[Value]:
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]

    torch makes pieces of ceil(size/chunks), so fewer than ``chunks`` may come out (chunk(5)
    of 6 gives 3 pieces of 2). A dynamic dim is cut with bounds computed at run time.
    """
    return _chunk(g, self, chunks, dim)


@onnx_symbolic("aten::unsafe_chunk")
def aten_unsafe_chunk(g: GraphContext, self: Value, chunks: int, dim: int = 0) -> list[Value]:
    """unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]"""
    return _chunk(g, self, chunks, dim)


@onnx_symbolic("aten::tensor_split")
def aten_tensor_split(
    g: GraphContext,
    self: Value,
    sections: int | None = None,
    indices: Sequence[int] | None = None,
    tensor_indices_or_sections: object = None,
    dim: int = 0,
) -> list[Value]:
    """tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]; .indices; .tensor_indices_or_sections

    Unlike split, sections spread the remainder over the first pieces and may yield empty
    pieces; indices are clamped to the dim like Python slices. A tensor argument must be a
    constant (0-d: sections, 1-d: indices).
    """
    rank = _need_rank(self, "tensor_split")
    dim = h.normalize_dim(dim, rank)
    size = _static_dim(self, dim, "tensor_split")
    if tensor_indices_or_sections is not None:
        values = _const_ints(tensor_indices_or_sections)
        if values is None:
            raise ValueError("tensor_split with indices computed at run time is not supported")
        obj = tensor_indices_or_sections
        zero_d = isinstance(obj, (int, float)) or (isinstance(obj, torch.Tensor) and obj.dim() == 0) or (
            isinstance(obj, Value) and obj.shape is not None and len(obj.shape) == 0
        )
        if zero_d:
            sections = values[0]
        else:
            indices = values
    if sections is not None:
        base, extra = divmod(size, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        return _split_static(g, self, sizes, dim)
    if indices is None:
        raise ValueError("tensor_split needs sections or indices")
    bounds = [min(max(i + size if i < 0 else i, 0), size) for i in indices]
    starts, ends = [0] + bounds, bounds + [size]
    # each piece is self[start:end] like a Python slice: decreasing indices give empty ones
    return [h.slice_static(g, self, [dim], [a], [max(a, b)]) for a, b in zip(starts, ends)]


@onnx_symbolic("aten::unbind")
def aten_unbind(g: GraphContext, self: Value, dim: int = 0) -> list[Value]:
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]: one size-1 split per index,
    squeezed; along a run-time dim, one Gather per item the ListUnpack takes."""
    rank = _need_rank(self, "unbind")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, self, dim)
    if isinstance(size, int):
        return [h.squeeze(g, piece, [dim]) for piece in _split_static(g, self, [1] * size, dim)]
    count = _output_count(g)
    if count is None:
        raise ValueError("unbind of a dynamic dim needs its pieces unpacked (the count must be static)")
    return [g.op("Gather", self, g.constant(i), axis=dim) for i in range(count)]


@onnx_symbolic("prim::ConstantChunk")
def prim_constant_chunk(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantChunk[chunks, dim](Tensor self) -> (Tensor, ...): chunk with the count
    fixed as node attributes and one output per piece."""
    (x,) = inputs
    assert isinstance(x, Value)
    chunks, dim = g.node.i("chunks"), g.node.i("dim")
    rank = _need_rank(x, "prim::ConstantChunk")
    dim = h.normalize_dim(dim, rank)
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        pieces = _split_static(g, x, _chunk_sizes(size, chunks), dim)
    else:
        pieces = _chunk_dynamic(g, x, chunks, dim, size, g.node.outputsSize())
    return tuple(pieces) if len(pieces) > 1 else pieces[0]


@onnx_symbolic("prim::ConstantSplit")
def prim_constant_split(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantSplit[split_size, dim](Tensor self) -> (Tensor, ...)"""
    (x,) = inputs
    assert isinstance(x, Value)
    pieces = _split_by(g, x, g.node.i("split_size"), g.node.i("dim"), g.node.outputsSize())
    return tuple(pieces) if len(pieces) > 1 else pieces[0]


# ============================================================================================
# Reordering
# ============================================================================================


@onnx_symbolic("aten::movedim")
def aten_movedim(g: GraphContext, self: Value, source: Sequence[int], destination: Sequence[int]) -> Value:
    """movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a); movedim.int

    The remaining dims keep their order in the free slots.
    """
    rank = _need_rank(self, "movedim")
    src = [h.normalize_dim(d, rank) for d in source]
    dst = [h.normalize_dim(d, rank) for d in destination]
    perm = [-1] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(d for d in range(rank) if d not in src)
    perm = [p if p != -1 else next(rest) for p in perm]
    if perm == list(range(rank)):
        return self
    return g.op("Transpose", self, perm=perm)


@onnx_symbolic("aten::numpy_T")
def aten_numpy_t(g: GraphContext, self: Value) -> Value:
    """numpy_T(Tensor(a) self) -> Tensor(a): x.T reverses all dims."""
    rank = _need_rank(self, "numpy_T")
    if rank < 2:
        return self
    return g.op("Transpose", self, perm=list(range(rank))[::-1])


@onnx_symbolic("aten::flip")
def aten_flip(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """flip(Tensor self, int[] dims) -> Tensor

    Slice with step -1 from opset 10 (any size); at opset 9, which has no Slice steps, a
    Gather with reversed constant indices, so the flipped dims must have static sizes.
    """
    rank = _need_rank(self, "flip")
    if rank == 0:  # torch accepts dims [0] or [-1] on a 0-d tensor: nothing to reverse
        return self
    out = self
    for d in dict.fromkeys(h.normalize_dim(d, rank) for d in dims):
        out = _flip_dim(g, out, d)
    return out


def _roll_dim_gather(g: GraphContext, x: Value, shift: int, dim: int, size: Value) -> Value:
    """Opset 9 roll along a run-time dim (no Mod, no run-time Slice bounds): gather index
    (i - shift) mod size, the modulo made non-negative with Where (Div truncates)."""
    shift_v = g.constant(shift)
    remainder = g.op("Sub", shift_v, g.op("Mul", g.op("Div", shift_v, size), size))

    def wrap(v: Value) -> Value:
        return g.op("Where", g.op("Less", v, g.constant(0)), g.op("Add", v, size), v)

    index = wrap(g.op("Sub", _arange(g, 0, size, 1, torch.int64), wrap(remainder)))
    return g.op("Gather", x, index, axis=dim)


def _roll_dim(g: GraphContext, x: Value, shift: int, dim: int) -> Value:
    """One roll: the last ``shift`` items (mod size) move to the front. A static size is
    reduced at export time; a run-time one with Mod (opset 10, as are Slice's run-time
    bounds); Mod with fmod=0 takes the divisor's sign, so negative shifts come out right."""
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        s = shift % size if size else 0
        if s == 0:
            return x
        tail = h.slice_static(g, x, [dim], [size - s], [size])
        head = h.slice_static(g, x, [dim], [0], [size - s])
        return g.op("Concat", tail, head, axis=dim)
    if g.opset < 10:
        return _roll_dim_gather(g, x, shift, dim, size)
    size_1d = h.unsqueeze(g, size, [0])
    split = g.op("Sub", size_1d, g.op("Mod", g.constant([shift]), size_1d, fmod=0))
    axes = g.constant([dim])
    tail = g.op("Slice", x, split, g.constant([_INT64_MAX]), axes)
    head = g.op("Slice", x, g.constant([0]), split, axes)
    return g.op("Concat", tail, head, axis=dim)


@onnx_symbolic("aten::roll")
def aten_roll(g: GraphContext, self: Value, shifts: Sequence[int], dims: Sequence[int] = ()) -> Value:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor

    Each roll is two slices concatenated in swapped order, the shift taken modulo the dim
    size (shifts larger than the dim, and negative ones, are valid in torch). Without dims
    the flattened tensor rolls and is reshaped back.
    """
    if not dims:
        flat = _reshape(g, self, [-1])
        rolled = _roll_dim(g, flat, shifts[0], 0)
        return g.op("Reshape", rolled, h.shape_of(g, self))
    if len(shifts) != len(dims):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    rank = _need_rank(self, "roll")
    out = self
    for shift, dim in zip(shifts, dims):
        out = _roll_dim(g, out, shift, h.normalize_dim(dim, rank))
    return out


def _shape_parts(g: GraphContext, x: Value, rank: int) -> tuple[Value | None, Value, Value, Value]:
    """(leading dims, C, H, W) of a run-time shape as 1-D int64 values (Slice of Shape)."""
    full = g.op("Shape", x)

    def part(start: int, end: int) -> Value:
        return h.slice_static(g, full, [0], [start], [end])

    batch = part(0, rank - 3) if rank > 3 else None
    return batch, part(rank - 3, rank - 2), part(rank - 2, rank - 1), part(rank - 1, rank)


def _concat_shape(g: GraphContext, parts: Sequence[Value | int | None]) -> Value:
    values = [g.constant([p]) if isinstance(p, int) else p for p in parts if p is not None]
    return g.op("Concat", *values, axis=0)


@onnx_symbolic("aten::pixel_shuffle")
def aten_pixel_shuffle(g: GraphContext, self: Value, upscale_factor: int) -> Value:
    """pixel_shuffle(Tensor self, int upscale_factor) -> Tensor

    (*, C*r*r, H, W) -> (*, C, H*r, W*r) as reshape-transpose-reshape, which works for every
    dtype and opset (DepthToSpace's CRD mode, the torch order, needs opset 11). Run-time
    sizes build the Reshape targets from Shape.
    """
    r = upscale_factor
    shape = h.static_shape(self)
    if shape is not None:
        *batch, c, hh, ww = shape
        c_out = c // (r * r)
        split = _reshape(g, self, [-1, c_out, r, r, hh, ww])
        moved = g.op("Transpose", split, perm=[0, 1, 4, 2, 5, 3])
        return _reshape(g, moved, batch + [c_out, hh * r, ww * r])
    rank = _need_rank(self, "pixel_shuffle")
    batch_v, c_v, h_v, w_v = _shape_parts(g, self, rank)
    c_out = g.op("Div", c_v, g.constant([r * r]))
    split = g.op("Reshape", self, _concat_shape(g, [-1, c_out, r, r, h_v, w_v]))
    moved = g.op("Transpose", split, perm=[0, 1, 4, 2, 5, 3])
    scale = g.constant([r])
    target = _concat_shape(g, [batch_v, c_out, g.op("Mul", h_v, scale), g.op("Mul", w_v, scale)])
    return g.op("Reshape", moved, target)


@onnx_symbolic("aten::pixel_unshuffle")
def aten_pixel_unshuffle(g: GraphContext, self: Value, downscale_factor: int) -> Value:
    """pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor

    (*, C, H*r, W*r) -> (*, C*r*r, H, W). SpaceToDepth orders the channels block-first,
    torch channel-first, so this is always reshape-transpose-reshape.
    """
    r = downscale_factor
    shape = h.static_shape(self)
    if shape is not None:
        *batch, c, hh, ww = shape
        split = _reshape(g, self, [-1, c, hh // r, r, ww // r, r])
        moved = g.op("Transpose", split, perm=[0, 1, 3, 5, 2, 4])
        return _reshape(g, moved, batch + [c * r * r, hh // r, ww // r])
    rank = _need_rank(self, "pixel_unshuffle")
    batch_v, c_v, h_v, w_v = _shape_parts(g, self, rank)
    scale = g.constant([r])
    h_out, w_out = g.op("Div", h_v, scale), g.op("Div", w_v, scale)
    split = g.op("Reshape", self, _concat_shape(g, [-1, c_v, h_out, r, w_out, r]))
    moved = g.op("Transpose", split, perm=[0, 1, 3, 5, 2, 4])
    target = _concat_shape(g, [batch_v, g.op("Mul", c_v, g.constant([r * r])), h_out, w_out])
    return g.op("Reshape", moved, target)


# ============================================================================================
# Repeating and broadcasting
# ============================================================================================


def _tile(g: GraphContext, x: Value, repeats: Sequence[int] | Value) -> Value:
    """Tile after giving ``x`` as many dims as ``repeats`` (leading ones)."""
    rank = _need_rank(x, "repeat")
    if isinstance(repeats, Value):
        count = repeats.shape[0] if repeats.shape is not None and len(repeats.shape) == 1 else None
        if count != rank:
            raise ValueError("repeat with run-time repeats needs as many repeats as input dims")
        return g.op("Tile", x, h.cast(g, repeats, ir.DataType.INT64))
    repeats = [int(r) for r in repeats]
    if len(repeats) > rank:
        extra = len(repeats) - rank
        x = h.unsqueeze(g, x, list(range(extra))) if rank else _reshape(g, x, [1] * extra)
    if all(r == 1 for r in repeats) and len(repeats) == rank:
        return x
    return g.op("Tile", x, g.constant(repeats))


@onnx_symbolic("aten::repeat")
def aten_repeat(g: GraphContext, self: Value, repeats: Sequence[int] | Value) -> Value:
    """repeat(Tensor self, SymInt[] repeats) -> Tensor: Tile, with leading dims added when
    there are more repeats than dims (torch allows that, Tile does not)."""
    return _tile(g, self, repeats)


@onnx_symbolic("aten::tile")
def aten_tile(g: GraphContext, self: Value, dims: Sequence[int]) -> Value:
    """tile(Tensor self, SymInt[] dims) -> Tensor: like repeat, but fewer dims than the input
    rank repeat the trailing dims. Tile-6 (opset 9) already takes repeats as an input."""
    rank = _need_rank(self, "tile")
    dims = [1] * (rank - len(dims)) + list(dims)
    return _tile(g, self, dims)


def _interleave_indices(g: GraphContext, repeats: Value) -> Value:
    """repeat_interleave(repeats) for a 1-D count tensor known at run time: output position
    p takes index #{j : cumsum(repeats)[j] <= p}. Range and CumSum need opset 11."""
    if g.opset < 11:
        raise ValueError("repeat_interleave with repeats known only at run time needs opset 11")
    counts = h.cast(g, repeats, ir.DataType.INT64)
    ends = g.op("CumSum", counts, g.constant(0))
    total = h.reduce(g, "ReduceSum", counts, [0], False)
    positions = g.op("Range", g.constant(0), total, g.constant(1))
    row_ends, column = h.unsqueeze(g, ends, [0]), h.unsqueeze(g, positions, [1])
    if g.opset >= 12:
        passed = g.op("LessOrEqual", row_ends, column)
    else:
        passed = g.op("Not", g.op("Greater", row_ends, column))
    return h.reduce(g, "ReduceSum", h.cast(g, passed, ir.DataType.INT64), [1], False)


@onnx_symbolic("aten::repeat_interleave")
def aten_repeat_interleave(
    g: GraphContext,
    repeats: int | Value,
    self: Value | None = None,
    dim: int | None = None,
    output_size: int | None = None,
) -> Value:
    """repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor; .self_Tensor; .Tensor(Tensor repeats)

    An int (or constant) repeat count is Unsqueeze + Tile + Reshape; constant per-index
    counts become a constant Gather; counts known only at run time need opset 11. Without
    dim the input is flattened first, as in torch.
    """
    del output_size
    if self is None:  # repeat_interleave(repeats): indices 0..n-1 repeated
        assert isinstance(repeats, Value)
        counts = _const_ints(repeats)
        if counts is not None:
            return g.constant(torch.repeat_interleave(torch.tensor(counts, dtype=torch.int64)))
        return _interleave_indices(g, repeats)
    x = self
    if dim is None:
        x = _reshape(g, x, [-1])
        dim = 0
    rank = _need_rank(x, "repeat_interleave")
    dim = h.normalize_dim(dim, rank)
    counts = _const_ints(repeats) if isinstance(repeats, Value) else [repeats]
    if counts is not None and len(counts) == 1 and counts[0] == 0:
        return h.slice_static(g, x, [dim], [0], [0])  # a 0 in a Reshape target would copy the dim
    one_count = isinstance(repeats, Value) and repeats.shape is not None and math.prod(
        d if isinstance(d, int) else 2 for d in repeats.shape
    ) == 1
    if counts is not None and len(counts) == 1 or counts is None and one_count:
        # one count for every index (a run-time one too): Unsqueeze + Tile + Reshape
        if counts is not None:
            r_1d: Value = g.constant(counts)
        else:
            assert isinstance(repeats, Value)
            r_1d = _reshape(g, h.cast(g, repeats, ir.DataType.INT64), [1])
        ones_before = g.constant([1] * (dim + 1))
        ones_after = g.constant([1] * (rank - dim - 1)) if rank - dim - 1 else None
        expanded = h.unsqueeze(g, x, [dim + 1])
        if counts is not None:
            tiled = g.op("Tile", expanded, g.constant([1] * (dim + 1) + counts + [1] * (rank - dim - 1)))
        else:
            tiled = g.op("Tile", expanded, _concat_shape(g, [ones_before, r_1d, ones_after]))
        shape = h.static_shape(x)
        if shape is not None and counts is not None:
            shape[dim] *= counts[0]
            return _reshape(g, tiled, shape)
        scale = _concat_shape(g, [g.constant([1] * dim) if dim else None, r_1d, ones_after])
        return g.op("Reshape", tiled, g.op("Mul", h.shape_of(g, x), scale))
    if counts is not None:
        index = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
        return _gather_const(g, x, index, dim)
    assert isinstance(repeats, Value)
    return g.op("Gather", x, _interleave_indices(g, repeats), axis=dim)


@onnx_symbolic("aten::broadcast_to")
def aten_broadcast_to(g: GraphContext, self: Value, size: Sequence[int] | Value) -> Value:
    """broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a): expand (-1 keeps a dim)."""
    return aten_expand(g, self, size)


@onnx_symbolic("aten::broadcast_tensors")
def aten_broadcast_tensors(g: GraphContext, tensors: Sequence[Value]) -> list[Value]:  # noqa: F811
    """broadcast_tensors(Tensor[] tensors) -> Tensor[]

    Expand broadcasts both ways, so expanding a tensor by every other tensor's shape in turn
    gives the common shape even when it is only known at run time.
    """
    shapes = [h.static_shape(t) for t in tensors]
    if all(s is not None for s in shapes):
        target = list(torch.broadcast_shapes(*[tuple(s) for s in shapes]))
        return [t if s == target else g.op("Expand", t, g.constant(target)) for t, s in zip(tensors, shapes)]
    out = []
    for i, t in enumerate(tensors):
        y = t
        for j, other in enumerate(tensors):
            if j != i:
                y = g.op("Expand", y, h.shape_of(g, other))
        out.append(y)
    return out


@onnx_symbolic("aten::meshgrid")
def aten_meshgrid(
    g: GraphContext, tensors: Sequence[Value], indexing: str = "ij"  # noqa: F811
) -> list[Value]:
    """meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]; meshgrid(Tensor[] tensors)

    Each 0-d/1-d input is reshaped to lie along its own axis and expanded to the grid shape;
    'xy' swaps the roles of the first two axes (torch's default without indexing is 'ij').
    """
    if indexing not in ("ij", "xy"):
        raise ValueError(f"unknown meshgrid indexing {indexing!r}")
    n = len(tensors)
    flat = [_reshape(g, t, [-1]) if h.rank_of(t) != 1 else t for t in tensors]
    axes = list(range(n))
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    sizes: list[int | Value] = []
    for t in tensors:
        shape = h.static_shape(t)
        sizes.append(math.prod(shape) if shape is not None else g.op("Shape", _reshape(g, t, [-1])))
    grid_sizes = [sizes[axes.index(a)] for a in range(n)]
    if all(isinstance(s, int) for s in grid_sizes):
        grid = g.constant(grid_sizes)
    else:
        grid = g.op("Concat", *[g.constant([s]) if isinstance(s, int) else s for s in grid_sizes], axis=0)
    out = []
    for t, axis in zip(flat, axes):
        shape = [1] * n
        shape[axis] = -1
        out.append(g.op("Expand", _reshape(g, t, shape), grid))
    return out


def _input_strides(g: GraphContext, index: int) -> list[int] | None:
    """The strides TorchScript recorded for a node input (traced graphs carry them)."""
    if g.node is None:
        return None
    ts_type = g.node.inputsAt(index).type()
    if not isinstance(ts_type, torch._C.TensorType):
        return None
    strides = ts_type.strides()
    return list(strides) if strides is not None and all(s is not None for s in strides) else None


@onnx_symbolic("aten::as_strided")
def aten_as_strided(
    g: GraphContext,
    self: Value,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Value:
    """as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)

    A Gather from the flattened input with the strided offsets computed at export time. ONNX
    has no storage: the offsets address ``self``'s elements by where they sit in memory,
    using the strides the trace recorded (so x.t().as_strided reads x's layout, as in
    torch); without recorded strides the input is taken as contiguous. An explicit
    storage_offset counts from the input's first element.
    """
    offset = storage_offset or 0
    index = torch.full(tuple(size), offset, dtype=torch.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        index = index + (torch.arange(n, dtype=torch.int64) * s).reshape(shape)
    in_shape = h.static_shape(self)
    in_strides = _input_strides(g, 0)
    if in_shape is not None and in_strides is not None and len(in_strides) == len(in_shape):
        contiguous = [math.prod(in_shape[d + 1 :]) for d in range(len(in_shape))]
        def significant(strides: list[int]) -> list[int]:  # size-1 dims have any stride
            return [s for n, s in zip(in_shape, strides) if n > 1]

        if significant(in_strides) != significant(contiguous):
            positions = torch.zeros(in_shape, dtype=torch.int64)
            for d, (n, s) in enumerate(zip(in_shape, in_strides)):
                positions = positions + (torch.arange(n, dtype=torch.int64) * s).reshape(
                    [n if i == d else 1 for i in range(len(in_shape))]
                )
            flat_positions = positions.reshape(-1)
            extent = int(flat_positions.max()) + 1 if flat_positions.numel() else 1
            lookup = torch.full((extent,), -1, dtype=torch.int64)
            lookup[flat_positions] = torch.arange(flat_positions.numel(), dtype=torch.int64)
            if index.numel() and (int(index.max()) >= lookup.numel() or bool((lookup[index] < 0).any())):
                raise ValueError("as_strided reads memory outside the input's elements")
            index = lookup[index]
    return _gather_const(g, _reshape(g, self, [-1]), index, 0)


@onnx_symbolic("aten::unfold")
def aten_unfold(g: GraphContext, self: Value, dimension: int, size: int, step: int) -> Value:
    """unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)

    Sliding windows as one Gather with an [n, size] index along the dim (a constant when the
    dim is static, computed from its run-time size otherwise), then the window axis moved
    last.
    """
    rank = _need_rank(self, "unfold")
    if rank == 0:
        return _reshape(g, self, [1])
    dim = h.normalize_dim(dimension, rank)
    length = h.dim_size(g, self, dim)
    if isinstance(length, int):
        count = (length - size) // step + 1
        index = torch.arange(count).unsqueeze(1) * step + torch.arange(size).unsqueeze(0)
        windows = _gather_const(g, self, index, dim)
    else:  # window starts computed at run time (the base arange works at every opset)
        count_v = g.op("Add", g.op("Div", g.op("Sub", length, g.constant(size)), g.constant(step)), g.constant(1))
        starts = g.op("Mul", _arange(g, 0, count_v, 1, torch.int64), g.constant(step))
        index = g.op("Add", h.unsqueeze(g, starts, [1]), g.constant(torch.arange(size).unsqueeze(0)))
        windows = g.op("Gather", self, index, axis=dim)
    if dim == rank - 1:
        return windows
    perm = [d for d in range(rank + 1) if d != dim + 1] + [dim + 1]
    return g.op("Transpose", windows, perm=perm)


# ============================================================================================
# Stacking and promotion of rank
# ============================================================================================


@onnx_symbolic("aten::atleast_1d")
def aten_atleast_1d(
    g: GraphContext, self: Value | None = None, tensors: Sequence[Value] | None = None  # noqa: F811
) -> Value | list[Value]:
    """atleast_1d(Tensor self) -> Tensor; atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]"""
    if tensors is not None:
        return [_atleast(g, t, 1) for t in tensors]
    assert self is not None
    return _atleast(g, self, 1)


@onnx_symbolic("aten::atleast_2d")
def aten_atleast_2d(
    g: GraphContext, self: Value | None = None, tensors: Sequence[Value] | None = None  # noqa: F811
) -> Value | list[Value]:
    """atleast_2d(Tensor self) -> Tensor; atleast_2d.Sequence: a 1-D [n] becomes [1, n]."""
    if tensors is not None:
        return [_atleast(g, t, 2) for t in tensors]
    assert self is not None
    return _atleast(g, self, 2)


@onnx_symbolic("aten::atleast_3d")
def aten_atleast_3d(
    g: GraphContext, self: Value | None = None, tensors: Sequence[Value] | None = None  # noqa: F811
) -> Value | list[Value]:
    """atleast_3d(Tensor self) -> Tensor; atleast_3d.Sequence

    Not leading ones like the others: [n] becomes [1, n, 1] and [m, n] becomes [m, n, 1].
    """
    if tensors is not None:
        return [_atleast(g, t, 3) for t in tensors]
    assert self is not None
    return _atleast(g, self, 3)


@onnx_symbolic("aten::hstack")
def aten_hstack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """hstack(Tensor[] tensors) -> Tensor: concatenates 1-D inputs on dim 0, others on dim 1."""
    parts = [_atleast(g, t, 1) for t in tensors]
    axis = 0 if h.rank_of(parts[0]) == 1 else 1
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)


@onnx_symbolic("aten::vstack")
def aten_vstack(g: GraphContext, tensors: Sequence[Value]) -> Value:  # noqa: F811
    """vstack(Tensor[] tensors) -> Tensor: 1-D inputs become rows, then concatenated on dim 0."""
    parts = [_atleast(g, t, 2) for t in tensors]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)


# ============================================================================================
# Padding
# ============================================================================================


@onnx_symbolic("aten::constant_pad_nd")
def aten_constant_pad_nd(
    g: GraphContext, self: Value, pad: Sequence[int], value: float | int | bool = 0
) -> Value:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor (negative pads crop)"""
    return _torch_pad(g, self, pad, "constant", value)


@onnx_symbolic("aten::pad")
def aten_pad(
    g: GraphContext, self: Value, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Value:
    """pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor

    ONNX calls replicate 'edge'; circular has no ONNX mode and is sliced and concatenated.
    """
    return _torch_pad(g, self, pad, mode, 0 if value is None else value)


@onnx_symbolic("aten::reflection_pad1d")
def aten_reflection_pad1d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::reflection_pad2d")
def aten_reflection_pad2d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::reflection_pad3d")
def aten_reflection_pad3d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "reflect")


@onnx_symbolic("aten::replication_pad1d")
def aten_replication_pad1d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")


@onnx_symbolic("aten::replication_pad2d")
def aten_replication_pad2d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")


@onnx_symbolic("aten::replication_pad3d")
def aten_replication_pad3d(g: GraphContext, self: Value, padding: Sequence[int]) -> Value:
    """replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _torch_pad(g, self, padding, "replicate")


# ============================================================================================
# Sliding blocks (im2col / col2im)
# ============================================================================================


def _pair(values: Sequence[int]) -> list[int]:
    return list(values) * 2 if len(values) == 1 else list(values)


@onnx_symbolic("aten::im2col")
def aten_im2col(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Value:
    """im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    F.unfold as zero padding plus one Gather over the flattened spatial dims with an
    export-time [kernel, blocks] index: exact for every dtype and opset (a Conv with one-hot
    weights would round integers and doubles). Spatial sizes must be static.
    """
    (kh, kw), (dh, dw) = _pair(kernel_size), _pair(dilation)
    (ph, pw), (sh, sw) = _pair(padding), _pair(stride)
    rank = _need_rank(self, "im2col")
    height, width = _static_dim(self, -2, "im2col"), _static_dim(self, -1, "im2col")
    padded = _onnx_pad(g, self, [0] * (rank - 2) + [ph, pw], [0] * (rank - 2) + [ph, pw], "constant", 0)
    hp, wp = height + 2 * ph, width + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    rows = (torch.arange(kh) * dh).reshape(kh, 1, 1, 1) + (torch.arange(oh) * sh).reshape(1, 1, oh, 1)
    cols = (torch.arange(kw) * dw).reshape(1, kw, 1, 1) + (torch.arange(ow) * sw).reshape(1, 1, 1, ow)
    index = (rows * wp + cols).reshape(kh * kw, oh * ow)
    flat = _reshape(g, padded, [0] * (rank - 2) + [hp * wp])
    blocks = _gather_const(g, flat, index, rank - 2)
    return _reshape(g, blocks, [0] * (rank - 3) + [-1, oh * ow])


def _col2im_by_pads(
    g: GraphContext,
    x: Value,
    rank: int,
    channels: int,
    kernel: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
    image: tuple[int, int],
    blocks: tuple[int, int],
) -> Value:
    """col2im as a sum over kernel positions: each position's [bh, bw] block grid is spread
    by the stride (pad after each element, reshape) and shifted to its offset (pad/crop)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    (bh, bw), (hp, wp) = blocks, (image[0] + 2 * ph, image[1] + 2 * pw)
    lead = [0] if rank == 3 else [1]
    grid = _reshape(g, x, lead + [channels, kh * kw, bh, bw])
    total = None
    for ki in range(kh):
        for kj in range(kw):
            piece = g.op("Gather", grid, g.constant(ki * kw + kj), axis=2)  # [N, C, bh, bw]
            spread = h.unsqueeze(g, piece, [3, 5])  # [N, C, bh, 1, bw, 1]
            spread = _onnx_pad(g, spread, [0] * 6, [0, 0, 0, sh - 1, 0, sw - 1], "constant", 0)
            spread = _reshape(g, spread, [0, channels, bh * sh, bw * sw])
            top, left = ki * dh, kj * dw
            placed = _onnx_pad(
                g, spread, [0, 0, top, left], [0, 0, hp - top - bh * sh, wp - left - bw * sw], "constant", 0
            )
            total = placed if total is None else g.op("Add", total, placed)
    assert total is not None
    out = h.slice_static(g, total, [2, 3], [ph, pw], [ph + image[0], pw + image[1]])
    return h.squeeze(g, out, [0]) if rank == 2 else out


@onnx_symbolic("aten::col2im")
def aten_col2im(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Value:
    """col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    F.fold sums overlapping blocks. A grouped ConvTranspose with one-hot weights does exactly
    that at every opset (Col2Im only exists from 18); output_padding restores the rows and
    columns the blocks do not reach. ConvTranspose computes in float, so other dtypes pass
    through float32; onnxruntime has no double ConvTranspose, so doubles and integers are
    summed exactly from one dilated, shifted Pad per kernel position instead.
    """
    (oh_img, ow_img), (kh, kw) = _pair(output_size), _pair(kernel_size)
    (dh, dw), (ph, pw), (sh, sw) = _pair(dilation), _pair(padding), _pair(stride)
    rank = _need_rank(self, "col2im")
    channels_k = _static_dim(self, -2, "col2im")
    kernel = kh * kw
    channels = channels_k // kernel
    bh = (oh_img + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (ow_img + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if self.dtype not in (ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return _col2im_by_pads(
            g, self, rank, channels, (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh_img, ow_img), (bh, bw)
        )
    work = h.cast(g, self, ir.DataType.FLOAT)
    x = _reshape(g, work, ([0] if rank == 3 else [1]) + [channels_k, bh, bw])
    one_hot = torch.eye(kernel, dtype=torch.float32).reshape(kernel, 1, kh, kw)
    weight = one_hot.repeat(channels, 1, 1, 1)
    reach_h = (bh - 1) * sh + dh * (kh - 1) + 1 - 2 * ph
    reach_w = (bw - 1) * sw + dw * (kw - 1) + 1 - 2 * pw
    attrs: dict[str, object] = {
        "kernel_shape": [kh, kw],
        "strides": [sh, sw],
        "dilations": [dh, dw],
        "pads": [ph, pw, ph, pw],
        "group": channels,
    }
    if oh_img != reach_h or ow_img != reach_w:
        attrs["output_padding"] = [oh_img - reach_h, ow_img - reach_w]
    out = g.op("ConvTranspose", x, g.constant(weight), **attrs)
    if rank == 2:
        out = h.squeeze(g, out, [0])
    return h.cast(g, out, self.dtype)


# ============================================================================================
# Creation
# ============================================================================================


@onnx_symbolic("aten::eye")
def aten_eye(
    g: GraphContext, n: int | Value, m: int | Value | None = None, dtype: torch.dtype | None = None
) -> Value:
    """eye(SymInt n, *, ScalarType? dtype=None, ...) -> Tensor; eye.m(SymInt n, SymInt m, ...)

    Constant sizes fold in torch; sizes known at run time go through EyeLike over a
    ConstantOfShape of [n, m], both in opset 9.
    """
    out_dtype = h.ir_dtype(dtype if dtype is not None else torch.get_default_dtype())
    cols = n if m is None else m
    if isinstance(n, int) and isinstance(cols, int):
        return g.constant(torch.eye(n, cols, dtype=tensors.to_torch_dtype(out_dtype)))
    shape = g.list_to_value([n, cols])
    zeros = g.op("ConstantOfShape", shape, value=torch.tensor([0], dtype=tensors.to_torch_dtype(out_dtype)))
    return g.op("EyeLike", zeros, dtype=out_dtype)


@onnx_symbolic("aten::_shape_as_tensor")
def aten__shape_as_tensor(g: GraphContext, self: Value) -> Value:
    """_shape_as_tensor(Tensor self) -> Tensor (int64)"""
    return g.op("Shape", self)


@onnx_symbolic("aten::_reshape_from_tensor")
def aten__reshape_from_tensor(g: GraphContext, self: Value, shape: Value) -> Value:
    """_reshape_from_tensor(Tensor self, Tensor shape) -> Tensor (Reshape wants int64)"""
    return g.op("Reshape", self, h.cast(g, shape, ir.DataType.INT64))


@onnx_symbolic("aten::_dim_arange")
def aten__dim_arange(g: GraphContext, like: Value, dim: int) -> Value:
    """_dim_arange(Tensor like, int dim) -> Tensor: arange(like.size(dim)) in int64"""
    size = h.dim_size(g, like, dim)
    if isinstance(size, int):
        return g.constant(torch.arange(size, dtype=torch.int64))
    return _arange(g, 0, size, 1, torch.int64)


@onnx_symbolic("aten::linspace")
def aten_linspace(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    steps: int | Value,
    dtype: torch.dtype | None = None,
) -> Value:
    """linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, ...) -> Tensor (and the Tensor overloads)

    Computed in double as torch's kernel does: the first half counts up from start and the
    second half down from end, so both ends are exact. Integer dtypes truncate the result.
    """
    out_dtype = h.ir_dtype(dtype if dtype is not None else torch.get_default_dtype())
    double = ir.DataType.DOUBLE

    def as_double(v: float | int | Value) -> Value:
        return h.cast(g, _reshape(g, v, []), double) if isinstance(v, Value) else g.constant(float(v), double)

    start_v, end_v = as_double(start), as_double(end)
    if isinstance(steps, int):
        if steps == 0:
            return g.constant(torch.zeros(0, dtype=tensors.to_torch_dtype(out_dtype)))
        if steps == 1:
            return h.cast(g, h.unsqueeze(g, start_v, [0]), out_dtype)
        index = g.constant(torch.arange(steps, dtype=torch.float64))
        steps_v = g.constant(float(steps), double)
        first_half = g.constant(torch.arange(steps) < steps // 2)
    else:
        steps_v = h.cast(g, steps, double)
        index = h.cast(g, _arange(g, 0, steps, 1, torch.int64), double)
        half = g.op("Floor", g.op("Div", steps_v, g.constant(2.0, double)))
        # a single step is start (torch special-cases it): count it in the first half
        first_half = g.op("Less", index, g.op("Max", half, g.constant(1.0, double)))
    one = g.constant(1.0, double)
    # steps == 1 (run time) divides by zero in the unused branch only: keep it finite
    intervals = g.op("Max", g.op("Sub", steps_v, one), one)
    step = g.op("Div", g.op("Sub", end_v, start_v), intervals)
    up = g.op("Add", start_v, g.op("Mul", index, step))
    down = g.op("Sub", end_v, g.op("Mul", g.op("Sub", g.op("Sub", steps_v, one), index), step))
    values = g.op("Where", first_half, up, down)
    return h.cast(g, values, out_dtype)


@onnx_symbolic("aten::hann_window")
def aten_hann_window(
    g: GraphContext, window_length: int | Value, periodic: bool = True, dtype: torch.dtype | None = None
) -> Value:
    """hann_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, ...) -> Tensor

    sin(pi*n/N)^2 with N = length (periodic) or length-1, in double then cast. torch returns
    [1] for a window of length 1 (where the formula divides by zero).
    """
    out_dtype = h.ir_dtype(dtype if dtype is not None else torch.get_default_dtype())
    if isinstance(window_length, int):
        return g.constant(torch.hann_window(window_length, periodic, dtype=tensors.to_torch_dtype(out_dtype)))
    double = ir.DataType.DOUBLE
    length = h.cast(g, _reshape(g, window_length, []), ir.DataType.INT64)
    n = h.cast(g, _arange(g, 0, length, 1, torch.int64), double)
    denom = h.cast(g, length, double)
    if not periodic:
        denom = g.op("Sub", denom, g.constant(1.0, double))
    denom = g.op("Max", denom, g.constant(1.0, double))
    s = g.op("Sin", g.op("Mul", g.op("Div", n, denom), g.constant(math.pi, double)))
    window = g.op("Mul", s, s)
    is_one = g.op("Equal", length, g.constant(1))
    window = g.op("Where", is_one, g.constant(1.0, double), window)
    return h.cast(g, window, out_dtype)


@onnx_symbolic("aten::scalar_tensor")
def aten_scalar_tensor(
    g: GraphContext, s: float | int | bool | Value, dtype: torch.dtype | None = None
) -> Value:
    """scalar_tensor(Scalar s, *, ScalarType? dtype=None, ...) -> Tensor (default dtype float)"""
    out_dtype = h.ir_dtype(dtype if dtype is not None else torch.get_default_dtype())
    if isinstance(s, Value):
        return h.cast(g, _reshape(g, s, []), out_dtype)
    return g.constant(torch.tensor(s, dtype=tensors.to_torch_dtype(out_dtype)))


def _scalar_dtype(x: Value) -> ir.DataType:
    """torch's dtype for a tensor made from a Python scalar: float -> default dtype."""
    if h.is_floating(x):
        return h.ir_dtype(torch.get_default_dtype())
    return ir.DataType.BOOL if x.dtype == ir.DataType.BOOL else ir.DataType.INT64


def _tensor_from_data(
    g: GraphContext, data: object, dtype: torch.dtype | None, scalar: bool = False
) -> Value:
    """A tensor from a scalar, a (nested) list of scalars/values or a tensor value.

    A run-time Python float is a 0-d double in the graph, but torch.tensor(float) is float32
    (the default dtype): scalars follow torch's rule, tensors keep their dtype.
    """
    if isinstance(data, Value):
        if dtype is not None:
            return h.cast(g, data, h.ir_dtype(dtype))
        return h.cast(g, data, _scalar_dtype(data)) if scalar else data
    if isinstance(data, torch.Tensor):
        return g.constant(data.to(dtype) if dtype is not None else data)
    if isinstance(data, (bool, int, float)):
        return g.constant(torch.tensor(data, dtype=dtype))
    if isinstance(data, (list, tuple)):
        if all(not isinstance(d, (Value, list, tuple)) for d in data):
            items = [d.item() if isinstance(d, torch.Tensor) else d for d in data]
            return g.constant(torch.tensor(items, dtype=dtype))
        parts = [_tensor_from_data(g, d, None, scalar=True) for d in data]
        kinds = {p.dtype for p in parts}
        if dtype is None:
            if any(tensors.is_floating(k) for k in kinds):
                target = h.ir_dtype(torch.get_default_dtype())
            elif kinds == {ir.DataType.BOOL}:
                target = ir.DataType.BOOL
            else:
                target = ir.DataType.INT64
        else:
            target = h.ir_dtype(dtype)
        parts = [h.unsqueeze(g, h.cast(g, p, target), [0]) for p in parts]
        return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)
    raise TypeError(f"cannot build a tensor from {type(data).__name__}")


@onnx_symbolic("aten::tensor")
def aten_tensor(
    g: GraphContext,
    data: object = None,
    t: object = None,
    dtype: torch.dtype | None = None,
    requires_grad: bool = False,
) -> Value:
    """tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor; tensor.int/.float/.bool(t)

    In scripted code the items are often sizes known only at run time: each becomes a 0-d
    value, cast to the common dtype and concatenated.
    """
    del requires_grad
    if data is not None:
        return _tensor_from_data(g, data, dtype)
    return _tensor_from_data(g, t, dtype, scalar=True)


@onnx_symbolic("aten::as_tensor")
def aten_as_tensor(
    g: GraphContext, data: object = None, t: object = None, dtype: torch.dtype | None = None
) -> Value:
    """as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a); .list; .int/.float/.bool"""
    if data is not None:
        return _tensor_from_data(g, data, dtype)
    return _tensor_from_data(g, t, dtype, scalar=True)


# ============================================================================================
# Identities and queries
# ============================================================================================


@onnx_symbolic("aten::alias")
def aten_alias(g: GraphContext, self: Value) -> Value:
    """alias(Tensor(a) self) -> Tensor(a)"""
    return self


@onnx_symbolic("aten::lift")
def aten_lift(g: GraphContext, self: Value) -> Value:
    """lift(Tensor self) -> Tensor (functionalization marker)"""
    return self


@onnx_symbolic("aten::is_floating_point")
def aten_is_floating_point(g: GraphContext, self: Value) -> bool:
    """is_floating_point(Tensor self) -> bool: decided by the dtype at export time."""
    if self.dtype is None:
        raise ValueError("is_floating_point needs the input dtype")
    return h.is_floating(self)


@onnx_symbolic("aten::is_pinned")
def aten_is_pinned(g: GraphContext, self: Value, device: object = None) -> bool:
    """is_pinned(Tensor self, Device? device=None) -> bool: ONNX has no pinned memory."""
    return False


@onnx_symbolic("aten::dim")
def aten_dim(g: GraphContext, self: Value) -> int:
    """dim(Tensor self) -> int: the rank, a constant."""
    return _need_rank(self, "dim")


# ============================================================================================
# TorchScript primitives
# ============================================================================================


@onnx_symbolic("prim::shape")
def prim_shape(g: GraphContext, *inputs: object) -> object:
    """prim::shape(Tensor self) -> int[]: a constant list when static, else Shape."""
    (x,) = inputs
    assert isinstance(x, Value)
    shape = h.static_shape(x)
    return shape if shape is not None else g.op("Shape", x)


@onnx_symbolic("prim::dtype")
def prim_dtype(g: GraphContext, *inputs: object) -> object:
    """prim::dtype(Tensor self) -> int: the ScalarType number TorchScript uses for dtypes."""
    (x,) = inputs
    assert isinstance(x, Value)
    if x.dtype is None:
        raise ValueError("prim::dtype needs the input dtype")
    return tensors.DTYPE_TO_SCALAR_TYPE[tensors.to_torch_dtype(x.dtype)]


@onnx_symbolic("prim::device")
def prim_device(g: GraphContext, *inputs: object) -> object:
    """prim::device(Tensor self) -> Device: a placeholder (ONNX has no devices); consumers
    ignore device arguments."""
    return torch.device("cpu")


@onnx_symbolic("prim::layout")
def prim_layout(g: GraphContext, *inputs: object) -> object:
    """prim::layout(Tensor self) -> Layout: 0 (strided), the only layout TorchScript types carry."""
    return 0


@onnx_symbolic("prim::data")
def prim_data(g: GraphContext, *inputs: object) -> object:
    """prim::data(Tensor self) -> Tensor (x.data: the same values)"""
    return inputs[0]


@onnx_symbolic("prim::tolist")
def prim_tolist(g: GraphContext, *inputs: object) -> object:
    """prim::tolist(Tensor self, int dim, int elem_type) -> list

    A 0-d tensor stays a value (a Python scalar at run time); a 1-D tensor of static length
    becomes a list of 0-d values, which list consumers (ListUnpack, ListConstruct users)
    take item by item.
    """
    x = inputs[0]
    assert isinstance(x, Value)
    rank = _need_rank(x, "prim::tolist")
    if rank == 0:
        return x
    if rank == 1:
        length = _static_dim(x, 0, "prim::tolist")
        return [g.op("Gather", x, g.constant(i), axis=0) for i in range(length)]
    raise ValueError("prim::tolist of a tensor with more than one dim is not supported")


def _scalar_extreme(g: GraphContext, inputs: tuple[object, ...], pick_max: bool) -> object:
    items = list(inputs[0]) if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)) else list(inputs)
    if not items:
        raise ValueError("max/min of an empty list")
    if len(inputs) == 1 and isinstance(inputs[0], Value):
        return h.reduce(g, "ReduceMax" if pick_max else "ReduceMin", inputs[0], None, False)
    if all(not isinstance(i, Value) for i in items):
        values = [i.item() if isinstance(i, torch.Tensor) else i for i in items]
        return max(values) if pick_max else min(values)
    floating = any(isinstance(i, float) or (isinstance(i, Value) and h.is_floating(i)) for i in items)
    dtype = ir.DataType.DOUBLE if floating else ir.DataType.INT64
    values = [h.cast(g, i, dtype) if isinstance(i, Value) else g.constant(i, dtype) for i in items]
    best = values[0]
    for v in values[1:]:  # Greater+Where: Max/Min lack integer kernels before opset 12
        better = g.op("Greater", v, best) if pick_max else g.op("Less", v, best)
        best = g.op("Where", better, v, best)
    return best


@onnx_symbolic("prim::max")
def prim_max(g: GraphContext, *inputs: object) -> object:
    """prim::max(a, b) / prim::max(list) -> scalar: Python max when constant"""
    return _scalar_extreme(g, inputs, True)


@onnx_symbolic("prim::min")
def prim_min(g: GraphContext, *inputs: object) -> object:
    """prim::min(a, b) / prim::min(list) -> scalar: Python min when constant"""
    return _scalar_extreme(g, inputs, False)


@onnx_symbolic("prim::convert_element_type")
def prim_convert_element_type(g: GraphContext, *inputs: object) -> object:
    """prim::convert_element_type(Tensor self, ScalarType dtype) -> Tensor: a Cast"""
    x, dtype = inputs[0], inputs[1]
    assert isinstance(x, Value)
    if isinstance(dtype, int):
        dtype = tensors.scalar_type_to_dtype(dtype)
    assert isinstance(dtype, torch.dtype)
    return h.cast(g, x, h.ir_dtype(dtype))


# ============================================================================================
# Reductions, norms, statistics and losses
# ============================================================================================
# Reductions, norms, statistics, products and losses. Reduce* ops go through ``h.reduce``
# (axes move from attribute to input at opset 13 for ReduceSum, 18 for the rest). onnxruntime
# has Reduce* kernels for float16/float/double/int32/int64 only at the low opsets (int8/uint8
# from 12, bool from 20), so smaller integer and bool operands are widened to int32 first.

# dtypes without Reduce*/ArgMax kernels in onnxruntime at some opset in 9..26.
_NARROW = (
    ir.DataType.BOOL,
    ir.DataType.INT8,
    ir.DataType.UINT8,
    ir.DataType.INT16,
    ir.DataType.UINT16,
)
_REDUCTION_NONE, _REDUCTION_MEAN, _REDUCTION_SUM = 0, 1, 2


# ============================================================================================
# Helpers
# ============================================================================================


def _axes(dim: Sequence[int] | None, rank: int | None) -> list[int] | None:
    """torch dims -> non-negative ONNX axes (None and [] mean every axis, as in torch)."""
    dims = _reduce_dims(dim)
    if dims is None:
        return None
    return [h.normalize_dim(d, rank) for d in dims]


def _widened(g: GraphContext, x: Value) -> Value:
    """x in a dtype every Reduce*/ArgMax kernel of onnxruntime takes at every opset."""
    if x.dtype in _NARROW:
        return h.cast(g, x, ir.DataType.INT32)
    if x.dtype == ir.DataType.BFLOAT16:
        return h.cast(g, x, ir.DataType.FLOAT)
    return x


def _accumulating(g: GraphContext, x: Value) -> Value:
    """Half inputs computed in float32, as torch's CPU kernels accumulate them."""
    return h.cast(g, x, ir.DataType.FLOAT) if x.dtype in _LOW_PRECISION else x


def _sum_dtype(g: GraphContext, x: Value, dtype: torch.dtype | None) -> Value:
    """Operand of sum-like ops: ``dtype`` if given, else int64 for bool and integers."""
    if dtype is not None:
        return h.cast(g, x, h.ir_dtype(dtype))
    if not h.is_floating(x):
        return h.cast(g, x, ir.DataType.INT64)
    return x


def _reduced_count(g: GraphContext, x: Value, axes: list[int] | None) -> int | Value:
    """How many elements each reduction over ``axes`` sees: an int when static, else a 0-d
    int64 value."""
    shape = h.static_shape(x)
    rank = h.rank_of(x)
    if shape is not None:
        return math.prod(shape if axes is None else [shape[a] for a in axes])
    if axes is None or rank is None:
        return g.op("Size", x)
    dims = g.op("Gather", g.op("Shape", x), g.constant(list(axes)), axis=0)
    return g.op("ReduceProd", dims, keepdims=0)


def _sizes_reductions(g: GraphContext, x: Value, axes: Sequence[int]) -> list[int] | Value:
    """Sizes of ``axes`` of x: a list of ints when static, else a 1-D int64 value."""
    if x.shape is not None and all(isinstance(x.shape[a], int) for a in axes):
        return [int(x.shape[a]) for a in axes]
    return g.op("Gather", g.op("Shape", x), g.constant(list(axes)), axis=0)


def _shape_input(g: GraphContext, parts: Sequence[list[int] | Value]) -> Value:
    """A 1-D int64 shape from pieces that are int lists or 1-D values."""
    if all(isinstance(p, list) for p in parts):
        return g.constant([d for p in parts for d in p])  # type: ignore[union-attr]
    values = [g.constant(p) if isinstance(p, list) else p for p in parts if not (isinstance(p, list) and not p)]
    return values[0] if len(values) == 1 else g.op("Concat", *values, axis=0)


def _squeeze_axes(g: GraphContext, x: Value, axes: list[int] | None, keepdim: bool, rank: int | None) -> Value:
    """Drop reduced axes that were kept (keepdims=1) when torch's keepdim is False."""
    if keepdim:
        return x
    if axes is None:
        if rank is None:
            raise ValueError("dropping every reduced axis needs the input rank")
        axes = list(range(rank))
    return h.squeeze(g, x, axes) if axes else x


def _nan_flags(g: GraphContext, x: Value) -> Value:
    return h.cast(g, g.op("IsNaN", x), ir.DataType.INT32)


def _extreme(g: GraphContext, op_type: str, x: Value, axes: list[int] | None, keepdim: bool) -> Value:
    """ReduceMax/ReduceMin in x's dtype (narrow dtypes computed in int32 and cast back).

    onnxruntime's ReduceMax/ReduceMin skip NaN; torch propagates it, so a float reduction
    that saw a NaN is replaced by NaN.
    """
    out = h.cast(g, h.reduce(g, op_type, _widened(g, x), axes, keepdim), x.dtype)
    if not h.is_floating(x):
        return out
    has_nan = h.reduce(g, "ReduceMax", _nan_flags(g, x), axes, keepdim)
    return g.op("Where", h.cast(g, has_nan, ir.DataType.BOOL), h.scalar_like(g, math.nan, x), out)


def _arg_extreme(g: GraphContext, op_type: str, x: Value, dim: int | None, keepdim: bool) -> Value:
    """ArgMax/ArgMin with torch's rules: the first index wins ties (select_last_index=0, the
    default) and a NaN is both the maximum and the minimum (onnxruntime skips NaN, so rows
    with one take the index of their first NaN). ArgMax-1 rejects negative axes."""
    rank = h.rank_of(x)
    if dim is None:
        flat = g.op("Reshape", x, g.constant([-1]))
        flat.dtype = x.dtype
        out = _arg_extreme(g, op_type, flat, 0, False)
        if keepdim:
            if rank is None:
                raise ValueError(f"{op_type} over all dims with keepdim=True needs the input rank")
            out = g.op("Reshape", out, g.constant([1] * rank))
        return out
    if rank == 0:  # torch allows dim 0/-1 on a 0-d tensor: the index is 0
        return g.constant(0)
    axis = h.normalize_dim(dim, rank)
    out = g.op(op_type, _widened(g, x), axis=axis, keepdims=int(keepdim))
    if not h.is_floating(x):
        return out
    flags = _nan_flags(g, x)
    has_nan = h.cast(g, h.reduce(g, "ReduceMax", flags, [axis], keepdim), ir.DataType.BOOL)
    return g.op("Where", has_nan, g.op("ArgMax", flags, axis=axis, keepdims=int(keepdim)), out)


def _vector_norm(g: GraphContext, x: Value, ord: float, axes: list[int] | None, keepdim: bool) -> Value:  # noqa: A002
    """sum(|x|^ord)^(1/ord) over axes, with torch's special orders 0, 1, 2, inf, -inf.
    Half inputs are computed in float32 (torch accumulates them in float)."""
    if not h.is_floating(x):
        raise ValueError(f"norms need a floating point input, got {x.dtype}")
    operand = _accumulating(g, x)
    if ord == 2:
        out = h.reduce(g, "ReduceL2", operand, axes, keepdim)
    elif ord == 1:
        out = h.reduce(g, "ReduceL1", operand, axes, keepdim)
    elif ord == math.inf:
        out = _extreme(g, "ReduceMax", g.op("Abs", operand), axes, keepdim)
    elif ord == -math.inf:
        out = _extreme(g, "ReduceMin", g.op("Abs", operand), axes, keepdim)
    elif ord == 0:  # the count of non-zero entries
        nonzero = h.cast(g, h.cast(g, operand, ir.DataType.BOOL), operand.dtype)
        out = h.reduce(g, "ReduceSum", nonzero, axes, keepdim)
    else:
        powered = g.op("Pow", g.op("Abs", operand), h.scalar_like(g, ord, operand))
        summed = h.reduce(g, "ReduceSum", powered, axes, keepdim)
        out = g.op("Pow", summed, h.scalar_like(g, 1.0 / ord, operand))
    return h.cast(g, out, x.dtype)


def _matrix_norm(
    g: GraphContext, x: Value, ord: float | str, dim: Sequence[int], keepdim: bool  # noqa: A002
) -> Value:
    """Matrix norms that need no singular values: 'fro', +-1 (column sums), +-inf (row sums)."""
    rank = h.rank_of(x)
    if len(dim) != 2:
        raise ValueError(f"a matrix norm needs two dims, got {list(dim)}")
    rows, cols = (h.normalize_dim(d, rank) for d in dim)
    if ord == "fro":
        return _vector_norm(g, x, 2.0, [rows, cols], keepdim)
    if ord == "nuc" or ord in (2, -2):
        raise ValueError(f"matrix norm ord={ord!r} needs singular values, which ONNX cannot compute")
    if isinstance(ord, str) or abs(ord) not in (1, math.inf):
        raise ValueError(f"unknown matrix norm ord={ord!r}")
    operand = g.op("Abs", _accumulating(g, x))
    summed_axis, picked_axis = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = h.reduce(g, "ReduceSum", operand, [summed_axis], True)
    out = _extreme(g, "ReduceMax" if ord > 0 else "ReduceMin", sums, [picked_axis], True)
    out = _squeeze_axes(g, out, sorted([rows, cols]), keepdim, rank)
    return h.cast(g, out, x.dtype)


def _norm_operand(g: GraphContext, x: Value, dtype: torch.dtype | None) -> Value:
    return h.cast(g, x, h.ir_dtype(dtype)) if dtype is not None else x


def _scan(g: GraphContext, op_type: str, x: Value, dim: int, what: str) -> Value:
    """Inclusive scan (Add: cumsum, Mul: cumprod) along a dim of static size, in
    ceil(log2(n)) rounds of y[i] = y[i] (op) y[i - k] for i >= k, k = 1, 2, 4, ...

    Only Slice and Concat are used, so it works at every opset and keeps infinities intact
    (a MatMul with a triangular ones matrix would turn inf * 0 into NaN).
    """
    size = h.dim_size(g, x, dim)
    if not isinstance(size, int):
        raise ValueError(f"{what} along a dim whose size is only known at run time is not supported")
    step = 1
    while step < size:
        head = h.slice_static(g, x, [dim], [0], [step])
        shifted = h.slice_static(g, x, [dim], [0], [size - step])
        tail = h.slice_static(g, x, [dim], [step], [size])
        x = g.op("Concat", head, g.op(op_type, tail, shifted), axis=dim)
        step *= 2
    return x


def _cumulative_operand(g: GraphContext, self: Value, dtype: torch.dtype | None) -> tuple[Value, ir.DataType]:
    """(operand, result dtype) of cumsum/cumprod: ints and bool accumulate in int64 like
    torch; halves accumulate in float32 (torch's acc_type) and are cast back."""
    x = _sum_dtype(g, self, dtype)
    out_dtype = x.dtype
    return _accumulating(g, x), out_dtype


def _broadcast_rank(x1: Value, x2: Value) -> int | None:
    ranks = [h.rank_of(x1), h.rank_of(x2)]
    return None if None in ranks else max(ranks)  # type: ignore[type-var]


def _unsqueeze_to_rank(g: GraphContext, x: Value, rank: int) -> Value:
    own = h.rank_of(x)
    if own is None:
        raise ValueError("broadcasting needs the input rank")
    return x if own == rank else h.unsqueeze(g, x, list(range(rank - own)))


# ============================================================================================
# Logical reductions
# ============================================================================================


def _logical_reduce(g: GraphContext, op_type: str, self: Value, dim: Sequence[int] | None, keepdim: bool) -> Value:
    flags = h.cast(g, h.cast(g, self, ir.DataType.BOOL), ir.DataType.INT32)
    out = h.reduce(g, op_type, flags, _axes(dim, h.rank_of(self)), keepdim)
    return h.cast(g, out, ir.DataType.UINT8 if self.dtype == ir.DataType.UINT8 else ir.DataType.BOOL)


@onnx_symbolic("aten::all")
def aten_all(g: GraphContext, self: Value, dim: Sequence[int] | None = None, keepdim: bool = False) -> Value:
    """all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor (and all(), all.dim)

    Truthiness via Cast to bool (NaN is true, as in torch), then ReduceMin over int32 flags:
    Reduce* has no bool kernel before opset 20. torch keeps uint8 for uint8 inputs.
    """
    return _logical_reduce(g, "ReduceMin", self, dim, keepdim)


@onnx_symbolic("aten::any")
def aten_any(g: GraphContext, self: Value, dim: Sequence[int] | None = None, keepdim: bool = False) -> Value:
    """any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor (and any(), any.dim)

    ReduceMax over int32 truth flags, for the same reasons as ``all``.
    """
    return _logical_reduce(g, "ReduceMax", self, dim, keepdim)


# ============================================================================================
# Extremes and their indices
# ============================================================================================


@onnx_symbolic("aten::argmax")
def aten_argmax(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> Value:
    """argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor

    dim=None is the argmax of the flattened input; with keepdim it is reshaped to all ones.
    """
    return _arg_extreme(g, "ArgMax", self, dim, keepdim)


@onnx_symbolic("aten::argmin")
def aten_argmin(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> Value:
    """argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg_extreme(g, "ArgMin", self, dim, keepdim)


@onnx_symbolic("aten::amax")
def aten_amax(g: GraphContext, self: Value, dim: Sequence[int] = (), keepdim: bool = False) -> Value:
    """amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor (dim=[] reduces all)"""
    return _extreme(g, "ReduceMax", self, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::amin")
def aten_amin(g: GraphContext, self: Value, dim: Sequence[int] = (), keepdim: bool = False) -> Value:
    """amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor (dim=[] reduces all)"""
    return _extreme(g, "ReduceMin", self, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::aminmax")
def aten_aminmax(g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False) -> tuple[Value, Value]:
    """aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)"""
    axes = None if dim is None else [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMin", self, axes, keepdim), _extreme(g, "ReduceMax", self, axes, keepdim)


@onnx_symbolic("aten::max")
def aten_max(g: GraphContext, self: Value) -> Value:
    """max(Tensor self) -> Tensor: the full reduction (max.other is elementwise, max.dim below)"""
    return _extreme(g, "ReduceMax", self, None, False)


@onnx_symbolic("aten::min")
def aten_min(g: GraphContext, self: Value) -> Value:
    """min(Tensor self) -> Tensor: the full reduction"""
    return _extreme(g, "ReduceMin", self, None, False)


@onnx_symbolic("aten::max.dim")
def aten_max_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

    Indices from ArgMax, whose default select_last_index=0 gives torch's first maximum.
    """
    axes = [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMax", self, axes, keepdim), _arg_extreme(g, "ArgMax", self, dim, keepdim)


@onnx_symbolic("aten::min.dim")
def aten_min_dim(g: GraphContext, self: Value, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    """min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    axes = [h.normalize_dim(dim, h.rank_of(self))]
    return _extreme(g, "ReduceMin", self, axes, keepdim), _arg_extreme(g, "ArgMin", self, dim, keepdim)


# ============================================================================================
# Products and sums
# ============================================================================================


@onnx_symbolic("aten::prod")
def aten_prod(
    g: GraphContext, self: Value, dim: int | None = None, keepdim: bool = False, dtype: torch.dtype | None = None
) -> Value:
    """prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor (and prod())

    Bool and integer products accumulate in int64, as torch does.
    """
    x = _sum_dtype(g, self, dtype)
    axes = None if dim is None else [h.normalize_dim(dim, h.rank_of(self))]
    return h.reduce(g, "ReduceProd", x, axes, keepdim)


@onnx_symbolic("aten::logsumexp")
def aten_logsumexp(g: GraphContext, self: Value, dim: Sequence[int], keepdim: bool = False) -> Value:
    """logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor

    log(sum(exp(x - m))) + m with m the max, so large inputs do not overflow. A non-finite m
    (all -inf, or an inf) is replaced by 0 so the result is -inf/inf rather than NaN; the test
    is |m| < inf because Equal has no float kernel and IsInf no opset before 10. Integer
    inputs give the default float dtype, as in torch.
    """
    x = self if h.is_floating(self) else h.cast(g, self, h.ir_dtype(torch.get_default_dtype()))
    operand = _accumulating(g, x)
    rank = h.rank_of(self)
    axes = _axes(dim, rank)
    peak = h.reduce(g, "ReduceMax", operand, axes, True)
    finite = g.op("Less", g.op("Abs", peak), h.scalar_like(g, math.inf, operand))
    peak = g.op("Where", finite, peak, h.scalar_like(g, 0.0, operand))
    summed = h.reduce(g, "ReduceSum", g.op("Exp", g.op("Sub", operand, peak)), axes, keepdim)
    out = g.op("Add", g.op("Log", summed), _squeeze_axes(g, peak, axes, keepdim, rank))
    return h.cast(g, out, x.dtype)


@onnx_symbolic("aten::cumsum")
def aten_cumsum(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    CumSum only exists from opset 11: below it the scan is built from Slice/Add/Concat in
    log2(n) rounds, which needs the size of ``dim`` at export time.
    """
    x, out_dtype = _cumulative_operand(g, self, dtype)
    rank = h.rank_of(x)
    if rank == 0:
        return h.cast(g, x, out_dtype)
    out = _scan(g, "Add", x, h.normalize_dim(dim, rank), "cumsum below opset 11 (CumSum)")
    return h.cast(g, out, out_dtype)


@onnx_symbolic("aten::cumprod")
def aten_cumprod(g: GraphContext, self: Value, dim: int, dtype: torch.dtype | None = None) -> Value:
    """cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    ONNX has CumProd only from opset 26; the Slice/Mul/Concat scan works at every opset
    (the size of ``dim`` must be known at export time). Exp(CumSum(Log)) would lose signs
    and zeros.
    """
    x, out_dtype = _cumulative_operand(g, self, dtype)
    rank = h.rank_of(x)
    if rank == 0:
        return h.cast(g, x, out_dtype)
    out = _scan(g, "Mul", x, h.normalize_dim(dim, rank), "cumprod")
    return h.cast(g, out, out_dtype)


@onnx_symbolic("aten::numel")
def aten_numel(g: GraphContext, self: Value) -> int | Value:
    """numel(Tensor self) -> int: a Python int when the shape is static, so it folds away;
    else Size, a 0-d int64 like TorchScript's int."""
    shape = h.static_shape(self)
    if shape is not None:
        return math.prod(shape)
    out = g.op("Size", self)
    out.dtype = ir.DataType.INT64
    out.shape = ir.Shape([])
    return out


# ============================================================================================
# Statistics
# ============================================================================================


def _variance(
    g: GraphContext, self: Value, dim: Sequence[int] | None, unbiased: bool, correction: float | None, keepdim: bool
) -> tuple[Value, Value]:
    """(variance, mean) with torch's correction: sum((x - mean)^2) / max(N - correction, 0).

    A zero divisor gives inf (or NaN for a zero sum), as in torch. Halves are computed in
    float32 and cast back.
    """
    if not h.is_floating(self):
        raise ValueError(f"var/std need a floating point input, got {self.dtype}")
    if correction is None:
        correction = 1.0 if unbiased else 0.0
    x = _accumulating(g, self)
    rank = h.rank_of(self)
    axes = _axes(dim, rank)
    mean_kept = h.reduce(g, "ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean_kept)
    squares = g.op("Mul", centered, centered)
    if correction == 0:
        var = h.reduce(g, "ReduceMean", squares, axes, keepdim)
    else:
        count = _reduced_count(g, x, axes)
        if isinstance(count, int):
            divisor = max(count - correction, 0.0)
            divisor_value = h.scalar_like(g, divisor, x)
        else:
            shifted = g.op("Sub", h.cast(g, count, x.dtype), h.scalar_like(g, correction, x))
            divisor_value = g.op("Max", shifted, h.scalar_like(g, 0.0, x))
        var = g.op("Div", h.reduce(g, "ReduceSum", squares, axes, keepdim), divisor_value)
    mean = mean_kept if keepdim else _squeeze_axes(g, mean_kept, axes, False, rank)
    return h.cast(g, var, self.dtype), h.cast(g, mean, self.dtype)


@onnx_symbolic("aten::var")
def aten_var(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> Value:
    """var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    (and var(self, unbiased), var.dim(self, dim, unbiased, keepdim))

    correction=None means 1 (Bessel); unbiased=False is correction 0.
    """
    return _variance(g, self, dim, unbiased, correction, keepdim)[0]


@onnx_symbolic("aten::std")
def aten_std(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> Value:
    """std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    (and std(self, unbiased), std.dim(self, dim, unbiased, keepdim))"""
    return g.op("Sqrt", _variance(g, self, dim, unbiased, correction, keepdim)[0])


@onnx_symbolic("aten::var_mean")
def aten_var_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> tuple[Value, Value]:
    """var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    return _variance(g, self, dim, unbiased, correction, keepdim)


@onnx_symbolic("aten::std_mean")
def aten_std_mean(
    g: GraphContext,
    self: Value,
    dim: Sequence[int] | None = None,
    unbiased: bool = True,
    correction: float | None = None,
    keepdim: bool = False,
) -> tuple[Value, Value]:
    """std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    var, mean = _variance(g, self, dim, unbiased, correction, keepdim)
    return g.op("Sqrt", var), mean


# ============================================================================================
# Norms
# ============================================================================================


@onnx_symbolic("aten::norm")
def aten_norm(
    g: GraphContext,
    self: Value,
    p: float | None = 2.0,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor
    (and norm.Scalar, norm.ScalarOpt_dim, norm.ScalarOpt_dtype)

    p=None is 2; an empty dim reduces every dim.
    """
    x = _norm_operand(g, self, dtype)
    return _vector_norm(g, x, 2.0 if p is None else p, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::linalg_vector_norm")
def aten_linalg_vector_norm(
    g: GraphContext,
    self: Value,
    ord: float = 2.0,  # noqa: A002 - schema name
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    ord 2 and 1 map to ReduceL2/ReduceL1, +-inf to ReduceMax/ReduceMin of |x|, 0 counts
    non-zeros; any other ord is sum(|x|^ord)^(1/ord).
    """
    x = _norm_operand(g, self, dtype)
    return _vector_norm(g, x, ord, _axes(dim, h.rank_of(self)), keepdim)


@onnx_symbolic("aten::linalg_matrix_norm")
def aten_linalg_matrix_norm(
    g: GraphContext,
    self: Value,
    ord: float | str = "fro",  # noqa: A002
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    (and the str_ord overload)

    'fro', +-1 and +-inf only: 'nuc' and +-2 need singular values, which ONNX has no op for.
    """
    return _matrix_norm(g, _norm_operand(g, self, dtype), ord, dim, keepdim)


@onnx_symbolic("aten::linalg_norm")
def aten_linalg_norm(
    g: GraphContext,
    self: Value,
    ord: float | str | None = None,  # noqa: A002
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: torch.dtype | None = None,
) -> Value:
    """linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    (and the ord_str overload)

    torch's dispatch: ord=None is the 2-norm of the flattened dims (Frobenius for two dims);
    otherwise one dim (or a 1-D input) is a vector norm, two dims (or a 2-D input) a matrix norm.
    """
    x = _norm_operand(g, self, dtype)
    rank = h.rank_of(self)
    if ord is None:
        return _vector_norm(g, x, 2.0, _axes(dim, rank), keepdim)
    dims = list(dim) if dim is not None else (list(range(rank)) if rank is not None else None)
    if dims is None:
        raise ValueError("linalg_norm with ord and no dim needs the input rank")
    if len(dims) == 1 and not isinstance(ord, str):
        return _vector_norm(g, x, ord, _axes(dims, rank), keepdim)
    if len(dims) == 2:
        return _matrix_norm(g, x, ord, dims, keepdim)
    raise ValueError(f"linalg_norm with ord={ord!r} needs one or two dims, got {dims}")


@onnx_symbolic("aten::frobenius_norm")
def aten_frobenius_norm(g: GraphContext, self: Value, dim: Sequence[int], keepdim: bool = False) -> Value:
    """frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    return _vector_norm(g, self, 2.0, _axes(dim, h.rank_of(self)), keepdim)


# ============================================================================================
# Distances and similarities
# ============================================================================================


@onnx_symbolic("aten::cosine_similarity")
def aten_cosine_similarity(g: GraphContext, x1: Value, x2: Value, dim: int = 1, eps: float = 1e-8) -> Value:
    """cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor

    torch's current formula: sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) over dim, each
    norm clamped separately (not the product of norms, as older versions did).
    """
    rank = _broadcast_rank(x1, x2)
    if rank is None:
        raise ValueError("cosine_similarity needs the input ranks")
    a, b = _unsqueeze_to_rank(g, x1, rank), _unsqueeze_to_rank(g, x2, rank)
    axis = h.normalize_dim(dim, rank)

    def unit(v: Value) -> Value:
        length = h.reduce(g, "ReduceL2", v, [axis], True)
        return g.op("Div", v, h.clip(g, length, eps, None))

    return h.reduce(g, "ReduceSum", g.op("Mul", unit(a), unit(b)), [axis], False)


@onnx_symbolic("aten::pairwise_distance")
def aten_pairwise_distance(
    g: GraphContext, x1: Value, x2: Value, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Value:
    """pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=1e-06, bool keepdim=False) -> Tensor

    ||x1 - x2 + eps||_p over the last dim of the broadcast shape (eps is added, not clamped).
    """
    rank = _broadcast_rank(x1, x2)
    if rank is None:
        raise ValueError("pairwise_distance needs the input ranks")
    diff = g.op("Add", g.op("Sub", x1, x2), h.scalar_like(g, eps, x1))
    if rank == 0:
        return _vector_norm(g, diff, p, None, keepdim)
    return _vector_norm(g, diff, p, [rank - 1], keepdim)


def _cdist(g: GraphContext, x1: Value, x2: Value, p: float) -> Value:
    """||x1[..., i, :] - x2[..., j, :]||_p for every pair, from the broadcast difference
    [..., P, 1, M] - [..., 1, R, M] (exact; torch's matmul shortcut for p=2 is an
    approximation of it)."""
    r1, r2 = h.rank_of(x1), h.rank_of(x2)
    if r1 is None or r2 is None:
        raise ValueError("cdist needs the input ranks")
    diff = g.op("Sub", h.unsqueeze(g, x1, [r1 - 1]), h.unsqueeze(g, x2, [r2 - 2]))
    return _vector_norm(g, diff, p, [max(r1, r2)], False)


@onnx_symbolic("aten::cdist")
def aten_cdist(g: GraphContext, x1: Value, x2: Value, p: float = 2.0, compute_mode: int | None = None) -> Value:
    """cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor

    compute_mode only picks torch's algorithm; the exact difference form is used always.
    """
    del compute_mode
    return _cdist(g, x1, x2, p)


@onnx_symbolic("aten::_cdist_forward")
def aten__cdist_forward(g: GraphContext, x1: Value, x2: Value, p: float, compute_mode: int | None) -> Value:
    """_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor"""
    del compute_mode
    return _cdist(g, x1, x2, p)


# ============================================================================================
# Vector and tensor products
# ============================================================================================


@onnx_symbolic("aten::dot")
def aten_dot(g: GraphContext, self: Value, tensor: Value) -> Value:
    """dot(Tensor self, Tensor tensor) -> Tensor: MatMul of two 1-D tensors is 0-d"""
    return g.op("MatMul", self, tensor)


@onnx_symbolic("aten::mv")
def aten_mv(g: GraphContext, self: Value, vec: Value) -> Value:
    """mv(Tensor self, Tensor vec) -> Tensor"""
    return g.op("MatMul", self, vec)


def _outer(g: GraphContext, a: Value, b: Value) -> Value:
    column = h.unsqueeze(g, a, [1])
    if a.dtype == ir.DataType.BOOL:  # bool * bool is logical and; Mul has no bool kernel
        return g.op("And", column, b)
    return g.op("Mul", column, b)


@onnx_symbolic("aten::outer")
def aten_outer(g: GraphContext, self: Value, vec2: Value) -> Value:
    """outer(Tensor self, Tensor vec2) -> Tensor

    A broadcast Mul of a column and a row, so it needs no Einsum (torch's exporter waits for
    opset 12).
    """
    return _outer(g, self, vec2)


@onnx_symbolic("aten::ger")
def aten_ger(g: GraphContext, self: Value, vec2: Value) -> Value:
    """ger(Tensor self, Tensor vec2) -> Tensor (the old name of outer)"""
    return _outer(g, self, vec2)


def _cross(g: GraphContext, a: Value, b: Value, dim: int) -> Value:
    """a x b along ``dim`` (size 3): a[(i+1)%3] b[(i+2)%3] - a[(i+2)%3] b[(i+1)%3], with the
    rotations as Gathers of constant indices. A negative dim counts from each input's end,
    which is the same dim after broadcasting."""
    rank = _broadcast_rank(a, b)
    if rank is None:
        raise ValueError("cross needs the input ranks")
    a, b = _unsqueeze_to_rank(g, a, rank), _unsqueeze_to_rank(g, b, rank)
    axis = h.normalize_dim(dim, rank)
    next_index, last_index = g.constant([1, 2, 0]), g.constant([2, 0, 1])

    def rotated(v: Value, index: Value) -> Value:
        return g.op("Gather", v, index, axis=axis)

    left = g.op("Mul", rotated(a, next_index), rotated(b, last_index))
    right = g.op("Mul", rotated(a, last_index), rotated(b, next_index))
    return g.op("Sub", left, right)


@onnx_symbolic("aten::linalg_cross")
def aten_linalg_cross(g: GraphContext, self: Value, other: Value, dim: int = -1) -> Value:
    """linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor"""
    return _cross(g, self, other, dim)


@onnx_symbolic("aten::cross")
def aten_cross(g: GraphContext, self: Value, other: Value, dim: int | None = None) -> Value:
    """cross(Tensor self, Tensor other, int? dim=None) -> Tensor

    dim=None is torch's deprecated default: the first dim of size 3 (needs static sizes).
    """
    if dim is None:
        shape = h.static_shape(self)
        if shape is None or 3 not in shape:
            raise ValueError("cross without dim needs a static shape with a dim of size 3")
        dim = shape.index(3)
    return _cross(g, self, other, dim)


@onnx_symbolic("aten::tensordot")
def aten_tensordot(
    g: GraphContext, self: Value, other: Value, dims_self: Sequence[int], dims_other: Sequence[int]
) -> Value:
    """tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor

    Transpose the contracted dims together, Reshape to two matrices and MatMul: opset 9 can
    express it (torch's exporter needs Einsum at 12). Dynamic sizes go through Shape.
    """
    rank_a, rank_b = h.rank_of(self), h.rank_of(other)
    if rank_a is None or rank_b is None:
        raise ValueError("tensordot needs the input ranks")
    contract_a = [h.normalize_dim(d, rank_a) for d in dims_self]
    contract_b = [h.normalize_dim(d, rank_b) for d in dims_other]
    free_a = [d for d in range(rank_a) if d not in contract_a]
    free_b = [d for d in range(rank_b) if d not in contract_b]

    def moved(x: Value, perm: list[int]) -> Value:
        return x if perm == list(range(len(perm))) else g.op("Transpose", x, perm=perm)

    inner = _sizes_reductions(g, self, contract_a)
    if isinstance(inner, list):
        inner_size: list[int] | Value = [math.prod(inner)]
    else:
        inner_size = g.op("ReduceProd", inner, keepdims=1)
    a2 = g.op("Reshape", moved(self, free_a + contract_a), _shape_input(g, [[-1], inner_size]))
    b2 = g.op("Reshape", moved(other, contract_b + free_b), _shape_input(g, [inner_size, [-1]]))
    product = g.op("MatMul", a2, b2)
    out_shape = _shape_input(g, [_sizes_reductions(g, self, free_a), _sizes_reductions(g, other, free_b)])
    return g.op("Reshape", product, out_shape)


def _einsum_labels(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Per-operand labels and output labels of an einsum equation. The dims an ellipsis
    stands for get private labels, right-aligned across operands as broadcasting aligns
    them; without '->' the output is the ellipsis dims, then the labels used once, sorted."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"einsum equation {equation!r} has {len(terms)} operands, got {len(ranks)} tensors")
    parsed: list[tuple[str, int, str]] = []
    for term, rank in zip(terms, ranks):
        before, dots, after = term.partition("...")
        hidden = rank - len(before) - len(after) if dots else 0
        if hidden < 0 or (not dots and len(term) != rank):
            raise ValueError(f"einsum term {term!r} does not fit a tensor of rank {rank}")
        parsed.append((before, hidden, after))
    most = max((hidden for _, hidden, _ in parsed), default=0)
    spare = [chr(0x3B1 + i) for i in range(most)]  # Greek letters never clash with torch's
    inputs = [list(before) + spare[most - hidden :] + list(after) for before, hidden, after in parsed]
    if arrow:
        before, dots, after = rhs.partition("...")
        output = list(before) + (spare if dots else []) + list(after)
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        output = spare + sorted(label for label, c in counts.items() if c == 1 and label not in spare)
    return inputs, output


def _einsum_pair(
    g: GraphContext, a: Value, la: list[str], b: Value, lb: list[str], keep: set[str], sizes: dict[str, int | None]
) -> tuple[Value, list[str]]:
    """Contract two operands as one batched MatMul: [batch, free_a, contracted] x
    [batch, contracted, free_b]. Labels are tracked here, so intermediate values need no
    shapes; batch dims are copied by Reshape's 0 and may be dynamic."""
    a, la = _einsum_sum_out(g, a, la, keep | set(lb))
    b, lb = _einsum_sum_out(g, b, lb, keep | set(la))
    batch = [label for label in la if label in lb and label in keep]
    contracted = [label for label in la if label in lb and label not in keep]
    free_a = [label for label in la if label not in lb]
    free_b = [label for label in lb if label not in la]

    def static(labels: list[str]) -> list[int]:
        known = [sizes[label] for label in labels]
        if any(not isinstance(s, int) for s in known):
            raise ValueError("einsum below opset 12 needs static sizes for dims that are not batch dims")
        return known  # type: ignore[return-value]

    def arranged(x: Value, labels: list[str], order: list[str]) -> Value:
        perm = [labels.index(label) for label in order]
        return x if perm == list(range(len(perm))) else g.op("Transpose", x, perm=perm)

    keep_batch = [0] * len(batch)
    inner = math.prod(static(contracted))
    a_shape = g.constant(keep_batch + [math.prod(static(free_a)), inner])
    b_shape = g.constant(keep_batch + [inner, math.prod(static(free_b))])
    a2 = g.op("Reshape", arranged(a, la, batch + free_a + contracted), a_shape)
    b2 = g.op("Reshape", arranged(b, lb, batch + contracted + free_b), b_shape)
    product = g.op("MatMul", a2, b2)
    out = g.op("Reshape", product, g.constant(keep_batch + static(free_a) + static(free_b)))
    return out, batch + free_a + free_b


def _einsum_sum_out(g: GraphContext, x: Value, labels: list[str], keep: set[str]) -> tuple[Value, list[str]]:
    axes = [i for i, label in enumerate(labels) if label not in keep]
    if not axes:
        return x, labels
    return h.reduce(g, "ReduceSum", x, axes, False), [label for label in labels if label in keep]


@onnx_symbolic("aten::einsum")
def aten_einsum(
    g: GraphContext, equation: str, tensors: Sequence[Value], path: Sequence[int] | None = None
) -> Value:
    """einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor

    Einsum is opset 12; before it the equation is lowered to ReduceSum (labels used by one
    operand only), Transpose/Reshape and one batched MatMul per operand pair, folded left to
    right. Diagonals (a label repeated within one operand) have no such lowering and need
    opset 12. Bool operands are computed as int32 and turned back into bool.
    """
    del path
    return _einsum_lowered(g, equation, list(tensors))


def _einsum_lowered(g: GraphContext, equation: str, operands: list[Value]) -> Value:
    ranks = [h.rank_of(t) for t in operands]
    if any(r is None for r in ranks):
        raise ValueError("einsum below opset 12 needs the operand ranks")
    inputs, output = _einsum_labels(equation, ranks)  # type: ignore[arg-type]
    if any(len(set(labels)) != len(labels) for labels in inputs):
        raise ValueError(f"einsum {equation!r} takes a diagonal, which needs opset 12 (Einsum)")
    sizes: dict[str, int | None] = {}
    for value, labels in zip(operands, inputs):
        for axis, label in enumerate(labels):
            size = value.shape[axis] if value.shape is not None else None
            if isinstance(size, int) and size != 1 or label not in sizes:
                sizes[label] = size if isinstance(size, int) else sizes.get(label)
    is_bool = operands[0].dtype == ir.DataType.BOOL
    if is_bool:
        operands = [h.cast(g, t, ir.DataType.INT32) for t in operands]
    current, labels = operands[0], inputs[0]
    for index in range(1, len(operands)):
        keep = set(output).union(*inputs[index + 1 :])
        current, labels = _einsum_pair(g, current, labels, operands[index], inputs[index], keep, sizes)
    current, labels = _einsum_sum_out(g, current, labels, set(output))
    perm = [labels.index(label) for label in output]
    if perm != list(range(len(perm))):
        current = g.op("Transpose", current, perm=perm)
    return h.cast(g, current, ir.DataType.BOOL) if is_bool else current


# ============================================================================================
# Losses
# ============================================================================================


def _class_layout(x: Value) -> tuple[int, int, int]:
    """(rank, class axis, class count) of a loss input: [C] or [N, C, d1, ...]."""
    rank = h.rank_of(x)
    if rank is None:
        raise ValueError("a classification loss needs the input rank")
    axis = 0 if rank == 1 else 1
    count = x.shape[axis] if x.shape is not None else None
    if not isinstance(count, int):
        raise ValueError("a classification loss needs the number of classes at export time")
    return rank, axis, int(count)


def _class_shape(rank: int, axis: int, count: int) -> list[int]:
    return [count if i == axis else 1 for i in range(rank)]


def _nll_terms(
    g: GraphContext, log_probs: Value, target: Value, weight: Value | None, ignore_index: int
) -> tuple[Value, Value, Value]:
    """Per-element (loss, weight of the target class, ignored flag) of the NLL loss.

    The target's log-probability is selected by comparing the target with a constant
    0..C-1 along the class axis (Equal on int64 exists at opset 9, unlike the loss ops,
    which are opset 12) and a Where, so a -inf in another class cannot leak in as inf*0.
    Ignored targets (possibly out of range, like -100) weigh 0 and lose 0.
    """
    rank, axis, count = _class_layout(log_probs)
    labels = h.cast(g, target, ir.DataType.INT64)
    classes = g.constant(torch.arange(count).reshape(_class_shape(rank, axis, count)))
    hits = g.op("Equal", h.unsqueeze(g, labels, [axis]), classes)
    zero = h.scalar_like(g, 0.0, log_probs)
    picked = h.reduce(g, "ReduceSum", g.op("Where", hits, log_probs, zero), [axis], False)
    ignored = g.op("Equal", labels, g.constant(ignore_index))
    if weight is None:
        class_weight = h.reduce(g, "ReduceSum", h.cast(g, hits, log_probs.dtype), [axis], False)
    else:
        weights = g.op("Reshape", h.cast(g, weight, log_probs.dtype), g.constant(_class_shape(rank, axis, count)))
        class_weight = h.reduce(g, "ReduceSum", g.op("Where", hits, weights, zero), [axis], False)
    class_weight = g.op("Where", ignored, zero, class_weight)
    loss = g.op("Where", ignored, zero, g.op("Neg", g.op("Mul", picked, class_weight)))
    return loss, class_weight, ignored


def _reduce_loss(g: GraphContext, loss: Value, reduction: int, denominator: Value | None) -> Value:
    if reduction == _REDUCTION_NONE:
        return loss
    total = h.reduce(g, "ReduceSum", loss, None, False)
    if reduction == _REDUCTION_SUM:
        return total
    if reduction == _REDUCTION_MEAN:
        assert denominator is not None
        return g.op("Div", total, h.reduce(g, "ReduceSum", denominator, None, False))
    raise ValueError(f"unknown loss reduction {reduction}")


def _nll_loss(
    g: GraphContext, self: Value, target: Value, weight: Value | None, reduction: int, ignore_index: int
) -> Value:
    x = _accumulating(g, self)
    loss, class_weight, _ = _nll_terms(g, x, target, weight, ignore_index)
    return h.cast(g, _reduce_loss(g, loss, reduction, class_weight), self.dtype)


@onnx_symbolic("aten::nll_loss")
def aten_nll_loss(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor

    Built from Equal/Where/ReduceSum, so it works from opset 9 (NegativeLogLikelihoodLoss is
    opset 12). The mean divides by the summed weights of the targets that are not ignored,
    as torch does (NaN when every target is ignored).
    """
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::nll_loss2d")
def aten_nll_loss2d(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor"""
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::nll_loss_nd")
def aten_nll_loss_nd(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor

    What F.nll_loss traces to, for [C], [N, C] and [N, C, d1, ...] inputs alike.
    """
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::cross_entropy_loss")
def aten_cross_entropy_loss(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Value:
    """cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor

    LogSoftmax over the class axis, then torch's two forms: class-index targets take the NLL
    loss mixed with the smoothing term -sum(w * logp)/C (zero where ignored; its mean shares
    the NLL denominator); probability targets (floating) take -sum(w * target' * logp) with
    target' = target * (1 - ls) + ls / C, and their mean divides by the element count N*d1*...
    Works from opset 9 (SoftmaxCrossEntropyLoss is opset 12).
    """
    x = _accumulating(g, self)
    rank, axis, count = _class_layout(x)
    log_probs = h.softmax(g, x, axis, log=True, rank=rank)
    weights = None
    if weight is not None:
        weights = g.op("Reshape", h.cast(g, weight, x.dtype), g.constant(_class_shape(rank, axis, count)))
    if h.is_floating(target):
        probs = h.cast(g, target, x.dtype)
        if label_smoothing > 0:
            probs = g.op(
                "Add",
                g.op("Mul", probs, h.scalar_like(g, 1.0 - label_smoothing, x)),
                h.scalar_like(g, label_smoothing / count, x),
            )
        terms = g.op("Mul", log_probs, probs)
        if weights is not None:
            terms = g.op("Mul", terms, weights)
        loss = g.op("Neg", h.reduce(g, "ReduceSum", terms, [axis], False))
        if reduction == _REDUCTION_MEAN:
            elements = _reduced_count(g, x, None)
            total = h.reduce(g, "ReduceSum", loss, None, False)
            if isinstance(elements, int):
                out = g.op("Div", total, h.scalar_like(g, elements / count, x))
            else:
                out = g.op("Div", g.op("Mul", total, h.scalar_like(g, count, x)), h.cast(g, elements, x.dtype))
        else:
            out = _reduce_loss(g, loss, reduction, None)
        return h.cast(g, out, self.dtype)
    nll, class_weight, ignored = _nll_terms(g, log_probs, target, weight, ignore_index)
    out = _reduce_loss(g, nll, reduction, class_weight)
    if label_smoothing > 0:
        terms = log_probs if weights is None else g.op("Mul", log_probs, weights)
        smooth = g.op("Neg", h.reduce(g, "ReduceSum", terms, [axis], False))
        smooth = g.op("Where", ignored, h.scalar_like(g, 0.0, x), smooth)
        smooth = _reduce_loss(g, smooth, reduction, class_weight)
        out = g.op(
            "Add",
            g.op("Mul", out, h.scalar_like(g, 1.0 - label_smoothing, x)),
            g.op("Mul", smooth, h.scalar_like(g, label_smoothing / count, x)),
        )
    return h.cast(g, out, self.dtype)


# ============================================================================================
# Recurrent layers
# ============================================================================================
# Recurrent layers become ONNX's LSTM, GRU and RNN operators (opset 7+), one per layer, so
# they stay single fused nodes in every runtime. Packed sequences travel through the graph in
# torch's own packed layout (data ``[sum(lengths), *]`` plus ``batch_sizes``), so any op the
# model applies to them stays correct; each packed value also remembers the padded tensor and
# lengths it came from (``Value.meta``), so pack -> RNN -> pad chains use the padded tensors
# directly and the packing nodes become dead and are removed.


# ============================================================================================
# Helpers
# ============================================================================================

# For each ONNX gate block, the index of the block in torch's weight layout.
_LSTM_GATES = (0, 3, 1, 2)  # torch i, f, g, o -> ONNX i, o, f, c
_GRU_GATES = (1, 0, 2)  # torch r, z, n -> ONNX z, r, h
_RNN_GATES = (0,)
_GATES = {"LSTM": _LSTM_GATES, "GRU": _GRU_GATES, "RNN_TANH": _RNN_GATES, "RNN_RELU": _RNN_GATES}
_STATES = {"LSTM": 2, "GRU": 1, "RNN_TANH": 1, "RNN_RELU": 1}

# Value.meta key: a packed value's padded (time-major) source and its int64 lengths.
_PADDED_SOURCE = "exporter.recurrent.padded_source"


# The dtype every ONNX recurrent node runs in. onnxruntime has no double LSTM/GRU/RNN (LSTM
# and GRU fail at run time with "does not support double yet", RNN has no kernel), so double
# runs in float and is cast back; float16/bfloat16 run in float too, which is what torch's
# CPU kernels accumulate in, so errors of long sequences do not compound in half precision.
_COMPUTE_DTYPE = ir.DataType.FLOAT


def _as_torch(value: Value) -> torch.Tensor:
    source = value.const_value
    if isinstance(source, tensors.TorchTensor):
        return source.raw
    return torch.from_numpy(source.numpy().copy())


def _is_zero_constant(value: Value | None) -> bool:
    return value is not None and value.const_value is not None and not bool(_as_torch(value).any())


def _rows(value: Value) -> int:
    if value.shape is None or not isinstance(value.shape[0], int):
        raise ValueError(f"recurrent weight {value.name!r} needs a static shape, got {value.shape}")
    return int(value.shape[0])


def _stack_directions(
    g: GraphContext,
    per_direction: Sequence[Sequence[Value | None]],
    order: Sequence[int],
    dtype: ir.DataType,
    rows: int,
) -> Value:
    """``[num_dir, ...]``: per direction, each part's gate blocks (dim 0) put in ONNX's order,
    parts concatenated along dim 0 (a bias is ``[b_ih, b_hh]``; a missing part is zeros of
    ``rows``). Constant weights are rearranged at export time, others with Slice/Concat."""
    gate = rows // len(order)
    parts_flat = [p for parts in per_direction for p in parts]
    if all(p is None or p.const_value is not None for p in parts_flat):
        torch_dtype = tensors.to_torch_dtype(dtype)
        sources = [[torch.zeros(rows) if part is None else _as_torch(part) for part in parts] for parts in per_direction]

        def rearranged() -> torch.Tensor:
            stacked = []
            for parts in sources:
                pieces = []
                for tensor in parts:
                    blocks = tensor.to(torch_dtype).split(gate, dim=0)
                    pieces.extend(blocks[i] for i in order)
                stacked.append(torch.cat(pieces, dim=0))
            return torch.stack(stacked, dim=0)

        first = sources[0]
        shape = torch.Size([len(sources), sum(t.shape[0] for t in first), *first[0].shape[1:]])
        if shape.numel() * torch_dtype.itemsize <= 1024:
            return g.constant(rearranged())
        # rearranged while the file is written: a large recurrent model's weights are not
        # copied during export
        name = g.unique_name(f"{parts_flat[0].name}.gates" if parts_flat[0] is not None else "recurrent")
        return g.constant(tensors.DeferredTorchTensor(rearranged, shape, torch_dtype, name=name))
    directions = []
    for parts in per_direction:
        pieces = []
        for part in parts:
            if part is None:
                pieces.append(g.constant(torch.zeros(rows, dtype=tensors.to_torch_dtype(dtype))))
                continue
            part = h.cast(g, part, dtype)
            if len(order) == 1:
                pieces.append(part)
                continue
            pieces.extend(h.slice_static(g, part, [0], [i * gate], [(i + 1) * gate]) for i in order)
        joined = pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=0)
        directions.append(h.unsqueeze(g, joined, [0]))
    return directions[0] if len(directions) == 1 else g.op("Concat", *directions, axis=0)


def _merge_directions(g: GraphContext, y: Value, num_directions: int) -> Value:
    """ONNX Y ``[seq, num_dir, batch, hidden]`` -> torch's ``[seq, batch, num_dir*hidden]``."""
    if num_directions == 1:
        return h.squeeze(g, y, [1])
    moved = g.op("Transpose", y, perm=[0, 2, 1, 3])
    return g.op("Reshape", moved, g.constant([0, 0, -1]))


def _recurrent_op(
    g: GraphContext,
    mode: str,
    x: Value,
    w: Value,
    r: Value,
    b: Value | None,
    sequence_lens: Value | None,
    initial: Sequence[Value | None],
    hidden_size: int,
    num_directions: int,
) -> tuple[Value, ...]:
    """One ONNX LSTM/GRU/RNN node; returns (Y, Y_h[, Y_c])."""
    attrs: dict[str, object] = {
        "hidden_size": hidden_size,
        "direction": "bidirectional" if num_directions == 2 else "forward",
    }
    if mode == "GRU":
        attrs["linear_before_reset"] = 1  # torch applies r after the hidden matmul and bias
    if mode == "RNN_RELU":
        attrs["activations"] = ["Relu"] * num_directions
    inputs: list[Value | None] = [x, w, r, b, sequence_lens, *initial]
    while inputs[-1] is None:
        inputs.pop()
    op_type = "LSTM" if mode == "LSTM" else mode[:3]
    return g.op(op_type, *inputs, num_outputs=1 + _STATES[mode], **attrs)


def _run_layers(
    g: GraphContext,
    mode: str,
    x: Value,
    states: Sequence[Value | None],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    sequence_lens: Value | None,
    dtype: ir.DataType,
) -> tuple[Value, list[Value]]:
    """Stacked layers over time-major ``x`` in ``dtype``; returns torch's output
    ``[seq, batch, num_dir*hidden]`` and the final states ``[num_layers*num_dir, batch, hidden]``."""
    num_directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    groups = num_layers * num_directions
    if len(params) == groups * (per + 1) and mode == "LSTM":
        return _lstm_projected(
            g, x, states, params, has_biases, num_layers, num_directions, sequence_lens, dtype
        )
    if len(params) != groups * per:
        raise ValueError(f"expected {groups * per} recurrent weights, got {len(params)}")
    order = _GATES[mode]
    finals: list[list[Value]] = [[] for _ in states]
    for layer in range(num_layers):
        group = [params[(layer * num_directions + d) * per:(layer * num_directions + d + 1) * per]
                 for d in range(num_directions)]
        rows = _rows(group[0][1])
        hidden_size = rows // len(order)
        w = _stack_directions(g, [[p[0]] for p in group], order, dtype, rows)
        r = _stack_directions(g, [[p[1]] for p in group], order, dtype, rows)
        b = _stack_directions(g, [[p[2], p[3]] for p in group], order, dtype, rows) if has_biases else None
        initial = [
            s if s is None or num_layers == 1
            else h.slice_static(g, s, [0], [layer * num_directions], [(layer + 1) * num_directions])
            for s in states
        ]
        y, *layer_states = _recurrent_op(
            g, mode, x, w, r, b, sequence_lens, initial, hidden_size, num_directions
        )
        x = _merge_directions(g, y, num_directions)
        for collected, state in zip(finals, layer_states):
            collected.append(state)
    return x, [s[0] if len(s) == 1 else g.op("Concat", *s, axis=0) for s in finals]


def _transposed(g: GraphContext, w: Value, dtype: ir.DataType) -> Value:
    """``w.T`` for a right-hand MatMul operand, folded at export time when constant."""
    if w.const_value is not None:
        return g.constant(_as_torch(w).t().contiguous().to(tensors.to_torch_dtype(dtype)))
    return g.op("Transpose", h.cast(g, w, dtype), perm=[1, 0])


def _state_slice(
    g: GraphContext, state: Value | None, index: int, batch: int | Value, size: int, dtype: ir.DataType
) -> Value:
    """Row ``index`` of a ``[layers*dirs, batch, size]`` state, or zeros when it is None."""
    if state is not None:
        return h.squeeze(g, h.slice_static(g, state, [0], [index], [index + 1]), [0])
    if isinstance(batch, int):
        return g.constant(torch.zeros(batch, size, dtype=tensors.to_torch_dtype(dtype)))
    zero = torch.zeros(1, dtype=tensors.to_torch_dtype(dtype))
    return g.op("ConstantOfShape", g.list_to_value([batch, size]), value=zero)


def _lstm_projected(
    g: GraphContext,
    x: Value,
    states: Sequence[Value | None],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    num_directions: int,
    sequence_lens: Value | None,
    dtype: ir.DataType,
) -> tuple[Value, list[Value]]:
    """LSTM with proj_size, unrolled over the (static) time steps.

    ONNX LSTM has no projection of the hidden state (h = W_hr (o * tanh(c))), so each step
    is written out: one MatMul for all input projections of a direction, then per step the
    recurrent MatMul, the gates and the projection. Needs a sequence length known at export.
    With sequence_lens (packed input) a step past a sequence's length keeps its state and
    outputs zeros, which also makes the reverse direction start at each sequence's end.
    """
    steps = h.dim_size(g, x, 0)
    if not isinstance(steps, int):
        raise ValueError("LSTM with proj_size needs a static sequence length (it is unrolled)")
    batch = h.dim_size(g, x, 1)
    per = 5 if has_biases else 3
    finals_h: list[Value] = []
    finals_c: list[Value] = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            index = layer * num_directions + direction
            w_ih, w_hh, *biases, w_hr = params[index * per:(index + 1) * per]
            hidden = _rows(w_hh) // 4
            projection = _rows(w_hr)
            inputs = g.op("MatMul", x, _transposed(g, w_ih, dtype))  # [T, B, 4H]
            if biases:
                b_ih, b_hh = biases
                if b_ih.const_value is not None and b_hh.const_value is not None:
                    bias = g.constant((_as_torch(b_ih) + _as_torch(b_hh)).to(tensors.to_torch_dtype(dtype)))
                else:
                    bias = g.op("Add", h.cast(g, b_ih, dtype), h.cast(g, b_hh, dtype))
                inputs = g.op("Add", inputs, bias)
            recurrent = _transposed(g, w_hh, dtype)
            project = _transposed(g, w_hr, dtype)
            h_t = _state_slice(g, states[0], index, batch, projection, dtype)
            c_t = _state_slice(g, states[1], index, batch, hidden, dtype)
            ys: list[Value | None] = [None] * steps
            order = range(steps - 1, -1, -1) if direction == 1 else range(steps)
            for t in order:
                step = h.squeeze(g, h.slice_static(g, inputs, [0], [t], [t + 1]), [0])
                gates = g.op("Add", step, g.op("MatMul", h_t, recurrent))
                i, f, cell, o = (
                    h.slice_static(g, gates, [1], [k * hidden], [(k + 1) * hidden]) for k in range(4)
                )
                c_next = g.op(
                    "Add",
                    g.op("Mul", g.op("Sigmoid", f), c_t),
                    g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cell)),
                )
                h_next = g.op("MatMul", g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c_next)), project)
                if sequence_lens is None:
                    h_t, c_t, ys[t] = h_next, c_next, h_next
                    continue
                inside = h.unsqueeze(g, g.op("Less", g.constant(t, ir.DataType.INT32), sequence_lens), [1])
                h_t = g.op("Where", inside, h_next, h_t)
                c_t = g.op("Where", inside, c_next, c_t)
                ys[t] = g.op("Where", inside, h_next, h.scalar_like(g, 0, h_next))
            outputs.append(g.op("Concat", *(h.unsqueeze(g, y, [0]) for y in ys), axis=0))
            finals_h.append(h.unsqueeze(g, h_t, [0]))
            finals_c.append(h.unsqueeze(g, c_t, [0]))
        x = outputs[0] if num_directions == 1 else g.op("Concat", *outputs, axis=2)
    return x, [g.op("Concat", *finals_h, axis=0), g.op("Concat", *finals_c, axis=0)]


def _check_dropout(dropout: float, train: bool, num_layers: int) -> None:
    if train and dropout > 0 and num_layers > 1:
        raise ValueError("dropout between recurrent layers in training mode cannot be exported")


def _prepare_states(g: GraphContext, states: Sequence[Value], dtype: ir.DataType) -> list[Value | None]:
    """Initial states in ``dtype``; all-zero constants (torch's default) are left out, which
    ONNX reads as zeros."""
    return [None if _is_zero_constant(s) else h.cast(g, s, dtype) for s in states]


def _iota(g: GraphContext, n: int | Value) -> Value:
    """``[0, 1, ..., n-1]`` as int64. Range needs opset 11; below, NonZero of a ones vector
    gives the same indices."""
    if isinstance(n, int):
        return g.constant(torch.arange(n, dtype=torch.int64))
    n = h.cast(g, n, ir.DataType.INT64)
    if g.opset >= 11:
        scalar = g.op("Reshape", n, g.constant(torch.tensor([], dtype=torch.int64)))
        return g.op("Range", g.constant(0), scalar, g.constant(1))
    ones = g.op(
        "ConstantOfShape", g.op("Reshape", n, g.constant([1])), value=torch.tensor([1], dtype=torch.int64)
    )
    return h.squeeze(g, g.op("NonZero", ones), [0])


def _valid_mask(g: GraphContext, steps: int | Value, lengths: Value) -> Value:
    """``[steps, batch]`` bool: time step t is inside sequence b."""
    return g.op(
        "Less", h.unsqueeze(g, _iota(g, steps), [1]), h.unsqueeze(g, lengths, [0])
    )


def _exclusive_cumsum(g: GraphContext, x: Value) -> Value:
    """Exclusive prefix sums of a 1-D int64 tensor. CumSum needs opset 11; below, a
    strictly-lower-triangular mask selects the earlier entries for a ReduceSum."""
    if g.opset >= 11:
        return g.op("CumSum", x, g.constant(0), exclusive=1)
    index = _iota(g, _length(g, x))
    earlier = g.op("Less", h.unsqueeze(g, index, [0]), h.unsqueeze(g, index, [1]))
    picked = g.op("Where", earlier, h.unsqueeze(g, x, [0]), h.scalar_like(g, 0, x))
    return h.reduce(g, "ReduceSum", picked, [1], keepdims=False)


def _length(g: GraphContext, x: Value) -> int | Value:
    """Length of a 1-D tensor whose size is data-dependent (batch_sizes has max(lengths)
    entries): read at run time unless the tensor is a constant, since the traced static
    shape only holds for the example lengths."""
    if x.const_value is not None:
        return int(x.const_value.shape[0])
    return g.op("Gather", g.op("Shape", x), g.constant(0), axis=0)


def _broadcast_mask(g: GraphContext, mask: Value, rank: int) -> Value:
    return h.unsqueeze(g, mask, list(range(2, rank))) if rank > 2 else mask


def _fill_outside(g: GraphContext, mask: Value, x: Value, fill: float, like: Value) -> Value:
    """``x`` where ``mask``, else ``fill``. onnxruntime's Where has no bool kernel, so bool
    tensors use And/Or instead."""
    if like.dtype == ir.DataType.BOOL:
        return g.op("Or", g.op("Not", mask), x) if fill else g.op("And", mask, x)
    return g.op("Where", mask, x, h.scalar_like(g, fill, like))



def _pack(g: GraphContext, padded: Value, lengths: Value, rank: int) -> tuple[Value, Value]:
    """Time-major ``[T, B, *]`` + sorted int64 lengths -> torch's (data, batch_sizes).

    Row-major over ``[T, B]``, the valid positions are already in packed order because the
    lengths are sorted in decreasing order; Compress keeps exactly those rows. batch_sizes
    drops the all-padding steps at the end (it has max(lengths) entries).
    """
    mask = _valid_mask(g, h.dim_size(g, padded, 0), lengths)
    shape = h.static_shape(padded)
    if shape is not None:
        flat_shape = g.constant([-1, *shape[2:]])
    else:
        flat_shape = g.op(
            "Concat", g.constant([-1]), h.slice_static(g, g.op("Shape", padded), [0], [2], [rank]), axis=0
        )
    rows = g.op("Reshape", padded, flat_shape)
    data = g.op("Compress", rows, g.op("Reshape", mask, g.constant([-1])), axis=0)
    counts = h.reduce(g, "ReduceSum", h.cast(g, mask, ir.DataType.INT64), [1], keepdims=False)
    batch_sizes = g.op("Compress", counts, g.op("Greater", counts, g.constant(0)), axis=0)
    data.meta[_PADDED_SOURCE] = (padded, lengths)
    return data, batch_sizes


def _unpack_recurrent(
    g: GraphContext, data: Value, batch_sizes: Value, steps: int | Value | None
) -> tuple[Value, Value]:
    """torch's (data, batch_sizes) -> (time-major padded tensor, int64 lengths).

    With ``steps`` None the padded tensor may hold extra steps and garbage past each length
    (an RNN given sequence_lens ignores both); otherwise it has ``steps`` steps and zeros
    past each length. Packed values made here keep their padded source and skip the Gathers.
    """
    rank = _rank(data, "a sequence tensor") + 1
    source = data.meta.get(_PADDED_SOURCE)
    if source is not None:
        padded, lengths = source
        if steps is None:
            return padded, lengths
        available = h.dim_size(g, padded, 0)
        if isinstance(steps, int) and isinstance(available, int) and steps <= available:
            if steps < available:
                padded = h.slice_static(g, padded, [0], [0], [steps])
        else:
            index = _iota(g, steps)
            limit = available if isinstance(available, Value) else g.constant(available)
            index = g.op("Where", g.op("Less", index, limit), index, g.constant(0))
            padded = g.op("Gather", padded, index, axis=0)
        mask = _broadcast_mask(g, _valid_mask(g, steps, lengths), rank)
        return _fill_outside(g, mask, padded, 0, data), lengths

    batch_sizes = h.cast(g, batch_sizes, ir.DataType.INT64)
    total = _length(g, batch_sizes)
    steps = total if steps is None else steps
    batch = g.op("Gather", batch_sizes, g.constant(0), axis=0)
    batch_index = _iota(g, batch)
    inside = g.op("Greater", h.unsqueeze(g, batch_sizes, [1]), h.unsqueeze(g, batch_index, [0]))
    lengths = h.reduce(g, "ReduceSum", h.cast(g, inside, ir.DataType.INT64), [0], keepdims=False)
    mask = _valid_mask(g, steps, lengths)
    time_index = _iota(g, steps)
    limit = total if isinstance(total, Value) else g.constant(total)
    time_index = g.op("Where", g.op("Less", time_index, limit), time_index, g.constant(0))
    offsets = g.op("Gather", _exclusive_cumsum(g, batch_sizes), time_index, axis=0)
    index = g.op("Add", h.unsqueeze(g, offsets, [1]), h.unsqueeze(g, batch_index, [0]))
    index = g.op("Where", mask, index, g.constant(0))
    padded = g.op("Gather", data, index, axis=0)
    return _fill_outside(g, _broadcast_mask(g, mask, rank), padded, 0, data), lengths


def _rnn_input(
    g: GraphContext,
    mode: str,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, ...]:
    _check_dropout(dropout, train, num_layers)
    dtype = input.dtype
    compute = _COMPUTE_DTYPE
    x = h.cast(g, input, compute)
    if batch_first:  # the layout attribute (opset 14) is not implemented by onnxruntime
        x = g.op("Transpose", x, perm=[1, 0, 2])
    states = _prepare_states(g, hx, compute)
    y, finals = _run_layers(
        g, mode, x, states, params, has_biases, num_layers, bidirectional, None, compute
    )
    if batch_first:
        y = g.op("Transpose", y, perm=[1, 0, 2])
    return tuple(h.cast(g, v, dtype) for v in (y, *finals))


def _rnn_data(
    g: GraphContext,
    mode: str,
    data: Value,
    batch_sizes: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, ...]:
    _check_dropout(dropout, train, num_layers)
    dtype = data.dtype
    compute = _COMPUTE_DTYPE
    padded, lengths = _unpack_recurrent(g, data, batch_sizes, None)
    x = h.cast(g, padded, compute)
    sequence_lens = h.cast(g, lengths, ir.DataType.INT32)
    y, finals = _run_layers(
        g, mode, x, _prepare_states(g, hx, compute), params, has_biases, num_layers, bidirectional,
        sequence_lens, compute,
    )
    y = h.cast(g, y, dtype)
    num_directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) == num_layers * num_directions * (per + 1):  # proj_size: W_hr is last
        features = _rows(params[per]) * num_directions
    else:
        features = _rows(params[1]) // len(_GATES[mode]) * num_directions
    y.shape = ir.Shape([*(list(x.shape[:2]) if x.shape is not None else [None, None]), features])
    packed, _ = _pack(g, y, lengths, 3)
    return (packed, *(h.cast(g, v, dtype) for v in finals))


def _cell(
    g: GraphContext,
    mode: str,
    input: Value,  # noqa: A002 - schema name
    states: Sequence[Value],
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None,
    b_hh: Value | None,
) -> list[Value]:
    """One time step as a one-step ONNX LSTM/GRU/RNN node."""
    if h.rank_of(input) != 2:
        raise ValueError(f"{mode.lower()} cell input must be 2-D [batch, input], got {input.shape}")
    dtype = input.dtype
    compute = _COMPUTE_DTYPE
    order = _GATES[mode]
    rows = _rows(w_hh)
    w = _stack_directions(g, [[w_ih]], order, compute, rows)
    r = _stack_directions(g, [[w_hh]], order, compute, rows)
    b = None if b_ih is None and b_hh is None else _stack_directions(g, [[b_ih, b_hh]], order, compute, rows)
    x = h.unsqueeze(g, h.cast(g, input, compute), [0])
    initial = [None if _is_zero_constant(s) else h.unsqueeze(g, h.cast(g, s, compute), [0]) for s in states]
    _, *finals = _recurrent_op(g, mode, x, w, r, b, None, initial, rows // len(order), 1)
    return [h.cast(g, h.squeeze(g, s, [0]), dtype) for s in finals]


# ============================================================================================
# Recurrent layers
# ============================================================================================


@onnx_symbolic("aten::lstm.input")
def aten_lstm_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value, Value]:
    """lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)

    One ONNX LSTM per layer. ONNX orders the gates i, o, f, c where torch has i, f, g, o,
    and wants both biases in one [Wb, Rb] input. batch_first is a transpose on both sides
    because onnxruntime rejects the layout=1 attribute of opset 14. ONNX LSTM has no
    projection of the hidden state, so proj_size is unrolled over the time steps instead.
    """
    return _rnn_input(
        g, "LSTM", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


@onnx_symbolic("aten::gru.input")
def aten_gru_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)

    ONNX GRU orders the gates z, r, h where torch has r, z, n; torch multiplies the reset
    gate into (W_hn h + b_hn), which is ONNX's linear_before_reset=1 (the default 0 is a
    different network).
    """
    return _rnn_input(
        g, "GRU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


@onnx_symbolic("aten::rnn_tanh.input")
def aten_rnn_tanh_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"""
    return _rnn_input(
        g, "RNN_TANH", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


@onnx_symbolic("aten::rnn_relu.input")
def aten_rnn_relu_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)

    ONNX RNN with activations=Relu (one per direction).
    """
    return _rnn_input(
        g, "RNN_RELU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


# ============================================================================================
# Recurrent layers over packed sequences
# ============================================================================================


@onnx_symbolic("aten::lstm.data")
def aten_lstm_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value, Value]:
    """lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)

    The packed input is unpacked to a padded tensor and the lengths go to ONNX's
    sequence_lens, whose semantics match packing: steps past a length are skipped, the
    reverse direction starts at each sequence's last step, and Y_h/Y_c are taken at each
    length. The output is packed again.
    """
    return _rnn_data(
        g, "LSTM", data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional
    )


@onnx_symbolic("aten::gru.data")
def aten_gru_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """gru.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX GRU's sequence_lens (see lstm.data).
    """
    return _rnn_data(
        g, "GRU", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional
    )


@onnx_symbolic("aten::rnn_tanh.data")
def aten_rnn_tanh_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """rnn_tanh.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX RNN's sequence_lens (see lstm.data).
    """
    return _rnn_data(
        g, "RNN_TANH", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional
    )


@onnx_symbolic("aten::rnn_relu.data")
def aten_rnn_relu_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX RNN's sequence_lens with Relu (see lstm.data).
    """
    return _rnn_data(
        g, "RNN_RELU", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional
    )


# ============================================================================================
# Recurrent cells
# ============================================================================================


@onnx_symbolic("aten::lstm_cell")
def aten_lstm_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> tuple[Value, Value]:
    """lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)

    A one-step ONNX LSTM (gates reordered to i, o, f, c). Traced nn.LSTMCell records the
    cell's arithmetic instead; this node appears in scripted code.
    """
    h_next, c_next = _cell(g, "LSTM", input, hx, w_ih, w_hh, b_ih, b_hh)
    return h_next, c_next


@onnx_symbolic("aten::gru_cell")
def aten_gru_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor

    A one-step ONNX GRU with linear_before_reset=1, which is torch's formulation.
    """
    return _cell(g, "GRU", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


@onnx_symbolic("aten::rnn_tanh_cell")
def aten_rnn_tanh_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"""
    return _cell(g, "RNN_TANH", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


@onnx_symbolic("aten::rnn_relu_cell")
def aten_rnn_relu_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"""
    return _cell(g, "RNN_RELU", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


# ============================================================================================
# Packed sequences
# ============================================================================================


@onnx_symbolic("aten::_pack_padded_sequence")
def aten__pack_padded_sequence(
    g: GraphContext, input: Value, lengths: Value, batch_first: bool  # noqa: A002 - schema name
) -> tuple[Value, Value]:
    """_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)

    Produces torch's real packed layout (Compress of the valid steps, time-major), so ops
    applied to PackedSequence.data stay correct; batch_sizes is data-dependent (max(lengths)
    entries). The lengths must be sorted in decreasing order, as torch requires here
    (pack_padded_sequence sorts beforehand when enforce_sorted=False).
    """
    x = g.op("Transpose", input, perm=[1, 0, *range(2, _rank(input, "a sequence tensor"))]) if batch_first else input
    return _pack(g, x, h.cast(g, lengths, ir.DataType.INT64), _rank(input, "a sequence tensor"))


@onnx_symbolic("aten::_pad_packed_sequence")
def aten__pad_packed_sequence(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    batch_first: bool,
    padding_value: float,
    total_length: int | Value,
) -> tuple[Value, Value]:
    """_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, int total_length) -> (Tensor, Tensor)

    Each padded position gathers its packed row (offset of its step, an exclusive prefix
    sum of batch_sizes, plus its batch index); positions past a length get padding_value.
    """
    rank = _rank(data, "a sequence tensor") + 1
    padded, lengths = _unpack_recurrent(g, data, batch_sizes, total_length)
    if padding_value != 0:
        mask = _broadcast_mask(g, _valid_mask(g, total_length, lengths), rank)
        padded = _fill_outside(g, mask, padded, padding_value, data)
    if batch_first:
        padded = g.op("Transpose", padded, perm=[1, 0, *range(2, rank)])
    return padded, lengths
