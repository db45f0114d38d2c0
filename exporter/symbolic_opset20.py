"""Opset 20: what changes for the base symbolics.

ONNX changes at opset 20 that this module reacts to:
- Gelu appears (exact and tanh approximations): one node instead of five to eight.
- GridSample gains N-d inputs and renamed modes; AffineGrid appears.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir

from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.symbolic_opset9 import interpolation
from exporter.symbolic_opset16 import GRID_SAMPLE_PADDING

Value = ir.Value


_GRID_MODES_20 = {0: "linear", 1: "nearest", 2: "cubic"}


@onnx_symbolic("aten::gelu", opset=20)
def aten_gelu(g: GraphContext, self: Value, approximate: str = "none") -> Value:
    """gelu(Tensor self, *, str approximate='none') -> Tensor"""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"unknown gelu approximation {approximate!r}")
    return g.op("Gelu", self, approximate=approximate)


@onnx_symbolic("aten::grid_sampler", opset=20)
def aten_grid_sampler_20(
    g: GraphContext,
    input: Value,
    grid: Value,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,  # noqa: A002
) -> Value:
    """grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor

    GridSample-20 renames the modes (linear/cubic) and accepts N-D inputs.
    """
    return g.op(
        "GridSample",
        input,
        grid,
        mode=_GRID_MODES_20[interpolation_mode],
        padding_mode=GRID_SAMPLE_PADDING[padding_mode],
        align_corners=int(align_corners),
    )


@onnx_symbolic("aten::affine_grid_generator", opset=20)
def aten_affine_grid_generator_20(
    g: GraphContext, theta: Value, size: Sequence[int] | Value, align_corners: bool
) -> Value:
    """affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor

    AffineGrid-20 takes the size as an input, so it may be computed at run time. With
    align_corners, AffineGrid puts the single sample of a size-1 axis at -1 where torch puts
    it at 0: then a static size with a 1 and any run-time size (which may be 1) take the base
    grid lowering, exact for both.
    """
    if align_corners and (isinstance(size, Value) or any(d == 1 for d in size[2:])):
        return interpolation.aten_affine_grid_generator(g, theta, size, align_corners)
    size_value = size if isinstance(size, Value) else g.constant(list(size))
    return g.op("AffineGrid", theta, size_value, align_corners=int(align_corners))
