"""export(): validate options, run the phases in order, write the file, return the model."""

from __future__ import annotations

import enum
import functools
import logging
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, BinaryIO, TypeVar, cast

import onnx_ir as ir
import torch

from exporter import passes, serialization
from exporter.assemble import assemble, dynamic_input_axes, normalize_dynamic_axes, optional_input_candidates
from exporter.capture import capture
from exporter.capture.module_copy import in_export_mode
from exporter.cleanup import cleanup
from exporter.defined_before_use import check_defined_before_use
from exporter.errors import ExporterError
from exporter.export_flag import exporting
from exporter.module_functions import FUNCTIONS_OPSET, classes_to_export, function_extraction
from exporter.operator_export_types import operator_export_type as parse_operator_export_type
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


_Function = TypeVar("_Function", bound=Callable[..., Any])


def _marked_as_exporting(function: _Function) -> _Function:
    """``function`` run with the export flag up (:mod:`exporter.export_flag`): the user's
    forward, wherever export runs it, sees ``torch.onnx.is_in_onnx_export()`` True."""

    @functools.wraps(function)
    def marked(*args: Any, **kwargs: Any) -> Any:
        with exporting():
            return function(*args, **kwargs)

    return cast(_Function, marked)


@_marked_as_exporting
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
    operator_export_type: Any = None,
    autograd_inlining: bool = True,
    export_modules_as_functions: bool | Collection[type[torch.nn.Module]] = False,
    verify: bool = False,
    report: bool = False,
    progress: serialization.Progress | None = None,
    external_data: bool | None = None,
) -> ir.Model | ExportReport:
    """Export ``model`` run on ``args`` to ONNX at ``f``; same convention as torch's ONNX export function.

    Returns the ``onnxscript.ir`` model that was written, or with ``report=True`` an
    :class:`ExportReport` (time per phase, node counts, weights; ``.model`` is the model).
    With ``verify=True`` the model is run in onnxruntime and compared with eager torch
    before anything is written. Nothing is written at ``f`` unless the export succeeds.
    ``progress(written, total)`` is called while weights are written (the command line
    draws a bar with it on a terminal). ``external_data``: None writes weights into the file
    up to 2 GiB and to ``<f>.data`` beside it above; True always to ``<f>.data`` (``f`` must be
    a path); False always into the file (over 2 GiB is an error, before anything is written).
    ``operator_export_type`` (torch's ``OperatorExportTypes`` or :class:`OperatorExportTypes`,
    default ONNX), ``autograd_inlining`` and ``export_modules_as_functions`` mean what they mean
    to torch's exporter (:mod:`exporter.operator_export`, :mod:`exporter.module_functions`).
    """
    opset = check_opset(opset_version)
    export_type = parse_operator_export_type(operator_export_type)
    if not isinstance(autograd_inlining, bool):
        raise TypeError(f"autograd_inlining must be True or False, got {autograd_inlining!r}")
    function_classes = classes_to_export(export_modules_as_functions)
    if function_classes and opset < FUNCTIONS_OPSET:
        raise ValueError(
            f"export_modules_as_functions needs opset_version {FUNCTIONS_OPSET} or higher (ONNX local "
            f"functions come with IR version 8), got {opset}"
        )
    serialization.check_destination(f, external_data)
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
            operator_export_type=export_type,
            autograd_inlining=autograd_inlining,
        )
    with timer.phase("cleanup"):
        # Shape arithmetic on constants is always folded during emission; this folds weights.
        fold = do_constant_folding and not captured.training
        functions = function_extraction(model, captured.modules, function_classes, captured.param_names, custom_opsets)
        cleanup(onnx_model, fold_constants=fold, equal_weights=captured.equal_weights, before_deduplication=functions)
        check_defined_before_use(onnx_model)  # an exporter defect raises here: no file is written
    if verbose:
        print(onnx_model)
    if verify:
        with timer.phase("verify"):
            _verify_before_writing(model, args, onnx_model, mode)
    with timer.phase("save"):
        serialization.save(onnx_model, f, progress, external_data)
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
