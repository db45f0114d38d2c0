"""export(): validate options, run the phases in order, write the file, return the model."""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

import onnx_ir as ir
import torch

from exporter import passes, serialization
from exporter.assemble import assemble, dynamic_input_axes, normalize_dynamic_axes, optional_input_candidates
from exporter.capture import capture
from exporter.capture.module_copy import in_export_mode
from exporter.cleanup import cleanup
from exporter.errors import ExporterError
from exporter.opsets import check_opset
from exporter.registry import REGISTRY
from exporter.report import ExportReport, PhaseTimer

__all__ = ["export", "TrainingMode", "VerificationError"]

logger = logging.getLogger("exporter")


class TrainingMode(enum.Enum):
    """Which mode the model is exported in (torch's own TrainingMode members are accepted too, by name)."""

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


# The training flag each mode runs the model with (None: the model's own flags).
_TRAINING: dict[TrainingMode, bool | None] = {
    TrainingMode.EVAL: False,
    TrainingMode.PRESERVE: None,
    TrainingMode.TRAINING: True,
}


class VerificationError(ExporterError):
    """export(..., verify=True) found onnxruntime disagreeing with eager torch."""


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
    verify: bool = False,
    report: bool = False,
    progress: serialization.Progress | None = None,
) -> ir.Model | ExportReport:
    """Export ``model`` run on ``args`` to ONNX at ``f``; same convention as torch's ONNX export function.

    Returns the ``onnxscript.ir`` model that was written, or with ``report=True`` an
    :class:`ExportReport` (time per phase, node counts, weights; ``.model`` is the model).
    With ``verify=True`` the model is run in onnxruntime and compared with eager torch
    before anything is written. Nothing is written at ``f`` unless the export succeeds.
    ``progress(written, total)`` is called while weights are written (the command line
    draws a bar with it on a terminal).
    """
    opset = check_opset(opset_version)
    mode = _training_mode(training)
    axes = normalize_dynamic_axes(dynamic_axes)
    timer = PhaseTimer()
    with timer.phase("capture"):
        captured = capture(model, args, training=_TRAINING[mode], compare_weights=do_constant_folding and export_params)
    with timer.phase("passes"):
        facts = passes.ExportFacts.of_inputs(
            captured.inputs,
            captured.params,
            dynamic_input_axes(captured, input_names, axes),
            optional_input_candidates(captured, opset),
        )
        passes.run_all(captured.graph, facts)
    with timer.phase("emission"):
        onnx_model = assemble(
            captured,
            REGISTRY,
            opset=opset,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=axes,
            export_params=export_params,
            keep_initializers_as_inputs=keep_initializers_as_inputs,
            training=captured.training,
            custom_opsets=custom_opsets,
        )
    with timer.phase("cleanup"):
        # Shape arithmetic on constants is always folded during emission; this folds weights.
        fold = do_constant_folding and not captured.training
        cleanup(onnx_model, fold_constants=fold, equal_weights=captured.equal_weights)
    if verbose:
        print(onnx_model)
    if verify:
        with timer.phase("verify"):
            _verify_before_writing(model, args, onnx_model, mode)
    with timer.phase("save"):
        serialization.save(onnx_model, f, progress)
    logger.info("exported %s nodes at opset %s in %.3f s", len(onnx_model.graph), opset, sum(timer.seconds.values()))
    if report:
        return ExportReport.build(onnx_model, opset, timer, captured.method, captured.reason)
    return onnx_model


def _verify_before_writing(model: Any, args: Any, onnx_model: ir.Model, mode: TrainingMode) -> None:
    from exporter.verify import verify as run_verification

    with in_export_mode(model, _TRAINING[mode]) as runs:
        try:
            result = run_verification(runs, args, onnx_model)
        except ValueError as error:  # weights as inputs (export_params=False) cannot be fed
            raise ValueError(f"verify=True cannot run this model: {error}") from error
    if not result.passed:
        raise VerificationError(f"onnxruntime disagrees with eager torch:\n{result}")
