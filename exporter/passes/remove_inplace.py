"""Replace in-place aten ops with their functional forms.

``y = x.add_(1)`` becomes ``y = add(x, 1)``, and every later read of ``x`` reads ``y``: ONNX
values are immutable, so the mutation must become data flow. A write into a view (``x[0].add_(1)``,
``x[:, 1:3] = v``, ``x.diagonal().fill_(0)``) is written back into the viewed tensor with the
inverse of each view op (write_back.py), and a write inside an If or Loop leaves the block as an
extra output or loop-carried value.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable

import torch

from exporter import promotion
from exporter.errors import ExporterError
from exporter.op_facts import Result
from exporter.passes.common import walk
from exporter.passes.write_back import (
    Cursor,
    UnsupportedWrite,
    ViewStep,
    retake,
    view_step,
    views_taken_from,
    write_back,
)
from exporter.registry import REGISTRY
from exporter.ts_graph import locator

__all__ = ["remove_inplace", "check_no_inplace", "is_inplace"]

# In-place ops whose functional form is not the name without the trailing underscore.
_FUNCTIONAL_NAME = {
    "aten::copy_": "aten::copy",
    "aten::zero_": "aten::zero",
    # aten::normal has no (self, mean, std) overload; Tensor.normal_ functionalizes to this
    "aten::normal_": "aten::normal_functional",
    "aten::__iand__": "aten::__and__",
    "aten::__ior__": "aten::__or__",
    "aten::__ixor__": "aten::__xor__",
    "aten::__ilshift__": "aten::__lshift__",
    "aten::__irshift__": "aten::__rshift__",
}


# In-place ops that make their target an alias of another input: ``x.set_(y)`` (the
# source_Tensor overload) leaves x reading y's data, shape and dtype.
_ALIASES_INPUT = {"aten::set_": 1}


@functools.lru_cache(maxsize=1024)
def _has_functional(kind: str) -> bool:
    return bool(torch._C._jit_get_schemas_for_operator(kind))


def is_inplace(node: torch._C.Node) -> bool:
    kind = node.kind()
    if kind in _ALIASES_INPUT:
        return node.inputsSize() > _ALIASES_INPUT[kind] and isinstance(
            node.inputsAt(_ALIASES_INPUT[kind]).type(), torch._C.TensorType
        )
    if kind in _FUNCTIONAL_NAME:
        return _has_functional(_FUNCTIONAL_NAME[kind])
    if not kind.startswith("aten::") or not kind.endswith("_") or kind.endswith("__"):
        return False
    return _has_functional(_FUNCTIONAL_NAME.get(kind, kind[:-1]))


def _view_chain(value: torch._C.Value, written: set[int]) -> tuple[list[ViewStep], torch._C.Value]:
    """The views ``value`` is taken through (outermost first) and the tensor they view.

    A value in ``written`` (by ``unique()``) is a new value this pass made for a mutated tensor:
    a root, even when made by a view op (the inverse transpose of a write-back, ``transpose_``).
    """
    chain: list[ViewStep] = []
    while value.unique() not in written:
        step = view_step(value)
        if step is None:
            break
        chain.append(step)
        value = step.base
    return chain, value


def _functionalize_views(
    graph: torch._C.Graph,
    writer: torch._C.Node,
    anchor: torch._C.Node,
    updated: torch._C.Value,
    written: set[int],
) -> torch._C.Value:
    """Propagate the new value of ``writer``'s target (a view, or a tensor) to the tensor it
    views, level by level; returns the value later reads of the target see.

    ``y[:, 1:3] = v`` records copy_ into slice(slice(y)); the copy's result is written back
    with slice_scatter into each base in turn (write_back.py: the inverse of each view op),
    and every later read of the root sees the written value. Every view taken from the root
    before the write (the written chain and any other: ``flat = y.view(-1)`` read after
    ``y[0] += 1``) is then taken again from the new root, so a later read of a view sees the
    write and a later write through it (``z = y.t(); z.add_(1); z[0] += 1``) still reaches
    the root. Only views read after the write leave the blocks the write sits in.
    """
    target = writer.inputsAt(0)
    chain, root = _view_chain(target, written)
    cursor = Cursor(graph, anchor)
    for step in chain:
        updated = write_back(cursor, step, updated)
    written.add(updated.unique())
    # the views are found as reads of the root, before threading the root out of a Loop
    # makes the reads in its body read the loop-carried value
    renewed = _retake_views(cursor, root, updated, anchor)
    _thread_out(root, cursor.last, updated)
    for old, new in renewed.values():
        if _read_after(old, cursor.last, writer):
            _thread_out(old, cursor.last, new)
    return renewed[target.unique()][1] if chain else updated


def _retake_views(
    cursor: Cursor, root: torch._C.Value, new_root: torch._C.Value, anchor: torch._C.Node
) -> dict[int, tuple[torch._C.Value, torch._C.Value]]:
    """Every view of ``root`` taken before ``anchor`` (in its block or an enclosing one), and
    the views of those, taken again from ``new_root``: (old value, new value) by the old
    value's ``unique()``."""
    renewed: dict[int, tuple[torch._C.Value, torch._C.Value]] = {}
    pending = [(root, new_root)]
    while pending:
        old, new = pending.pop()
        for node in views_taken_from(old):
            if not _taken_before(node, anchor):
                continue
            for old_view, new_view in retake(cursor, node, new, lambda item: _taken_before(item, anchor)):
                renewed[old_view.unique()] = (old_view, new_view)
                if isinstance(old_view.type(), torch._C.TensorType):
                    pending.append((old_view, new_view))
    return renewed


def _taken_before(node: torch._C.Node, anchor: torch._C.Node) -> bool:
    """Whether ``node`` runs before ``anchor``, in ``anchor``'s block or one enclosing it."""
    enclosing = _ancestor_in(anchor, node.owningBlock())
    return enclosing is not None and enclosing != node and node.isBefore(enclosing)


def _read_after(value: torch._C.Value, node: torch._C.Node, writer: torch._C.Node) -> bool:
    """Whether something other than ``writer`` reads ``value`` after ``node``: later in its
    block or in an enclosing one, up to where ``value`` is defined, or anywhere in the body of
    an enclosing Loop (the next iteration reads it)."""
    uses = [use for use in value.uses() if use.user != writer]
    block, anchor = node.owningBlock(), node
    while True:
        for use in uses:
            if use.user.kind() == "prim::Return" and use.user.owningBlock() == block:
                return True
            inner = _ancestor_in(use.user, block)
            if inner is not None and inner != anchor and inner.isAfter(anchor):
                return True
        if _defined_in(value, block):
            return False
        owner = block.owningNode()
        if owner.kind() == "prim::Loop" and any(_ancestor_in(use.user, block) is not None for use in uses):
            return True
        anchor, block = owner, owner.owningBlock()


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
            raise UnsupportedWrite(
                owner, f"writes inside the block of {owner.kind()} at {{where}}, which is not supported"
            )
        current, anchor, block = out, owner, owner.owningBlock()
    _replace_reads_after(target, block, anchor, current)


def _drop_traced_broadcast(copy: torch._C.Node) -> None:
    """``y[...] = v`` traces as ``copy_(y_view, expand(v, sizes))`` with the view's sizes of the
    example input baked in; copy_ broadcasts its source to the target anyway, so the expand is
    redundant, and dropped it keeps the write valid for other sizes (dynamic axes). Whatever
    the sizes, expand's result broadcasts to the target, so ``v`` does too, to the same values."""
    source = copy.inputsAt(1)
    producer = source.node()
    if producer.kind() == "aten::expand" and len(source.uses()) == 1:
        copy.replaceInput(1, producer.inputsAt(0))


def _rounded_into_target(graph: torch._C.Graph, new: torch._C.Node, target: torch._C.Value) -> torch._C.Value:
    """The result of an in-place arithmetic op, in the dtype of the tensor written into.

    Torch computes ``half.add_(float32)`` in the promoted dtype (float32) and rounds once into
    the half target; so does the functional node here, followed by a ``type_as`` into the
    target's dtype. (Scripted graphs may record the promoted dtype as the in-place result.)
    """
    target_type = target.type()
    rule = REGISTRY.node_facts(new).promotion
    operands = promotion.ts_operands(new, rule) if rule is not None else None
    if not isinstance(target_type, torch._C.TensorType) or target_type.dtype() is None or operands is None:
        return new.output()
    if not rule.arithmetic or rule.result is Result.SELF:
        return new.output()
    out_type = new.output().type()
    if not isinstance(out_type, torch._C.TensorType):
        return new.output()
    computed = promotion.computed_dtype(rule, list(operands.values()), rounds=promotion.ts_rounds(new))
    new.output().setType(out_type.with_dtype(computed))
    if computed == target_type.dtype():
        return new.output()
    rounded = graph.create("aten::type_as", [new.output(), target], 1)
    rounded.insertAfter(new)
    rounded.copyMetadata(new)
    rounded.output().setType(out_type.with_dtype(target_type.dtype()))
    return rounded.output()


def remove_inplace(
    graph: torch._C.Graph, locate: Callable[[torch._C.Node], str] | None = None, *, model_inputs: bool = True
) -> None:
    """Replace in-place ops (and writes through views) by functional ones.

    ``locate`` names a node's place in the user's code in errors and warnings; by default the
    locator capture registered for the graph (ts_graph.locator), which names the user's call
    chain of torch code inlined into the model, as emission errors do. Writes into the graph's
    inputs are reported in a warning when they are the model's (``model_inputs``): a Function
    body's inputs are values of the graph calling it, which records those writes itself.
    """
    if locate is None:
        locate = locator(graph)
    mutated_inputs: dict[str, list[str]] = {}
    written: set[int] = set()
    for node in walk(graph):
        if not is_inplace(node):
            continue
        try:
            root = _functionalize(graph, node, written)
        except UnsupportedWrite as error:
            where = error.text.format(where=locate(error.node))
            raise ExporterError(f"{node.kind()} at {locate(node)} {where}") from None
        if root.node().kind() == "prim::Param" and root.node().owningBlock().owningNode() is None:
            # TorchScript numbers repeated names (x.1): the user's name is the part before
            name = re.sub(r"\.\d+$", "", root.debugName())
            mutated_inputs.setdefault(name, []).append(locate(node))
        node.destroy()
    torch._C._jit_pass_dce(graph)
    if mutated_inputs and model_inputs:
        writes = "; ".join(f"{name!r} at {', '.join(dict.fromkeys(places))}" for name, places in mutated_inputs.items())
        warnings.warn(
            f"the model writes in place into its input(s) or buffer(s): {writes}. ONNX inputs are immutable, "
            "so the updated values are visible only through outputs that return them",
            stacklevel=3,
        )


def _functionalize(graph: torch._C.Graph, node: torch._C.Node, written: set[int]) -> torch._C.Value:
    """Put the functional form of the in-place ``node`` before it and make every later read
    of its target (and of the tensors it views) see the result; returns the written root."""
    target = node.inputsAt(0)
    kind = node.kind()
    if kind == "aten::copy_":
        _drop_traced_broadcast(node)
    if kind in _ALIASES_INPUT:
        new = graph.create("aten::alias", [node.inputsAt(_ALIASES_INPUT[kind])], 1)
    else:
        new = graph.create(_FUNCTIONAL_NAME.get(kind, kind[:-1]), list(node.inputs()), node.outputsSize())
    new.insertBefore(node)
    new.copyMetadata(node)
    new.output().setType(node.output().type())
    result = _rounded_into_target(graph, new, target)
    root = _view_chain(target, written)[1]
    # the in-place op's result aliases its target: later reads see the target's new value
    node.output().replaceAllUsesWith(_functionalize_views(graph, node, result.node(), result, written))
    return root


def check_no_inplace(graph: torch._C.Graph) -> list[torch._C.Node]:
    """The postcondition of :func:`remove_inplace`: the in-place nodes left (none)."""
    return [node for node in walk(graph) if is_inplace(node)]
