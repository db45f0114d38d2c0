"""Tensor creation and casts: to/type_as, zeros/ones/full/empty and their _like/new_ forms,
arange, eye, tril/triu_indices, linspace, windows, scalar_tensor/tensor/as_tensor.

ONNX idioms: sizes known at export time become constants, run-time sizes go through
ConstantOfShape (or Expand for run-time fill values); Range exists only from opset 11, so
arange below it is a NonZero of a ones vector scaled and shifted (``h.arange``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion, Result
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList

Value = ir.Value


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
    return g.op("ConstantOfShape", shape, value=torch.tensor([value], dtype=tensors.to_torch_dtype(dtype)))


@onnx_symbolic("aten::zeros")
def aten_zeros(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _filled(g, h.shape_value(g, size), 0, _creation_dtype(dtype))


@onnx_symbolic("aten::ones")
def aten_ones(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """ones(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_value(g, size), 1, _creation_dtype(dtype))


@onnx_symbolic("aten::full")
def aten_full(
    g: GraphContext,
    size: Sequence[int] | Value,
    fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> Value:
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    fill = None if isinstance(fill_value, Value) else fill_value
    return _filled(g, h.shape_value(g, size), fill_value, _creation_dtype(dtype, fill))


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
def aten_new_zeros(
    g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None
) -> Value:
    """new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_value(g, size), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_ones")
def aten_new_ones(g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_value(g, size), 1, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_full")
def aten_new_full(
    g: GraphContext,
    self: Value,
    size: Sequence[int] | Value,
    fill_value: bool | int | float | Value,
    dtype: torch.dtype | None = None,
) -> Value:
    """new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    return _filled(g, h.shape_value(g, size), fill_value, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::new_empty")
def aten_new_empty(
    g: GraphContext, self: Value, size: Sequence[int] | Value, dtype: torch.dtype | None = None
) -> Value:
    """new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor (zeros:
    the values are unspecified in torch)"""
    return _filled(g, h.shape_value(g, size), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::empty")
def aten_empty(g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None) -> Value:
    """empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor (zeros)"""
    return _filled(g, h.shape_value(g, size), 0, _creation_dtype(dtype))


@onnx_symbolic("aten::empty_like")
def aten_empty_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None) -> Value:
    """empty_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor (zeros)"""
    return _filled(g, h.shape_of(g, self), 0, h.ir_dtype(dtype) if dtype else self.dtype)


@onnx_symbolic("aten::zero")
def aten_zero(g: GraphContext, self: Value) -> Value:
    """zero(Tensor self) -> Tensor (from zero_)"""
    return _filled(g, h.shape_of(g, self), 0, self.dtype)


@onnx_symbolic("aten::fill", promotion=Promotion(("value",), Result.SELF))
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


def _out_dtype(out: object, dtype: torch.dtype | None) -> torch.dtype | None:
    """The result dtype of an ``out=`` variant: the out tensor's (its values are replaced)."""
    if isinstance(out, torch.Tensor):
        return out.dtype
    if isinstance(out, Value) and out.dtype is not None:
        return tensors.to_torch_dtype(out.dtype)
    return dtype


@onnx_symbolic("aten::arange")
def aten_arange(g: GraphContext, end: float | int | Value, dtype: torch.dtype | None = None) -> Value:
    """arange(Scalar end, *, ScalarType? dtype=None, ...) -> Tensor"""
    return h.arange(g, 0, end, 1, dtype)


@onnx_symbolic("aten::arange.start")
def aten_arange_start(
    g: GraphContext, start: float | int | Value, end: float | int | Value, dtype: torch.dtype | None = None
) -> Value:
    """arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, ...) -> Tensor"""
    return h.arange(g, start, end, 1, dtype)


@onnx_symbolic("aten::arange.start_step")
def aten_arange_start_step(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value = 1,
    dtype: torch.dtype | None = None,
) -> Value:
    """arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, ...) -> Tensor"""
    return h.arange(g, start, end, step, dtype)


@onnx_symbolic("aten::arange.out")
def aten_arange_out(g: GraphContext, end: float | int | Value, out: object = None) -> Value:
    """arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!): the result in out's dtype."""
    return h.arange(g, 0, end, 1, _out_dtype(out, None))


@onnx_symbolic("aten::arange.start_out")
def aten_arange_start_out(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value = 1,
    out: object = None,
) -> Value:
    """arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)"""
    return h.arange(g, start, end, step, _out_dtype(out, None))


@onnx_symbolic("aten::eye")
def aten_eye(g: GraphContext, n: int | Value, m: int | Value | None = None, dtype: torch.dtype | None = None) -> Value:
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


def _triangle_indices(
    g: GraphContext, row: int | Value, col: int | Value, offset: int | Value, dtype: torch.dtype | None, upper: bool
) -> Value:
    """The (2, count) coordinates of a triangle of a row x col grid, row by row as torch lists
    them: a constant for sizes known at export time, else NonZero of the triangle's mask
    (col - row >= offset above, <= below), which lists coordinates in the same order."""
    out_dtype = dtype if dtype is not None else torch.int64
    if all(isinstance(v, int) for v in (row, col, offset)):
        make = torch.triu_indices if upper else torch.tril_indices
        return g.constant(make(row, col, offset, dtype=out_dtype))
    rows, cols = h.iota(g, row), h.iota(g, col)
    columns_minus_rows = g.op("Sub", h.unsqueeze(g, cols, [0]), h.unsqueeze(g, rows, [1]))
    k = g.constant(offset) if isinstance(offset, int) else h.cast(g, offset, ir.DataType.INT64)
    mask = g.op("Not", g.op("Less" if upper else "Greater", columns_minus_rows, k))
    return h.cast(g, g.op("NonZero", mask), h.ir_dtype(out_dtype))


@onnx_symbolic("aten::triu_indices")
def aten_triu_indices(
    g: GraphContext, row: int | Value, col: int | Value, offset: int | Value = 0, dtype: torch.dtype | None = None
) -> Value:
    """triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, ...) -> Tensor"""
    return _triangle_indices(g, row, col, offset, dtype, upper=True)


@onnx_symbolic("aten::tril_indices")
def aten_tril_indices(
    g: GraphContext, row: int | Value, col: int | Value, offset: int | Value = 0, dtype: torch.dtype | None = None
) -> Value:
    """tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, ...) -> Tensor"""
    return _triangle_indices(g, row, col, offset, dtype, upper=False)


@onnx_symbolic("aten::_shape_as_tensor")
def aten__shape_as_tensor(g: GraphContext, self: Value) -> Value:
    """_shape_as_tensor(Tensor self) -> Tensor (int64)"""
    return g.op("Shape", self)


@onnx_symbolic("aten::_reshape_from_tensor")
def aten__reshape_from_tensor(g: GraphContext, self: Value, shape: Value) -> Value:
    """_reshape_from_tensor(Tensor self, Tensor shape) -> Tensor (Reshape wants int64)"""
    return g.op("Reshape", self, h.cast(g, shape, ir.DataType.INT64))


@onnx_symbolic("aten::_dim_arange", torch_shape_read_below=11)
def aten__dim_arange(g: GraphContext, like: Value, dim: int) -> Value:
    """_dim_arange(Tensor like, int dim) -> Tensor: arange(like.size(dim)) in int64"""
    return h.iota(g, h.dim_size(g, like, dim))


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
        return h.cast(g, h.reshape(g, v, []), double) if isinstance(v, Value) else g.constant(float(v), double)

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
        index = h.cast(g, h.iota(g, steps), double)
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
    length = h.cast(g, h.reshape(g, window_length, []), ir.DataType.INT64)
    n = h.cast(g, h.iota(g, length), double)
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
def aten_scalar_tensor(g: GraphContext, s: float | int | bool | Value, dtype: torch.dtype | None = None) -> Value:
    """scalar_tensor(Scalar s, *, ScalarType? dtype=None, ...) -> Tensor (default dtype float)"""
    out_dtype = h.ir_dtype(dtype if dtype is not None else torch.get_default_dtype())
    if isinstance(s, Value):
        return h.cast(g, h.reshape(g, s, []), out_dtype)
    return g.constant(torch.tensor(s, dtype=tensors.to_torch_dtype(out_dtype)))


def _scalar_dtype(x: Value) -> ir.DataType:
    """torch's dtype for a tensor made from a Python scalar: float -> default dtype."""
    if h.is_floating(x):
        return h.ir_dtype(torch.get_default_dtype())
    return ir.DataType.BOOL if x.dtype == ir.DataType.BOOL else ir.DataType.INT64


def _tensor_from_data(g: GraphContext, data: object, dtype: torch.dtype | None, scalar: bool = False) -> Value:
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
    if isinstance(data, RuntimeList):
        return _tensor_from_runtime_list(g, data, dtype)
    if isinstance(data, (bool, int, float)):
        return g.constant(torch.tensor(data, dtype=dtype))
    if isinstance(data, (list, tuple)):
        if all(not isinstance(d, (Value, list, tuple)) for d in data):
            items = [d.item() if isinstance(d, torch.Tensor) else d for d in data]
            return g.constant(torch.tensor(items, dtype=dtype))
        parts = [_tensor_from_data(g, d, None, scalar=True) for d in data]
        kinds = {p.dtype for p in parts}
        if dtype is None:
            if any(tensors.is_floating_dtype(k) for k in kinds):
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


def _tensor_from_runtime_list(g: GraphContext, data: RuntimeList, dtype: torch.dtype | None) -> Value:
    """torch.tensor of a list known only at run time: ints give int64, bools bool, Python
    floats (doubles in the graph) the default dtype, as torch does."""
    stacked = runtime_list.tensor_of(g, data)
    if dtype is not None:
        target = h.ir_dtype(dtype)
    elif stacked.dtype is not None and tensors.is_floating_dtype(stacked.dtype):
        target = h.ir_dtype(torch.get_default_dtype())
    elif stacked.dtype == ir.DataType.BOOL:
        target = ir.DataType.BOOL
    else:
        target = ir.DataType.INT64
    return h.cast(g, stacked, target)


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
def aten_as_tensor(g: GraphContext, data: object = None, t: object = None, dtype: torch.dtype | None = None) -> Value:
    """as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a); .list; .int/.float/.bool"""
    if data is not None:
        return _tensor_from_data(g, data, dtype)
    return _tensor_from_data(g, t, dtype, scalar=True)
