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
        inputs = list(node.inputs())
        # Reads of the target after the mutation must see the new value.
        new = graph.create(functional, inputs, node.outputsSize())
        new.insertBefore(node)
        new.copyMetadata(node)
        new.output().setType(node.output().type())
        target.replaceAllUsesAfterNodeWith(node, new.output())
        node.output().replaceAllUsesWith(new.output())
        node.destroy()


def check_no_inplace(graph: torch._C.Graph) -> list[torch._C.Node]:
    """The postcondition of :func:`remove_inplace`: the in-place nodes left (none)."""
    return [node for node in walk(graph) if is_inplace(node)]

