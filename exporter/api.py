"""export(): validate options, run the phases in order, write the file, return the model."""

from __future__ import annotations

import contextlib
import enum
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, BinaryIO

import onnx_ir as ir
import torch

from exporter import passes, serialization
from exporter.assemble import assemble, normalize_dynamic_axes
from exporter.capture import capture
from exporter.opsets import check_opset
from exporter.registry import REGISTRY

__all__ = ["export", "TrainingMode"]

logger = logging.getLogger("exporter")


class TrainingMode(enum.Enum):
    """Which mode the model is exported in (torch.onnx.TrainingMode members are accepted too)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _training_mode(training: Any) -> TrainingMode:
    name = getattr(training, "name", None)
    if name in TrainingMode.__members__:
        return TrainingMode[name]
    if isinstance(training, bool):
        return TrainingMode.TRAINING if training else TrainingMode.EVAL
    raise ValueError(f"training must be TrainingMode.EVAL, PRESERVE or TRAINING, got {training!r}")


@contextlib.contextmanager
def _model_mode(model: Any, mode: TrainingMode) -> Iterator[bool]:
    """Put the model in the export mode and restore its own flags afterwards."""
    if not isinstance(model, torch.nn.Module):
        yield False
        return
    flags = {m: m.training for m in model.modules()}
    if mode is TrainingMode.EVAL:
        model.train(False)
    elif mode is TrainingMode.TRAINING:
        model.train(True)
    try:
        yield model.training
    finally:
        for module, flag in flags.items():
            module.training = flag


def export(
    model: torch.nn.Module | torch.jit.ScriptModule | torch.jit.ScriptFunction,
    args: Any,
    f: str | os.PathLike[str] | BinaryIO,
    *,
    export_params: bool = True,
    verbose: bool = False,
    training: Any = TrainingMode.EVAL,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    do_constant_folding: bool = True,
    dynamic_axes: Mapping[str, Mapping[int, str] | Sequence[int]] | None = None,
    keep_initializers_as_inputs: bool = False,
    custom_opsets: Mapping[str, int] | None = None,
) -> ir.Model:
    """Export ``model`` run on ``args`` to ONNX at ``f``; same convention as torch.onnx.export.

    Returns the ``onnxscript.ir`` model that was written. Nothing is written at ``f`` unless
    the whole export succeeds.
    """
    opset = check_opset(opset_version)
    mode = _training_mode(training)
    axes = normalize_dynamic_axes(dynamic_axes)
    del do_constant_folding  # shape arithmetic on constants is always folded during emission
    with _model_mode(model, mode) as is_training:
        captured = capture(model, args)
    passes.run_all(captured.graph)
    onnx_model = assemble(
        captured,
        REGISTRY,
        opset=opset,
        input_names=input_names,
        output_names=output_names,
        dynamic_axes=axes,
        export_params=export_params,
        keep_initializers_as_inputs=keep_initializers_as_inputs,
        training=is_training,
        custom_opsets=custom_opsets,
    )
    if verbose:
        print(onnx_model)
    serialization.save(onnx_model, f)
    logger.info("exported %s nodes at opset %s", len(onnx_model.graph), opset)
    return onnx_model
