"""Capture: model + example args -> a TorchScript graph, its inputs and its parameters.

``nn.Module``s are traced, on meta tensors where the model allows (no FLOPs, no activations:
:mod:`exporter.capture.meta_trace`), else on the real ones; ``ScriptModule``s and ``ScriptFunction``s
keep their scripted graph (control flow included). Parameters and buffers become trailing graph inputs named by
their ``state_dict`` keys, each tensor once even where weights are tied.

One module per job: :mod:`.inputs` (the calling convention, flattened), :mod:`.trace`,
:mod:`.script` (and :mod:`.script_arguments`), :mod:`.meta_trace` (with :mod:`.fast_meta`),
:mod:`.lowering` and :mod:`.module_attributes` (the rewrites without which there is no graph to
hand on), :mod:`.call_sites` and :mod:`.autograd` (custom autograd Functions).
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from exporter.capture.autograd import prepare_functions
from exporter.capture.captured import Captured
from exporter.capture.equal_weights import EqualWeights, module_weights
from exporter.capture.inputs import split_args, wrap_numbers
from exporter.capture.module_copy import in_export_mode
from exporter.capture.script import capture_scripted
from exporter.capture.trace import capture_traced, has_scripted_parts, no_attention_fastpath, tracing_errors

__all__ = ["capture", "Captured"]


def capture(model: Any, args: Any, *, training: bool | None = False, compare_weights: bool = False) -> Captured:
    """Trace or lower ``model`` with ``args`` (the calling convention of torch's ONNX export), in
    training mode or not (``None``: the model's own flags), on a structural copy of an
    ``nn.Module`` (:func:`exporter.capture.module_copy.in_export_mode`).

    With ``compare_weights`` (an eval-mode export that folds constants), the returned record's
    ``equal_weights`` holds the comparisons of the model's weights, which run in a background
    thread from before the trace: a meta trace leaves the weights as they are, so what they
    answer stands; after a forward that really ran (which may write buffers in place) the
    weights are compared again as it left them.
    """
    with in_export_mode(model, training) as runs:
        is_training = isinstance(runs, torch.nn.Module) and bool(getattr(runs, "training", False))
        compare = compare_weights and not is_training
        early = EqualWeights(module_weights(runs)) if compare and isinstance(runs, torch.nn.Module) else None
        captured = _capture(runs, args)
    if early is not None and captured.method != "meta trace":
        early.cancel()
        early = None
    captured.training = is_training
    captured.equal_weights = early if early is not None or not compare else EqualWeights(captured.params)
    prepare_functions(captured.graph)
    return captured


# torch.jit.trace sets torch's process-wide map of module scopes while it traces: the exports of
# this process that take that path (models with scripted parts) take turns there.
_JIT_TRACE_LOCK = threading.Lock()


def _capture(model: Any, args: Any) -> Captured:
    positional, kwargs = split_args(args)
    if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return capture_scripted(model, positional, kwargs)
    if isinstance(model, torch.nn.Module) and has_scripted_parts(model):
        # Tracing a plain function cannot enter a scripted submodule ("not part of the active
        # trace"); torch.jit.trace registers submodules, and the scripted child's graph (with
        # its control flow) is then inlined like any scripted model.
        # Positional Python numbers are traced as 0-d tensors, as torch's exporter does.
        positional = wrap_numbers(positional)
        with _JIT_TRACE_LOCK, tracing_errors(model, positional, {}), torch.no_grad(), no_attention_fastpath():
            traced = torch.jit.trace(model, positional, check_trace=False, strict=False)
        # tracing just ran it; lists are flattened as a trace's are
        captured = capture_scripted(traced, positional, kwargs, example_run=False, sequences=False)
        captured.method = "trace + script"
        captured.reason = "scripted submodules or packed weights: torch.jit.trace enters them, on real tensors"
        return captured
    if isinstance(model, torch.nn.Module) or callable(model):
        return capture_traced(model, wrap_numbers(positional), kwargs)
    raise TypeError(f"model must be an nn.Module, ScriptModule or ScriptFunction, got {type(model).__name__}")
