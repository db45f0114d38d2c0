"""The rewrites capture needs to produce a graph at all, before any pass can see one.

A scripted model's graph is made of calls (``prim::CallMethod``, ``prim::CallFunction``) on
module objects and futures of forked tasks; lowering a ScriptModule (weights as graph inputs)
refuses module attribute writes and calls it cannot resolve. These rewrites turn it into one
flat graph of operator calls, so they run inside capture, in the order lowering needs:

- :func:`substitute_interpolate`: scripted ``F.interpolate`` calls become one node, before
  inlining would expand its Python body.
- :func:`lower_script_module`: a ScriptModule's forward as a graph whose parameters are inputs
  (attribute writes resolved first: :mod:`exporter.capture.module_attributes`).
- :func:`inline_calls`: inline calls, recording the user's call sites on the nodes inlined;
  :func:`inline_everything` inlines without recording.
- :func:`inline_forks`: ``torch.jit.fork`` tasks run in place, their futures are their results.

Every rewrite after these (dead code, in-place ops, scalar types) is a pass, run in the order
of :data:`exporter.passes.PIPELINE`.
"""

from __future__ import annotations

from typing import Any

import torch

from exporter.capture.module_attributes import has_attribute_writes, resolve_attribute_writes
from exporter.ts_graph import CALL_SITES, all_nodes, has_blocks, is_script_object, schema_of, source_location

__all__ = [
    "inline_calls",
    "inline_everything",
    "inline_forks",
    "lower_script_module",
    "substitute_interpolate",
]


_CALLS = ("prim::CallFunction", "prim::CallMethod")
# The value of the prim::Constant marking the end of a call's inlined nodes (a start marker's
# value is the call site); no source text can produce it.
_CALL_END = "\x00exporter.call_end"
_CALL_START = "\x00exporter.call:"
# TorchScript qualified names of code defined in torch itself (torch.nn.functional, torch.nn modules)
_LIBRARY_PREFIX = "__torch__.torch."


# Bound on rounds of inlining (TorchScript has no recursion, so call chains are finite).
_MAX_CALL_DEPTH = 1000


def inline_everything(graph: torch._C.Graph) -> None:
    """``torch._C._jit_pass_inline`` until no call is left.

    torch inlines a callee from its "optimized graph", which has its own calls inlined only if
    the graph executor optimized when that graph was first built (it is cached per function):
    after a model ran, or was exported, under ``torch.jit.optimized_execution(False)``, one
    inlining pass leaves the calls nested in callees (torch's lowering then fails with "the
    only valid use of a module is looking up an attribute"). Each further pass inlines one
    more level of them.
    """
    for _ in range(_MAX_CALL_DEPTH):
        if not any(graph.findNode(kind, True) is not None for kind in _CALLS):
            return
        torch._C._jit_pass_inline(graph)


def inline_calls(graph: torch._C.Graph, module: torch._C.ScriptModule | None = None) -> None:
    """Inline every call, as ``torch._C._jit_pass_inline`` does, and record on each node inlined
    the call sites it was reached through (:data:`exporter.ts_graph.CALL_SITES`).

    After inlining, a node of ``F.pad`` carries functional.py's source range: errors would name
    torch's line instead of the user's ``F.pad(...)`` call. TorchScript keeps the inlined call
    stack in C++ only, so the call sites are recorded here: every call is bracketed by two
    marker constants before torch inlines it (its nodes land between them), and the nodes
    between markers get the call site. Calls of the user's own scripted functions and of
    submodule methods (``module`` resolves ``self.sub``) are inlined here first, from a copy
    of the callee's graph treated the same way, so a chain through nested user code keeps
    every user frame; torch's functions are inlined by torch.
    """
    if not any(graph.findNode(kind, True) is not None for kind in _CALLS):
        return
    _bracket_calls(graph, module)
    inline_everything(graph)
    _record_call_sites(graph, [])


def _bracket_calls(graph: torch._C.Graph, module: torch._C.ScriptModule | None) -> None:
    """Bracket every call with markers, and inline those :func:`_callee` finds (their copies
    bracketed the same way first); the markers are read once everything is inlined."""
    for call in [n for kind in _CALLS for n in graph.findAllNodes(kind, True)]:
        start = _marker(graph, _CALL_START + source_location(call) + "\t" + _callee_name(call))
        start.insertBefore(call)
        _marker(graph, _CALL_END).insertAfter(call)
        callee = _callee(call, graph, module)
        if callee is None:
            continue
        callee_graph, callee_module = callee
        _bracket_calls(callee_graph, callee_module)
        inputs = list(call.inputs())[1:] if call.kind() == "prim::CallFunction" else list(call.inputs())
        with graph.insert_point_guard(call):
            outputs = graph.insertGraph(callee_graph, inputs)
        for old, new in zip(list(call.outputs()), outputs):
            old.replaceAllUsesWith(new)
        call.destroy()


def _marker(graph: torch._C.Graph, text: str) -> torch._C.Node:
    node = graph.create("prim::Constant")
    node.s_("value", text)
    node.output().setType(torch._C.StringType.get())
    return node


def _callee_name(call: torch._C.Node) -> str:
    if call.kind() == "prim::CallMethod":
        return call.s("name")
    function = call.inputsAt(0).node()
    return function.s("name") if function.hasAttribute("name") else "?"


def _callee(
    call: torch._C.Node, graph: torch._C.Graph, module: torch._C.ScriptModule | None
) -> tuple[torch._C.Graph, torch._C.ScriptModule | None] | None:
    """A copy of the graph the call runs (and the module it is a method of), for the user's
    scripted functions and for methods of submodules (``module`` resolves ``self.sub``),
    torch's included: a torch container (``nn.Sequential``) calls the user's modules. None for
    torch's functions (``F.pad``: nothing of the user's below) and callees not found from
    Python; torch inlines those."""
    if call.kind() == "prim::CallFunction":
        name = str(call.inputsAt(0).type())
        if name.startswith(_LIBRARY_PREFIX):
            return None
        function = torch.jit._state._python_cu.find_function(name)
        return (function.graph.copy(), None) if function is not None else None
    if module is None or not isinstance(call.inputsAt(0).type(), torch._C.ClassType):
        return None
    owner = _attribute_owner(call.inputsAt(0), graph, module)
    if owner is None:
        return None
    try:
        method = owner._get_method(call.s("name"))
    except RuntimeError:
        return None
    return method.graph.copy(), owner


def _record_call_sites(block: torch._C.Graph | torch._C.Block, sites: list[str]) -> None:
    """Give the nodes between markers the call sites (outermost first) and drop the markers."""
    for node in list(block.nodes()):
        kind = node.kind()
        if kind == "prim::Constant":
            if node.hasAttribute("value") and node.kindOf("value") == "s":
                text = node.s("value")
                if text.startswith(_CALL_START):
                    sites.append(text[len(_CALL_START) :])
                    node.destroy()
                elif text == _CALL_END:
                    sites.pop()
                    node.destroy()
            continue
        if sites:
            node.s_(CALL_SITES, "\n".join(sites))
        if has_blocks(node):
            for sub in node.blocks():
                _record_call_sites(sub, sites)


def lower_script_module(module: torch.jit.ScriptModule) -> tuple[torch._C.Graph, list[Any]]:
    """``module``'s forward with its parameters (and packed weights) as trailing graph inputs.

    Non-tensor attributes (bools, ints) cannot become graph inputs; when lowering fails on
    one ("Unknown type"), the module is frozen first, which inlines them as constants while
    keeping the parameters as attributes. Interpolate calls are substituted before either
    lowering inlines them; attribute writes in forward are resolved into values
    (:mod:`exporter.capture.module_attributes`). Both lowerings inline calls in torch, without
    call sites: :class:`exporter.capture.call_sites.CallSites` works them out when an error needs them.
    """
    try:
        forward_graph = module.graph.copy()
        substitute_interpolate(forward_graph)
        _resolve_writes(forward_graph, module._c)
        inline_everything(forward_graph)
        return torch._C._jit_pass_lower_graph(forward_graph, module._c)
    except RuntimeError as error:
        if "Unknown type" not in str(error):
            raise
    frozen = torch._C._freeze_module(module._c, preserveParameters=True)
    frozen_graph = frozen._get_method("forward").graph
    substitute_interpolate(frozen_graph)
    _resolve_writes(frozen_graph, frozen)
    _inline_plain_attributes(frozen_graph, frozen)
    inline_everything(frozen_graph)
    return torch._C._jit_pass_lower_graph(frozen_graph, frozen)


def _inline_plain_attributes(graph: torch._C.Graph, module: torch._C.ScriptModule) -> None:
    """Attributes that are not tensors can stay attributes of a frozen module (a parameter set
    to None, ``Conv2d(bias=False)``; ``training`` of a module exported in training mode), and
    cannot become graph inputs ("Unknown type NoneType"/"bool"): their reads become constants
    of their values at export time (writes in forward were resolved before). The same holds for
    the attributes of objects of TorchScript classes a module holds (torchvision's
    ``self.box_coder.weights``, a tuple of floats): the reads become constants, and the object
    then has no use left. A container of such objects that forward only reads (a layer's
    ``Dict[int, Recipe]`` of parsed recipes, keyed by rank: einops caches them so) becomes one
    constant holding the module's objects; the specialization pass reads what forward looks
    up in it (exporter.passes.specialize)."""
    for node in list(graph.findAllNodes("prim::GetAttr", True)):
        owner = _attribute_owner(node.inputsAt(0), graph, module)
        value = _attribute(owner, node.s("name"))
        if value is _MISSING:
            continue
        if _plain_constant(value):
            with graph.insert_point_guard(node):
                constant = graph.insertConstant(value)
        elif _holds_objects(value) and _only_read(node.output()):
            constant = _object_constant(graph, node, value)
        else:
            continue
        node.output().replaceAllUsesWith(constant)
        node.destroy()
    torch._C._jit_pass_dce(graph)


def _holds_objects(value: Any) -> bool:
    """Whether ``value`` is a dict, list or tuple holding objects of TorchScript classes (and
    otherwise plain constants)."""
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return False
    return any(is_script_object(item) or _holds_objects(item) for item in items) and all(
        is_script_object(item) or _plain_constant(item) or _holds_objects(item) for item in items
    )


# prim ops that read a container without keeping or changing it
_CONTAINER_READS = frozenset({"prim::ListUnpack", "prim::TupleUnpack", "prim::TupleIndex"})


def _only_read(value: torch._C.Value) -> bool:
    """Whether every use of ``value`` reads it (by its schema: no argument it writes), so a
    constant can stand for it."""
    for use in value.uses():
        if use.user.kind() in _CONTAINER_READS:
            continue
        schema = schema_of(use.user)
        if schema is None or use.offset >= len(schema.arguments):
            return False
        alias = schema.arguments[use.offset].alias_info
        if alias is not None and alias.is_write:
            return False
    return True


def _object_constant(graph: torch._C.Graph, node: torch._C.Node, value: Any) -> torch._C.Value:
    """A constant holding ``value`` (the module's own objects, read and never written)."""
    constant = graph.create("prim::Constant")
    constant.ival_("value", value)
    constant.output().setType(node.output().type())
    constant.insertBefore(node)
    return constant.output()


_MISSING = object()


def _attribute(owner: Any, name: str) -> Any:
    """``owner.name`` of a module or a TorchScript object (as torch hands it to Python)."""
    if owner is None:
        return _MISSING
    if isinstance(owner, torch._C.ScriptObject):
        return owner.getattr(name) if owner.hasattr(name) else _MISSING
    return getattr(owner, name, _MISSING)


def _plain_constant(value: Any) -> bool:
    """Whether ``value`` is None, a number, a string or a tuple of them: the attribute values
    inlined here as graph constants (module_attributes has its own, wider rule for written ones)."""
    if isinstance(value, tuple):
        return all(_plain_constant(v) for v in value)
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
    if child is _MISSING or isinstance(child, torch.Tensor) or _plain_constant(child) or isinstance(child, list):
        return None
    return child


def _resolve_writes(graph: torch._C.Graph, module: torch._C.ScriptModule) -> None:
    """Module attribute writes (``self.x = ...``) become plain values, on the inlined graph;
    a graph that writes none is left as it was."""
    inlined = graph.copy()
    inline_everything(inlined)
    if not has_attribute_writes(inlined):
        return
    inline_everything(graph)
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
        replacement.copyMetadata(node)  # the user's line, for errors
        replacement.insertBefore(node)
        replacement.output().setType(node.output().type())
        node.output().replaceAllUsesWith(replacement.output())
        node.destroy()


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
        inline_everything(subgraph)
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
