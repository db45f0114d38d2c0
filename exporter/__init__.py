"""exporter: TorchScript graphs to ONNX, independent of torch's ONNX exporter.

Public API only. The symbolic modules are imported when an op they register is first looked
up (exporter/symbolic_index.py), so a first export loads only the families its graph uses.
"""

# ruff: noqa: E402 - onnx_ir is imported first, with sympy deferred, before anything that uses it

import importlib
import re
import sys
import types


class _DeferredModule(types.ModuleType):
    """Stands in for a module while onnx_ir is imported; the first attribute read imports it.

    onnx_ir's core imports sympy and its symbolic-expression parser (about 0.3 s of CPU,
    more than the export of a small model) for arithmetic on symbolic dimensions, which an
    export from TorchScript never does. While onnx_ir is imported, ``import sympy`` binds
    this stand-in instead; its first attribute read imports the real module and every read
    is forwarded to it. The stand-ins leave ``sys.modules`` right after, so a later
    ``import sympy`` (by torch or the user) gets the real module in the ordinary way.
    """

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


_DEFERRED_BY_ONNX_IR = ("sympy", "onnx_ir._symbolic_shapes")


def _import_onnx_ir_deferring_sympy() -> None:
    if "onnx_ir" in sys.modules or any(name in sys.modules for name in _DEFERRED_BY_ONNX_IR):
        return
    stand_ins = {name: _DeferredModule(name) for name in _DEFERRED_BY_ONNX_IR}
    sys.modules.update(stand_ins)
    try:
        import onnx_ir  # noqa: F401
    except ImportError:
        # an onnx_ir whose imports the stand-ins cannot serve (a submodule of sympy, say):
        # forget the partial import and import it the ordinary way below
        for name in [n for n in sys.modules if n == "onnx_ir" or n.startswith("onnx_ir.")]:
            del sys.modules[name]
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
    import onnx_ir  # noqa: F401, F811 - a no-op after the deferred import succeeded


_import_onnx_ir_deferring_sympy()

from exporter.api import TrainingMode, VerificationError, export
from exporter.errors import (
    ExporterError,
    NeedsExportTimeValue,
    SymbolicError,
    TracingError,
    UnsupportedOperatorError,
)
from exporter.export_flag import is_in_onnx_export
from exporter.graph_context import GraphContext
from exporter.operator_export_types import OperatorExportTypes
from exporter.opsets import DEFAULT_OPSET, MIN_OPSET, max_opset
from exporter.registry import onnx_symbolic, register_custom_op_symbolic, unregister_custom_op_symbolic
from exporter.report import ExportReport
from exporter.verify import VerificationReport, verify

__all__ = [
    "export",
    "is_in_onnx_export",
    "verify",
    "VerificationReport",
    "VerificationError",
    "ExportReport",
    "onnx_symbolic",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "GraphContext",
    "TrainingMode",
    "OperatorExportTypes",
    "ExporterError",
    "UnsupportedOperatorError",
    "SymbolicError",
    "TracingError",
    "NeedsExportTimeValue",
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "max_opset",
]


def __getattr__(name: str) -> types.ModuleType:
    """The symbolic modules as attributes (``exporter.symbolic_opset13``), imported on first use."""
    if name == "opset9" or re.fullmatch(r"symbolic_opset\d+", name):
        return importlib.import_module(f"exporter.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
