"""Capture: model + example args -> a TorchScript graph, its inputs and its parameters.

``nn.Module``s are traced, on meta tensors where the model allows (no FLOPs, no activations:
:mod:`exporter.capture.meta_trace`), else on the real ones; ``ScriptModule``s and
``ScriptFunction``s keep their scripted graph (control flow included). Parameters and buffers
become trailing graph inputs named by their ``state_dict`` keys, each tensor once even where
weights are tied. A module is traced as a structural copy in the export's training mode
(:mod:`.module_copy`), never as the object the user holds.

One module per job: :mod:`.inputs` (the calling convention, flattened), :mod:`.trace`,
:mod:`.script` (and :mod:`.script_arguments`), :mod:`.meta_trace` (with :mod:`.fast_meta`),
:mod:`.module_copy`, :mod:`.lowering` and :mod:`.module_attributes` (the rewrites without which
there is no graph to hand on), :mod:`.call_sites`, :mod:`.autograd` (custom autograd Functions)
and :mod:`.equal_weights` (the weight comparisons cleanup's deduplication reads).

Process-wide effects
--------------------
An export changes nothing another thread of the user's can see, during it or after it
(tests/behaviour/test_isolation.py runs inference beside exports, meta and real, and checks the module
afterwards). What a trace used to set for every thread is now scoped to the tracing thread:
meta kernels in a dispatch mode (:class:`.fast_meta.MetaKernels`, in place of
``torch.library`` registrations; meta capture of BERT 1x16 and encoder12 within 3 % of them),
the attention fast path kept off by a function mode (in place of
``torch.backends.mha.set_fastpath_enabled``; no measurable cost), module scopes named by the
copy's own ``forward`` (in place of ``torch.jit._trace._trace_module_map``); a meta trace's
warnings are no longer caught with ``warnings.catch_warnings``, and the GIL switch interval
EqualWeights set (no measurable gain on encoder12: cleanup 14 ms without, 16 ms with) is gone.
What is left, each restored also on failure:

- The training flag of a ScriptModule exported in another mode than its own (and of the
  ScriptModules inside a module, which the copy shares): a ScriptModule cannot be copied and
  its flag is read when it is lowered, so it is switched while the model is captured (and
  while ``verify=True`` runs it) and restored; exports that switch flags take turns, so that
  none restores another's switch. Off: ``training=TrainingMode.PRESERVE``. Test:
  ``test_a_scripted_model_gets_its_training_flag_back_even_from_parallel_exports``.
- ``torch.jit._trace._trace_module_map``, which torch.jit.trace itself sets while it traces a
  module with scripted submodules or packed quantized weights (a plain trace cannot enter
  them): torch restores it; this package's calls take turns (``_JIT_TRACE_LOCK``). Off: export
  the model scripted. Test: ``test_torch_jit_trace_leaves_no_module_map``.
- At ``import exporter``, stand-ins for sympy in ``sys.modules`` while onnx_ir is imported
  (exporter/__init__.py): 0.2-0.35 s less CPU per import (0.24 s against 0.45-0.6 s here),
  removed right after, also on failure; another thread importing sympy meanwhile gets a
  stand-in that imports the real module on first use. Off: import sympy (or onnx_ir) first.
  Tests: tests/behaviour/test_import_cost.py.
- Imports on first use (symbolic families, onnx_ir's passes, torch's Python meta kernels on
  the first meta trace): ordinary imports, kept, under Python's import lock. Off for the meta
  kernels: ``EXPORTER_META_TRACE=real``.
- What a forward does outside its module (Python globals, tensors held elsewhere than the
  module's tables and top-level containers) happens as when the user runs it: the copy runs
  the user's code.
- ``torch.onnx.is_in_onnx_export()`` reads True while an export runs (:mod:`exporter.export_flag`):
  models branch on it to take the path ONNX expresses (torch's exporter sets it for the whole
  export, so without it such models would export their eager path). Its flag,
  ``torch.onnx._internal.torchscript_exporter._globals.GLOBALS.in_onnx_export``, is one
  attribute for the process, the one write into ``torch.onnx`` (README: independence), made
  only if the process imported ``torch.onnx``; if not, a finder at the front of
  ``sys.meta_path`` raises it should the forward import torch.onnx mid-export. Exports in
  parallel threads share it through a counter: the first raises it, the last lowers it (only
  if an export raised it), also on failure; the finder leaves with the last export. Other
  threads of the user's read True meanwhile, as with torch's exporter;
  ``exporter.is_in_onnx_export()`` answers per thread. Off: ``EXPORTER_TORCH_EXPORT_FLAG=off``.
  Tests: tests/test_export_flag.py (``test_parallel_exports_share_torch_flag_through_a_counter``,
  ``test_the_flags_are_down_after_a_forward_raised``).
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from exporter.capture.autograd import prepare_functions
from exporter.capture.captured import Captured
from exporter.capture.equal_weights import EqualWeights, module_weights
from exporter.capture.inputs import split_args, wrap_numbers
from exporter.capture.module_copy import in_export_mode, with_copied_buffers
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
    with in_export_mode(model, training, copy_buffers=False) as runs:
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
        model = with_copied_buffers(model)  # the trace runs the forward for real
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
