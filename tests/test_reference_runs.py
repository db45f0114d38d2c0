"""The suite's second runtime (tests/reference_runs.py): which models it runs, that the shared
run helper fails a test when it disagrees with onnxruntime, and that each correction and
exclusion of onnx's evaluator still answers a real defect of it (when onnx fixes one, its
test here fails: drop the correction or exclusion then)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
import reference_runs
import torch
from conftest import NEWEST, Wrap, export_to_bytes, run_model
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from exporter.verify import run_onnxruntime


def _model(
    nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto], opset: int = 17
) -> onnx.ModelProto:
    model = helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", opset)]
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def _scan_loop(item_shape: list[int]) -> onnx.ModelProto:
    """A Loop of ``n`` iterations whose scan output is ``x`` (of ``item_shape``) each time."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Identity", ["x"], ["item"])],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("item", TensorProto.FLOAT, item_shape),
        ],
    )
    return _model(
        [
            helper.make_node("Constant", [], ["true"], value=helper.make_tensor("t", TensorProto.BOOL, [], [True])),
            helper.make_node("Loop", ["n", "true"], ["stacked"], body=body),
        ],
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, item_shape),
        ],
        [helper.make_tensor_value_info("stacked", TensorProto.FLOAT, [None, *item_shape])],
    )


@pytest.mark.parametrize("item_shape", [[], [3], [2, 3]], ids=["scalar", "vector", "matrix"])
@pytest.mark.parametrize("count", [0, 1, 4])
def test_loop_scan_outputs_stack_as_onnxruntime_does(item_shape: list[int], count: int) -> None:
    model = _scan_loop(item_shape)
    x = np.arange(int(np.prod(item_shape)), dtype=np.float32).reshape(item_shape)
    n = np.array(count, dtype=np.int64)
    (expected,) = run_onnxruntime(model.SerializeToString(), [torch.from_numpy(n), torch.from_numpy(x)], optimize=False)
    (actual,) = reference_runs.run(model, [n, x])
    assert actual.shape == expected.shape == (count, *item_shape)
    np.testing.assert_array_equal(actual, expected)


def test_onnx_evaluator_still_misstacks_scan_outputs() -> None:
    """Why reference_runs corrects Loop: onnx's own stacks a scalar per iteration into (N, 1)."""
    model = _scan_loop([])
    (stacked,) = ReferenceEvaluator(model).run(
        None, {"n": np.array(3, dtype=np.int64), "x": np.array(1.0, dtype=np.float32)}
    )
    assert stacked.shape == (3, 1)


def _insert_model() -> onnx.ModelProto:
    sequence = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [1])
    return _model(
        [helper.make_node("SequenceInsert", ["s", "x", "at"], ["inserted"])],
        [
            sequence,
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("at", TensorProto.INT64, []),
        ],
        [helper.make_tensor_sequence_value_info("inserted", TensorProto.FLOAT, [1])],
    )


@pytest.mark.parametrize(("length", "position"), [(0, 0), (2, 2), (2, 0), (2, -1), (3, -3)])
def test_sequence_insert_at_every_valid_position(length: int, position: int) -> None:
    items = [np.array([float(i)], dtype=np.float32) for i in range(length)]
    x, at = np.array([9.0], dtype=np.float32), np.array(position, dtype=np.int64)
    model = _insert_model()
    expected = run_onnxruntime(
        model.SerializeToString(),
        [[torch.from_numpy(i) for i in items], torch.from_numpy(x), torch.from_numpy(at)],
        optimize=False,
    )[0]
    actual = reference_runs.run(model, [items, x, at])[0]
    assert [a.tolist() for a in actual] == [e.tolist() for e in expected]


def test_onnx_evaluator_still_inserts_at_the_length_first() -> None:
    """Why reference_runs corrects SequenceInsert: onnx's takes the position modulo the length."""
    items = [np.array([0.0], dtype=np.float32), np.array([1.0], dtype=np.float32)]
    (inserted,) = ReferenceEvaluator(_insert_model()).run(
        None, {"s": items, "x": np.array([9.0], dtype=np.float32), "at": np.array(2, dtype=np.int64)}
    )
    assert [float(item[0]) for item in inserted] == [9.0, 0.0, 1.0]


def test_onnx_evaluator_still_misruns_grouped_conv_transpose() -> None:
    """Why grouped ConvTranspose is excluded: onnx's evaluator fails on it where onnxruntime
    runs it as torch does."""
    conv = torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
    data, _ = export_to_bytes(conv, (torch.randn(1, 4, 5, 5),), opset_version=NEWEST)
    model = onnx.load_from_string(data)
    assert reference_runs.ineligible(model, [np.zeros((1, 4, 5, 5), np.float32)]) is not None
    with pytest.raises(ValueError, match="cannot reshape"):
        ReferenceEvaluator(model).run(None, {model.graph.input[0].name: np.zeros((1, 4, 5, 5), np.float32)})


@pytest.mark.parametrize("op", sorted(reference_runs.EXCLUDED_OPS))
def test_every_excluded_op_has_a_reason(op: str) -> None:
    assert onnx.defs.has(op), f"{op} is not an ONNX op"
    assert reference_runs.EXCLUDED_OPS[op]


def _relus(count: int) -> onnx.ModelProto:
    names = ["x", *[f"r{i}" for i in range(count)]]
    return _model(
        [helper.make_node("Relu", [a], [b]) for a, b in zip(names, names[1:])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, [2])],
    )


def test_which_models_the_evaluator_runs() -> None:
    small = np.zeros(2, np.float32)
    assert reference_runs.ineligible(_relus(3), [small]) is None
    assert (
        reference_runs.ineligible(_relus(reference_runs.MAX_NODES + 1), [small])
        == f"{reference_runs.MAX_NODES + 1} nodes"
    )
    big = np.zeros(reference_runs.MAX_ELEMENTS + 1, np.float32)
    assert reference_runs.ineligible(_relus(3), [big]) == f"{reference_runs.MAX_ELEMENTS + 1} elements"
    random = _model(
        [helper.make_node("RandomNormalLike", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    assert reference_runs.ineligible(random, [small]) == "RandomNormalLike"


def test_an_op_the_evaluator_lacks_is_named() -> None:
    """MaxRoiPool has no implementation in the evaluator: a model using it is not run there
    (the shared helper skips it), and the reason names the op."""
    model = _model(
        [helper.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[1, 1])],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
            helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 5]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])],
        opset=13,
    )
    with pytest.raises(reference_runs.NotImplementedByEvaluator, match="MaxRoiPool"):
        reference_runs.run(model, [np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 5), np.float32)])


def test_the_run_helper_fails_when_the_runtimes_disagree(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_model runs the evaluator too and compares: an evaluator that answers differently
    fails the test (here the evaluator's answer is shifted by one)."""
    data, _ = export_to_bytes(Wrap(torch.relu), (torch.randn(3),), opset_version=NEWEST)
    run_model(data, [torch.randn(3)])
    original = reference_runs.run

    def shifted(model: onnx.ModelProto, inputs: list[Any]) -> list[Any]:
        return [out + 1 for out in original(model, inputs)]

    monkeypatch.setattr(reference_runs, "run", shifted)
    with pytest.raises(AssertionError, match="reference evaluator against onnxruntime"):
        run_model(data, [torch.randn(3)])


def _node_model(node: onnx.NodeProto, inputs: dict[str, np.ndarray], outputs: list[str], opset: int) -> onnx.ModelProto:
    """One node over typed inputs, its outputs typed by inference."""
    infos = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in inputs.items()
    ]
    model = helper.make_model(
        helper.make_graph([node], "g", infos, [helper.make_empty_tensor_value_info(o) for o in outputs]),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    onnx.checker.check_model(model, full_check=True)
    return model


_RNG = np.random.default_rng(0)


def _floats(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


# (name, model, feed): an op of onnx's evaluator that reference_runs corrects to the spec
CORRECTED: list[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]] = [
    (
        "gather_elements_smaller_indices",
        _node_model(
            helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0),
            {"x": _floats(4, 3), "i": np.array([[3, 0], [1, 2]], np.int64)},
            ["y"],
            13,
        ),
        {"x": _floats(4, 3), "i": np.array([[3, 0], [1, 2]], np.int64)},
    ),
    (
        "gather_elements_over_64",
        _node_model(
            helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1),
            {"x": _floats(2, 70), "i": np.array([[69, 0], [-1, 65]], np.int64)},
            ["y"],
            13,
        ),
        {"x": _floats(2, 70), "i": np.array([[69, 0], [-1, 65]], np.int64)},
    ),
    (
        "pad_negative",
        _node_model(
            helper.make_node("Pad", ["x", "p"], ["y"], mode="constant"),
            {"x": _floats(3, 4), "p": np.array([-1, 2, 1, -2], np.int64)},
            ["y"],
            13,
        ),
        {"x": _floats(3, 4), "p": np.array([-1, 2, 1, -2], np.int64)},
    ),
    (
        "pad_negative_attribute",
        _node_model(
            helper.make_node("Pad", ["x"], ["y"], pads=[0, -1, 1, 2], mode="edge"), {"x": _floats(3, 4)}, ["y"], 9
        ),
        {"x": _floats(3, 4)},
    ),
    (
        "grid_sample_16_bilinear",
        _node_model(
            helper.make_node("GridSample", ["x", "g"], ["y"], mode="bilinear"),
            {"x": _floats(1, 2, 4, 5), "g": _floats(1, 3, 2, 2)},
            ["y"],
            16,
        ),
        {"x": _floats(1, 2, 4, 5), "g": np.clip(_floats(1, 3, 2, 2), -1, 1)},
    ),
    (
        "batch_normalization_9_inference",
        _node_model(
            helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"]),
            {"x": _floats(2, 3, 4), "s": _floats(3), "b": _floats(3), "m": _floats(3), "v": np.ones(3, np.float32)},
            ["y"],
            9,
        ),
        {"x": _floats(2, 3, 4), "s": _floats(3), "b": _floats(3), "m": _floats(3), "v": np.ones(3, np.float32)},
    ),
    (
        "roi_align_10",
        _node_model(
            helper.make_node("RoiAlign", ["x", "r", "i"], ["y"], output_height=2, output_width=2, sampling_ratio=2),
            {"x": _floats(1, 1, 6, 6), "r": np.array([[0.5, 1.0, 4.0, 5.0]], np.float32), "i": np.array([0], np.int64)},
            ["y"],
            10,
        ),
        {"x": _floats(1, 1, 6, 6), "r": np.array([[0.5, 1.0, 4.0, 5.0]], np.float32), "i": np.array([0], np.int64)},
    ),
    (
        "dequantize_linear_13_per_axis",
        _node_model(
            helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1),
            {"x": np.arange(6, dtype=np.uint8).reshape(2, 3), "s": _floats(3), "z": np.array([1, 2, 3], np.uint8)},
            ["y"],
            13,
        ),
        {"x": np.arange(6, dtype=np.uint8).reshape(2, 3), "s": _floats(3), "z": np.array([1, 2, 3], np.uint8)},
    ),
    (
        "scatter_9",
        _node_model(
            helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1),
            {"x": _floats(2, 4), "i": np.array([[3, 0], [1, 2]], np.int64), "u": _floats(2, 2)},
            ["y"],
            9,
        ),
        {"x": _floats(2, 4), "i": np.array([[3, 0], [1, 2]], np.int64), "u": _floats(2, 2)},
    ),
    (
        "resize_10_nearest",
        _node_model(
            helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest"),
            {"x": _floats(1, 1, 3, 4), "s": np.array([1, 1, 2, 1.5], np.float32)},
            ["y"],
            10,
        ),
        {"x": _floats(1, 1, 3, 4), "s": np.array([1, 1, 2, 1.5], np.float32)},
    ),
]


def _onnxruntime(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[Any]:
    return run_onnxruntime(model.SerializeToString(), [torch.from_numpy(v) for v in feed.values()], optimize=False)


def _onnx_evaluator_agrees(model: onnx.ModelProto, feed: dict[str, np.ndarray], expected: list[Any]) -> bool:
    try:
        actual = ReferenceEvaluator(model).run(None, feed)
        reference_runs.assert_runtimes_agree(actual, expected)
    except Exception:  # noqa: BLE001 - a failure of any kind is the defect this test looks for
        return False
    return True


@pytest.mark.parametrize(("model", "feed"), [c[1:] for c in CORRECTED], ids=[c[0] for c in CORRECTED])
def test_corrected_ops_agree_with_onnxruntime_where_onnx_evaluator_does_not(
    model: onnx.ModelProto, feed: dict[str, np.ndarray]
) -> None:
    expected = _onnxruntime(model, feed)
    reference_runs.assert_runtimes_agree(reference_runs.run(model, list(feed.values())), expected)
    assert not _onnx_evaluator_agrees(model, feed, expected), "onnx's evaluator is right now: drop the correction"


def _lstm(activations: list[str] | None = None, op: str = "LSTM") -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    feed = {
        "x": _floats(3, 2, 2),
        "w": _floats(1, gates * 4, 2),
        "r": _floats(1, gates * 4, 4),
        "b": _floats(1, gates * 8),
        "lens": np.array([1, 3], np.int32),
    }
    extra = {"activations": activations} if activations else {}
    node = helper.make_node(op, ["x", "w", "r", "b", "lens"], ["y"], hidden_size=4, **extra)
    return _node_model(node, feed, ["y"], 14), feed


def _excluded_form(model: onnx.ModelProto) -> str | None:
    return reference_runs.ineligible(model, [])


EXCLUDED_FORMS_SEEN: list[tuple[str, Any]] = [
    ("lstm_sequence_lens", lambda: _lstm()),
    ("gru_sequence_lens", lambda: _lstm(op="GRU")),
    ("rnn_relu", lambda: _lstm(["Relu"], op="RNN")),
    (
        "max_pool_indices",
        lambda: (
            _node_model(
                helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2]),
                {"x": _floats(1, 2, 4, 4)},
                ["y", "i"],
                12,
            ),
            {"x": _floats(1, 2, 4, 4)},
        ),
    ),
]


@pytest.mark.parametrize("build", [b for _, b in EXCLUDED_FORMS_SEEN], ids=[n for n, _ in EXCLUDED_FORMS_SEEN])
def test_excluded_forms_are_still_evaluator_defects(build: Any) -> None:
    """Each exclusion of reference_runs.EXCLUDED_FORMS answers a defect: the model is not run
    there, and onnx's evaluator (which would run it) disagrees with onnxruntime or fails."""
    model, feed = build()
    assert _excluded_form(model) is not None
    assert not _onnx_evaluator_agrees(model, feed, _onnxruntime(model, feed)), (
        "onnx's evaluator is right now: drop the exclusion"
    )


def test_empty_optionals_are_still_evaluator_defects() -> None:
    """Why Optional* are excluded: an empty optional output is None in onnxruntime, and onnx's
    evaluator gives something else."""
    optional_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    model = _model(
        [helper.make_node("Optional", [], ["y"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_value_info("y", optional_type)],
        opset=18,
    )
    assert reference_runs.ineligible(model, []) == "Optional"
    feed = {"x": np.zeros(2, np.float32)}
    assert _onnxruntime(model, feed) == [None]
    assert not _onnx_evaluator_agrees(model, feed, [None])
