"""None and Optional values of scripted models: ``x is None`` checks, prim::unchecked_cast, and
None flowing out of If and Loop.

ONNX idioms: a value that is None on every path or on none is decided at export time; one that
is None on some run-time path is an ONNX optional (Optional, OptionalHasElement,
OptionalGetElement; If and Loop carry optionals from opset 16), whose element type and shape
come from the paths that set it.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter.control_flow.optionals import is_optional
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("prim::unchecked_cast", checks_optional=True)
def prim_unchecked_cast(g: GraphContext, *inputs: object) -> object:
    """prim::unchecked_cast(t x) -> t: a type refinement (Optional[T] -> T), no computation;
    an ONNX optional (None on some run-time path) is unwrapped with OptionalGetElement."""
    (value,) = inputs
    if is_optional(value):
        assert isinstance(value, Value) and isinstance(value.type, ir.OptionalType)
        element = g.op("OptionalGetElement", value)
        element.type = value.type.elem_type
        if element.shape is None and value.shape is not None:  # an optional's shape is its element's
            element.shape = value.shape
        return element
    return value


def _identical(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a is b


def _has_element(g: GraphContext, a: object, b: object) -> Value | None:
    """For ``x is None`` on an ONNX optional: whether it holds a value (OptionalHasElement)."""
    for value, other in ((a, b), (b, a)):
        if other is None and is_optional(value):
            present = g.op("OptionalHasElement", value)
            present.dtype, present.shape = ir.DataType.BOOL, ir.Shape([])
            return present
    return None


@onnx_symbolic("aten::__is__", checks_optional=True)
def aten___is__(g: GraphContext, self: object, obj: object) -> object:
    """__is__(t1 self, t2 obj) -> bool: `x is None` is decided at export time, since a value
    in the exported graph is either always present or always absent, except for an ONNX
    optional (None on some run-time path), asked at run time."""
    present = _has_element(g, self, obj)
    if present is not None:
        return g.op("Not", present)
    return _identical(self, obj)


@onnx_symbolic("aten::__isnot__", checks_optional=True)
def aten___isnot__(g: GraphContext, self: object, obj: object) -> object:
    """__isnot__(t1 self, t2 obj) -> bool"""
    present = _has_element(g, self, obj)
    if present is not None:
        return present
    return not _identical(self, obj)


def _holds(obj: object, ts_type: torch._C.JitType, static: torch._C.JitType) -> bool:
    """Whether ``obj`` (what a value of TorchScript type ``static`` was emitted as) is a
    ``ts_type``. Inside a Union or Optional the emitted object tells which member it is:
    a graph value is a tensor unless the static type also allows a number."""
    if static.isSubtypeOf(ts_type):
        return True
    if obj is None:
        return isinstance(ts_type, torch._C.NoneType)
    kinds: list[tuple[type | tuple[type, ...], type]] = [
        ((list,), torch._C.ListType),
        ((tuple,), torch._C.TupleType),
        ((dict,), torch._C.DictType),
        ((bool,), torch._C.BoolType),
        ((str,), torch._C.StringType),
    ]
    for python_types, jit_type in kinds:
        if isinstance(obj, python_types):
            return isinstance(ts_type, jit_type)
    if isinstance(obj, (int, float)):
        return isinstance(ts_type, torch._C.IntType if isinstance(obj, int) else torch._C.FloatType)
    if type(obj).__name__ == "RuntimeList":
        return isinstance(ts_type, torch._C.ListType)
    if isinstance(obj, (Value, torch.Tensor)):
        members = static.containedTypes() if isinstance(static, (torch._C.UnionType, torch._C.OptionalType)) else []
        if any(isinstance(m, (torch._C.IntType, torch._C.FloatType, torch._C.BoolType)) for m in members):
            raise NeedsExportTimeValue(
                "isinstance of a Union of tensors and numbers computed at run time is not supported"
            )
        return isinstance(ts_type, torch._C.TensorType)
    return False


@onnx_symbolic("prim::isinstance")
def prim_isinstance(g: GraphContext, *inputs: object) -> object:
    """prim::isinstance[types=[...]](Any x) -> bool: decided at export time, where every
    value has one type (``isinstance(lengths, Tensor)`` on a ``Union[Tensor, List[int]]``
    argument, as torch.nn.utils.rnn.pack_padded_sequence checks)."""
    (obj,) = inputs
    static = g.node.inputsAt(0).type()
    return any(_holds(obj, ts_type, static) for ts_type in g.node.tys("types"))
