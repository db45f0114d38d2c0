"""Graph algorithms over index tensors, scripted without recursion: message passing with
index_add and scatter_reduce, tree depths and subtree sums from parent pointers, and breadth-first
distances in a ``while`` loop whose condition is computed at run time.
"""

from __future__ import annotations

import pytest
import torch
from conftest import (
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
)


class MessagePassing(torch.nn.Module):
    """Graph message passing without recursion: per round, messages from edge sources summed into
    destinations with ``index_add`` and their maximum taken with ``scatter_reduce``; degrees by
    ``bincount``-free counting (index_add of ones)."""

    def __init__(self, dim: int = 4, rounds: int = 2) -> None:
        super().__init__()
        self.message = torch.nn.Linear(dim, dim)
        self.update = torch.nn.Linear(3 * dim, dim)
        self.rounds = rounds

    def forward(self, nodes: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
        src, dst = edges[0], edges[1]
        degree = torch.zeros(nodes.size(0)).index_add(0, dst, torch.ones(dst.size(0)))
        h = nodes
        for _ in range(self.rounds):
            messages = self.message(h)[src]
            total = torch.zeros_like(h).index_add(0, dst, messages)
            index = dst.unsqueeze(1).expand(-1, h.size(1))
            peak = torch.zeros_like(h).scatter_reduce(0, index, messages, reduce="amax", include_self=False)
            mean = total / degree.clamp(min=1.0).unsqueeze(1)
            h = torch.relu(self.update(torch.cat([h, mean, peak], 1)))
        return h


def _graph(nodes: int, edges: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(nodes, 4), torch.randint(0, nodes, (2, edges))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_message_passing(opset: int) -> None:
    model = torch.jit.script(MessagePassing().eval())
    dynamic = dynamic_inputs(nodes={0: "n"}, edges={1: "e"})
    others = [_graph(2, 1), _graph(15, 40)]
    assert_matches_torch(model, _graph(6, 10), opset=opset, other_inputs=others, **dynamic)


class TreeDepthAndSums(torch.nn.Module):
    """A tree given by parent pointers (the root its own parent): node depths by repeated gather
    ``depth = depth[parent] + 1`` for a run-time number of levels, subtree sums by pushing values
    up level by level with index_add (deepest first)."""

    def forward(self, parent: torch.Tensor, values: torch.Tensor, levels: int) -> tuple[torch.Tensor, torch.Tensor]:
        is_root = parent == torch.arange(parent.size(0))
        depth = torch.zeros_like(parent)
        for _ in range(levels):
            depth = torch.where(is_root, torch.zeros_like(depth), depth[parent] + 1)
        sums = values.clone()
        for level in range(levels, 0, -1):
            at_level = (depth == level).to(values.dtype)
            sums = sums.index_add(0, parent, sums * at_level)
        return depth, sums


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_tree_depth_and_subtree_sums(opset: int) -> None:
    model = torch.jit.script(TreeDepthAndSums())
    others = [(torch.tensor([0, 0]), torch.rand(2), 1), (torch.tensor([0, 0, 1, 1, 3, 4, 0, 6]), torch.rand(8), 4)]
    dynamic = dynamic_inputs(parent={0: "n"}, values={0: "n"}, levels={})
    assert_matches_torch(
        model, (torch.tensor([0, 0, 0, 1, 2]), torch.rand(5), 2), opset=opset, other_inputs=others, **dynamic
    )


class BreadthFirstDistances(torch.nn.Module):
    """Breadth-first search on an adjacency matrix in a ``while`` loop whose condition is a
    tensor (the frontier is not empty): each round the frontier's neighbours not yet visited
    get the round number as their distance; unreachable nodes stay -1."""

    def forward(self, adjacency: torch.Tensor, source: int) -> torch.Tensor:
        n = adjacency.size(0)
        distance = torch.full((n,), -1, dtype=torch.long)
        frontier = torch.zeros(n, dtype=torch.bool)
        frontier[source] = True
        distance[source] = 0
        visited = frontier.clone()
        step = 0
        while bool(frontier.any()):
            step += 1
            reached = (adjacency[frontier].sum(0) > 0) & ~visited
            distance = torch.where(reached, torch.full_like(distance, step), distance)
            visited = visited | reached
            frontier = reached
        return distance


def _adjacency(n: int, p: float) -> torch.Tensor:
    return (torch.rand(n, n) < p).to(torch.float32)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_breadth_first_distances(opset: int) -> None:
    model = torch.jit.script(BreadthFirstDistances())
    others = [(_adjacency(3, 0.0), 1), (_adjacency(12, 0.15), 5), (torch.diag(torch.ones(7), 1)[:7, :7], 0)]
    assert_matches_torch(
        model,
        (_adjacency(6, 0.3), 0),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(adjacency={0: "n", 1: "n"}, source={}),
    )
