"""Activations: ReLU family, sigmoid/tanh, GELU, SiLU, softmax, ELU family, shrink and
threshold ops, GLU, PReLU, RReLU.

ONNX idioms: onnxruntime has no double kernel for Elu/Selu/Softplus/HardSigmoid, so those compute
in float32 (``h.float_kernel``); GELU lowers to the node shapes onnxruntime fuses into one
Gelu/FastGelu kernel (Mul by 1/sqrt(2), not Div by sqrt(2)); softplus keeps torch's threshold
with a Greater+Where pair so large inputs stay exact.
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.op_facts import QPARAMS_0_TO_1, QPARAMS_NEG1_TO_1
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::relu")
def aten_relu(g: GraphContext, self: Value) -> Value:
    """relu(Tensor self) -> Tensor

    Integer tensors keep their dtype as in torch: Relu has integer kernels only from opset 14
    (and none for unsigned), so they take max(x, 0) as a Where at every opset.
    """
    if self.dtype is not None and not h.is_floating(self):
        zero = h.scalar_like(g, 0, self)
        return g.op("Where", g.op("Greater", self, zero), self, zero)
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


@onnx_symbolic("aten::sigmoid", quantized=QPARAMS_0_TO_1)
def aten_sigmoid(g: GraphContext, self: Value) -> Value:
    """sigmoid(Tensor self) -> Tensor"""
    return g.op("Sigmoid", self)


@onnx_symbolic("aten::tanh", quantized=QPARAMS_NEG1_TO_1)
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
    """log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor

    A half-precision dtype is computed in float and rounded once at the end, as torch's CPU
    kernel accumulates in float (a half LogSoftmax differs by several ulps).
    """
    if dtype is None:
        return h.softmax(g, self, dim, log=True)
    target = h.ir_dtype(dtype)
    if target in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, h.cast(g, self, target), ir.DataType.FLOAT)
        return h.cast(g, h.softmax(g, x, dim, log=True), target)
    return h.softmax(g, h.cast(g, self, target), dim, log=True)


@onnx_symbolic("aten::_log_softmax")
def aten__log_softmax(g: GraphContext, self: Value, dim: int, half_to_float: bool) -> Value:
    """_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    x = h.cast(g, self, ir.DataType.FLOAT) if half_to_float else self
    return h.softmax(g, x, dim, log=True)


def _keep_nan(g: GraphContext, x: Value, out: Value) -> Value:
    """``out`` where ``x`` is a number, NaN where it is NaN (ops that map NaN to a number)."""
    if not h.is_floating(x):
        return out
    return g.op("Where", g.op("IsNaN", x), x, out)


def _softplus(g: GraphContext, x: Value) -> Value:
    """log(1 + exp(x)) without overflow. onnxruntime's Softplus is stable for float and half;
    other dtypes use relu(x) + log1p(exp(-|x|))."""
    if x.dtype in (ir.DataType.FLOAT, ir.DataType.FLOAT16):
        return g.op("Softplus", x)
    tail = h.log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x))))
    return g.op("Add", g.op("Relu", x), tail)


def _halves(g: GraphContext, x: Value, dim: int) -> tuple[Value, Value]:
    """``x`` split in two equal halves along ``dim``."""
    size = h.dim_size(g, x, dim)
    if isinstance(size, int):
        return h.split_static(g, x, [size // 2, size // 2], dim)
    return h.split_equal(g, x, 2, dim)


@onnx_symbolic("aten::log_sigmoid")
def aten_log_sigmoid(g: GraphContext, self: Value) -> Value:
    """log_sigmoid(Tensor self) -> Tensor

    min(x, 0) - log1p(exp(-|x|)): Log(Sigmoid(x)) (torch's exporter) is -inf once sigmoid
    underflows (x < -88 in float32).
    """
    x = self
    negative_part = g.op("Neg", g.op("Relu", g.op("Neg", x)))
    return g.op("Sub", negative_part, h.log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x)))))


@onnx_symbolic("aten::elu")
def aten_elu(g: GraphContext, self: Value, alpha: float = 1, scale: float = 1, input_scale: float = 1) -> Value:
    """elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor

    torch applies input_scale to the negative branch only (x > 0 ? scale * x :
    scale * alpha * (exp(x * input_scale) - 1)), which Elu cannot express; Elu is used when
    input_scale is 1.
    """
    x = self
    if input_scale == 1:
        out = h.float_kernel(g, "Elu", x, alpha=float(alpha))
        return out if scale == 1 else g.op("Mul", out, h.scalar_like(g, scale, x))
    one = h.scalar_like(g, 1.0, x)
    expm1 = g.op("Sub", g.op("Exp", g.op("Mul", x, h.scalar_like(g, input_scale, x))), one)
    negative = g.op("Mul", expm1, h.scalar_like(g, alpha * scale, x))
    positive = g.op("Mul", x, h.scalar_like(g, scale, x))
    return g.op("Where", g.op("Greater", x, h.scalar_like(g, 0.0, x)), positive, negative)


@onnx_symbolic("aten::selu")
def aten_selu(g: GraphContext, self: Value) -> Value:
    """selu(Tensor self) -> Tensor: Selu's default alpha/gamma are torch's constants"""
    return h.float_kernel(g, "Selu", self)


@onnx_symbolic("aten::celu")
def aten_celu(g: GraphContext, self: Value, alpha: float = 1.0) -> Value:
    """celu(Tensor self, Scalar alpha=1.) -> Tensor

    alpha * elu(x / alpha): the same function from Elu (opset 6), where Celu needs opset 12
    and only takes float32.
    """
    if alpha == 1:
        return h.float_kernel(g, "Elu", self, alpha=1.0)
    a = h.scalar_like(g, alpha, self)
    return g.op("Mul", h.float_kernel(g, "Elu", g.op("Div", self, a), alpha=1.0), a)


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
    return h.float_kernel(g, "HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)


@onnx_symbolic("aten::hardsigmoid", quantized=QPARAMS_0_TO_1)
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
    weight gets trailing unit axes, and a 0-d input's single weight becomes 0-d. onnxruntime has PRelu for float and half only: other
    dtypes select with Where.
    """
    rank = h.rank_of(self)
    w_rank = h.rank_of(weight)
    if rank is not None and rank >= 3 and w_rank == 1:
        weight = h.unsqueeze(g, weight, list(range(1, rank - 1)))
    elif rank == 0 and w_rank == 1:  # one weight for a 0-d input: broadcasting must keep it 0-d
        weight = h.squeeze(g, weight, [0])
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
        return h.float_kernel(g, "LeakyRelu", self, alpha=(lower + upper) / 2)
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
