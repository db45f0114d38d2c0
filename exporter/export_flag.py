"""Whether an export is running: what ``torch.onnx.is_in_onnx_export()`` and
``exporter.is_in_onnx_export()`` answer inside the user's forward.

Models branch on ``torch.onnx.is_in_onnx_export()`` to take a path ONNX expresses well (a
tensor where eager code reads a Python number, a loop-free formulation of a detection head's
post-processing); torch's exporter sets the flag for the whole export, so a successor must too,
or such models export their eager path. torch 2.13's function reads
``torch.onnx._internal.torchscript_exporter._globals.GLOBALS.in_onnx_export`` (or the dynamo
exporter's own flag). Writing that one attribute is this package's one contact with
``torch.onnx`` (README: independence), made only if the user's process imported
``torch.onnx``: an export never imports it.

If the forward imports ``torch.onnx`` itself mid-export (``torch.onnx.is_in_onnx_export()``
reached through torch's lazy ``torch.__getattr__``), the flag is raised as soon as that module
has run: while exports run and torch's flag module is not imported yet, a finder at the front
of ``sys.meta_path`` (:class:`_RaiseOnImport`) wraps the loader of that one module, so the
forward's first call already reads True. The finder leaves ``sys.meta_path`` when the last
export ends; the module keeps its own loader.

Process-wide, as in torch: torch's flag is one attribute for the whole process, so a user's
other threads read True while any export runs. Exports in parallel threads share it through a
counter (the first to start raises it, the last to end lowers it), not a bool each would
reset. The flag is lowered only if an export raised it: a torch export running meanwhile
(which raises it itself and asserts it was False at its start, so it cannot start while one of
ours runs) keeps its own. ``exporter.is_in_onnx_export()`` is precise per thread: True in the
threads that run an export's user code (the calling thread, and the meta trace's own thread
through :func:`carried_into_thread`). Off switch: ``EXPORTER_TORCH_EXPORT_FLAG=off`` leaves
torch's flag and ``sys.meta_path`` alone (``exporter.is_in_onnx_export()`` still answers).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["is_in_onnx_export", "exporting", "carried_into_thread", "TORCH_FLAG_MODULE"]

# The module holding the flag torch.onnx.is_in_onnx_export() reads (torch 2.13).
TORCH_FLAG_MODULE = "torch.onnx._internal.torchscript_exporter._globals"

_Result = TypeVar("_Result")


class _ExportCount:
    """The exports running in this process, and whether torch's flag is up because of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.raised_torch_flag = False
        self.finder: _RaiseOnImport | None = None


_COUNT = _ExportCount()
_THREAD = threading.local()  # .depth: the exports running user code in this thread


def is_in_onnx_export() -> bool:
    """Whether this thread runs user code for an export of this package (the forward being
    captured, a scripted model's example run, ``verify=True``'s eager run): the same question as
    ``torch.onnx.is_in_onnx_export()``, answered per thread and without importing torch.onnx."""
    return getattr(_THREAD, "depth", 0) > 0


@contextlib.contextmanager
def exporting() -> Iterator[None]:
    """Mark an export as running, in this thread and in torch's process-wide flag, until the
    block ends (also by an exception)."""
    _start()
    _THREAD.depth = getattr(_THREAD, "depth", 0) + 1
    try:
        yield
    finally:
        _THREAD.depth -= 1
        _end()


def carried_into_thread(run: Callable[[], _Result]) -> Callable[[], _Result]:
    """``run`` made to see, in whatever thread calls it, this thread's export flag: a worker
    thread that runs the user's forward (the meta trace's) answers as its caller."""
    if not is_in_onnx_export():
        return run

    @functools.wraps(run)
    def as_caller() -> _Result:
        _THREAD.depth = getattr(_THREAD, "depth", 0) + 1
        try:
            return run()
        finally:
            _THREAD.depth -= 1

    return as_caller


def _torch_flag_wanted() -> bool:
    return os.environ.get("EXPORTER_TORCH_EXPORT_FLAG", "on").lower() not in ("off", "0", "false")


def _start() -> None:
    with _COUNT.lock:
        _COUNT.running += 1
        if _COUNT.running > 1 or not _torch_flag_wanted():
            return
        flags = sys.modules.get(TORCH_FLAG_MODULE)
        if flags is not None:
            _raise_torch_flag(flags)
        else:  # not imported (and not to be imported by us): raise it if the forward imports it
            _COUNT.finder = _RaiseOnImport()
            # a new list rather than an insert: an import iterating the old list in another
            # thread is not shifted under its feet
            sys.meta_path = [_COUNT.finder, *sys.meta_path]


def _end() -> None:
    with _COUNT.lock:
        _COUNT.running -= 1
        if _COUNT.running:
            return
        if _COUNT.finder is not None:
            finder, _COUNT.finder = _COUNT.finder, None
            sys.meta_path = [f for f in sys.meta_path if f is not finder]
        if _COUNT.raised_torch_flag:
            _COUNT.raised_torch_flag = False
            flags = sys.modules.get(TORCH_FLAG_MODULE)
            if flags is not None:
                flags.GLOBALS.in_onnx_export = False


def _raise_torch_flag(flags: types.ModuleType) -> None:
    """Raise torch's flag unless it is up already (a torch export running: it lowers it itself)."""
    globals_ = getattr(flags, "GLOBALS", None)
    if globals_ is not None and globals_.in_onnx_export is False:
        globals_.in_onnx_export = True
        _COUNT.raised_torch_flag = True


def _imported_during_export(flags: types.ModuleType) -> None:
    with _COUNT.lock:
        if _COUNT.running and _COUNT.finder is not None:
            _raise_torch_flag(flags)


class _RaiseOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for torch's flag module, the spec the other finders give, with
    its loader wrapped to raise the flag once the module has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TORCH_FLAG_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RaisingLoader(spec.loader)
                return spec
        return None


class _RaisingLoader(importlib.abc.Loader):
    """The module's own loader, then the flag raised; the module records its own loader, so
    nothing of this wrapper stays behind."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _imported_during_export(module)
