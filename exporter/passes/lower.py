"""Lowering: the graph rewrites that turn what TorchScript recorded into one flat graph of
operator calls that the later passes and the emitter understand.

- :func:`lower`: inline calls and drop dead code.
- :func:`lower_script_module`: a ScriptModule's forward as a graph whose parameters are inputs.
- :func:`substitute_interpolate`: scripted ``F.interpolate`` calls become one node.
- :func:`fix_index_dtypes`: the index outputs legacy shape propagation mistypes.

Capture calls the ones that must run before inlining or after shape propagation; the rest
run in :func:`exporter.passes.run_all`.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["lower", "lower_script_module", "substitute_interpolate", "fix_index_dtypes"]


def lower(graph: torch._C.Graph) -> None:
    """Inline calls and drop dead code, so later passes see one flat graph."""
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_dce(graph)


def lower_script_module(module: torch.jit.ScriptModule) -> tuple[torch._C.Graph, list[Any]]:
    """``module``'s forward with its parameters (and packed weights) as trailing graph inputs.

    Non-tensor attributes (bools, ints) cannot become graph inputs; when lowering fails on
    one ("Unknown type"), the module is frozen first, which inlines them as constants while
    keeping the parameters as attributes. Interpolate calls are substituted before either
    lowering inlines them; attribute writes in forward are resolved into values
    (:mod:`exporter.passes.module_attributes`).
    """
    try:
        forward_graph = module.graph.copy()
        substitute_interpolate(forward_graph)
        _resolve_writes(forward_graph, module._c)
        return torch._C._jit_pass_lower_graph(forward_graph, module._c)
    except RuntimeError as error:
        if "Unknown type" not in str(error):
            raise
    frozen = torch._C._freeze_module(module._c, preserveParameters=True)
    frozen_graph = frozen._get_method("forward").graph
    substitute_interpolate(frozen_graph)
    _resolve_writes(frozen_graph, frozen)
    _inline_plain_attributes(frozen_graph, frozen)
    return torch._C._jit_pass_lower_graph(frozen_graph, frozen)


def _inline_plain_attributes(graph: torch._C.Graph, module: torch._C.ScriptModule) -> None:
    """Attributes that are not tensors can stay attributes of a frozen module (a parameter set
    to None, ``Conv2d(bias=False)``; ``training`` of a module exported in training mode), and
    cannot become graph inputs ("Unknown type NoneType"/"bool"): their reads become constants
    of their values at export time (writes in forward were resolved before). The same holds for
    the attributes of objects of TorchScript classes a module holds (torchvision's
    ``self.box_coder.weights``, a tuple of floats): the reads become constants, and the object
    then has no use left."""
    for node in list(graph.findAllNodes("prim::GetAttr", True)):
        owner = _attribute_owner(node.inputsAt(0), graph, module)
        value = _attribute(owner, node.s("name"))
        if value is _MISSING or not _constant_kind(value):
            continue
        with graph.insert_point_guard(node):
            constant = graph.insertConstant(value)
        node.output().replaceAllUsesWith(constant)
        node.destroy()
    torch._C._jit_pass_dce(graph)


_MISSING = object()


def _attribute(owner: Any, name: str) -> Any:
    """``owner.name`` of a module or a TorchScript object (as torch hands it to Python)."""
    if owner is None:
        return _MISSING
    if isinstance(owner, torch._C.ScriptObject):
        return owner.getattr(name) if owner.hasattr(name) else _MISSING
    return getattr(owner, name, _MISSING)


def _constant_kind(value: Any) -> bool:
    """Whether a graph constant can hold ``value``: None, numbers, strings, tuples of them."""
    if isinstance(value, tuple):
        return all(_constant_kind(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _attribute_owner(value: torch._C.Value, graph: torch._C.Graph, module: torch._C.ScriptModule) -> Any:
    """The module or object ``value`` is, following GetAttr chains from the graph's ``self``."""
    if value is next(graph.inputs()):
        return module
    node = value.node()
    if node.kind() == "prim::unchecked_cast":  # Optional[T] -> T after an ``is None`` check
        return _attribute_owner(node.inputsAt(0), graph, module)
    if node.kind() != "prim::GetAttr":
        return None
    child = _attribute(_attribute_owner(node.inputsAt(0), graph, module), node.s("name"))
    if child is _MISSING or isinstance(child, torch.Tensor) or _constant_kind(child) or isinstance(child, list):
        return None
    return child


def _resolve_writes(graph: torch._C.Graph, module: torch._C.ScriptModule) -> None:
    """Module attribute writes (``self.x = ...``) become plain values, on the inlined graph;
    a graph that writes none is left as it was."""
    from exporter.passes.module_attributes import has_attribute_writes, resolve_attribute_writes

    inlined = graph.copy()
    torch._C._jit_pass_inline(inlined)
    if not has_attribute_writes(inlined):
        return
    torch._C._jit_pass_inline(graph)
    resolve_attribute_writes(graph, module)


def substitute_interpolate(graph: torch._C.Graph) -> None:
    """Scripted F.interpolate is a Python function full of control flow on its arguments
    (antialias kernels, mode checks); each direct call becomes one aten::__interpolate node
    with the same arguments before inlining, so it exports as Resize/Upsample. Calls inside
    submodules' methods are still inlined as Python code."""
    for node in list(graph.findAllNodes("prim::CallFunction")):
        callee = node.inputsAt(0).node()
        if callee.kind() != "prim::Constant" or not callee.hasAttribute("name") or callee.s("name") != "interpolate":
            continue
        replacement = graph.create("aten::__interpolate", list(node.inputs())[1:], 1)
        replacement.insertBefore(node)
        replacement.output().setType(node.output().type())
        node.output().replaceAllUsesWith(replacement.output())
        node.destroy()


# torch's legacy shape propagation types the index outputs of these ops as Float.
_INDEX_OUTPUTS = frozenset({"aten::argmax", "aten::argmin"})


def fix_index_dtypes(graph: torch._C.Graph) -> None:
    """Retype argmax/argmin outputs as int64 after legacy shape propagation called them Float."""
    for kind in _INDEX_OUTPUTS:
        for node in graph.findAllNodes(kind, True):  # searched in C++, sub-blocks included
            out = node.output()
            if isinstance(out.type(), torch._C.TensorType):
                out.setType(out.type().with_dtype(torch.int64))
