"""Shared test helpers: export to memory, run in onnxruntime, compare with eager torch."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx_ir as ir
import pytest
import torch

import exporter
from exporter.capture import flatten, split_args
from exporter.verify import run_onnxruntime

NEWEST = exporter.max_opset()


class Wrap(torch.nn.Module):
    """A module around a function of tensors, so op tests can trace plain functions."""

    def __init__(self, fn: Callable[..., object]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> object:
        return self.fn(*args)

# 9 (the base), every opset where a helper changes an ONNX signature, and the newest.
OPSETS = sorted({9, 10, 11, 12, 13, 17, 18, 20, NEWEST})


def export_to_bytes(model: Any, args: Any, **kwargs: Any) -> tuple[bytes, ir.Model]:
    buffer = io.BytesIO()
    onnx_model = exporter.export(model, args, buffer, **kwargs)
    return buffer.getvalue(), onnx_model


def run_model(data: bytes, inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    """Run in onnxruntime; where onnxruntime has no kernel for an op at this opset (it runs
    opset 28 but has no QuantizeLinear-28), in onnx's reference evaluator instead, so the
    exported model is still checked against torch."""
    try:
        return run_onnxruntime(data, inputs)
    except Exception as error:  # noqa: BLE001 - only the missing-kernel case is retried
        if "Could not find an implementation" not in str(error):
            raise
    import onnx
    from onnx.reference import ReferenceEvaluator

    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    feed = {i.name: t.numpy() for i, t in zip(proto.graph.input, inputs)}
    return list(ReferenceEvaluator(proto).run(None, feed))


def assert_matches_torch(
    model: Any,
    args: Any,
    *,
    opset: int,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    other_inputs: Sequence[Any] = (),
    **export_kwargs: Any,
) -> ir.Model:
    """Export at ``opset``, run in onnxruntime on ``args`` (and ``other_inputs``), and
    compare dtype, shape and values with eager torch."""
    data, onnx_model = export_to_bytes(model, args, opset_version=opset, **export_kwargs)
    for example in [args, *other_inputs]:
        positional, kwargs = split_args(example)
        flat_inputs: list[torch.Tensor] = []
        for value in list(positional) + list(kwargs.values()):
            flat_inputs.extend(t.clone() for t in flatten(value, "")[0])  # before eager may mutate them
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        expected_flat = flatten(expected, "out")[0]
        actual = run_model(data, flat_inputs)
        assert len(actual) == len(expected_flat)
        for want, got in zip(expected_flat, actual):
            want_np = want.detach().numpy()
            assert got.dtype == want_np.dtype, f"dtype {got.dtype} != torch {want_np.dtype}"
            assert got.shape == want_np.shape, f"shape {got.shape} != torch {want_np.shape}"
            if want_np.dtype == np.bool_ or np.issubdtype(want_np.dtype, np.integer):
                np.testing.assert_array_equal(got, want_np)
            else:
                np.testing.assert_allclose(got, want_np, rtol=rtol, atol=atol, equal_nan=True)
    return onnx_model


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():  # noqa: ANN202 - generator fixture
    """Eager reference runs of small ops are faster on one thread, and much faster when the
    machine is busy (torch's CPU RNN: 65 ms per call with 2 threads under load, 0.5 ms with 1)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
