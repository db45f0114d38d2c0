"""Capture on meta tensors: the same bytes as the real trace, and a named fallback where the
model needs values (exporter.capture.meta_trace)."""

from __future__ import annotations

import importlib
import io
import json
import os
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from cases import Case, _export_kwargs, model_of
from conftest import NEWEST

import exporter
from exporter.capture import meta_trace


@pytest.fixture
def mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set meta_trace.MODE for one export: ``mode("meta")`` / ``mode("real")``."""

    def set_mode(value: str) -> None:
        monkeypatch.setattr(meta_trace, "MODE", value)

    yield set_mode


def _export(model: Any, args: Any, **kwargs: Any) -> tuple[bytes, exporter.ExportReport]:
    buffer = io.BytesIO()
    report = exporter.export(model, args, buffer, report=True, **kwargs)
    return buffer.getvalue(), report


def _both_ways(model: Any, args: Any, mode: Any, **kwargs: Any) -> tuple[bytes, bytes, exporter.ExportReport]:
    mode("real")
    torch.manual_seed(0)
    real, real_report = _export(model, args, **kwargs)
    assert real_report.capture == "trace" and real_report.capture_reason == "real capture requested"
    mode("meta")
    torch.manual_seed(0)
    meta, meta_report = _export(model, args, **kwargs)
    return real, meta, meta_report


def _op_table_cases() -> list[Case]:
    import opset9

    found: dict[int, Case] = {}
    for info in pkgutil.iter_modules(opset9.__path__):
        module = importlib.import_module(f"opset9.{info.name}")
        for value in vars(module).values():
            if isinstance(value, list):
                found.update((id(c), c) for c in value if isinstance(c, Case))
    return list(found.values())


def test_op_table_cases_export_the_same_bytes_from_a_meta_trace(mode: Any) -> None:
    """Every op-table case, exported at the newest opset from the real trace and from the meta
    trace (or its fallback): byte-identical files. Most cases must take the meta trace."""
    captures: dict[str, int] = {}
    different = []
    for case in _op_table_cases():
        if case.min_opset > NEWEST:
            continue
        torch.manual_seed(0)
        inputs = case.inputs()
        kwargs = {"opset_version": NEWEST, **_export_kwargs(case, len(inputs))}
        results = []
        for value in ("real", "meta"):
            mode(value)
            torch.manual_seed(0)
            try:
                data, report = _export(model_of(case), inputs, **kwargs)
                results.append((data, report.capture))
            except Exception as error:  # noqa: BLE001 - a case that fails to export must fail the same way
                results.append((f"{type(error).__name__}: {error}".encode(), "error"))
        captures[results[1][1]] = captures.get(results[1][1], 0) + 1
        if results[0][0] != results[1][0]:
            different.append(f"{case.name} ({results[1][1]})")
    assert not different, f"meta and real captures differ: {different}"
    assert captures.get("meta trace", 0) > 600, captures


class _Block(torch.nn.Module):
    """Weights tied between two layers, a non-persistent buffer read twice and folded, a
    tensor made on the input's device, batch norm, convolutions and an LSTM: the parts a meta
    trace rewrites or where torch's meta kernels differ from its CPU ones."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(50, 16)
        self.lstm = torch.nn.LSTM(16, 16, batch_first=True)
        self.conv = torch.nn.Conv1d(16, 16, 3, padding=1)
        self.deconv = torch.nn.ConvTranspose1d(16, 16, 3, stride=2, padding=1, output_padding=1)
        self.norm = torch.nn.BatchNorm1d(16)
        self.head = torch.nn.Linear(16, 50, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 16), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) * self.scale
        x, _ = self.lstm(x)
        x = self.norm(self.deconv(self.conv(x.transpose(1, 2)))[..., ::2]).transpose(1, 2)
        causal = torch.ones(ids.shape[1], ids.shape[1], device=x.device).tril()
        x = causal @ x + self.scale.exp()
        return self.head(x)


def test_model_parts_export_the_same_bytes_from_a_meta_trace(mode: Any) -> None:
    model = _Block().eval()
    ids = torch.randint(0, 50, (2, 7))
    real, meta, report = _both_ways(model, (ids,), mode, opset_version=17)
    assert report.capture == "meta trace" and report.capture_reason == ""
    assert real == meta
    assert all(not t.is_meta for t in model.state_dict().values())
    assert all(not t.is_meta for t in model.lstm._flat_weights)


def test_transformer_encoder_exports_the_same_bytes_from_a_meta_trace(mode: Any) -> None:
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 9, 32)
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[1, 6:] = True
    real, meta, report = _both_ways(model, (x, {"src_key_padding_mask": mask}), mode, opset_version=18)
    assert report.capture == "meta trace"
    assert real == meta


class _ItemControl(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:
            return x * 2
        return x - 1


class _Nonzero(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0]


class _ArangeToMax(torch.nn.Module):
    """A number taken from a tensor by the tracer's argument conversion (end.item())."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.arange(x.max(), dtype=torch.int64) + torch.arange(x.max(), dtype=torch.int64)


class _Quantize(torch.nn.Module):
    """quantize_per_tensor's meta kernel returns a float tensor: traced types would be wrong."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.quantize_per_tensor(x, 0.1, 7, torch.quint8)


class _Cache(torch.nn.Module):
    """Keeps a tensor computed in forward (a cache a later call reads)."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 4))
        self.cached: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.cached = self.weight.t().contiguous()
        return x @ self.cached


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (_ItemControl(), "item() cannot be called on meta tensors"),
        (_Nonzero(), "nonzero"),
        # failed in the tracer's argument conversion: the real trace after it crashed the process
        (_ArangeToMax(), "item() cannot be called on meta tensors"),
        (_Quantize(), "quantized results are float tensors on meta"),
    ],
    ids=["item", "nonzero", "arange", "quantize"],
)
def test_models_that_need_values_fall_back_to_the_real_trace(mode: Any, model: Any, reason: str) -> None:
    x = torch.randn(3, 4).abs() * 3
    real, meta, report = _both_ways(model, (x,), mode, opset_version=17)
    assert report.capture == "trace"
    assert report.capture_reason.startswith("the meta trace failed") and reason in report.capture_reason
    assert f"capture: trace ({report.capture_reason})" in str(report)
    assert real == meta


def test_a_forward_that_caches_a_tensor_on_its_module_traces_on_meta(mode: Any) -> None:
    """Both traces run on copies of the module: the cache the forward writes lands on the copy
    (a meta tensor on the meta copy), and the module the user holds keeps no cache."""
    model = _Cache()
    real, meta, report = _both_ways(model, (torch.randn(3, 4),), mode, opset_version=17)
    assert report.capture == "meta trace"
    assert real == meta
    assert model.cached is None


def test_training_mode_traces_for_real(mode: Any) -> None:
    """Training-mode batch norm updates its statistics while tracing; the export writes them."""
    mode("meta")
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    _, report = _export(model, (torch.randn(5, 4),), training=exporter.TrainingMode.TRAINING)
    assert report.capture == "trace" and report.capture_reason.startswith("training mode")


def test_scripted_models_say_why_they_run_once(mode: Any) -> None:
    mode("meta")
    _, report = _export(torch.jit.script(torch.nn.Linear(3, 2)), (torch.randn(1, 3),))
    assert report.capture == "script" and "checks that the inputs fit" in report.capture_reason


def test_a_small_model_in_a_fresh_process_traces_for_real() -> None:
    """Loading torch's meta kernels costs about 1 s once per process: more than a small forward."""
    code = (
        "import io, json, torch, exporter\n"
        "r = exporter.export(torch.nn.Linear(4, 2).eval(), (torch.randn(1, 4),), io.BytesIO(), report=True)\n"
        "print(json.dumps([r.capture, r.capture_reason]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "EXPORTER_META_TRACE"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    capture, reason = json.loads(done.stdout.strip().splitlines()[-1])
    assert capture == "trace" and reason.startswith("small model")


def test_the_meta_trace_leaves_the_model_as_it_was(mode: Any) -> None:
    model = _Block().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tensors = {k: id(v) for k, v in model.state_dict(keep_vars=True).items()}
    mode("meta")
    _export(model, (torch.randint(0, 50, (1, 5)),), opset_version=17)
    after = model.state_dict(keep_vars=True)
    assert {k: id(v) for k, v in after.items()} == tensors
    assert all(torch.equal(before[k], v) for k, v in after.items())
    assert not model.scale.is_meta and model.head.weight is model.embed.weight


class _Counting(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1)
        return x + 1


class _ScriptedChild(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.child = torch.jit.script(_Counting())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.child(x) * 2


def test_a_module_with_scripted_parts_runs_once() -> None:
    """torch.jit.trace runs it on the example inputs; the scripted graph's example run, which
    only checks that the inputs fit, is skipped there."""
    model = _ScriptedChild().eval()
    _, report = _export(model, (torch.randn(2, 3),))
    assert report.capture == "trace + script"
    assert model.child.calls.item() == 1


def test_one_module_exported_and_verified_from_several_threads(mode: Any) -> None:
    """Exports and verify runs of one module from several threads at once: each export traces
    a copy of its own (meta weights on the copy only), so none runs on another's meta weights."""
    import concurrent.futures

    mode("meta")
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).eval()
    x = torch.randn(4, 16)

    def run(_: int) -> bool:
        buffer = io.BytesIO()
        exporter.export(model, (x,), buffer, opset_version=17)
        return exporter.verify(model, (x,), buffer.getvalue()).passed

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, range(24)))
    assert all(not p.is_meta for p in model.parameters())
