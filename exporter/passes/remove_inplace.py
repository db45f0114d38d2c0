"""Replace in-place aten ops with their functional forms.

``y = x.add_(1)`` becomes ``y = add(x, 1)``, and every later read of ``x`` reads ``y``: ONNX
values are immutable, so the mutation must become data flow. A write into a view (``x[0].add_(1)``,
``x[:, 1:3] = v``) is written back into the viewed tensor with slice_scatter/select_scatter
(or the inverse reshape/transpose), and a write inside an If or Loop leaves the block as an
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
from exporter.passes.common import schema_of, walk
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


# Views whose writes can be threaded back into their base, and how.
_RESHAPING_VIEWS = frozenset(
    {
        "aten::view",
        "aten::reshape",
        "aten::flatten",
        "aten::unflatten",
        "aten::view_as",
        "aten::reshape_as",
        "aten::squeeze",
        "aten::unsqueeze",
    }
)
_IDENTITY_VIEWS = frozenset({"aten::detach", "aten::alias", "aten::contiguous"})
_NOT_VIEWS = frozenset({"aten::to", "aten::type_as", "aten::expand", "aten::expand_as"})


_TRANSPOSING_VIEWS = frozenset({"aten::permute", "aten::transpose", "aten::t", "aten::numpy_T"})


def _is_contiguous(type_: torch._C.Type) -> bool | None:
    """Whether a traced tensor type's recorded strides are row-major (None when not recorded)."""
    if not isinstance(type_, torch._C.TensorType):
        return None
    sizes, strides = type_.sizes(), type_.strides()
    if sizes is None or strides is None or None in sizes or None in strides:
        return None
    expected = 1
    for size, stride in reversed(list(zip(sizes, strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _contiguous_copies(node: torch._C.Node) -> bool:
    """Whether ``contiguous()`` copied its input (so writes into its result stay there): the
    input's traced strides are not row-major, or (no strides recorded) it is a transposed view."""
    source = node.inputsAt(0)
    contiguous = _is_contiguous(source.type())
    if contiguous is not None:
        return not contiguous
    return source.node().kind() in _TRANSPOSING_VIEWS


def _is_view(node: torch._C.Node) -> bool:
    """Whether ``node`` returns an alias of its first input (select, slice, view, ...)."""
    if node.kind() in _NOT_VIEWS or not node.kind().startswith("aten::"):
        return False
    if node.kind() == "aten::contiguous" and _contiguous_copies(node):
        return False
    schema = schema_of(node)
    if schema is None or not schema.returns:
        return False
    text = str(schema)
    head, _, returns = text.partition(" -> ")
    return "(a)" in returns and "(a!)" not in head


class _Cursor:
    """Inserts TorchScript nodes one after another, starting after ``anchor``."""

    def __init__(self, graph: torch._C.Graph, anchor: torch._C.Node) -> None:
        self.graph = graph
        self.last = anchor

    def constant(self, value: object) -> torch._C.Value:
        out = self.graph.insertConstant(value)
        out.node().moveAfter(self.last)
        self.last = out.node()
        return out

    def node(
        self, kind: str, inputs: list[torch._C.Value], like: torch._C.Node, type_: torch._C.Type | None = None
    ) -> torch._C.Value:
        node = self.graph.create(kind, inputs, 1)
        node.insertAfter(self.last)
        node.copyMetadata(like)
        if type_ is not None:
            node.output().setType(type_)
        self.last = node
        return node.output()


def _constant_ints(value: torch._C.Value) -> list[int] | None:
    """An int list known at export time: a constant, or a ListConstruct of int constants."""
    constant = value.toIValue()
    if constant is not None:
        return list(constant)
    node = value.node()
    if node.kind() != "prim::ListConstruct":
        return None
    items = [item.toIValue() for item in node.inputs()]
    return items if all(isinstance(item, int) for item in items) else None


def _is_full_slice(bounds: list[torch._C.Value]) -> bool:
    """Whether slice(start, end, step) bounds take a whole dim: [0 or None, >= INT64_MAX or None, 1]."""
    start, end, step = (bound.toIValue() if bound.node().kind() == "prim::Constant" else "?" for bound in bounds)
    return start in (None, 0) and (end is None or (isinstance(end, int) and end >= 2**63 - 1)) and step == 1


def _write_back(cursor: _Cursor, view: torch._C.Node, updated: torch._C.Value) -> torch._C.Value:
    """The base of ``view`` with the view's elements replaced by ``updated``."""
    kind = view.kind()
    inputs = list(view.inputs())
    base = inputs[0]
    if kind == "aten::slice" and _is_full_slice(inputs[2:5]):
        # x[:, :, 0] records slices over whole dims: their write-back is the value itself,
        # whatever the size (no slice_scatter with bounds known only at run time)
        return updated
    if kind == "aten::slice":
        out = cursor.node("aten::slice_scatter", [base, updated, *inputs[1:5]], view)
    elif kind == "aten::select":
        out = cursor.node("aten::select_scatter", [base, updated, *inputs[1:3]], view)
    elif kind == "aten::narrow":
        end = cursor.node("aten::add", [inputs[2], inputs[3]], view, torch._C.IntType.get())
        out = cursor.node("aten::slice_scatter", [base, updated, inputs[1], inputs[2], end, cursor.constant(1)], view)
    elif kind in _RESHAPING_VIEWS:
        sizes = cursor.node("aten::size", [base], view, torch._C.ListType.ofInts())
        out = cursor.node("aten::reshape", [updated, sizes], view)
    elif kind == "aten::transpose":
        out = cursor.node("aten::transpose", [updated, inputs[1], inputs[2]], view)
    elif kind in ("aten::t", "aten::numpy_T"):
        out = (
            cursor.node("aten::t", [updated], view)
            if kind == "aten::t"
            else cursor.node("aten::numpy_T", [updated], view)
        )
    elif kind == "aten::permute":
        dims = _constant_ints(inputs[1])
        if dims is None:
            raise _Unsupported(
                view,
                "writes through aten::permute at {where}, which needs the permutation known at export "
                "time (the sizes may be dynamic)",
            )
        rank = len(dims)
        order = [d % rank for d in dims]
        inverse = sorted(range(rank), key=lambda i: order[i])
        out = cursor.node("aten::permute", [updated, cursor.constant(inverse)], view)
    elif kind in _IDENTITY_VIEWS:
        return updated
    else:
        raise _Unsupported(
            view,
            f"writes through {kind} at {{where}}, whose write-back into the viewed tensor is not "
            "supported; write into a clone instead",
        )
    out.setType(base.type())
    return out


def _view_chain(value: torch._C.Value, written: set[int]) -> tuple[list[torch._C.Node], torch._C.Value]:
    """The views ``value`` is taken through (outermost first) and the tensor they view.

    A value in ``written`` (by ``unique()``) is a new value this pass made for a mutated tensor:
    a root, even when made by a view op (the inverse transpose of a write-back, ``transpose_``).
    """
    chain: list[torch._C.Node] = []
    while value.unique() not in written and _is_view(value.node()):
        chain.append(value.node())
        value = value.node().inputsAt(0)
    return chain, value


def _functionalize_views(
    graph: torch._C.Graph,
    target: torch._C.Value,
    anchor: torch._C.Node,
    updated: torch._C.Value,
    written: set[int],
) -> torch._C.Value:
    """Propagate the new value of a view to the tensor it views, level by level; returns the
    value later reads of ``target`` see.

    ``y[:, 1:3] = v`` records copy_ into slice(slice(y)); the copy's result is written back
    with slice_scatter into each base in turn (a permute's write-back is the inverse permute:
    it needs no sizes), and every later read of the root sees the written value. The views
    themselves are then taken again from the new root, so a later read of a view sees the
    write and a later write through it (``z = y.t(); z.add_(1); z[0] += 1``) still reaches
    the root.
    """
    chain, root = _view_chain(target, written)
    cursor = _Cursor(graph, anchor)
    for view in chain:
        updated = _write_back(cursor, view, updated)
    written.add(updated.unique())
    _thread_out(root, cursor.last, updated)
    for view in reversed(chain):
        inputs = [updated, *list(view.inputs())[1:]]
        updated = cursor.node(view.kind(), inputs, view, view.output().type())
        _thread_out(view.output(), cursor.last, updated)
    return updated


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
            raise _Unsupported(owner, f"writes inside the block of {owner.kind()} at {{where}}, which is not supported")
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


class _Unsupported(Exception):  # noqa: N818 - internal, re-raised as an ExporterError
    """An in-place write this pass cannot make functional; ``text`` names ``node`` (a view, a
    block owner) by ``{where}``, filled with the user's location by :func:`remove_inplace`."""

    def __init__(self, node: torch._C.Node, text: str) -> None:
        super().__init__(text)
        self.node = node
        self.text = text


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
        except _Unsupported as error:
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
    node.output().replaceAllUsesWith(_functionalize_views(graph, target, result.node(), result, written))
    return root


def check_no_inplace(graph: torch._C.Graph) -> list[torch._C.Node]:
    """The postcondition of :func:`remove_inplace`: the in-place nodes left (none)."""
    return [node for node in walk(graph) if is_inplace(node)]
