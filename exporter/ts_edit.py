"""Edits of TorchScript graphs shared by capture and the passes (the read-only queries are
:mod:`exporter.ts_graph`): capture normalizes the graphs of custom autograd Functions with them,
the passes rewrite the model's graph."""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["replace_node"]


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
