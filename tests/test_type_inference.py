"""type_inference: ONNX's per-node inference, and its results shared between equal nodes."""

from __future__ import annotations

from typing import Any

import onnx_ir as ir
import pytest
from cases import signature_opsets
from conftest import MIN_OPSET, around

from exporter.graph_context import ExportOptions, GraphBuilder
from exporter.type_inference import infer_with_onnx


def _builder(*inputs: ir.Value) -> GraphBuilder:
    graph = ir.Graph(list(inputs), [], nodes=[], name="g", opset_imports={"": 18})
    return GraphBuilder(graph, ExportOptions(opset=18))


def test_equal_nodes_share_one_inference_and_different_constants_do_not() -> None:
    """Reshapes of one input by equal shape constants reuse the first result; a different
    constant (only its data differs) is inferred on its own."""
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape(["n", 3, 4]))
    builder = _builder(x)
    (first,) = builder.add_node("Reshape", [x, builder.constant([0, 12])], {})
    (second,) = builder.add_node("Reshape", [x, builder.constant([0, -1])], {})
    (third,) = builder.add_node("Reshape", [x, builder.constant([0, 12])], {})
    (other,) = builder.add_node("Reshape", [x, builder.constant([0, 3, 2, 2])], {})
    assert [str(first.shape), str(second.shape), str(third.shape), str(other.shape)] == [
        "[n,12]",
        "[n,12]",
        "[n,12]",
        "[n,3,2,2]",
    ]
    assert len(builder._inference_cache) == 3  # [0, 12] twice: one entry
    assert third.shape is not first.shape  # each output has its own (mutable) shape


def test_cached_results_equal_uncached_inference() -> None:
    """The same nodes typed with and without the cache get the same dtypes and shapes,
    including outputs ONNX leaves untyped and attributes that change the result."""
    ops = [
        ("Split", {"axis": 2, "num_outputs": 2}, 2),
        ("Split", {"axis": 0, "num_outputs": 2}, 2),
        ("ReduceMax", {"keepdims": 0}, 1),
        ("ReduceMax", {"keepdims": 1}, 1),
        ("Shape", {"start": 1}, 1),
    ]
    typed = []
    for use_cache in (True, False):
        x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT16), shape=ir.Shape([2, "s", 8]))
        builder = _builder(x)
        results = []
        for op_type, attributes, outputs in ops * 2:
            values = builder.add_node(op_type, [x], attributes, num_outputs=outputs, infer_types=False)
            node = values[0].producer()
            infer_with_onnx(node, 18, builder._inference_cache if use_cache else None)
            results.append([(v.dtype, str(v.shape)) for v in values])
        typed.append(results)
    assert typed[0] == typed[1]
    assert typed[0][0] == [(ir.DataType.FLOAT16, "[2,s,4]")] * 2
    assert typed[0][1] == [(ir.DataType.FLOAT16, "[1,s,8]")] * 2
    assert typed[0][2] == [(ir.DataType.FLOAT16, "[]")]
    assert typed[0][3] == [(ir.DataType.FLOAT16, "[1,1,1]")]


def test_run_time_slice_and_top_k_keep_the_dims_they_do_not_touch() -> None:
    """onnx types a Slice with run-time starts/ends, and a TopK with a run-time k, by their
    rank only; the dims they do not slice keep their sizes (a batch of 1 stays 1)."""
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([1, "n", 4]))
    start = ir.Value(name="start", type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([1]))
    k = ir.Value(name="k", type=ir.TensorType(ir.DataType.INT64), shape=ir.Shape([1]))
    builder = _builder(x, start, k)
    (sliced,) = builder.add_node("Slice", [x, start, builder.constant([9]), builder.constant([-2])], {})
    values, indices = builder.add_node("TopK", [x, k], {"axis": 1}, num_outputs=2)
    (constant_k,) = builder.add_node(
        "Slice", [x, builder.constant([0]), builder.constant([2]), builder.constant([2])], {}
    )
    assert (sliced.dtype, str(sliced.shape)) == (ir.DataType.FLOAT, "[1,None,4]")
    assert [(v.dtype, str(v.shape)) for v in (values, indices)] == [
        (ir.DataType.FLOAT, "[1,None,4]"),
        (ir.DataType.INT64, "[1,None,4]"),
    ]
    assert str(constant_k.shape) == "[1,n,2]"  # constant bounds: onnx's own inference


def test_reshape_to_a_run_time_shape_has_its_rank_below_opset_14() -> None:
    """onnx's Reshape-13 inference leaves a Reshape to a computed shape untyped (Reshape-14's
    gives the rank): the rank is the shape's length at every opset."""
    for opset in sorted({MIN_OPSET, *around(*signature_opsets("reshape_keeping_zeros"))}):
        x = ir.Value(name="x", type=ir.TensorType(ir.DataType.FLOAT), shape=ir.Shape([None, 6, None, None]))
        graph = ir.Graph([x], [], nodes=[], name="g", opset_imports={"": opset})
        builder = GraphBuilder(graph, ExportOptions(opset=opset))
        (shape,) = builder.add_node("Shape", [x], {})
        (leading,) = builder.add_node("Gather", [shape, builder.constant([0, 1])], {"axis": 0})
        (target,) = builder.add_node("Concat", [leading, builder.constant([-1])], {"axis": 0})
        (flat,) = builder.add_node("Reshape", [x, target], {})
        assert (flat.dtype, flat.shape is not None and len(flat.shape)) == (ir.DataType.FLOAT, 3), opset


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (["n", 3, 4], [4, 5], "[None,3,5]"),  # a named batch dim is not kept (broadcast rules)
        ([2, 1, 3, 4], [4], "[2,1,3]"),  # a column: its axis is dropped
        ([4], [2, 4, 5], "[2,5]"),  # a row: its axis is dropped
        ([4], [4], "[]"),
        ([7, 1, 3, 4], [2, 4, 5], "[7,2,3,5]"),
    ],
)
def test_matmul_rank_with_one_dimensional_operands(a: list[Any], b: list[Any], expected: str) -> None:
    """MatMul is typed by the rules alone (ONNX's inference is skipped for it), so a vector
    operand must give the result's rank too: a graph output needs one."""
    x = ir.Value(name="x", type=ir.TensorType(ir.DataType.INT32), shape=ir.Shape(a))
    y = ir.Value(name="y", type=ir.TensorType(ir.DataType.INT32), shape=ir.Shape(b))
    (out,) = _builder(x, y).add_node("MatMul", [x, y], {})
    assert (out.dtype, str(out.shape)) == (ir.DataType.INT32, expected)
