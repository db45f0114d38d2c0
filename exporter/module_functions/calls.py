"""Which module calls each node of the emitted graph belongs to.

A node emitted by a symbolic carries its TorchScript node's trace scope
(:data:`exporter.graph_context.TRACE_SCOPE`), which names the module calls it lies in
(:func:`exporter.ts_graph.module_calls`; every model call is inside the model's own, the
:data:`ROOT` call). Nodes emitted without one (constants shared by content, casts the emitter
adds, nodes of passes) get one by torch's rule (function_extraction.cpp, InferScope): the calls
of their users when all agree, else those of their inputs' producers when all agree, else the
calls all of them share. A constant whose users lie in several calls is copied into each, so
that every call of one module computes its constants itself (torch's graph has a Constant per
use) and no call takes another's constant as an input.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx_ir as ir

from exporter.graph_context import TRACE_SCOPE
from exporter.ts_graph import module_calls

__all__ = ["Call", "ROOT", "Chain", "top_level_owners", "subgraph_nodes", "node_chains", "place_constants"]

# A module call: (module path, call number); the model's own call is ROOT.
Call = tuple[str, int]
ROOT: Call = ("", 0)
# The calls a node lies in, outermost (ROOT) first.
Chain = tuple[Call, ...]


def top_level_owners(graph: ir.Graph) -> dict[ir.Node, ir.Node]:
    """Each node inside a subgraph of ``graph``'s nodes, mapped to the node of ``graph`` holding it."""
    owners: dict[ir.Node, ir.Node] = {}
    for node in graph:
        for inner in subgraph_nodes(node):
            owners[inner] = node
    return owners


def subgraph_nodes(node: ir.Node) -> Iterable[ir.Node]:
    """The nodes inside ``node``'s subgraphs (If branches, Loop bodies), at any depth."""
    for attribute in node.attributes.values():
        if attribute.type == ir.AttributeType.GRAPH:
            yield from ir.traversal.RecursiveGraphIterator(attribute.value)
        elif attribute.type == ir.AttributeType.GRAPHS:
            for subgraph in attribute.value:
                yield from ir.traversal.RecursiveGraphIterator(subgraph)


def _recorded_chain(node: ir.Node) -> Chain | None:
    scope = node.meta.get(TRACE_SCOPE)
    return None if scope is None else (ROOT, *module_calls(scope))


def _common_prefix(chains: list[Chain]) -> Chain:
    common = chains[0]
    for chain in chains[1:]:
        length = 0
        for a, b in zip(common, chain):
            if a != b:
                break
            length += 1
        common = common[:length]
    return common or (ROOT,)


def node_chains(graph: ir.Graph, owners: dict[ir.Node, ir.Node]) -> dict[ir.Node, Chain]:
    """The chain of every node of ``graph`` (see the module docstring); shared constants are
    copied into ``graph`` first, one per chain of their users."""
    recorded = {node: chain for node in graph if (chain := _recorded_chain(node)) is not None}
    chains: dict[ir.Node, Chain] = dict(recorded)
    outputs = set(graph.outputs)
    # users come after a node: walking backwards, every user's chain is known when it is needed
    for node in reversed(list(graph)):
        if node in chains:
            continue
        users: list[tuple[Chain, ir.Node, int]] = []
        for value in node.outputs:
            for user, index in value.uses():
                chain = chains.get(owners.get(user, user))
                if chain is not None:  # else a node no longer in the graph
                    users.append((chain, user, index))
        user_chains = [chain for chain, _, _ in users]
        if any(value in outputs for value in node.outputs):
            user_chains.append((ROOT,))
        elif _is_constant(node) and len(set(user_chains)) > 1:
            _copy_per_chain(graph, node, users, owners, chains)
            continue
        producers = [value.producer() for value in node.inputs if value is not None]
        producer_chains = [recorded.get(producer) if producer is not None else None for producer in producers]
        if user_chains and all(chain == user_chains[0] for chain in user_chains):
            chains[node] = user_chains[0]
        elif producer_chains and all(chain is not None and chain == producer_chains[0] for chain in producer_chains):
            chains[node] = producer_chains[0]  # type: ignore[assignment]
        else:
            known = [chain for chain in user_chains + producer_chains if chain is not None]
            chains[node] = _common_prefix(known) if known else (ROOT,)
    return chains


def _is_constant(node: ir.Node) -> bool:
    return node.op_type == "Constant" and node.domain in ("", "ai.onnx") and not node.inputs


def _copy_per_chain(
    graph: ir.Graph,
    node: ir.Node,
    users: list[tuple[Chain, ir.Node, int]],
    owners: dict[ir.Node, ir.Node],
    chains: dict[ir.Node, Chain],
) -> None:
    """One copy of the constant ``node`` per chain of its ``users`` (the node itself serving the
    chain of its first user), each placed before the first of its users."""
    order = {n: position for position, n in enumerate(graph)}
    by_chain: dict[Chain, list[tuple[ir.Node, int]]] = {}
    for chain, user, index in sorted(users, key=lambda use: order[owners.get(use[1], use[1])]):
        by_chain.setdefault(chain, []).append((user, index))
    groups = list(by_chain.items())
    chains[node] = groups[0][0]
    (original,) = node.outputs
    for count, (chain, chain_users) in enumerate(groups[1:], start=1):
        copy = ir.Node(node.domain, node.op_type, [], list(node.attributes.values()), name=f"{node.name}_copy{count}")
        (value,) = copy.outputs
        value.name = f"{original.name}_copy{count}"
        value.type, value.shape, value.const_value = original.type, original.shape, original.const_value
        first_user, _ = chain_users[0]
        graph.insert_before(owners.get(first_user, first_user), copy)
        for user, index in chain_users:
            user.replace_input_with(index, value)
        chains[copy] = chain


def place_constants(graph: ir.Graph, owners: dict[ir.Node, ir.Node]) -> None:
    """Move each constant right before its first user, those of one user in the order it reads
    them: where the emitter made a constant (first use, or earlier, shared by content) no longer
    tells two calls of one module apart."""
    order = {node: position for position, node in enumerate(graph)}
    placed: dict[ir.Node, list[tuple[int, ir.Node]]] = {}
    for node in list(graph):
        if not _is_constant(node) or not node.outputs[0].uses():
            continue
        uses = [
            (order[owners.get(user, user)], index, owners.get(user, user)) for user, index in node.outputs[0].uses()
        ]
        position, index, first = min(uses, key=lambda use: (use[0], use[1]))
        placed.setdefault(first, []).append((index, node))
    for first, constants in placed.items():
        for _, node in sorted(constants, key=lambda item: item[0]):
            graph.remove(node)
            graph.insert_before(first, node)
