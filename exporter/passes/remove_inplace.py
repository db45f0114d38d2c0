"""Replace in-place aten ops with their functional forms.

``y = x.add_(1)`` becomes ``y = add(x, 1)``, and every later read of ``x`` reads ``y``: ONNX
values are immutable, so the mutation must become data flow. A write into a view whose base
is read afterwards (``x[0].add_(1); return x``) needs the write threaded back into the base;
that is not done here and is refused with the op and source line rather than exported wrong.
"""

from __future__ import annotations

import functools

import torch

from exporter.errors import ExporterError
from exporter.passes.common import walk

__all__ = ["remove_inplace", "check_no_inplace", "is_inplace"]

# In-place ops whose functional form is not the name without the trailing underscore.
_FUNCTIONAL_NAME = {"aten::copy_": "aten::copy", "aten::zero_": "aten::zero"}


@functools.lru_cache(maxsize=1024)
def _has_functional(kind: str) -> bool:
    return bool(torch._C._jit_get_schemas_for_operator(kind))


def is_inplace(node: torch._C.Node) -> bool:
    kind = node.kind()
    if not kind.startswith("aten::") or not kind.endswith("_") or kind.endswith("__"):
        return False
    return _has_functional(_FUNCTIONAL_NAME.get(kind, kind[:-1]))


def _is_view(node: torch._C.Node) -> bool:
    """Whether ``node`` returns an alias of its first input (a view such as select or slice)."""
    try:
        schema = node.schema()
    except RuntimeError:
        return False
    text = str(schema)
    head, _, returns = text.partition(" -> ")
    return "(a)" in returns and "(a!)" not in head and node.kind() not in ("aten::detach",)


def _view_base_read_later(node: torch._C.Node, target: torch._C.Value) -> bool:
    """Whether a tensor that ``target`` views is read after ``node``."""
    producer = target.node()
    while _is_view(producer):
        base = producer.inputsAt(0)
        for use in base.uses():
            if use.user.isAfter(node) and use.user is not producer:
                return True
        producer = base.node()
    return False


def _ancestor_in(node: torch._C.Node, block: torch._C.Block) -> torch._C.Node | None:
    """The node of ``block`` that contains ``node`` (itself, or the If/Loop around it)."""
    while node is not None:
        owner_block = node.owningBlock()
        if owner_block == block:
            return node
        node = owner_block.owningNode()
    return None


def _replace_reads_after(
    value: torch._C.Value, block: torch._C.Block, after: torch._C.Node, new: torch._C.Value
) -> None:
    """Make reads of ``value`` in ``block`` that come after ``after`` read ``new`` instead
    (including reads nested in later If/Loop nodes and the block's own return)."""
    for use in list(value.uses()):
        user = use.user
        if user == after:
            continue
        if user.kind() == "prim::Return" and user.owningBlock() == block:
            user.replaceInput(use.offset, new)
            continue
        anchor = _ancestor_in(user, block)
        if anchor is not None and anchor != after and anchor.isAfter(after):
            user.replaceInput(use.offset, new)


def _defined_in(value: torch._C.Value, block: torch._C.Block) -> bool:
    if value.node().kind() == "prim::Param":
        return any(value == param for param in block.inputs()) or block.owningNode() is None
    return value.node().owningBlock() == block


def _thread_out(target: torch._C.Value, node: torch._C.Node, new: torch._C.Value) -> None:
    """Make the mutation of ``target`` by ``node`` (whose functional result is ``new``)
    visible to every later read, also outside the If/Loop blocks the mutation sits in:
    the new value leaves an If as an extra output (the other branch passes the old value
    through) and a Loop as an extra loop-carried value."""
    block = node.owningBlock()
    current, anchor = new, node
    while not _defined_in(target, block):
        _replace_reads_after(target, block, anchor, current)
        owner = block.owningNode()
        if owner.kind() == "prim::If":
            for branch in owner.blocks():
                branch.registerOutput(current if branch == block else target)
            out = owner.addOutput()
            out.setType(target.type())
        elif owner.kind() == "prim::Loop":
            param = block.addInputToBlock()
            param.setType(target.type())
            # reads before the mutation see the previous iteration's value
            for use in list(target.uses()):
                inner = _ancestor_in(use.user, block)
                if inner is not None and (inner == anchor or not inner.isAfter(anchor)) and use.user != owner:
                    use.user.replaceInput(use.offset, param)
            owner.addInput(target)
            block.registerOutput(current)
            out = owner.addOutput()
            out.setType(target.type())
        else:
            raise ExporterError(f"in-place write inside a {owner.kind()} block is not supported")
        current, anchor, block = out, owner, owner.owningBlock()
    _replace_reads_after(target, block, anchor, current)


def remove_inplace(graph: torch._C.Graph) -> None:
    from exporter.graph_context import source_location

    for node in walk(graph):
        if not is_inplace(node):
            continue
        target = node.inputsAt(0)
        if _view_base_read_later(node, target):
            raise ExporterError(
                f"{node.kind()} at {source_location(node)} writes into a view of a tensor that is "
                "read afterwards; exporting that write is not supported yet"
            )
        kind = node.kind()
        functional = _FUNCTIONAL_NAME.get(kind, kind[:-1])
        new = graph.create(functional, list(node.inputs()), node.outputsSize())
        new.insertBefore(node)
        new.copyMetadata(node)
        new.output().setType(node.output().type())
        node.output().replaceAllUsesWith(new.output())
        _thread_out(target, new, new.output())
        node.destroy()


def check_no_inplace(graph: torch._C.Graph) -> list[torch._C.Node]:
    """The postcondition of :func:`remove_inplace`: the in-place nodes left (none)."""
    return [node for node in walk(graph) if is_inplace(node)]

