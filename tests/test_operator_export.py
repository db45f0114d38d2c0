"""operator_export_type (exporter/operator_export.py, exporter/operator_export_types.py): ATen
nodes (every aten op, or only those without a symbolic) and ops passed through in their own
domain, compared node by node with what torch's exporter writes for the same models. Models
made only of ATen or passed-through nodes cannot run in onnxruntime (its ATen kernel exists in
training builds only): those are compared structurally and checked with onnx's full checker;
models whose ops all have symbolics run and are compared with eager torch."""

from __future__ import annotations

import io
import warnings
from typing import Any

import onnx
import pytest
import torch
from conftest import TORCH_EXPORTER_NEWEST, assert_matches_torch, comparable_with_torch, export_to_bytes

import exporter
from exporter.errors import SymbolicError, UnsupportedOperatorError
from exporter.operator_export import ATEN_DOMAIN
from exporter.operator_export_types import OperatorExportTypes, operator_export_type
from exporter.runtime_list import SEQUENCE_OPSET

# ONNX sequences at 11 change how a list of tensors reaches an ATen node: below, the one before
# and the newest torch's exporter writes
OPSETS = comparable_with_torch((SEQUENCE_OPSET - 1, SEQUENCE_OPSET, exporter.DEFAULT_OPSET, TORCH_EXPORTER_NEWEST))


def _torch_types() -> Any:
    return torch.onnx.OperatorExportTypes  # noqa: TID251 - torch's enum, to check it is accepted by name


def _torch_export(model: torch.nn.Module, args: tuple[Any, ...], opset: int, export_type: str) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the option's deprecation warning
        torch.onnx.export(  # noqa: TID251 - only to compare with torch's nodes
            model,
            args,
            buffer,
            opset_version=opset,
            dynamo=False,
            operator_export_type=getattr(_torch_types(), export_type),
        )
    return onnx.load_from_string(buffer.getvalue())


def _ours(model: torch.nn.Module, args: tuple[Any, ...], opset: int, export_type: str) -> onnx.ModelProto:
    data, _ = export_to_bytes(
        model, args, opset_version=opset, operator_export_type=getattr(_torch_types(), export_type)
    )
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    return proto


def _producers(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    return {output: node for node in graph.node for output in node.output}


def _input_form(name: str, producers: dict[str, onnx.NodeProto], graph: onnx.GraphProto) -> str:
    """What feeds an input: a graph input or weight, a constant of some dtype and rank, a list
    (SequenceConstruct or prim::ListConstruct), or another node's result."""
    if not name:
        return "none"
    node = producers.get(name)
    if node is None:
        return "input"
    if node.op_type == "Constant":
        attribute = node.attribute[0]
        if attribute.type == onnx.AttributeProto.STRING:  # torch's form of a string constant
            return "constant object rank 0"
        value = onnx.numpy_helper.to_array(attribute.t)
        # a number beside a tensor (x * 0.5) takes the tensor's float type here (the scalar-type
        # pass), double in torch's: ATen computes the same with either
        kind = "float" if value.dtype.kind == "f" and value.ndim == 0 else value.dtype
        return f"constant {kind} rank {value.ndim}"
    if node.op_type in ("SequenceConstruct", "ListConstruct"):
        return f"list of {len(node.input)}"
    return "value"


def _foreign_nodes(proto: onnx.ModelProto) -> list[tuple[Any, ...]]:
    """Per node outside ONNX's default domain, in order: domain, op type, operator, output count,
    and the forms of its inputs (trailing missing ones left out: torch writes them as "", we
    leave them out, the same in ONNX)."""
    graph = proto.graph
    producers = _producers(graph)
    found = []
    for node in graph.node:
        if node.domain in ("", "ai.onnx"):
            continue
        forms = [_input_form(name, producers, graph) for name in node.input]
        while forms and forms[-1] == "none":
            forms.pop()
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        operator = attributes.get("operator", b"").decode()
        found.append((node.domain, node.op_type, operator, len(node.output), attributes.get("_outputs"), tuple(forms)))
    return found


class Mixed(torch.nn.Module):
    """Inputs of every form: tensors, an int, a float alpha, a string, None, an int list, a
    tensor list, a dtype; results of several outputs and a list of tensors unpacked."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 6)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = torch.add(self.linear(x), y, alpha=2)
        b = torch.nn.functional.gelu(a, approximate="tanh")
        c = torch.cumsum(b, dim=1)
        top, index = torch.max(c, dim=1, keepdim=True)
        left, right = torch.split(c, [2, 4], dim=1)
        joined = torch.cat([left, top, right], 1)
        return joined.sum(dim=[0], dtype=torch.float64), index, left * 0.5


def _mixed_args() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(3, 4), torch.randn(3, 6)


@pytest.mark.parametrize("opset", OPSETS)
def test_aten_nodes_match_torchs(opset: int) -> None:
    """ONNX_ATEN: every aten op one ATen node (org.pytorch.aten, operator and overload_name),
    its arguments as torch passes them: numbers as 0-d constants (int64, double), a string
    constant, an int list as a 1-D constant, a tensor list as one SequenceConstruct (a
    prim::ListConstruct below opset 11), a split's pieces as outputs counted by _outputs."""
    model = Mixed().eval()
    ours = _ours(model, _mixed_args(), opset, "ONNX_ATEN")
    theirs = _torch_export(model, _mixed_args(), opset, "ONNX_ATEN")
    assert _foreign_nodes(ours) == _foreign_nodes(theirs)
    assert {node.op_type for node in ours.graph.node} <= {"ATen", "Constant", "SequenceConstruct", "ListConstruct"}
    aten = [node for node in ours.graph.node if node.op_type == "ATen"]
    assert {node.domain for node in aten} == {ATEN_DOMAIN}
    overloads = {
        onnx.helper.get_attribute_value(a).decode()
        for node in aten
        for a in node.attribute
        if a.name == "overload_name"
    }
    assert {"Tensor", "dim"} <= overloads  # the node's own overload (torch's pre-passes lose most)
    imports = {entry.domain: entry.version for entry in ours.opset_import}
    assert imports[ATEN_DOMAIN] == 1


@pytest.mark.parametrize("opset", OPSETS)
def test_aten_fallback_makes_aten_nodes_of_unsupported_ops_only(opset: int) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            a = torch.special.bessel_j0(x)  # no symbolic here nor in torch
            b = torch.nn.functional.leaky_relu(a, 0.1)
            return torch.polygamma(2, b) + b, torch.erfinv(x).to(torch.int32)

    args = (torch.rand(2, 4),)
    ours = _ours(Model(), args, opset, "ONNX_ATEN_FALLBACK")
    theirs = _torch_export(Model(), args, opset, "ONNX_ATEN_FALLBACK")
    assert _foreign_nodes(ours) == _foreign_nodes(theirs)
    operators = [entry[2] for entry in _foreign_nodes(ours)]
    assert operators == ["special_bessel_j0", "polygamma", "erfinv"]
    assert "LeakyRelu" in {node.op_type for node in ours.graph.node}


@pytest.mark.parametrize("opset", OPSETS)
def test_aten_fallback_of_a_supported_model_runs_as_onnx(opset: int) -> None:
    """Nothing without a symbolic: the same model as ONNX, run in onnxruntime."""
    model = Mixed().eval()
    fallback = assert_matches_torch(
        model, _mixed_args(), opset=opset, operator_export_type=OperatorExportTypes.ONNX_ATEN_FALLBACK
    )
    plain = exporter.export(model, _mixed_args(), io.BytesIO(), opset_version=opset)
    assert [node.op_type for node in fallback.graph] == [node.op_type for node in plain.graph]


# A custom op of this test module's own namespace, with arguments of every form.
_LIBRARY = torch.library.Library("exporter_tests", "DEF")
_LIBRARY.define("scaled(Tensor x, int k, float f, str s, int[] l) -> Tensor")
_LIBRARY.impl("scaled", lambda x, k, f, s, l: x * k * f, "CPU")


class WithCustomOp(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.ops.exporter_tests.scaled(torch.special.bessel_j0(x), 3, 0.5, "hi", [1, 2])
        return torch.relu(a), torch.erfinv(x).sum(dim=[0, 1], dtype=torch.float64)


@pytest.mark.parametrize("opset", OPSETS)
def test_fallthrough_keeps_ops_without_symbolic_in_their_domain_as_torch_does(opset: int) -> None:
    args = (torch.rand(2, 4),)
    ours = _ours(WithCustomOp(), args, opset, "ONNX_FALLTHROUGH")
    theirs = _torch_export(WithCustomOp(), args, opset, "ONNX_FALLTHROUGH")
    assert _foreign_nodes(ours) == _foreign_nodes(theirs)
    assert [(entry[0], entry[1]) for entry in _foreign_nodes(ours)] == [
        (ATEN_DOMAIN, "special_bessel_j0"),
        ("exporter_tests", "scaled"),
        (ATEN_DOMAIN, "erfinv"),
    ]
    imports = {entry.domain for entry in ours.opset_import}
    assert {ATEN_DOMAIN, "exporter_tests"} <= imports


@pytest.mark.parametrize("export_type", ["ONNX_ATEN", "ONNX_ATEN_FALLBACK"])
def test_ops_of_other_namespaces_without_symbolic_are_refused_under_aten_types(export_type: str) -> None:
    """ATen nodes carry aten ops only (torch's ONNX_ATEN_FALLBACK writes ATen(operator="scaled"),
    which names no aten op): the op is listed as unsupported, naming ONNX_FALLTHROUGH."""
    with pytest.raises(UnsupportedOperatorError, match=r"(?s)exporter_tests::scaled.*ONNX_FALLTHROUGH"):
        exporter.export(
            WithCustomOp(),
            (torch.rand(2, 4),),
            io.BytesIO(),
            operator_export_type=getattr(OperatorExportTypes, export_type),
        )


def test_onnx_still_lists_every_op_without_symbolic() -> None:
    with pytest.raises(UnsupportedOperatorError) as raised:
        exporter.export(
            WithCustomOp(), (torch.rand(2, 4),), io.BytesIO(), operator_export_type=OperatorExportTypes.ONNX
        )
    assert [op.name for op in raised.value.ops] == ["aten::erfinv", "aten::special_bessel_j0", "exporter_tests::scaled"]


def test_number_conversions_are_no_aten_nodes() -> None:
    """aten::Int between a size and a view is a no-op once numbers are tensors (torch erases it)."""

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(x.size(0), -1)

    proto = _ours(Model(), (torch.randn(2, 3, 4),), exporter.DEFAULT_OPSET, "ONNX_ATEN")
    operators = [entry[2] for entry in _foreign_nodes(proto)]
    assert operators == ["size", "view"]


def test_a_list_holding_none_is_refused_under_aten() -> None:
    """index's list of optional tensors has no ONNX form (torch writes a SequenceConstruct with a
    missing input, which ONNX does not allow)."""

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            return x[:, index]

    with pytest.raises(SymbolicError, match="aten::index.*a list holding None"):
        exporter.export(
            Model(),
            (torch.randn(2, 4), torch.tensor([0, 2])),
            io.BytesIO(),
            operator_export_type=OperatorExportTypes.ONNX_ATEN,
        )


@pytest.mark.parametrize("name", list(OperatorExportTypes.__members__))
def test_torchs_members_are_taken_by_name(name: str) -> None:
    assert operator_export_type(getattr(_torch_types(), name)) is OperatorExportTypes[name]
    assert operator_export_type(OperatorExportTypes[name]) is OperatorExportTypes[name]


def test_the_default_and_unknown_values() -> None:
    assert operator_export_type(None) is OperatorExportTypes.ONNX
    with pytest.raises(ValueError, match="operator_export_type must be one of"):
        operator_export_type("ONNX_ATEN")
