"""Lists and dicts of enclosing code that an If's branches or a Loop's body change.

TorchScript changes them in place (``out.append(y)``, ``d["k"] = v``); ONNX has no state, so
the engine threads their new values through the If or Loop as extra outputs: a list as an
ONNX sequence (If and Loop carry sequences from opset 13), each dict key written as one
value (the keys of a dict are fixed at export time: script_dicts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import DictMutation
from exporter.registry import REGISTRY
from exporter.runtime_list import RuntimeList
from exporter.ts_graph import all_nodes, inside

__all__ = [
    "OuterList",
    "outer_lists",
    "as_runtime_list",
    "require_sequences",
    "remember_run_time_lists",
    "OuterDict",
    "outer_dicts",
    "RUN_TIME_LOOP",
]

# Where a dict written in a Loop's body is threaded (in the messages of OuterDict.written).
RUN_TIME_LOOP = "a loop whose trip count is only known at run time"


class OuterList:
    """A list defined before a control-flow node and used inside its blocks."""

    def __init__(self, obj: list[object] | RuntimeList | ir.Value) -> None:
        self.obj = obj
        self.uses: list[torch._C.Node] = []
        self.values: list[torch._C.Value] = []
        self.mutated = False


def outer_lists(g: GraphContext, blocks: Sequence[torch._C.Block], *, held_as_values: bool = False) -> list[OuterList]:
    """The lists (export-time or run-time) from enclosing code that ``blocks`` change, each
    with all of its uses inside them: these must be threaded through the If or Loop. With
    ``held_as_values``, the int lists held as one run-time value instead (list_values.py)."""
    # Most blocks change no list: searching for the mutating ops in C++ first is much
    # cheaper than walking every node in Python.
    mutations = REGISTRY.kinds_where(lambda facts: facts.mutates_list)
    if not any(block.findAllNodes(kind, True) for kind in mutations for block in blocks):
        return []
    found: dict[int, OuterList] = {}
    for node in all_nodes(blocks):
        for position, value in enumerate(node.inputs()):
            if not isinstance(value.type(), torch._C.ListType):
                continue
            if any(inside(block, value.node()) for block in blocks):
                continue
            obj = g.lookup(value)
            if not isinstance(obj, ir.Value if held_as_values else (list, RuntimeList)):
                continue
            entry = found.setdefault(id(obj), OuterList(obj))
            entry.uses.append(node)
            if value not in entry.values:
                entry.values.append(value)
            if position == 0 and node.kind() in mutations:
                entry.mutated = True
    return [entry for entry in found.values() if entry.mutated]


def as_runtime_list(g: GraphContext, entry: OuterList) -> RuntimeList:
    """The list as a run-time list (its sequence threaded through the If or Loop); an
    export-time list becomes one, for every value that names it."""
    if isinstance(entry.obj, RuntimeList):
        return entry.obj
    assert not isinstance(entry.obj, ir.Value), "a list held as one value is threaded as it is (list_values.py)"
    converted = runtime_list.from_items(g, entry.obj, runtime_list.list_item_dtype(entry.values))
    g.replace(entry.obj, converted)
    return converted


def require_sequences(g: GraphContext, what: str) -> None:
    """Refuse ``what`` below the opset where If and Loop carry sequences: with the count known
    at export time, the loop is unrolled and the list stays a Python list."""
    if g.opset < runtime_list.CONTROL_FLOW_SEQUENCE_OPSET:
        raise NeedsExportTimeValue(
            f"{what} needs opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} or higher: ONNX Loop and If "
            f"carry sequences from opset {runtime_list.CONTROL_FLOW_SEQUENCE_OPSET} (exporting at opset {g.opset})"
        )


def remember_run_time_lists(entries: Sequence[OuterList]) -> Callable[[], None]:
    """A function putting the run-time lists among ``entries`` back as they are now: an
    attempt at an ONNX Loop that is given up leaves them as before it."""
    saved = [(e.obj, e.obj.sequence, e.obj.stacked) for e in entries if isinstance(e.obj, RuntimeList)]

    def restore() -> None:
        for items, sequence, stacked in saved:
            items.sequence, items.stacked = sequence, stacked

    return restore


class OuterDict:
    """A dict from enclosing code that a control-flow node's blocks write: its keys are fixed
    at export time (script_dicts.py), so each key written becomes one value threaded through
    the If or Loop, as a variable assigned in the blocks would be."""

    def __init__(self, obj: dict) -> None:  # type: ignore[type-arg]
        self.obj = obj
        self.keys: list[object] = []
        self.before = dict(obj)
        # why the writes cannot be threaded (a key removed, or computed): fine where unrolled
        self.refusal: str | None = None

    def restore(self) -> None:
        """The dict as it was before the control-flow node (each branch starts from it)."""
        self.obj.clear()
        self.obj.update(self.before)

    def written(self, where: str) -> list[object]:
        """The values of the written keys once a block was emitted; a key the block's path
        leaves unset has no value on that path."""
        if self.refusal is not None:
            raise NeedsExportTimeValue(self.refusal.format(where=where))
        for key in self.keys:
            if key not in self.obj:
                raise NeedsExportTimeValue(
                    f"dict key {key!r} is set on some paths of {where} only: ONNX has no map whose keys change at "
                    "run time; set it before, or on every path"
                )
        return [self.obj[key] for key in self.keys]

    def update(self, values: Sequence[object]) -> None:
        self.restore()
        for key, value in zip(self.keys, values):
            self.obj[key] = value


def outer_dicts(g: GraphContext, blocks: Sequence[torch._C.Block]) -> list[OuterDict]:
    """The dicts from enclosing code that ``blocks`` write, with the (constant) keys written.
    Removing keys (pop, del, clear), merging dicts or writing a computed key inside run-time
    control flow would make the set of keys depend on run-time values, which ONNX cannot
    hold: such a dict carries its refusal, raised if it must be threaded (not unrolled)."""
    mutations = REGISTRY.kinds_where(lambda facts: facts.mutates_dict is not None)
    if not any(block.findAllNodes(kind, True) for kind in mutations for block in blocks):
        return []
    found: dict[int, OuterDict] = {}
    for node in all_nodes(blocks):
        if node.kind() not in mutations or node.inputsSize() == 0:
            continue
        mutation = REGISTRY.node_facts(node).mutates_dict
        if mutation is None:  # another overload of the op: a list's pop, clear or _set_item
            continue
        target = node.inputsAt(0)
        if not isinstance(target.type(), torch._C.DictType) or any(inside(b, target.node()) for b in blocks):
            continue
        obj = g.lookup(target)
        if not isinstance(obj, dict):
            continue
        entry = found.setdefault(id(obj), OuterDict(obj))
        if mutation is not DictMutation.WRITES_KEY:
            entry.refusal = entry.refusal or (
                f"{node.kind()} on a dict inside {{where}} is not supported: which keys the dict holds would "
                "depend on run-time values, and ONNX has no map type a graph computes"
            )
            continue
        key_node = node.inputsAt(1).node()
        if key_node.kind() != "prim::Constant":
            entry.refusal = entry.refusal or "a dict key written inside {where} must be a constant"
            continue
        key = key_node.output().toIValue()
        if key not in entry.keys:
            entry.keys.append(key)
    return list(found.values())
