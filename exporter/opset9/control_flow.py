"""Control flow and TorchScript builtins of scripted models: prim::If, prim::Loop, raising, string
builtins that fold at export time (list builtins: script_lists.py; None checks: optionals.py).

ONNX idioms: an ``if`` on a run-time value is an ONNX If, one decided at export time emits only the
branch taken; loops are ONNX Loops with loop-carried values, unrolled only when the body needs
Python state (a growing Python list, None) and the trip count is known. Lists that grow at run
time are RuntimeLists (runtime_list.py): Loop scan outputs, or ONNX sequences from opset 13.
None on some run-time path of an Optional value is an ONNX optional (opset 16).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter import symbolic_helper as h
from exporter.arguments import ArgumentError
from exporter.errors import SymbolicError
from exporter.graph_context import OPTIONAL_OPSET, GraphContext
from exporter.opset9 import optionals, script_dicts
from exporter.registry import REGISTRY, onnx_symbolic
from exporter.runtime_list import RuntimeList
from exporter.ts_graph import all_nodes, inside, static_loop_iterations

Value = ir.Value


_UNROLL_LIMIT = 256


def _raises(block: torch._C.Block) -> bool:
    return any(node.kind() == "prim::RaiseException" for node in block.nodes())


class ExampleRaises(ValueError):
    """prim::RaiseException reached where every condition before it was decided at export time."""


def _raised_here(error: SymbolicError) -> bool:
    """Whether emitting a block failed only because it raises for every input consistent with
    what is known at export time (a nested argument check decided by static shapes)."""
    return isinstance(error.__cause__, ExampleRaises)


def _as_bool_value(g: GraphContext, condition: Value) -> Value:
    if h.rank_of(condition) not in (0, None):
        condition = g.op("Reshape", condition, g.constant(torch.tensor([], dtype=torch.int64)))
    return h.cast(g, condition, ir.DataType.BOOL)


class _OuterList:
    """A list defined before a control-flow node and used inside its blocks."""

    def __init__(self, obj: object) -> None:
        self.obj = obj
        self.uses: list[torch._C.Node] = []
        self.values: list[torch._C.Value] = []
        self.mutated = False


def _outer_lists(g: GraphContext, blocks: Sequence[torch._C.Block]) -> list[_OuterList]:
    """The lists (export-time or run-time) from enclosing code that ``blocks`` change, each
    with all of its uses inside them: these must be threaded through the If or Loop."""
    # Most blocks change no list: searching for the mutating ops in C++ first is much
    # cheaper than walking every node in Python.
    mutations = REGISTRY.kinds_where(lambda facts: facts.mutates_list)
    if not any(block.findAllNodes(kind, True) for kind in mutations for block in blocks):
        return []
    found: dict[int, _OuterList] = {}
    for node in all_nodes(blocks):
        for position, value in enumerate(node.inputs()):
            if not isinstance(value.type(), torch._C.ListType):
                continue
            if any(inside(block, value.node()) for block in blocks):
                continue
            obj = g.lookup(value)
            if not isinstance(obj, (list, RuntimeList)):
                continue
            entry = found.setdefault(id(obj), _OuterList(obj))
            entry.uses.append(node)
            if value not in entry.values:
                entry.values.append(value)
            if position == 0 and node.kind() in mutations:
                entry.mutated = True
    return [entry for entry in found.values() if entry.mutated]


def list_item_dtype(values: Sequence[torch._C.Value]) -> ir.DataType | None:
    """The item dtype of a list of Python scalars, from its TorchScript type (int[] -> INT64)."""
    for value in values:
        ts_type = value.type()
        if isinstance(ts_type, torch._C.ListType):
            return runtime_list.SCALAR_LIST_ITEMS.get(ts_type.getElementType().str())
    return None


def _as_runtime_list(g: GraphContext, entry: _OuterList) -> RuntimeList:
    if isinstance(entry.obj, RuntimeList):
        return entry.obj
    assert isinstance(entry.obj, list)
    converted = runtime_list.from_items(g, entry.obj, list_item_dtype(entry.values))
    g.replace(entry.obj, converted)
    return converted


def _sequences_in_control_flow(g: GraphContext, what: str) -> None:
    if g.opset < runtime_list.CONTROL_FLOW_SEQUENCE_OPSET:
        raise ValueError(
            f"{what} needs opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} or higher: ONNX Loop and If "
            f"carry sequences from opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} (exporting at opset {g.opset})"
        )


def _threaded_values(lists: Sequence[RuntimeList]) -> list[Value]:
    return [items.sequence for items in lists]  # type: ignore[misc]


@onnx_symbolic("prim::If")
def prim_if(g: GraphContext, *inputs: object) -> object:
    """prim::If(bool cond) with two blocks -> ONNX If.

    A condition known at export time emits only the taken branch. A branch that only raises
    (a scripted argument check) cannot be expressed in ONNX; the other branch is taken, as
    it is for every input the model accepts. So is a branch on a run-time condition that
    turns out to raise once its own static conditions are decided (``if len(size) == 5:``
    on a run-time list, then a check of the input's static shape that fails). Lists a branch
    changes become sequences that the If returns (opset 13).
    """
    (condition,) = inputs
    then_block, else_block = list(g.node.blocks())
    outputs = g.node.outputsSize()
    if isinstance(condition, (bool, int)) or (isinstance(condition, torch.Tensor) and condition.numel() == 1):
        taken = then_block if bool(condition) else else_block
        result = g.inline_block(taken)
    elif _raises(then_block) or _raises(else_block):
        result = g.inline_block(else_block if _raises(then_block) else then_block)
        if isinstance(condition, Value):  # torch keeps the check (an If), so its inputs stay
            g.keep_inputs_of(condition)
    else:
        assert isinstance(condition, Value)
        changed = _outer_lists(g, [then_block, else_block])
        if changed:
            _sequences_in_control_flow(g, "a list changed inside an `if` on a value computed at run time")
        lists = [_as_runtime_list(g, entry) for entry in changed]
        before = [runtime_list.sequence_of(g, items) for items in lists]
        where = "an `if` on a value computed at run time"
        dicts = script_dicts.outer_dicts(g, [then_block, else_block])
        branches = []
        for block, name in ((then_block, "then_branch"), (else_block, "else_branch")):
            for items, value in zip(lists, before):
                items.sequence = value
            for entry in dicts:
                entry.restore()
            try:
                branches.append(
                    g.subgraph(
                        block,
                        [],
                        name,
                        extra_outputs=lambda: [
                            *_threaded_values(lists),
                            *(v for entry in dicts for v in entry.written(where)),
                        ],
                    )
                )
            except SymbolicError as error:
                if not _raised_here(error):
                    raise
                for items, value in zip(lists, before):
                    items.sequence = value
                for entry in dicts:
                    entry.restore()
                result = g.inline_block(else_block if block is then_block else then_block)
                g.keep_inputs_of(condition)  # torch keeps the check (an If), so its inputs stay
                if outputs == 0:
                    return None
                return result[0] if outputs == 1 else tuple(result)
        widths = [_flat_width(v.type()) for v in g.node.outputs()]
        flat_outputs = sum(widths)
        _learned_sequence_types(branches, lists, flat_outputs)
        _shaped_placeholders(g, branches)
        _typed_sequence_placeholders(branches)
        flat_ts_types = [t for v in g.node.outputs() for t in _flat_types(v.type())]
        optional_shapes = optionals.optional_branches(g, branches, flat_ts_types, optionals.absent_in_branch(condition))
        _same_branch_dtypes(g, branches, flat_ts_types)
        dict_count = sum(len(entry.keys) for entry in dicts)
        count = flat_outputs + len(lists) + dict_count
        if count == 0:
            return None
        values = g.op(
            "If", _as_bool_value(g, condition), then_branch=branches[0], else_branch=branches[1], num_outputs=count
        )
        values = values if isinstance(values, tuple) else (values,)
        # a placeholder for a value set on the other path only (prim::Uninitialized) says nothing of its rank
        _typed_like(values, [a if not a.meta.get("uninitialized") else b for a, b in zip(*branches_outputs(branches))])
        for position, shape in optional_shapes.items():
            values[position].shape = shape
        for items, value in zip(lists, values[flat_outputs:]):
            items._set_sequence(value)
        position = flat_outputs + len(lists)
        for entry in dicts:
            entry.update(values[position : position + len(entry.keys)])
            position += len(entry.keys)
        if outputs == 0:
            return None
        grouped = [_as_list(v) for v in _regroup(list(values[:flat_outputs]), [v.type() for v in g.node.outputs()])]
        return grouped[0] if outputs == 1 else tuple(grouped)
    if outputs == 0:
        return None
    return result[0] if outputs == 1 else tuple(result)


def _as_list(value: object) -> object:
    """An If or Loop output that is an ONNX sequence is the run-time list it holds."""
    if isinstance(value, Value) and isinstance(value.type, ir.SequenceType):
        element = value.type.elem_type
        return RuntimeList(sequence=value, item_dtype=element.dtype if isinstance(element, ir.TensorType) else None)
    if isinstance(value, tuple):
        return tuple(_as_list(v) for v in value)
    return value


def _typed_sequence_placeholders(branches: list[ir.Graph]) -> None:
    """An empty sequence standing for a list only one branch sets (prim::Uninitialized)
    takes the other branch's item dtype: ONNX If needs one type per output."""
    for a, b in zip(*branches_outputs(branches)):
        for mine, other in ((a, b), (b, a)):
            if not mine.meta.get("uninitialized") or not isinstance(mine.type, ir.SequenceType):
                continue
            if not isinstance(other.type, ir.SequenceType) or other.meta.get("uninitialized"):
                continue
            element = other.type.elem_type
            mine.producer().attributes["dtype"] = ir.AttrInt64("dtype", int(element.dtype))
            mine.type = ir.SequenceType(element)


def _learned_sequence_types(branches: list[ir.Graph], lists: Sequence[RuntimeList], first: int) -> None:
    """A list threaded through an If that starts empty learns its item dtype from the first
    append, which may come in the second branch: the first branch's pass-through copy of
    the empty sequence takes that dtype too (ONNX If needs one type per output)."""
    for offset, items in enumerate(lists):
        if items.item_dtype is None:
            continue
        for graph in branches:
            output = graph.outputs[first + offset]
            if not isinstance(output.type, ir.SequenceType):
                continue
            output.type = items.sequence_type()
            producer = output.producer()
            if producer is not None and producer.op_type == "Loop":  # the copy below opset 14
                for carried in producer.attributes["body"].value.inputs[2:]:
                    carried.type = items.sequence_type()


def branches_outputs(branches: list[ir.Graph]) -> tuple[list[Value], list[Value]]:
    return list(branches[0].outputs), list(branches[1].outputs)


def _flat_types(ts_type: torch._C.JitType) -> list[torch._C.JitType]:
    if isinstance(ts_type, torch._C.TupleType):
        return [t for element in ts_type.elements() for t in _flat_types(element)]
    return [ts_type]


def _flat_objects(objs: Sequence[object], ts_types: Sequence[torch._C.JitType]) -> tuple[list[object], list]:
    """Objects spread like their TorchScript types: a tuple (or None for an uninitialized
    tuple) becomes one object per item, with the item types; so does an export-time list
    (a loop-carried list re-assigned in the body, whose length stays fixed)."""
    flat: list[object] = []
    flat_types: list[torch._C.JitType] = []
    for obj, ts_type in zip(objs, ts_types):
        if isinstance(ts_type, torch._C.TupleType) and (obj is None or isinstance(obj, tuple)):
            elements = list(ts_type.elements())
            inner, inner_types = _flat_objects(list(obj) if obj is not None else [None] * len(elements), elements)
            flat.extend(inner)
            flat_types.extend(inner_types)
        elif isinstance(ts_type, torch._C.ListType) and isinstance(obj, list):
            inner, inner_types = _flat_objects(obj, [ts_type.getElementType()] * len(obj))
            flat.extend(inner)
            flat_types.extend(inner_types)
        else:
            flat.append(obj)
            flat_types.append(ts_type)
    return flat, flat_types


def _flat_width(ts_type: torch._C.JitType) -> int:
    return len(_flat_types(ts_type))


def _regroup(
    values: list[Value], ts_types: Sequence[torch._C.JitType], like: Sequence[object] | None = None
) -> list[object]:
    """The If's or Loop's flat outputs back into the tuples TorchScript returns, and into
    lists of the length of the export-time lists in ``like`` (a Loop's initial values)."""
    grouped: list[object] = []
    for position, ts_type in enumerate(ts_types):
        template = like[position] if like is not None and position < len(like) else None
        if isinstance(ts_type, torch._C.TupleType):
            inner = list(template) if isinstance(template, tuple) else None
            grouped.append(tuple(_regroup(values, ts_type.elements(), inner)))
        elif isinstance(ts_type, torch._C.ListType) and isinstance(template, list):
            grouped.append(_regroup(values, [ts_type.getElementType()] * len(template), template))
        else:
            grouped.append(values.pop(0))
    return grouped


def _cast_output(g: GraphContext, graph: ir.Graph, position: int, dtype: ir.DataType) -> None:
    output = graph.outputs[position]
    cast = ir.node("Cast", [output], attributes={"to": dtype})
    cast.outputs[0].name = g.unique_name("branch_cast")
    cast.outputs[0].type = ir.TensorType(dtype)
    cast.outputs[0].shape = output.shape
    if output.meta.get("uninitialized"):
        cast.outputs[0].meta["uninitialized"] = True
        cast.outputs[0].shape = None  # a placeholder: the other path gives the real shape
    graph.append(cast)
    graph.outputs[position] = cast.outputs[0]


def _shaped_placeholders(g: GraphContext, branches: list[ir.Graph]) -> None:
    """A placeholder for a value only one branch sets (prim::Uninitialized) takes the other
    branch's dtype and rank (ONNX If inference wants one rank): zeros of its static dims, 1 elsewhere."""
    for position, (a, b) in enumerate(zip(*branches_outputs(branches))):
        for graph, mine, other in ((branches[0], a, b), (branches[1], b, a)):
            if not mine.meta.get("uninitialized") or other.meta.get("uninitialized"):
                continue
            if other.dtype is None or other.shape is None or isinstance(other.type, ir.SequenceType):
                continue
            dims = [d if isinstance(d, int) else 1 for d in other.shape]
            zeros = torch.zeros(dims, dtype=tensors.to_torch_dtype(other.dtype))
            node = ir.node("Constant", [], attributes={"value": ir.tensor(zeros.numpy(), name=g.unique_name("unset"))})
            node.outputs[0].name = g.unique_name("unset")
            node.outputs[0].type = ir.TensorType(other.dtype)
            node.outputs[0].shape = ir.Shape(dims)
            node.outputs[0].meta["uninitialized"] = True
            graph.append(node)
            graph.outputs[position] = node.outputs[0]


def _same_branch_dtypes(g: GraphContext, branches: list[ir.Graph], ts_types: list[torch._C.JitType]) -> None:
    """ONNX If needs both branches to give each output one dtype: a Python float is a double
    (TorchScript's float); otherwise the else branch follows the then branch."""
    then_graph, else_graph = branches
    for position, ts_type in enumerate(ts_types):
        if position >= min(len(then_graph.outputs), len(else_graph.outputs)):
            break
        then_dtype, else_dtype = then_graph.outputs[position].dtype, else_graph.outputs[position].dtype
        if then_dtype is None or else_dtype is None or then_dtype == else_dtype:
            continue
        if then_graph.outputs[position].meta.get("uninitialized"):
            _cast_output(g, then_graph, position, else_dtype)
        elif isinstance(ts_type, torch._C.FloatType):
            for graph in branches:
                if graph.outputs[position].dtype != ir.DataType.DOUBLE:
                    _cast_output(g, graph, position, ir.DataType.DOUBLE)
        else:
            _cast_output(g, else_graph, position, then_dtype)


def _typed_like(values: Sequence[Value], graph_outputs: Sequence[Value]) -> None:
    """Type If/Loop results from the subgraph outputs they come from (the shapes may differ
    between branches and iterations, so only the rank is kept)."""
    for value, source in zip(values, graph_outputs):
        if value.type is None and source.type is not None:
            value.type = source.type
        if isinstance(source.type, ir.OptionalType) and value.shape is None:
            # the shape every path that sets the element agrees on (see optionals.element_shape)
            value.shape = source.shape
        elif value.shape is None and source.shape is not None and not isinstance(source.type, ir.SequenceType):
            value.shape = ir.Shape([None] * len(source.shape))


def _is_for_loop(body: torch._C.Block) -> bool:
    condition = list(body.outputs())[0]
    node = condition.node()
    return node.kind() == "prim::Constant" and node.output().toIValue() is True


def _unrolled_loop(g: GraphContext, body: torch._C.Block, trip_count: int, carried: list[object], count: int) -> object:
    state = list(carried)
    for iteration in range(trip_count):
        outputs = g.inline_block(body, [iteration, *state])
        state = outputs[1:]
    return state[0] if count == 1 else (tuple(state) if count else None)


def _is_scan(entry: _OuterList, body: torch._C.Block) -> bool:
    """A list the body only appends to, once per iteration: a Loop scan output. Items the list
    held before the loop (``path = [last]`` before a backtracking loop) are stacked in front of
    it after the loop; they and the appended items must share one shape, as a scan output's
    iterations do."""
    if not isinstance(entry.obj, list) or len(entry.uses) != 1:
        return False
    if not all(isinstance(item, (Value, bool, int, float)) for item in entry.obj):
        return False
    (use,) = entry.uses
    return use.kind() == "aten::append" and use.owningBlock() == body and not use.output().uses()


def _only_cat_dim(entry: _OuterList, node: torch._C.Node) -> int | None:
    """The dim of the ``torch.cat(list, dim)`` calls after the loop ``node`` when they are the
    list's only readers and agree on a constant dim, else None."""
    dims = set()
    for value in entry.values:
        for use in value.uses():
            user = use.user
            if user == node or _inside_node(node, user):
                continue
            if user.kind() != "aten::cat" or use.offset != 0:
                return None
            dim = user.inputsAt(1).toIValue()
            if not isinstance(dim, int):
                return None
            dims.add(dim)
    return dims.pop() if len(dims) == 1 else None


def _later_uses(entry: _OuterList, node: torch._C.Node) -> list[str]:
    return [
        use.user.kind()
        for value in entry.values
        for use in value.uses()
        if use.user != node and not _inside_node(node, use.user)
    ]


def _inside_node(node: torch._C.Node, other: torch._C.Node) -> bool:
    return any(inside(block, other) for block in node.blocks())


class LoopRefused(Exception):
    """The ONNX Loop form cannot express this loop, though the loop itself is fine.

    Raised only where :func:`_onnx_loop` refuses: lists threaded through a Loop below the
    sequence opset, a non-bool condition, or a body whose symbolics need a value known at
    export time (the iteration number, a list index) and say so with an ArgumentError or a
    ValueError. A loop with a static trip count is then unrolled; every other error from the
    Loop path is a bug and surfaces as one instead of being hidden by unrolling.
    """


def _body_subgraph(
    g: GraphContext,
    body: torch._C.Block,
    inputs: Sequence[object],
    extra_outputs: Callable[[], list[object]],
    lists_as_items: bool,
) -> ir.Graph:
    """The Loop body as an ONNX subgraph; symbolics refusing a run-time value become a LoopRefused."""
    try:
        return g.subgraph(body, inputs, "loop_body", extra_outputs, lists_as_items)  # type: ignore[arg-type]
    except SymbolicError as error:
        if isinstance(error.__cause__, (ArgumentError, ValueError)):
            raise LoopRefused(str(error)) from error
        raise


def _carried_value(g: GraphContext, obj: object, ts_type: torch._C.JitType) -> Value:
    """A loop-carried initial value as ONNX: a Python float is a double in TorchScript (the body's
    float() and scalar arithmetic compute in double), so it starts as one; a value that is
    None here (prim::Uninitialized: a `return` inside the loop) is a placeholder typed later."""
    if isinstance(obj, Value):
        return obj
    if isinstance(obj, RuntimeList):  # a carried list whose length may change: its sequence
        return runtime_list.sequence_of(g, obj)
    if obj is None and isinstance(ts_type, torch._C.OptionalType):
        if g.opset < OPTIONAL_OPSET:
            raise ValueError(
                f"an Optional value carried through a loop from None needs opset {OPTIONAL_OPSET} or higher: "
                f"ONNX Loop carries optional values from opset {OPTIONAL_OPSET} (exporting at opset {g.opset})"
            )
        # an Optional[T] starting as None: an empty ONNX optional, typed once the body is known
        empty = g.op("Optional", type=ir.AttrTypeProto("type", ir.TypeAndShape(ir.TensorType(ir.DataType.FLOAT), None)))
        empty.type = ir.OptionalType(ir.TensorType(ir.DataType.FLOAT))
        empty.meta["empty_optional"] = True
        return empty
    if obj is None:
        return None  # type: ignore[return-value]
    if isinstance(obj, (dict, script_dicts.ScriptObject)):
        what = (
            f"an object of TorchScript class {obj.class_name}"
            if isinstance(obj, script_dicts.ScriptObject)
            else "a dict"
        )
        raise ValueError(
            f"{what} carried through a loop whose trip count is only known at run time is not supported: ONNX "
            "Loop carries tensors, sequences and optionals only (a loop with a known trip count is unrolled)"
        )
    if isinstance(obj, float) or (isinstance(ts_type, torch._C.FloatType) and isinstance(obj, (int, float))):
        return g.constant(float(obj), ir.DataType.DOUBLE)
    return g.constant(obj)


def _consistent_carried(
    g: GraphContext, body: ir.Graph, carried_in: list[Value], initial: list[Value | None]
) -> list[Value]:
    """ONNX Loop needs each carried value to keep one type. A value whose type changes in the
    body (a Python float accumulator updated from float32 arithmetic) is cast back to the type
    it came in with; a placeholder for a value only set on some path (prim::Uninitialized,
    a `return` inside the loop) takes the type the body gives it, starting as a zero."""
    result: list[Value] = []
    for position, (value_in, start) in enumerate(zip(carried_in, initial)):
        output = body.outputs[1 + position]
        if optionals.is_optional(start):
            optionals.optional_carried(g, body, position, value_in, start)
            result.append(start)
            continue
        if start is None:
            if output.dtype is None:
                raise TypeError("a loop-carried value set only on some paths has no known type")
            start = g.constant(torch.zeros((), dtype=tensors.to_torch_dtype(output.dtype)))
            value_in.type = ir.TensorType(output.dtype)
        elif (
            not isinstance(value_in.type, ir.SequenceType)
            and value_in.dtype is not None
            and output.dtype is not None
            and output.dtype != value_in.dtype
        ):
            cast = ir.node("Cast", [output], attributes={"to": value_in.dtype})
            cast.outputs[0].name = g.unique_name("loop_carried_cast")
            cast.outputs[0].type = ir.TensorType(value_in.dtype)
            cast.outputs[0].shape = output.shape
            body.append(cast)
            body.outputs[1 + position] = cast.outputs[0]
        result.append(start)
    return result


def _lists_keep_their_length(body: torch._C.Block, carried: list[object], ts_types: list[torch._C.JitType]) -> bool:
    """Whether every export-time list the loop carries comes back from the body as a list
    literal of the same length (or unchanged): then each item is one loop-carried value,
    at any opset; otherwise the lists are carried as ONNX sequences."""
    params = list(body.inputs())[1:]
    outputs = list(body.outputs())[1:]
    for obj, ts_type, param, output in zip(carried, ts_types, params, outputs):
        if not (isinstance(obj, list) and isinstance(ts_type, torch._C.ListType)):
            continue
        if output == param:
            continue
        node = output.node()
        if node.kind() != "prim::ListConstruct" or node.inputsSize() != len(obj):
            return False
    return True


def _onnx_loop(
    g: GraphContext,
    body: torch._C.Block,
    trip_count: object,
    condition: object,
    carried: list[object],
    count: int,
    changed: list[_OuterList],
    dicts: Sequence[script_dicts.OuterDict] = (),
) -> object:
    sequences_allowed = g.opset >= runtime_list.CONTROL_FLOW_SEQUENCE_OPSET
    scans: list[_OuterList] = []
    threaded: list[_OuterList] = []
    concats: list[tuple[_OuterList, int]] = []
    for entry in changed:
        # A scan output needs items of one shape, which torch.stack guarantees; with
        # sequences available, lists used any other way stay sequences. Without them, a list
        # only torch.cat reads is concatenated in the loop: its items may differ in size.
        stacked_only = set(_later_uses(entry, g.node)) <= {"aten::stack", "aten::len"}
        cat_dim = _only_cat_dim(entry, g.node)
        if _is_scan(entry, body) and not sequences_allowed and cat_dim is not None:
            concats.append((entry, cat_dim))
        elif _is_scan(entry, body) and (stacked_only or not sequences_allowed):
            scans.append(entry)
        else:
            threaded.append(entry)
    if threaded:
        try:
            _sequences_in_control_flow(
                g,
                "a list changed inside a loop whose trip count is only known at run time (other than "
                "appending one item per iteration to a list that starts empty)",
            )
        except ValueError as error:
            raise LoopRefused(str(error)) from None
    lists = [_as_runtime_list(g, entry) for entry in threaded]
    trip = (
        g.constant(trip_count if isinstance(trip_count, int) else h.INT64_MAX)
        if not isinstance(trip_count, Value)
        else h.cast(g, trip_count, ir.DataType.INT64)
    )
    cond = g.constant(bool(condition)) if not isinstance(condition, Value) else _as_bool_value(g, condition)
    # A carried tuple (the return value of a `return` inside the loop) is one value per item.
    # an Optional[T] that starts as None has the Loop output's type (the input's is NoneType)
    carried_types = [
        out.type() if isinstance(out.type(), torch._C.OptionalType) else value.type()
        for value, out in zip(list(g.node.inputs())[2:], g.node.outputs())
    ]
    carried = optionals.optional_where_set_to_none(g, body, carried, carried_types)
    lists_as_items = _lists_keep_their_length(body, carried, carried_types)
    if not lists_as_items:  # carried lists whose length may change are ONNX sequences
        _sequences_in_control_flow(g, "a list re-assigned in a loop whose trip count is only known at run time")
        carried = [
            runtime_list.from_items(g, c, runtime_list.SCALAR_LIST_ITEMS.get(t.getElementType().str()))
            if isinstance(c, list) and isinstance(t, torch._C.ListType)
            else c
            for c, t in zip(carried, carried_types)
        ]
    flat_carried, flat_types = _flat_objects(carried, carried_types)
    initial = [_carried_value(g, c, t) for c, t in zip(flat_carried, flat_types)]
    flat_count = len(initial)
    initial_lists = [runtime_list.sequence_of(g, items) for items in lists]
    iteration = ir.Value(
        name=g.unique_name("loop_iteration"), type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([])
    )
    cond_in = ir.Value(name=g.unique_name("loop_condition"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    carried_in = [
        ir.Value(
            name=g.unique_name("loop_carried"),
            type=v.type
            if optionals.is_optional(v) or (v is not None and isinstance(v.type, ir.SequenceType))
            else (ir.TensorType(v.dtype) if v is not None and v.dtype is not None else None),
            shape=ir.Shape([None] * len(v.shape)) if v is not None and v.shape is not None else None,
        )
        for v in initial
    ]
    lists_in = [items.new_sequence_value(g.unique_name("loop_list")) for items in lists]
    # each dict key the body writes is one more carried value; it must hold one before the loop
    initial_dicts = [
        _carried_value(g, v, torch._C.TensorType.get())
        for entry in dicts
        for v in entry.written(script_dicts.RUN_TIME_LOOP)
    ]
    dicts_in = [
        ir.Value(
            name=g.unique_name("loop_dict_item"),
            type=ir.TensorType(v.dtype) if v.dtype is not None else None,
            shape=ir.Shape([None] * len(v.shape)) if v.shape is not None else None,
        )
        for v in initial_dicts
    ]
    position = 0
    for entry in dicts:
        entry.update(dicts_in[position : position + len(entry.keys)])
        position += len(entry.keys)
    for items, value in zip(lists, lists_in):
        items.sequence = value
    collectors = [runtime_list.ScanItem() for _ in scans]
    prefixes = [list(entry.obj) for entry in scans]  # type: ignore[call-overload]
    for entry, collector in zip(scans, collectors):
        g.replace(entry.obj, collector)
    buffers = [
        runtime_list.ConcatItem(
            dim, ir.Value(name=g.unique_name("loop_cat_buffer")), ir.Value(name=g.unique_name("loop_cat_sizes"))
        )
        for _, dim in concats
    ]
    for (entry, _), buffer in zip(concats, buffers):
        g.replace(entry.obj, buffer)
    buffers_in = [value for b in buffers for value in (b.buffer_in, b.sizes_in)]
    # Loop-1 wants at least one loop-carried value: a loop that only has scan outputs passes
    # a dummy one through.
    dummy = [g.constant(False)] if not initial and not initial_lists and not initial_dicts and not buffers else []
    dummy_in = [
        ir.Value(name=g.unique_name("loop_unused"), type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
        for _ in dummy
    ]

    def extra_outputs() -> list[object]:
        grown = [value for b in buffers for value in (b.buffer_out, b.sizes_out)]
        return [
            *_threaded_values(lists),
            *(v for entry in dicts for v in entry.written(script_dicts.RUN_TIME_LOOP)),
            *dummy_in,
            *grown,
            *(c.item for c in collectors),
        ]

    grouped_in = [_as_list(v) for v in _regroup(list(carried_in), carried_types, carried)]
    body_graph = _body_subgraph(
        g, body, [iteration, *grouped_in, *lists_in, *dicts_in, *dummy_in, *buffers_in], extra_outputs, lists_as_items
    )
    # ONNX's body takes (iteration, condition, carried...); TorchScript's takes (iteration, carried...).
    body_graph.inputs.insert(1, cond_in)
    expected = 1 + flat_count + len(lists) + len(dicts_in) + len(dummy) + len(buffers_in) + len(scans)
    if len(body_graph.outputs) != expected:  # a carried list changed length: ONNX fixes the count
        raise ValueError(
            "a list re-assigned in a loop whose trip count is only known at run time must keep its length "
            "(each item is one loop-carried value)"
        )
    if body_graph.outputs[0].dtype != ir.DataType.BOOL:
        raise LoopRefused("the loop condition must be a bool")
    initial = _consistent_carried(g, body_graph, carried_in, initial)
    if flat_count + len(lists) + len(dicts_in) + len(scans) + len(buffers) == 0:
        return None
    # the buffers start empty, typed by the items the body appended
    initial_buffers = []
    for buffer in buffers:
        assert buffer.item is not None and buffer.item.dtype is not None
        initial_buffers.append(g.constant(torch.zeros(0, dtype=tensors.to_torch_dtype(buffer.item.dtype))))
        initial_buffers.append(g.constant(torch.zeros(buffer.sizes_in.shape[0], dtype=torch.int64)))
    total = flat_count + len(lists) + len(dicts_in) + len(dummy) + len(buffers_in) + len(scans)
    values = g.op(
        "Loop",
        trip,
        cond,
        *initial,
        *initial_lists,
        *initial_dicts,
        *dummy,
        *initial_buffers,
        body=body_graph,
        num_outputs=total,
    )
    values = values if isinstance(values, tuple) else (values,)
    _typed_like(values[: total - len(scans)], body_graph.outputs[1:])
    for items, value in zip(lists, values[flat_count:]):
        items._set_sequence(value)
    position = flat_count + len(lists)
    for entry in dicts:
        entry.update(values[position : position + len(entry.keys)])
        position += len(entry.keys)
    grown = values[flat_count + len(lists) + len(dicts_in) + len(dummy) : total - len(scans)]
    for buffer, offset in zip(buffers, range(0, len(grown), 2)):
        g.replace(buffer, runtime_list.concatenated(g, buffer, grown[offset], grown[offset + 1]))
    for entry, collector, value, prefix in zip(scans, collectors, values[total - len(scans) :], prefixes):
        item = collector.item
        assert item is not None
        value.dtype = item.dtype
        if item.shape is not None:
            value.shape = ir.Shape([None, *item.shape])
        if prefix:  # the items held before the loop go in front of the scanned ones
            value = _scan_with_prefix(g, prefix, value, item)
        scanned = RuntimeList(stacked=value, item_dtype=item.dtype)
        scanned.nested = collector.nested
        g.replace(collector, scanned)
    if count == 0:
        return None
    grouped = [_as_list(v) for v in _regroup(list(values[:flat_count]), [v.type() for v in g.node.outputs()], carried)]
    return grouped[0] if count == 1 else tuple(grouped)


def _scan_with_prefix(g: GraphContext, prefix: list[object], scanned: Value, item: Value) -> Value:
    """``prefix`` (the list's items before the loop) stacked on axis 0 in front of the scan output."""
    parts = [h.unsqueeze(g, runtime_list.item_value(g, v, item.dtype), [0]) for v in prefix]
    joined = g.op("Concat", *parts, scanned, axis=0)
    joined.dtype = scanned.dtype
    joined.shape = scanned.shape
    return joined


@onnx_symbolic("prim::Loop")
def prim_loop(g: GraphContext, *inputs: object) -> object:
    """prim::Loop(int max_trip_count, bool cond, *carried) -> ONNX Loop, or an unrolled copy.

    Loops become ONNX Loop, whose size does not grow with the trip count. A for loop with a
    trip count known at export time (up to 256) is unrolled instead when its body changes
    Python-level state ONNX cannot carry: lists from outside the loop, values that start as
    None, or a body that only exports with its iteration number known (the Loop attempt
    failed). With a run-time trip count, lists the body appends to become a scan output or
    a loop-carried sequence (see runtime_list.py).
    """
    trip_count, condition, *carried = inputs
    (body,) = list(g.node.blocks())
    count = g.node.outputsSize()
    changed = _outer_lists(g, [body])
    dicts = script_dicts.outer_dicts(g, [body])
    static_for = (
        isinstance(trip_count, int) and condition is True and _is_for_loop(body) and trip_count <= _UNROLL_LIMIT
    )
    if static_for:
        needs_python_state = (
            bool(dicts)
            or any(isinstance(e.obj, list) for e in changed)
            or any(c is None or isinstance(c, (list, tuple, dict, script_dicts.ScriptObject)) for c in carried)
        )
        if needs_python_state or trip_count <= 1:
            return _unrolled_loop(g, body, trip_count, carried, count)
        saved = [(e.obj, e.obj.sequence, e.obj.stacked) for e in changed if isinstance(e.obj, RuntimeList)]
        try:
            return _onnx_loop(g, body, trip_count, condition, carried, count, changed)
        except LoopRefused:  # the unrolled form needs less of ONNX; any other error is a bug
            for items, sequence, stacked in saved:
                items.sequence, items.stacked = sequence, stacked
            return _unrolled_loop(g, body, trip_count, carried, count)
    needs_python_state = (
        bool(dicts)
        or any(isinstance(e.obj, list) for e in changed)
        or any(c is None or isinstance(c, (list, tuple, dict, script_dicts.ScriptObject)) for c in carried)
    )
    if isinstance(trip_count, int) and condition is True and needs_python_state:
        iterations = static_loop_iterations(body, carried, g.lookup, min(trip_count, _UNROLL_LIMIT))
        if iterations is not None:
            return _unrolled_loop(g, body, iterations, carried, count)
    try:
        return _onnx_loop(g, body, trip_count, condition, carried, count, changed, dicts)
    except LoopRefused as refusal:  # nothing to fall back to: report the refusal as it was raised
        if isinstance(refusal.__cause__, SymbolicError):
            raise refusal.__cause__
        raise ValueError(str(refusal)) from None


@onnx_symbolic("prim::RaiseException")
def prim_raise_exception(g: GraphContext, *inputs: object) -> object:
    """prim::RaiseException(str msg, str? cls): only reached in a branch decided at export
    time to raise, which means the example input itself would have raised."""
    raise ExampleRaises(f"the scripted model raises here for the example inputs: {inputs[0]!r}")


@onnx_symbolic("prim::Uninitialized")
def prim_uninitialized(g: GraphContext, *inputs: object) -> object:
    """prim::Uninitialized() -> Any: a placeholder on paths that raise; never read."""
    return None
