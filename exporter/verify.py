"""Verification: run eager torch and onnxruntime on the same inputs and compare."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx_ir as ir
import torch

from exporter.capture import flatten, split_args

__all__ = ["verify", "OutputComparison", "VerificationReport", "run_onnxruntime"]


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
        return "\n".join(lines)


def _flat_inputs(args: Any) -> list[torch.Tensor]:
    positional, kwargs = split_args(args)
    flat = []
    for value in list(positional) + list(kwargs.values()):
        flat.extend(flatten(value, "")[0])
    return flat


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def run_onnxruntime(model: ir.Model | str | os.PathLike[str] | bytes, inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    """Run a model in onnxruntime on the CPU, feeding its inputs in order."""
    import onnxruntime

    if isinstance(model, ir.Model):
        source: Any = ir.to_proto(model).SerializeToString()
    elif isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
    else:
        source = model
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(inputs):
        raise ValueError(f"the ONNX model takes {len(names)} inputs, {len(inputs)} were given")
    feed = {name: _to_numpy(tensor) for name, tensor in zip(names, inputs)}
    return session.run(None, feed)


def verify(
    model: Any,
    args: Any,
    onnx_model: ir.Model | str | os.PathLike[str] | bytes,
    *,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    inputs: Sequence[Any] | None = None,
) -> VerificationReport:
    """Compare eager torch with onnxruntime on ``args`` (and on each of ``inputs``)."""
    comparisons: list[OutputComparison] = []
    for set_index, example in enumerate([args, *(inputs or [])]):
        positional, kwargs = split_args(example)
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        expected_flat = flatten(expected, "output")[0]
        # a sequence output (a list of run-time length) is a list of arrays, flattened like torch's
        actual = [leaf for out in run_onnxruntime(onnx_model, _flat_inputs(example))
                  for leaf in (out if isinstance(out, list) else [out])]
        if len(actual) != len(expected_flat):
            raise AssertionError(f"torch returns {len(expected_flat)} outputs, onnxruntime {len(actual)}")
        for index, (want, got) in enumerate(zip(expected_flat, actual)):
            want_np = _to_numpy(want)
            shape_match = tuple(want_np.shape) == tuple(got.shape)
            dtype_match = want_np.dtype == got.dtype
            if shape_match and want_np.size:
                w = want_np.astype(np.float64)
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
            name = f"output {index}" + (f" (input set {set_index})" if set_index else "")
            comparisons.append(
                OutputComparison(name, max_abs, max_rel, dtype_match, shape_match, passed and dtype_match)
            )
    return VerificationReport(tuple(comparisons))
