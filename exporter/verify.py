"""Verification: run eager torch and onnxruntime on the same inputs and compare."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import onnx_ir as ir
import torch

from exporter.capture.inputs import flatten_inputs, named_tensors, split_args
from exporter.cleanup.unused_inputs import INPUT_POSITIONS_KEY
from exporter.tensors import quantized_output_parts

__all__ = ["verify", "OutputComparison", "VerificationReport", "run_onnxruntime", "kept_inputs"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class OutputComparison:
    name: str
    max_abs_diff: float
    max_rel_diff: float
    dtype_match: bool
    shape_match: bool
    passed: bool


@dataclasses.dataclass(frozen=True)
class VerificationReport:
    outputs: tuple[OutputComparison, ...]
    # Why a mismatch happened, when verify could tell: set when onnxruntime's optimized run
    # disagrees with torch while its unoptimized run of the same model agrees.
    diagnosis: str | None = None

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    @property
    def max_abs_diff(self) -> float:
        return max((o.max_abs_diff for o in self.outputs), default=0.0)

    def __str__(self) -> str:
        lines = []
        for o in self.outputs:
            status = "ok" if o.passed else "MISMATCH"
            lines.append(
                f"{o.name}: {status} max_abs_diff={o.max_abs_diff:.3g} max_rel_diff={o.max_rel_diff:.3g}"
                f" dtype={'same' if o.dtype_match else 'different'} shape={'same' if o.shape_match else 'different'}"
            )
        if self.diagnosis:
            lines.append(self.diagnosis)
        return "\n".join(lines)


def kept_inputs(metadata: Mapping[str, str], inputs: Sequence[T]) -> list[T]:
    """The flattened model inputs the exported graph still takes: the export drops inputs the
    graph does not use (as torch does) and records the positions that remain in the model's
    metadata_props. Inputs already cut down to those (as many as the positions, or fewer) are
    returned as given."""
    spec = metadata.get(INPUT_POSITIONS_KEY)
    if spec is None:
        return list(inputs)
    positions = [int(p) for p in spec.split(",") if p]
    if len(inputs) <= len(positions):
        return list(inputs)
    if positions and positions[-1] >= len(inputs):
        raise ValueError(f"the ONNX model takes flattened inputs {positions}, {len(inputs)} were given")
    return [inputs[p] for p in positions]


def _feed(value: torch.Tensor | Sequence[torch.Tensor]) -> np.ndarray | list[np.ndarray]:
    """One model input as onnxruntime takes it: an array, or for a sequence input (a scripted
    model's list argument, capture.inputs.sequence_arguments) a list of arrays."""
    if isinstance(value, (list, tuple)):
        return [_to_numpy(item) for item in value]
    return _to_numpy(value)


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def run_onnxruntime(
    model: ir.Model | str | os.PathLike[str] | bytes,
    inputs: Sequence[torch.Tensor | Sequence[torch.Tensor]],
    *,
    optimize: bool = True,
) -> list[np.ndarray]:
    """Run a model in onnxruntime on the CPU, feeding its inputs in order: ``inputs`` are the
    flattened model inputs (``exporter.capture.inputs.flatten_inputs(args, model)``: a list of tensors
    feeds a sequence input); those the export dropped as unused are left out (see
    :func:`kept_inputs`), or may be left out by the caller.

    ``optimize=False`` turns onnxruntime's graph optimizations off: every node then runs as
    the kernel of its own ONNX operator, so the result shows what the model means rather than
    what this CPU's fused kernels compute (integer QDQ fusions saturate on CPUs without VNNI).
    """
    import onnxruntime

    if isinstance(model, ir.Model):
        source: Any = ir.to_proto(model).SerializeToString()
    elif isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
    else:
        source = model
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    inputs = kept_inputs(session.get_modelmeta().custom_metadata_map, inputs)
    if len(names) != len(inputs):
        raise ValueError(f"the ONNX model takes {len(names)} inputs, {len(inputs)} were given")
    feed = {name: _feed(tensor) for name, tensor in zip(names, inputs)}
    return session.run(None, feed)


# Quantized operators whose onnxruntime fusions run on integer kernels.
_QUANTIZED_OPS = frozenset(
    {
        "QuantizeLinear",
        "DequantizeLinear",
        "QLinearConv",
        "QLinearMatMul",
        "MatMulInteger",
        "ConvInteger",
        "DynamicQuantizeLinear",
    }
)
_SATURATION_ADVICE = (
    "onnxruntime's optimized run disagrees with torch while its unoptimized run agrees: the "
    "exported model is right, and onnxruntime's fused integer kernels compute something else on "
    "this CPU. Likely cause: the quantized (u8 x s8) kernels saturate their 16-bit intermediate "
    "sums on CPUs without VNNI (AVX-512 VNNI / AVX-VNNI). Remedy: quantize with reduce_range=True "
    "(7-bit activations) or 7-bit weights, e.g. torch's 'x86'/'fbgemm' quantization engine "
    "rather than 'qnnpack', or run the model with graph optimizations below ORT_ENABLE_BASIC."
)
_FUSION_ADVICE = (
    "onnxruntime's optimized run disagrees with torch while its unoptimized run agrees: the "
    "exported model is right, and one of onnxruntime's graph optimizations (a fused kernel) "
    "changes the numerics on this CPU. Compare with graph optimizations off to confirm, or "
    "loosen the tolerance."
)


def _op_types(model: ir.Model | str | os.PathLike[str] | bytes) -> set[str]:
    import onnx

    if isinstance(model, ir.Model):
        graphs = [model.graph]
        found: set[str] = set()
        while graphs:
            graph = graphs.pop()
            for node in graph:
                found.add(node.op_type)
                for attr in node.attributes.values():
                    if isinstance(attr.value, ir.Graph):
                        graphs.append(attr.value)
        return found
    proto = (
        onnx.load_from_string(model)
        if isinstance(model, bytes)
        else onnx.load(os.fspath(model), load_external_data=False)
    )
    return {node.op_type for node in proto.graph.node}


def _compare(
    model: Any,
    onnx_model: ir.Model | str | os.PathLike[str] | bytes,
    examples: Sequence[Any],
    rtol: float,
    atol: float,
    optimize: bool,
) -> tuple[OutputComparison, ...]:
    comparisons: list[OutputComparison] = []
    for set_index, example in enumerate(examples):
        positional, kwargs = split_args(example)
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        expected_flat = [part for t in named_tensors(expected, "output")[0] for part in quantized_output_parts(t)]
        # a sequence output (a list of run-time length) is a list of arrays, flattened like torch's
        outputs = run_onnxruntime(onnx_model, flatten_inputs(example, model), optimize=optimize)
        actual = [leaf for out in outputs for leaf in (out if isinstance(out, list) else [out])]
        if len(actual) != len(expected_flat):
            raise AssertionError(f"torch returns {len(expected_flat)} outputs, onnxruntime {len(actual)}")
        for index, (want, got) in enumerate(zip(expected_flat, actual)):
            name = f"output {index}" + (f" (input set {set_index})" if set_index else "")
            comparisons.append(_compare_output(name, _to_numpy(want), got, rtol, atol))
    return tuple(comparisons)


def _compare_output(name: str, want: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> OutputComparison:
    shape_match = tuple(want.shape) == tuple(got.shape)
    dtype_match = want.dtype == got.dtype
    if shape_match and want.size:
        w = want.astype(np.float64)
        a = got.astype(np.float64)
        diff = np.abs(w - a)
        finite = np.isfinite(w) & np.isfinite(a)
        same_special = (w == a) | (np.isnan(w) & np.isnan(a))
        diff = np.where(finite, diff, np.where(same_special, 0.0, np.inf))
        max_abs = float(diff.max())
        max_rel = float((diff / np.maximum(np.abs(w), 1e-12)).max())
        passed = bool(np.all(diff <= atol + rtol * np.abs(np.where(finite, w, 0.0))))
    else:
        max_abs = max_rel = 0.0 if shape_match else float("inf")
        passed = shape_match
    return OutputComparison(name, max_abs, max_rel, dtype_match, shape_match, passed and dtype_match)


def verify(
    model: Any,
    args: Any,
    onnx_model: ir.Model | str | os.PathLike[str] | bytes,
    *,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    inputs: Sequence[Any] | None = None,
) -> VerificationReport:
    """Compare eager torch with onnxruntime on ``args`` (and on each of ``inputs``).

    onnxruntime runs as a deployment would, with its graph optimizations on. When that run
    disagrees, the model is run again with them off: if that run agrees, the exported graph is
    right and onnxruntime's fused kernels differ on this CPU, and the report's ``diagnosis``
    says so (for quantized models: integer kernels that saturate without VNNI, and what to do),
    rather than leaving a bare mismatch that reads like an exporter bug.
    """
    examples = [args, *(inputs or [])]
    outputs = _compare(model, onnx_model, examples, rtol, atol, optimize=True)
    report = VerificationReport(outputs)
    if report.passed:
        return report
    unoptimized = VerificationReport(_compare(model, onnx_model, examples, rtol, atol, optimize=False))
    if not unoptimized.passed:
        return report
    quantized = bool(_op_types(onnx_model) & _QUANTIZED_OPS)
    return VerificationReport(outputs, diagnosis=_SATURATION_ADVICE if quantized else _FUSION_ADVICE)
