"""None and Optional values of scripted models: ``x is None`` checks, prim::unchecked_cast, and
None flowing out of If and Loop.

ONNX idioms: a value that is None on every path or on none is decided at export time; one that
is None on some run-time path is an ONNX optional (Optional, OptionalHasElement,
OptionalGetElement; If and Loop carry optionals from opset 16), whose element type and shape
come from the paths that set it.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter.graph_context import OPTIONAL_OPSET, GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


def wrap_optional(g: GraphContext, graph: ir.Graph, position: int) -> None:
    """Make a branch's tensor output an ONNX optional holding it."""
    output = graph.outputs[position]
    node = ir.node("Optional", [output])
    node.outputs[0].name = g.unique_name("optional")
    node.outputs[0].type = ir.OptionalType(output.type)
    node.outputs[0].shape = output.shape  # the element's shape
    graph.append(node)
    graph.outputs[position] = node.outputs[0]


def element_shape(shapes: Sequence[ir.Shape | None]) -> ir.Shape | None:
    """The shape the element of an optional has on every path that sets it: the common
    shape when the paths agree, else the common rank, else unknown."""
    if not shapes or any(shape is None for shape in shapes):
        return None
    if all(shape == shapes[0] for shape in shapes):
        return shapes[0]
    if all(len(shape) == len(shapes[0]) for shape in shapes):  # type: ignore[arg-type]
        return ir.Shape([None] * len(shapes[0]))  # type: ignore[arg-type]
    return None


def absent_in_branch(condition: object) -> tuple[Value, int] | None:
    """For ``if x is not None`` / ``if x is None`` on an ONNX optional ``x``: ``x`` and the
    branch (0 then, 1 else) where it is known to be empty."""
    if not isinstance(condition, Value) or condition.producer() is None:
        return None
    producer = condition.producer()
    if producer.op_type == "OptionalHasElement":
        return producer.inputs[0], 1  # type: ignore[return-value]
    if producer.op_type == "Not" and producer.inputs[0] is not None and producer.inputs[0].producer() is not None:
        inner = producer.inputs[0].producer()
        if inner.op_type == "OptionalHasElement":
            return inner.inputs[0], 0  # type: ignore[return-value]
    return None


def _passes_through(output: Value, value: Value) -> bool:
    while output is not value:
        producer = output.producer()
        if producer is None or producer.op_type != "Identity" or producer.inputs[0] is None:
            return False
        output = producer.inputs[0]
    return True


def optional_branches(
    g: GraphContext,
    branches: list[ir.Graph],
    ts_types: list[torch._C.JitType],
    absent: tuple[Value, int] | None = None,
) -> dict[int, ir.Shape | None]:
    """An ``Optional[T]`` output that one branch leaves None (an empty optional, see
    emitter) is an ONNX optional in both branches: a tensor from the other branch is wrapped
    in Optional, and the empty one takes its element type. ``absent`` (see absent_in_branch):
    an optional passed through the branch where it is empty says nothing of the element shape
    (``if mask is not None: mask = mask.unsqueeze(0)`` keeps the new rank). Returns the
    element shape of each optional output, for the If's own outputs."""
    shapes: dict[int, ir.Shape | None] = {}
    for position, ts_type in enumerate(ts_types):
        if not isinstance(ts_type, torch._C.OptionalType):
            continue
        outputs = [graph.outputs[position] for graph in branches if position < len(graph.outputs)]
        if len(outputs) < 2 or not any(isinstance(o.type, ir.OptionalType) for o in outputs):
            continue
        element = next(
            (o.type.elem_type if isinstance(o.type, ir.OptionalType) else o.type)
            for o in sorted(outputs, key=lambda o: bool(o.meta.get("empty_optional")))
        )
        passed = [
            absent is not None and i == absent[1] and _passes_through(o, absent[0]) for i, o in enumerate(outputs)
        ]
        shape = element_shape(
            [o.shape for o, skip in zip(outputs, passed) if not o.meta.get("empty_optional") and not skip]
        )
        shapes[position] = shape
        for graph, output, skip in zip(branches, outputs, passed):
            if skip:  # empty on this path: keeps its own type
                continue
            if output.meta.get("empty_optional"):
                output.producer().attributes["type"] = ir.AttrTypeProto("type", ir.TypeAndShape(element, shape))
                output.type = ir.OptionalType(element)
            elif not isinstance(output.type, ir.OptionalType):
                wrap_optional(g, graph, position)
            graph.outputs[position].shape = shape
    return shapes


def is_optional(value: object) -> bool:
    """Whether ``value`` is an ONNX optional (None on some run-time path)."""
    return isinstance(value, Value) and isinstance(value.type, ir.OptionalType)


def optional_where_set_to_none(
    g: GraphContext, body: torch._C.Block, carried: list[object], ts_types: list[torch._C.JitType]
) -> list[object]:
    """A carried ``Optional[T]`` that starts as a tensor and that the body may set to None
    (its body output is None or Optional) is carried as an ONNX optional from the start."""
    result = list(carried)
    body_types = [v.type() for v in list(body.outputs())[1:]]
    for position, (obj, ts_type, body_type) in enumerate(zip(carried, ts_types, body_types)):
        if not isinstance(ts_type, torch._C.OptionalType) or not isinstance(obj, Value):
            continue
        if isinstance(body_type, (torch._C.NoneType, torch._C.OptionalType)) and not is_optional(obj):
            if g.opset < OPTIONAL_OPSET:
                raise ValueError(
                    f"an Optional value a loop may set to None needs opset {OPTIONAL_OPSET} or higher: ONNX "
                    f"Loop carries optional values from opset {OPTIONAL_OPSET} (exporting at opset {g.opset})"
                )
            wrapped = g.op("Optional", obj)
            wrapped.type, wrapped.shape = ir.OptionalType(ir.TensorType(obj.dtype or ir.DataType.FLOAT)), obj.shape
            result[position] = wrapped
    return result


def optional_carried(g: GraphContext, body: ir.Graph, position: int, value_in: Value, start: Value) -> None:
    """An ``Optional[T]`` carried through a Loop (it starts as None, or the body may set it
    to None): the body's output becomes an optional (a tensor is wrapped), and the element
    type and shape of the paths that set it type the empty optionals, the body input and
    what the body unwrapped from it (OptionalGetElement)."""
    output = body.outputs[1 + position]
    if not isinstance(output.type, ir.OptionalType):
        if output.dtype is None:
            raise TypeError("a loop-carried Optional value has no known element type")
        wrap_optional(g, body, 1 + position)
        output = body.outputs[1 + position]
    present = [v for v in (output, start) if not v.meta.get("empty_optional")]
    if not present:
        raise TypeError("a loop-carried Optional value that is always None has no element type")
    element = present[0].type.elem_type  # type: ignore[union-attr]
    shape = element_shape([v.shape for v in present])
    for value in (start, output):
        if value.meta.get("empty_optional"):
            value.producer().attributes["type"] = ir.AttrTypeProto("type", ir.TypeAndShape(element, shape))
    for value in (start, value_in, output):
        value.type = ir.OptionalType(element)
        value.shape = shape
    for user, _ in list(value_in.uses()):
        if user.op_type == "OptionalGetElement":
            user.outputs[0].type = element


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
            raise ValueError("isinstance of a Union of tensors and numbers computed at run time is not supported")
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
