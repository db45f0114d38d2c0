"""Graph cleanup after emission: dead code, unused initializers, unused opset imports."""

from __future__ import annotations

import onnx_ir as ir
import onnx_ir.passes.common as common_passes

__all__ = ["cleanup"]


def cleanup(model: ir.Model) -> None:
    """Remove what emission left unused. Symbolics already avoid redundant nodes (identity
    views return their input, static shapes fold), so this is dead-code removal only."""
    common_passes.RemoveUnusedNodesPass()(model)
