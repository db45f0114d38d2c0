"""The nodes ops become outside ONNX's default domain, per ``operator_export_type``
(:mod:`exporter.operator_export_types`):

- ``ONNX``: every op through its symbolic; ops without one fail the export, all listed in one
  :class:`~exporter.errors.UnsupportedOperatorError`.
- ``ONNX_ATEN``: every ``aten::`` op is one ``ATen`` node of domain ``org.pytorch.aten`` whose
  ``operator`` and ``overload_name`` attributes name the op for a runtime that calls PyTorch
  (onnxruntime's training builds); other ops go through their symbolics.
- ``ONNX_ATEN_FALLBACK``: only ``aten::`` ops without a symbolic at the target opset are ATen nodes.
- ``ONNX_FALLTHROUGH``: an op without a symbolic is kept as a node of its own domain, named by
  the op (``aten::`` ops in ``org.pytorch.aten``, ``mylib::op`` in ``mylib``), as torch writes
  it; so is a custom autograd Function kept as a unit (``autograd_inlining=False``): a
  ``prim::PythonOp`` node in domain ``prim``.

Both node forms take the TorchScript node's inputs in schema order, as torch writes them:
tensors as they are, numbers as 0-d constants (int64, double, bool), strings as string
constants, lists of numbers as 1-D constants, lists of tensors as one ``SequenceConstruct``
(a ``prim::ListConstruct`` node below opset 11, which has no sequences), ``None`` as a missing
input. A result that is a list of tensors the graph unpacks is one output per item (an ATen
node says how many in ``_outputs``). Two differences from torch's nodes, both where torch's
are wrong: ``overload_name`` is the node's own schema overload (torch's pre-passes turn numbers
into tensors first, so its schema match often finds none and writes ""), and a string is a
``Constant`` whose ``value`` is a 0-d string tensor (torch writes a string-typed ``value``
attribute, which ONNX does not define). Number conversions (``aten::Int``, ``aten::Float``, ...)
are no ATen nodes: where numbers are tensors they are no-ops, which torch erases before it
makes ATen nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter.graph_context import GraphContext
from exporter.operator_export_types import OperatorExportTypes
from exporter.runtime_list import RuntimeList
from exporter.ts_graph import is_tensor_list_type, schema_of

__all__ = [
    "ATEN_DOMAIN",
    "GenericEmission",
    "generic_emission",
    "passes_python_ops_through",
    "aten_node",
    "passthrough_node",
    "python_op_node",
]


# The domain of ATen nodes and of aten ops passed through, as torch names it.
ATEN_DOMAIN = "org.pytorch.aten"
# Where each TorchScript namespace's ops go when passed through (other namespaces keep their name).
_DOMAINS = {"aten": ATEN_DOMAIN}

# How a node is emitted without its symbolic: (g, node, inputs) -> what a symbolic returns.
GenericEmission = Callable[[GraphContext, torch._C.Node, Sequence[Any]], Any]


# Conversions between numbers and tensors: no-ops once numbers are tensors (torch's
# EraseNumberTypes removes them before its ATen nodes are made), exported by their symbolics.
_NUMBER_CONVERSIONS = frozenset(
    {"aten::Int", "aten::Float", "aten::Bool", "aten::IntImplicit", "aten::FloatImplicit", "aten::ScalarImplicit"}
)


def generic_emission(kind: str, has_symbolic: bool, export_type: OperatorExportTypes) -> GenericEmission | None:
    """The node form ``export_type`` gives an op of ``kind`` (None: its symbolic, or no export)."""
    aten = kind.startswith("aten::") and kind not in _NUMBER_CONVERSIONS
    if aten and export_type is OperatorExportTypes.ONNX_ATEN:
        return aten_node
    if has_symbolic:
        return None
    if aten and export_type is OperatorExportTypes.ONNX_ATEN_FALLBACK:
        return aten_node
    if export_type is OperatorExportTypes.ONNX_FALLTHROUGH:
        return passthrough_node
    return None


def passes_python_ops_through(export_type: OperatorExportTypes) -> bool:
    """Whether a custom autograd Function kept as a unit, without a symbolic, is exported (as a
    ``prim::PythonOp`` node) rather than refused; torch passes it through only under FALLTHROUGH."""
    return export_type is OperatorExportTypes.ONNX_FALLTHROUGH


def aten_node(g: GraphContext, node: torch._C.Node, inputs: Sequence[Any]) -> Any:
    """``aten::name.overload(...)`` as ``ATen(...)`` in org.pytorch.aten, with attributes
    ``operator`` (the name, an in-place op's trailing ``_`` dropped, as torch writes it) and
    ``overload_name``."""
    name = node.kind().split("::", 1)[1]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    schema = schema_of(node)
    attributes: dict[str, Any] = {"operator": name, "overload_name": schema.overload_name if schema else ""}
    counts = _output_counts(node)
    if any(count is not None for count in counts):
        attributes["_outputs"] = sum(1 if count is None else count for count in counts)
    return _emit(g, node, "ATen", ATEN_DOMAIN, node_inputs(g, node, inputs), attributes, counts)


def passthrough_node(g: GraphContext, node: torch._C.Node, inputs: Sequence[Any]) -> Any:
    """``namespace::name(...)`` as node ``name`` of the namespace's domain, with the TorchScript
    node's own attributes (ONNX_FALLTHROUGH)."""
    namespace, name = node.kind().split("::", 1)
    attributes = {key: value for key in node.attributeNames() if (value := _attribute(node, key)) is not None}
    return _emit(
        g,
        node,
        name,
        _DOMAINS.get(namespace, namespace),
        node_inputs(g, node, inputs),
        attributes,
        _output_counts(node),
    )


def python_op_node(g: GraphContext, node: torch._C.Node, inputs: Sequence[Any]) -> Any:
    """A custom autograd Function's call kept as a unit: ``prim::PythonOp`` in domain ``prim``
    taking its tensor inputs, with torch's attributes ``inplace`` and ``module`` and, beyond
    torch's, ``name`` (the Function's class), without which the node does not say which
    Function it calls. Its other arguments are not in the node, as in torch's."""
    values = [g.constant(obj) if isinstance(obj, (torch.Tensor, int, float)) else obj for obj in inputs]
    attributes = {"inplace": node.i("inplace"), "module": node.s("module"), "name": node.pyname()}
    output = node.output()
    ts_type = output.type()
    count = len(ts_type.elements()) if isinstance(ts_type, torch._C.TupleType) else 1
    results = g.op("PythonOp", *values, domain="prim", num_outputs=count, attrs=attributes)
    if count == 1:
        return results
    for value, element in zip(results, ts_type.elements()):
        _type_from(value, element)
    return tuple(results)


def node_inputs(g: GraphContext, node: torch._C.Node, inputs: Sequence[Any]) -> list[ir.Value | None]:
    """The node's inputs as ONNX values, in the forms the module docstring lists."""
    return [_input_value(g, ts_value.type(), obj) for ts_value, obj in zip(node.inputs(), inputs)]


def _input_value(g: GraphContext, ts_type: torch._C.JitType, obj: Any) -> ir.Value | None:
    if obj is None or isinstance(obj, ir.Value):
        return obj
    if isinstance(obj, RuntimeList):
        return runtime_list.sequence_of(g, obj)
    if isinstance(obj, (str, torch.device)):
        return _string(g, str(obj))
    if isinstance(obj, bool):
        return g.constant(obj, ir.DataType.BOOL)
    if isinstance(obj, int):
        return g.constant(obj, ir.DataType.INT64)
    if isinstance(obj, float):
        return g.constant(obj, ir.DataType.DOUBLE)
    if isinstance(obj, torch.Tensor):
        return g.constant(obj)
    if isinstance(obj, (list, tuple)):
        if isinstance(ts_type, torch._C.OptionalType):
            ts_type = ts_type.getElementType()
        if isinstance(ts_type, torch._C.ListType) and _holds_tensors(ts_type.getElementType()):
            return _tensor_list(g, obj)
        return _number_list(g, obj)
    raise TypeError(f"an input of type {ts_type} ({type(obj).__name__}) has no ONNX form")


def _holds_tensors(element: torch._C.JitType) -> bool:
    """Whether a list's items are tensors (``Tensor[]``, or ``Tensor?[]`` as index takes)."""
    if isinstance(element, torch._C.OptionalType):
        element = element.getElementType()
    return isinstance(element, torch._C.TensorType)


def _string(g: GraphContext, text: str) -> ir.Value:
    """A 0-d string constant (``Constant``'s ``value``, a string tensor: defined at every opset)."""
    value = g.op("Constant", value=ir.tensor(text))
    value.dtype, value.shape = ir.DataType.STRING, ir.Shape([])
    return value


def _tensor_list(g: GraphContext, items: Sequence[Any]) -> ir.Value:
    """A list of tensors: one SequenceConstruct (opset 11+); below 11, which has no sequences,
    the ``prim::ListConstruct`` node torch writes there."""
    if any(item is None for item in items):
        raise TypeError("a list holding None has no ONNX form: an ONNX sequence holds tensors only")
    values = [item if isinstance(item, ir.Value) else g.constant(item) for item in items]
    if g.opset < runtime_list.SEQUENCE_OPSET:
        return g.op("ListConstruct", *values, domain="prim")
    return g.op("SequenceConstruct", *values)


def _number_list(g: GraphContext, items: Sequence[Any]) -> ir.Value:
    """A list of numbers: a 1-D constant, or (with items known only at run time) their concatenation."""
    if any(isinstance(item, ir.Value) for item in items):
        if all(isinstance(item, (int, ir.Value)) for item in items):
            return g.list_to_value(list(items))
        raise TypeError("a list of numbers known only at run time must hold ints")
    flat = [item.item() if isinstance(item, torch.Tensor) else item for item in items]
    if flat and all(isinstance(item, bool) for item in flat):
        return g.constant(torch.tensor(flat, dtype=torch.bool))
    if all(isinstance(item, int) for item in flat):
        return g.constant(torch.tensor(flat, dtype=torch.int64))
    return g.constant(torch.tensor(flat, dtype=torch.float64))


def _output_counts(node: torch._C.Node) -> list[int | None]:
    """Per output of ``node``: None for one ONNX output, or the item count of a list of tensors
    the graph unpacks (known only from its prim::ListUnpack users)."""
    counts: list[int | None] = []
    for output in node.outputs():
        if not is_tensor_list_type(output.type()):
            counts.append(None)
            continue
        users = {use.user for use in output.uses()}
        if not users or any(user.kind() != "prim::ListUnpack" for user in users):
            raise TypeError(
                f"output {output.debugName()} is a list of tensors the graph does not unpack: its length "
                "is known only at run time, and an ONNX node has a fixed number of outputs"
            )
        (count,) = {user.outputsSize() for user in users}
        counts.append(count)
    return counts


def _emit(
    g: GraphContext,
    node: torch._C.Node,
    op_type: str,
    domain: str,
    inputs: list[ir.Value | None],
    attributes: dict[str, Any],
    counts: list[int | None],
) -> Any:
    """One node with an output per item of ``counts`` (a list result grouped back into a list)."""
    total = sum(1 if count is None else count for count in counts)
    outputs = g.op(op_type, *inputs, domain=domain, num_outputs=max(total, 1), attrs=attributes)
    flat = list(outputs) if isinstance(outputs, tuple) else [outputs]
    results: list[Any] = []
    position = 0
    for ts_value, count in zip(node.outputs(), counts):
        if count is None:
            results.append(flat[position])
            position += 1
            continue
        items = flat[position : position + count]
        for item, user_output in zip(items, next(iter(ts_value.uses())).user.outputs()):
            _type_from(item, user_output.type())
        results.append(items)
        position += count
    if not counts:
        return None
    return results[0] if len(results) == 1 else tuple(results)


def _type_from(value: ir.Value, ts_type: torch._C.JitType) -> None:
    """A list item's dtype and rank from its TorchScript type (the node's own output types are
    stamped by the emitter; items of a list are typed here)."""
    if isinstance(ts_type, torch._C.TensorType) and ts_type.scalarType() is not None:
        value.dtype = tensors.from_torch_dtype(ts_type.dtype())
        sizes = ts_type.varyingSizes()
        if sizes is not None:
            value.shape = ir.Shape(sizes)


def _attribute(node: torch._C.Node, key: str) -> Any:
    """A TorchScript node attribute as an ONNX attribute value (None for kinds ONNX has no form of)."""
    kind = node.kindOf(key)
    readers: dict[str, Callable[[str], Any]] = {
        "i": node.i,
        "f": node.f,
        "s": node.s,
        "is": getattr(node, "is"),  # a keyword in Python
        "fs": node.fs,
        "ss": node.ss,
        "t": node.t,
    }
    reader = readers.get(kind)
    return reader(key) if reader is not None else None
