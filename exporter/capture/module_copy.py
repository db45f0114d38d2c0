"""Structural copies of ``nn.Module``s: what capture runs instead of the user's module.

A trace runs the forward, and a forward may write what it is run on: attributes (a cache, a
counter), the training flags export switches, and, for a meta trace, every parameter and
buffer, which must be meta tensors while it traces. Run on a copy, none of that reaches the
module the user holds, which other threads may be running meanwhile.

The copy is structural: a new object per module (of the module's own class), with new
``_parameters``, ``_buffers`` and ``_modules`` tables and new top-level containers (lists,
tuples, dicts, sets) in its attributes. Its parameters are the module's own (a real trace,
whose graph reads them) or meta twins (a meta trace); its buffers are copies of the module's
where the forward runs for real (it may write them in place: batch norm's statistics in
training mode, counters: :func:`with_copied_buffers`), the module's own until then (a meta
trace reads only their dtype and shape, and the export writes their values: copying them up
front put every buffer of a memory-mapped model in memory), or meta twins. References to
parameters, buffers or modules kept elsewhere in the attributes (an RNN's ``_flat_weights``)
point into the copy too. Objects the copy cannot reproduce are shared: ScriptModules (a
trace of a model holding one runs torch.jit.trace, on the module itself), and anything
nested deeper than the top-level containers.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["structural_copy", "in_export_mode", "with_copied_buffers"]

# How deep attribute containers are followed for references into the module (``_flat_weights``
# is one level; nested lists of layers two).
_DEPTH = 2


def structural_copy(
    module: torch.nn.Module,
    parameter: Callable[[torch.Tensor], torch.Tensor] | None = None,
    buffer: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.nn.Module:
    """A copy of ``module`` sharing no module, table or top-level container with it; its
    parameters are ``parameter(tensor)`` and its buffers ``buffer(tensor)`` (the module's own
    tensors where no function is given)."""
    originals = [m for m in module.modules() if not isinstance(m, torch.jit.ScriptModule)]
    copies: dict[int, Any] = {}
    for original in originals:
        clone = object.__new__(type(original))
        copies[id(original)] = clone
    tensors: dict[int, torch.Tensor] = {}
    for original in originals:
        state = original.__dict__
        copied = {key: _copied(value, copies, tensors, _DEPTH) for key, value in state.items() if key not in _TABLES}
        for table, make in (("_parameters", parameter), ("_buffers", buffer)):
            items = {}
            for key, value in state[table].items():
                if value is not None and id(value) not in tensors:
                    tensors[id(value)] = make(value) if make is not None else value
                items[key] = tensors[id(value)] if value is not None else None
            copied[table] = items
        copied["_modules"] = {key: copies.get(id(child), child) for key, child in state["_modules"].items()}
        copies[id(original)].__dict__.update(copied)
    # references to parameters and buffers kept elsewhere (an RNN's _flat_weights), now that
    # every tensor has its copy
    for original in originals:
        clone = copies[id(original)]
        for key, value in original.__dict__.items():
            if key not in _TABLES and _holds_tensors(value, _DEPTH):
                clone.__dict__[key] = _copied(value, copies, tensors, _DEPTH)
    return copies.get(id(module), module)


_TABLES = frozenset({"_parameters", "_buffers", "_modules"})


def _holds_tensors(value: Any, depth: int) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if depth == 0 or not isinstance(value, (tuple, list, dict)):
        return False
    items = value.values() if isinstance(value, dict) else value
    return any(_holds_tensors(item, depth - 1) for item in items)


def _copy_of(tensor: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return tensor.clone()


def with_copied_buffers(module: torch.nn.Module) -> torch.nn.Module:
    """A structural copy of ``module`` whose buffers are copies: what a forward that runs for
    real runs on, so that the buffers it writes in place are not the user's."""
    return structural_copy(module, buffer=_copy_of)


_SCALARS = frozenset({bool, int, float, str, type(None)})


def _copied(value: Any, copies: dict[int, Any], tensors: dict[int, torch.Tensor], depth: int) -> Any:
    """``value`` with references to the module's parts replaced by the copy's, and containers
    (hook tables, lists of layers) new, so that the copy's own changes stay in the copy."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, torch.Tensor):
        return tensors.get(id(value), value)
    if isinstance(value, torch.nn.Module):
        return copies.get(id(value), value)
    if depth == 0 or not isinstance(value, (tuple, list, dict, set)):
        return value
    if isinstance(value, tuple):
        items = [_copied(item, copies, tensors, depth - 1) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if not value:  # most are: a module's empty hook tables
        return value.copy()
    new = value.copy()  # the container's own class (an OrderedDict of hooks stays one)
    if isinstance(new, dict):
        for key, item in new.items():
            new[key] = _copied(item, copies, tensors, depth - 1)
    elif isinstance(new, list):
        new[:] = [_copied(item, copies, tensors, depth - 1) for item in new]
    return new


@contextlib.contextmanager
def in_export_mode(model: Any, training: bool | None, copy_buffers: bool = True) -> Iterator[Any]:
    """``model`` as export runs it: for an ``nn.Module``, a structural copy in the training mode
    asked for (``None`` keeps the module's own flags), set with the copy's own ``train()`` (a
    module may override it); other models as they are. ``copy_buffers=False`` leaves the
    module's own buffers in the copy, for a caller that runs the forward for real only on
    :func:`with_copied_buffers` of it.

    Two cases switch flags the user can see, for the duration only: a ScriptModule (it cannot
    be copied; its flags are read when it is lowered) and the ScriptModules inside a copied
    module (shared with it). Their flags are restored afterwards, also on failure; exporting
    with ``training=TrainingMode.PRESERVE`` switches nothing.
    """
    if isinstance(model, torch.jit.ScriptModule):
        runs = model
    elif isinstance(model, torch.nn.Module):
        runs = with_copied_buffers(model) if copy_buffers else structural_copy(model)
    else:
        yield model
        return
    if training is None:
        yield runs
        return
    shared = [m for m in runs.modules() if isinstance(m, torch.jit.ScriptModule) and hasattr(m, "training")]
    with _SWITCHING if shared else contextlib.nullcontext():
        flags = [(m, m.training) for m in shared]
        if hasattr(runs, "training"):  # frozen script modules have no training flag
            runs.train(training)
        try:
            yield runs
        finally:
            for m, flag in flags:
                m.training = flag


# Exports that switch the flags of ScriptModules take turns: two switching the same module at
# once would each save the other's switched flag and leave it switched.
_SWITCHING = threading.RLock()
