"""Small TorchScript graph utilities shared by the passes.

The read-only queries (the block walk, schemas) live in :mod:`exporter.ts_graph`, shared with
the other phases; they are re-exported here so a pass imports its toolbox from one place.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from exporter.ts_graph import has_blocks, schema_of, walk

__all__ = ["walk", "replace_node", "schema_of", "has_blocks"]


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
