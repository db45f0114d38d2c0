"""Capture: model + example args -> a TorchScript graph, its inputs and its parameters.

``nn.Module``s are traced, on meta tensors where the model allows (no FLOPs, no activations:
:mod:`exporter.meta_trace`), else on the real ones; ``ScriptModule``s and ``ScriptFunction``s
keep their scripted graph (control flow included). Parameters and buffers become trailing graph inputs named by
their ``state_dict`` keys, each tensor once even where weights are tied.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import inspect
import os
import threading
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import torch

from exporter import meta_trace
from exporter.errors import ExporterError, ModelRaisedError, TracingError
from exporter.passes.lower import (
    fix_index_dtypes,
    inline_calls,
    inline_everything,
    inline_forks,
    lower_script_module,
    substitute_interpolate,
)
from exporter.passes.module_attributes import has_attribute_writes
from exporter.registry import PYTHON_OP, REGISTRY, autograd_function
from exporter.tensors import quantized_input_parts
from exporter.ts_graph import CALL_SITES, all_nodes, call_chain, library_line, register_locator, source_location

__all__ = [
    "Captured",
    "capture",
    "flatten",
    "flatten_inputs",
    "number_tensor",
    "sequence_arguments",
    "split_args",
]

# What a flattened model input is: a tensor, or the items of a scripted model's list argument,
# which is one ONNX sequence input (see sequence_arguments).
ModelInput = torch.Tensor | list[torch.Tensor]


@dataclasses.dataclass
class Captured:
    """A captured graph: leading inputs are the user's tensors, trailing ones the weights. An
    input that is a list (of 0-d tensors for a list of numbers) is a scripted model's list
    argument, one ONNX sequence input (see :func:`sequence_arguments`)."""

    graph: torch._C.Graph
    input_names: list[str]
    inputs: list[ModelInput]
    param_names: list[str]
    params: list[torch.Tensor]
    # how the graph was captured ("meta trace", "trace", "script") and why not on meta tensors
    method: str = "trace"
    reason: str = ""
    # the user's call sites of a lowered ScriptModule's nodes, worked out when an error needs them
    call_sites: CallSites | None = None

    def locate(self, node: torch._C.Node) -> str:
        """Where ``node`` comes from in the user's code, for error messages (source_location,
        with the call sites that lowering inlined)."""
        if self.call_sites is not None:
            return self.call_sites.locate(node, self.graph)
        return source_location(node)

    @property
    def ts_inputs(self) -> list[torch._C.Value]:
        return list(self.graph.inputs())


class CallSites:
    """The user's call sites of the nodes of a lowered ScriptModule, worked out only when an
    error names a node: lowering (``_jit_pass_lower_graph`` or freezing) inlines calls in
    torch, which keeps the call stack in C++ only, and recording it on every node of a large
    model costs more than the export itself.

    On first use the module's forward is inlined again by :func:`inline_calls`; a node is then
    found there by its kind and source range. A range reached from several call sites takes
    them in order when both graphs have it as often (lowering inlines in the same order;
    freezing only removes nodes); otherwise every call site it may come from is named."""

    def __init__(self, module: torch._C.ScriptModule) -> None:
        self._module = module
        self._chains: dict[tuple[str, str], list[str]] | None = None
        self._counts: dict[tuple[str, str], list[torch._C.Node]] | None = None

    def locate(self, node: torch._C.Node, graph: torch._C.Graph) -> str:
        """``source_location(node)``, with the user's call sites for a node of torch's code."""
        own = source_location(node)
        if node.hasAttribute(CALL_SITES) or library_line(node) is None:
            return own
        try:
            chains = self._chains_of(node)
        except Exception:  # noqa: BLE001 - naming a place must not hide the error being reported
            return own
        if not chains:
            return own
        if len(set(chains)) > 1:
            same = self._same_nodes(graph, node)
            if len(same) == len(chains):
                chains = [chains[next(i for i, other in enumerate(same) if other == node)]]
        rendered = dict.fromkeys(call_chain(node, chain) for chain in chains)
        return " or ".join(rendered)

    def _chains_of(self, node: torch._C.Node) -> list[str]:
        if self._chains is None:
            inlined = self._module._get_method("forward").graph.copy()
            inline_calls(inlined, self._module)
            self._chains = collections.defaultdict(list)
            for other in all_nodes([inlined]):
                if other.hasAttribute(CALL_SITES):
                    self._chains[(other.kind(), other.sourceRange())].append(other.s(CALL_SITES))
        return self._chains.get((node.kind(), node.sourceRange()), [])

    def _same_nodes(self, graph: torch._C.Graph, node: torch._C.Node) -> list[torch._C.Node]:
        key = (node.kind(), node.sourceRange())
        if self._counts is None:
            self._counts = collections.defaultdict(list)
            for other in all_nodes([graph]):
                if other.kind() != "prim::Constant":
                    self._counts[(other.kind(), other.sourceRange())].append(other)
        return self._counts.get(key, [])


def split_args(args: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The calling convention of torch's ONNX export: a tensor, a tuple, or a tuple ending in a kwargs dict."""
    if isinstance(args, torch.Tensor):
        return (args,), {}
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        return (args,), {}
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


def flatten(obj: Any, name: str) -> tuple[list[torch.Tensor], list[str]]:
    """Tensors of a nested structure in order (tuples, lists, dicts), with leaf names. A dict
    gives each key then its value, as ``torch.jit._flatten`` does: a tensor key is an input too."""
    if isinstance(obj, torch.Tensor):
        return [obj], [name]
    tensors_: list[torch.Tensor] = []
    names: list[str] = []
    if isinstance(obj, (list, tuple)):
        items: list[tuple[str, Any]] = [(f"{name}_{i}", v) for i, v in enumerate(obj)]
    elif isinstance(obj, Mapping):
        items = []
        for i, (k, v) in enumerate(obj.items()):
            if isinstance(k, torch.Tensor):
                items.append((f"{name}_key{i}", k))
            items.append((f"{name}_{k}" if isinstance(k, (str, int)) else f"{name}_{i}", v))
    else:
        return [], []
    for sub_name, value in items:
        t, n = flatten(value, sub_name)
        tensors_.extend(t)
        names.extend(n)
    return tensors_, names


def is_number(value: Any) -> bool:
    """A Python int, float or bool (an argument torch's exporter makes a 0-d graph input)."""
    return isinstance(value, (bool, int, float))


def number_tensor(value: bool | int | float) -> torch.Tensor:
    """A Python number as the 0-d tensor torch's exporter feeds for it (``torch.jit._flatten``):
    int -> int64, float -> float64, bool -> bool."""
    if isinstance(value, bool):
        return torch.tensor(value, dtype=torch.bool)
    if isinstance(value, int):
        return torch.tensor(value, dtype=torch.int64)
    return torch.tensor(value, dtype=torch.float64)


def wrap_numbers(positional: Sequence[Any]) -> tuple[Any, ...]:
    """Positional Python numbers, also those nested in positional tuples, lists and dict values,
    as 0-d tensors: torch's exporter flattens the positional arguments with ``torch.jit._flatten``,
    which makes every such number a graph input. Keyword arguments are not wrapped (their
    numbers are baked in); dict keys that are numbers stay keys."""
    return tuple(_wrap_nested(v) for v in positional)


def _wrap_nested(value: Any) -> Any:
    if is_number(value):
        return number_tensor(value)
    if isinstance(value, tuple):
        items = [_wrap_nested(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_wrap_nested(v) for v in value]
    if isinstance(value, dict):
        return type(value)((k, _wrap_nested(v)) for k, v in value.items())
    return value


def flatten_inputs(args: Any, model: Any = None) -> list[ModelInput]:
    """What an exported model takes for ``args``, in graph-input order: positional arguments
    (a Python number as its 0-d tensor) then keyword arguments, flattened; a quantized tensor
    as its integer values, scale and zero point (tensors.quantized_input_parts). Given the
    ``model``, a scripted model's list argument is one entry, the list of its items as tensors,
    fed to its sequence input (:func:`sequence_arguments`); without it every list is flattened,
    which is what a traced model takes."""
    positional, kwargs = split_args(args)
    sequences = sequence_arguments(model, positional)
    flat: list[ModelInput] = []
    for index, value in enumerate(list(wrap_numbers(positional)) + list(kwargs.values())):
        if index in sequences:
            flat.append(sequences[index])
            continue
        for tensor in flatten(value, "")[0]:
            flat.extend(quantized_input_parts(tensor))  # a quantized tensor is three inputs
    return flat


# List element types a scripted list argument may have to be one ONNX sequence input, and the
# dtype its number items are fed as (a TorchScript float is a double, as number_tensor gives).
_SEQUENCE_NUMBER_DTYPES = {
    torch._C.IntType: torch.int64,
    torch._C.FloatType: torch.float64,
    torch._C.BoolType: torch.bool,
}


def sequence_arguments(model: Any, positional: Sequence[Any]) -> dict[int, list[torch.Tensor]]:
    """The positional arguments a scripted model takes as one ONNX sequence input each, by
    position, with their items as tensors.

    torch's exporter declares a scripted ``List[int]``, ``List[float]`` or ``List[bool]``
    argument as one ``seq(tensor)`` input (numbers as 0-d tensors), so the list's length, not
    only its values, is chosen when the model runs; its suite feeds such an argument as one
    Python list. A traced model flattens lists instead (one input per item), and so do tuples
    and keyword arguments of scripted models, as torch's exporter does.

    A ``List[Tensor]`` argument stays one input per tensor, unlike torch's exporter (which
    declares a sequence and then fails on ``torch.cat``/``torch.stack`` of it): with the count
    fixed at export time, every loop over the list unrolls and every list operation exports at
    any opset (a scripted detection model's ``images: List[Tensor]``), as a trace gives it.
    Number items given as tensors (``[torch.tensor(2), torch.tensor(4)]`` for a ``List[int]``)
    are fed in the list's item dtype."""
    if not isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return {}
    found: dict[int, list[torch.Tensor]] = {}
    for index, (param, value) in enumerate(zip(_schema_params(model), positional)):
        items = _sequence_items(param.type, value)
        if items is not None:
            found[index] = items
    return found


def _sequence_items(schema_type: torch._C.JitType, value: Any) -> list[torch.Tensor] | None:
    """``value``'s items as the tensors its sequence input is fed, or None when the argument
    is not one sequence input (not a list, or a list of other things than numbers or tensors)."""
    if not isinstance(value, list) or not isinstance(schema_type, torch._C.ListType):
        return None
    element = schema_type.getElementType()
    if isinstance(element, torch._C.TensorType):
        return None  # one input per tensor: see sequence_arguments
    dtype = next((d for kind, d in _SEQUENCE_NUMBER_DTYPES.items() if isinstance(element, kind)), None)
    if dtype is None or not all(is_number(item) or isinstance(item, torch.Tensor) for item in value):
        return None
    return [torch.as_tensor(item).detach().to(dtype).reshape(()) for item in value]


def _rebuild(obj: Any, flat: Iterator[torch.Tensor]) -> Any:
    if isinstance(obj, torch.Tensor):
        return next(flat)
    if isinstance(obj, tuple):
        return tuple(_rebuild(v, flat) for v in obj)
    if isinstance(obj, list):
        return [_rebuild(v, flat) for v in obj]
    if isinstance(obj, Mapping):
        rebuilt = []
        for k, v in obj.items():
            key = next(flat) if isinstance(k, torch.Tensor) else k
            rebuilt.append((key, _rebuild(v, flat)))
        return type(obj)(rebuilt)
    return obj


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
def _module_scopes(model: torch.nn.Module) -> Iterator[None]:
    """Name trace scopes by module path, so ONNX node names say where they came from."""
    import torch.jit._trace as trace_impl

    previous = trace_impl._trace_module_map
    trace_impl._trace_module_map = {m: name for name, m in model.named_modules()}
    try:
        yield
    finally:
        trace_impl._trace_module_map = previous


@contextlib.contextmanager
def _no_attention_fastpath() -> Iterator[None]:
    """Trace nn.MultiheadAttention/TransformerEncoderLayer through their composite path.

    Under no_grad in eval they otherwise call fused kernels
    (aten::_transformer_encoder_layer_fwd, aten::_native_multi_head_attention) that record
    as one opaque node; the composite path records the same math as ordinary ops.
    """
    previous = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(previous)


def _trace(model: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Captured:
    """Trace ``model`` on meta tensors where it allows (:mod:`exporter.meta_trace`), else for real."""
    module = model if isinstance(model, torch.nn.Module) else None
    forward = model.forward if module is not None else model
    top_names = _parameter_names(forward, len(args), kwargs)
    flat_inputs: list[torch.Tensor] = []
    input_names: list[str] = []
    for name, value in zip(top_names, list(args) + list(kwargs.values())):
        t, n = flatten(value, name)
        flat_inputs.extend(t)
        input_names.extend(n)
    # Tracing runs the model: a model that writes into its inputs must not change the caller's.
    flat_inputs = [t.detach().clone() for t in flat_inputs]
    param_names, params = unique_state(module) if module is not None else ([], [])

    def traced(*tensors_: torch.Tensor) -> tuple[torch.Tensor, ...]:
        user = iter(tensors_[: len(flat_inputs)])
        call_args = tuple(_rebuild(a, user) for a in args)
        call_kwargs = {k: _rebuild(v, user) for k, v in kwargs.items()}
        out = model(*call_args, **call_kwargs)
        flat_out, _ = flatten(out, "output")
        return tuple(flat_out)

    with meta_trace.exclusive(module):
        why = meta_trace.why_not_meta(module, flat_inputs + params)
        if why is None:
            try:
                graph = meta_trace.meta_trace(
                    module, traced, flat_inputs + params, lambda fn, tensors_: _trace_graph(module, fn, tensors_)
                )
            except meta_trace.Unfit as error:
                why = f"the meta trace failed: {error}"
            else:
                return Captured(graph, input_names, flat_inputs, param_names, params, "meta trace")
        with _tracing_errors(model, args, kwargs):
            graph = _trace_graph(module, traced, flat_inputs + params)
    return Captured(graph, input_names, flat_inputs, param_names, params, "trace", why or "")


def _trace_graph(
    module: torch.nn.Module | None, fn: Callable[..., tuple[torch.Tensor, ...]], tensors_: list[torch.Tensor]
) -> torch._C.Graph:
    from torch.jit._trace import _create_interpreter_name_lookup_fn

    scopes = _module_scopes(module) if module is not None else contextlib.nullcontext()
    with scopes, torch.no_grad(), _no_attention_fastpath():
        graph, _ = torch._C._create_graph_by_tracing(fn, tensors_, _create_interpreter_name_lookup_fn(), False, False)
    return graph


@contextlib.contextmanager
def _tracing_errors(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[None]:
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
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _raising_line(error: BaseException) -> str:
    """``file:line (in function)`` of the innermost frame of ``error`` in the user's code."""
    found = "unknown location"
    for frame, line in traceback.walk_tb(error.__traceback__):
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith((_TORCH_DIR, _PACKAGE_DIR)) and not path.startswith("<"):
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


def _script(
    model: torch.jit.ScriptModule | torch.jit.ScriptFunction,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    example_run: bool = True,
    sequences: bool = True,
) -> Captured:
    """:func:`_script_optimizing` with the graph executor optimizing, whatever the caller set:
    torch builds and caches each callee's graph for inlining the first time it is asked for,
    optimized (its own calls inlined, branches on module constants folded) only if the executor
    optimizes then; TorchScript leaves calls of methods it never compiled in branches that only
    this folding removes (``MultiheadAttention.merge_masks``), so lowering needs it on."""
    with torch.jit.optimized_execution(True):
        return _script_optimizing(model, args, kwargs, example_run, sequences)


def _script_optimizing(
    model: torch.jit.ScriptModule | torch.jit.ScriptFunction,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    example_run: bool = True,
    sequences: bool = True,
) -> Captured:
    """A scripted model's graph, in steps: lower it (weights become trailing inputs), bind
    the call's arguments to its schema, bind inputs (tensors; positional int/float/bool as
    0-d tensors; with ``sequences``, positional lists of numbers or tensors as one sequence
    input each (:func:`sequence_arguments`); other tuples, lists and dict values flattened)
    and bake the other arguments in as constants, run the model once on the example inputs,
    and propagate their shapes. ``sequences=False`` flattens lists too: the convention of
    a trace, for a model traced by torch.jit.trace because of scripted parts.

    The example run computes nothing the export uses: shapes are propagated from the inputs'
    types without running anything. It is there to refuse inputs that do not fit with the
    model's own message; ``example_run=False`` skips it where the model has just run on these
    inputs (torch.jit.trace of a module with scripted parts)."""
    _check_has_forward(model)
    graph, params, param_names = _lower_scripted(model)
    schema_params = _schema_params(model)
    call = _bind_call(schema_params, args, kwargs)
    substitute_interpolate(graph)
    inline_calls(graph)  # a ScriptFunction's calls (a module's were inlined by lowering)
    inline_forks(graph)
    user_count = len(list(graph.inputs())) - len(params)
    if len(call) != user_count:
        raise TypeError(f"the scripted model takes {user_count} inputs, {len(call)} were given")
    live_numbers = [
        index < len(args) and is_number(value) and _takes_number(param.type)
        for index, (param, value) in enumerate(zip(schema_params, call))
    ]
    lists = sequence_arguments(model, args) if sequences else {}
    kept = [live or index in lists for index, live in enumerate(live_numbers)]
    _bind_arguments(graph, call[:user_count], schema_params, kept, len(args))
    input_names: list[str] = []
    flat_inputs: list[ModelInput] = []
    for index, (param, value, live) in enumerate(zip(schema_params, call, live_numbers)):
        if index in lists:
            flat_inputs.append(lists[index])
            input_names.append(param.name)
            continue
        if live:
            value = number_tensor(value)
        elif index < len(args) and isinstance(value, (tuple, list, dict)):
            value = _wrap_nested(value)  # numbers in positional containers are inputs (_construct)
        leaves, names = flatten(value, param.name)
        flat_inputs.extend(leaves)
        input_names.extend(names)
    if example_run:
        _run_once(_run_copy(model), call)
    graph = _propagate_shapes(graph, flat_inputs, params)
    fix_index_dtypes(graph)
    reason = "the graph comes from TorchScript; one example run checks that the inputs fit the model"
    captured = Captured(graph, input_names, flat_inputs, param_names, list(params), "script", reason)
    if isinstance(model, torch.jit.ScriptModule):
        captured.call_sites = CallSites(model._c)
        register_locator(graph, captured.call_sites.locate)  # for the passes' errors
    return captured


def _lower_scripted(
    model: torch.jit.ScriptModule | torch.jit.ScriptFunction,
) -> tuple[torch._C.Graph, list[Any], list[str]]:
    """The graph to export, its parameters, and their state_dict names (a function has none)."""
    if not isinstance(model, torch.jit.ScriptModule):
        return model.graph.copy(), [], []
    graph, params = lower_script_module(model)
    param_names = _state_dict_names(model, params)
    return graph, [p.detach() if isinstance(p, torch.Tensor) else p for p in params], param_names


def _state_dict_names(model: torch.jit.ScriptModule, params: Sequence[Any]) -> list[str]:
    """Name lowered parameters by the state_dict entry sharing their storage, so initializers
    keep the names users know; packed quantized weights (ScriptObjects) get positional names."""
    by_storage: dict[tuple[Any, ...], str] = {}
    for key, value in model.state_dict().items():
        if not isinstance(value, torch.Tensor) or value.is_quantized:
            continue
        by_storage.setdefault((value.data_ptr(), value.dtype, tuple(value.shape), value.stride()), key)
    param_names = []
    for i, p in enumerate(params):
        if not isinstance(p, torch.Tensor):
            param_names.append(f"param_{i}")
            continue
        key = (p.data_ptr(), p.dtype, tuple(p.shape), p.stride())
        param_names.append(by_storage.get(key, f"param_{i}"))
    return param_names


def _check_has_forward(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> None:
    """A scripted module whose forward is overloaded (nn.LSTM/GRU/RNN: tensor and
    PackedSequence inputs) has only the compiled overloads, ``forward__0``..., and no
    ``forward`` that torch itself could call: say so instead of torch's bare RuntimeError."""
    if not isinstance(model, torch.jit.ScriptModule) or model._c._has_method("forward"):
        return
    overloads = sorted(name for name in model._c._method_names() if name.startswith("forward__"))
    name = model.original_name
    detail = f" (only its overloads {', '.join(overloads)})" if overloads else ""
    raise ExporterError(
        f"the scripted module {name} has no forward method{detail}: torch cannot call it either. Script a module "
        f"whose forward calls {name}, which picks the overload for its inputs, or export the module unscripted"
    )


def _schema_params(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> list[torch._C.Argument]:
    """The arguments of the scripted forward, without a module's ``self``."""
    if isinstance(model, torch.jit.ScriptModule):
        return list(model.forward.schema.arguments[1:])
    return list(model.schema.arguments)


def _bind_call(schema_params: Sequence[torch._C.Argument], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """Positional arguments, then keyword arguments and defaults in schema order."""
    call = list(args)
    kwargs = dict(kwargs)
    for param in schema_params[len(args) :]:
        if param.name in kwargs:
            call.append(kwargs.pop(param.name))
        elif param.has_default_value():
            call.append(param.default_value)
        else:
            raise TypeError(f"missing argument {param.name!r} of the scripted forward")
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for the scripted forward: {sorted(kwargs)}")
    return call


_NUMBER_TYPES = (torch._C.IntType, torch._C.FloatType, torch._C.BoolType, torch._C.NumberType)


def _takes_number(schema_type: torch._C.JitType) -> bool:
    """An ``int``/``float``/``bool``/``Scalar`` parameter (or Optional of one)."""
    if isinstance(schema_type, torch._C.OptionalType):
        schema_type = schema_type.getElementType()
    return isinstance(schema_type, _NUMBER_TYPES)


def _bind_arguments(
    graph: torch._C.Graph,
    call: Sequence[Any],
    schema_params: Sequence[torch._C.Argument],
    kept: Sequence[bool],
    positional: int,
) -> None:
    """Tensors, live numbers and sequence arguments (``kept``) stay graph inputs; a positional
    tuple, list or dict holding tensors or numbers becomes one graph input per tensor and number
    (a dict's values), rebuilt by prim::TupleConstruct/ListConstruct/DictConstruct: the interface
    tracing gives and :func:`flatten_inputs` feeds (see :func:`wrap_numbers`); other arguments
    (None, strings, numbers and containers of keyword arguments, except for their tensors)
    become constants."""
    graph_inputs = list(graph.inputs())
    order: list[list[torch._C.Value]] = [[v] for v in graph_inputs]  # the inputs each call argument ends up as
    for index in reversed(range(len(call))):
        value = call[index]
        if isinstance(value, torch.Tensor) or kept[index]:
            continue
        if isinstance(value, dict) and any(isinstance(k, torch.Tensor) for k in value):
            raise TypeError(f"scripted input {schema_params[index].name!r}: dicts with tensor keys are not supported")
        leaves: list[torch._C.Value] = []
        numbers_live = index < positional
        with graph.insert_point_guard(_first_node(graph)):
            if (
                isinstance(value, (list, tuple, dict))
                and flatten(_wrap_nested(value) if numbers_live else value, "")[0]
            ):
                replacement = _construct(graph, value, graph_inputs[index].type(), leaves, numbers_live)
            else:
                replacement = graph.insertConstant(value)
        graph_inputs[index].replaceAllUsesWith(replacement)
        graph.eraseInput(index)
        order[index] = leaves
    # new leaves were appended after the weights: move each to where its argument was
    position = {v.unique(): i for i, v in enumerate(graph.inputs())}
    graph.permuteInputs([position[v.unique()] for vs in order for v in vs])


def _first_node(graph: torch._C.Graph) -> torch._C.Node:
    return next(iter(graph.nodes()), graph.return_node())


def _number_type(value: bool | int | float) -> torch._C.JitType:
    """The TorchScript type of the input a Python number becomes (its 0-d tensor's dtype, number_tensor)."""
    if isinstance(value, bool):
        return torch._C.BoolType.get()
    return torch._C.IntType.get() if isinstance(value, int) else torch._C.FloatType.get()


def _construct(
    graph: torch._C.Graph, value: Any, ts_type: torch._C.JitType, leaves: list[torch._C.Value], numbers_live: bool
) -> Any:
    """``value`` rebuilt in the graph: each tensor (and, with ``numbers_live``, each Python
    number, as an int/float/bool input fed a 0-d tensor) a new graph input added to ``leaves``,
    tuples and lists constructed from their items, anything else a constant."""
    if isinstance(ts_type, torch._C.OptionalType):
        ts_type = ts_type.getElementType()
    if isinstance(value, torch.Tensor) or (numbers_live and is_number(value)):
        graph_input = graph.addInput()
        graph_input.setType(_number_type(value) if is_number(value) else torch._C.TensorType.get())
        leaves.append(graph_input)
        return graph_input
    if isinstance(value, tuple):
        item_types = ts_type.elements() if isinstance(ts_type, torch._C.TupleType) else [None] * len(value)
        items = [_construct(graph, v, t, leaves, numbers_live) for v, t in zip(value, item_types)]
        node = graph.insertNode(graph.create("prim::TupleConstruct", items))
        node.output().setType(torch._C.TupleType([item.type() for item in items]))
        return node.output()
    if isinstance(value, list):
        item_type = ts_type.getElementType() if isinstance(ts_type, torch._C.ListType) else torch._C.TensorType.get()
        items = [_construct(graph, v, item_type, leaves, numbers_live) for v in value]
        node = graph.insertNode(graph.create("prim::ListConstruct", items))
        node.output().setType(torch._C.ListType(item_type))
        return node.output()
    if isinstance(value, dict) and isinstance(ts_type, torch._C.DictType):
        # keys are constants (torch.jit._flatten feeds only the values of a non-tensor key)
        items = []
        for key, item in value.items():
            items.append(graph.insertConstant(key))
            items.append(_construct(graph, item, ts_type.getValueType(), leaves, numbers_live))
        node = graph.insertNode(graph.create("prim::DictConstruct", items))
        node.output().setType(ts_type)
        return node.output()
    return graph.insertConstant(value)


def _run_copy(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> Callable[..., Any]:
    """What :func:`_run_once` may run: a copy of a module whose forward writes its attributes
    (``self.count += 1``), so exporting leaves the module (and its captured weights) as it was."""
    if not isinstance(model, torch.jit.ScriptModule):
        return model
    graph = model.graph.copy()
    inline_everything(graph)
    return copy.deepcopy(model) if has_attribute_writes(graph) else model


def _run_once(model: Callable[..., Any], call: Sequence[Any]) -> None:
    """Run the model once: inputs that do not fit fail here, with the model's own message,
    instead of producing a graph that fails in onnxruntime."""
    try:
        with torch.no_grad():
            model(*[v.detach().clone() if isinstance(v, torch.Tensor) else v for v in call])
    except Exception as error:
        raise ModelRaisedError(f"the model raised on the example inputs: {_short(error)}") from error


def _propagate_shapes(
    graph: torch._C.Graph, flat_inputs: Sequence[ModelInput], params: Sequence[Any]
) -> torch._C.Graph:
    """The example inputs' shapes and dtypes, propagated through the graph.

    Skipped with packed quantized weights: a traced module that has them already carries its
    shapes, and this pass only accepts tensors. A list input takes one tensor: torch types a
    ``Tensor[]`` input's items after it (its first item) and skips one for a list of numbers.

    A ``Tensor[]`` input (a sequence input) keeps its plain type and the graph only gets its
    input types, as torch's exporter gives every scripted graph: typed after one item, the list
    would be a ``List[Float(2, 3)]``, which matches no op's ``Tensor[]`` argument (lists are
    invariant), and torch's propagation aborts on it (alias analysis: no op for aten::cat).
    """
    if not all(isinstance(p, torch.Tensor) for p in params):
        return graph
    stack = [(value[0] if value else torch.zeros(())) if isinstance(value, list) else value for value in flat_inputs]
    tensor_lists = [
        index
        for index, (value, ts_input) in enumerate(zip(flat_inputs, graph.inputs()))
        if isinstance(value, list) and _is_tensor_list(ts_input.type())
    ]
    inputs = tuple(stack) + tuple(params)
    propagate = _propagates(graph) and not tensor_lists
    try:
        propagated = torch._C._propagate_and_assign_input_shapes(graph, inputs, [0] * len(inputs), False, propagate)
    except RuntimeError:
        # torch's legacy propagation asserts on some valid graphs (a list comprehension over
        # chunks next to an index_put in a loop): the input types alone, as when it cannot run
        if not propagate:
            raise
        propagated = torch._C._propagate_and_assign_input_shapes(graph, inputs, [0] * len(inputs), False, False)
    ts_inputs = list(propagated.inputs())
    for index in tensor_lists:
        ts_inputs[index].setType(torch._C.ListType(torch._C.TensorType.get()))
    return propagated


def _is_tensor_list(ts_type: torch._C.JitType) -> bool:
    return isinstance(ts_type, torch._C.ListType) and isinstance(ts_type.getElementType(), torch._C.TensorType)


def _propagates(graph: torch._C.Graph) -> bool:
    """Whether torch's shape propagation can run on ``graph``: it aborts the whole process
    (munmap_chunk: invalid pointer) on aten::chunk with a negative constant dim. Such a graph
    only gets its input types, as torch's own exporter gives every scripted graph."""
    for node in all_nodes([graph]):
        if node.kind() == "aten::chunk" and node.inputsSize() == 3:
            dim = node.inputsAt(2).node()
            if dim.kind() == "prim::Constant" and dim.hasAttribute("value") and dim.i("value") < 0:
                return False
    return True


def _short(error: BaseException) -> str:
    """A TorchScript error without its embedded interpreter traceback: the last line says it."""
    text = str(error)
    if "Traceback of TorchScript" in text:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1]
    return f"{type(error).__name__}: {text}"


def _has_scripted_child(model: torch.nn.Module) -> bool:
    return any(isinstance(m, torch.jit.ScriptModule) for m in model.modules() if m is not model)


def _has_script_objects(model: torch.nn.Module) -> bool:
    """Converted quantized modules keep packed weights as TorchScript objects, which a traced
    function cannot capture ("not part of the active trace"); torch.jit.trace can."""
    return any(isinstance(v, torch.ScriptObject) for m in model.modules() for v in vars(m).values())


# Tracing sets process-wide torch state (the module-name map for scopes, the attention
# fast-path switch); exports in different threads take turns here and run the rest in parallel.
_CAPTURE_LOCK = threading.Lock()


def capture(model: Any, args: Any, inline: Collection[type] = ()) -> Captured:
    """Trace or lower ``model`` with ``args`` (the calling convention of torch's ONNX export).

    The autograd Functions in ``inline`` are traced through their forward even when they have
    a symbolic (export() passes those whose symbolic failed).
    """
    with _CAPTURE_LOCK:
        inlined: set[type] = set(inline)
        with _inlined_functions(inlined):
            captured = _capture(model, args)
        # custom autograd Functions without a symbolic: traced again through their forward (one
        # more round per level of Functions calling Functions), as torch's exporter inlines them
        for _ in range(8):
            found = _functions_to_inline(captured.graph) - inlined
            if not found:
                break
            inlined |= found
            with _inlined_functions(inlined):
                captured = _capture(model, args)
        return captured


def _functions_to_inline(graph: torch._C.Graph) -> set[type]:
    """The autograd Functions (prim::PythonOp) in ``graph`` that have no symbolic at any opset."""
    found = set()
    for node in all_nodes([graph]):
        if node.kind() == PYTHON_OP:
            cls = autograd_function(node)
            if cls is not None and not REGISTRY.function_exports(cls):
                found.add(cls)
    return found


class _InlineContext:
    """The ``ctx`` of a Function's forward called outside autograd: saving for backward and
    marking outputs do nothing; attributes set on it are kept for the forward to read back."""

    def __init__(self, args: Sequence[Any]) -> None:
        self.needs_input_grad = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        self.saved_tensors: tuple[Any, ...] = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors_: Any) -> None:
        self.saved_tensors = tensors_

    def save_for_forward(self, *tensors_: Any) -> None:
        pass

    def mark_dirty(self, *tensors_: Any) -> None:
        pass

    def mark_non_differentiable(self, *tensors_: Any) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


def _inline_apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``Function.apply`` replaced by a plain call of ``forward``: tracing records its ops."""
    from torch.autograd.function import _is_setup_context_defined

    if _is_setup_context_defined(cls.setup_context):  # forward(*args) without ctx
        return cls.forward(*args, **kwargs)
    return cls.forward(_InlineContext(args), *args, **kwargs)


@contextlib.contextmanager
def _inlined_functions(classes: set[type]) -> Iterator[None]:
    """Replace ``apply`` of ``classes`` while tracing (the capture lock is held); restored after."""
    missing = object()
    saved = {cls: cls.__dict__.get("apply", missing) for cls in classes}
    for cls in classes:
        cls.apply = classmethod(_inline_apply)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for cls, previous in saved.items():
            if previous is missing:
                delattr(cls, "apply")
            else:
                cls.apply = previous  # type: ignore[attr-defined]


def _capture(model: Any, args: Any) -> Captured:
    positional, kwargs = split_args(args)
    if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return _script(model, positional, kwargs)
    if isinstance(model, torch.nn.Module) and (_has_scripted_child(model) or _has_script_objects(model)):
        # Tracing a plain function cannot enter a scripted submodule ("not part of the active
        # trace"); torch.jit.trace registers submodules, and the scripted child's graph (with
        # its control flow) is then inlined like any scripted model.
        # Positional Python numbers are traced as 0-d tensors, as torch's exporter does.
        positional = wrap_numbers(positional)
        with _tracing_errors(model, positional, {}), torch.no_grad(), _no_attention_fastpath():
            traced = torch.jit.trace(model, positional, check_trace=False, strict=False)
        # tracing just ran it; lists are flattened as a trace's are
        captured = _script(traced, positional, kwargs, example_run=False, sequences=False)
        captured.method = "trace + script"
        captured.reason = "scripted submodules or packed weights: torch.jit.trace enters them, on real tensors"
        return captured
    if isinstance(model, torch.nn.Module) or callable(model):
        return _trace(model, wrap_numbers(positional), kwargs)
    raise TypeError(f"model must be an nn.Module, ScriptModule or ScriptFunction, got {type(model).__name__}")


def name_inputs(names: Sequence[str]) -> list[str]:
    """Make leaf names unique and ONNX friendly."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name}_{count}")
    return out
