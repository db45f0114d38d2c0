"""An export leaves no trace a user's other threads can see, during it or after it
(exporter/capture/__init__.py lists the process-wide effects left, each tested here).

A service exports the model it serves: inference keeps running in other threads while the
model is exported, on meta tensors or for real, and the module the user holds must be the same
objects with the same values afterwards.
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any

import pytest
import torch

import exporter
from exporter.capture import meta_trace


def _encoder() -> torch.nn.Module:
    """A 25 MiB TransformerEncoder (a meta trace's size, see meta_trace.META_MIN_BYTES)."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 8).eval()


@pytest.mark.parametrize("mode", ["meta", "real"])
def test_inference_in_another_thread_runs_unchanged_while_the_model_is_exported(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setattr(meta_trace, "MODE", mode)
    model = _encoder()
    assert sum(p.numel() * p.element_size() for p in model.parameters()) > 24 * 2**20
    x = torch.randn(2, 16, 256)
    mask = torch.zeros(2, 16, dtype=torch.bool)
    mask[1, 12:] = True
    with torch.no_grad():
        expected = model(x, src_key_padding_mask=mask)
    done = threading.Event()
    results: list[Any] = []

    def serve() -> None:
        while not done.is_set():
            try:
                with torch.no_grad():
                    out = model(x, src_key_padding_mask=mask)
                results.append(torch.equal(out, expected))
            except Exception as error:  # noqa: BLE001 - what the test counts
                results.append(error)

    server = threading.Thread(target=serve)
    server.start()
    try:
        captures = []
        for _ in range(3):
            report = exporter.export(model, (x, {"src_key_padding_mask": mask}), io.BytesIO(), report=True)
            captures.append(report.capture)
    finally:
        done.set()
        server.join()
    assert captures == ["meta trace" if mode == "meta" else "trace"] * 3
    failures = [r for r in results if r is not True]
    assert results and not failures, f"{len(failures)} of {len(results)} inference calls failed: {failures[:3]}"


class _Stateful(torch.nn.Module):
    """Its forward writes attributes (a cache and a counter); it holds an LSTM (references to
    its parameters in _flat_weights) and a non-persistent buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 8, batch_first=True)
        self.norm = torch.nn.BatchNorm1d(8)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 8), persistent=False)
        self.cached: torch.Tensor | None = None
        self.calls = 0
        self.seen: list[int] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        self.seen.append(x.shape[0])
        out, _ = self.lstm(x * self.scale)
        self.cached = out
        return self.norm(out.transpose(1, 2))


def _snapshot(model: torch.nn.Module) -> dict[str, Any]:
    return {
        "tensors": {name: (id(t), t.detach().clone()) for name, t in model.state_dict(keep_vars=True).items()},
        "flags": [(name, m.training) for name, m in model.named_modules()],
        "attributes": [(name, {k: id(v) for k, v in vars(m).items()}) for name, m in model.named_modules()],
        "flat_weights": [id(w) for w in model.lstm._flat_weights],
        "values": (model.cached, model.calls, list(model.seen)),
    }


@pytest.mark.parametrize("mode", ["meta", "real"])
@pytest.mark.parametrize("training", [exporter.TrainingMode.EVAL, exporter.TrainingMode.TRAINING])
def test_the_exported_module_is_left_as_it_was(monkeypatch: pytest.MonkeyPatch, mode: str, training: Any) -> None:
    monkeypatch.setattr(meta_trace, "MODE", mode)
    torch.manual_seed(0)
    # in the other mode than the export's: the flags a switch would change
    model = _Stateful().train(training is exporter.TrainingMode.EVAL)
    before = _snapshot(model)
    exporter.export(model, (torch.randn(3, 5, 8),), io.BytesIO(), training=training, opset_version=17)
    after = _snapshot(model)
    assert after["flags"] == before["flags"]
    assert after["attributes"] == before["attributes"]
    assert after["flat_weights"] == before["flat_weights"]
    assert after["values"] == before["values"] == (None, 0, [])
    assert after["tensors"].keys() == before["tensors"].keys()
    for name, (identity, value) in before["tensors"].items():
        assert after["tensors"][name][0] == identity, name
        torch.testing.assert_close(after["tensors"][name][1], value, rtol=0, atol=0, msg=name)


class _Counting(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.dropout(x, 0.5, self.training) + 1


def test_a_scripted_model_gets_its_training_flag_back_even_from_parallel_exports() -> None:
    """A ScriptModule cannot be copied: exported in another mode than its own, its flag is
    switched while it is captured (listed in exporter/capture/__init__.py) and restored, also
    when several threads export it at once; TrainingMode.PRESERVE switches nothing."""
    model = torch.jit.script(_Counting().train())
    errors: list[BaseException] = []

    def export() -> None:
        try:
            for _ in range(3):
                exporter.export(model, (torch.randn(2, 3),), io.BytesIO(), opset_version=17)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=export) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and model.training

    seen: list[bool] = []
    original = torch.jit.ScriptModule.train

    def spying(self: torch.jit.ScriptModule, mode: bool = True) -> Any:
        seen.append(mode)
        return original(self, mode)

    torch.jit.ScriptModule.train = spying  # type: ignore[method-assign]
    try:
        exporter.export(model, (torch.randn(2, 3),), io.BytesIO(), training=exporter.TrainingMode.PRESERVE)
    finally:
        torch.jit.ScriptModule.train = original  # type: ignore[method-assign]
    assert seen == [] and model.training


def test_a_meta_trace_registers_no_kernel_and_switches_no_global(monkeypatch: pytest.MonkeyPatch) -> None:
    """What other threads would see of a meta trace: no kernel registered on aten's Meta keys,
    the attention fast path still on, no module-scope map, the GIL switch interval as it was,
    and the warning filters untouched."""
    import warnings

    monkeypatch.setattr(meta_trace, "MODE", "meta")
    import torch.jit._trace as trace_impl

    seen: list[tuple[Any, ...]] = []
    model = _encoder()
    x = torch.randn(2, 8, 256)

    def observe() -> tuple[Any, ...]:
        with torch.no_grad():
            meta_layer_norm = torch.nn.functional.layer_norm(torch.empty(2, 4, device="meta"), (4,))
        return (
            torch.backends.mha.get_fastpath_enabled(),
            trace_impl._trace_module_map,
            sys.getswitchinterval(),
            id(warnings.filters),
            len(warnings.filters),
            meta_layer_norm.shape,
        )

    baseline = observe()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.append(observe())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        report = exporter.export(model, (x,), io.BytesIO(), report=True)
    finally:
        done.set()
        watcher.join()
    assert report.capture == "meta trace"
    assert seen and all(state == baseline for state in seen), {state for state in seen if state != baseline}
    assert observe() == baseline


class _WithScriptedChild(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.child = torch.jit.script(torch.nn.Linear(4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.child(x).relu()


def test_torch_jit_trace_leaves_no_module_map() -> None:
    """A model with a scripted submodule is traced by torch.jit.trace, which sets torch's
    process-wide module map while it runs (listed in exporter/capture/__init__.py): it is back
    to what it was after exports from several threads, and every export succeeds."""
    import torch.jit._trace as trace_impl

    model = _WithScriptedChild().eval()
    x = torch.randn(2, 4)
    reports: list[Any] = []
    threads = [
        threading.Thread(target=lambda: reports.append(exporter.export(model, (x,), io.BytesIO(), report=True)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.capture for r in reports] == ["trace + script"] * 3
    assert trace_impl._trace_module_map is None
