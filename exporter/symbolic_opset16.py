"""Opset 16: what changes for the base symbolics.

ONNX changes at opset 16 that this module reacts to:
- GridSample appears (4-D inputs; 5-D needs opset 20).
- ScatterElements/ScatterND take reduction='add'/'mul' (the scatter lowerings use it where the
  one-hot form was needed before).
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


# torch's grid_sampler padding_mode codes -> GridSample's padding_mode (opset 16 and 20)
GRID_SAMPLE_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


_GRID_MODES_16 = {0: "bilinear", 1: "nearest", 2: "bicubic"}


# ============================================================================================
# Grid sampling
# ============================================================================================


@onnx_symbolic("aten::grid_sampler", opset=16)
def aten_grid_sampler(
    g: GraphContext,
    input: Value,
    grid: Value,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,  # noqa: A002
) -> Value:
    """grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor

    GridSample first exists at opset 16, for 4-D inputs only (5-D needs opset 20).
    """
    if h.known_rank(input, "grid_sampler") != 4:
        raise ValueError("grid_sampler on a 5-D input needs opset 20 or higher")
    return g.op(
        "GridSample",
        input,
        grid,
        mode=_GRID_MODES_16[interpolation_mode],
        padding_mode=GRID_SAMPLE_PADDING[padding_mode],
        align_corners=int(align_corners),
    )
