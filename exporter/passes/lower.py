"""Lowering: the graph rewrites that turn what TorchScript recorded into one flat graph of
operator calls that the later passes and the emitter understand.

- :func:`lower`: inline calls and drop dead code.
- :func:`lower_script_module`: a ScriptModule's forward as a graph whose parameters are inputs.
- :func:`substitute_interpolate`: scripted ``F.interpolate`` calls become one node.
- :func:`fix_index_dtypes`: the index outputs legacy shape propagation mistypes.
- :func:`inline_forks`: ``torch.jit.fork`` tasks run in place, their futures are their results.

Capture calls the ones that must run before inlining or after shape propagation; the rest
run in :func:`exporter.passes.run_all`.
"""

from __future__ import annotations

from typing import Any

import torch

from exporter.ts_graph import all_nodes

__all__ = ["lower", "lower_script_module", "substitute_interpolate", "fix_index_dtypes", "inline_forks"]


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
    of their values at export time (writes in forward were resolved before)."""
    for node in list(graph.findAllNodes("prim::GetAttr", True)):
        owner = _attribute_owner(node.inputsAt(0), graph, module)
        name = node.s("name")
        if owner is None or not owner.hasattr(name):
            continue
        value = owner.getattr(name)
        if value is not None and not isinstance(value, (bool, int, float, str)):
            continue
        with graph.insert_point_guard(node):
            constant = graph.insertConstant(value)
        node.output().replaceAllUsesWith(constant)
        node.destroy()


def _attribute_owner(
    value: torch._C.Value, graph: torch._C.Graph, module: torch._C.ScriptModule
) -> torch._C.ScriptModule | None:
    """The module ``value`` is, following GetAttr chains from the graph's ``self`` input."""
    if value is next(graph.inputs()):
        return module
    node = value.node()
    if node.kind() != "prim::GetAttr":
        return None
    owner = _attribute_owner(node.inputsAt(0), graph, module)
    if owner is None or not owner.hasattr(node.s("name")):
        return None
    child = owner.getattr(node.s("name"))
    return child if isinstance(child, torch._C.ScriptModule) else None


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


def inline_forks(graph: torch._C.Graph) -> None:
    """``torch.jit.fork(f, *args)`` computes ``f(*args)`` (asynchronously, in TorchScript); an
    exported graph computes it in place. Each prim::fork's subgraph is inlined where the fork
    was and its future stands for the result itself, however it travels (a list of futures
    waited on in a loop): values typed ``Future[T]`` become ``T`` (lists of them ``List[T]``)
    and each aten::wait passes its input through. torch's own inline_fork_wait pass only pairs
    a fork with a wait that reads its output directly."""
    forks = graph.findAllNodes("prim::fork", True)
    if not forks:
        return
    for node in forks:
        subgraph = node.g("Subgraph").copy()
        torch._C._jit_pass_inline(subgraph)
        with graph.insert_point_guard(node):
            (result,) = graph.insertGraph(subgraph, list(node.inputs()))
        node.output().replaceAllUsesWith(result)
        node.destroy()
    for node in all_nodes([graph.block()]):
        values = [*node.outputs(), *(v for block in node.blocks() for v in block.inputs())]
        for value in values:
            value.setType(_without_future(value.type()))
    for node in graph.findAllNodes("aten::wait", True):
        node.output().replaceAllUsesWith(node.inputsAt(0))
        node.destroy()


def _without_future(ts_type: torch._C.JitType) -> torch._C.JitType:
    """``ts_type`` with every ``Future[T]`` in it replaced by ``T``."""
    if isinstance(ts_type, torch._C.FutureType):
        return _without_future(ts_type.getElementType())
    if isinstance(ts_type, torch._C.ListType):
        return torch._C.ListType(_without_future(ts_type.getElementType()))
    if isinstance(ts_type, torch._C.OptionalType):
        return torch._C.OptionalType(_without_future(ts_type.getElementType()))
    if isinstance(ts_type, torch._C.TupleType):
        return torch._C.TupleType([_without_future(t) for t in ts_type.elements()])
    return ts_type
