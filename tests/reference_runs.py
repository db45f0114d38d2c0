"""The suite's second runtime: onnx's reference evaluator, on every small model it implements.

onnxruntime (optimizations off) is the runtime every test compares with eager torch. A model
that only onnxruntime runs could still lean on its leniency or on one of its kernels' quirks,
so ``conftest.run_model`` also runs each model the suite exports in
``onnx.reference.ReferenceEvaluator`` (the spec written as numpy) and asserts the two
runtimes agree, when the model is small enough for a Python interpreter of ONNX
(:data:`MAX_NODES`, :data:`MAX_ELEMENTS`) and uses no op in :data:`EXCLUDED_OPS`: ops the
evaluator lacks at the model's opset, implements against the spec, or whose results the spec
leaves open (random numbers). Each exclusion says why; removing one is the test that it still
holds. ``EXPORTER_REFERENCE_RUNS=0`` turns the second run off (for profiling a test).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import onnx

__all__ = [
    "EXCLUDED_OPS",
    "MAX_ELEMENTS",
    "MAX_NODES",
    "NotImplementedByEvaluator",
    "assert_runtimes_agree",
    "feed",
    "ineligible",
    "run",
]

# Above these sizes the evaluator (one numpy call per node, Python loops in some ops) costs more
# than the test it would check: nodes counted in every subgraph, elements over the graph
# inputs fed and the initializers and constants the model holds.
MAX_NODES = 1000
MAX_ELEMENTS = 1 << 20

# ops whose results the spec leaves open, or which the evaluator runs against the spec where
# onnxruntime agrees with torch (each checked in tests/test_reference_runs.py): the reason for
# each. Ops the evaluator lacks at a model's opset need no entry: such a model is not run.
EXCLUDED_OPS: dict[str, str] = {
    "RandomNormal": "random numbers: the spec fixes their distribution, not their values",
    "RandomNormalLike": "random numbers: the spec fixes their distribution, not their values",
    "RandomUniform": "random numbers: the spec fixes their distribution, not their values",
    "RandomUniformLike": "random numbers: the spec fixes their distribution, not their values",
    "Bernoulli": "random numbers: the spec fixes their distribution, not their values",
    "Multinomial": "random numbers: the spec fixes their distribution, not their values",
    "Optional": "the evaluator has no empty optional: it returns one as a value (onnxruntime: None) "
    "and its If refuses a branch that gives one",
    "OptionalGetElement": "reads optionals, which the evaluator cannot hold empty (see Optional)",
    "OptionalHasElement": "reads optionals, which the evaluator cannot hold empty (see Optional)",
}


def _attribute(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


# (op, when, why): the evaluator runs an op against the spec only with some attributes
EXCLUDED_FORMS: tuple[tuple[str, Callable[[onnx.NodeProto], bool], str], ...] = (
    (
        "ConvTranspose",
        lambda node: _attribute(node, "group", 1) > 1,
        "grouped: the evaluator slices the weight by output channel, not input channel",
    ),
    (
        "MaxPool",
        lambda node: len(node.output) > 1 and bool(node.output[1]),
        "indices: the evaluator counts them within one channel, the spec (and onnxruntime) over the whole tensor",
    ),
    *(
        (
            op,
            lambda node: len(node.input) > 4 and bool(node.input[4]),
            "with sequence_lens (packed sequences): the evaluator ignores it and runs every step of every item",
        )
        for op in ("RNN", "GRU", "LSTM")
    ),
    (
        "RNN",
        lambda node: any(a.lower() not in (b"tanh", b"affine") for a in _strings(node, "activations")),
        "activations other than Tanh: the evaluator has no other",
    ),
    (
        "Dropout",
        lambda node: len(node.input) > 2 and bool(node.input[2]),
        "with a training_mode input: random in training mode",
    ),
)


def _strings(node: onnx.NodeProto, name: str) -> list[bytes]:
    return next((list(a.strings) for a in node.attribute if a.name == name), [])


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attribute.g)
            for subgraph in attribute.graphs:
                yield from _nodes(subgraph)


def _elements(model: onnx.ModelProto, inputs: Sequence[Any]) -> int:
    held = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    for node in _nodes(model.graph):
        if node.op_type == "Constant":
            held += sum(int(np.prod(a.t.dims)) for a in node.attribute if a.type == onnx.AttributeProto.TENSOR)
    fed = sum(sum(a.size for a in x) if isinstance(x, list) else x.size for x in inputs)
    return held + fed


def ineligible(model: onnx.ModelProto, inputs: Sequence[Any]) -> str | None:
    """Why ``model`` is not run in the evaluator on ``inputs`` (None when it is)."""
    nodes = list(_nodes(model.graph))
    if len(nodes) > MAX_NODES:
        return f"{len(nodes)} nodes"
    for node in nodes:
        if node.domain not in ("", "ai.onnx"):
            return f"{node.domain}::{node.op_type}"
        if node.op_type in EXCLUDED_OPS:
            return node.op_type
        for op_type, when, _ in EXCLUDED_FORMS:
            if node.op_type == op_type and when(node):
                return f"{op_type} ({node.name})"
    elements = _elements(model, inputs)
    if elements > MAX_ELEMENTS:
        return f"{elements} elements"
    return None


def ops_of(model: onnx.ModelProto) -> list[str]:
    """The op types of ``model``, subgraphs included, each once."""
    return sorted({f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in _nodes(model.graph)})


def feed(model: onnx.ModelProto, inputs: Sequence[Any]) -> dict[str, Any]:
    """The evaluator's feed: numpy arrays (a list of them for a sequence input) by input name."""
    return {
        i.name: [np.asarray(item) for item in x] if isinstance(x, list) else np.asarray(x)
        for i, x in zip(model.graph.input, inputs)
    }


def run(model: onnx.ModelProto, inputs: Sequence[Any]) -> list[Any]:
    """``model`` in the reference evaluator on ``inputs`` (numpy, the model's own inputs)."""
    from onnx.reference import ReferenceEvaluator

    try:
        evaluator = ReferenceEvaluator(model, new_ops=_corrected_ops())
    except Exception as error:
        if "implementation for operator" in str(error):  # "No (registered) implementation ..."
            raise NotImplementedByEvaluator(str(error).split(",")[0]) from error
        raise
    try:
        return list(evaluator.run(None, feed(model, inputs)))
    except NotImplementedError as error:  # an attribute value the evaluator has no code for
        raise NotImplementedByEvaluator(str(error)) from error


class NotImplementedByEvaluator(Exception):
    """The evaluator has no implementation of an op of the model at the model's opset."""


def _corrected_ops() -> list[type]:
    """The evaluator's ops that misread the spec, as the spec reads (onnx 1.23)."""
    from onnx.reference.ops import (
        op_batch_normalization,
        op_dequantize_linear,
        op_gather_elements,
        op_grid_sample,
        op_loop,
        op_pad,
        op_resize,
        op_roi_align,
        op_scatter_elements,
        op_sequence_insert,
    )

    class Loop(op_loop.Loop):
        """Scan outputs stacked on a new first axis, as the spec says: onnx's ``np.vstack``
        turns 0-d per-iteration values into (N, 1) and (a, b) ones into (N * a, b), and fails
        on a loop that never runs (its scan outputs are then empty)."""

        def _run(self, M, cond, *carried, context=None, body=None, attributes=None, bindings=None):  # noqa: ANN001, ANN202, ARG002, N803
            names = self.body.input_names
            values = dict(context or {})
            values.update(zip(names[2:], carried))
            scans: list[list[Any]] = [[] for _ in range(self.K)]
            count = 0
            going = True if cond is None else bool(cond)
            while going and (M is None or count < int(M)):
                values[names[0]] = np.array(count, dtype=np.int64)
                values[names[1]] = np.array(going)
                outputs = self._run_body(values, attributes=attributes, bindings=bindings)
                going = bool(outputs[0])
                values.update(zip(names[2:], outputs[1 : 1 + self.N]))
                for scan, value in zip(scans, outputs[1 + self.N :]):
                    scan.append(value)
                count += 1
            results = [values[name] for name in names[2:]]
            body_graph = next(a.g for a in self.onnx_node.attribute if a.name == "body")
            for scan, output in zip(scans, body_graph.output[1 + self.N :]):
                results.append(np.stack(scan) if scan else _empty_scan(output))
            return self._check_and_fix_outputs(tuple(results))

    class SequenceInsert(op_sequence_insert.SequenceInsert):
        """A position counts from the end when negative, and may be the length (an append):
        onnx takes it modulo the length, so an insert at the length goes first and one into
        an empty sequence divides by zero."""

        def _run(self, S, T, ind=None):  # noqa: ANN001, ANN202, N803
            items = list(S) if S is not None else []
            if ind is None:
                items.append(T)
            else:
                position = int(np.asarray(ind).reshape(-1)[0])
                items.insert(position + len(items) if position < 0 else position, T)
            return (items,)

    class GatherElements(op_gather_elements.GatherElements):
        """Indices smaller than the data on the other axes (torch.gather's common case) read
        the data's leading part there, and an axis longer than 64 works: onnx's needs equal
        sizes and uses ``np.choose`` (at most 64 choices)."""

        def _run(self, data, indices, axis=None):  # noqa: ANN001, ANN202
            axis = (axis or 0) % data.ndim
            indices = np.where(indices < 0, indices + data.shape[axis], indices)
            leading = tuple(slice(None) if k == axis else slice(0, indices.shape[k]) for k in range(data.ndim))
            return (np.take_along_axis(data[leading], indices, axis=axis),)

    class Pad(op_pad.Pad_18):
        """Negative pads crop, as the spec says (onnx's refuses them), at every Pad version
        (pads and value as attributes up to 10, inputs from 11, axes from 18)."""

        def _run(self, data, pads=None, constant_value=None, axes=None, mode=None, value=None):  # noqa: ANN001, ANN202, PLR0913
            rank = data.ndim
            pads = np.asarray(pads, dtype=np.int64).reshape(-1)
            axes = range(rank) if axes is None else [int(a) % rank for a in np.asarray(axes).reshape(-1)]
            before, after = [0] * rank, [0] * rank
            for i, axis in enumerate(axes):
                before[axis], after[axis] = int(pads[i]), int(pads[i + len(pads) // 2])
            data = data[tuple(slice(max(-b, 0), n - max(-a, 0)) for n, b, a in zip(data.shape, before, after))]
            widths = [(max(b, 0), max(a, 0)) for b, a in zip(before, after)]
            mode = mode or "constant"
            if mode != "constant":
                return (np.pad(data, widths, mode=mode),)
            fill = value if value is not None else constant_value
            fill = 0 if fill is None or np.size(fill) == 0 else np.asarray(fill).item()
            return (np.pad(data, widths, mode="constant", constant_values=fill).astype(data.dtype),)

    class GridSample(op_grid_sample.GridSample):
        """Opset 16's mode names (bilinear, bicubic), which onnx's knows only as 20's."""

        def _run(self, X, grid, mode=None, padding_mode=None, align_corners=None):  # noqa: ANN001, ANN202, N803
            mode = mode or self.mode
            mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
            return super()._run(X, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    class Resize(op_resize.Resize):
        """Resize-10 (inputs X and scales; Upsample's asymmetric coordinates, nearest rounding
        down), which onnx's reads as 11's (X, roi, scales)."""

        def _run(self, X, roi, scales=None, sizes=None, **attributes):  # noqa: ANN001, ANN003, ANN202, N803
            if len(self.onnx_node.input) == 2:
                attributes.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
                return super()._run(X, None, roi, None, **attributes)
            return super()._run(X, roi, scales, sizes, **attributes)

    class BatchNormalization(op_batch_normalization.BatchNormalization_14):
        """One output is inference mode before opset 14 as after: onnx's BatchNormalization-9
        takes the momentum attribute's default for a request to update the statistics."""

        def _run(self, x, scale, bias, mean, var, epsilon=None, momentum=None, training_mode=None, **_):  # noqa: ANN001, ANN003, ANN202, PLR0913
            if len(self.onnx_node.output) == 1 and not training_mode:
                shape = (-1,) + (1,) * (x.ndim - 2)
                normalized = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
                return ((scale.reshape(shape) * normalized + bias.reshape(shape)).astype(x.dtype),)
            if _opset(self) < 14:
                return op_batch_normalization.BatchNormalization_9._run(
                    self, x, scale, bias, mean, var, epsilon, momentum
                )
            return super()._run(x, scale, bias, mean, var, epsilon, momentum, training_mode)

    class RoiAlign(op_roi_align.RoiAlign):
        """RoiAlign before 16 has output_half_pixel coordinates (16 added the attribute, with
        half_pixel as default), which onnx's applies to every version."""

        def _run(self, X, rois, batch_indices, coordinate_transformation_mode=None, **attributes):  # noqa: ANN001, ANN003, ANN202, N803
            if _opset(self) < 16:
                coordinate_transformation_mode = "output_half_pixel"
            return super()._run(X, rois, batch_indices, coordinate_transformation_mode, **attributes)

    class DequantizeLinear(op_dequantize_linear._CommonDequantizeLinear):  # noqa: SLF001
        """Every version: onnx's starts at 19, whose arithmetic versions 10 and 13 (per-axis
        scales) already have."""

        def _run(self, x, x_scale, x_zero_point=None, axis=None, block_size=None, output_dtype=None):  # noqa: ANN001, ANN202, PLR0913
            return super()._run(x, x_scale, x_zero_point, 1 if axis is None else axis, block_size or 0, output_dtype)

    class Scatter(op_scatter_elements.ScatterElements):
        """Scatter (opsets 9 and 10), which opset 11 renamed ScatterElements unchanged: onnx's
        evaluator has only the new name."""

        def _run(self, data, indices, updates, axis=None):  # noqa: ANN001, ANN202
            return super()._run(data, indices, updates, axis=axis or 0, reduction=None)

    return [
        Loop,
        SequenceInsert,
        GatherElements,
        Pad,
        GridSample,
        Resize,
        BatchNormalization,
        RoiAlign,
        DequantizeLinear,
        Scatter,
    ]


def _opset(op: Any) -> int:
    """The default domain's opset of the model an evaluator op runs in."""
    return int(op.run_params["opsets"].get("", 1))


def _empty_scan(output: onnx.ValueInfoProto) -> np.ndarray:
    """A scan output of a loop that never ran: no items, of the body's declared item shape
    where it is known."""
    from onnx.helper import tensor_dtype_to_np_dtype

    tensor = output.type.tensor_type
    if not tensor.HasField("shape") or not all(d.HasField("dim_value") for d in tensor.shape.dim):
        raise NotImplementedByEvaluator(f"a Loop that never ran, its scan output {output.name!r} of unknown item shape")
    dims = [d.dim_value for d in tensor.shape.dim]
    return np.empty((0, *dims), dtype=tensor_dtype_to_np_dtype(tensor.elem_type))


def _flat(outputs: Sequence[Any]) -> list[Any]:
    return [leaf for out in outputs if out is not None for leaf in (out if isinstance(out, list) else [out])]


# float tolerances of the comparison by dtype: onnxruntime computes some float16 ops in float32
# and rounds once, the evaluator rounds after each numpy step
TOLERANCES: dict[str, tuple[float, float]] = {"float16": (1e-2, 2e-3), "bfloat16": (2e-2, 1e-2)}
DEFAULT_TOLERANCE = (1e-3, 1e-4)


def assert_runtimes_agree(reference: Sequence[Any], onnxruntime: Sequence[Any]) -> None:
    """The evaluator's outputs against onnxruntime's: count, then dtype, shape and values of
    each (exact for integers and bools, NaN where the other has NaN, floats to
    :data:`TOLERANCES`)."""
    ref_flat, ort_flat = _flat(reference), _flat(onnxruntime)
    assert len(ref_flat) == len(ort_flat), f"reference evaluator: {len(ref_flat)} outputs, onnxruntime {len(ort_flat)}"
    for index, (ref, ort) in enumerate(zip(ref_flat, ort_flat)):
        ref, ort = np.asarray(ref), np.asarray(ort)
        where = f"reference evaluator against onnxruntime, output {index}"
        assert ref.dtype == ort.dtype, f"{where}: dtype {ref.dtype} != {ort.dtype}"
        assert ref.shape == ort.shape, f"{where}: shape {ref.shape} != {ort.shape}"
        if ref.dtype == np.bool_ or np.issubdtype(ref.dtype, np.integer) or ref.dtype.kind in "OUS":
            np.testing.assert_array_equal(ref, ort, err_msg=where)
        else:
            rtol, atol = TOLERANCES.get(str(ort.dtype), DEFAULT_TOLERANCE)
            np.testing.assert_allclose(
                ref.astype(np.float64), ort.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True, err_msg=where
            )


def enabled() -> bool:
    """False when ``EXPORTER_REFERENCE_RUNS=0`` turns the second runtime off."""
    return os.environ.get("EXPORTER_REFERENCE_RUNS", "1") != "0"


def record(path: str, model: onnx.ModelProto, inputs: Sequence[Any], onnxruntime: Sequence[Any]) -> None:
    """Survey mode (``EXPORTER_REFERENCE_SURVEY=<file>``), for choosing the caps and exclusions
    again (say after an onnx upgrade): every model up to 4x the node cap and 16x the element
    cap runs, eligible or not, and what happened is appended to ``path`` as a JSON line; with
    ``EXPORTER_REFERENCE_DUMP=<dir>`` each model that failed is pickled there with its inputs
    and onnxruntime's outputs, to be rerun alone."""
    import json
    import time

    entry: dict[str, Any] = {
        "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
        "ops": ops_of(model),
        "nodes": sum(1 for _ in _nodes(model.graph)),
        "elements": _elements(model, inputs),
        "ineligible": ineligible(model, inputs),
        "status": "skipped",
    }
    start = time.perf_counter()
    if entry["nodes"] <= 4 * MAX_NODES and entry["elements"] <= 16 * MAX_ELEMENTS:
        try:
            assert_runtimes_agree(run(model, inputs), onnxruntime)
            entry["status"] = "agree"
        except AssertionError as error:
            entry.update(status="differ", message=str(error)[:400])
        except NotImplementedByEvaluator as error:
            entry.update(status="unimplemented", message=str(error))
        except Exception as error:  # noqa: BLE001 - the survey records every failure
            entry.update(status="error", message=f"{type(error).__name__}: {str(error)[:400]}")
    entry["seconds"] = time.perf_counter() - start
    dump = os.environ.get("EXPORTER_REFERENCE_DUMP")
    if dump and entry["status"] in ("error", "differ"):
        import hashlib
        import pickle

        entry["dump"] = hashlib.sha1(model.SerializeToString()).hexdigest()[:10]
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, entry["dump"] + ".pkl"), "wb") as out:
            pickle.dump((model.SerializeToString(), list(inputs), list(onnxruntime)), out)
    with open(path, "a") as out:
        out.write(json.dumps(entry) + "\n")
