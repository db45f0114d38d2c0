"""Where a lowered ScriptModule's nodes come from in the user's code, worked out on demand."""

from __future__ import annotations

import collections

import torch

from exporter.capture.lowering import inline_calls
from exporter.ts_graph import CALL_SITES, all_nodes, call_chain, library_line, source_location

__all__ = ["CallSites"]


class CallSites:
    """The user's call sites of the nodes of a lowered ScriptModule, worked out only when an
    error names a node: lowering (``_jit_pass_lower_graph`` or freezing) inlines calls in
    torch, which keeps the call stack in C++ only, and recording it on every node of a large
    model costs more than the export itself.

    On first use the module's forward is inlined again by :func:`inline_calls`; a node is then
    found there by its kind and source range. A range reached from several call sites takes
    them in order when both graphs have it as often (lowering inlines in the same order;
    freezing only removes nodes); otherwise every call site it may come from is named."""

    def __init__(self, module: torch._C.ScriptModule) -> None:
        self._module = module
        self._chains: dict[tuple[str, str], list[str]] | None = None
        self._counts: dict[tuple[str, str], list[torch._C.Node]] | None = None

    def locate(self, node: torch._C.Node, graph: torch._C.Graph) -> str:
        """``source_location(node)``, with the user's call sites for a node of torch's code."""
        own = source_location(node)
        if node.hasAttribute(CALL_SITES) or library_line(node) is None:
            return own
        try:
            chains = self._chains_of(node)
        except Exception:  # noqa: BLE001 - naming a place must not hide the error being reported
            return own
        if not chains:
            return own
        if len(set(chains)) > 1:
            same = self._same_nodes(graph, node)
            if len(same) == len(chains):
                chains = [chains[next(i for i, other in enumerate(same) if other == node)]]
        rendered = dict.fromkeys(call_chain(node, chain) for chain in chains)
        return " or ".join(rendered)

    def _chains_of(self, node: torch._C.Node) -> list[str]:
        if self._chains is None:
            inlined = self._module._get_method("forward").graph.copy()
            inline_calls(inlined, self._module)
            self._chains = collections.defaultdict(list)
            for other in all_nodes([inlined]):
                if other.hasAttribute(CALL_SITES):
                    self._chains[(other.kind(), other.sourceRange())].append(other.s(CALL_SITES))
        return self._chains.get((node.kind(), node.sourceRange()), [])

    def _same_nodes(self, graph: torch._C.Graph, node: torch._C.Node) -> list[torch._C.Node]:
        key = (node.kind(), node.sourceRange())
        if self._counts is None:
            self._counts = collections.defaultdict(list)
            for other in all_nodes([graph]):
                if other.kind() != "prim::Constant":
                    self._counts[(other.kind(), other.sourceRange())].append(other)
        return self._counts.get(key, [])
