"""Walk a clean TorchScript graph and build the ONNX graph, one symbolic per node.

The emitter knows nothing about individual ops. Its job: find every node without a symbolic
before emitting anything (one error listing all of them), bind each node's inputs to its
symbolic's parameters by schema name, fold nodes whose inputs are all constants by running
them in torch, wrap failures with the op and source line, and stamp TorchScript's output
types onto what the symbolic returned so later symbolics can read ``x.dtype``/``x.shape``.
"""

from __future__ import annotations

import collections
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import arguments, complex_values, eager_ops, input_parity, promotion, tensors
from exporter.control_flow.subgraph import emit_subgraph
from exporter.errors import ComplexOutputError, ExporterError, SymbolicError, UnsupportedOp, UnsupportedOperatorError
from exporter.graph_context import ExportOptions, GraphBuilder, GraphContext, TorchGraphContext
from exporter.input_parity import TorchRunTimeValues
from exporter.op_facts import OpFacts, Promotion
from exporter.operator_export import generic_emission, passes_python_ops_through, python_op_node
from exporter.operator_export_types import OperatorExportTypes
from exporter.quantization import QUANTIZED_META, QUANTIZED_STORAGE, around_dequantized
from exporter.registry import PYTHON_OP, Registry, SymbolicFunction, autograd_function
from exporter.runtime_list import RuntimeList, ScanItem
from exporter.ts_graph import (
    ASSUMED_ORDER,
    FUNCTION_BODY,
    PACKAGE_DIR,
    all_nodes,
    has_blocks,
    overload_name,
    schema_of,
    source_location,
)

__all__ = ["emit_graph", "find_unsupported"]

# Schema arguments a symbolic may leave out: they do not change the values computed.
_IGNORABLE_ARGUMENTS = frozenset(
    {"device", "layout", "pin_memory", "memory_format", "non_blocking", "cudnn_enabled", "cudnn_enable"}
)


def find_unsupported(
    graph: torch._C.Graph,
    registry: Registry,
    options: ExportOptions,
    *,
    branches_only: list[bool] | None = None,
    locate: Callable[[torch._C.Node], str] = source_location,
) -> list[UnsupportedOp]:
    """Every node kind the export ``options`` (opset, operator_export_type, autograd_inlining)
    cannot export, with counts and source lines (by ``locate``: capture's, which knows the call
    sites of inlined code).

    ``branches_only``, when given, gets one item: whether every such node sits inside a branch
    of an ``if`` (which export may find decided, so the branch is never emitted).
    """
    opset = options.opset
    counts: dict[str, int] = collections.Counter()
    where: dict[str, list[str]] = collections.defaultdict(list)
    overloads: dict[str, str] = {}
    reasons: dict[str, str | None] = {}
    in_branches = True
    for node in _emitted_nodes(graph, registry, options):
        kind = node.kind()
        if kind == "prim::Constant":
            continue
        if kind == PYTHON_OP:
            cls = autograd_function(node)
            if cls is not None and registry.lookup_function(cls, opset) is not None:
                continue
            if passes_python_ops_through(options.operator_export_type):
                continue
            # named by the Function, so the message says which one and how to register it
            kind = f"{PYTHON_OP}.{cls.__module__}.{cls.__qualname__}" if cls is not None else kind
            overload = ""
            reason = _KEPT_FUNCTION if node.hasAttribute(FUNCTION_BODY) else None
        else:
            overload = overload_name(node)
            has_symbolic = registry.lookup(kind, opset, overload) is not None
            if has_symbolic or generic_emission(kind, has_symbolic, options.operator_export_type) is not None:
                continue
            reason = _NOT_ATEN if options.operator_export_type is not OperatorExportTypes.ONNX else None
        in_branches = in_branches and _inside_if(node)
        counts[kind] += 1
        overloads[kind] = overload
        reasons[kind] = reason
        location = locate(node)
        if location not in where[kind]:
            where[kind].append(location)
    if branches_only is not None:
        branches_only.append(in_branches)
    return [
        UnsupportedOp(
            name=kind,
            count=counts[kind],
            locations=tuple(where[kind]),
            supported_opsets=registry.opsets(kind, overloads[kind]),
            reason=reasons[kind],
        )
        for kind in sorted(counts)
    ]


# Why an op is refused beyond "no symbolic": a Function kept as a unit, an op ATen cannot carry.
_KEPT_FUNCTION = (
    "autograd_inlining=False keeps the Function as one node, which ONNX has no operator for: register a "
    "symbolic for it, pass autograd_inlining=True to export the ops its forward runs, or "
    "operator_export_type=ONNX_FALLTHROUGH to keep it as a prim::PythonOp node"
)
_NOT_ATEN = (
    "only aten:: ops become ATen nodes; operator_export_type=ONNX_FALLTHROUGH keeps other ops without a "
    "symbolic as nodes of their own domain"
)


def _emitted_nodes(graph: torch._C.Graph, registry: Registry, options: ExportOptions) -> list[torch._C.Node]:
    """The nodes of ``graph`` (sub-blocks included), with the call of an autograd Function that
    has no symbolic at the target opset replaced by the nodes of the body it is emitted from
    (unless ``autograd_inlining`` is off)."""
    found = []
    for node in all_nodes([graph]):
        if node.kind() == PYTHON_OP and node.hasAttribute(FUNCTION_BODY) and options.autograd_inlining:
            cls = autograd_function(node)
            if cls is None or registry.lookup_function(cls, options.opset) is None:
                found.extend(_emitted_nodes(node.g(FUNCTION_BODY), registry, options))
                continue
        found.append(node)
    return found


def _inside_if(node: torch._C.Node) -> bool:
    owner = node.owningBlock().owningNode()
    while owner is not None:
        if owner.kind() == "prim::If":
            return True
        owner = owner.owningBlock().owningNode()
    return False


class _Emitter:
    def __init__(
        self,
        builder: GraphBuilder,
        registry: Registry,
        static_shapes: bool,
        parent: _Emitter | None = None,
        *,
        scripted: bool = False,
        locate: Callable[[torch._C.Node], str] = source_location,
    ) -> None:
        self.builder = builder
        self.registry = registry
        self.static_shapes = static_shapes
        self.parent = parent
        # a node's place in the user's code, for errors
        self.locate: Callable[[torch._C.Node], str] = parent.locate if parent is not None else locate
        # self.unsupported as reported, located by self.locate (which may cost an inlining)
        self.located_unsupported: Callable[[], list[UnsupportedOp]] = (
            parent.located_unsupported if parent is not None else lambda: self.unsupported
        )
        self.env: dict[int, Any] = {}
        # values torch's exporter computes at run time though they are known here (scripted lists)
        self.torch_run_time_values = (
            parent.torch_run_time_values
            if parent is not None
            else TorchRunTimeValues(builder.options.opset, registry, scripted=scripted)
        )
        # ops without a symbolic found only inside branches: reported if a branch holding one is emitted
        self.unsupported: list[UnsupportedOp] = parent.unsupported if parent is not None else []
        # TorchScript value (unique id) -> the dtype torch computes where shape propagation recorded
        # a guess (see eager_ops.corrected_dtypes); kept here, since the emitter never mutates the graph it walks
        self.dtypes: dict[int, torch.dtype] = parent.dtypes if parent is not None else {}

    # -- values ----------------------------------------------------------------------------
    def lookup(self, value: torch._C.Value) -> Any:
        key = value.unique()
        emitter: _Emitter | None = self
        while emitter is not None:
            if key in emitter.env:
                return emitter.env[key]
            emitter = emitter.parent
        raise ExporterError(f"internal error: value %{value.debugName()} used before it was emitted")

    def replace(self, old: Any, new: Any) -> None:
        """Rebind every value (here and in enclosing scopes) that holds the object ``old``: a
        Python list that becomes a run-time list is aliased by all the values naming it. An
        export-time list holding ``old`` as an item (``maxes = shapes[0]`` then ``maxes[i] = m``)
        holds ``new`` instead: the item and the name are one list in TorchScript."""
        emitter: _Emitter | None = self
        seen: set[int] = set()
        while emitter is not None:
            for key, obj in emitter.env.items():
                if obj is old:
                    emitter.env[key] = new
                elif isinstance(obj, list):
                    _replace_items(obj, old, new, seen)
            emitter = emitter.parent

    def keep_inputs_of(self, value: ir.Value) -> None:
        """See GraphContext.keep_inputs_of (input_parity.keep_inputs_of, on the main graph)."""
        input_parity.keep_inputs_of(self.builder.root.graph, value)

    def bind(self, value: torch._C.Value, obj: Any, *, static: bool = True) -> None:
        self.env[value.unique()] = obj
        if isinstance(obj, ir.Value):
            self._stamp(value, obj, static=static)
        elif isinstance(obj, complex_values.ComplexValue):
            self._stamp_pairs(value, obj.value, static=static)

    def _stamp_pairs(self, ts_value: torch._C.Value, pairs: ir.Value, *, static: bool) -> None:
        """Type the float pairs of a complex result from torch's complex type: the parts' dtype,
        torch's shape and a last dim of 2 (what a symbolic did not type itself)."""
        ts_type = ts_value.type()
        if not isinstance(ts_type, torch._C.TensorType):
            return
        dtype = ts_type.dtype()
        if pairs.dtype is None and dtype is not None and dtype.is_complex:
            pairs.dtype = tensors.from_torch_dtype(tensors.complex_part_dtype(dtype))
        rank = ts_type.dim()
        if pairs.shape is None and rank is not None:
            sizes = ts_type.varyingSizes() if self.static_shapes and static else None
            if sizes is not None and all(s is not None for s in sizes):
                pairs.shape = ir.Shape([*sizes, 2])
            else:
                pairs.shape = ir.Shape([None] * rank + [2])

    # -- blocks (control flow) ---------------------------------------------------------------
    def inline_block(self, block: torch._C.Block, inputs: Sequence[Any]) -> list[Any]:
        """Emit a block into the current graph (a branch decided at export time, an unrolled
        loop iteration); returns what its outputs became."""
        for param, obj in zip(block.inputs(), inputs):
            self.env[param.unique()] = obj
        self.emit_block(block)
        return [self.lookup(v) for v in block.outputs()]

    def nested(self, builder: GraphBuilder) -> _Emitter:
        """A scope emitting into ``builder`` (a subgraph's) that sees this scope's values: the
        engine's way into the emitter (control_flow.subgraph.BlockScope)."""
        return _Emitter(builder, self.registry, self.static_shapes, parent=self)

    def subgraph(
        self,
        block: torch._C.Block,
        inputs: Sequence[ir.Value],
        name: str,
        params: Sequence[Any],
        extra_outputs: Callable[[], Sequence[Any]] | None,
        lists_as_items: bool,
    ) -> ir.Graph:
        """See GraphContext.subgraph (control_flow.subgraph.emit_subgraph)."""
        return emit_subgraph(self, self.builder, block, inputs, name, params, extra_outputs, lists_as_items)

    def _stamp(self, ts_value: torch._C.Value, value: ir.Value, *, static: bool = True) -> None:
        ts_type = ts_value.type()
        if isinstance(ts_type, torch._C.TensorType):
            torch_dtype = self.dtypes.get(ts_value.unique(), ts_type.dtype())
            if torch_dtype is not None:
                # quantized tensors are exported as their integer storage
                if torch_dtype in QUANTIZED_STORAGE:
                    value.meta[QUANTIZED_META] = True
                torch_dtype = QUANTIZED_STORAGE.get(torch_dtype, torch_dtype)
                dtype = tensors.from_torch_dtype(torch_dtype)
                if value.dtype is None:
                    value.dtype = dtype
                elif value.dtype != dtype and _complete(ts_value):
                    # a scripted graph's incomplete types (no sizes) may carry a dtype shape
                    # propagation guessed inside a block: there the symbolic's dtype is what is known
                    raise _TypeMismatch(f"the symbolic returned {value.dtype.name} where torch computes {dtype.name}")
            if value.shape is None:
                rank = ts_type.dim()
                if rank is not None:
                    sizes = ts_type.varyingSizes() if self.static_shapes and static else None
                    if sizes is not None and all(s is not None for s in sizes):
                        value.shape = ir.Shape(sizes)
                    else:
                        value.shape = ir.Shape([None] * rank)
        elif isinstance(ts_type, torch._C.IntType) and value.dtype is None:
            value.dtype = ir.DataType.INT64
        elif isinstance(ts_type, torch._C.BoolType) and value.dtype is None:
            value.dtype = ir.DataType.BOOL

    # -- nodes -----------------------------------------------------------------------------
    def emit_block(self, block: torch._C.Block | torch._C.Graph) -> None:
        for node in block.nodes():
            self.emit_node(node)

    def emit_node(self, node: torch._C.Node) -> None:
        kind = node.kind()
        if kind == "prim::Constant":
            self.env[node.output().unique()] = node.output().toIValue()
            return
        if kind == PYTHON_OP:
            self._emit_function(node)
            return
        inputs = [self.lookup(v) for v in node.inputs()]
        schema = schema_of(node)
        overload = schema.overload_name if schema is not None else ""
        facts = self.registry.facts(kind, overload)
        torch_reads = self.torch_run_time_values.reads_of(node, inputs, facts)
        if schema is not None and self._try_fold(node, schema, inputs, facts):
            self.torch_run_time_values.mark(node, facts, torch_reads, self.lookup)
            return
        options = self.builder.options
        symbolic = self.registry.lookup(kind, options.opset, overload)
        # an ATen node or a node passed through, as operator_export_type asks (exporter.operator_export)
        generic = generic_emission(kind, symbolic is not None, options.operator_export_type)
        # a complex input of an op (prim nodes building lists and tuples carry it as it is)
        complex_node = (
            symbolic is not None
            and generic is None
            and schema is not None
            and not symbolic.takes_raw_inputs
            and complex_values.has_complex_tensor_argument(schema, inputs)
        )
        if generic is None and schema is not None and facts.promotion is not None and not complex_node:
            inputs = self._harmonize(node, facts.promotion, schema, inputs)
        if symbolic is None and generic is None:  # in a branch (see emit_graph), or a sub-block added later
            raise UnsupportedOperatorError(
                self.located_unsupported()
                or [UnsupportedOp(kind, 1, (self.locate(node),), self.registry.opsets(kind))],
                options.opset,
            )
        g = GraphContext(self.builder, node, emitter=self)
        try:
            if generic is not None:
                result = generic(g, node, inputs)
            elif complex_node:
                result = self._call_complex(g, symbolic, schema, facts, inputs)
            else:
                # aten ops on quantized tensors (eager-quantized models) run on dequantized values
                result = around_dequantized(
                    g, facts.quantized, inputs, lambda ins: self._call(g, symbolic, schema, ins)
                )
                if result is None:
                    result = self._call(g, symbolic, schema, inputs)
            input_parity.note_inputs_read(node, inputs, result)
            if schema is not None and not has_blocks(node):
                self.dtypes.update(eager_ops.corrected_dtypes(node, schema, inputs, result, self.dtypes))
            # Outputs of control flow depend on the branch or trip count: no static shapes.
            self._bind_outputs(node, result, static=not has_blocks(node))
        except ExporterError:
            raise
        except Exception as error:  # noqa: BLE001 - re-raised with context
            raise SymbolicError(
                f"{type(error).__name__}: {error}",
                op=kind if not schema or not schema.overload_name else f"{kind}.{schema.overload_name}",
                opset=self.builder.options.opset,
                location=self.locate(node),
                arguments=_describe_inputs(schema, inputs),
            ) from error
        self.torch_run_time_values.mark(node, facts, torch_reads, self.lookup)

    def _emit_function(self, node: torch._C.Node) -> None:
        """A custom autograd Function (prim::PythonOp): through a symbolic written for torch's
        exporter (its inputs in the order of the call, tensors as values, other arguments as
        the Python objects given, a :class:`TorchGraphContext` as ``g``), else from the graph
        its forward recorded (:meth:`_emit_body`). That graph also stands in for the Function's
        own ``symbolic`` when it fails in its own or torch's code (written against torch's
        exporter: ``value.type().dtype()``): what the symbolic built before failing is undone."""
        cls = autograd_function(node)
        options = self.builder.options
        found = self.registry.lookup_function(cls, options.opset) if cls is not None else None
        if found is None:
            if node.hasAttribute(FUNCTION_BODY) and options.autograd_inlining:
                self._emit_body(node)
                return
            if passes_python_ops_through(options.operator_export_type):
                self._emit_python_op(node)
                return
            # in a branch (see emit_graph), or a sub-block added later
            raise UnsupportedOperatorError(
                self.located_unsupported()
                or [UnsupportedOp(f"{PYTHON_OP}.{node.pyname()}", 1, (self.locate(node),), ())],
                self.builder.options.opset,
            )
        tensor_inputs = iter(node.inputs())
        scalars = iter(node.scalar_args())
        args: list[Any] = []
        for convention in node.cconv():
            if convention == "c":
                args.append(next(scalars))
                continue
            obj = self.lookup(next(tensor_inputs))
            # a tensor the graph computed at export time (folded) is still a value to the symbolic
            args.append(self.builder.constant(obj) if isinstance(obj, (torch.Tensor, int, float)) else obj)
        g = TorchGraphContext(self.builder, node, emitter=self)
        before = self.builder.checkpoint()
        try:
            if found.generic:
                result = found.function(
                    g, *args, name=node.pyname(), inplace=node.i("inplace"), module=node.s("module")
                )
            else:
                result = found.function(g, *args)
            if result is None:
                raise TypeError("the symbolic returned None")
            output = node.output()
            if isinstance(output.type(), torch._C.TupleType):
                items = list(result) if isinstance(result, (tuple, list)) else [result]
                expected = len(output.type().elements())
                if len(items) != expected:
                    raise TypeError(f"the symbolic returned {len(items)} value(s); forward returns {expected}")
                self.env[output.unique()] = tuple(items)  # typed where prim::TupleUnpack binds them
            else:
                if isinstance(result, (tuple, list)) and len(result) == 1:
                    result = result[0]
                self._bind_outputs(node, result)
            return
        except ExporterError:
            raise
        except Exception as error:  # noqa: BLE001 - re-raised with context, or the forward's graph instead
            op = f"autograd Function {cls.__module__}.{cls.__qualname__} (prim::PythonOp)"
            if (
                not node.hasAttribute(FUNCTION_BODY)
                or not options.autograd_inlining
                or not _torch_only_symbolic(found.function, cls, error)
            ):
                raise SymbolicError(
                    f"{type(error).__name__}: {error}",
                    op=op,
                    opset=self.builder.options.opset,
                    location=self.locate(node),
                    arguments=", ".join(arguments.describe(a) for a in args),
                ) from error
            self.builder.rollback(before)
            warnings.warn(
                f"{op} at {self.locate(node)}: its symbolic staticmethod failed on this exporter "
                f"({type(error).__name__}: {error}); exporting the ops its forward recorded instead",
                stacklevel=2,
            )
        self._emit_body(node)

    def _emit_python_op(self, node: torch._C.Node) -> None:
        """A Function's call kept as one prim::PythonOp node (autograd_inlining=False or no
        recorded forward, under ONNX_FALLTHROUGH: exporter.operator_export.python_op_node)."""
        inputs = [self.lookup(value) for value in node.inputs()]
        g = GraphContext(self.builder, node, emitter=self)
        try:
            result = python_op_node(g, node, inputs)
        except ExporterError:
            raise
        except Exception as error:  # noqa: BLE001 - re-raised with context
            raise SymbolicError(
                f"{type(error).__name__}: {error}",
                op=f"{PYTHON_OP}.{node.pyname()}",
                opset=self.builder.options.opset,
                location=self.locate(node),
                arguments=", ".join(arguments.describe(a) for a in inputs),
            ) from error
        if isinstance(result, tuple):
            self.env[node.output().unique()] = result  # typed where prim::TupleUnpack binds them
        else:
            self._bind_outputs(node, result)

    def _emit_body(self, node: torch._C.Node) -> None:
        """A Function's call as the ops its forward recorded (the graph capture prepared and the
        passes ran over: exporter.capture.autograd), emitted in place into this graph by an
        emitter of its own (the body's values are numbered apart from this graph's)."""
        if node.hasAttribute(ASSUMED_ORDER):
            warnings.warn(
                f"autograd Function {node.pyname()} at {self.locate(node)} returns several tensors of one type; "
                "the trace does not record which is which, so they are exported in the order its forward "
                "computed them. Register a symbolic for it if it returns them in another order",
                stacklevel=2,
            )
        body = node.g(FUNCTION_BODY)
        inner = _Emitter(self.builder, self.registry, self.static_shapes, locate=self.locate)
        for param, value in zip(body.inputs(), node.inputs()):
            inner.env[param.unique()] = self.lookup(value)
        inner.emit_block(body)
        results = [inner.lookup(value) for value in body.outputs()]
        output = node.output()
        if isinstance(output.type(), torch._C.TupleType):
            self.env[output.unique()] = tuple(results)  # typed where prim::TupleUnpack binds them
        else:
            self._bind_outputs(node, results[0])

    def _harmonize(
        self, node: torch._C.Node, rule: Promotion, schema: torch._C.FunctionSchema, inputs: list[Any]
    ) -> list[Any]:
        """Unify the operand dtypes ``rule`` (the op's promotion) names where the pre-pass
        could not (scripted graphs with untyped values)."""
        positions = promotion.operand_positions(rule, schema)
        if not positions or not any(isinstance(inputs[p], ir.Value) for p in positions if p < len(inputs)):
            return inputs
        operands = {}
        for position in positions:
            if position >= len(inputs) or inputs[position] is None:
                continue
            operand = promotion.emitted_operand(inputs[position], node.inputsAt(position))
            if operand is None:
                return inputs
            operands[position] = operand
        target = promotion.emission_target(node, rule, schema, inputs, operands)
        target_ir = tensors.from_torch_dtype(target)
        result = list(inputs)
        for position in operands:
            obj = inputs[position]
            if isinstance(obj, ir.Value):
                if obj.dtype != target_ir:
                    (result[position],) = self.builder.add_node("Cast", [obj], {"to": target_ir})
            elif isinstance(obj, torch.Tensor):
                result[position] = obj.to(target)
            else:
                result[position] = torch.tensor(obj, dtype=target)
        return result

    def _call(
        self,
        g: GraphContext,
        symbolic: SymbolicFunction,
        schema: torch._C.FunctionSchema | None,
        inputs: list[Any],
    ) -> Any:
        if symbolic.takes_raw_inputs or schema is None:
            if not symbolic.takes_raw_inputs:
                raise TypeError(f"{symbolic.name} has no schema; its symbolic must take *inputs")
            return symbolic.function(g, *inputs)
        by_name = arguments.bind_by_name(schema, inputs, [spec.name for spec in symbolic.params])
        kwargs = {}
        for spec in symbolic.params:
            if spec.name in by_name:
                kwargs[spec.name] = arguments.convert(g, by_name[spec.name][1], spec)
            elif not spec.has_default:
                raise TypeError(f"symbolic parameter {spec.name!r} is not an argument of schema {schema}")
        accepted = {spec.name for spec in symbolic.params}
        for name, (arg, obj) in by_name.items():
            if name in accepted or name in _IGNORABLE_ARGUMENTS:
                continue
            if not _is_default(arg, obj):
                raise TypeError(
                    f"argument {name}={arguments.describe(obj)} is not handled by the symbolic "
                    f"(it only handles the default {arg.default_value!r})"
                )
        return symbolic.function(g, **kwargs)

    def _call_complex(
        self,
        g: GraphContext,
        symbolic: SymbolicFunction,
        schema: torch._C.FunctionSchema,
        facts: OpFacts,
        inputs: list[Any],
    ) -> Any:
        """A node with a complex tensor argument, run as its op's ``complex_inputs`` fact says
        (complex_values.lower_complex), the operands its promotion names taking the parts' dtype."""
        promoted = promotion.operand_positions(facts.promotion, schema) if facts.promotion is not None else ()
        return complex_values.lower_complex(
            g,
            facts.complex_inputs,
            inputs,
            [arg.name for arg in schema.arguments],
            frozenset(promoted),
            lambda ins: self._call(g, symbolic, schema, ins),
        )

    def _bind_outputs(self, node: torch._C.Node, result: Any, *, static: bool = True) -> None:
        outputs = list(node.outputs())
        if not outputs:
            return
        if len(outputs) == 1:
            try:
                self.bind(outputs[0], result, static=static)
            except _TypeMismatch as error:
                raise TypeError(str(error)) from None
            return
        if not isinstance(result, (tuple, list)) or len(result) != len(outputs):
            raise TypeError(f"the symbolic returned {result!r}; the node has {len(outputs)} outputs")
        for ts_value, obj in zip(outputs, result):
            try:
                self.bind(ts_value, obj, static=static)
            except _TypeMismatch as error:
                raise TypeError(f"output {ts_value.debugName()}: {error}") from None

    def _try_fold(
        self, node: torch._C.Node, schema: torch._C.FunctionSchema, inputs: list[Any], facts: OpFacts
    ) -> bool:
        """Run a node in torch when every input is a constant (static shape arithmetic)."""
        kind = node.kind()
        if (
            not kind.startswith("aten::")
            or not facts.fold
            or (kind.endswith("_") and not kind.endswith("__"))  # in-place, not __dunder__
            or schema.is_mutable
            or any(_is_dynamic(obj) for obj in inputs)  # most nodes: checked before asking torch
            or has_blocks(node)
        ):
            return False
        results = eager_ops.folded(node, schema, inputs)
        if results is None:
            return False
        for ts_value, obj in zip(node.outputs(), results):
            self.env[ts_value.unique()] = obj
        return True


def _torch_only_symbolic(function: Any, cls: type, error: BaseException) -> bool:
    """Whether a Function's own ``symbolic`` failed in its own or torch's code, not in ours: it
    is written against torch's exporter (``value.type().dtype()``, that exporter's helpers taking
    ``torch._C.Value``), so its forward is traced instead. A request this exporter
    refused (say an attribute without its type suffix) is the symbolic's error and is reported."""
    if function is not getattr(cls, "symbolic", None):
        return False
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(PACKAGE_DIR)


def _complete(ts_value: torch._C.Value) -> bool:
    """Whether the value's tensor type is complete (sizes and strides known) and outside any
    block: what tracing and shape propagation on straight-line code give. Types inside scripted
    If/Loop blocks are guesses of the propagation (a select of an int64 tensor typed Float), and
    so are the outputs of an If or Loop, which merge their blocks' guesses (functional.py's
    ``log_softmax(dtype=float64)`` If is typed Float from the branch without the dtype)."""
    ts_type = ts_value.type()
    if ts_type.varyingSizes() is None or ts_type.strides() is None:
        return False
    if ts_value.node().kind() in ("prim::If", "prim::Loop"):
        return False
    return ts_value.node().owningBlock().owningNode() is None


class _TypeMismatch(Exception):
    pass


def _is_dynamic(obj: Any) -> bool:
    if isinstance(obj, (ir.Value, RuntimeList, ScanItem, complex_values.ComplexValue)):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_is_dynamic(o) for o in obj)
    return False


def _is_default(arg: torch._C.Argument, obj: Any) -> bool:
    if not arg.has_default_value():
        return False
    default = arg.default_value
    if isinstance(obj, ir.Value):
        return False
    if isinstance(obj, torch.Tensor):
        if obj.numel() != 1:
            return False
        obj = obj.item()
    try:
        return bool(obj == default)
    except (RuntimeError, TypeError, ValueError):  # no truth value (a multi-element tensor): not the default
        return False


def _describe_inputs(schema: torch._C.FunctionSchema | None, inputs: Sequence[Any]) -> str:
    names = [a.name for a in schema.arguments] if schema is not None else [f"#{i}" for i in range(len(inputs))]
    return ", ".join(f"{n}={arguments.describe(o)}" for n, o in zip(names, inputs))


def emit_graph(
    ts_graph: torch._C.Graph,
    builder: GraphBuilder,
    registry: Registry,
    bound_inputs: Sequence[tuple[torch._C.Value, Any]],
    *,
    static_shapes: bool,
    scripted: bool = False,
    locate: Callable[[torch._C.Node], str] = source_location,
) -> list[Any]:
    """Emit ``ts_graph`` into ``builder``; returns the emitted objects of the graph outputs.
    ``scripted``: the graph is a scripted model's (see input_parity); ``locate`` names a
    node's place in the user's code in errors."""
    # Ops without a symbolic fail the export before anything is emitted, unless all of them sit
    # in branches of ifs, which export may find decided (torch.norm's scripted body holds
    # nuclear_norm under `if p == "nuc"`): then they fail only if a branch holding one is emitted.
    branches_only: list[bool] = []
    # (located by source_location first: ``locate`` may inline the model again, worth it only
    # for an error)
    opset = builder.options.opset
    unsupported = find_unsupported(ts_graph, registry, builder.options, branches_only=branches_only)

    def located() -> list[UnsupportedOp]:
        return find_unsupported(ts_graph, registry, builder.options, locate=locate) if unsupported else []

    if unsupported and not branches_only[0]:
        raise UnsupportedOperatorError(located(), opset)
    emitter = _Emitter(builder, registry, static_shapes, scripted=scripted, locate=locate)
    emitter.unsupported = unsupported
    emitter.located_unsupported = located
    for ts_value, obj in bound_inputs:
        emitter.env[ts_value.unique()] = obj
    emitter.emit_block(ts_graph)
    results = [emitter.lookup(v) for v in ts_graph.outputs()]
    for output in ts_graph.outputs():
        _refuse_complex_output(emitter, output)
    # outputs torch's exporter computes at run time from scripted lists keep what it reads
    for value in emitter.torch_run_time_values.output_reads(list(ts_graph.outputs()), results):
        emitter.keep_inputs_of(value)
    return results


def _refuse_complex_output(emitter: _Emitter, output: torch._C.Value) -> None:
    """A model output (or an item of a tuple or list it returns) that is a complex tensor is
    refused, naming the op that computed it and where: ONNX has no complex tensors."""
    if not complex_values.holds_complex(emitter.lookup(output)):
        return
    node = output.node()
    if node.kind() in ("prim::TupleConstruct", "prim::ListConstruct"):
        for item in node.inputs():
            _refuse_complex_output(emitter, item)
    raise ComplexOutputError(
        f"the model returns the complex result of {node.kind()} at {emitter.locate(node)}. "
        f"{complex_values.WHAT_TO_WRITE}"
    )


def _replace_items(items: list[Any], old: Any, new: Any, seen: set[int]) -> None:
    """``old`` replaced by ``new`` among ``items`` and the lists nested in them, each list once."""
    if id(items) in seen:
        return
    seen.add(id(items))
    for position, item in enumerate(items):
        if item is old:
            items[position] = new
        elif isinstance(item, list):
            _replace_items(item, old, new, seen)
