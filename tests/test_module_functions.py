"""export_modules_as_functions (exporter/module_functions/): module calls as ONNX local functions.
Models run in onnxruntime and are compared with eager torch at opset 15 (the first with local
functions) and the newest; the functions made (names, domains, attributes, calls) are compared
with those torch's exporter makes for the same models."""

from __future__ import annotations

import copy
import io
import warnings
from typing import Any

import onnx
import onnx_ir as ir
import pytest
import torch
from conftest import TORCH_EXPORTER_NEWEST, around, assert_matches_torch, export_to_bytes

import exporter
from exporter.graph_context import GraphContext
from exporter.module_functions import FUNCTIONS_OPSET, annotated_attributes, classes_to_export
from exporter.registry import REGISTRY
from exporter.ts_graph import module_call_scope, module_calls

# the first opset with local functions, and the newest
OPSETS = around(FUNCTIONS_OPSET)[1:]


class Block(torch.nn.Module):
    """Annotated ``scale`` (a function attribute of every call); its value is also a constant
    in the body, which differs between calls (an inferred attribute)."""

    scale: float

    def __init__(self, width: int, scale: float = 2.0) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)
        self.act = torch.nn.GELU()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.lin(x)) * self.scale


class Blocks(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.b1 = Block(4)
        self.b2 = Block(4, 3.0)
        self.b3 = Block(4)
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.b3(self.b2(self.b1(x))))


def _functions(model: onnx.ModelProto) -> dict[str, onnx.FunctionProto]:
    return {f"{function.domain}.{function.name}": function for function in model.functions}


def _calls(nodes: Any, functions: dict[str, onnx.FunctionProto]) -> list[tuple[str, dict[str, Any]]]:
    """The function calls among ``nodes``: qualified name and attribute values."""
    found = []
    for node in nodes:
        name = f"{node.domain}.{node.op_type}"
        if name in functions:
            values = {}
            for attribute in node.attribute:
                if attribute.ref_attr_name:
                    values[attribute.name] = f"@{attribute.ref_attr_name}"
                    continue
                value = onnx.helper.get_attribute_value(attribute)
                values[attribute.name] = (
                    onnx.numpy_helper.to_array(value).tolist() if isinstance(value, onnx.TensorProto) else value
                )
            found.append((name, values))
    return found


def _export(model: torch.nn.Module, args: tuple[Any, ...], opset: int, functions: Any) -> onnx.ModelProto:
    data, _ = export_to_bytes(model, args, opset_version=opset, export_modules_as_functions=functions)
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    return proto


def _torch_export(model: torch.nn.Module, args: tuple[Any, ...], functions: Any) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(  # noqa: TID251 - only to compare with torch's functions
            model,
            args,
            buffer,
            opset_version=min(FUNCTIONS_OPSET, TORCH_EXPORTER_NEWEST),
            dynamo=False,
            export_modules_as_functions=functions,
        )
    return onnx.load_from_string(buffer.getvalue())


# torch writes the tensor-valued annotated attribute Linear.weight into every Linear call (and,
# where it differs between calls, as inferred::Linear_weight of the caller); this exporter does not
# copy weights into attributes: they are the function's inputs already.
_TORCH_WEIGHT_ATTRIBUTES = {"weight", "inferred::Linear_weight"}


def _summary(model: onnx.ModelProto) -> dict[str, Any]:
    """Per function: declared attributes, input and output counts, and the calls in its body;
    and the calls of the main graph."""
    functions = _functions(model)
    summary: dict[str, Any] = {
        name: (
            sorted(set(function.attribute) - _TORCH_WEIGHT_ATTRIBUTES),
            len(function.input),
            len(function.output),
            [
                (call, {k: v for k, v in values.items() if k not in _TORCH_WEIGHT_ATTRIBUTES})
                for call, values in _calls(function.node, functions)
            ],
        )
        for name, function in functions.items()
    }
    summary["main graph"] = _calls(model.graph.node, functions)
    return summary


@pytest.mark.parametrize("functions", [True, {Block}], ids=["all", "Block"])
def test_functions_match_torchs(functions: Any) -> None:
    """The same functions as torch's: one per class (Block's scale differs between calls: the
    constant it makes is the attribute inferred::Constant_value), named and placed in domains as
    torch does, with the annotated attributes (scale, in_features, eps, ...) on every call."""
    args = (torch.randn(2, 4),)
    model = Blocks().eval()
    ours = _export(model, args, FUNCTIONS_OPSET, functions)
    theirs = _torch_export(model, args, functions)
    assert _summary(ours) == _summary(theirs)
    block = f"{Block.__module__}.Block"
    assert _summary(ours)[block][0] == ["inferred::Constant_value", "scale"]
    block_calls = [values for name, values in _calls(_all_nodes(ours), _functions(ours)) if name == block]
    assert [(values["scale"], values["inferred::Constant_value"]) for values in block_calls] == [
        (2.0, 2.0),
        (3.0, 3.0),
        (2.0, 2.0),
    ]


def _all_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [*model.graph.node, *(node for function in model.functions for node in function.node)]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("functions", [True, {Block}, {Block, torch.nn.GELU}], ids=["all", "Block", "nested"])
def test_functions_run_as_eager_torch(opset: int, functions: Any) -> None:
    onnx_model = assert_matches_torch(
        Blocks().eval(), (torch.randn(2, 4),), opset=opset, export_modules_as_functions=functions
    )
    names = {function.name for function in onnx_model.functions.values()}
    assert "Block" in names
    if functions is True:
        assert [node.op_type for node in onnx_model.graph] == ["Blocks"]  # the model's own call


class Twice(torch.nn.Module):
    """One block called twice, its ReLU twice per call: each call is a call of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        self.relu = torch.nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.block(self.relu(self.block(x))))


@pytest.mark.parametrize("opset", OPSETS)
def test_each_call_of_a_module_called_twice_is_a_call(opset: int) -> None:
    functions = {torch.nn.Sequential, torch.nn.ReLU}
    onnx_model = assert_matches_torch(Twice(), (torch.randn(3, 4),), opset=opset, export_modules_as_functions=functions)
    assert [node.op_type for node in onnx_model.graph] == ["Sequential", "ReLU", "Sequential", "ReLU"]
    sequential = onnx_model.functions[("torch.nn.modules.container", "Sequential", "")]
    assert [node.op_type for node in sequential] == ["Gemm", "ReLU"]  # a function calling a function
    theirs = _torch_export(Twice(), (torch.randn(3, 4),), functions)
    assert [node.op_type for node in theirs.graph.node] == ["Sequential", "ReLU", "Sequential", "ReLU"]


class Mix(torch.nn.Module):
    """Two calls with the same ops wired differently: ``a * b + a`` and ``a * b + b``."""

    def __init__(self, add_first: bool) -> None:
        super().__init__()
        self.add_first = add_first

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * b + (a if self.add_first else b)


class Mixes(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Mix(True)
        self.second = Mix(False)

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.first(a, b), self.second(c, d)


@pytest.mark.parametrize("opset", OPSETS)
def test_calls_wired_differently_are_variants(opset: int) -> None:
    """Mix and Mix.1 (torch makes one function of the two, since their node kinds agree, and
    its second output is then a * b + a)."""
    args = tuple(torch.randn(3) for _ in range(4))
    onnx_model = assert_matches_torch(Mixes(), args, opset=opset, export_modules_as_functions={Mix})
    assert sorted(function.name for function in onnx_model.functions.values()) == ["Mix", "Mix.1"]


@pytest.mark.parametrize("opset", OPSETS)
def test_equal_weights_are_merged_after_the_functions_are_made(opset: int) -> None:
    """Deep-copied blocks hold equal weights, written once (as without functions); each call
    still passes its weights, so every call is one function's."""

    class Copies(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
            self.layers = torch.nn.ModuleList([block, copy.deepcopy(block)])
            self.layers[1][1].bias.data += 0.5  # one of four weights differs

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layers[1](self.layers[0](x))

    onnx_model = assert_matches_torch(
        Copies().eval(), (torch.randn(2, 4),), opset=opset, export_modules_as_functions={torch.nn.Sequential}
    )
    assert [function.name for function in onnx_model.functions.values()] == ["Sequential"]
    assert len(onnx_model.graph.initializers) == 5  # 8 weights, three pairs equal


class ConvBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.relu = torch.nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv(x)))


@pytest.mark.parametrize("opset", OPSETS)
def test_batch_norm_folded_into_conv_leaves_no_call(opset: int) -> None:
    """Functions are made from the cleaned graph, as torch makes them after its folding."""
    functions = {torch.nn.Conv2d, torch.nn.BatchNorm2d, ConvBlock}
    onnx_model = assert_matches_torch(
        ConvBlock().eval(), (torch.randn(1, 3, 8, 8),), opset=opset, export_modules_as_functions=functions
    )
    assert sorted(function.name for function in onnx_model.functions.values()) == ["Conv2d", "ConvBlock"]


@pytest.mark.parametrize("opset", OPSETS)
def test_transformer_layers_are_one_function(opset: int) -> None:
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    onnx_model = assert_matches_torch(
        encoder,
        (torch.randn(2, 5, 8),),
        opset=opset,
        atol=1e-5,
        export_modules_as_functions={torch.nn.TransformerEncoderLayer},
    )
    assert [node.op_type for node in onnx_model.graph] == ["TransformerEncoderLayer"] * 2
    assert len(onnx_model.functions) == 1


# A custom op whose symbolic emits an If with branches reading the call's values (its input and
# a weight) from the enclosing graph, which in a function are the function's.
_LIBRARY = torch.library.Library("exporter_function_tests", "DEF")
_LIBRARY.define("gated(Tensor x, Tensor scale) -> Tensor")
_LIBRARY.impl("gated", lambda x, scale: x * scale if x.sum() > 0 else -x * scale, "CPU")


def _gated(g: GraphContext, x: ir.Value, scale: ir.Value) -> ir.Value:
    positive = g.op("Greater", g.op("ReduceSum", x, keepdims=0), g.constant(0.0))
    then_branch = g.build_subgraph([], lambda sub: [sub.op("Mul", x, scale)], "positive")
    else_branch = g.build_subgraph([], lambda sub: [sub.op("Mul", sub.op("Neg", x), scale)], "negative")
    out = g.op("If", positive, then_branch=then_branch, else_branch=else_branch)
    out.dtype, out.shape = x.dtype, x.shape
    return out


class Gate(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.scale = torch.nn.Parameter(torch.rand(4) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.exporter_function_tests.gated(self.lin(x), self.scale)


class Gates(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = Gate(), Gate()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))


@pytest.mark.parametrize("opset", OPSETS)
def test_values_read_inside_subgraphs_are_function_inputs(opset: int) -> None:
    with REGISTRY.scoped_custom("exporter_function_tests::gated", 9, _gated):
        onnx_model = assert_matches_torch(
            Gates(),
            (torch.randn(2, 4),),
            opset=opset,
            other_inputs=[(-torch.ones(2, 4),)],
            export_modules_as_functions={Gate},
        )
    (function,) = onnx_model.functions.values()
    assert [node.op_type for node in function][-1] == "If"
    assert [value.name for value in function.inputs][-3:] == ["first.lin.weight", "first.lin.bias", "first.scale"]
    assert [node.op_type for node in onnx_model.graph] == ["Gate", "Gate"]


def test_a_model_that_is_a_function_has_nothing_to_make() -> None:
    """As in torch: no modules, no functions, no error."""

    def add_one(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    onnx_model = exporter.export(add_one, (torch.randn(2),), io.BytesIO(), export_modules_as_functions=True)
    assert not onnx_model.functions


@pytest.mark.parametrize("opset", around(FUNCTIONS_OPSET)[:1])
def test_below_opset_15_the_option_is_refused(opset: int) -> None:
    with pytest.raises(ValueError, match="export_modules_as_functions needs opset_version 15"):
        exporter.export(
            Blocks(), (torch.randn(2, 4),), io.BytesIO(), opset_version=opset, export_modules_as_functions=True
        )


def test_scripted_models_are_refused() -> None:
    """Their graphs record no module calls (torch refuses ScriptModules too)."""
    with pytest.raises(exporter.ExporterError, match="needs a model captured by tracing"):
        exporter.export(torch.jit.script(Twice()), (torch.randn(2, 4),), io.BytesIO(), export_modules_as_functions=True)


@pytest.mark.parametrize("option", [{"Block"}, {Block, 3}, {torch.Tensor}, "Block"])
def test_the_option_takes_bools_and_module_classes(option: Any) -> None:
    with pytest.raises(TypeError, match="export_modules_as_functions"):
        classes_to_export(option)
    assert classes_to_export([Block]) == frozenset({Block})
    assert classes_to_export(set()) == frozenset() and classes_to_export(False) is False


class Annotated(torch.nn.Module):
    count: int
    ratio: float
    flag: bool
    mode: str
    sizes: list[int]
    scales: list[float]
    pair: tuple[int, int]
    table: torch.Tensor
    missing: int
    nothing: int | None

    def __init__(self) -> None:
        super().__init__()
        self.count, self.ratio, self.flag, self.mode = 3, 0.5, True, "fast"
        self.sizes, self.scales, self.pair = [1, 2], [0.25, 4.0], (1, 2)
        self.table = torch.ones(2)
        self.nothing = None


def test_annotated_attributes_are_converted_as_torch_converts_them() -> None:
    """ints, floats, strings, bools (as ints) and lists of them; tuples, tensors, None and
    attributes never set are left out; nn.Module's own annotations are not the class's."""
    found = {
        name: (attribute.type, list(value) if isinstance(value := attribute.value, tuple) else value)
        for name, attribute in annotated_attributes(Annotated()).items()
    }
    assert found == {
        "count": (ir.AttributeType.INT, 3),
        "flag": (ir.AttributeType.INT, 1),
        "mode": (ir.AttributeType.STRING, "fast"),
        "ratio": (ir.AttributeType.FLOAT, 0.5),
        "scales": (ir.AttributeType.FLOATS, [0.25, 4.0]),
        "sizes": (ir.AttributeType.INTS, [1, 2]),
    }


def test_module_call_scopes_read_back() -> None:
    scope = "/".join([module_call_scope("b", 1), module_call_scope("b.act", 2), module_call_scope("b.lin", 0)])
    assert scope == "b..1/b.act..2/b.lin"
    assert module_calls(scope) == (("b", 1), ("b.act", 2), ("b.lin", 0))
    assert module_calls("__module.b/__module.b.lin") == (("b", 0), ("b.lin", 0))
    assert module_calls("") == ()
