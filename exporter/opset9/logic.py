"""Comparison and selection: eq/ne/lt/le/gt/ge, where (and its one-argument nonzero form), masked_fill, clamp, NaN/inf
classification, isclose/allclose, isin, elementwise maximum/minimum, logical ops.

ONNX idioms: Equal has no float kernel before opset 11 and Max/Min no integer one before 12, so
comparisons go through opset-9 idioms (``h.equal``, ``h.comparable``); fmax/fmin and
nan_to_num keep torch's NaN rules with explicit IsNaN masks.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion, Result
from exporter.opset9 import bitwise
from exporter.registry import onnx_symbolic

Value = ir.Value


def filled_like(g: GraphContext, x: Value, value: bool) -> Value:
    """A bool tensor of ``x``'s shape filled with ``value`` (isnan of an integer tensor...)."""
    return g.op("ConstantOfShape", h.shape_of(g, x), value=torch.tensor([value]))


def largest_finite(g: GraphContext, x: Value) -> Value:
    return h.scalar_like(g, torch.finfo(tensors.to_torch_dtype(x.dtype)).max, x)


def is_inf(g: GraphContext, x: Value) -> Value:
    """|x| > the largest finite value. Needs no IsInf (opset 10, and without a float16 kernel
    in onnxruntime before opset 20) and is false for NaN, as isinf is."""
    if not h.is_floating(x):
        return filled_like(g, x, False)
    return g.op("Greater", g.op("Abs", x), largest_finite(g, x))


@onnx_symbolic("aten::eq", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_eq(g: GraphContext, self: Value, other: Value) -> Value:
    """eq.Tensor(Tensor self, Tensor other) -> Tensor"""
    return h.equal(g, self, other)


@onnx_symbolic("aten::ne", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_ne(g: GraphContext, self: Value, other: Value) -> Value:
    """ne.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Not", h.equal(g, self, other))


def _list_value(g: GraphContext, items: object, dtype: ir.DataType) -> Value:
    """A list operand of a list comparison as a 1-d tensor: a run-time shape, or the items."""
    if isinstance(items, Value):
        return h.cast(g, items, dtype)
    assert isinstance(items, (list, tuple))
    return runtime_list.list_item_value(g, list(items), dtype)


def _lists_equal(g: GraphContext, a: object, b: object, dtype: ir.DataType) -> object:
    """``a == b`` of two lists of numbers (``mask.size() == other.size()``): decided at
    export time when the items are, or when the lengths differ; else Equal of the items,
    all of them. Lists are equal only at equal lengths, so lengths known only at run time
    (a list built by a loop) are refused rather than compared elementwise."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        if not any(isinstance(v, Value) for v in (*a, *b)):
            return list(a) == list(b)
    a_v, b_v = _list_value(g, a, dtype), _list_value(g, b, dtype)
    lengths = [v.shape[0] if v.shape is not None and len(v.shape) == 1 else None for v in (a_v, b_v)]
    if not all(isinstance(n, int) for n in lengths):
        raise NeedsExportTimeValue("comparing lists whose lengths are only known at run time is not supported")
    if lengths[0] != lengths[1]:
        return False
    if lengths[0] == 0:
        return True
    same = h.cast(g, g.op("Equal", a_v, b_v), ir.DataType.INT64)
    return h.cast(g, h.reduce(g, "ReduceMin", same, [0], False), ir.DataType.BOOL)


@onnx_symbolic("aten::eq.int_list")
@onnx_symbolic("aten::eq.float_list")
@onnx_symbolic("aten::eq.bool_list")
def aten_eq_list(g: GraphContext, a: object, b: object) -> object:
    """eq.int_list(int[] a, int[] b) -> bool: one bool for the whole lists (Equal alone
    compared them item by item, a tensor that then failed to become a bool)."""
    kind = g.node.inputsAt(0).type().getElementType().str()
    return _lists_equal(g, a, b, runtime_list.SCALAR_LIST_ITEMS.get(kind, ir.DataType.INT64))


@onnx_symbolic("aten::ne.int_list")
@onnx_symbolic("aten::ne.float_list")
@onnx_symbolic("aten::ne.bool_list")
def aten_ne_list(g: GraphContext, a: object, b: object) -> object:
    """ne.int_list(int[] a, int[] b) -> bool"""
    equal = aten_eq_list(g, a, b)
    return (not equal) if isinstance(equal, bool) else g.op("Not", equal)


def _bool_operands(g: GraphContext, a: Value, b: Value) -> tuple[Value, Value]:
    if a.dtype == ir.DataType.BOOL:
        return h.cast(g, a, ir.DataType.INT32), h.cast(g, b, ir.DataType.INT32)
    return h.comparable(g, a), h.comparable(g, b)


@onnx_symbolic("aten::gt", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_gt(g: GraphContext, self: Value, other: Value) -> Value:
    """gt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Greater", *_bool_operands(g, self, other))


@onnx_symbolic("aten::lt", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_lt(g: GraphContext, self: Value, other: Value) -> Value:
    """lt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return g.op("Less", *_bool_operands(g, self, other))


def _or_equal(g: GraphContext, strict_op: str, a: Value, b: Value) -> Value:
    """a <= b as not(a > b), except that NaN compares false (torch semantics)."""
    a, b = _bool_operands(g, a, b)
    opposite = "Greater" if strict_op == "Less" else "Less"
    result = g.op("Not", g.op(opposite, a, b))
    if h.is_floating(a):
        result = g.op("And", result, g.op("Not", h.any_nan(g, a, b)))
    return result


@onnx_symbolic("aten::ge", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_ge(g: GraphContext, self: Value, other: Value) -> Value:
    """ge.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _or_equal(g, "Greater", self, other)


@onnx_symbolic("aten::le", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_le(g: GraphContext, self: Value, other: Value) -> Value:
    """le.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _or_equal(g, "Less", self, other)


@onnx_symbolic("aten::where.self", promotion=Promotion(("self", "other")))
@onnx_symbolic("aten::where.ScalarOther", promotion=Promotion(("self", "other")))
@onnx_symbolic("aten::where.ScalarSelf", promotion=Promotion(("self", "other")))
@onnx_symbolic("aten::where.Scalar", promotion=Promotion(("self", "other")))
def aten_where(g: GraphContext, condition: Value, self: Value, other: Value) -> Value:
    """where.self(Tensor condition, Tensor self, Tensor other) -> Tensor (and the Scalar overloads)

    Registered per overload: the bare ``aten::where`` is the one-argument form below.
    """
    return h.where(g, h.cast(g, condition, ir.DataType.BOOL), self, other)


@onnx_symbolic("aten::where")
def aten_where_condition(g: GraphContext, condition: Value) -> list[Value]:
    """where(Tensor condition) -> Tensor[]

    torch.where(condition) is nonzero(condition, as_tuple=True): one 1-d int64 index tensor per
    dim, the rows of NonZero's [rank, n] result (NonZero has no float16 kernel: upcast).
    """
    x = condition
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        x = h.cast(g, x, ir.DataType.FLOAT)
    rows = g.op("NonZero", x)
    out = []
    for i in range(h.known_rank(condition, "where(condition)")):
        row = g.op("Gather", rows, g.constant(i), axis=0)
        row.dtype, row.shape = ir.DataType.INT64, ir.Shape([None])
        out.append(row)
    return out


@onnx_symbolic("aten::masked_fill", promotion=Promotion(("value",), Result.SELF))
def aten_masked_fill(g: GraphContext, self: Value, mask: Value, value: Value) -> Value:
    """masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor"""
    return h.where(g, h.cast(g, mask, ir.DataType.BOOL), h.cast(g, value, self.dtype), self)


@onnx_symbolic("aten::clamp", promotion=Promotion(("self", "min", "max")))
def aten_clamp(
    g: GraphContext, self: Value, min: float | Value | None = None, max: float | Value | None = None
) -> Value:  # noqa: A002 - schema names
    """clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"""
    return h.clip(g, self, min, max)


@onnx_symbolic("aten::clamp_min", promotion=Promotion(("self", "min")))
def aten_clamp_min(g: GraphContext, self: Value, min: float | Value) -> Value:  # noqa: A002
    """clamp_min(Tensor self, Scalar min) -> Tensor"""
    return h.clip(g, self, min, None)


@onnx_symbolic("aten::clamp_max", promotion=Promotion(("self", "max")))
def aten_clamp_max(g: GraphContext, self: Value, max: float | Value) -> Value:  # noqa: A002
    """clamp_max(Tensor self, Scalar max) -> Tensor"""
    return h.clip(g, self, None, max)


def _is_nan(g: GraphContext, x: Value) -> Value:
    if not h.is_floating(x):
        return filled_like(g, x, False)
    return g.op("IsNaN", x)


def _pick(g: GraphContext, a: Value, b: Value, larger: bool) -> Value:
    """max(a, b) / min(a, b) with torch's NaN propagation. Max/Min ignore or mishandle NaN
    depending on the kernel and have no integer kernels before opset 12 (Greater + Where
    there); narrow integers compute in int32 (no int16 Max or Where kernels)."""
    if a.dtype == ir.DataType.BOOL:
        return g.op("Or" if larger else "And", a, b)
    if not h.is_floating(a):
        compute = bitwise.compute_dtype(a.dtype)
        wide_a, wide_b = h.cast(g, a, compute), h.cast(g, b, compute)
        return h.cast(g, h.max_min(g, wide_a, wide_b, larger=larger), a.dtype)
    picked = g.op("Max" if larger else "Min", a, b)
    return g.op("Where", g.op("IsNaN", a), a, g.op("Where", g.op("IsNaN", b), b, picked))


def _pick_ignoring_nan(g: GraphContext, a: Value, b: Value, larger: bool) -> Value:
    """fmax/fmin: a NaN operand loses to a number (NaN only when both are NaN)."""
    if not h.is_floating(a):
        return _pick(g, a, b, larger)
    picked = g.op("Max" if larger else "Min", a, b)
    return g.op("Where", g.op("IsNaN", a), b, g.op("Where", g.op("IsNaN", b), a, picked))


@onnx_symbolic("aten::isnan")
def aten_isnan(g: GraphContext, self: Value) -> Value:
    """isnan(Tensor self) -> Tensor (integers and bools are never NaN)"""
    return _is_nan(g, self)


@onnx_symbolic("aten::isinf")
def aten_isinf(g: GraphContext, self: Value) -> Value:
    """isinf(Tensor self) -> Tensor: |x| > max finite, at opset 9 (IsInf is opset 10)"""
    return is_inf(g, self)


def _is_infinity(g: GraphContext, self: Value, sign: float) -> Value:
    if not h.is_floating(self):
        return filled_like(g, self, False)
    return h.equal(g, self, h.scalar_like(g, sign * float("inf"), self))


@onnx_symbolic("aten::isposinf")
def aten_isposinf(g: GraphContext, self: Value) -> Value:
    """isposinf(Tensor self) -> Tensor: x == +inf (false for integers)"""
    return _is_infinity(g, self, 1.0)


@onnx_symbolic("aten::isneginf")
def aten_isneginf(g: GraphContext, self: Value) -> Value:
    """isneginf(Tensor self) -> Tensor: x == -inf (false for integers)"""
    return _is_infinity(g, self, -1.0)


@onnx_symbolic("aten::isfinite")
def aten_isfinite(g: GraphContext, self: Value) -> Value:
    """isfinite(Tensor self) -> Tensor: |x| <= max finite, false for NaN"""
    if not h.is_floating(self):
        return filled_like(g, self, True)
    return g.op("Not", g.op("Or", g.op("IsNaN", self), is_inf(g, self)))


def _close(g: GraphContext, a: Value, b: Value, rtol: float, atol: float, equal_nan: bool) -> Value:
    """torch's isclose: equal, or (with equal_nan) both NaN, or a finite ``|a - b|`` within
    ``atol + |rtol * b|``. Like torch, integers subtract exactly and compare with the tolerance
    in float32, bools count as float32; half and bfloat16 compute in float32 (torch rounds
    the tolerance to half: a difference only exactly at the boundary)."""
    close = h.equal(g, a, b)
    if equal_nan and h.is_floating(a):
        close = g.op("Or", close, g.op("And", g.op("IsNaN", a), g.op("IsNaN", b)))
    if rtol == 0 and atol == 0:
        return close
    if a.dtype in (ir.DataType.BOOL, ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        a, b = h.cast(g, a, ir.DataType.FLOAT), h.cast(g, b, ir.DataType.FLOAT)
    wide = b if h.is_floating(b) else h.cast(g, b, ir.DataType.FLOAT)
    allowed = g.op("Add", h.scalar_like(g, atol, wide), g.op("Abs", g.op("Mul", h.scalar_like(g, rtol, wide), wide)))
    actual = g.op("Abs", g.op("Sub", a, b))
    within = h.less_or_equal(g, h.cast(g, actual, wide.dtype), allowed)
    if h.is_floating(a):
        within = g.op("And", within, aten_isfinite(g, actual))
    return g.op("Or", close, within)


@onnx_symbolic("aten::isclose", promotion=Promotion(("self", "other"), Result.BOOL))
def aten_isclose(
    g: GraphContext, self: Value, other: Value, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Value:
    """isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor"""
    return _close(g, self, other, rtol, atol, equal_nan)


@onnx_symbolic("aten::allclose")
def aten_allclose(
    g: GraphContext, self: Value, other: Value, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Value:
    """allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool

    Scripted code reads it as a bool: a 0-d ONNX bool, true when every (broadcast) pair is
    close. (A trace records no node: the bool is a constant of the example.)"""
    close = h.cast(g, _close(g, self, other, rtol, atol, equal_nan), ir.DataType.INT32)
    return h.cast(g, h.reduce(g, "ReduceMin", close, None, False), ir.DataType.BOOL)


def _common_operands(
    g: GraphContext, a: Value | float | int | bool, b: Value | float | int | bool
) -> tuple[Value, Value]:
    """Both operands of isin as tensors of torch's promoted dtype (either may be a number)."""

    def example(x: Value | float | int | bool) -> torch.Tensor | float | int | bool:
        return torch.empty((), dtype=tensors.to_torch_dtype(x.dtype)) if isinstance(x, ir.Value) else x

    dtype = h.ir_dtype(torch.result_type(example(a), example(b)))

    def operand(x: Value | float | int | bool) -> Value:
        if isinstance(x, ir.Value):
            return h.cast(g, x, dtype)
        return g.constant(torch.tensor(x, dtype=tensors.to_torch_dtype(dtype)))

    return operand(a), operand(b)


def _isin(g: GraphContext, elements: Value | float | int, tests: Value | float | int, invert: bool) -> Value:
    """Each element against every test element (an elements x tests comparison, in the promoted
    dtype): a count of equal ones above 0, so no test elements gives false and NaN is in
    nothing, as torch. (``assume_unique`` only lets torch pick a faster algorithm.)"""
    x, tests = _common_operands(g, elements, tests)
    rank = h.known_rank(x, "isin")
    flat = g.op("Reshape", tests, g.constant([-1]))
    hits = h.cast(g, h.equal(g, h.unsqueeze(g, x, [rank]), flat), ir.DataType.INT32)
    found = g.op(
        "Greater", h.reduce(g, "ReduceSum", hits, [rank], False), g.constant(torch.tensor(0, dtype=torch.int32))
    )
    return g.op("Not", found) if invert else found


@onnx_symbolic("aten::isin.Tensor_Tensor")
def aten_isin(
    g: GraphContext, elements: Value, test_elements: Value, assume_unique: bool = False, invert: bool = False
) -> Value:
    """isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor"""
    return _isin(g, elements, test_elements, invert)


@onnx_symbolic("aten::isin.Tensor_Scalar")
def aten_isin_tensor_scalar(
    g: GraphContext,
    elements: Value,
    test_element: Value | float | int,
    assume_unique: bool = False,
    invert: bool = False,
) -> Value:
    """isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) -> Tensor"""
    return _isin(g, elements, test_element, invert)


@onnx_symbolic("aten::isin.Scalar_Tensor")
def aten_isin_scalar_tensor(
    g: GraphContext,
    element: Value | float | int,
    test_elements: Value,
    assume_unique: bool = False,
    invert: bool = False,
) -> Value:
    """isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor"""
    return _isin(g, element, test_elements, invert)


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
    top = largest_finite(g, x)
    out = g.op("Where", g.op("Greater", x, top), h.scalar_like(g, info.max if posinf is None else posinf, x), out)
    bottom = h.scalar_like(g, info.min, x)
    return g.op("Where", g.op("Less", x, bottom), h.scalar_like(g, info.min if neginf is None else neginf, x), out)


@onnx_symbolic("aten::maximum", promotion=Promotion(("self", "other")))
def aten_maximum(g: GraphContext, self: Value, other: Value) -> Value:
    """maximum(Tensor self, Tensor other) -> Tensor (NaN propagates, as in torch)"""
    return _pick(g, self, other, larger=True)


@onnx_symbolic("aten::minimum", promotion=Promotion(("self", "other")))
def aten_minimum(g: GraphContext, self: Value, other: Value) -> Value:
    """minimum(Tensor self, Tensor other) -> Tensor (NaN propagates, as in torch)"""
    return _pick(g, self, other, larger=False)


@onnx_symbolic("aten::max.other", promotion=Promotion(("self", "other")))
def aten_max_other(g: GraphContext, self: Value, other: Value) -> Value:
    """max.other(Tensor self, Tensor other) -> Tensor: maximum"""
    return _pick(g, self, other, larger=True)


@onnx_symbolic("aten::min.other", promotion=Promotion(("self", "other")))
def aten_min_other(g: GraphContext, self: Value, other: Value) -> Value:
    """min.other(Tensor self, Tensor other) -> Tensor: minimum"""
    return _pick(g, self, other, larger=False)


@onnx_symbolic("aten::fmax", promotion=Promotion(("self", "other")))
def aten_fmax(g: GraphContext, self: Value, other: Value) -> Value:
    """fmax(Tensor self, Tensor other) -> Tensor: a NaN operand yields the other one"""
    return _pick_ignoring_nan(g, self, other, larger=True)


@onnx_symbolic("aten::fmin", promotion=Promotion(("self", "other")))
def aten_fmin(g: GraphContext, self: Value, other: Value) -> Value:
    """fmin(Tensor self, Tensor other) -> Tensor: a NaN operand yields the other one"""
    return _pick_ignoring_nan(g, self, other, larger=False)


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
