"""Custom autograd Functions (prim::PythonOp) in a trace."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from exporter.registry import PYTHON_OP, REGISTRY, autograd_function
from exporter.ts_graph import all_nodes

__all__ = ["functions_to_inline", "inlined_functions"]


def functions_to_inline(graph: torch._C.Graph) -> set[type]:
    """The autograd Functions (prim::PythonOp) in ``graph`` that have no symbolic at any opset."""
    found = set()
    for node in all_nodes([graph]):
        if node.kind() == PYTHON_OP:
            cls = autograd_function(node)
            if cls is not None and not REGISTRY.function_exports(cls):
                found.add(cls)
    return found


class _InlineContext:
    """The ``ctx`` of a Function's forward called outside autograd: saving for backward and
    marking outputs do nothing; attributes set on it are kept for the forward to read back."""

    def __init__(self, args: Sequence[Any]) -> None:
        self.needs_input_grad = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        self.saved_tensors: tuple[Any, ...] = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors_: Any) -> None:
        self.saved_tensors = tensors_

    def save_for_forward(self, *tensors_: Any) -> None:
        pass

    def mark_dirty(self, *tensors_: Any) -> None:
        pass

    def mark_non_differentiable(self, *tensors_: Any) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


def _inline_apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``Function.apply`` replaced by a plain call of ``forward``: tracing records its ops."""
    from torch.autograd.function import _is_setup_context_defined

    if _is_setup_context_defined(cls.setup_context):  # forward(*args) without ctx
        return cls.forward(*args, **kwargs)
    return cls.forward(_InlineContext(args), *args, **kwargs)


@contextlib.contextmanager
def inlined_functions(classes: set[type]) -> Iterator[None]:
    """Replace ``apply`` of ``classes`` while tracing (the capture lock is held); restored after."""
    missing = object()
    saved = {cls: cls.__dict__.get("apply", missing) for cls in classes}
    for cls in classes:
        cls.apply = classmethod(_inline_apply)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for cls, previous in saved.items():
            if previous is missing:
                delattr(cls, "apply")
            else:
                cls.apply = previous  # type: ignore[attr-defined]
