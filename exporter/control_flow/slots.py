"""The layout of what an ONNX If or Loop carries: one record owns it.

An If's branches and a Loop's body compute more than the TorchScript block returns: the new
values of lists and dict items of enclosing code the block changed, a Loop's concat buffers
and scan outputs, the dummy value Loop-1 needs when nothing else is carried. Each kind is a
group, registered by name with its width (and, for a Loop, its initial values and body
inputs); the record builds the node's inputs, the body's inputs and extra outputs, and reads
the node's outputs back by group name. Nothing else computes a position from counts.

ONNX orders them: the block's own outputs first (the subgraph emits them before any extra
output), then the groups in the order registered, then a Loop's scan outputs, which ONNX
wants after every loop-carried value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import onnx_ir as ir

__all__ = ["Slots", "LoopSlots", "SlotsError", "OUTER_LISTS", "OUTER_LIST_VALUES", "outer_dict_items"]

Value = ir.Value

# The groups an If and a Loop both carry: the lists, and the written items of each dict, of
# enclosing code their blocks change (outer_state.py).
OUTER_LISTS = "lists"
# ... and the int lists of enclosing code held as one value each (list_values.py).
OUTER_LIST_VALUES = "list values"


def outer_dict_items(index: int) -> str:
    return f"dict {index} items"


class SlotsError(RuntimeError):
    """The engine used the layout inconsistently (a bug): a group registered twice, read
    under a name never registered, or given the wrong number of values."""


@dataclasses.dataclass
class _Group:
    name: str
    width: int
    # what a block computes for the group, asked once the block is emitted; None: the
    # block's own (flattened) outputs
    outputs: Callable[[], Sequence[object]] | None
    # a Loop's loop-carried groups: the Loop's inputs (set once known) and the body's inputs
    initial: list[Value | None] | None = None
    inputs: list[Value] = dataclasses.field(default_factory=list)
    scanned: bool = False


class Slots:
    """The outputs of an ONNX If (each branch computes them all), in groups by name."""

    def __init__(self, own: str, width: int) -> None:
        """``own``: the name of the group of the block's own outputs, ``width`` of them."""
        self._groups: list[_Group] = [_Group(own, width, None)]

    def add(self, name: str, width: int, outputs: Callable[[], Sequence[object]]) -> None:
        """A group of ``width`` outputs that ``outputs()`` gives once a branch is emitted."""
        self._register(_Group(name, width, outputs))

    def _register(self, group: _Group) -> None:
        if any(g.name == group.name for g in self._groups):
            raise SlotsError(f"slot group {group.name!r} registered twice")
        self._groups.append(group)

    def _ordered(self) -> list[_Group]:
        return [g for g in self._groups if not g.scanned] + [g for g in self._groups if g.scanned]

    def _group(self, name: str) -> _Group:
        for group in self._groups:
            if group.name == name:
                return group
        raise SlotsError(f"no slot group {name!r}")

    def __contains__(self, name: str) -> bool:
        return any(g.name == name for g in self._groups)

    def width(self, name: str) -> int:
        """How many values the group holds (0 for a group not registered)."""
        return self._group(name).width if name in self else 0

    def output_count(self) -> int:
        return sum(g.width for g in self._groups)

    def index(self, name: str, item: int = 0) -> int:
        """The position of the group's ``item``-th value among the node's outputs (and among
        an If branch's outputs)."""
        position = 0
        for group in self._ordered():
            if group.name == name:
                if not 0 <= item < group.width:
                    raise SlotsError(f"slot group {name!r} has {group.width} value(s), not {item + 1}")
                return position + item
            position += group.width
        raise SlotsError(f"no slot group {name!r}")

    def extra_outputs(self) -> list[object]:
        """What the block computes beyond its own outputs, group by group: for g.subgraph,
        which calls it once the block is emitted."""
        values: list[object] = []
        for group in self._ordered():
            if group.outputs is None:
                continue
            produced = list(group.outputs())
            if len(produced) != group.width:
                raise SlotsError(f"slot group {group.name!r} computed {len(produced)} value(s), not {group.width}")
            values.extend(produced)
        return values

    def read(self, name: str, values: Sequence[Value]) -> list[Value]:
        """The group's values among ``values``, the node's outputs."""
        group = self._group(name)
        if group.width == 0:
            return []
        start = self.index(name)
        return list(values[start : start + group.width])


class LoopSlots(Slots):
    """The loop-carried values and scan outputs of an ONNX Loop, in groups by name.

    A loop-carried group has one Loop input (its initial value), one body input and one body
    output per value; a scan group has only a body output and a Loop output per value. The
    body's inputs start with the iteration number and the condition, its outputs with the
    condition (:meth:`body_index`)."""

    def __init__(self, own: str, initial: Sequence[Value | None], inputs: Sequence[Value]) -> None:
        """``own``: the group of the values the TorchScript body carries itself (one per tuple
        item), starting from ``initial`` and entering the body as ``inputs``."""
        super().__init__(own, len(inputs))
        self._groups[0].initial = list(initial)
        self._groups[0].inputs = list(inputs)

    def carry(
        self,
        name: str,
        inputs: Sequence[Value],
        outputs: Callable[[], Sequence[object]],
        initial: Sequence[Value | None] | None = None,
    ) -> None:
        """A loop-carried group: ``inputs`` in the body, ``outputs()`` computed by it, starting
        from ``initial`` (or from values given later with :meth:`set_initial`: a buffer typed
        by what the body appended)."""
        group = _Group(name, len(inputs), outputs, None, list(inputs))
        self._register(group)
        if initial is not None:
            self.set_initial(name, initial)

    def scan(self, name: str, width: int, outputs: Callable[[], Sequence[object]]) -> None:
        """A group of scan outputs: ``outputs()`` per iteration, stacked by the Loop."""
        self._register(_Group(name, width, outputs, scanned=True))

    def set_initial(self, name: str, values: Sequence[Value | None]) -> None:
        group = self._group(name)
        if group.scanned or len(values) != group.width:
            raise SlotsError(f"{len(values)} initial value(s) for slot group {name!r}")
        group.initial = list(values)

    def initial(self, name: str) -> list[Value | None]:
        group = self._group(name)
        return list(group.initial or [])

    def inputs(self, name: str) -> list[Value]:
        """The group's body inputs."""
        return list(self._group(name).inputs)

    def carried_width(self) -> int:
        """How many values the Loop carries (scan outputs aside)."""
        return sum(g.width for g in self._groups if not g.scanned)

    def loop_inputs(self) -> list[Value | None]:
        """The Loop's inputs after the trip count and the condition."""
        values: list[Value | None] = []
        for group in self._ordered():
            if group.scanned:
                continue
            if group.initial is None:
                raise SlotsError(f"slot group {group.name!r} has no initial values")
            values.extend(group.initial)
        return values

    def body_inputs(self, iteration: Value, condition: Value) -> list[Value]:
        return [iteration, condition, *(v for g in self._ordered() if not g.scanned for v in g.inputs)]

    def body_output_count(self) -> int:
        return 1 + self.output_count()

    def body_index(self, name: str, item: int = 0) -> int:
        """The position of the group's ``item``-th value among the body's outputs (after the
        condition)."""
        return 1 + self.index(name, item)

    def carried_outputs(self, values: Sequence[Value]) -> list[Value]:
        """The loop-carried values among the Loop's outputs ``values`` (scan outputs come after)."""
        return list(values[: self.carried_width()])

    def carried_body_outputs(self, body: ir.Graph) -> list[Value]:
        """The body's outputs of the loop-carried values (after the condition)."""
        return list(body.outputs[1 : 1 + self.carried_width()])
