"""GraphContext: everything a symbolic function may use to build ONNX.

Symbolics never touch the graph under construction directly; they call ``g.op`` and
``g.constant``. That keeps naming, constant sharing and output typing in one place.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir
import torch

from exporter import tensors
from exporter.operator_export_types import OperatorExportTypes
from exporter.ts_graph import module_calls, source_location
from exporter.type_constraints import plan_casts
from exporter.type_inference import InferenceCache, infer, infer_with_onnx

__all__ = [
    "GraphContext",
    "TorchGraphContext",
    "GraphBuilder",
    "BuilderState",
    "ExportOptions",
    "source_location",
    "OPTIONAL_OPSET",
    "TRACE_SCOPE",
    "TORCH_NODE",
    "scope_path",
    "upstream_values",
]

# ONNX optional values (None on some run-time path) flow through If and Loop from opset 16.
OPTIONAL_OPSET = 16


# ir.Node.meta key: the trace scope name of the TorchScript node an ONNX node was emitted for
# (ts_graph.module_calls reads it), which says which module calls the node belongs to.
TRACE_SCOPE = "exporter.trace_scope"
# ir.Node.meta key: the TorchScript node an ONNX node was emitted for, so a check of the
# finished graph (defined_before_use.py) names the user's source line only when it fails.
TORCH_NODE = "exporter.torch_node"


def upstream_values(value: ir.Value) -> Iterator[ir.Value]:
    """``value`` and every value of its graph it is computed from, each once, through the
    inputs of their producers (not into the subgraphs of an If or Loop)."""
    seen: set[int] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        producer = current.producer()
        if producer is not None:
            pending.extend(v for v in producer.inputs if v is not None)


# Constants at most this many bytes are shared by content within one graph.
_SHARED_CONSTANT_BYTES = 256
# Constant tensors above this many bytes become initializers instead of Constant nodes.
_INITIALIZER_BYTES = 1024


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """Options a symbolic may consult; travels with the context, never as a global."""

    opset: int
    training: bool = False
    dynamic: bool = False
    # which ops become ATen nodes or pass through (exporter.operator_export)
    operator_export_type: OperatorExportTypes = OperatorExportTypes.ONNX
    # False: a custom autograd Function without a symbolic is kept as one prim::PythonOp
    autograd_inlining: bool = True


@dataclasses.dataclass(frozen=True)
class BuilderState:
    """What a :class:`GraphBuilder` had built at one moment (:meth:`GraphBuilder.checkpoint`)."""

    nodes: int
    initializers: frozenset[str]
    constants: dict[tuple[Any, ...], ir.Value]
    transposed: dict[int, ir.Value]
    name_counts: dict[str, int]


class GraphBuilder:
    """One ONNX graph being built: nodes, shared constants, unique names."""

    def __init__(self, graph: ir.Graph, options: ExportOptions, parent: GraphBuilder | None = None) -> None:
        self.graph = graph
        self.options = options
        self.parent = parent
        self._constants: dict[tuple[Any, ...], ir.Value] = {}
        self._transposed: dict[int, ir.Value] = {}
        # ONNX inference results by node key, shared by the main graph and its subgraphs
        self._inference_cache: InferenceCache = parent._inference_cache if parent is not None else {}
        # Names are unique across the main graph and its subgraphs: one counter for all.
        self._name_counts: dict[str, int] = parent._name_counts if parent is not None else {}

    @property
    def root(self) -> GraphBuilder:
        return self.parent.root if self.parent is not None else self

    def checkpoint(self) -> BuilderState:
        """What is built so far, for :meth:`rollback`."""
        root = self.root
        return BuilderState(
            nodes=len(self.graph),
            initializers=frozenset(root.graph.initializers),
            constants=dict(self._constants),
            transposed=dict(root._transposed),
            name_counts=dict(self._name_counts),
        )

    def rollback(self, state: BuilderState) -> None:
        """Forget what was built since ``state``: its nodes, initializers, shared constants and
        names, as if it had never been built (an attempt that failed leaves no trace in the
        model, and what is built instead is named as it would have been)."""
        root = self.root
        added = list(self.graph)[state.nodes :]
        self.graph.remove(added, safe=False)
        for name in set(root.graph.initializers) - state.initializers:
            root.graph.initializers.pop(name)
        self._constants = dict(state.constants)
        root._transposed = dict(state.transposed)
        self._name_counts.clear()  # shared with the subgraphs' builders: changed in place
        self._name_counts.update(state.name_counts)

    def unique_name(self, base: str) -> str:
        count = self._name_counts.get(base, 0)
        self._name_counts[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def add_node(
        self,
        op_type: str,
        inputs: Sequence[ir.Value | None],
        attributes: dict[str, Any],
        *,
        domain: str = "",
        num_outputs: int = 1,
        scope: str = "",
        infer_types: bool = True,
        trace_scope: str = "",
    ) -> list[ir.Value]:
        """Append a node. An input of a dtype the op does not take at this opset (its ONNX
        schema, or onnxruntime's kernels: type_constraints) goes through the nearest dtype it
        takes, and the outputs of that type come back to it (type_constraints.plan_casts)."""
        plan = None
        if not domain:
            dtypes = [v.dtype if v is not None and isinstance(v.type, ir.TensorType) else None for v in inputs]
            plan = plan_casts(op_type, self.options.opset, dtypes, num_outputs)
        if plan is None:
            return self._append(op_type, inputs, attributes, domain, num_outputs, scope, infer_types, trace_scope)
        fitted = [
            self._converted(v, plan.inputs[i], scope, trace_scope) if i in plan.inputs else v
            for i, v in enumerate(inputs)
        ]
        outputs = self._append(op_type, fitted, attributes, domain, num_outputs, scope, infer_types, trace_scope)
        return [
            self._converted(out, plan.outputs[i], scope, trace_scope) if i in plan.outputs else out
            for i, out in enumerate(outputs)
        ]

    def _converted(self, value: ir.Value | None, dtype: ir.DataType, scope: str, trace_scope: str) -> ir.Value:
        """``value`` as ``dtype``: a small constant converted now, anything else through Cast."""
        assert value is not None
        tensor = value.const_value
        if tensor is not None and not value.is_initializer() and tensor.size <= _SHARED_CONSTANT_BYTES:
            converted = _torch_of(tensor)
            if converted is not None:
                return self.constant(converted.to(tensors.to_torch_dtype(dtype)))
        (out,) = self._append("Cast", [value], {"to": dtype}, "", 1, scope, True, trace_scope)
        return out

    def _append(
        self,
        op_type: str,
        inputs: Sequence[ir.Value | None],
        attributes: dict[str, Any],
        domain: str,
        num_outputs: int,
        scope: str,
        infer_types: bool,
        trace_scope: str = "",
    ) -> list[ir.Value]:
        attrs = [_to_attr(name, value) for name, value in attributes.items() if value is not None]
        name = self.unique_name(f"{scope}/{op_type}" if scope else f"/{op_type}")
        node = ir.Node(domain, op_type, inputs, attrs, num_outputs=num_outputs, name=name)
        if trace_scope:
            node.meta[TRACE_SCOPE] = trace_scope
        # Value names derive from the (model-wide unique) node name, so subgraphs never
        # reuse a name of an enclosing graph (ONNX requires SSA across scopes).
        for index, output in enumerate(node.outputs):
            output.name = f"{name}_output_{index}"
        self.graph.append(node)
        if not domain and infer_types:
            infer(op_type, inputs, attributes, node.outputs)
            infer_with_onnx(node, self.options.opset, self._inference_cache)
        return list(node.outputs)

    def constant(self, value: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """An ONNX constant for a Python number, list, numpy array or torch tensor; a
        DeferredTorchTensor becomes an initializer computed when the file is written."""
        if isinstance(value, tensors.DeferredTorchTensor):
            deferred = ir.Value(
                name=value.name or self.unique_name("const"),
                shape=value.shape,
                type=ir.TensorType(value.dtype),
                const_value=value,
            )
            self.root.graph.register_initializer(deferred)
            return deferred
        array = _to_tensor(value, dtype)
        nbytes = array.element_size() * array.numel()
        key = None
        if nbytes <= _SHARED_CONSTANT_BYTES:
            key = (
                array.dtype,
                tuple(array.shape),
                array.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if array.numel() else b"",
            )
            cached = self._constants.get(key)
            if cached is not None:
                return cached
        ir_tensor = tensors.TorchTensor(array.contiguous())
        if nbytes > _INITIALIZER_BYTES:
            out = ir.Value(
                name=self.unique_name("const"),
                shape=ir.Shape(array.shape),
                type=ir.TensorType(ir_tensor.dtype),
                const_value=ir_tensor,
            )
            self.root.graph.register_initializer(out)
        else:
            (out,) = self.add_node("Constant", [], {"value": ir_tensor}, infer_types=False)
            out.const_value = ir_tensor
            out.dtype = ir_tensor.dtype
            out.shape = ir.Shape(array.shape)
        if key is not None:
            self._constants[key] = out
        return out

    def transposed_initializer(self, weight: ir.Value) -> ir.Value:
        """A 2-D initializer transposed at export time, once per weight.

        The new tensor is a torch view of the same storage: bytes are only rearranged when
        the file is written, so export keeps one copy of the weights in memory.
        """
        root = self.root
        cached = root._transposed.get(id(weight))
        if cached is not None:
            return cached
        source = weight.const_value
        assert isinstance(source, tensors.TorchTensor)
        view = source.raw.t()
        name = self.unique_name(f"{weight.name}.T")
        out = ir.Value(
            name=name,
            shape=ir.Shape(view.shape),
            type=ir.TensorType(source.dtype),
            const_value=tensors.TorchTensor(view, name=name),
        )
        root.graph.register_initializer(out)
        root._transposed[id(weight)] = out
        return out


def _to_tensor(value: Any, dtype: ir.DataType | None) -> torch.Tensor:
    torch_dtype = tensors.to_torch_dtype(dtype) if dtype is not None else None
    if isinstance(value, torch.Tensor):
        tensor = _row_major(value.detach())
        return tensor.to(torch_dtype) if torch_dtype is not None else tensor
    if isinstance(value, np.ndarray):
        tensor = torch.from_numpy(value.copy())
        return tensor.to(torch_dtype) if torch_dtype is not None else tensor
    if not isinstance(value, (bool, int, float, list, tuple)) and _is_tensor(value):
        return _to_tensor(value.numpy(), dtype)
    if torch_dtype is None:
        torch_dtype = _default_dtype(value)
    return torch.tensor(value, dtype=torch_dtype)


def _row_major(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` itself when its strides are exactly row-major, else a row-major copy. torch
    calls a view contiguous whatever the strides of its size-1 dims (a folded ``buffer[:, :, i]``
    of a (1, 1, n) buffer keeps stride n), and ``contiguous()`` returns such a view as it is,
    while reading its bytes (``view(torch.uint8)``, the file's raw data) needs stride 1 inside."""
    expected = 1
    for size, stride in zip(reversed(tensor.shape), reversed(tensor.stride())):
        if stride != expected and tensor.numel():
            return tensor.clone(memory_format=torch.contiguous_format)
        expected *= size
    return tensor


def _torch_of(tensor: Any) -> torch.Tensor | None:
    """A constant's values as a torch tensor, None for a dtype torch has no equivalent of."""
    if isinstance(tensor, tensors.TorchTensor) and not isinstance(tensor, tensors.DeferredTorchTensor):
        return tensor.raw.detach()
    try:
        tensors.to_torch_dtype(tensor.dtype)
        return torch.from_numpy(np.array(tensor.numpy()))
    except (KeyError, TypeError, ValueError):
        return None


def _default_dtype(value: Any) -> torch.dtype:
    """int64 for ints, bool for bools, float32 for anything holding a float (torch defaults)."""
    flat = value if isinstance(value, (list, tuple)) else [value]
    while flat and isinstance(flat[0], (list, tuple)):
        flat = [x for sub in flat for x in sub]
    if flat and all(isinstance(x, bool) for x in flat):
        return torch.bool
    if all(isinstance(x, int) for x in flat):
        return torch.int64
    return torch.get_default_dtype()


def _is_tensor(value: Any) -> bool:
    """An ONNX tensor; the concrete class first, since a runtime Protocol check is slow."""
    return isinstance(value, ir.Tensor) or isinstance(value, ir.TensorProtocol)


def _to_attr(name: str, value: Any) -> ir.Attr:
    if isinstance(value, ir.Attr):
        return value
    if isinstance(value, bool):
        return ir.AttrInt64(name, int(value))
    if isinstance(value, int):  # ir.DataType is an int too
        return ir.AttrInt64(name, int(value))
    if isinstance(value, float):
        return ir.AttrFloat32(name, value)
    if isinstance(value, str):
        return ir.AttrString(name, value)
    if isinstance(value, ir.Graph):
        return ir.AttrGraph(name, value)
    if isinstance(value, torch.Tensor):
        return ir.AttrTensor(name, tensors.TorchTensor(value.detach().contiguous()))
    if _is_tensor(value):
        return ir.AttrTensor(name, value)
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(x, (int, bool)) for x in items):
            return ir.AttrInt64s(name, [int(x) for x in items])
        if all(isinstance(x, (int, float)) for x in items):
            return ir.AttrFloat32s(name, [float(x) for x in items])
        if all(isinstance(x, str) for x in items):
            return ir.AttrStrings(name, items)
        if all(isinstance(x, ir.Graph) for x in items):
            return ir.AttrGraphs(name, items)
    raise TypeError(f"attribute {name!r}: cannot infer an ONNX attribute type for {value!r}")


class GraphContext:
    """What a symbolic function sees: op creation, constants, the opset and the source node."""

    def __init__(self, builder: GraphBuilder, node: torch._C.Node | None, emitter: Any = None) -> None:
        self._builder = builder
        self.node = node
        self._scope_name: str | None = None  # computed when the symbolic first adds a node
        self._trace_scope: str | None = None
        self._emitter = emitter

    @property
    def _scope(self) -> str:
        if self._scope_name is None:
            self._scope_name = _scope_of(self.node)
        return self._scope_name

    @property
    def opset(self) -> int:
        return self._builder.options.opset

    @property
    def options(self) -> ExportOptions:
        return self._builder.options

    @property
    def source_location(self) -> str:
        """The node's place in the user's code (through the calls lowering inlined, when known)."""
        locate = getattr(self._emitter, "locate", None)
        return locate(self.node) if locate is not None and self.node is not None else source_location(self.node)

    def op(
        self,
        op_type: str,
        *inputs: ir.Value | None,
        domain: str = "",
        num_outputs: int = 1,
        attrs: dict[str, Any] | None = None,
        **attributes: Any,
    ) -> Any:
        """Append an ONNX node; attribute types follow the Python values.

        Returns one value, or a tuple of ``num_outputs`` values. Attributes whose names
        collide with this method's own keywords (Split's ``num_outputs``) go in ``attrs``.
        """
        if attrs:
            attributes = {**attributes, **attrs}
        for index, value in enumerate(inputs):
            if value is not None and not isinstance(value, ir.Value):
                raise TypeError(
                    f"{op_type} input {index} must be an ir.Value or None, got {type(value).__name__}; "
                    "use g.constant(...) for constants"
                )
        if self._trace_scope is None:
            self._trace_scope = self.node.scopeName() if self.node is not None else ""
        outputs = self._builder.add_node(
            op_type,
            inputs,
            attributes,
            domain=domain,
            num_outputs=num_outputs,
            scope=self._scope,
            trace_scope=self._trace_scope,
        )
        if self.node is not None:
            for output in outputs:
                producer = output.producer()
                if producer is not None:
                    producer.meta[TORCH_NODE] = self.node
        return outputs[0] if num_outputs == 1 else tuple(outputs)

    def constant(self, value: Any, dtype: ir.DataType | None = None) -> ir.Value:
        """A constant value; identical small constants are shared within the graph."""
        return self._builder.constant(value, dtype)

    def transposed_initializer(self, weight: ir.Value) -> ir.Value:
        """``weight`` (a 2-D initializer) transposed without a Transpose node or a copy."""
        return self._builder.transposed_initializer(weight)

    def unique_name(self, base: str) -> str:
        """A value or node name not used anywhere else in the model (subgraphs included)."""
        return self._builder.unique_name(base)

    def subgraph(
        self,
        block: torch._C.Block,
        inputs: Sequence[ir.Value],
        name: str = "subgraph",
        *,
        params: Sequence[Any] = (),
        extra_outputs: Callable[[], Sequence[Any]] | None = None,
        lists_as_items: bool = False,
    ) -> ir.Graph:
        """Emit a TorchScript block (an If branch, a Loop body) as an ONNX subgraph taking
        ``inputs``, the block's parameters bound to ``params`` (tuples as tuples of values);
        ``extra_outputs()`` (called after the block is emitted) lists outputs beyond the
        block's own. A list the block returns is an ONNX sequence, or with ``lists_as_items``
        one output per item."""
        return self._emitter.subgraph(
            block, inputs, self._builder.unique_name(name), params, extra_outputs, lists_as_items
        )

    def build_subgraph(
        self,
        inputs: Sequence[ir.Value],
        build: Callable[[GraphContext], Sequence[ir.Value]],
        name: str = "subgraph",
    ) -> ir.Graph:
        """An ONNX subgraph (a Loop body a symbolic writes itself, with no TorchScript block
        behind it) taking ``inputs`` and returning what ``build(sub)`` returns, ``sub`` being
        the context that emits into it. Values of this graph are visible inside (outer-scope
        capture); an output not produced inside gets an Identity, as ONNX requires."""
        graph = ir.Graph(list(inputs), [], nodes=[], name=self._builder.unique_name(name))
        builder = GraphBuilder(graph, self._builder.options, parent=self._builder)
        sub = GraphContext(builder, self.node, self._emitter)
        for output in build(sub):
            if output.producer() is None or output.producer().graph is not graph or output in graph.outputs:
                copied = sub.op("Identity", output)
                copied.type = output.type
                output = copied
            graph.outputs.append(output)
        return graph

    def lookup(self, value: torch._C.Value) -> Any:
        """What a TorchScript value of an enclosing scope was emitted as (control-flow
        symbolics look at the lists a block changes)."""
        return self._emitter.lookup(value)

    def replace(self, old: Any, new: Any) -> None:
        """Make every TorchScript value bound to the object ``old`` name ``new`` instead."""
        self._emitter.replace(old, new)

    def inline_block(self, block: torch._C.Block, inputs: Sequence[Any] = ()) -> list[Any]:
        """Emit a block into the current graph; returns its outputs (Values or constants)."""
        return self._emitter.inline_block(block, inputs)

    def keep_inputs_of(self, value: ir.Value) -> None:
        """The graph inputs the run-time ``value`` is computed from stay graph inputs though no
        node may read it (the condition of a check that raises, assumed to pass, which torch's
        exporter keeps as an If)."""
        self._emitter.keep_inputs_of(value)

    def list_to_value(self, items: Sequence[Any]) -> ir.Value:
        """A 1-D int64 tensor from a list of ints and 0-d/1-element values (dynamic shapes)."""
        if all(not isinstance(x, ir.Value) for x in items):
            flat = [x.item() if isinstance(x, torch.Tensor) else x for x in items]
            if all(isinstance(x, torch.Tensor) and x.dim() == 0 for x in items):
                return self.constant(torch.stack(list(items)))
            return self.constant(flat)
        parts = []
        for item in items:
            if isinstance(item, ir.Value):
                if item.dtype is not None and item.dtype != ir.DataType.INT64:
                    item = self.op("Cast", item, to=ir.DataType.INT64)
                parts.append(self.op("Reshape", item, self.constant([1])))
            else:
                value = item.item() if isinstance(item, torch.Tensor) else item
                parts.append(self.constant([int(value)]))
        if len(parts) == 1:
            return parts[0]
        return self.op("Concat", *parts, axis=0)


# torch's attribute keywords: ``alpha_f``, ``axes_i``, ``mode_s``, ``value_t``, ``body_g`` (a list
# value makes a list attribute; ``_fs``/``_is``/``_ss``/``_ts``/``_gs`` spell that out).
_TORCH_ATTRIBUTE = re.compile(r"^(.+)_([fistg]s?)$")


class TorchGraphContext(GraphContext):
    """The context given to symbolics written for torch's exporter: a custom autograd Function's
    ``symbolic(g, *inputs)`` staticmethod, or a symbolic registered for "prim::PythonOp".

    Only ``op`` differs: torch's ``g.op("Clip", x, lo, alpha_f=0.5, axes_i=[0], outputs=2)``,
    where "domain::Op" picks a domain ("onnx::" is the default one), attribute types come from the
    keyword's suffix, and inputs that are not values (tensors, numbers) become constants.
    """

    @property
    def original_node(self) -> torch._C.Node | None:
        return self.node

    def op(  # type: ignore[override]
        self,
        opname: str,
        *raw_args: Any,
        outputs: int = 1,
        **kwargs: Any,
    ) -> Any:
        domain, _, op_type = opname.rpartition("::")
        if domain == "onnx":
            domain = ""
        inputs = [a if a is None or isinstance(a, ir.Value) else self.constant(a) for a in raw_args]
        attributes = {}
        for key, value in kwargs.items():
            if value is None:
                continue
            match = _TORCH_ATTRIBUTE.match(key)
            if match is None:
                raise ValueError(
                    f"invalid attribute specifier {key!r}: names must be suffixed with their type, "
                    "e.g. 'dim_i' or 'dims_i' (_f float, _i int, _s string, _t tensor, _g graph)"
                )
            name, kind = match.group(1), match.group(2)[0]
            attributes[name] = _torch_attribute(name, kind, value)
        return GraphContext.op(self, op_type, *inputs, domain=domain, num_outputs=outputs, attrs=attributes)


def _torch_attribute(name: str, kind: str, value: Any) -> Any:
    """A torch-style attribute value as what ``_to_attr`` types by its Python type."""
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items or kind == "f":
            maker = {"f": ir.AttrFloat32s, "i": ir.AttrInt64s, "s": ir.AttrStrings}.get(kind)
            if maker is None:
                raise TypeError(f"attribute {name!r}: an empty list of {kind!r} is not supported")
            convert = {"f": float, "i": int, "s": _text}[kind]
            return maker(name, [convert(x) for x in items])
        if kind == "i":
            return [int(x) for x in items]
        if kind == "s":
            return [_text(x) for x in items]
        if kind == "t":
            return ir.AttrTensors(name, [tensors.TorchTensor(_tensor(x)) for x in items])
        return items
    if kind == "f":
        return float(value)
    if kind == "i":
        return int(value)
    if kind == "s":
        return _text(value)
    if kind == "t":
        return _tensor(value)
    return value


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _tensor(value: Any) -> torch.Tensor:
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(value.copy())
    if not isinstance(value, torch.Tensor):
        value = torch.tensor(value)
    return _row_major(value.detach())


def _scope_of(node: torch._C.Node | None) -> str:
    """The module path of a traced node, one component per module level.

    Trace scopes list each enclosing module's qualified name ("encoder/encoder.layer.0/
    encoder.layer.0.attention"); each level keeps only what it adds to its parent, so the
    result is "/encoder/layer.0/attention" (a ModuleList index stays with its list).
    """
    if node is None:
        return ""
    return scope_path(node.scopeName())


@functools.lru_cache(maxsize=1024)
def scope_path(scope: str) -> str:
    """_scope_of for one scope name (nodes of one module share theirs); every call of a module
    has the module's path (ts_graph.module_calls)."""
    if not scope:
        return ""
    parts = []
    parent = ""
    for name, _ in module_calls(scope):
        relative = name[len(parent) + 1 :] if parent and name.startswith(parent + ".") else name
        parts.append(relative)
        parent = name
    return "/" + "/".join(parts) if parts else ""
