"""``operator_export_type``'s values: torch's four, matched by name, so that
``torch.onnx.OperatorExportTypes`` members work as well as this module's and the package never
imports torch.onnx. What each means: :mod:`exporter.operator_export`."""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["OperatorExportTypes", "operator_export_type"]


class OperatorExportTypes(enum.Enum):
    """What becomes of aten ops and ops without a symbolic (:mod:`exporter.operator_export`)."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def operator_export_type(value: Any) -> OperatorExportTypes:
    """``value`` (this module's member, torch's, or None for the default) as a member here."""
    if value is None:
        return OperatorExportTypes.ONNX
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in OperatorExportTypes.__members__:
        return OperatorExportTypes[name]
    choices = ", ".join(OperatorExportTypes.__members__)
    raise ValueError(f"operator_export_type must be one of OperatorExportTypes.{{{choices}}}, got {value!r}")
