"""verify(): per-output comparison, and the diagnosis of onnxruntime's fused kernels.

onnxruntime fuses QDQ patterns into integer kernels whose u8 x s8 path saturates on CPUs
without VNNI, so a correct quantized model can disagree with torch on such a machine only
when optimizations are on. These tests make the optimized run disagree on any CPU by
perturbing it, so the diagnosis logic is checked everywhere, not just on AVX2-only machines.
"""

from __future__ import annotations

import importlib
import io
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from conftest import Wrap

import exporter

# exporter.verify is the function; the module it lives in is patched below
verify_module = importlib.import_module("exporter.verify")


@pytest.fixture
def optimized_run_is_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """onnxruntime's optimized run adds 1 to every float output; the unoptimized run is exact."""
    real = verify_module.run_onnxruntime

    def perturbed(model: Any, inputs: Sequence[torch.Tensor], *, optimize: bool = True) -> list[Any]:
        outputs = real(model, inputs, optimize=optimize)
        if not optimize:
            return outputs
        return [o + 1 if isinstance(o, np.ndarray) and o.dtype.kind == "f" else o for o in outputs]

    monkeypatch.setattr(verify_module, "run_onnxruntime", perturbed)
    yield


with warnings.catch_warnings():  # quantized tensor creation is deprecated in torch
    warnings.simplefilter("ignore")
    _WEIGHT = torch.quantize_per_tensor(torch.linspace(-1, 1, 6 * 8).reshape(6, 8), 0.01, 0, torch.qint8)


def _quantized_linear(x: torch.Tensor) -> torch.Tensor:
    packed = torch.ops.quantized.linear_prepack(_WEIGHT, None)
    q = torch.quantize_per_tensor(x, 0.03, 128, torch.quint8)
    return torch.ops.quantized.linear(q, packed, 0.05, 100).dequantize()


def _export(model: torch.nn.Module, x: torch.Tensor, opset: int = 17) -> bytes:
    buffer = io.BytesIO()
    exporter.export(model, (x,), buffer, opset_version=opset)
    return buffer.getvalue()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_quantized_mismatch_only_when_optimized_names_saturation(optimized_run_is_off: None) -> None:
    torch.backends.quantized.engine = "qnnpack"
    model, x = Wrap(_quantized_linear), torch.randn(4, 8)
    report = exporter.verify(model, (x,), _export(model, x), atol=0.06)
    assert not report.passed
    assert report.diagnosis is not None
    for words in ("unoptimized run agrees", "saturate", "VNNI", "reduce_range", "x86"):
        assert words in report.diagnosis, words
    assert report.diagnosis in str(report)


def test_float_mismatch_only_when_optimized_names_a_fusion(optimized_run_is_off: None) -> None:
    model, x = torch.nn.Linear(3, 2), torch.randn(2, 3)
    report = exporter.verify(model, (x,), _export(model, x))
    assert not report.passed
    assert report.diagnosis is not None and "graph optimization" in report.diagnosis
    assert "saturate" not in report.diagnosis


def test_wrong_model_gets_no_diagnosis() -> None:
    """Both runs disagree: the model itself is wrong, and verify must not blame onnxruntime."""
    model, x = torch.nn.ReLU(), torch.randn(20)
    report = exporter.verify(model, (x,), _export(Wrap(torch.abs), x))
    assert not report.passed and report.diagnosis is None


def test_agreeing_model_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = verify_module.run_onnxruntime

    def counted(model: Any, inputs: Sequence[torch.Tensor], *, optimize: bool = True) -> list[Any]:
        calls.append(optimize)
        return real(model, inputs, optimize=optimize)

    monkeypatch.setattr(verify_module, "run_onnxruntime", counted)
    model, x = torch.nn.Linear(3, 2), torch.randn(2, 3)
    report = exporter.verify(model, (x,), _export(model, x))
    assert report.passed and report.diagnosis is None
    assert calls == [True]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_export_verify_error_carries_the_diagnosis(optimized_run_is_off: None, tmp_path) -> None:  # noqa: ANN001
    torch.backends.quantized.engine = "qnnpack"
    target = tmp_path / "q.onnx"
    with pytest.raises(exporter.VerificationError, match="(?s)disagrees.*saturate"):
        exporter.export(Wrap(_quantized_linear), (torch.randn(4, 8),), target, opset_version=13, verify=True)
    assert not target.exists()


class _Scaled(torch.nn.Module):
    def forward(self, x: torch.Tensor, factor: float) -> torch.Tensor:
        return x * factor


def test_verify_feeds_a_positional_number_as_its_0d_input() -> None:
    """A positional Python number is a graph input (as in torch's exporter): verify must feed it
    as the export did, or onnxruntime gets one input too few and the model looks wrong."""
    model, x = _Scaled(), torch.randn(3)
    onnx_model = exporter.export(model, (x, 2.5), io.BytesIO())
    assert len(onnx_model.graph.inputs) == 2
    report = exporter.verify(model, (x, 2.5), onnx_model, inputs=[(x, -1.0)])
    assert report.passed, report
