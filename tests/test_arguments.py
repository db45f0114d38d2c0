"""Annotation-driven conversion of graph values into a symbolic's arguments (exporter/arguments.py):
specs read from annotations, conversions by annotation, errors naming the argument, and binding
by schema name (scalar overloads take the tensor overload's names)."""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import pytest
import torch

from exporter import arguments
from exporter.arguments import ArgumentError, Kind, convert, read_param_specs
from exporter.graph_context import ExportOptions, GraphBuilder, GraphContext


def _context() -> GraphContext:
    graph = ir.Graph([], [], nodes=[], opset_imports={"": 17})
    return GraphContext(GraphBuilder(graph, ExportOptions(opset=17)), None)


def sample(
    g: GraphContext,
    self: ir.Value,
    dims: Sequence[int],
    size: Sequence[int] | ir.Value,
    alpha: float = 1.0,
    dtype: torch.dtype | None = None,
    maybe: ir.Value | None = None,
    flag: bool = False,
) -> ir.Value:
    return self


def test_specs_are_read_from_annotations() -> None:
    specs = {s.name: s for s in read_param_specs(sample)}
    assert specs["self"].kinds == (Kind.VALUE,)
    assert specs["dims"].kinds == (Kind.INTS,)
    assert specs["size"].kinds == (Kind.INTS, Kind.VALUE)
    assert specs["alpha"].kinds == (Kind.FLOAT,) and specs["alpha"].has_default
    assert specs["dtype"].optional and specs["maybe"].optional
    assert not specs["self"].optional


def test_kwargs_parameter_is_refused() -> None:
    def hides(g: GraphContext, self: ir.Value, **rest: object) -> ir.Value:
        return self

    with pytest.raises(TypeError, match="would hide"):
        read_param_specs(hides)


def test_conversions() -> None:
    g = _context()
    specs = {s.name: s for s in read_param_specs(sample)}
    assert convert(g, [1, 2], specs["dims"]) == [1, 2]
    assert convert(g, torch.tensor(3), specs["alpha"]) == 3.0
    assert convert(g, 6, specs["dtype"]) is torch.float32
    assert convert(g, None, specs["dtype"]) is None
    assert convert(g, [2, 3], specs["size"]) == [2, 3]
    value = convert(g, torch.ones(2), specs["self"])
    assert isinstance(value, ir.Value) and value.const_value is not None
    assert convert(g, True, specs["flag"]) is True


def test_dynamic_list_becomes_a_value() -> None:
    g = _context()
    dynamic = ir.Value(name="n", type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([]))
    specs = {s.name: s for s in read_param_specs(sample)}
    result = convert(g, [dynamic, -1], specs["size"])
    assert isinstance(result, ir.Value)
    assert result.producer().op_type == "Concat"


def test_errors_name_the_argument() -> None:
    g = _context()
    specs = {s.name: s for s in read_param_specs(sample)}
    dynamic = ir.Value(name="n", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([]))
    with pytest.raises(ArgumentError, match="'alpha'.*constant float"):
        convert(g, dynamic, specs["alpha"])
    with pytest.raises(ArgumentError, match="'self' is None"):
        convert(g, None, specs["self"])


def test_union_keeps_the_python_type_of_constants() -> None:
    """bool | int | float: an int stays an int (it once became True), a float a float."""

    def fill(g: GraphContext, self: ir.Value, fill_value: bool | int | float | ir.Value) -> ir.Value:
        return self

    g = _context()
    (_, spec) = read_param_specs(fill)
    assert convert(g, 15, spec) == 15 and type(convert(g, 15, spec)) is int
    assert convert(g, torch.tensor(15), spec) == 15
    assert convert(g, 2.5, spec) == 2.5
    assert convert(g, True, spec) is True
    assert convert(g, 1, spec) == 1 and type(convert(g, 1, spec)) is int


def test_bind_by_name_gives_scalar_operands_the_tensor_names() -> None:
    schema = torch._C.parse_schema("aten::add.int(int a, int b) -> int")
    bound = arguments.bind_by_name(schema, [1, 2], ["self", "other"])
    assert {name: obj for name, (_, obj) in bound.items()} == {"self": 1, "other": 2}


def test_bind_by_name_keeps_names_a_symbolic_asks_for() -> None:
    schema = torch._C.parse_schema("aten::add.int(int a, int b) -> int")
    bound = arguments.bind_by_name(schema, [1, 2], ["a", "b"])
    assert set(bound) == {"a", "b"}
