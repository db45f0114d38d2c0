"""Cleanup after emission, one job per module: Conv+BatchNorm folding (:mod:`.conv_bn`),
dead nodes (onnx_ir's pass), unused inputs (:mod:`.unused_inputs`) and equal weights written
once (:mod:`.deduplicate`, with the comparisons capture started:
:mod:`exporter.capture.equal_weights`)."""

from __future__ import annotations

from collections.abc import Callable

import onnx_ir as ir

from exporter.capture.equal_weights import EqualWeights
from exporter.cleanup.conv_bn import fuse_conv_batchnorm
from exporter.cleanup.deduplicate import deduplicate_equal_initializers
from exporter.cleanup.unused_inputs import remove_unused_inputs

__all__ = ["cleanup"]


def cleanup(
    model: ir.Model,
    *,
    fold_constants: bool = True,
    equal_weights: EqualWeights | None = None,
    before_deduplication: Callable[[ir.Model], None] | None = None,
) -> None:
    """Fold what inference makes constant (Conv+BatchNorm), then remove what is unused.
    ``before_deduplication`` runs on the final graph before equal weights are merged (module
    functions: exporter.module_functions, whose inputs then stay one per weight of a call, as
    torch's, which deduplicates after extracting them)."""
    import onnx_ir.passes.common as common_passes  # its ~15 pass modules load on first export only

    if fold_constants:
        fuse_conv_batchnorm(model)
    common_passes.RemoveUnusedNodesPass()(model)
    remove_unused_inputs(model)
    if before_deduplication is not None:
        before_deduplication(model)
    if fold_constants:
        deduplicate_equal_initializers(model, equal_weights)
