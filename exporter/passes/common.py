"""Small TorchScript graph utilities shared by the passes."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import torch

__all__ = ["walk", "replace_node", "schema_of", "has_blocks"]


@functools.lru_cache(maxsize=4096)
def _parse_schema(text: str) -> torch._C.FunctionSchema | None:
    if text == "(no schema)":
        return None
    return torch._C.parse_schema(text)


def schema_of(node: torch._C.Node) -> torch._C.FunctionSchema | None:
    """The parsed schema of an operator node, or None for schema-less prim nodes."""
    try:
        return _parse_schema(node.schema())
    except RuntimeError:
        return None


def walk(block: torch._C.Graph | torch._C.Block) -> Iterator[torch._C.Node]:
    """Every node, depth first, including nodes of sub-blocks.

    The list is taken before the first node is yielded, so callers may replace or destroy
    the node they are given.
    """
    yield from _collect(block)


def _collect(block: torch._C.Graph | torch._C.Block) -> list[torch._C.Node]:
    found = []
    for node in block.nodes():
        found.append(node)
        if has_blocks(node):
            for sub in node.blocks():
                found.extend(_collect(sub))
    return found


_BLOCK_KINDS = frozenset({"prim::If", "prim::Loop", "prim::Closure", "prim::With"})


def has_blocks(node: torch._C.Node) -> bool:
    """Whether ``node`` has sub-blocks. Only control-flow nodes can; asking every node for its
    blocks costs a pybind round trip each (~30 us), which adds up on large graphs."""
    return node.kind() in _BLOCK_KINDS and bool(list(node.blocks()))


def replace_node(
    graph: torch._C.Graph, node: torch._C.Node, kind: str, inputs: Sequence[torch._C.Value]
) -> torch._C.Node:
    """Put a node of ``kind`` with ``inputs`` in ``node``'s place; its schema is re-resolved."""
    new = graph.create(kind, list(inputs), node.outputsSize())
    new.insertBefore(node)
    new.copyMetadata(node)
    for old_out, new_out in zip(node.outputs(), new.outputs()):
        new_out.setType(old_out.type())
        old_out.replaceAllUsesWith(new_out)
    node.destroy()
    return new
