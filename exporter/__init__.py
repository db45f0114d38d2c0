"""exporter: TorchScript graphs to ONNX, independent of torch's ONNX exporter.

Public API only. Importing the package imports every symbolic module once; that is the only
place registration happens.
"""

from exporter import (  # noqa: F401 - registration, once, in opset order
    symbolic_opset9,
    symbolic_opset10,
    symbolic_opset11,
    symbolic_opset12,
    symbolic_opset13,
    symbolic_opset14,
    symbolic_opset15,
    symbolic_opset16,
    symbolic_opset17,
    symbolic_opset18,
    symbolic_opset19,
    symbolic_opset20,
    symbolic_opset21,
    symbolic_opset22,
    symbolic_opset23,
    symbolic_opset24,
    symbolic_opset25,
    symbolic_opset26,
)
from exporter.api import TrainingMode, VerificationError, export
from exporter.errors import ExporterError, SymbolicError, UnsupportedOperatorError
from exporter.graph_context import GraphContext
from exporter.opsets import DEFAULT_OPSET, MIN_OPSET, max_opset
from exporter.registry import onnx_symbolic, register_custom_op_symbolic, unregister_custom_op_symbolic
from exporter.report import ExportReport
from exporter.verify import VerificationReport, verify

__all__ = [
    "export",
    "verify",
    "VerificationReport",
    "VerificationError",
    "ExportReport",
    "onnx_symbolic",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "GraphContext",
    "TrainingMode",
    "ExporterError",
    "UnsupportedOperatorError",
    "SymbolicError",
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "max_opset",
]
