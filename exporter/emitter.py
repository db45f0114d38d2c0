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

from exporter import arguments, promotion, runtime_list, tensors
from exporter.errors import ExporterError, SymbolicError, UnsupportedOp, UnsupportedOperatorError
from exporter.graph_context import OPTIONAL_OPSET, GraphBuilder, GraphContext, TorchGraphContext
from exporter.quantization import QUANTIZED_META, QUANTIZED_STORAGE, around_dequantized
from exporter.registry import PYTHON_OP, Registry, SymbolicFunction, autograd_function
from exporter.runtime_list import RuntimeList, ScanItem
from exporter.torch_run_time import TorchRunTime
from exporter.ts_graph import ASSUMED_ORDER, FUNCTION_BODY, all_nodes, has_blocks, schema_of, source_location

__all__ = ["emit_graph", "find_unsupported", "READS_INPUTS", "KEPT_INPUTS"]

# Schema arguments a symbolic may leave out: they do not change the values computed.
_IGNORABLE_ARGUMENTS = frozenset(
    {"device", "layout", "pin_memory", "memory_format", "non_blocking", "cudnn_enabled", "cudnn_enable"}
)
# ir.Value meta key: graph inputs the node computing this value read (see _note_inputs_read).
READS_INPUTS = "exporter.reads_inputs"
# ir.Graph meta key (main graph): inputs kept whether or not anything reads them.
KEPT_INPUTS = "exporter.kept_inputs"
# Folding a node by running it in torch is skipped when the result would be larger than this.
_FOLD_LIMIT_BYTES = 1 << 20


def _overload(node: torch._C.Node) -> str:
    schema = schema_of(node)
    return schema.overload_name if schema is not None else ""


def find_unsupported(
    graph: torch._C.Graph,
    registry: Registry,
    opset: int,
    *,
    branches_only: list[bool] | None = None,
    locate: Callable[[torch._C.Node], str] = source_location,
) -> list[UnsupportedOp]:
    """Every node kind without a symbolic at ``opset``, with counts and source lines (by
    ``locate``: capture's, which knows the call sites of inlined code).

    ``branches_only``, when given, gets one item: whether every such node sits inside a branch
    of an ``if`` (which export may find decided, so the branch is never emitted).
    """
    counts: dict[str, int] = collections.Counter()
    where: dict[str, list[str]] = collections.defaultdict(list)
    overloads: dict[str, str] = {}
    in_branches = True
    for node in _emitted_nodes(graph, registry, opset):
        kind = node.kind()
        if kind == "prim::Constant":
            continue
        if kind == PYTHON_OP:
            cls = autograd_function(node)
            if cls is not None and registry.lookup_function(cls, opset) is not None:
                continue
            # named by the Function, so the message says which one and how to register it
            kind = f"{PYTHON_OP}.{cls.__module__}.{cls.__qualname__}" if cls is not None else kind
            overload = ""
        else:
            overload = _overload(node)
        if kind.startswith(PYTHON_OP) or registry.lookup(kind, opset, overload) is None:
            in_branches = in_branches and _inside_if(node)
            counts[kind] += 1
            overloads[kind] = overload
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
        )
        for kind in sorted(counts)
    ]


def _emitted_nodes(graph: torch._C.Graph, registry: Registry, opset: int) -> list[torch._C.Node]:
    """The nodes of ``graph`` (sub-blocks included), with the call of an autograd Function that
    has no symbolic at ``opset`` replaced by the nodes of the body it is emitted from."""
    found = []
    for node in all_nodes([graph]):
        if node.kind() == PYTHON_OP and node.hasAttribute(FUNCTION_BODY):
            cls = autograd_function(node)
            if cls is None or registry.lookup_function(cls, opset) is None:
                found.extend(_emitted_nodes(node.g(FUNCTION_BODY), registry, opset))
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
        self.run_time = (
            parent.run_time if parent is not None else TorchRunTime(builder.options.opset, scripted=scripted)
        )
        # ops without a symbolic found only inside branches: reported if a branch holding one is emitted
        self.unsupported: list[UnsupportedOp] = parent.unsupported if parent is not None else []
        # TorchScript value (unique id) -> the dtype torch computes where shape propagation recorded
        # a guess (see _corrected_dtypes); kept here, since the emitter never mutates the graph it walks
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
        Python list that becomes a run-time list is aliased by all the values naming it."""
        emitter: _Emitter | None = self
        while emitter is not None:
            for key, obj in emitter.env.items():
                if obj is old:
                    emitter.env[key] = new
            emitter = emitter.parent

    def keep_inputs_of(self, value: ir.Value) -> None:
        """See GraphContext.keep_inputs_of: the graph inputs ``value`` is computed from join the
        main graph's KEPT_INPUTS, which cleanup never drops."""
        kept = self.builder.root.graph.meta.setdefault(KEPT_INPUTS, set())
        seen: set[int] = set()
        pending = [value]
        while pending:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if current.is_graph_input() and not current.is_initializer():
                kept.add(current)
            elif current.producer() is not None:
                pending.extend(v for v in current.producer().inputs if v is not None)

    def bind(self, value: torch._C.Value, obj: Any, *, static: bool = True) -> None:
        self.env[value.unique()] = obj
        if isinstance(obj, ir.Value):
            self._stamp(value, obj, static=static)

    # -- blocks (control flow) ---------------------------------------------------------------
    def inline_block(self, block: torch._C.Block, inputs: Sequence[Any]) -> list[Any]:
        """Emit a block into the current graph (a branch decided at export time, an unrolled
        loop iteration); returns what its outputs became."""
        for param, obj in zip(block.inputs(), inputs):
            self.env[param.unique()] = obj
        self.emit_block(block)
        return [self.lookup(v) for v in block.outputs()]

    def subgraph(
        self,
        block: torch._C.Block,
        inputs: Sequence[ir.Value],
        name: str,
        extra_outputs: Callable[[], Sequence[Any]] | None = None,
        lists_as_items: bool = False,
    ) -> ir.Graph:
        """Emit a block as an ONNX subgraph (If branch, Loop body) whose inputs are ``inputs``
        (the block's parameters first; any further inputs are the caller's to use). A tuple
        parameter (a Loop-carried tuple) takes a tuple of values, one graph input per item.

        Values of enclosing graphs are referenced directly (ONNX outer-scope capture). An
        output that is not computed inside the subgraph gets an Identity, since a subgraph
        output must be produced by the subgraph. ``extra_outputs``, called once the block is
        emitted, adds outputs beyond the block's own: the new values of lists the block
        changed, or scan outputs.

        A list the block returns is an ONNX sequence (opset 13); with ``lists_as_items`` (a
        Loop carrying a list of fixed length) an export-time list is one output per item.
        """
        graph = ir.Graph(_flat_values(inputs), [], nodes=[], name=name)
        builder = GraphBuilder(graph, self.builder.options, parent=self.builder)
        child = _Emitter(builder, self.registry, self.static_shapes, parent=self)
        for param, value in zip(block.inputs(), inputs):
            child.env[param.unique()] = value
        child.emit_block(block)
        # an If branch's outputs are typed by the If's (a branch returning None of an Optional[T])
        # and a Loop body's carried outputs by the Loop's (None for a carried Optional[T])
        owner = block.owningNode()
        kinds_in = [v.type() for v in block.outputs()]
        if owner is not None and owner.kind() == "prim::If":
            kinds_in = [v.type() for v in owner.outputs()]
        elif owner is not None and owner.kind() == "prim::Loop":
            kinds_in = kinds_in[:1] + [v.type() for v in owner.outputs()]
        results, kinds = _flat_tuples(
            [child.lookup(v) for v in block.outputs()],
            kinds_in,
            spread_lists=lists_as_items,
        )
        if extra_outputs is not None:
            results.extend(extra_outputs())
        for position, obj in enumerate(results):
            if isinstance(obj, float) and position < len(kinds) and isinstance(kinds[position], torch._C.FloatType):
                obj = builder.constant(obj, ir.DataType.DOUBLE)  # a Python float is a double in TorchScript
            if position < len(kinds) and isinstance(kinds[position], torch._C.ListType):
                if isinstance(obj, (RuntimeList, list)) or obj is None:
                    obj = _list_output(GraphContext(builder, block.owningNode(), emitter=child), obj, kinds[position])
            if isinstance(obj, RuntimeList):
                raise TypeError("a branch or loop body returns a list whose length is only known at run time")
            if not isinstance(obj, ir.Value):
                if obj is None and position < len(kinds) and isinstance(kinds[position], torch._C.OptionalType):
                    # None for an Optional[T] the other path sets: an empty ONNX optional,
                    # typed by the If once the other branch is known (ONNX Optional, opset 15/16)
                    obj = _empty_optional(builder)
                    graph.outputs.append(obj)
                    continue
                if obj is None and position < len(kinds) and not isinstance(kinds[position], torch._C.NoneType):
                    # prim::Uninitialized on a path that never reads it (a `return` inside a
                    # loop): a zero placeholder, cast by the If to the other branch's dtype
                    obj = _pass_through(builder, builder.constant(torch.zeros(())))
                    obj.meta["uninitialized"] = True
                if obj is None:
                    raise TypeError("a branch or loop body returns None where ONNX needs a tensor")
                if not isinstance(obj, (bool, int, float, torch.Tensor, ir.Value)):
                    # a dict or an object of a TorchScript class chosen at run time
                    raise TypeError(
                        f"a branch or loop body decided at run time returns {obj!r}: ONNX If and Loop carry "
                        "tensors, sequences and optionals only (build it after the branch, from values chosen in it)"
                    )
                obj = builder.constant(obj) if not isinstance(obj, ir.Value) else obj
            if isinstance(obj.type, ir.SequenceType) and obj in graph.inputs and obj not in graph.outputs:
                pass  # a Loop-carried list the body left alone
            elif obj.producer() is None or obj.producer().graph is not graph or obj in graph.outputs:
                obj = _pass_through(builder, obj)
            graph.outputs.append(obj)
        return graph

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
        torch_reads = self.run_time.reads_of(node, inputs)
        schema = schema_of(node)
        if schema is not None and self._try_fold(node, schema, inputs):
            if torch_reads is not None:
                self.run_time.mark(node, torch_reads, self.lookup)
            return
        if schema is not None:
            inputs = self._harmonize(node, schema, inputs)
        symbolic = self.registry.lookup(kind, self.builder.options.opset, schema.overload_name if schema else "")
        if symbolic is None:  # in a branch (see emit_graph), or a sub-block added later
            raise UnsupportedOperatorError(
                self.located_unsupported()
                or [UnsupportedOp(kind, 1, (self.locate(node),), self.registry.opsets(kind))],
                self.builder.options.opset,
            )
        g = GraphContext(self.builder, node, emitter=self)
        try:
            # aten ops on quantized tensors (eager-quantized models) run on dequantized values
            result = around_dequantized(g, inputs, lambda ins: self._call(g, symbolic, schema, ins))
            if result is None:
                result = self._call(g, symbolic, schema, inputs)
            if not kind.startswith("prim::"):  # lists, tuples and unpacking read nothing
                _note_inputs_read(result, inputs, node)
            if schema is not None and not has_blocks(node):
                self.dtypes.update(_corrected_dtypes(node, schema, inputs, result, self.dtypes))
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
        if torch_reads is not None or has_blocks(node):
            self.run_time.mark(node, torch_reads, self.lookup)

    def _emit_function(self, node: torch._C.Node) -> None:
        """A custom autograd Function (prim::PythonOp): through a symbolic written for torch's
        exporter (its inputs in the order of the call, tensors as values, other arguments as
        the Python objects given, a :class:`TorchGraphContext` as ``g``), else from the graph
        its forward recorded (:meth:`_emit_body`). That graph also stands in for the Function's
        own ``symbolic`` when it fails in its own or torch's code (written against torch's
        exporter: ``value.type().dtype()``): what the symbolic built before failing is undone."""
        cls = autograd_function(node)
        found = self.registry.lookup_function(cls, self.builder.options.opset) if cls is not None else None
        if found is None:
            if node.hasAttribute(FUNCTION_BODY):
                self._emit_body(node)
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
            if not node.hasAttribute(FUNCTION_BODY) or not _torch_only_symbolic(found.function, cls, error):
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

    def _harmonize(self, node: torch._C.Node, schema: torch._C.FunctionSchema, inputs: list[Any]) -> list[Any]:
        """Unify operand dtypes the pre-pass could not (scripted graphs with untyped values)."""
        positions = promotion.operand_positions(node.kind(), schema)
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
        target = promotion.emission_target(node, schema, inputs, operands)
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

    def _try_fold(self, node: torch._C.Node, schema: torch._C.FunctionSchema, inputs: list[Any]) -> bool:
        """Run a node in torch when every input is a constant (static shape arithmetic)."""
        kind = node.kind()
        if (
            not kind.startswith("aten::")
            or not self.registry.foldable(kind)
            or (kind.endswith("_") and not kind.endswith("__"))  # in-place, not __dunder__
            or schema.is_mutable
            or any(_is_dynamic(obj) for obj in inputs)  # most nodes: checked before asking torch
            or has_blocks(node)
            or _is_nondeterministic(node)
        ):
            return False
        try:
            result = _run_aten(schema, [_to_eager(arg, obj) for arg, obj in zip(schema.arguments, inputs)])
        except Exception:  # noqa: BLE001 - the symbolic handles what torch cannot fold
            return False
        results = list(result) if isinstance(result, tuple) else [result]
        outputs = list(node.outputs())
        if len(results) != len(outputs):
            return False
        size = sum(r.element_size() * r.numel() for r in results if isinstance(r, torch.Tensor))
        if size > _FOLD_LIMIT_BYTES:
            return False
        for ts_value, obj in zip(outputs, results):
            self.env[ts_value.unique()] = obj.detach() if isinstance(obj, torch.Tensor) else obj
        return True


def _note_inputs_read(result: Any, inputs: Sequence[Any], node: torch._C.Node) -> None:
    """Record, on the run-time values a node computed, the graph inputs the node read.

    Static shape arithmetic folds ``Shape(y)`` away, so ``x.view_as(y)`` leaves ``y`` without
    an ONNX reader; torch's exporter folds only the outputs of a TorchScript node whose values
    are known at export time (``y.size(0)``, ``zeros_like(y)``), so there ``y`` stays a graph
    input. Cleanup keeps an input that a surviving value names here (``READS_INPUTS``), which
    matches torch's interface: an input dropped by torch is one no run-time result depends on.

    Run-time arguments that are not graph inputs are recorded too, and so are the run-time
    items of a list of numbers: a lowering may leave one unread where torch's reads it
    (``split`` with sizes ``(x.size(1), y.size(1))`` computes the last size from the total,
    torch's Split takes both), and cleanup then follows such an unread argument to the
    inputs it was computed from. A list of tensors is not looked into: reading one item of a
    list literal (``pair[0]``) reads nothing else, in torch's exporter too.
    """
    read: list[ir.Value] = []
    for ts_value, obj in zip(node.inputs(), inputs):
        if isinstance(obj, ir.Value):
            items: Sequence[Any] = (obj,)
        elif isinstance(obj, (list, tuple)) and _is_number_list(ts_value):  # (asking the type costs)
            items = _run_time_values(obj)
        else:
            continue
        read.extend(item for item in items if item.const_value is None and not item.is_initializer())
    if not read:
        return
    for value in _run_time_values(result):
        value.meta.setdefault(READS_INPUTS, []).extend(r for r in read if r is not value)


def _is_number_list(value: torch._C.Value) -> bool:
    ts_type = value.type()
    return isinstance(ts_type, torch._C.ListType) and isinstance(
        ts_type.getElementType(), (torch._C.IntType, torch._C.FloatType, torch._C.NumberType)
    )


def _corrected_dtypes(
    node: torch._C.Node,
    schema: torch._C.FunctionSchema,
    inputs: Sequence[Any],
    result: Any,
    known: dict[int, torch.dtype],
) -> dict[int, torch.dtype]:
    """Where the symbolic's dtype differs from the one TorchScript recorded (or ``known``
    already corrected), ask torch: run the op on meta tensors of the emitted inputs' dtypes. If
    torch computes the symbolic's dtype, the recorded one was a guess of shape propagation on a
    scripted graph (``cat`` of half and float recorded half, ``sum(dtype=float)`` of half
    recorded half): the corrections returned (by the outputs' unique ids) are what _stamp
    reads instead. Otherwise the mismatch stands and _stamp reports the symbolic."""
    outputs = list(node.outputs())
    results = list(result) if isinstance(result, (tuple, list)) and len(outputs) > 1 else [result]
    pairs = []
    for ts_value, obj in zip(outputs, results):
        if not isinstance(obj, ir.Value) or obj.dtype is None:
            continue
        ts_type = ts_value.type()  # one pybind round trip per output (this runs for every node)
        if not isinstance(ts_type, torch._C.TensorType):
            continue
        recorded = known.get(ts_value.unique(), ts_type.dtype())
        if recorded is not None and tensors.from_torch_dtype(QUANTIZED_STORAGE.get(recorded, recorded)) != obj.dtype:
            pairs.append((ts_value, obj))
    if not pairs:
        return {}
    computed = _meta_dtypes(schema, inputs)
    if computed is None or len(computed) != len(outputs):
        return {}
    corrected = {}
    for ts_value, obj in pairs:
        dtype = computed[outputs.index(ts_value)]
        if dtype is not None and tensors.from_torch_dtype(dtype) == obj.dtype:
            corrected[ts_value.unique()] = dtype
    return corrected


def _meta_dtypes(schema: torch._C.FunctionSchema, inputs: Sequence[Any]) -> list[torch.dtype | None] | None:
    """The output dtypes torch computes for the op on inputs of the emitted dtypes (meta
    tensors: no data, no work), or None when the op cannot run so."""

    def meta(obj: Any) -> Any:
        if isinstance(obj, ir.Value):
            if obj.dtype is None or obj.shape is None:
                raise TypeError("untyped value")
            shape = [d if isinstance(d, int) else 2 for d in obj.shape]
            return torch.empty(shape, dtype=tensors.to_torch_dtype(obj.dtype), device="meta")
        if isinstance(obj, (list, tuple)):
            return type(obj)(meta(o) for o in obj)
        if isinstance(obj, (RuntimeList, ScanItem)):
            raise TypeError("run-time list")
        return obj

    try:
        out = _run_aten(schema, [_to_eager(arg, meta(obj)) for arg, obj in zip(schema.arguments, inputs)])
    except Exception:  # noqa: BLE001 - no verdict: the recorded dtype stands
        return None
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o.dtype if isinstance(o, torch.Tensor) else None for o in outs]


def _run_aten(schema: torch._C.FunctionSchema, values: Sequence[Any]) -> Any:
    """Call the aten overload of ``schema`` in torch on eager ``values`` bound by position
    (keyword-only arguments by name), without autograd."""
    packet = getattr(torch.ops.aten, schema.name.split("::", 1)[1])
    overload = getattr(packet, schema.overload_name or "default")
    args, kwargs = [], {}
    for arg, value in zip(schema.arguments, values):
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    with torch.no_grad():
        return overload(*args, **kwargs)


def _run_time_values(obj: Any) -> list[ir.Value]:
    """The values of a symbolic's result not known at export time (constants excluded)."""
    if isinstance(obj, ir.Value):
        return [] if obj.const_value is not None else [obj]
    if isinstance(obj, (list, tuple)):
        return [value for item in obj for value in _run_time_values(item)]
    return []


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
    return tb is not None and not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _pass_through(builder: GraphBuilder, value: ir.Value) -> ir.Value:
    """A copy of ``value`` made inside a subgraph, which ONNX requires for outputs.

    Identity takes sequences only from opset 14; before that a Loop with no iteration
    returns its initial value, of any type.
    """
    if not isinstance(value.type, ir.SequenceType) or builder.options.opset >= 14:
        (copied,) = builder.add_node("Identity", [value], {})
        copied.type = value.type
        return copied
    iteration = ir.Value(
        name=builder.unique_name("pass_iteration"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([])
    )
    condition = ir.Value(
        name=builder.unique_name("pass_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([])
    )
    carried = ir.Value(name=builder.unique_name("pass_value"), type=value.type)
    body = ir.Graph([iteration, condition, carried], [], nodes=[], name=builder.unique_name("pass_body"))
    body_builder = GraphBuilder(body, builder.options, parent=builder)
    (condition_out,) = body_builder.add_node("Identity", [condition], {})
    body.outputs.extend([condition_out, carried])
    (copied,) = builder.add_node(
        "Loop", [builder.constant(0), builder.constant(False), value], {"body": body}, infer_types=False
    )
    copied.type = value.type
    return copied


def _list_output(g: GraphContext, obj: Any, kind: torch._C.ListType) -> ir.Value:
    """A list a branch or loop body returns, as the ONNX sequence If and Loop carry from
    opset 13. None (prim::Uninitialized: a path that never reads it) is an empty sequence
    whose item dtype the If takes from the other branch."""
    if g.opset < runtime_list.CONTROL_FLOW_SEQUENCE_OPSET:
        raise ValueError(
            f"a list returned by a branch or loop body needs opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} "
            f"or higher: ONNX If and Loop carry sequences from opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} "
            f"(exporting at opset {g.opset})"
        )
    item_dtype = runtime_list.SCALAR_LIST_ITEMS.get(kind.getElementType().str())
    if obj is None:
        empty = g.op("SequenceEmpty", dtype=item_dtype or ir.DataType.FLOAT)
        empty.type = ir.SequenceType(ir.TensorType(item_dtype or ir.DataType.FLOAT))
        empty.meta["uninitialized"] = True
        return empty
    items = obj if isinstance(obj, RuntimeList) else runtime_list.from_items(g, obj, item_dtype)
    return runtime_list.sequence_of(g, items)


def _empty_optional(builder: GraphBuilder) -> ir.Value:
    """An empty optional standing for ``None`` on one path of an ``Optional[T]``; its element
    type is a placeholder that the control-flow symbolic sets from the other path."""
    if builder.options.opset < OPTIONAL_OPSET:
        raise ValueError(
            f"None on one path of an Optional value needs opset {OPTIONAL_OPSET} or higher: ONNX If and "
            f"Loop carry optional values from opset {OPTIONAL_OPSET} (exporting at opset {builder.options.opset})"
        )
    (value,) = builder.add_node(
        "Optional",
        [],
        {"type": ir.AttrTypeProto("type", ir.TypeAndShape(ir.TensorType(ir.DataType.FLOAT), None))},
        infer_types=False,
    )
    value.type = ir.OptionalType(ir.TensorType(ir.DataType.FLOAT))
    value.meta["empty_optional"] = True
    return value


def _flat_values(inputs: Sequence[Any]) -> list[ir.Value]:
    """Subgraph inputs with tuples and lists (Loop-carried) spread into one value per item."""
    flat: list[ir.Value] = []
    for value in inputs:
        if isinstance(value, RuntimeList):  # a Loop-carried list: its sequence
            value = value.sequence
        flat.extend(_flat_values(value) if isinstance(value, (tuple, list)) else [value])
    return flat


def _flat_tuples(results: list[Any], kinds: list[Any], *, spread_lists: bool = False) -> tuple[list[Any], list[Any]]:
    """Tuples a block returns (``result = (a, b, 1)`` in an ``if``) become one output per item,
    each with its TorchScript type; an uninitialized tuple (None) becomes one None per item.
    With ``spread_lists`` (a Loop body) so do export-time lists: a loop-carried list
    re-assigned in the body is carried one item per value."""
    flat: list[Any] = []
    flat_kinds: list[Any] = []
    for obj, kind in zip(results, kinds):
        if isinstance(kind, torch._C.TupleType) and (obj is None or isinstance(obj, tuple)):
            items = list(obj) if obj is not None else [None] * len(kind.elements())
            inner, inner_kinds = _flat_tuples(items, list(kind.elements()), spread_lists=spread_lists)
            flat.extend(inner)
            flat_kinds.extend(inner_kinds)
        elif spread_lists and isinstance(kind, torch._C.ListType) and isinstance(obj, list):
            inner, inner_kinds = _flat_tuples(obj, [kind.getElementType()] * len(obj), spread_lists=True)
            flat.extend(inner)
            flat_kinds.extend(inner_kinds)
        else:
            flat.append(obj)
            flat_kinds.append(kind)
    return flat, flat_kinds


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


def _is_nondeterministic(node: torch._C.Node) -> bool:
    """Node.isNondeterministic() asserts on some schemas (native_dropout with train=None)."""
    try:
        return node.isNondeterministic()
    except RuntimeError:
        return True


class _TypeMismatch(Exception):
    pass


def _is_dynamic(obj: Any) -> bool:
    if isinstance(obj, (ir.Value, RuntimeList, ScanItem)):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_is_dynamic(o) for o in obj)
    return False


_MEMORY_FORMATS = {
    0: torch.contiguous_format,
    1: torch.preserve_format,
    2: torch.channels_last,
    3: torch.channels_last_3d,
}


def _to_eager(arg: torch._C.Argument, obj: Any) -> Any:
    type_text = str(arg.type)
    if obj is None:
        return None
    if "ScalarType" in type_text and isinstance(obj, int):
        return tensors.scalar_type_to_dtype(obj)
    if "Layout" in type_text and isinstance(obj, int):
        return torch.strided
    if "MemoryFormat" in type_text and isinstance(obj, int):
        return _MEMORY_FORMATS[obj]
    if type_text == "Tensor" and not isinstance(obj, torch.Tensor):
        return torch.tensor(obj)
    return obj


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
    except Exception:  # noqa: BLE001
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
    ``scripted``: the graph is a scripted model's (see torch_run_time); ``locate`` names a
    node's place in the user's code in errors."""
    # Ops without a symbolic fail the export before anything is emitted, unless all of them sit
    # in branches of ifs, which export may find decided (torch.norm's scripted body holds
    # nuclear_norm under `if p == "nuc"`): then they fail only if a branch holding one is emitted.
    branches_only: list[bool] = []
    # (located by source_location first: ``locate`` may inline the model again, worth it only
    # for an error)
    opset = builder.options.opset
    unsupported = find_unsupported(ts_graph, registry, opset, branches_only=branches_only)

    def located() -> list[UnsupportedOp]:
        return find_unsupported(ts_graph, registry, opset, locate=locate) if unsupported else []

    if unsupported and not branches_only[0]:
        raise UnsupportedOperatorError(located(), opset)
    emitter = _Emitter(builder, registry, static_shapes, scripted=scripted, locate=locate)
    emitter.unsupported = unsupported
    emitter.located_unsupported = located
    for ts_value, obj in bound_inputs:
        emitter.env[ts_value.unique()] = obj
    emitter.emit_block(ts_graph)
    results = [emitter.lookup(v) for v in ts_graph.outputs()]
    # outputs torch's exporter computes at run time from scripted lists keep what it reads
    for value in emitter.run_time.output_reads(list(ts_graph.outputs()), results):
        emitter.keep_inputs_of(value)
    return results
