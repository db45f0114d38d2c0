"""``export_modules_as_functions``: the calls of chosen ``nn.Module`` classes as ONNX local
functions, in the form torch's exporter gives them (torch/onnx/_internal/torchscript_exporter/
utils.py: ``_setup_trace_module_map``, ``_get_module_attributes``; torch/csrc/jit/passes/onnx/
function_extraction.cpp).

``True`` exports every class (the model's own too: the main graph is then one call), a
collection of classes those. After cleanup (before equal weights are merged, as torch
deduplicates after extracting), the nodes of each call of such a module (:mod:`.calls`) are
replaced by one node calling a function:

- op type the class name, domain its module (``torch.typename`` split at the last dot:
  ``torch.nn.modules.linear.Linear`` is ``Linear`` of ``torch.nn.modules.linear``); domains are
  imported at version 1 unless ``custom_opsets`` says otherwise;
- one function per class and body (:mod:`.signature`); calls one body cannot compute are
  variants ``Block.1``, ``Block.2``, numbered per name as torch numbers them;
- the function takes the values the call reads from outside, weights last, and gives the values
  the rest of the graph reads; a call inside an exported call is a call node in its body, so
  functions call functions (the innermost are made first);
- attribute values of the body's nodes that differ between calls are function attributes
  ``inferred::<OpType>_<attribute>`` (``.1``, ``.2`` for repeats) the body refers to, each call
  giving its own value;
- the class's annotated attributes (PEP 526 annotations of the class and its bases, not
  ``nn.Module``'s) are attributes of every call, as torch converts them: ints, floats, strings,
  bools (as ints) and lists of those; other values are left out.

Where this differs from torch: tensor-valued annotated attributes (``Linear.weight``) are not
copied into attributes (torch writes every such weight again, inside the node: a model twice
its size; the weights are function inputs already); two calls wired differently are two
functions (torch makes one function of calls with the same node kinds, whose body then computes
the second wrongly); calls whose attribute names differ are variants (torch refuses the export).
Scripted models, and models holding scripted submodules, are refused: their graphs record no
module calls (torch refuses ScriptModules too, its hooks cannot be registered on them).
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

import onnx_ir as ir
import torch

from exporter.errors import ExporterError
from exporter.graph_context import scope_path
from exporter.module_functions.calls import (
    Call,
    Chain,
    node_chains,
    place_constants,
    subgraph_nodes,
    top_level_owners,
)
from exporter.module_functions.signature import CallGraph, describe, value_key
from exporter.ts_graph import module_call_scope

__all__ = [
    "FUNCTIONS_OPSET",
    "classes_to_export",
    "function_extraction",
    "annotated_attributes",
]

# Local functions need IR version 8, which comes with opset 15.
FUNCTIONS_OPSET = 15

ModuleClasses = bool | frozenset[type]


def classes_to_export(option: Any) -> ModuleClasses:
    """``export_modules_as_functions`` checked: a bool, or a collection of ``nn.Module`` classes
    (torch takes a set; any collection is taken here)."""
    if isinstance(option, bool):
        return option
    if isinstance(option, Collection) and not isinstance(option, (str, bytes, Mapping)):
        for item in option:
            if not isinstance(item, type) or not issubclass(item, torch.nn.Module):
                raise TypeError(
                    f"export_modules_as_functions takes True, False or a set of nn.Module classes; found {item!r} in it"
                )
        return frozenset(option)
    raise TypeError(f"export_modules_as_functions must be a bool or a set of nn.Module classes, got {option!r}")


def function_extraction(
    model: Any,
    modules: dict[str, torch.nn.Module] | None,
    classes: ModuleClasses,
    weight_names: Collection[str],
    custom_opsets: Mapping[str, int] | None,
) -> Callable[[ir.Model], None] | None:
    """The step that makes functions of the calls of ``classes`` in an emitted model of
    ``model`` (whose captured modules are ``modules``), or None when there is nothing to do (no
    classes, or a model that is a function: torch makes no functions there either)."""
    if not classes:
        return None
    if modules is None:
        if isinstance(model, torch.nn.Module):
            raise ExporterError(
                "export_modules_as_functions needs a model captured by tracing: a scripted model, or one "
                "holding scripted submodules, records no module calls in its graph (torch's exporter refuses "
                "ScriptModules too); export the nn.Module itself, with plain submodules"
            )
        return None
    names = frozenset(weight_names)
    return lambda onnx_model: _Extraction(onnx_model, modules, classes, names, custom_opsets or {}).run()


class _Extraction:
    """Replaces the calls of ``classes`` in ``model`` by function calls (the module docstring)."""

    def __init__(
        self,
        model: ir.Model,
        modules: dict[str, torch.nn.Module],
        classes: ModuleClasses,
        weight_names: frozenset[str],
        custom_opsets: Mapping[str, int],
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.modules = modules
        self.classes = classes
        self.weight_names = weight_names
        self.custom_opsets = custom_opsets
        self.owners = top_level_owners(self.graph)
        self.variants: dict[str, int] = {}
        self.node_names: dict[str, int] = {}
        self.annotated: dict[int, dict[str, ir.Attr]] = {}
        # outputs of calls already replaced -> the call node's outputs that stand for them (the
        # calls described beside them still name the former)
        self.replaced: dict[ir.Value, ir.Value] = {}

    def owner(self, node: ir.Node) -> ir.Node:
        return self.owners.get(node, node)

    def is_weight(self, value: ir.Value) -> bool:
        return value.is_initializer() or (value.is_graph_input() and value.name in self.weight_names)

    def exported(self, call: Call) -> bool:
        module = self.modules.get(call[0])
        return module is not None and (self.classes is True or type(module) in self.classes)

    def run(self) -> None:
        self.chains = node_chains(self.graph, self.owners)
        place_constants(self.graph, self.owners)
        # each node's exported calls, outermost first (the others are transparent)
        self.exported_chains = {
            node: tuple(call for call in chain if self.exported(call)) for node, chain in self.chains.items()
        }
        heights = _heights(self.exported_chains.values())
        for height in sorted(set(heights.values())):
            members: dict[Call, list[ir.Node]] = {}
            for node in self.graph:
                for call in self.exported_chains[node]:
                    if heights[call] == height:
                        members.setdefault(call, []).append(node)
            graph_outputs = set(self.graph.outputs)
            groups: dict[Hashable, list[tuple[Call, CallGraph]]] = {}
            for call, nodes in members.items():
                described = describe(nodes, graph_outputs, self.owner, self.is_weight)
                if not described.outputs:
                    continue
                module = self.modules[call[0]]
                attributes = self._annotated_attributes(module)
                key = (type(module), tuple((name, a.type) for name, a in attributes.items()), described.structure)
                groups.setdefault(key, []).append((call, described))
            for key, group in groups.items():
                self._make_function(key[0], group)
        try:
            self.graph.sort()
        except ValueError as error:
            raise ExporterError(
                f"export_modules_as_functions: the module calls cannot be separated into functions ({error})"
            ) from error

    def _annotated_attributes(self, module: torch.nn.Module) -> dict[str, ir.Attr]:
        found = self.annotated.get(id(module))
        if found is None:
            found = annotated_attributes(module)
            self.annotated[id(module)] = found
        return found

    def _make_function(self, cls: type, group: list[tuple[Call, CallGraph]]) -> None:
        typename = torch.typename(cls)
        domain, _, name = typename.rpartition(".")
        domain = domain or "builtins"
        variant = self.variants.get(name)
        self.variants[name] = 0 if variant is None else variant + 1
        function_name = name if variant is None else f"{name}.{variant + 1}"
        _, reference = group[0]
        reference.inputs = [self.replaced.get(value, value) for value in reference.inputs]
        inferred = _inferred_attributes(reference, [described for _, described in group])
        annotated = self._annotated_attributes(self.modules[group[0][0][0]])
        declared = [ir.Attr(final, kind, None) for _, _, final, kind in inferred]
        declared += [ir.Attr(attribute_name, a.type, None) for attribute_name, a in annotated.items()]
        for call, described in group:
            values = [
                ir.Attr(final, kind, described.nodes[index].attributes[attribute].value)
                for index, attribute, final, kind in inferred
            ]
            values += [
                ir.Attr(a.name, a.type, a.value) for a in self._annotated_attributes(self.modules[call[0]]).values()
            ]
            self._replace_by_call(call, described, domain, function_name, values, keep=described is reference)
        body = ir.Graph(
            [ir.Value(name=value.name, type=value.type, shape=value.shape) for value in reference.inputs],
            reference.outputs,
            nodes=reference.nodes,
            name=function_name,
        )
        reference_nodes = set(reference.nodes)
        for value, formal in zip(reference.inputs, body.inputs):
            for user, index in list(value.uses()):
                if self.owner(user) in reference_nodes:
                    user.replace_input_with(index, formal)
        for index, attribute, final, kind in inferred:
            reference.nodes[index].attributes[attribute] = ir.RefAttr(attribute, final, kind)
        body.opset_imports.update(self._imports(body))
        function = ir.Function(domain, function_name, graph=body, attributes=declared)
        self.model.functions[function.identifier()] = function
        version = self.model.opset_imports.get(domain, self.custom_opsets.get(domain, 1))
        self.model.opset_imports[domain] = version
        self.graph.opset_imports[domain] = version

    def _replace_by_call(
        self,
        call: Call,
        described: CallGraph,
        domain: str,
        function_name: str,
        attributes: list[ir.Attr],
        *,
        keep: bool,
    ) -> None:
        """One node calling the function in place of ``described``'s nodes, which become the
        function's body (``keep``) or are dropped."""
        last = described.nodes[-1]
        chain = self.chains[last]
        inputs = [self.replaced.get(value, value) for value in described.inputs]
        scope = "/".join(module_call_scope(path, number) for path, number in chain[1 : chain.index(call) + 1])
        node = ir.Node(
            domain,
            function_name,
            inputs,
            attributes,
            num_outputs=len(described.outputs),
            name=self._node_name(f"{scope_path(scope)}/{function_name}"),
        )
        for new, old in zip(node.outputs, described.outputs):
            new.name, new.type, new.shape = old.name, old.type, old.shape
        self.graph.insert_after(last, node)
        members = set(described.nodes)
        for new, old in zip(node.outputs, described.outputs):
            self.replaced[old] = new
            for user, index in list(old.uses()):
                if self.owner(user) not in members:
                    user.replace_input_with(index, new)
            for position, output in enumerate(self.graph.outputs):
                if output is old:
                    self.graph.outputs[position] = new
        exported = self.exported_chains[last]
        self.exported_chains[node] = exported[: exported.index(call)]
        self.chains[node] = chain[: chain.index(call)]
        if not keep:
            for member in described.nodes:
                for inner in [member, *subgraph_nodes(member)]:
                    for index in range(len(inner.inputs)):
                        inner.replace_input_with(index, None)
        self.graph.remove(described.nodes)
        for member in described.nodes:
            self.exported_chains.pop(member, None)

    def _node_name(self, base: str) -> str:
        count = self.node_names.get(base, 0)
        self.node_names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def _imports(self, body: ir.Graph) -> dict[str, int]:
        imports = {"": self.model.opset_imports[""]}
        for node in ir.traversal.RecursiveGraphIterator(body):
            if node.domain not in imports and node.domain != "ai.onnx":
                imports[node.domain] = self.model.opset_imports.get(node.domain, self.custom_opsets.get(node.domain, 1))
        return imports


def _heights(chains: Collection[Chain]) -> dict[Call, int]:
    """How far each exported call is from its innermost exported descendant (0: none inside)."""
    children: dict[Call, set[Call]] = {}
    for chain in chains:
        for call in chain:
            children.setdefault(call, set())
        for parent, child in itertools.pairwise(chain):
            children[parent].add(child)
    heights: dict[Call, int] = {}

    def height(call: Call) -> int:
        if call not in heights:
            heights[call] = 1 + max((height(child) for child in children[call]), default=-1)
        return heights[call]

    for call in children:
        height(call)
    return heights


def _inferred_attributes(reference: CallGraph, calls: list[CallGraph]) -> list[tuple[int, str, str, ir.AttributeType]]:
    """(node position, attribute, function attribute name, type) for each attribute whose value
    differs between the calls: torch's ``inferred::<OpType>_<attribute>`` (a repeat gets .1, .2)."""
    found = []
    counts: dict[str, int] = {}
    for index, node in enumerate(reference.nodes):
        for attribute, value in node.attributes.items():
            if value.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS):
                continue
            if len({value_key(call.nodes[index].attributes[attribute]) for call in calls}) == 1:
                continue
            base = f"inferred::{node.op_type}_{attribute}"
            count = counts.get(base)
            counts[base] = 1 if count is None else count + 1
            found.append((index, attribute, base if count is None else f"{base}.{count}", value.type))
    return found


def annotated_attributes(module: torch.nn.Module) -> dict[str, ir.Attr]:
    """The values of the class's annotated attributes that torch writes as function attributes
    (:func:`_attribute_of`), by name in sorted order (torch's map is sorted)."""
    names: set[str] = set()
    for cls in type(module).__mro__:
        if cls is torch.nn.Module or not issubclass(cls, torch.nn.Module):
            continue
        names.update(getattr(cls, "__annotations__", {}))
    names -= set(typing.get_type_hints(torch.nn.Module))
    found = {}
    for name in sorted(names):
        attribute = _attribute_of(name, getattr(module, name, None))
        if attribute is not None:
            found[name] = attribute
    return found


def _attribute_of(name: str, value: Any) -> ir.Attr | None:
    """An annotated attribute's value as torch converts it (ONNXTrackScopeAttributes): bool and
    int as INT, float as FLOAT, str as STRING, lists of ints or bools as INTS, of floats as
    FLOATS; anything else (None, tuples, tensors, mixed lists) is left out."""
    if isinstance(value, bool):
        return ir.AttrInt64(name, int(value))
    if isinstance(value, int):
        return ir.AttrInt64(name, value)
    if isinstance(value, float):
        return ir.AttrFloat32(name, value)
    if isinstance(value, str):
        return ir.AttrString(name, value)
    if isinstance(value, list) and value:
        if all(isinstance(item, (bool, int)) for item in value):
            return ir.AttrInt64s(name, [int(item) for item in value])
        if all(isinstance(item, float) for item in value):
            return ir.AttrFloat32s(name, value)
    return None
