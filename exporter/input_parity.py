"""Which graph inputs the exported model keeps: those torch's exporter keeps.

Which graph inputs an exported model takes is part of its interface: torch's exporter drops
exactly the inputs its final graph does not read, and callers (torch's own test suite among
them) feed the inputs it keeps. This exporter knows more at export time than torch's does,
so some inputs torch reads would go unread here. The emitter calls this module for every node
it emits; cleanup then drops only the inputs nothing here names. Two cases:

- A node computing a run-time result read an input, perhaps only for its shape, which torch
  reads too unless it folds the node's outputs (:func:`note_inputs_read`, ``READS_INPUTS``).
- Values that are run-time in torch's graph but constants here (:class:`TorchRunTimeValues`,
  ``KEPT_INPUTS``):

  - Scripted lists of tensors. Torch's exporter lowers a ``Tensor[]`` made by an op
    (``unbind``, ``l + [t]``), changed inside a loop it keeps, or indexed at a position computed
    at run time, to an ONNX sequence (opset 11+), and knows nothing read from a sequence at
    export time: not ``len(l)``, not ``l[i]``, not even the shape of ``l[i]``. This exporter
    keeps such a list as a Python list of values wherever its length is fixed, so ``len(l)`` is
    an int and the shapes of its items are known.
  - Loops and ifs. Torch keeps a loop unless TorchScript unrolls it (a scripted model's loop
    with a constant trip count), so an ``if`` on ``len(l)`` inside it is decided at run time and
    both branches' reads count. This exporter unrolls the loop and decides the ``if``.
  - Lowerings torch's constant tracking cannot see through: below opset 11 its arange is
    NonZero(ConstantOfShape(n)), so ``_dim_arange(x, 1)`` reads Shape(x) at run time there.

  A TorchScript value computed by such a read is *torch-run-time*: it is followed through every
  node that reads it (also nodes this exporter folds, and the outputs of loops and ifs it
  unrolls or decides), with the graph inputs and run-time values torch's exporter reads to
  compute it. Where a graph output is torch-run-time, the graph inputs those come from stay
  graph inputs. Such an input may not change the result of this exporter's model; it is what
  torch's model takes, so a model exported by either is fed the same way.

What torch does with each op (which ops read sequences, change lists, fold on constants) is
declared where the op is registered (op_facts.OpFacts, the ``torch_*`` and ``mutates_list``
facts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter.errors import ExporterError
from exporter.graph_context import upstream_values
from exporter.op_facts import OpFacts, SequenceRead
from exporter.registry import Registry
from exporter.runtime_list import SEQUENCE_OPSET, RuntimeList
from exporter.ts_graph import has_blocks, is_tensor_list_type

__all__ = ["READS_INPUTS", "KEPT_INPUTS", "TorchRunTimeValues", "note_inputs_read", "keep_inputs_of"]

# ir.Value meta key: graph inputs the node computing this value read (see note_inputs_read).
READS_INPUTS = "exporter.reads_inputs"
# ir.Graph meta key (main graph): inputs kept whether or not anything reads them.
KEPT_INPUTS = "exporter.kept_inputs"


def note_inputs_read(node: torch._C.Node, inputs: Sequence[Any], result: Any) -> None:
    """Record, on the run-time values ``node`` computed (``result``), the graph inputs it read.

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
    list literal (``pair[0]``) reads nothing else, in torch's exporter too. Prim nodes (lists,
    tuples, unpacking) read nothing.
    """
    if node.kind().startswith("prim::"):
        return
    read: list[ir.Value] = []
    for ts_value, obj in zip(node.inputs(), inputs):
        if isinstance(obj, ir.Value):
            items: Sequence[Any] = (obj,)
        elif isinstance(obj, (list, tuple)) and _is_number_list(ts_value):  # (asking the type costs)
            items = _emitted_values(obj)
        else:
            continue
        read.extend(item for item in items if item.const_value is None and not item.is_initializer())
    if not read:
        return
    for value in _emitted_values(result):
        value.meta.setdefault(READS_INPUTS, []).extend(r for r in read if r is not value)


def _is_number_list(value: torch._C.Value) -> bool:
    ts_type = value.type()
    return isinstance(ts_type, torch._C.ListType) and isinstance(
        ts_type.getElementType(), (torch._C.IntType, torch._C.FloatType, torch._C.NumberType)
    )


def _emitted_values(obj: Any) -> list[ir.Value]:
    """The ONNX values in a symbolic's result or a list argument, constants excluded."""
    if isinstance(obj, ir.Value):
        return [] if obj.const_value is not None else [obj]
    if isinstance(obj, (list, tuple)):
        return [value for item in obj for value in _emitted_values(item)]
    return []


def keep_inputs_of(graph: ir.Graph, value: ir.Value) -> None:
    """The graph inputs ``value`` is computed from join ``graph``'s (the main graph's)
    ``KEPT_INPUTS``, which cleanup never drops."""
    kept = graph.meta.setdefault(KEPT_INPUTS, set())
    kept.update(v for v in upstream_values(value) if v.is_graph_input() and not v.is_initializer())


def _read_at_run_time(obj: Any) -> Iterable[ir.Value]:
    """The values torch reads at run time in ``obj``: neither constants nor initializers, and
    the sequence of a run-time list."""
    if isinstance(obj, ir.Value):
        if obj.const_value is None and not obj.is_initializer():
            yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _read_at_run_time(item)
    elif isinstance(obj, RuntimeList) and obj.sequence is not None:
        yield obj.sequence


def _block_nodes(blocks: Iterable[torch._C.Block]) -> Iterable[torch._C.Node]:
    for block in blocks:
        for node in block.nodes():
            yield node
            yield from _block_nodes(node.blocks())


class TorchRunTimeValues:
    """The torch-run-time TorchScript values of one export (see the module docstring), shared
    by the emitter of the main graph and those of its subgraphs."""

    def __init__(self, opset: int, registry: Registry, *, scripted: bool) -> None:
        self.opset = opset
        self.registry = registry
        self.scripted = scripted
        # below opset 11 torch's exporter has no sequences (and fails on such lists)
        self.sequences = opset >= SEQUENCE_OPSET
        # TorchScript value -> the graph inputs and run-time values torch reads to compute it
        self.values: dict[int, dict[int, ir.Value]] = {}
        # emitted list object -> (the object, what torch reads to fill it)
        self.lists: dict[int, tuple[Any, dict[int, ir.Value]]] = {}

    def _mutates_list(self, node: torch._C.Node) -> bool:
        """Whether ``node`` changes its first input, a list, in place (asked of list users only)."""
        return self.registry.node_facts(node).mutates_list

    # -- what torch's exporter knows at export time ------------------------------------------
    def _is_sequence_for_torch(self, node: torch._C.Node, read: SequenceRead) -> bool:
        """Whether torch's exporter reads the list ``node`` reads (its first input) as an ONNX
        sequence: the list was made by an op, not a list literal (``x.unbind()``, ``l + [t]``),
        it is changed inside a loop torch keeps, or it is indexed at a position torch computes
        at run time (the counter of a loop it keeps). Torch folds the rest: ``len`` and constant
        indexing of a list literal, and, in a scripted model, whole loops with a constant trip
        count, which TorchScript's optimizations unroll (not in a trace calling a scripted
        function), and with them the changes they make to a list."""
        value = node.inputsAt(0)
        if not is_tensor_list_type(value.type()):
            return False
        if value.node().kind() != "prim::ListConstruct":
            return True
        if any(
            use.offset == 0 and self._mutates_list(use.user) and self._in_kept_loop(use.user) for use in value.uses()
        ):
            return True
        return read is SequenceRead.ITEM and not self._constant_for_torch(node.inputsAt(1))

    def _unrolled_by_torch(self, loop: torch._C.Node) -> bool:
        return self.scripted and self._constant_for_torch(loop.inputsAt(0))

    def _in_kept_loop(self, node: torch._C.Node) -> bool:
        block = node.owningBlock()
        while block is not None and block.owningNode() is not None:
            owner = block.owningNode()
            if owner.kind() == "prim::Loop" and not self._unrolled_by_torch(owner):
                return True
            block = owner.owningBlock()
        return False

    def _constant_for_torch(self, value: torch._C.Value, depth: int = 0) -> bool:
        """Whether torch's exporter knows an int at export time: a constant, arithmetic on
        constants, ``len`` of a list literal never changed, or the counter of a loop it unrolls."""
        node = value.node()
        kind = node.kind()
        if kind == "prim::Constant":
            return True
        if depth > 8:
            return False
        if kind == "prim::Param":  # a block parameter: the counter of a loop torch unrolls
            owner = node.owningBlock().owningNode() if node.owningBlock() is not None else None
            if owner is None or owner.kind() != "prim::Loop" or value.offset() != 0:
                return False
            return self._unrolled_by_torch(owner)
        if kind == "prim::ListConstruct":
            return all(self._constant_for_torch(v, depth + 1) for v in node.inputs())
        facts = self.registry.node_facts(node)
        if facts.torch_sequence_read is SequenceRead.LENGTH:
            items = node.inputsAt(0)
            return items.node().kind() == "prim::ListConstruct" and not any(
                use.offset == 0 and self._mutates_list(use.user) for use in items.uses()
            )
        if facts.torch_folds_constants:
            return all(self._constant_for_torch(v, depth + 1) for v in node.inputs())
        return False

    # -- following torch-run-time values through the emitted nodes ---------------------------
    def reads_of(self, node: torch._C.Node, inputs: Sequence[Any], facts: OpFacts) -> dict[int, ir.Value] | None:
        """What torch reads at run time to compute ``node``'s outputs, if they are
        torch-run-time (None otherwise): the reads of its torch-run-time inputs, the items of
        a list it reads as a sequence, and every run-time value among its inputs. ``facts``:
        what ``node``'s op declares."""
        reads: dict[int, ir.Value] | None = None
        for ts_value, obj in zip(node.inputs(), inputs):
            found = self.values.get(ts_value.unique())
            if found is None and isinstance(obj, (list, RuntimeList)) and id(obj) in self.lists:
                found = self.lists[id(obj)][1]
            if found is not None:
                reads = {} if reads is None else reads
                reads.update(found)
        sequence_read = facts.torch_sequence_read
        if (self.sequences and sequence_read is not None and self._is_sequence_for_torch(node, sequence_read)) or (
            self.opset < facts.torch_shape_read_below
        ):
            reads = {} if reads is None else reads
        if reads is not None:
            for value in _read_at_run_time(list(inputs)):
                reads[id(value)] = value
        return reads

    def mark(
        self,
        node: torch._C.Node,
        facts: OpFacts,
        reads: dict[int, ir.Value] | None,
        lookup: Callable[[torch._C.Value], Any],
    ) -> None:
        """Record ``node``'s outputs as torch-run-time with ``reads`` (from :meth:`reads_of`). A
        node with blocks (a loop this exporter unrolled, an if it decided) is torch-run-time
        also where a value its blocks return is, or where it is an if on a torch-run-time
        condition: then torch emits both branches, so what either reads counts, and lists
        either changes are filled with it."""
        if reads is None and not has_blocks(node):
            return
        blocks = list(node.blocks())
        if blocks:
            for block in blocks:
                for ts_value in block.outputs():
                    found = self.values.get(ts_value.unique())
                    if found is not None:
                        reads = {} if reads is None else reads
                        reads.update(found)
            if node.kind() == "prim::If" and node.inputsAt(0).unique() in self.values and reads is not None:
                self._read_by_branches(blocks, reads, lookup)
        if reads is None:
            return
        for ts_value in node.outputs():
            self.values.setdefault(ts_value.unique(), {}).update(reads)
            self._mark_list(_safe_lookup(lookup, ts_value), reads)
        if facts.mutates_list and node.inputsSize() and is_tensor_list_type(node.inputsAt(0).type()):
            self._mark_list(_safe_lookup(lookup, node.inputsAt(0)), reads)

    def _read_by_branches(
        self, blocks: Sequence[torch._C.Block], reads: dict[int, ir.Value], lookup: Callable[[torch._C.Value], Any]
    ) -> None:
        inner: set[int] = set()
        changed: list[Any] = []
        for node in _block_nodes(blocks):
            inner.update(v.unique() for v in node.outputs())
            for block in node.blocks():
                inner.update(v.unique() for v in block.inputs())
            if node.inputsSize() and is_tensor_list_type(node.inputsAt(0).type()) and self._mutates_list(node):
                changed.append(node.inputsAt(0))
            for ts_value in node.inputs():
                if ts_value.unique() in inner:
                    continue
                found = self.values.get(ts_value.unique())
                if found is not None:
                    reads.update(found)
                for value in _read_at_run_time([_safe_lookup(lookup, ts_value)]):
                    reads[id(value)] = value
        for ts_value in changed:
            if ts_value.unique() not in inner:
                self._mark_list(_safe_lookup(lookup, ts_value), reads)

    def _mark_list(self, obj: Any, reads: dict[int, ir.Value]) -> None:
        if isinstance(obj, (list, RuntimeList)):
            entry = self.lists.setdefault(id(obj), (obj, {}))
            entry[1].update(reads)

    def output_reads(self, outputs: Sequence[torch._C.Value], objs: Sequence[Any]) -> list[ir.Value]:
        """What torch reads to compute the graph's torch-run-time outputs."""
        found: dict[int, ir.Value] = {}
        for ts_value, obj in zip(outputs, objs):
            reads = self.values.get(ts_value.unique())
            if reads is None and isinstance(obj, (list, RuntimeList)) and id(obj) in self.lists:
                reads = self.lists[id(obj)][1]
            found.update(reads or {})
        return list(found.values())


def _safe_lookup(lookup: Callable[[torch._C.Value], Any], ts_value: torch._C.Value) -> Any:
    try:
        return lookup(ts_value)
    except ExporterError:  # a value of a branch not emitted has no object (the emitter's lookup says so)
        return None
