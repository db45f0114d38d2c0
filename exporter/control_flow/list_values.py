"""Int lists of enclosing code held as one run-time value that an If's branches or a Loop's
body change in place.

An int list computed at run time (``maxes = list(x.shape)``) is one 1-d int64 value
(script_lists.py); item assignment scatters into it and rebinds every name of the list to the
new value (GraphContext.replace). Inside a block that rebinding alone would leave enclosing
code reading a value local to the block's subgraph, an invalid model: the engine threads each
such list through the If or Loop as one more value. Item assignment keeps the length, so the
value needs no sequence and is threaded at every opset. Where the blocks change no list's
length (item assignment is their only list mutation), the threaded value keeps its length
too: what is built from it after the Loop (``new_zeros(maxes)``) keeps its rank.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter.control_flow.outer_state import outer_lists
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import REGISTRY

__all__ = ["ListValue", "list_values"]


class ListValue:
    """One such list: what it holds before the control-flow node, and what it holds now (the
    object its names are bound to, a body input or a value of a block while one is emitted)."""

    def __init__(self, g: GraphContext, name: torch._C.Value, before: ir.Value, keeps_length: bool) -> None:
        self._g = g
        self._name = name  # a TorchScript value naming the list in enclosing code
        self.before = before
        # the blocks change no list's length: the list's static length, if any, holds throughout
        self.keeps_length = keeps_length
        # the shape it keeps through a Loop, once carried (onnx_loop._carry_list_values)
        self.kept_shape: ir.Shape | None = None

    def _bound(self) -> object:
        return self._g.lookup(self._name)

    def current(self) -> ir.Value:
        """The list's value once a block is emitted: a block that made it anything else than
        one value (an export-time list) cannot be threaded."""
        bound = self._bound()
        if not isinstance(bound, ir.Value):
            raise NeedsExportTimeValue(
                f"the list %{self._name.debugName()} of enclosing code is changed inside run-time control flow "
                "into a form that cannot be threaded through it"
            )
        return bound

    def rebind(self, new: object) -> None:
        """Every name of the list (and every export-time list holding it) names ``new``."""
        bound = self._bound()
        if bound is not new:
            self._g.replace(bound, new)

    def restore(self) -> None:
        """The list as before the control-flow node (each branch starts from it; a Loop form
        given up leaves it so)."""
        self.rebind(self.before)


# the one list mutation that keeps a list's length
_ITEM_ASSIGNMENT = "aten::_set_item"


def list_values(g: GraphContext, blocks: Sequence[torch._C.Block]) -> list[ListValue]:
    """The int lists held as one value from enclosing code that ``blocks`` change."""
    entries = [e for e in outer_lists(g, blocks, held_as_values=True) if isinstance(e.obj, ir.Value)]
    if not entries:
        return []
    resizing = REGISTRY.kinds_where(lambda facts: facts.mutates_list) - {_ITEM_ASSIGNMENT}
    keeps_length = not any(block.findAllNodes(kind, True) for kind in resizing for block in blocks)
    return [ListValue(g, entry.values[0], entry.obj, keeps_length) for entry in entries]
