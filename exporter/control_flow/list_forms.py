"""Which form a list of enclosing code takes through an ONNX Loop that changes it.

- a scan output: the body appends one item per iteration (items of one shape, as
  ``torch.stack`` needs), which the Loop stacks; from opset 9, with no sequence op;
- a concat buffer (below opset 13, where Loop carries no sequence): such a list that starts
  empty and is read only by ``torch.cat`` after the loop grows a flat loop-carried buffer (its
  items may differ in size; items held before the loop make it a scan output, which keeps them);
- a sequence threaded through the Loop, for any other change (opset 13).
"""

from __future__ import annotations

import dataclasses

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter.control_flow.outer_state import OuterList
from exporter.ts_graph import inside

__all__ = ["ListForms", "list_forms"]


@dataclasses.dataclass
class ListForms:
    """The lists a Loop changes, by form; a concat buffer with the dim ``torch.cat`` joins on."""

    scans: list[OuterList]
    concats: list[tuple[OuterList, int]]
    threaded: list[OuterList]


def list_forms(changed: list[OuterList], loop: torch._C.Node, opset: int) -> ListForms:
    """The form each list ``loop`` changes takes. With sequences available, a list used any
    other way than by ``torch.stack`` (and ``len``) after the loop stays a sequence."""
    sequences_allowed = opset >= runtime_list.CONTROL_FLOW_SEQUENCE_OPSET
    (body,) = list(loop.blocks())
    forms = ListForms([], [], [])
    for entry in changed:
        stacked_only = set(_later_uses(entry, loop)) <= {"aten::stack", "aten::len"}
        cat_dim = _only_cat_dim(entry, loop)
        if _is_scan(entry, body) and not sequences_allowed and cat_dim is not None and not entry.obj:
            forms.concats.append((entry, cat_dim))
        elif _is_scan(entry, body) and (stacked_only or not sequences_allowed):
            forms.scans.append(entry)
        else:
            forms.threaded.append(entry)
    return forms


def _is_scan(entry: OuterList, body: torch._C.Block) -> bool:
    """A list the body only appends to, once per iteration: a Loop scan output. Items the list
    held before the loop (``path = [last]`` before a backtracking loop) are stacked in front of
    it after the loop; they and the appended items must share one shape, as a scan output's
    iterations do."""
    if not isinstance(entry.obj, list) or len(entry.uses) != 1:
        return False
    if not all(isinstance(item, (ir.Value, bool, int, float)) for item in entry.obj):
        return False
    (use,) = entry.uses
    return use.kind() == "aten::append" and use.owningBlock() == body and not use.output().uses()


def _only_cat_dim(entry: OuterList, node: torch._C.Node) -> int | None:
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


def _later_uses(entry: OuterList, node: torch._C.Node) -> list[str]:
    return [
        use.user.kind()
        for value in entry.values
        for use in value.uses()
        if use.user != node and not _inside_node(node, use.user)
    ]


def _inside_node(node: torch._C.Node, other: torch._C.Node) -> bool:
    return any(inside(block, other) for block in node.blocks())
