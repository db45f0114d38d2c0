"""Module attribute writes: a scripted forward that assigns ``self.x = ...`` becomes a pure graph.

TorchScript records ``self.count += 1`` or ``self.hidden = out`` as ``prim::SetAttr`` on the
module value, which graph lowering rejects ("the only valid use of a module is looking up an
attribute"). :func:`resolve_attribute_writes` runs on an inlined forward graph: walking it in
order (sub-blocks included), each read (``prim::GetAttr``) of a written attribute becomes the
attribute's current value, which starts as the module's value at export time (a tensor stays
an attribute read, so lowering makes it a weight input; other values become constants) and is
replaced by each write. A write inside a ``prim::If`` branch makes the attribute an extra
output of the If; a write inside a ``prim::Loop`` body makes it a loop-carried value. The
writes are then deleted. The exported model computes the outputs of one call from the
module's state at export time; the state it would leave behind is not an output.

Objects of TorchScript classes the forward creates (``prim::CreateObject``: torchvision's
``ImageList(tensors, image_sizes)`` in its detection models) are resolved the same way: each
object is a root like ``self``, its attributes start uninitialized where it is created, its
constructor's writes (inlined) set them and its reads become the values written, so the object
itself disappears from the graph.

Writes to other objects that are not modules reached from ``self`` (the ``torch.no_grad()``
object of a ``with`` block, objects of classes the pass cannot resolve) are left alone: the
emitter holds such objects at export time (prim::CreateObject in script_dicts.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from exporter.errors import ExporterError
from exporter.ts_graph import source_location

__all__ = ["has_attribute_writes", "resolve_attribute_writes"]

_Path = tuple[str, ...]

# the root of a created object's attribute paths (no attribute name starts with "<")
_OBJECT = "<object>"


@dataclasses.dataclass(frozen=True)
class _Objects:
    """The graph, and each created object's root -> the attribute paths written on it."""

    graph: torch._C.Graph
    attributes: dict[_Path, list[_Path]]
    # values that hold an object at export time (a module attribute's object): never None
    not_none: set[int] = dataclasses.field(default_factory=set)


def has_attribute_writes(graph: torch._C.Graph) -> bool:
    """Whether ``graph`` (inlined) assigns a module attribute anywhere, sub-blocks included."""
    return bool(graph.findAllNodes("prim::SetAttr", True))


def resolve_attribute_writes(graph: torch._C.Graph, module: torch._C.ScriptModule) -> bool:
    """Replace reads and writes of written attributes of ``module`` (whose forward ``graph``
    is, inlined) by values; return whether there were any writes."""
    writes = graph.findAllNodes("prim::SetAttr", True)
    if not writes:
        return False
    self_value = next(iter(graph.inputs()))
    paths: dict[int, _Path] = {self_value.unique(): ()}
    for index, node in enumerate(graph.findAllNodes("prim::CreateObject", True)):
        if _only_attributes_used(node.output()):
            paths[node.output().unique()] = (f"{_OBJECT}{index}",)
    types: dict[_Path, torch._C.JitType] = {}
    _collect_paths(graph.block(), paths, types)
    writes = [node for node in writes if not _on_object(node, paths)]
    if not writes:
        return False
    written: list[_Path] = []
    for node in writes:
        path = _attribute_path(node, paths)
        if path not in written:
            written.append(path)
        types.setdefault(path, node.inputsAt(1).type())
    module_paths = [p for p in written if not p[0].startswith(_OBJECT)]
    not_none: set[int] = set()
    env = _initial_values(graph, module, self_value, module_paths, types, not_none)
    roots = {p[:1] for p in written} - {()}
    objects = _Objects(graph, {root: [p for p in written if p[:1] == root] for root in roots}, not_none)
    _resolve_block(graph.block(), env, paths, types, objects)
    torch._C._jit_pass_dce(graph)
    return True


def _only_attributes_used(obj: torch._C.Value) -> bool:
    """Whether an object made in forward is only read and written through its attributes:
    then it is resolved here like ``self``. Objects that travel as values (into lists, through
    loops, out of branches: a beam search's hypotheses) stay objects the emitter holds at
    export time (script_object.ScriptObject)."""
    for use in obj.uses():
        kind = use.user.kind()
        if kind in ("prim::GetAttr", "prim::SetAttr") and use.offset == 0:
            continue
        if kind in ("prim::TupleConstruct", "prim::TupleUnpack", "prim::TupleIndex") and all(
            _only_attributes_used(out) or not isinstance(out.type(), (torch._C.ClassType, torch._C.TupleType))
            for out in use.user.outputs()
        ):
            continue  # returned from an inlined method with other results, then unpacked
        return False
    return True


def _on_object(node: torch._C.Node, paths: dict[int, _Path]) -> bool:
    """Whether a SetAttr writes an object that is not a module: modules cannot be made in
    forward, so every module value is reached from ``self`` through GetAttr (``paths``)."""
    return node.inputsAt(0).unique() not in paths


def _attribute_path(node: torch._C.Node, paths: dict[int, _Path]) -> _Path:
    owner = node.inputsAt(0).unique()
    if owner not in paths:
        raise ExporterError(
            f"{node.kind()}[name={node.s('name')}] at {source_location(node)}: writes an attribute of a module "
            "value that is not an attribute of self, which cannot be resolved at export time"
        )
    return (*paths[owner], node.s("name"))


def _collect_paths(block: torch._C.Block, paths: dict[int, _Path], types: dict[_Path, torch._C.JitType]) -> None:
    """The attribute path of each GetAttr output reached from ``self``, and each path's type."""
    for node in block.nodes():
        if node.kind() == "prim::GetAttr" and node.inputsAt(0).unique() in paths:
            path = (*paths[node.inputsAt(0).unique()], node.s("name"))
            paths[node.output().unique()] = path
            types.setdefault(path, node.output().type())
        for sub in node.blocks():
            _collect_paths(sub, paths, types)


def _module_value(module: torch._C.ScriptModule, path: _Path) -> Any:
    value: Any = module
    for name in path:
        value = value.getattr(name)
    return value


def _initial_values(
    graph: torch._C.Graph,
    module: torch._C.ScriptModule,
    self_value: torch._C.Value,
    written: list[_Path],
    types: dict[_Path, torch._C.JitType],
    not_none: set[int],
) -> dict[_Path, torch._C.Value]:
    """Each written attribute's value at export time, computed at the top of the graph: a
        tensor as a fresh GetAttr chain (a weight input after lowering), likewise an object (a
        scripted forward usually replaces it before reading it: torchvision's MultiScaleRoIAlign
        sets ``self.map_levels`` when it is None), anything else a constant. Object values are
    added to ``not_none``, and their attributes the graph reads become constants."""
    first = next(iter(graph.nodes()), graph.return_node())
    env: dict[_Path, torch._C.Value] = {}
    for path in written:
        value = _module_value(module, path)
        if not isinstance(value, torch.Tensor) and _script_constant(value):
            constant = graph.insertConstant(value)
            constant.node().moveBefore(first)
            if not (value is not None and isinstance(types[path], torch._C.OptionalType)):
                constant.setType(types[path])  # (a value in an Optional keeps its own type)
            env[path] = constant
        else:  # a tensor, or an object of a TorchScript class: read as it is
            owner = self_value
            for depth in range(1, len(path) + 1):
                node = graph.create("prim::GetAttr", [owner], 1)
                node.s_("name", path[depth - 1])
                node.output().setType(types[path[:depth]])
                node.insertBefore(first)
                owner = node.output()
            env[path] = owner
            if not isinstance(value, torch.Tensor):
                not_none.add(owner.unique())
                _object_constants(graph, first, value, path, types, env)
    return env


def _object_constants(
    graph: torch._C.Graph,
    first: torch._C.Node,
    value: Any,
    path: _Path,
    types: dict[_Path, torch._C.JitType],
    env: dict[_Path, torch._C.Value],
) -> None:
    """The attributes of an object held in a written module attribute, read in the graph
    (``self.map_levels.k_min``), as constants of their export-time values: a forward that
    only replaces the object when it is missing (a lazily built cache) reads these."""
    for sub in [p for p in types if len(p) == len(path) + 1 and p[: len(path)] == path]:
        name = sub[-1]
        if isinstance(value, torch._C.ScriptObject):
            attribute = value.getattr(name) if value.hasattr(name) else None
        else:
            attribute = getattr(value, name, None)
        if attribute is None or isinstance(attribute, torch.Tensor) or not _script_constant(attribute):
            continue
        constant = graph.insertConstant(attribute)
        constant.node().moveBefore(first)
        if not isinstance(types[sub], torch._C.OptionalType):
            constant.setType(types[sub])
        env[sub] = constant


def _script_constant(value: Any) -> bool:
    """Whether TorchScript can hold ``value`` as a constant (numbers, strings, None, devices,
    dtypes and tuples/lists of them, tensors inside lists); not objects of TorchScript classes."""
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, torch.Tensor) or _script_constant(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, torch.device, torch.dtype))


def _resolve_block(
    block: torch._C.Block,
    env: dict[_Path, torch._C.Value],
    paths: dict[int, _Path],
    types: dict[_Path, torch._C.JitType],
    objects: _Objects,
) -> None:
    """Walk ``block`` in order, updating ``env`` (path -> current value) in place; ``objects``
    maps each created object's root to its written attribute paths."""
    for node in list(block.nodes()):
        kind = node.kind()
        if kind == "prim::CreateObject":
            # objects used as values (``with torch.no_grad()``'s, entered and exited) have no path
            for path in objects.attributes.get(paths.get(node.output().unique(), ()), []):
                env[path] = _uninitialized(objects.graph, node, types[path])
        elif kind == "prim::GetAttr" and paths.get(node.output().unique()) in env:
            node.output().replaceAllUsesWith(env[paths[node.output().unique()]])
            node.destroy()
        elif kind == "prim::SetAttr" and not _on_object(node, paths):
            env[_attribute_path(node, paths)] = node.inputsAt(1)
            node.destroy()
        elif kind in ("aten::__is__", "aten::__isnot__") and _decided_is(node, objects) is not None:
            with objects.graph.insert_point_guard(node):
                decided = objects.graph.insertConstant(_decided_is(node, objects))
            node.output().replaceAllUsesWith(decided)
            node.destroy()
        elif kind == "prim::If" and node.inputsAt(0).node().kind() == "prim::Constant":
            # decided at export time (a cache already filled): only the branch taken remains
            branch = list(node.blocks())[0 if node.inputsAt(0).toIValue() else 1]
            _resolve_block(branch, env, paths, types, objects)
            _inline_branch(node, branch)
        elif kind == "prim::If":
            _resolve_if(node, env, paths, types, objects)
        elif kind == "prim::Loop":
            _resolve_loop(node, env, paths, types, objects)
        else:
            for sub in node.blocks():
                if _written_in(sub, paths):
                    raise ExporterError(
                        f"{kind} at {source_location(node)}: a module attribute is written inside its block, "
                        "which only if/else and loops support"
                    )
                _resolve_block(sub, dict(env), paths, types, objects)


def _decided_is(node: torch._C.Node, objects: _Objects) -> bool | None:
    """``a is None`` / ``a is not None`` when the answer is known at export time: one side is
    None and the other cannot be (its type is not Optional, or it holds an object)."""
    a, b = node.inputsAt(0), node.inputsAt(1)
    if not _is_none(a):
        a, b = b, a
    if not _is_none(a):
        return None
    if _is_none(b):
        result = True
    elif (
        b.unique() in objects.not_none
        or not isinstance(b.type(), (torch._C.OptionalType, torch._C.NoneType))
        or (b.node().kind() == "prim::Constant" and b.node().hasAttributes())  # None has no value
    ):
        result = False
    else:
        return None
    return result if node.kind() == "aten::__is__" else not result


def _is_none(value: torch._C.Value) -> bool:
    return isinstance(value.type(), torch._C.NoneType)


def _inline_branch(node: torch._C.Node, branch: torch._C.Block) -> None:
    """Replace the If ``node`` by the nodes of its ``branch`` (already resolved)."""
    for inner in list(branch.nodes()):
        inner.moveBefore(node)
    for output, value in zip(list(node.outputs()), list(branch.outputs())):
        output.replaceAllUsesWith(value)
    node.destroy()


def _uninitialized(graph: torch._C.Graph, after: torch._C.Node, jit_type: torch._C.JitType) -> torch._C.Value:
    """An object attribute's value before its constructor sets it (never read)."""
    node = graph.create("prim::Uninitialized", [], 1)
    node.output().setType(jit_type)
    node.insertAfter(after)
    return node.output()


def _written_in(block: torch._C.Block, paths: dict[int, _Path]) -> list[_Path]:
    """The attribute paths SetAttr nodes in ``block`` (sub-blocks included) write, in order,
    leaving out those of objects created inside ``block`` (they do not outlive it)."""
    # objects used as values (``with torch.no_grad()``'s) have no path: their writes are skipped below
    created = (paths.get(n.output().unique()) for n in block.findAllNodes("prim::CreateObject", True))
    local = {path for path in created if path is not None}
    written: list[_Path] = []
    for node in block.findAllNodes("prim::SetAttr", True):
        if _on_object(node, paths):
            continue
        path = _attribute_path(node, paths)
        if path not in written and path[:1] not in local:
            written.append(path)
    return written


def _resolve_if(
    node: torch._C.Node,
    env: dict[_Path, torch._C.Value],
    paths: dict[int, _Path],
    types: dict[_Path, torch._C.JitType],
    objects: _Objects,
) -> None:
    """Attributes either branch writes become extra outputs of the If."""
    written = [p for sub in node.blocks() for p in _written_in(sub, paths)]
    written = list(dict.fromkeys(written))
    branch_envs = []
    for sub in node.blocks():
        branch_env = dict(env)
        _resolve_block(sub, branch_env, paths, types, objects)
        branch_envs.append(branch_env)
    for path in written:
        for sub, branch_env in zip(node.blocks(), branch_envs):
            sub.registerOutput(branch_env[path])
        output = node.addOutput()
        output.setType(types[path])
        env[path] = output


def _resolve_loop(
    node: torch._C.Node,
    env: dict[_Path, torch._C.Value],
    paths: dict[int, _Path],
    types: dict[_Path, torch._C.JitType],
    objects: _Objects,
) -> None:
    """Attributes the body writes become loop-carried values (inputs, body inputs and outputs,
    and outputs of the Loop, appended after its own carried values)."""
    (body,) = list(node.blocks())
    written = _written_in(body, paths)
    body_env = dict(env)
    for path in written:
        node.addInput(env[path])
        carried = body.addInputToBlock()
        carried.setType(types[path])
        body_env[path] = carried
    _resolve_block(body, body_env, paths, types, objects)
    for path in written:
        body.registerOutput(body_env[path])
        output = node.addOutput()
        output.setType(types[path])
        env[path] = output
