"""The record that lays out what an ONNX If or Loop carries (exporter.control_flow.slots): group
positions, the Loop's and the body's inputs, the extra outputs, reading back by group name,
and a small ONNX Loop built from a layout, run in onnxruntime against the same loop in torch."""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from conftest import assert_outputs_match, run_model

from exporter.control_flow.slots import LoopSlots, Slots, SlotsError
from exporter.graph_context import ExportOptions, GraphBuilder


def _values(prefix: str, count: int) -> list[ir.Value]:
    return [ir.Value(name=f"{prefix}{i}") for i in range(count)]


def _layout() -> tuple[LoopSlots, dict[str, list[ir.Value]]]:
    """Two carried values of the block itself, a list, a scan output registered before two
    dict items, and a concat buffer (two values) whose initial values come later."""
    made = {
        name: _values(name, count)
        for name, count in [("start", 2), ("in", 2), ("list0", 1), ("list_in", 1), ("dict0", 2), ("dict_in", 2)]
    }
    made.update(buffer_in=_values("buffer_in", 2), buffer0=_values("buffer0", 2))
    slots = LoopSlots("carried", made["start"], made["in"])
    slots.carry("lists", made["list_in"], lambda: ["list out"], made["list0"])
    slots.scan("scans", 1, lambda: ["scan item"])
    slots.carry("dict items", made["dict_in"], lambda: ["dict out a", "dict out b"], made["dict0"])
    slots.carry("buffer", made["buffer_in"], lambda: ["buffer out", "sizes out"])
    return slots, made


def test_carried_groups_come_in_registration_order_and_scan_outputs_last() -> None:
    slots, _ = _layout()
    assert [slots.index("carried", i) for i in range(2)] == [0, 1]
    assert slots.index("lists") == 2
    assert [slots.index("dict items", i) for i in range(2)] == [3, 4]
    assert [slots.index("buffer", i) for i in range(2)] == [5, 6]
    assert slots.index("scans") == 7
    assert slots.output_count() == 8
    assert slots.carried_width() == 7
    assert slots.body_output_count() == 9
    assert slots.body_index("dict items", 1) == 5  # after the body's condition output


def test_loop_and_body_inputs_follow_the_layout() -> None:
    slots, made = _layout()
    slots.set_initial("buffer", made["buffer0"])
    assert slots.loop_inputs() == [*made["start"], *made["list0"], *made["dict0"], *made["buffer0"]]
    iteration, condition = ir.Value(name="i"), ir.Value(name="cond")
    assert slots.body_inputs(iteration, condition) == [
        iteration,
        condition,
        *made["in"],
        *made["list_in"],
        *made["dict_in"],
        *made["buffer_in"],
    ]


def test_extra_outputs_are_every_group_but_the_blocks_own_in_layout_order() -> None:
    slots, _ = _layout()
    assert slots.extra_outputs() == ["list out", "dict out a", "dict out b", "buffer out", "sizes out", "scan item"]


def test_outputs_are_read_back_by_group_name() -> None:
    slots, _ = _layout()
    outputs = _values("out", slots.output_count())
    assert slots.read("carried", outputs) == outputs[0:2]
    assert slots.read("lists", outputs) == outputs[2:3]
    assert slots.read("dict items", outputs) == outputs[3:5]
    assert slots.read("buffer", outputs) == outputs[5:7]
    assert slots.read("scans", outputs) == outputs[7:8]
    assert slots.carried_outputs(outputs) == outputs[:7]


def test_an_empty_group_reads_nothing_and_a_missing_one_has_no_width() -> None:
    slots = Slots("outputs", 2)
    slots.add("lists", 0, lambda: [])
    assert slots.read("lists", _values("out", 2)) == []
    assert slots.width("dummy") == 0
    assert slots.extra_outputs() == []


@pytest.mark.parametrize(
    "misuse",
    [
        lambda s: s.add("lists", 1, lambda: ["again"]),  # registered twice
        lambda s: s.read("dicts", _values("out", 3)),  # never registered
        lambda s: s.index("lists", 1),  # past the group's width
        lambda s: s.add("counted", 2, lambda: ["one"]) or s.extra_outputs(),  # computes too few values
    ],
    ids=["twice", "unknown", "past-width", "too-few-outputs"],
)
def test_a_misused_layout_is_an_error(misuse: object) -> None:
    slots = Slots("outputs", 1)
    slots.add("lists", 1, lambda: ["list out"])
    with pytest.raises(SlotsError):
        misuse(slots)  # type: ignore[operator]


def test_a_loop_group_needs_its_initial_values_before_the_loop_is_built() -> None:
    slots, _ = _layout()  # the buffer's initial values were never set
    with pytest.raises(SlotsError, match="buffer"):
        slots.loop_inputs()
    with pytest.raises(SlotsError, match="buffer"):
        slots.set_initial("buffer", _values("one", 1))


def _tensor_value(name: str, dtype: ir.DataType = ir.DataType.FLOAT, shape: list[int | None] | None = None) -> ir.Value:
    return ir.Value(name=name, type=ir.TensorType(dtype), shape=ir.Shape(shape if shape is not None else []))


def test_a_loop_built_from_the_layout_computes_what_torch_does() -> None:
    """A running sum (the block's own carried value), a running maximum (a second carried
    group) and each iteration's sum as a scan output: the Loop the layout describes runs in
    onnxruntime as the same loop runs in torch."""
    options = ExportOptions(opset=13)
    x = _tensor_value("x", shape=[None, 3])
    graph = ir.Graph([x], [], nodes=[], name="main", opset_imports={"": 13})
    main = GraphBuilder(graph, options)
    (first,) = main.add_node("Gather", [x, main.constant(0)], {"axis": 0})
    (shape,) = main.add_node("Shape", [x], {})
    (trip,) = main.add_node("Gather", [shape, main.constant(0)], {"axis": 0})
    iteration, condition = _tensor_value("i", ir.DataType.INT64), _tensor_value("cond", ir.DataType.BOOL)
    total_in, peak_in = _tensor_value("total_in", shape=[3]), _tensor_value("peak_in", shape=[3])
    body = ir.Graph([], [], nodes=[], name="body")
    inner = GraphBuilder(body, options, parent=main)
    (row,) = inner.add_node("Gather", [x, iteration], {"axis": 0})
    (total,) = inner.add_node("Add", [total_in, row], {})
    (peak,) = inner.add_node("Max", [peak_in, row], {})
    (condition_out,) = inner.add_node("Identity", [condition], {})
    (scanned,) = inner.add_node("Identity", [total], {})

    slots = LoopSlots("carried", [main.constant(torch.zeros(3))], [total_in])
    slots.scan("scans", 1, lambda: [scanned])
    slots.carry("peaks", [peak_in], lambda: [peak], [first])
    body.inputs.extend(slots.body_inputs(iteration, condition))
    body.outputs.extend([condition_out, total, *slots.extra_outputs()])
    assert len(body.outputs) == slots.body_output_count()
    outputs = main.add_node(
        "Loop",
        [trip, main.constant(True), *slots.loop_inputs()],
        {"body": body},
        num_outputs=slots.output_count(),
        infer_types=False,
    )
    graph.outputs.extend(
        [*slots.read("carried", outputs), *slots.read("peaks", outputs), *slots.read("scans", outputs)]
    )
    for value, dims in zip(graph.outputs, ([3], [3], [None, 3])):  # ONNX requires each output's rank
        value.type, value.shape = ir.TensorType(ir.DataType.FLOAT), ir.Shape(dims)
    model = ir.Model(graph, ir_version=8)

    def loop_in_torch(data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        total, peak, sums = torch.zeros(3), data[0], []
        for row in data:
            total = total + row
            peak = torch.maximum(peak, row)
            sums.append(total)
        return total, peak, torch.stack(sums)

    for data in (torch.randn(4, 3), torch.randn(1, 3), torch.randn(7, 3)):
        assert_outputs_match(run_model(model, [data]), loop_in_torch(data))
