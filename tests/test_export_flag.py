"""exporter/export_flag.py: ``torch.onnx.is_in_onnx_export()`` and ``exporter.is_in_onnx_export()``
are True wherever an export runs the user's code (meta and real traces, models with scripted
parts, a scripted model's example run, verify=True), False afterwards even when the export
failed, shared by parallel exports, and set without importing torch.onnx.

This module imports torch.onnx only to read the flag (pyproject.toml lets this one test module
do so); the test process has torch.onnx imported already (tests/conftest.py reads its opset),
so the fresh-interpreter tests check the case where the user never imported it.
"""

import io
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch.onnx
from conftest import DEFAULT_OPSET, assert_matches_torch, run_in_fresh_interpreter

import exporter
from exporter.capture import meta_trace


@pytest.fixture
def mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set meta_trace.MODE for one export: ``mode("meta")`` / ``mode("real")``."""

    def set_mode(value: str) -> None:
        monkeypatch.setattr(meta_trace, "MODE", value)

    yield set_mode


def _flags() -> tuple[bool, bool]:
    return torch.onnx.is_in_onnx_export(), exporter.is_in_onnx_export()


class Recording(torch.nn.Module):
    """Records both flags each time its forward runs (in ``seen``, which the structural copy
    export runs shares: only top-level containers are copied, and ``record`` is a method)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[bool, bool]] = []
        self.record = self.seen.append

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.record(_flags())
        return x * 2


class ScaledByItsPeak(torch.nn.Module):
    """Eager code reads the peak as a Python number, which a trace would bake in as a constant
    (and a meta trace cannot read at all); under the export flag it stays a tensor, as the
    export paths of detection heads do."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.onnx.is_in_onnx_export():
            return x / x.abs().amax()
        return x / float(x.abs().max())


class Inner(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


class ScaledWithScriptedPart(torch.nn.Module):
    """A scripted submodule: captured by torch.jit.trace, which runs the forward for real."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = torch.jit.script(Inner())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.inner(x)
        if torch.onnx.is_in_onnx_export():
            return y / y.abs().amax()
        return y / float(y.abs().max())


def _capture(model: Any, args: Any, **kwargs: Any) -> str:
    report = exporter.export(model, args, io.BytesIO(), opset_version=DEFAULT_OPSET, report=True, **kwargs)
    return report.capture


@pytest.mark.parametrize(("trace", "capture"), [("meta", "meta trace"), ("real", "trace")])
def test_the_forward_sees_both_flags_traced_on_meta_and_for_real(mode: Any, trace: str, capture: str) -> None:
    mode(trace)
    model = Recording()
    assert _capture(model, (torch.randn(2, 3),)) == capture
    assert model.seen and set(model.seen) == {(True, True)}
    assert _flags() == (False, False)


@pytest.mark.parametrize(("trace", "capture"), [("meta", "meta trace"), ("real", "trace")])
def test_a_model_takes_its_export_path_under_the_flag(mode: Any, trace: str, capture: str) -> None:
    """The eager path's peak, baked in by a trace, would not fit the other input."""
    mode(trace)
    model = ScaledByItsPeak()
    x, other = torch.randn(2, 5), 10 * torch.randn(3, 5)
    assert _capture(model, (x,)) == capture
    assert_matches_torch(model, (x,), opset=DEFAULT_OPSET, other_inputs=[(other,)], dynamic_axes={"x": {0: "batch"}})


def test_a_model_with_scripted_parts_takes_its_export_path_under_the_flag() -> None:
    model = ScaledWithScriptedPart()
    x, other = torch.randn(2, 5), 10 * torch.randn(3, 5)
    assert _capture(model, (x,)) == "trace + script"
    assert_matches_torch(model, (x,), opset=DEFAULT_OPSET, other_inputs=[(other,)], dynamic_axes={"x": {0: "batch"}})


# torch 2.13's TorchScript cannot compile torch.onnx.is_in_onnx_export() (its body imports), so
# scripted code reads it only in Python it calls through @torch.jit.ignore: that runs in the
# example run (and verify=True), but is a prim::PythonOp in the graph, which no exporter converts.
# (This module has no `from __future__ import annotations`: TorchScript cannot resolve an
# ignored function's annotations as strings.)
_SEEN_BY_SCRIPT: list[bool] = []


@torch.jit.ignore
def _probe(x: torch.Tensor) -> torch.Tensor:
    _SEEN_BY_SCRIPT.append(torch.onnx.is_in_onnx_export())
    return x


class ScriptedProbe(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _probe(x) * 2


def test_a_scripted_models_example_run_sees_the_flag_and_a_failed_export_lowers_it() -> None:
    _SEEN_BY_SCRIPT.clear()
    with pytest.raises(exporter.UnsupportedOperatorError, match="prim::PythonOp"):
        exporter.export(torch.jit.script(ScriptedProbe()), (torch.randn(2),), io.BytesIO())
    assert _SEEN_BY_SCRIPT == [True]
    assert _flags() == (False, False)


class Raises(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert _flags() == (True, True)
        raise RuntimeError("bad input")


def test_the_flags_are_down_after_a_forward_raised() -> None:
    with pytest.raises(exporter.TracingError, match="bad input"):
        exporter.export(Raises(), (torch.randn(2),), io.BytesIO())
    assert _flags() == (False, False)


def test_verify_runs_eager_torch_under_the_flag() -> None:
    """verify=True compares the export path with itself, not with the eager one."""
    model = Recording()
    exporter.export(model, (torch.randn(2, 3),), io.BytesIO(), verify=True)
    assert len(model.seen) >= 2 and set(model.seen) == {(True, True)}


def test_torch_flag_is_process_wide_and_ours_per_thread(mode: Any) -> None:
    mode("meta")  # the forward runs in the meta trace's own thread: ours is carried there
    inside, outside = threading.Event(), threading.Event()
    seen_outside: list[tuple[bool, bool]] = []

    class Waits(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            inside.set()
            assert outside.wait(30)
            return x + 1

    def watch() -> None:
        assert inside.wait(30)
        seen_outside.append(_flags())
        outside.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    exporter.export(Waits(), (torch.randn(2),), io.BytesIO())
    watcher.join()
    assert seen_outside == [(True, False)]


def test_parallel_exports_share_torch_flag_through_a_counter() -> None:
    """Export B reads the flag after export A, started first, has ended: still up."""
    b_inside, a_done = threading.Event(), threading.Event()
    seen_by_b: list[tuple[bool, bool]] = []
    failures: list[BaseException] = []

    class A(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            assert b_inside.wait(30)
            return x + 1

    class B(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b_inside.set()
            assert a_done.wait(30)
            seen_by_b.append(_flags())
            return x + 2

    def run(model: torch.nn.Module, done: threading.Event | None) -> None:
        try:
            exporter.export(model, (torch.randn(2),), io.BytesIO())
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            failures.append(error)
        finally:
            if done is not None:
                done.set()

    threads = [threading.Thread(target=run, args=(A(), a_done)), threading.Thread(target=run, args=(B(), None))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    assert seen_by_b and set(seen_by_b) == {(True, True)}
    assert _flags() == (False, False)


def test_a_flag_raised_by_someone_else_stays_up() -> None:
    """A torch export running meanwhile raised it, and lowers it itself."""
    from torch.onnx._internal.torchscript_exporter._globals import GLOBALS

    GLOBALS.in_onnx_export = True
    try:
        model = Recording()
        exporter.export(model, (torch.randn(2),), io.BytesIO())
        assert model.seen and set(model.seen) == {(True, True)}
        assert torch.onnx.is_in_onnx_export()
    finally:
        GLOBALS.in_onnx_export = False


def test_the_off_switch_leaves_torch_flag_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPORTER_TORCH_EXPORT_FLAG", "off")
    model = Recording()
    exporter.export(model, (torch.randn(2),), io.BytesIO())
    assert model.seen and set(model.seen) == {(False, True)}


def test_an_export_does_not_import_torch_onnx_and_a_forward_importing_it_sees_the_flag() -> None:
    """In a fresh interpreter: an export leaves torch.onnx unimported; a forward that reaches it
    through torch's lazy attribute imports it mid-export and reads True; afterwards the flag is
    down, sys.meta_path is as before and torch's module records its own loader."""
    result = run_in_fresh_interpreter(
        "import io, json, sys, torch, exporter\n"
        "class Plain(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * 2\n"
        "seen = []\n"
        "class Asks(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        seen.append(torch.onnx.is_in_onnx_export())\n"
        "        return x * 2\n"
        "finders = list(sys.meta_path)\n"
        "exporter.export(Plain(), (torch.randn(2),), io.BytesIO())\n"
        "plain_imported = 'torch.onnx' in sys.modules\n"
        "exporter.export(Asks(), (torch.randn(2),), io.BytesIO())\n"
        "flags = sys.modules['torch.onnx._internal.torchscript_exporter._globals']\n"
        "print(json.dumps({'plain_imported': plain_imported, 'seen': seen,\n"
        "    'after': torch.onnx.is_in_onnx_export(), 'finders_restored': sys.meta_path == finders,\n"
        "    'loader': type(flags.__loader__).__name__, 'spec_loader': type(flags.__spec__.loader).__name__}))\n"
    )
    assert result == {
        "plain_imported": False,
        "seen": [True],
        "after": False,
        "finders_restored": True,
        "loader": "SourceFileLoader",
        "spec_loader": "SourceFileLoader",
    }
