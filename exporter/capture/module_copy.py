"""Structural copies of ``nn.Module``s: what capture runs instead of the user's module.

A trace runs the forward, and a forward may write what it is run on: attributes (a cache, a
counter), the training flags export switches, and, for a meta trace, every parameter and
buffer, which must be meta tensors while it traces. Run on a copy, none of that reaches the
module the user holds, which other threads may be running meanwhile.

The copy is structural: a new object per module (of the module's own class), with new
``_parameters``, ``_buffers`` and ``_modules`` tables and new top-level containers (lists,
tuples, dicts, sets) in its attributes; the tensors in them are the module's own (a real
trace, whose graph names them) or twins made by ``twin`` (a meta trace). References to
parameters, buffers or modules kept elsewhere in the attributes (an RNN's ``_flat_weights``)
point into the copy too. Objects the copy cannot reproduce are shared: ScriptModules (a
trace of a model holding one runs torch.jit.trace, on the module itself), and anything
nested deeper than the top-level containers.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["structural_copy", "in_export_mode"]

# How deep attribute containers are followed for references into the module (``_flat_weights``
# is one level; nested lists of layers two).
_DEPTH = 2


def structural_copy(
    module: torch.nn.Module, twin: Callable[[torch.Tensor], torch.Tensor] | None = None
) -> torch.nn.Module:
    """A copy of ``module`` sharing no module, table or top-level container with it; its
    parameters and buffers are ``twin(tensor)`` (the module's own tensors without ``twin``)."""
    copies: dict[int, Any] = {}
    for original in module.modules():
        if isinstance(original, torch.jit.ScriptModule):
            continue
        clone = object.__new__(type(original))
        clone.__dict__.update(original.__dict__)
        copies[id(original)] = clone
    tensors: dict[int, torch.Tensor] = {}
    for original in module.modules():
        clone = copies.get(id(original))
        if clone is None:
            continue
        for table in ("_parameters", "_buffers"):
            items = {}
            for key, value in getattr(original, table).items():
                if value is not None and id(value) not in tensors:
                    tensors[id(value)] = twin(value) if twin is not None else value
                items[key] = tensors[id(value)] if value is not None else None
            clone.__dict__[table] = items
    for original in module.modules():
        clone = copies.get(id(original))
        if clone is None:
            continue
        clone.__dict__["_modules"] = {
            key: copies.get(id(child), child) if child is not None else None for key, child in original._modules.items()
        }
        for key, value in original.__dict__.items():
            if key not in ("_parameters", "_buffers", "_modules"):
                clone.__dict__[key] = _copied(value, copies, tensors, _DEPTH)
    return copies.get(id(module), module)


def _copied(value: Any, copies: dict[int, Any], tensors: dict[int, torch.Tensor], depth: int) -> Any:
    """``value`` with references to the module's parts replaced by the copy's, and containers
    (hook tables, lists of layers) new, so that the copy's own changes stay in the copy."""
    if isinstance(value, torch.Tensor):
        return tensors.get(id(value), value)
    if isinstance(value, torch.nn.Module):
        return copies.get(id(value), value)
    if depth == 0 or not isinstance(value, (tuple, list, dict, set)):
        return value
    if isinstance(value, tuple):
        items = [_copied(item, copies, tensors, depth - 1) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    new = copy.copy(value)  # the container's own class (an OrderedDict of hooks stays one)
    if isinstance(new, dict):
        for key in list(new):
            new[key] = _copied(new[key], copies, tensors, depth - 1)
    elif isinstance(new, list):
        new[:] = [_copied(item, copies, tensors, depth - 1) for item in new]
    return new


@contextlib.contextmanager
def in_export_mode(model: Any, training: bool | None) -> Iterator[Any]:
    """``model`` as export runs it: for an ``nn.Module``, a structural copy in the training mode
    asked for (``None`` keeps the module's own flags), set with the copy's own ``train()`` (a
    module may override it); other models as they are.

    Two cases switch flags the user can see, for the duration only: a ScriptModule (it cannot
    be copied; its flags are read when it is lowered) and the ScriptModules inside a copied
    module (shared with it). Their flags are restored afterwards, also on failure; exporting
    with ``training=TrainingMode.PRESERVE`` switches nothing.
    """
    if not isinstance(model, torch.nn.Module) or training is None:
        yield structural_copy(model) if isinstance(model, torch.nn.Module) else model
        return
    runs = model if isinstance(model, torch.jit.ScriptModule) else structural_copy(model)
    shared = [m for m in runs.modules() if isinstance(m, torch.jit.ScriptModule) and hasattr(m, "training")]
    flags = [(m, m.training) for m in shared]
    if hasattr(runs, "training"):  # frozen script modules have no training flag
        runs.train(training)
    try:
        yield runs
    finally:
        for m, flag in flags:
            m.training = flag
