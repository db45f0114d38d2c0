from __future__ import annotations

import pytest
import torch

from exporter.errors import ExporterError
from exporter.passes import check_no_inplace, lower, remove_inplace


def _graph(fn, *args: torch.Tensor) -> torch._C.Graph:  # noqa: ANN001
    graph = torch.jit.trace(fn, args, check_trace=False).graph.copy()
    lower(graph)
    return graph


def _kinds(graph: torch._C.Graph) -> list[str]:
    return [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]


def test_inplace_ops_become_functional_and_later_reads_see_the_new_value() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.add_(1)
        y.relu_()
        return y + y

    graph = _graph(fn, torch.randn(3))
    assert "aten::add_" in _kinds(graph)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    assert _kinds(graph) == ["aten::mul", "aten::add", "aten::relu", "aten::add"]
    final_add = [n for n in graph.nodes() if n.kind() == "aten::add"][-1]
    relu = [n for n in graph.nodes() if n.kind() == "aten::relu"][0]
    assert [i.node() for i in final_add.inputs()][:2] == [relu, relu]


def test_scripted_mutation_rewires_uses_after_the_write() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        before = y * 1
        y.mul_(3)
        return y - before

    graph = fn.graph.copy()
    lower(graph)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    sub = [n for n in graph.nodes() if n.kind() == "aten::sub"][0]
    first, second = [i.node().kind() for i in sub.inputs()][:2]
    assert (first, second) == ("aten::mul", "aten::mul")
    # the value read before the write still reads the clone
    before_mul = list(sub.inputs())[1].node()
    assert before_mul.inputsAt(0).node().kind() == "aten::clone"


def test_special_inplace_names() -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = x.clone()
        z.copy_(y)
        w = x.clone()
        w.zero_()
        return z + w

    graph = _graph(fn, torch.randn(3), torch.randn(3))
    remove_inplace(graph)
    assert {"aten::copy", "aten::zero"} <= set(_kinds(graph))


def test_write_through_a_view_is_written_back_into_the_base() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[0].add_(1)
        y[:, 1:2] = 0.0
        return y

    graph = _graph(fn, torch.randn(3, 2))
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    kinds = _kinds(graph)
    assert "aten::select_scatter" in kinds and "aten::slice_scatter" in kinds
    returned = list(graph.outputs())[0].node()
    assert returned.kind() == "aten::slice_scatter"


def test_write_through_an_unsupported_view_is_refused() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.diagonal().add_(1)
        return y

    graph = _graph(fn, torch.randn(3, 3))
    with pytest.raises(ExporterError, match="aten::diagonal"):
        remove_inplace(graph)


def test_mutating_a_graph_input_warns() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1

    graph = _graph(fn, torch.randn(3))
    with pytest.warns(UserWarning, match="writes in place into its input"):
        remove_inplace(graph)
