"""Int lists of enclosing code held as one run-time value that an If's branches or a Loop's
body change in place.

An int list computed at run time (``maxes = list(x.shape)``) is one 1-d int64 value
(script_lists.py); item assignment scatters into it and rebinds every name of the list to the
new value (GraphContext.replace). Inside a block that rebinding alone would leave enclosing
code reading a value local to the block's subgraph, an invalid model: the engine threads each
such list through the If or Loop as one more value. Item assignment keeps the length, so the
value needs no sequence and is threaded at every opset.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter.control_flow.outer_state import outer_lists
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext

__all__ = ["ListValue", "list_values"]


class ListValue:
    """One such list: what it holds before the control-flow node, and what it holds now (the
    object its names are bound to, a body input or a value of a block while one is emitted)."""

    def __init__(self, g: GraphContext, name: torch._C.Value, before: ir.Value) -> None:
        self._g = g
        self._name = name  # a TorchScript value naming the list in enclosing code
        self.before = before

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


def list_values(g: GraphContext, blocks: Sequence[torch._C.Block]) -> list[ListValue]:
    """The int lists held as one value from enclosing code that ``blocks`` change."""
    return [
        ListValue(g, entry.values[0], entry.obj)
        for entry in outer_lists(g, blocks, held_as_values=True)
        if isinstance(entry.obj, ir.Value)
    ]
