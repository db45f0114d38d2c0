"""How a write into a view reaches the tensor it views: the inverse of each view op.

remove_inplace turns ``y.diagonal().fill_(0)`` into data flow: the view's new value is written
back into its base with the inverse of the op that took the view, level by level, and the
views are then taken again from the written base. This module knows the view ops; the pass
knows the graph walk and the blocks.

The inverses: views that pick elements are written back by the scatter of the same arguments
(slice, select, narrow, diagonal, the items of split/chunk/unbind/tensor_split); views that
move dims by the inverse move (permute, transpose, movedim, mT); views that regroup elements
by a reshape to the base's sizes (view, reshape, flatten, squeeze, ...); non-overlapping unfold
windows by an index_copy. torch's exporter writes back only select, slice and index_put
through them. Views whose elements overlap, or that reinterpret memory in a way ONNX tensors
cannot (expand, as_strided, overlapping unfold windows, dtype views), are refused by name,
with what to write instead.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable

import torch

from exporter.ts_graph import overload_name, schema_of

__all__ = ["Cursor", "UnsupportedWrite", "ViewStep", "is_view", "retake", "view_step", "views_taken_from", "write_back"]

Node = torch._C.Node
Value = torch._C.Value


class UnsupportedWrite(Exception):  # noqa: N818 - re-raised by remove_inplace as an ExporterError
    """An in-place write that cannot be made functional; ``text`` names ``node`` (a view, a
    block owner) by ``{where}``, filled with the user's location by remove_inplace."""

    def __init__(self, node: Node, text: str) -> None:
        super().__init__(text)
        self.node = node
        self.text = text


class Cursor:
    """Inserts TorchScript nodes one after another, starting after ``anchor``."""

    def __init__(self, graph: torch._C.Graph, anchor: Node) -> None:
        self.graph = graph
        self.last = anchor

    def constant(self, value: object) -> Value:
        out = self.graph.insertConstant(value)
        out.node().moveAfter(self.last)
        self.last = out.node()
        return out

    def node(self, kind: str, inputs: list[Value], like: Node, type_: torch._C.Type | None = None) -> Value:
        return self.nodes(kind, inputs, like, [type_])[0]

    def nodes(self, kind: str, inputs: list[Value], like: Node, types: list[torch._C.Type | None]) -> list[Value]:
        """A node with one output per entry of ``types`` (None: the type the schema gives)."""
        node = self.graph.create(kind, inputs, len(types))
        node.insertAfter(self.last)
        node.copyMetadata(like)
        for out, type_ in zip(node.outputs(), types):
            if type_ is not None:
                out.setType(type_)
        self.last = node
        return list(node.outputs())

    def value(self, item: int | Value) -> Value:
        return self.constant(item) if isinstance(item, int) else item

    def arithmetic(self, kind: str, a: int | Value, b: int | Value, like: Node) -> int | Value:
        """Integer arithmetic (aten::add/mul/floordiv/remainder, prim::min), folded when both
        operands are known at export time."""
        known_a, known_b = _known_int(a), _known_int(b)
        if known_a is not None and known_b is not None:
            return _INT_OPS[kind](known_a, known_b)
        return self.node(kind, [self.value(a), self.value(b)], like, torch._C.IntType.get())


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "aten::add": operator.add,
    "aten::mul": operator.mul,
    "aten::floordiv": operator.floordiv,
    "aten::remainder": operator.mod,
    "prim::min": min,
}


def _known_int(item: int | Value) -> int | None:
    if isinstance(item, int):
        return item
    if item.node().kind() == "prim::Constant":
        constant = item.toIValue()
        return constant if isinstance(constant, int) and not isinstance(constant, bool) else None
    return None


def _known_ints(value: Value) -> list[int | Value] | None:
    """An int list as its items: a constant, or a ListConstruct (items known or not)."""
    if value.node().kind() == "prim::Constant":
        constant = value.toIValue()
        return list(constant) if isinstance(constant, (list, tuple)) else None
    if value.node().kind() == "prim::ListConstruct":
        return [_known_int(item) if _known_int(item) is not None else item for item in value.node().inputs()]
    return None


# -- which values are views -----------------------------------------------------------------------

_NOT_VIEWS = frozenset({"aten::to", "aten::type_as"})
_TRANSPOSING_VIEWS = frozenset({"aten::permute", "aten::transpose", "aten::t", "aten::numpy_T"})

# Ops returning a list of views of their first input, each item a slice (or a select) of one dim.
# The unsafe_ forms return views in eager too (unsafe only for autograd), though their schemas
# say otherwise.
_LIST_VIEWS = frozenset(
    {
        "aten::split",
        "aten::split_with_sizes",
        "aten::unsafe_split",
        "aten::unsafe_split_with_sizes",
        "aten::chunk",
        "aten::unsafe_chunk",
        "aten::tensor_split",
        "aten::hsplit",
        "aten::vsplit",
        "aten::dsplit",
        "aten::unbind",
    }
)


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


def _contiguous_copies(node: Node) -> bool:
    """Whether ``contiguous()`` copied its input (so writes into its result stay there): the
    input's traced strides are not row-major, or (no strides recorded) it is a transposed view."""
    source = node.inputsAt(0)
    contiguous = _is_contiguous(source.type())
    if contiguous is not None:
        return not contiguous
    return source.node().kind() in _TRANSPOSING_VIEWS


# reshape and its forms return a view when the strides allow one, else a copy
_RESHAPES_MAYBE_COPYING = frozenset({"aten::reshape", "aten::reshape_as", "aten::flatten", "aten::ravel"})


def _reshape_copies(node: Node) -> bool:
    """Whether a reshape copied its input: torch's view of the traced sizes and strides (on the
    meta device) fails; without recorded strides, when the input is a transposed view."""
    source, result = node.inputsAt(0).type(), node.output().type()
    if isinstance(source, torch._C.TensorType) and isinstance(result, torch._C.TensorType):
        sizes, strides, new_sizes = source.sizes(), source.strides(), result.sizes()
        if None not in (sizes, strides, new_sizes) and None not in (*sizes, *strides, *new_sizes):
            try:
                torch.empty_strided(sizes, strides, device="meta").view(new_sizes)
            except RuntimeError:
                return True
            return False
    return node.inputsAt(0).node().kind() in _TRANSPOSING_VIEWS


def is_view(node: Node) -> bool:
    """Whether ``node`` returns an alias of its first input (select, slice, view, ...)."""
    if node.kind() in _NOT_VIEWS or not node.kind().startswith("aten::"):
        return False
    if node.kind() == "aten::contiguous" and _contiguous_copies(node):
        return False
    if node.kind() in _RESHAPES_MAYBE_COPYING and _reshape_copies(node):
        return False
    schema = schema_of(node)
    if schema is None or not schema.returns:
        return False
    text = str(schema)
    head, _, returns = text.partition(" -> ")
    return "(a)" in returns and "(a!)" not in head


@dataclasses.dataclass(frozen=True)
class ViewStep:
    """``output`` is a view of ``op``'s first input, taken by ``op``; for an item of a
    split-like op's list, ``item`` (prim::ListUnpack or aten::__getitem__) takes it from the list."""

    op: Node
    output: Value
    item: Node | None = None

    @property
    def base(self) -> Value:
        return self.op.inputsAt(0)


def view_step(value: Value) -> ViewStep | None:
    """How ``value`` views another tensor, or None when it is no view."""
    node = value.node()
    if node.kind() in ("prim::ListUnpack", "aten::__getitem__"):
        source = node.inputsAt(0).node()
        return ViewStep(source, value, node) if source.kind() in _LIST_VIEWS else None
    return ViewStep(node, value) if is_view(node) else None


# -- taking a view again from a written base ------------------------------------------------------


def views_taken_from(value: Value) -> list[Node]:
    """The nodes that take views of ``value``: view ops and split-like ops reading it first."""
    nodes: list[Node] = []
    for use in value.uses():
        user = use.user
        if (
            use.offset == 0
            and not any(user == node for node in nodes)
            and (user.kind() in _LIST_VIEWS or is_view(user))
        ):
            nodes.append(user)
    return nodes


def retake(cursor: Cursor, node: Node, base: Value, taken: Callable[[Node], bool]) -> list[tuple[Value, Value]]:
    """The views ``node`` takes, taken again from ``base``: each value ``node`` made paired with
    its new value; for a split-like op its list, and the items that ``taken`` accepts of those
    unpacked from it or read from it by index."""
    new = cursor.node(node.kind(), [base, *list(node.inputs())[1:]], node, node.output().type())
    pairs = [(node.output(), new)]
    if node.kind() not in _LIST_VIEWS:
        return pairs
    items: list[Node] = []
    for use in node.output().uses():
        if use.user.kind() in ("prim::ListUnpack", "aten::__getitem__") and not any(use.user == i for i in items):
            items.append(use.user)
    for item in items:
        if not taken(item):
            continue
        olds = list(item.outputs())
        inputs = [new, *list(item.inputs())[1:]]
        pairs += list(zip(olds, cursor.nodes(item.kind(), inputs, item, [old.type() for old in olds])))
    return pairs


# -- writing a view's new value back into its base ------------------------------------------------

WriteBack = Callable[[Cursor, Node, Value], Value]


def _is_full_slice(bounds: list[Value]) -> bool:
    """Whether slice(start, end, step) bounds take a whole dim: [0 or None, >= INT64_MAX or None, 1]."""
    start, end, step = (bound.toIValue() if bound.node().kind() == "prim::Constant" else "?" for bound in bounds)
    return start in (None, 0) and (end is None or (isinstance(end, int) and end >= 2**63 - 1)) and step == 1


def _slice(cursor: Cursor, view: Node, updated: Value) -> Value:
    """slice_scatter; ``x[:, :, 0]`` records slices over whole dims: their write-back is the
    value itself, whatever the size (no slice_scatter with bounds known only at run time)."""
    inputs = list(view.inputs())
    if _is_full_slice(inputs[2:5]):
        return updated
    return cursor.node("aten::slice_scatter", [inputs[0], updated, *inputs[1:5]], view)


def _select(cursor: Cursor, view: Node, updated: Value) -> Value:
    inputs = list(view.inputs())
    return cursor.node("aten::select_scatter", [inputs[0], updated, *inputs[1:3]], view)


def _narrow(cursor: Cursor, view: Node, updated: Value) -> Value:
    """narrow(dim, start, length) is slice(dim, start, start + length); a negative start counts
    from the end, so its slice ending at the dim's end has no end (start + length is 0)."""
    base, dim, start, length = view.inputs()
    end = cursor.arithmetic("aten::add", start, length, view)
    known_start = _known_int(start)
    if known_start is not None and known_start < 0 and isinstance(end, int) and end == 0:
        end = 2**63 - 1
    step = cursor.constant(1)
    return cursor.node("aten::slice_scatter", [base, updated, dim, cursor.value(start), cursor.value(end), step], view)


def _diagonal(cursor: Cursor, view: Node, updated: Value) -> Value:
    """diagonal_scatter; linalg_diagonal(A, offset, dim1, dim2) has the same arguments."""
    base, offset, dim1, dim2 = view.inputs()
    return cursor.node("aten::diagonal_scatter", [base, updated, offset, dim1, dim2], view)


def _reshaped(cursor: Cursor, view: Node, updated: Value) -> Value:
    """Views that regroup elements in row-major order: the reshape to the base's sizes."""
    if view.kind() == "aten::view" and overload_name(view) == "dtype":
        raise UnsupportedWrite(view, _REINTERPRETS)
    sizes = cursor.node("aten::size", [view.inputsAt(0)], view, torch._C.ListType.ofInts())
    return cursor.node("aten::reshape", [updated, sizes], view)


def _same_op(cursor: Cursor, view: Node, updated: Value) -> Value:
    """Views that are their own inverse with the same arguments: transpose(a, b), t, numpy_T
    (reverses every dim), swapaxes/swapdims."""
    return cursor.node(view.kind(), [updated, *list(view.inputs())[1:]], view)


def _last_two_swapped(cursor: Cursor, view: Node, updated: Value) -> Value:
    """mT, and for real tensors mH/adjoint/matrix_H: the last two dims swap back."""
    return cursor.node("aten::transpose", [updated, cursor.constant(-2), cursor.constant(-1)], view)


def _permute(cursor: Cursor, view: Node, updated: Value) -> Value:
    """The inverse permutation: it needs no sizes, so dynamic shapes stay dynamic."""
    dims = _known_ints(view.inputsAt(1))
    if dims is None or not all(isinstance(d, int) for d in dims):
        raise UnsupportedWrite(
            view,
            "writes through aten::permute at {where}, which needs the permutation known at export "
            "time (the sizes may be dynamic)",
        )
    rank = len(dims)
    order = [d % rank for d in dims]  # type: ignore[operator]
    inverse = sorted(range(rank), key=lambda i: order[i])
    return cursor.node("aten::permute", [updated, cursor.constant(inverse)], view)


def _movedim(cursor: Cursor, view: Node, updated: Value) -> Value:
    """movedim(source, destination) is undone by movedim(destination, source)."""
    _, source, destination = view.inputs()
    return cursor.node("aten::movedim", [updated, destination, source], view)


def _identity(cursor: Cursor, view: Node, updated: Value) -> Value:
    """Views that alias every element in place (detach, contiguous of a contiguous tensor, and
    on real tensors conj, real, positive, resolve_conj/neg)."""
    del cursor, view
    return updated


def _unfold(cursor: Cursor, view: Node, updated: Value) -> Value:
    """unfold(dim, size, step) windows that do not overlap (step >= size): the window dim moves
    back next to its dim and merges with it, and the elements go to positions ``i * step + k``
    (the first ``n * size`` positions when the windows tile: a slice_scatter)."""
    base, dim_value, size_value, step_value = view.inputs()
    dim, size, step = _known_int(dim_value), _known_int(size_value), _known_int(step_value)
    if dim is None or size is None or step is None:
        raise UnsupportedWrite(
            view, "writes through aten::unfold at {where}, whose dim, size and step must be constants"
        )
    if step < size:
        raise UnsupportedWrite(
            view,
            "writes through aten::unfold at {where}, whose windows overlap (step < size): torch writes "
            "the shared elements once per window; write into unfold(...).clone() instead",
        )
    rank = base.type().dim() if isinstance(base.type(), torch._C.TensorType) else None
    if dim < 0 and rank is not None:
        dim += rank
    # in the view the window dim is last, one more dim than the base: it moves next to ``dim``
    # (counted from the end when the rank is unknown) and merges with it
    window_at, first = (dim + 1, dim) if dim >= 0 else (dim, dim - 1)
    moved = cursor.node("aten::movedim", [updated, cursor.constant(-1), cursor.constant(window_at)], view)
    merged = cursor.node("aten::flatten", [moved, cursor.constant(first), cursor.constant(first + 1)], view)
    count = cursor.node("aten::size", [merged, cursor.constant(dim)], view, torch._C.IntType.get())
    if step == size:
        zero, one = cursor.constant(0), cursor.constant(1)
        return cursor.node("aten::slice_scatter", [base, merged, cursor.constant(dim), zero, count, one], view)
    # positions i * step + k for window i and element k, as one row-major vector
    windows = cursor.arithmetic("aten::floordiv", count, size, view)
    none = cursor.constant(None)
    long = cursor.constant(_INT64)
    starts = cursor.node("aten::arange", [cursor.value(windows), long, none, none, none], view)
    starts = cursor.node("aten::mul", [starts, cursor.constant(step)], view)
    starts = cursor.node("aten::unsqueeze", [starts, cursor.constant(1)], view)
    offsets = cursor.node("aten::arange", [cursor.constant(size), long, none, none, none], view)
    positions = cursor.node("aten::add", [starts, offsets, cursor.constant(1)], view)
    positions = cursor.node("aten::reshape", [positions, cursor.constant([-1])], view)
    return cursor.node("aten::index_copy", [base, cursor.constant(dim), positions, merged], view)


_INT64 = 4  # the ScalarType code of torch.int64, as TorchScript passes dtypes


_WRITE_BACKS: dict[str, WriteBack] = {
    "aten::slice": _slice,
    "aten::select": _select,
    "aten::narrow": _narrow,
    "aten::diagonal": _diagonal,
    "aten::linalg_diagonal": _diagonal,
    "aten::unfold": _unfold,
    **dict.fromkeys(
        (
            "aten::view",
            "aten::reshape",
            "aten::flatten",
            "aten::unflatten",
            "aten::view_as",
            "aten::reshape_as",
            "aten::squeeze",
            "aten::unsqueeze",
            "aten::ravel",
            "aten::_reshape_alias",
        ),
        _reshaped,
    ),
    **dict.fromkeys(("aten::transpose", "aten::t", "aten::numpy_T", "aten::swapaxes", "aten::swapdims"), _same_op),
    **dict.fromkeys(("aten::mT", "aten::mH", "aten::adjoint", "aten::matrix_H"), _last_two_swapped),
    "aten::permute": _permute,
    **dict.fromkeys(("aten::movedim", "aten::moveaxis"), _movedim),
    **dict.fromkeys(
        (
            "aten::detach",
            "aten::alias",
            "aten::contiguous",
            "aten::conj",
            "aten::_conj",
            "aten::resolve_conj",
            "aten::resolve_neg",
            "aten::positive",
            "aten::real",
            "aten::lift_fresh",
        ),
        _identity,
    ),
}

_REINTERPRETS = (
    "writes through a view at {where} that reinterprets the tensor's bytes as another dtype, which ONNX "
    "tensors cannot alias; compute the new values in the original dtype and write those instead"
)
_EXPANDED = (
    "writes through {kind} at {{where}}, whose elements repeat the same element of the tensor it expands, "
    "so ONNX cannot say which write lands; write into the tensor before expanding it, or into "
    "{name}(...).clone()"
)
# Views whose write-back ONNX cannot express, with what to write instead.
_NOT_WRITABLE: dict[str, str] = {
    "aten::expand": _EXPANDED.format(kind="aten::expand", name="expand"),
    "aten::expand_as": _EXPANDED.format(kind="aten::expand_as", name="expand_as"),
    "aten::broadcast_to": _EXPANDED.format(kind="aten::broadcast_to", name="broadcast_to"),
    "aten::as_strided": (
        "writes through aten::as_strided at {where}, whose elements are placed by strides ONNX tensors do not "
        "have; write through slice, select, diagonal or view of the tensor instead, or into as_strided(...).clone()"
    ),
    "aten::view_as_real": _REINTERPRETS,
    "aten::view_as_complex": _REINTERPRETS,
}


def write_back(cursor: Cursor, step: ViewStep, updated: Value) -> Value:
    """The base of ``step``'s view with the view's elements replaced by ``updated``."""
    if step.item is not None:
        return _write_back_item(cursor, step, updated)
    kind = step.op.kind()
    if kind in _NOT_WRITABLE:
        raise UnsupportedWrite(step.op, _NOT_WRITABLE[kind])
    inverse = _WRITE_BACKS.get(kind)
    if inverse is None:
        raise UnsupportedWrite(
            step.op,
            f"writes through {kind} at {{where}}, whose write-back into the viewed tensor is not "
            "supported; write into a clone instead",
        )
    out = inverse(cursor, step.op, updated)
    if out is not updated:
        out.setType(step.base.type())
    return out


# -- items of split-like lists --------------------------------------------------------------------

# the dim hsplit, vsplit and dsplit split (hsplit: 0 for 1-d tensors)
_IMPLICIT_DIM = {"aten::vsplit": 0, "aten::hsplit": 1, "aten::dsplit": 2}


def _item_index(cursor: Cursor, step: ViewStep) -> int | Value:
    """The position of the written item in its list: known for an unpacked item and a constant
    index (a negative one counted from the list's length), else read at run time (wrapped by
    the length unless it is a loop's counter, which counts up from 0)."""
    item = step.item
    assert item is not None
    if item.kind() == "prim::ListUnpack":
        return list(item.outputs()).index(step.output)
    index = item.inputsAt(1)
    known = _known_int(index)
    if known is not None and known >= 0:
        return known
    if known is None and _is_loop_counter(index):
        return index
    length = cursor.node("aten::len", [item.inputsAt(0)], item, torch._C.IntType.get())
    return cursor.arithmetic("aten::remainder", index, length, item)


def _is_loop_counter(value: Value) -> bool:
    """Whether ``value`` is the iteration count of the Loop whose body it is read in."""
    if value.node().kind() != "prim::Param":
        return False
    owner = value.node().owningBlock().owningNode()
    return owner is not None and owner.kind() == "prim::Loop" and value == value.node().outputsAt(0)


def _split_dim(step: ViewStep) -> int | Value:
    op = step.op
    if op.kind() in _IMPLICIT_DIM:
        dim = _IMPLICIT_DIM[op.kind()]
        rank = step.base.type().dim() if isinstance(step.base.type(), torch._C.TensorType) else None
        if op.kind() == "aten::hsplit" and rank is None:
            raise UnsupportedWrite(op, "writes through an item of aten::hsplit at {where}, whose dim needs the rank")
        return 0 if op.kind() == "aten::hsplit" and rank == 1 else dim
    return op.inputsAt(op.inputsSize() - 1)


def _write_back_item(cursor: Cursor, step: ViewStep, updated: Value) -> Value:
    """Item i of a split-like list is a slice of one dim (unbind: a select): the slice starts
    where the items before it end, and is as long as the item."""
    op, kind = step.op, step.op.kind()
    index = _item_index(cursor, step)
    dim = _split_dim(step)
    base = step.base
    if kind == "aten::unbind":
        return _typed(
            cursor.node("aten::select_scatter", [base, updated, cursor.value(dim), cursor.value(index)], op), base
        )
    bounds = _item_bounds(cursor, step, index, dim, updated)
    start, end = bounds
    inputs = [base, updated, cursor.value(dim), cursor.value(start), cursor.value(end), cursor.constant(1)]
    return _typed(cursor.node("aten::slice_scatter", inputs, op), base)


def _typed(value: Value, like: Value) -> Value:
    value.setType(like.type())
    return value


def _item_bounds(
    cursor: Cursor, step: ViewStep, index: int | Value, dim: int | Value, updated: Value
) -> tuple[int | Value, int | Value]:
    """The slice bounds of item ``index`` of a split-like list along ``dim``."""
    op, kind = step.op, step.op.kind()
    argument = op.inputsAt(1) if op.inputsSize() > 1 else None
    is_list = argument is not None and isinstance(argument.type(), torch._C.ListType)
    if kind in ("aten::tensor_split", "aten::hsplit", "aten::vsplit", "aten::dsplit") and is_list:
        indices = _known_ints(argument)
        if indices is None or not isinstance(index, int):
            raise UnsupportedWrite(op, _RUN_TIME_ITEM.format(kind=kind))
        start = 0 if index == 0 else indices[index - 1]
        end = indices[index] if index < len(indices) else 2**63 - 1
        return start, end
    if kind == "aten::tensor_split" and isinstance(argument.type(), torch._C.TensorType):
        raise UnsupportedWrite(
            op,
            "writes through an item of aten::tensor_split at {where}, split by a tensor of indices; "
            "pass the sections or indices as ints instead",
        )
    length = cursor.node("aten::size", [updated, cursor.value(dim)], op, torch._C.IntType.get())
    if is_list:  # split / split_with_sizes: the sizes of the items before
        sizes = _known_ints(argument)
        if sizes is None or not isinstance(index, int):
            raise UnsupportedWrite(op, _RUN_TIME_ITEM.format(kind=kind))
        start: int | Value = 0
        for size in sizes[:index]:
            start = cursor.arithmetic("aten::add", start, size, op)
    elif kind in ("aten::split", "aten::unsafe_split"):
        start = cursor.arithmetic("aten::mul", index, argument, op)
    else:  # chunk: items of ceil(L / chunks); tensor_split and h/v/dsplit sections: the first L % n one longer
        total = cursor.node("aten::size", [step.base, cursor.value(dim)], op, torch._C.IntType.get())
        parts = argument
        if kind in ("aten::chunk", "aten::unsafe_chunk"):
            rounded_up = cursor.arithmetic("aten::add", total, cursor.arithmetic("aten::add", parts, -1, op), op)
            start = cursor.arithmetic(
                "aten::mul", index, cursor.arithmetic("aten::floordiv", rounded_up, parts, op), op
            )
        else:
            shorter = cursor.arithmetic("aten::floordiv", total, parts, op)
            longer = cursor.arithmetic("aten::remainder", total, parts, op)
            before = cursor.arithmetic("aten::mul", index, shorter, op)
            start = cursor.arithmetic("aten::add", before, cursor.arithmetic("prim::min", index, longer, op), op)
    return start, cursor.arithmetic("aten::add", start, length, op)


_RUN_TIME_ITEM = (
    "writes through an item of {kind} at {{where}} taken at an index known only at run time, of items of "
    "different sizes; unpack the items (a, b = ...) or index them with constants"
)
