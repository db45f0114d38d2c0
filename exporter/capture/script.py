"""Scripted models (``ScriptModule``, ``ScriptFunction``): their TorchScript graph, control flow
included, lowered so that weights are graph inputs, with the call's arguments bound to the
schema, one example run and the example inputs' shapes propagated."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch

from exporter.capture.call_sites import CallSites
from exporter.capture.captured import Captured, ModelInput
from exporter.capture.inputs import (
    is_number,
    named_tensors,
    number_tensor,
    schema_params,
    sequence_arguments,
    wrap_nested,
)
from exporter.capture.lowering import (
    inline_calls,
    inline_everything,
    inline_forks,
    lower_script_module,
    substitute_interpolate,
)
from exporter.capture.module_attributes import has_attribute_writes
from exporter.capture.script_arguments import bind_arguments
from exporter.errors import ExporterError, ModelRaisedError
from exporter.tensors import quantized_output_parts
from exporter.ts_graph import all_nodes, is_tensor_list_type, register_locator

__all__ = ["capture_scripted", "fix_index_dtypes"]


def capture_scripted(
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
    parameters = schema_params(model)
    call = _bind_call(parameters, args, kwargs)
    substitute_interpolate(graph)
    inline_calls(graph)  # a ScriptFunction's calls (a module's were inlined by lowering)
    inline_forks(graph)
    user_count = len(list(graph.inputs())) - len(params)
    if len(call) != user_count:
        raise TypeError(f"the scripted model takes {user_count} inputs, {len(call)} were given")
    live_numbers = [
        index < len(args) and is_number(value) and _takes_number(param.type)
        for index, (param, value) in enumerate(zip(parameters, call))
    ]
    lists = sequence_arguments(model, args) if sequences else {}
    kept = [live or index in lists for index, live in enumerate(live_numbers)]
    bind_arguments(graph, call[:user_count], parameters, kept, len(args))
    input_names: list[str] = []
    flat_inputs: list[ModelInput] = []
    for index, (param, value, live) in enumerate(zip(parameters, call, live_numbers)):
        if index in lists:
            flat_inputs.append(lists[index])
            input_names.append(param.name)
            continue
        if live:
            value = number_tensor(value)
        elif index < len(args) and isinstance(value, (tuple, list, dict)):
            value = wrap_nested(value)  # numbers in positional containers are inputs (_construct)
        leaves, names = named_tensors(value, param.name)
        flat_inputs.extend(leaves)
        input_names.extend(names)
    output_ranks = _output_ranks(_run_once(_run_copy(model), call)) if example_run else None
    graph = _propagate_shapes(graph, flat_inputs, params)
    fix_index_dtypes(graph)
    reason = "the graph comes from TorchScript; one example run checks that the inputs fit the model"
    captured = Captured(graph, input_names, flat_inputs, param_names, list(params), "script", reason)
    captured.example_output_ranks = output_ranks
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


def _run_copy(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> Callable[..., Any]:
    """What :func:`_run_once` may run: a copy of a module whose forward writes its attributes
    (``self.count += 1``), so exporting leaves the module (and its captured weights) as it was."""
    if not isinstance(model, torch.jit.ScriptModule):
        return model
    graph = model.graph.copy()
    inline_everything(graph)
    return copy.deepcopy(model) if has_attribute_writes(graph) else model


def _run_once(model: Callable[..., Any], call: Sequence[Any]) -> Any:
    """Run the model once: inputs that do not fit fail here, with the model's own message,
    instead of producing a graph that fails in onnxruntime."""
    try:
        with torch.no_grad():
            return model(*[v.detach().clone() if isinstance(v, torch.Tensor) else v for v in call])
    except Exception as error:  # noqa: BLE001 - whatever the model raises is reported as the model's error
        raise ModelRaisedError(f"the model raised on the example inputs: {_script_error_message(error)}") from error


def _output_ranks(result: Any) -> list[int]:
    """The rank of each flattened result, flattened as the graph outputs are (a number is a
    0-d output, a quantized tensor three: quantized_output_parts)."""
    flat = named_tensors(wrap_nested(result), "output")[0]
    return [part.dim() for tensor in flat for part in quantized_output_parts(tensor)]


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
        if isinstance(value, list) and is_tensor_list_type(ts_input.type())
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


def _script_error_message(error: BaseException) -> str:
    """A TorchScript error without its embedded interpreter traceback: the last line says it."""
    text = str(error)
    if "Traceback of TorchScript" in text:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1]
    return f"{type(error).__name__}: {text}"


# torch's legacy shape propagation types the index outputs of these ops as Float.
_INDEX_OUTPUTS = frozenset({"aten::argmax", "aten::argmin"})


def fix_index_dtypes(graph: torch._C.Graph) -> None:
    """Retype argmax/argmin outputs as int64 after legacy shape propagation called them Float."""
    for kind in _INDEX_OUTPUTS:
        for node in graph.findAllNodes(kind, True):  # searched in C++, sub-blocks included
            out = node.output()
            if isinstance(out.type(), torch._C.TensorType):
                out.setType(out.type().with_dtype(torch.int64))
