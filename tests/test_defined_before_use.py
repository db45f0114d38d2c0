"""The guard before writing (exporter.defined_before_use): a graph reading a value that is not
defined before it, in its own graph or an enclosing one, raises UseBeforeDefinitionError and
no file is written; a valid export, subgraphs reading enclosing values included, passes."""

from __future__ import annotations

import pathlib

import onnx_ir as ir
import pytest
import torch
from conftest import NEWEST, assert_matches_torch

import exporter
from exporter import api
from exporter.defined_before_use import check_defined_before_use
from exporter.errors import UseBeforeDefinitionError


def _tensor(name: str) -> ir.Value:
    return ir.Value(name=name, type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([2]))


def _model(graph: ir.Graph) -> ir.Model:
    return ir.Model(graph, ir_version=8)


def _out_of_order() -> ir.Model:
    x = _tensor("x")
    first = ir.Node("", "Relu", [x], name="first")
    second = ir.Node("", "Neg", [first.outputs[0]], name="second")
    # the reader comes before the node making its input
    return _model(ir.Graph([x], [second.outputs[0]], nodes=[second, first], opset_imports={"": NEWEST}, name="main"))


def _leaked_from_a_branch() -> ir.Model:
    x = _tensor("x")
    cond = ir.Value(name="cond", type=ir.TensorType(ir.DataType.BOOL), shape=ir.Shape([]))
    inner = ir.Node("", "Relu", [x], name="inner")  # reads x of the enclosing graph: fine
    branch = ir.Graph([], [inner.outputs[0]], nodes=[inner], name="branch")
    other = ir.Node("", "Identity", [x], name="other")
    other_branch = ir.Graph([], [other.outputs[0]], nodes=[other], name="other_branch")
    if_node = ir.Node(
        "",
        "If",
        [cond],
        attributes=[ir.AttrGraph("then_branch", branch), ir.AttrGraph("else_branch", other_branch)],
        name="if",
    )
    reader = ir.Node("", "Neg", [inner.outputs[0]], name="reader")  # a value local to the branch
    return _model(
        ir.Graph([x, cond], [reader.outputs[0]], nodes=[if_node, reader], opset_imports={"": NEWEST}, name="main")
    )


def test_a_node_reading_a_later_value_is_refused() -> None:
    with pytest.raises(UseBeforeDefinitionError, match="node 'second' .* reads 'first_output_0'|'second'.*first"):
        check_defined_before_use(_out_of_order())


def test_a_value_leaked_out_of_a_subgraph_is_refused() -> None:
    with pytest.raises(UseBeforeDefinitionError, match="exporter defect: node 'reader' in graph 'main'") as caught:
        check_defined_before_use(_leaked_from_a_branch())
    assert "made by 'inner'" in str(caught.value)
    assert caught.value.node == "reader"


def test_a_graph_output_never_defined_is_refused() -> None:
    x = _tensor("x")
    stray = ir.Node("", "Relu", [x], name="stray")
    graph = ir.Graph([x], [stray.outputs[0]], nodes=[], opset_imports={"": NEWEST}, name="main")
    with pytest.raises(UseBeforeDefinitionError, match="<graph output>"):
        check_defined_before_use(_model(graph))


class Rows(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                total = total + x[i]
        return total


def test_a_valid_export_with_nested_subgraphs_passes() -> None:
    model = assert_matches_torch(
        torch.jit.script(Rows()),
        (torch.randn(4, 3),),
        opset=NEWEST,
        other_inputs=[(torch.randn(1, 3),)],
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )
    check_defined_before_use(model)


def test_an_export_that_would_write_a_broken_graph_writes_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cleanup_breaking_the_order(model: ir.Model, **kwargs: object) -> None:
        nodes = list(model.graph)
        model.graph.remove(nodes[0])
        model.graph.append(nodes[0])  # the first node moved last: its readers now come first

    monkeypatch.setattr(api, "cleanup", cleanup_breaking_the_order)
    target = tmp_path / "model.onnx"
    with pytest.raises(UseBeforeDefinitionError, match="please report"):
        exporter.export(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()), (torch.randn(2, 3),), str(target))
    assert not target.exists()
