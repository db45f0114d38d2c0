"""Nodes fitted into the dtypes their ONNX op takes (exporter.type_constraints, applied by
GraphBuilder.add_node to every node): the casts planned from the schemas, a table of torch ops
on the integer, bool and float16 dtypes some opset's schema refuses, each exported, checked
(onnx's full check and strict inference, as every export in the suite) and compared with torch
in onnxruntime and in onnx's reference evaluator, and the runtime gaps, each of which must
still be a gap."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime
import pytest
import torch
from conftest import BASE_OPSETS, HELPER_OPSETS, Wrap, assert_outputs_match, export_to_bytes, run_model, run_reference
from onnx import helper

from exporter.tensors import from_torch_dtype
from exporter.type_constraints import RUNTIME_GAPS, accepted_dtypes, plan_casts

D = ir.DataType
F = torch.nn.functional


@pytest.mark.parametrize(
    ("op_type", "schema_opset", "dtypes", "inputs", "outputs"),
    [
        # ReduceMax never takes int16: widened to int32, and the result narrowed back
        ("ReduceMax", 18, [D.INT16, D.INT64], {0: D.INT32}, {0: D.INT16}),
        # Add takes 8- and 16-bit integers from 14 only; both operands share one type parameter
        ("Add", 13, [D.UINT8, D.UINT8], {0: D.INT32, 1: D.INT32}, {0: D.UINT8}),
        ("MatMul", 13, [D.INT8, D.INT8], {0: D.INT32, 1: D.INT32}, {0: D.INT8}),
        # Pad before 11 takes floats only: int32 is exact in double, not in float
        ("Pad", 9, [D.INT32], {0: D.DOUBLE}, {0: D.INT32}),
        # Equal takes no 16-bit integers below 11; its output (bool) is not cast back
        ("Equal", 9, [D.INT16, D.INT16], {0: D.INT32, 1: D.INT32}, {}),
        # float16 goes through float only where the op has no float16 (CumSum before 14)
        ("CumSum", 13, [D.FLOAT16, D.INT64], {0: D.FLOAT}, {0: D.FLOAT16}),
        # a runtime gap: the schema allows an int16 Where, onnxruntime has no kernel for it
        ("Where", 16, [D.BOOL, D.INT16, D.INT16], {1: D.INT32, 2: D.INT32}, {0: D.INT16}),
    ],
)
def test_casts_are_planned_from_the_schema(
    op_type: str,
    schema_opset: int,
    dtypes: list[ir.DataType],
    inputs: dict[int, ir.DataType],
    outputs: dict[int, ir.DataType],
) -> None:
    """Each row is a fact of one schema version (not an opset the exporter is tested at)."""
    plan = plan_casts(op_type, schema_opset, dtypes, 1)
    assert plan is not None
    assert (dict(plan.inputs), dict(plan.outputs)) == (inputs, outputs)


@pytest.mark.parametrize(
    ("op_type", "schema_opset", "dtypes"),
    [
        ("Add", 14, [D.UINT8, D.UINT8]),  # taken as it is from 14
        ("ReduceMax", 18, [D.INT8, D.INT64]),
        ("Gather", 13, [D.INT16, D.INT64]),  # Gather takes every dtype
        ("Add", 13, [D.INT16, D.INT32]),  # operands that disagree: a symbolic's mistake, left to the checker
        ("Add", 13, [D.INT64, D.INT64]),
        ("Sqrt", 13, [D.INT64]),  # no exact wider dtype: left as written, for the checker to name
    ],
)
def test_nodes_that_fit_or_cannot_fit_are_left_as_written(
    op_type: str, schema_opset: int, dtypes: list[ir.DataType]
) -> None:
    assert plan_casts(op_type, schema_opset, dtypes, 1) is None


@dataclasses.dataclass(frozen=True)
class Row:
    """A torch function whose export emits ``op_type`` on its input's dtype, which the op's
    schema (or onnxruntime) refuses at some of the opsets the table runs."""

    name: str
    fn: Callable[..., Any]
    op_type: str
    dtypes: tuple[torch.dtype, ...]


SMALL_INTS = (torch.int16, torch.int8, torch.uint8)
ROWS = (
    Row("amax", lambda x: torch.amax(x, 1), "ReduceMax", (*SMALL_INTS, torch.bool)),
    Row("amin", lambda x: torch.amin(x, 0), "ReduceMin", SMALL_INTS),
    Row("sum_to_dtype", lambda x: x.sum(1, dtype=x.dtype), "ReduceSum", SMALL_INTS),
    Row("add", lambda x: x + x, "Add", SMALL_INTS),
    Row("mul", lambda x: x * x, "Mul", SMALL_INTS),
    Row("sub", lambda x: x * 2 - x, "Sub", SMALL_INTS),
    Row("equal", lambda x: x == 2, "Equal", (*SMALL_INTS, torch.bool)),
    Row("matmul", lambda x: x @ x.t(), "MatMul", SMALL_INTS),
    Row("constant_pad", lambda x: F.pad(x, (1, 2)), "Pad", (*SMALL_INTS, torch.int32)),
    Row("where", lambda x: torch.where(x > 1, x, x * 2), "Where", SMALL_INTS),
    Row("maximum", lambda x: torch.maximum(x, x.flip(0)), "Max", SMALL_INTS),
    Row("relu", torch.relu, "Relu", (torch.int16, torch.int8)),
    Row("clamp", lambda x: x.clamp(1, 2), "Clip", SMALL_INTS),
    Row("topk", lambda x: x.topk(2, 1)[0], "TopK", SMALL_INTS),
    Row("cumsum", lambda x: x.cumsum(1, dtype=x.dtype), "CumSum", (torch.int16, torch.float16)),
)
TABLE_OPSETS = tuple(sorted({*BASE_OPSETS, *HELPER_OPSETS}))


def _example(dtype: torch.dtype) -> torch.Tensor:
    """Small values (0 to 2), so the 8-bit products and sums torch computes do not wrap."""
    return (torch.arange(12).reshape(3, 4) % 3).to(dtype)


@pytest.mark.parametrize("opset", TABLE_OPSETS)
@pytest.mark.parametrize(
    ("row", "dtype"), [pytest.param(row, dtype, id=f"{row.name}-{dtype}") for row in ROWS for dtype in row.dtypes]
)
def test_ops_on_dtypes_their_schema_refuses(row: Row, dtype: torch.dtype, opset: int) -> None:
    model, x = Wrap(row.fn), _example(dtype)
    data, _ = export_to_bytes(model, (x,), opset_version=opset)  # checked when written (conftest)
    with torch.no_grad():
        expected = model(x.clone())
    assert_outputs_match(run_model(data, [x.clone()]), expected)
    assert_outputs_match(run_reference(data, [x.clone()]), expected)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_each_row_meets_a_refusal(row: Row) -> None:
    """A row the schemas and runtime gaps accept at every opset of the table tests nothing."""
    refused = [
        (opset, dtype)
        for opset in TABLE_OPSETS
        for dtype in row.dtypes
        if from_torch_dtype(dtype) not in (accepted_dtypes(row.op_type, opset, 0) or set())
    ]
    assert refused


_NUMPY = {D.BOOL: np.bool_, D.INT16: np.int16, D.UINT16: np.uint16, D.INT32: np.int32}


@pytest.mark.parametrize(
    ("gap", "dtype", "opset"),
    [
        pytest.param(gap, dtype, gap.opsets.start, id=f"{gap.op}-{dtype.name}")
        for gap in RUNTIME_GAPS
        for dtype in sorted(gap.dtypes, key=lambda d: d.value)
    ],
)
def test_runtime_gaps_are_still_gaps(gap: Any, dtype: ir.DataType, opset: int) -> None:
    """Each entry of RUNTIME_GAPS names a kernel onnxruntime lacks: once it has it, the entry
    only costs casts and this test says to remove it."""
    value = np.ones((2, 3), _NUMPY[dtype])
    if gap.op == "Where":
        node = helper.make_node("Where", ["c", "x", "x"], ["y"])
        inputs = [helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, [2, 3])]
        feed = {"c": np.ones((2, 3), np.bool_), "x": value}
    else:
        assert gap.op == "Pad", f"no model to try {gap.op} in: write one here"
        node = helper.make_node(gap.op, ["x", "pads"], ["y"])
        inputs = [helper.make_tensor_value_info("pads", onnx.TensorProto.INT64, [4])]
        feed = {"x": value, "pads": np.array([0, 1, 0, 1], np.int64)}
    inputs.append(helper.make_tensor_value_info("x", int(dtype), [2, 3]))
    graph = helper.make_graph([node], "gap", inputs, [helper.make_tensor_value_info("y", int(dtype), None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with pytest.raises(onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented):
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)
