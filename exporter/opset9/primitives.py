"""TorchScript primitives and scalars: Int/Float/Bool/IntImplicit conversions, NumToTensor, list
and tuple construction, unpacking, slicing (`l[1:]`) and concatenation (`a + b`, extend), item,
tensor queries (dim, shape, dtype, device, layout) and aliases (alias, lift, lift_fresh).

ONNX idioms: queries answer at export time when the shape or dtype is known; Python scalars stay
Python values until a symbolic needs a tensor, then become 0-d constants.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs, Quantized
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList

Value = ir.Value


@onnx_symbolic("aten::Int")
def aten_int(g: GraphContext, a: Value) -> Value:
    """Int.Tensor(Tensor a) -> int: a 0-d int64 value when only known at run time"""
    return h.cast(g, _scalar(g, a), ir.DataType.INT64)


def _scalar(g: GraphContext, a: Value) -> Value:
    """The 0-d value of a one-element tensor: Int/Float/Bool(x) of a [1] tensor is a Python
    number in torch, so ``torch.tensor([float(x)])`` has shape [1], not [1, 1]."""
    if h.rank_of(a) != 0:
        a = g.op("Reshape", a, g.constant(torch.tensor([], dtype=torch.int64)))
        a.shape = ir.Shape([])
    return a


@onnx_symbolic("aten::IntImplicit")
def aten_int_implicit(g: GraphContext, a: Value) -> Value:
    """IntImplicit(Tensor a) -> int: a 0-d tensor used where scripted code expects an int
    (`x.view(n, -1)` with a tensor `n`): a 0-d int64 value, as aten::Int gives."""
    return h.cast(g, _scalar(g, a), ir.DataType.INT64)


@onnx_symbolic("aten::Float")
def aten_float(g: GraphContext, a: Value) -> Value:
    """Float.Tensor(Tensor a) -> float"""
    return h.cast(g, _scalar(g, a), ir.DataType.DOUBLE)


@onnx_symbolic("aten::Bool")
def aten_bool(g: GraphContext, a: Value) -> Value:
    """Bool.Tensor(Tensor a) -> bool"""
    return h.cast(g, _scalar(g, a), ir.DataType.BOOL)


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


@onnx_symbolic("prim::DictConstruct")
def prim_dict_construct(g: GraphContext, *inputs: object) -> object:
    """prim::DictConstruct(k0, v0, k1, v1, ...) -> Dict: a Python dict in insertion order
    (as model outputs: one output per value, named by its key); keys must be known at export time."""
    keys, values = inputs[0::2], inputs[1::2]
    for key in keys:
        if not isinstance(key, (str, int, float, bool)):
            raise NeedsExportTimeValue(
                "a dict whose keys are computed at run time is not supported (keys must be constants)"
            )
    return dict(zip(keys, values))


def _unpack_sequence(g: GraphContext, packed: object) -> object:
    count = g.node.outputsSize() if g.node is not None else 0
    if isinstance(packed, (list, tuple)):
        if len(packed) != count:
            raise ValueError(f"unpacking {len(packed)} items into {count} values")
        return tuple(packed) if count != 1 else packed[0]
    if isinstance(packed, RuntimeList):  # the count is fixed by the TorchScript node
        items = tuple(runtime_list.at(g, packed, i) for i in range(count))
        return items if count != 1 else items[0]
    if isinstance(packed, Value):  # a run-time shape: one 0-d value per dim (static ones as ints)
        items = tuple(_shape_item(g, packed, i) for i in range(count))
        return items if count != 1 else items[0]
    raise TypeError(f"cannot unpack {type(packed).__name__}")


def _shape_item(g: GraphContext, shape: Value, index: int) -> int | Value:
    known = h.shape_item(shape, index)
    return known if known is not None else g.op("Gather", shape, g.constant(index), axis=0)


@onnx_symbolic("prim::ListUnpack")
def prim_list_unpack(g: GraphContext, *inputs: object) -> object:
    """prim::ListUnpack(list) -> (...)"""
    return _unpack_sequence(g, inputs[0])


@onnx_symbolic("prim::TupleUnpack")
def prim_tuple_unpack(g: GraphContext, *inputs: object) -> object:
    """prim::TupleUnpack(tuple) -> (...)"""
    return _unpack_sequence(g, inputs[0])


@onnx_symbolic("prim::Print")
def prim_print(g: GraphContext, *inputs: object) -> None:
    """prim::Print(...) -> (): printing is no computation of the model; it is dropped, and
    what it printed stays in the graph only if something else uses it."""
    del g, inputs


@onnx_symbolic("aten::item")
def aten_item(g: GraphContext, self: Value) -> object:
    """item(Tensor self) -> Scalar: a 0-d value; constants were folded to numbers already."""
    if h.rank_of(self) not in (0, None):
        return g.op("Reshape", self, g.constant(torch.tensor([], dtype=torch.int64)))
    return self


@onnx_symbolic("aten::alias", complex_inputs=ComplexInputs.PARTS)
def aten_alias(g: GraphContext, self: Value) -> Value:
    """alias(Tensor(a) self) -> Tensor(a)"""
    return self


@onnx_symbolic("aten::lift")
def aten_lift(g: GraphContext, self: Value) -> Value:
    """lift(Tensor self) -> Tensor (functionalization marker)"""
    return self


@onnx_symbolic("aten::lift_fresh")
def aten_lift_fresh(g: GraphContext, self: Value) -> Value:
    """lift_fresh(Tensor(a) self) -> Tensor(a)

    Marks a tensor freshly made by torch.tensor() (BigBird's index tables): an identity.
    """
    return self


@onnx_symbolic("aten::is_floating_point")
def aten_is_floating_point(g: GraphContext, self: Value) -> bool:
    """is_floating_point(Tensor self) -> bool: decided by the dtype at export time."""
    if self.dtype is None:
        raise NeedsExportTimeValue("is_floating_point needs the input dtype")
    return h.is_floating(self)


@onnx_symbolic("aten::is_pinned")
def aten_is_pinned(g: GraphContext, self: Value, device: object = None) -> bool:
    """is_pinned(Tensor self, Device? device=None) -> bool: ONNX has no pinned memory."""
    return False


@onnx_symbolic("aten::dim", quantized=Quantized.INTEGERS, complex_inputs=ComplexInputs.SHAPE)
def aten_dim(g: GraphContext, self: Value) -> int:
    """dim(Tensor self) -> int: the rank, a constant."""
    return h.known_rank(self, "dim")


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
    if isinstance(x, torch.Tensor):  # a tensor constant (folded at export time)
        return tensors.DTYPE_TO_SCALAR_TYPE[x.dtype]
    if not isinstance(x, Value):
        raise TypeError(f"prim::dtype needs a tensor, got {type(x).__name__}")
    if x.dtype is None:
        raise NeedsExportTimeValue("prim::dtype needs the input dtype")
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
    take item by item. One of run-time length is a run-time list in the stacked form (the
    tensor itself, in the list's int64 or double items): ``torch.split(x, lengths.tolist())``.
    """
    x = inputs[0]
    assert isinstance(x, Value)
    rank = h.known_rank(x, "prim::tolist")
    if rank == 0:
        return x
    kind = g.node.output().type()
    while isinstance(kind, torch._C.ListType):
        kind = kind.getElementType()
    dtype = runtime_list.SCALAR_LIST_ITEMS.get(kind.str(), x.dtype)
    rows_known = x.shape is not None and isinstance(x.shape[0], int)
    if rank in (1, 2) and (h.static_shape(x) is None if rank == 1 else not rows_known):
        # a run-time list in the stacked form; a 2-d tensor is a list of rows (lists)
        items = RuntimeList(stacked=h.cast(g, x, dtype), item_dtype=dtype)
        items.item_rank = rank - 1
        items.nested = rank == 2
        return items
    if rank == 1:
        length = h.static_dim(x, 0, "prim::tolist")
        return [g.op("Gather", x, g.constant(i), axis=0) for i in range(length)]
    if rank == 2:  # rows known at export time, each a list of its items
        rows = [g.op("Gather", x, g.constant(i), axis=0) for i in range(h.static_dim(x, 0, "prim::tolist"))]
        return [prim_tolist(g, row) for row in rows]
    raise ValueError("prim::tolist of a tensor with more than two dims is not supported")


def _scalar_extreme(g: GraphContext, inputs: tuple[object, ...], pick_max: bool) -> object:
    if len(inputs) == 1 and isinstance(inputs[0], RuntimeList):  # max(l) of a list built at run time
        if inputs[0].item_rank not in (0, None):
            raise ValueError("max/min of a list of tensors is not supported (TorchScript takes numbers here)")
        stacked = runtime_list.tensor_of(g, inputs[0])
        return h.reduce(g, "ReduceMax" if pick_max else "ReduceMin", stacked, [0], False)
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


@onnx_symbolic("prim::max", torch_folds_constants=True)
def prim_max(g: GraphContext, *inputs: object) -> object:
    """prim::max(a, b) / prim::max(list) -> scalar: Python max when constant"""
    return _scalar_extreme(g, inputs, True)


@onnx_symbolic("prim::min", torch_folds_constants=True)
def prim_min(g: GraphContext, *inputs: object) -> object:
    """prim::min(a, b) / prim::min(list) -> scalar: Python min when constant"""
    return _scalar_extreme(g, inputs, False)


@onnx_symbolic("prim::abs")
def prim_abs(g: GraphContext, *inputs: object) -> object:
    """prim::abs.int(int a) -> int (also .float, .Scalar, Tensor): Python's abs() of a number,
    folded when known at export time."""
    (a,) = inputs
    if isinstance(a, (bool, int, float)):
        return abs(a)
    assert isinstance(a, Value)
    return g.op("Abs", a)


@onnx_symbolic("prim::convert_element_type")
def prim_convert_element_type(g: GraphContext, *inputs: object) -> object:
    """prim::convert_element_type(Tensor self, ScalarType dtype) -> Tensor: a Cast"""
    x, dtype = inputs[0], inputs[1]
    assert isinstance(x, Value)
    if isinstance(dtype, int):
        dtype = tensors.scalar_type_to_dtype(dtype)
    assert isinstance(dtype, torch.dtype)
    return h.cast(g, x, h.ir_dtype(dtype))


@onnx_symbolic("aten::slice.t")
def aten_slice_t(
    g: GraphContext,
    l: object,  # noqa: E741 - schema name
    start: int | Value | None = None,
    end: int | Value | None = None,
    step: int = 1,
) -> object:
    """slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]: `l[1:]`, `l[::2]`.

    An export-time list with bounds known at export time is sliced in Python; a run-time
    list (or run-time bounds, from opset 11) slices the stacked items (runtime_list.py)."""
    if isinstance(l, (list, tuple)) and not isinstance(start, Value) and not isinstance(end, Value):
        return list(l[start:end:step])
    if isinstance(l, (list, tuple)):
        l = runtime_list.from_items(g, list(l))  # noqa: E741
    if isinstance(l, Value):  # a shape computed at run time: a 1-d int64 tensor
        first = start if start is not None else (h.INT64_MAX if step < 0 else 0)
        last = end if end is not None else (-h.INT64_MAX - 1 if step < 0 else h.INT64_MAX)
        if isinstance(first, int) and isinstance(last, int):
            return h.slice_static(g, l, [0], [first], [last], [step])
        return h.slice_dynamic(g, l, 0, first, last, step)
    if not isinstance(l, RuntimeList):
        raise ValueError(f"slicing {type(l).__name__} is not supported")
    return runtime_list.slice_list(g, l, start, end, step)


def _list_operand(g: GraphContext, value: object, what: str) -> list | RuntimeList:  # type: ignore[type-arg]
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Value):  # a shape computed at run time
        value = RuntimeList(stacked=value, item_dtype=value.dtype)
        value.item_rank = 0
    if not isinstance(value, (list, RuntimeList)):
        raise ValueError(f"{what} of {type(value).__name__} is not supported")
    return value


def _is_empty_list(value: object) -> bool:
    return isinstance(value, (list, tuple)) and not value


@onnx_symbolic("aten::add.t")
def aten_add_t(g: GraphContext, a: object, b: object) -> object:
    """add.t(t[] a, t[] b) -> t[]: list concatenation, a new list (`[] + l` copies `l`)."""
    if isinstance(a, Value) or isinstance(b, Value):  # a run-time shape and ints: one 1-d int64 value
        parts = [v if isinstance(v, Value) else g.list_to_value(list(v)) for v in (a, b) if not _is_empty_list(v)]
        return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)
    first, second = _list_operand(g, a, "list +"), _list_operand(g, b, "list +")
    if isinstance(first, list) and isinstance(second, list):
        return first + second
    return runtime_list.concat(g, first, second)


@onnx_symbolic("aten::extend", mutates_list=True)
def aten_extend(g: GraphContext, self: object, other: object) -> object:
    """extend.t(t[](a!) self, t[] other) -> (): in place, on the export-time or run-time list.

    An int list held as one value (a shape) stays one: the Concat of both rebinds every name
    of it, as item assignment does."""
    if isinstance(self, Value) and not isinstance(other, RuntimeList):
        g.replace(self, aten_add_t(g, self, other))
        return None
    target, items = _list_operand(g, self, "extend"), _list_operand(g, other, "extend")
    if isinstance(target, list) and isinstance(items, list):
        target.extend(items)
        return None
    result = runtime_list.concat(g, target, items)
    if isinstance(self, RuntimeList):
        runtime_list.assign(self, result)
    else:  # the export-time list becomes a run-time one for every value bound to it
        g.replace(self, result)
    return None


# Scalar and builtin primitives of scripted code (ranges, lengths, flags that are constant in an
# exported graph, strings that only feed messages).


@onnx_symbolic("aten::len.Tensor")
def aten_len_tensor(g: GraphContext, t: Value) -> object:
    """len.Tensor(Tensor t) -> int"""
    return h.dim_size(g, t, 0)


@onnx_symbolic("aten::__range_length")
def aten___range_length(g: GraphContext, lo: int | Value, hi: int | Value, step: int | Value) -> object:
    """__range_length(int lo, int hi, int step) -> int: trip count of range(lo, hi, step)."""
    values = [v if isinstance(v, Value) else g.constant(v) for v in (lo, hi, step)]
    lo_v, hi_v, step_v = (h.cast(g, v, ir.DataType.INT64) for v in values)
    span = g.op("Sub", hi_v, lo_v)
    # ceil(span / step), clamped at 0: (span + step - sign(step)) / step, which truncates like floor
    # whenever the result is positive (span and step of one sign), for either sign of step
    count = g.op("Div", g.op("Sub", g.op("Add", span, step_v), g.op("Sign", step_v)), step_v)
    return h.max_min(g, count, g.constant(0), larger=True)


@onnx_symbolic("aten::__derive_index")
def aten___derive_index(g: GraphContext, index: int | Value, start: int | Value, step: int | Value) -> object:
    """__derive_index(int index, int start, int step) -> int: start + index * step."""
    values = [v if isinstance(v, Value) else g.constant(v) for v in (index, start, step)]
    index_v, start_v, step_v = (h.cast(g, v, ir.DataType.INT64) for v in values)
    return g.op("Add", start_v, g.op("Mul", index_v, step_v))


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


@onnx_symbolic("prim::TupleIndex")
def prim_tuple_index(g: GraphContext, *inputs: object) -> object:
    """prim::TupleIndex(Any tup, int i) -> Any"""
    container, index = inputs
    if not isinstance(index, int):
        raise NeedsExportTimeValue("indexing a tuple with a run-time index is not supported")
    return container[index]


@onnx_symbolic("aten::len.str")
def aten_len_str(g: GraphContext, s: str) -> object:
    """len.str(str s) -> int"""
    return len(s)


@onnx_symbolic("aten::str")
def aten_str(g: GraphContext, elem: object) -> str:
    """str(t elem) -> str: of a value known at export time (torchvision's SSDLite names its
    feature maps ``str(i)`` in an unrolled loop); strings do not exist at run time in ONNX."""
    if isinstance(elem, (bool, int, float, str)):
        return str(elem)
    raise NeedsExportTimeValue("str() of a value computed at run time is not supported (ONNX has no run-time strings)")
