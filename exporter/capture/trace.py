"""Tracing ``nn.Module``s and plain callables: on meta tensors where the model allows
(:mod:`exporter.capture.meta_trace`), else on the real ones."""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import os
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from exporter.capture import meta_trace
from exporter.capture.captured import Captured
from exporter.capture.function_modes import call_as_called
from exporter.capture.inputs import named_tensors, rebuild
from exporter.capture.lowering import inline_calls
from exporter.capture.module_copy import with_copied_buffers
from exporter.errors import ExporterError, TracingError
from exporter.ts_graph import PACKAGE_DIR, module_call_scope

__all__ = ["capture_traced", "tracing_errors", "no_attention_fastpath", "has_scripted_parts"]


def unique_state(module: torch.nn.Module) -> tuple[list[str], list[torch.Tensor]]:
    """state_dict entries, each tensor object once (tied weights keep their first key)."""
    seen: set[int] = set()
    names, values = [], []
    for key, value in module.state_dict(keep_vars=True).items():
        # quantized modules save packed params as (weight, bias) tuples and dtypes, and
        # their quantized weights are only used through the packed objects
        if not isinstance(value, torch.Tensor) or value.is_quantized:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        names.append(key)
        values.append(value)
    return names, values


def _parameter_names(fn: Callable[..., Any], count: int, kwargs: Mapping[str, Any]) -> list[str]:
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names = params[:count] + [f"input_{i}" for i in range(len(params), count)]
    return names + list(kwargs)


@contextlib.contextmanager
def _module_scopes(module: torch.nn.Module) -> Iterator[None]:
    """Name trace scopes by module path, so ONNX node names say where they came from.

    torch's tracer pushes a module's scope around its forward when the module is in the
    process-wide ``torch.jit._trace._trace_module_map``; here the module traced is capture's
    own copy, so each of its submodules gets, for the duration, a ``forward`` of its own that
    pushes the same scope around the same call: nothing outside the copy sees it."""
    wrapped = []
    for name, submodule in module.named_modules():
        if not name or isinstance(submodule, torch.jit.ScriptModule):  # the model itself has no scope
            continue
        wrapped.append((submodule, submodule.__dict__.get("forward", _NO_FORWARD)))
        submodule.__dict__["forward"] = _scoped(submodule.forward, name)
    try:
        yield
    finally:
        for submodule, previous in wrapped:
            if previous is _NO_FORWARD:
                del submodule.__dict__["forward"]
            else:
                submodule.__dict__["forward"] = previous


_NO_FORWARD = object()


def _scoped(forward: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``forward`` in a trace scope of its own per call (ts_graph.module_call_scope): a module
    called twice is two scopes, as in torch's tracer, whose scopes are objects where these are names."""
    calls = itertools.count()

    def scoped_forward(*args: Any, **kwargs: Any) -> Any:
        state = torch._C._get_tracing_state()
        if state is None:
            return forward(*args, **kwargs)
        state.push_scope(module_call_scope(name, next(calls)))
        try:
            return forward(*args, **kwargs)
        finally:
            state.pop_scope()

    return scoped_forward


class _NoFastPaths(TorchFunctionMode):
    """Modules traced through their composite path, in the tracing thread only (a mode is
    thread-local): while a torch function mode is active, ``has_torch_function`` holds for every
    tensor, one of the conditions under which nn.MultiheadAttention and TransformerEncoderLayer
    call their fused kernels in eval under no_grad (aten::_native_multi_head_attention,
    aten::_transformer_encoder_layer_fwd, which record as one opaque node) instead of the
    ordinary ops of the same math. TransformerEncoder asks, before that check, whether its
    padding mask is left-aligned (to pack the batch as a nested tensor), which needs values:
    the answer "no" sends it down the composite path without reading any."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func is torch._nested_tensor_from_mask_left_aligned:
            return False
        return call_as_called(func, args, kwargs)


def no_attention_fastpath() -> contextlib.AbstractContextManager[Any]:
    """Trace nn.MultiheadAttention/TransformerEncoderLayer/TransformerEncoder through their
    composite path, in this thread only (:class:`_NoFastPaths`)."""
    return _NoFastPaths()


def capture_traced(model: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Captured:
    """Trace ``model`` on meta tensors where it allows (:mod:`exporter.capture.meta_trace`), else
    for real. Capture hands in a structural copy in the export mode that shares the module's
    buffers (:mod:`exporter.capture.module_copy`); a meta trace copies that copy again with meta
    weights, a real trace with copied buffers."""
    module = model if isinstance(model, torch.nn.Module) else None
    forward = model.forward if module is not None else model
    top_names = _parameter_names(forward, len(args), kwargs)
    flat_inputs: list[torch.Tensor] = []
    input_names: list[str] = []
    for name, value in zip(top_names, list(args) + list(kwargs.values())):
        t, n = named_tensors(value, name)
        flat_inputs.extend(t)
        input_names.extend(n)
    # Tracing runs the model: a model that writes into its inputs must not change the caller's.
    flat_inputs = [t.detach().clone() for t in flat_inputs]
    param_names, params = unique_state(module) if module is not None else ([], [])

    def calling(callee: Callable[..., Any]) -> Callable[..., tuple[torch.Tensor, ...]]:
        """The function traced: ``callee`` on the inputs rebuilt from the traced tensors, its
        outputs flattened (the weights, traced as trailing inputs, are read from the module)."""

        def traced(*tensors_: torch.Tensor) -> tuple[torch.Tensor, ...]:
            user = iter(tensors_[: len(flat_inputs)])
            call_args = tuple(rebuild(a, user) for a in args)
            call_kwargs = {k: rebuild(v, user) for k, v in kwargs.items()}
            flat_out, _ = named_tensors(callee(*call_args, **call_kwargs), "output")
            return tuple(flat_out)

        return traced

    why = meta_trace.why_not_meta(module, flat_inputs + params)
    if why is None:
        try:
            graph = meta_trace.meta_trace(module, model, calling, flat_inputs + params, _trace_graph)
        except meta_trace.Unfit as error:
            why = f"the meta trace failed: {error}"
        else:
            inline_calls(graph)
            captured = Captured(graph, input_names, flat_inputs, param_names, params, "meta trace")
            captured.modules = _modules(module)
            return captured
    if module is not None:  # the forward runs for real: on copies of the buffers it may write
        model = module = with_copied_buffers(module)
        param_names, params = unique_state(module)
    with tracing_errors(model, args, kwargs):
        graph = _trace_graph(module, calling(model), flat_inputs + params)
    inline_calls(graph)  # a trace records calls of scripted functions
    captured = Captured(graph, input_names, flat_inputs, param_names, params, "trace", why or "")
    captured.modules = _modules(module)
    return captured


def _modules(module: torch.nn.Module | None) -> dict[str, torch.nn.Module] | None:
    """The modules whose calls the trace scopes name (_module_scopes), by path."""
    return dict(module.named_modules()) if module is not None else None


def _trace_graph(
    module: torch.nn.Module | None, fn: Callable[..., tuple[torch.Tensor, ...]], tensors_: list[torch.Tensor]
) -> torch._C.Graph:
    """The graph of ``fn`` on ``tensors_``; ``module`` (what ``fn`` calls) names the scopes."""
    from torch.jit._trace import _create_interpreter_name_lookup_fn

    scopes = _module_scopes(module) if module is not None else contextlib.nullcontext()
    with scopes, torch.no_grad(), no_attention_fastpath():
        graph, _ = torch._C._create_graph_by_tracing(fn, tensors_, _create_interpreter_name_lookup_fn(), False, False)
    return graph


@contextlib.contextmanager
def tracing_errors(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[None]:
    """An error the model's forward raises while traced, as a :class:`TracingError` naming the
    model's source line (the innermost frame outside torch) and whether eager runs the inputs."""
    try:
        yield
    except ExporterError:
        raise
    except Exception as error:  # noqa: BLE001 - re-raised with context
        raise TracingError(
            error, location=_raising_line(error), runs_eagerly=_runs_eagerly(model, args, kwargs)
        ) from error


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _raising_line(error: BaseException) -> str:
    """``file:line (in function)`` of the innermost frame of ``error`` in the user's code."""
    found = "unknown location"
    for frame, line in traceback.walk_tb(error.__traceback__):
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith((_TORCH_DIR, PACKAGE_DIR)) and not path.startswith("<"):
            found = f"{path}:{line} (in {frame.f_code.co_name})"
    return found


def _runs_eagerly(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the model runs on (copies of) the inputs outside tracing."""
    try:
        copied_args, copied_kwargs = copy.deepcopy((args, kwargs))
        with torch.no_grad():
            model(*copied_args, **copied_kwargs)
    except Exception:  # noqa: BLE001 - only the fact matters
        return False
    return True


def has_scripted_parts(model: torch.nn.Module) -> bool:
    """Whether tracing a plain function cannot capture ``model``: a scripted submodule is "not
    part of the active trace", and neither are the packed weights (TorchScript objects) of
    converted quantized modules; torch.jit.trace registers submodules and enters both."""
    return any(isinstance(m, torch.jit.ScriptModule) for m in model.modules() if m is not model) or any(
        isinstance(v, torch.ScriptObject) for m in model.modules() for v in vars(m).values()
    )
